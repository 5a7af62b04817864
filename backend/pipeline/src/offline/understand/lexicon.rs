//! The lexicon ([`LexiconFile`]): type nouns, relation phrases → metaedges, pair relations,
//! interpretation words, stop words, exception markers and aliases, read from a TSV data file; and word folding
//! (lower case, punctuation dropped, plural/possessive `s` dropped).

use std::collections::HashMap;

use serenqa_graph::{Graph, RelId, TypeId};

/// The Hetionet lexicon, compiled in.
pub const HETIONET_LEXICON: &str = include_str!("../../../lexicon/hetionet.tsv");

/// Folds one word: lower case, letters and digits only, plural/possessive `s` dropped.
pub fn fold_word(w: &str) -> String {
    let mut s: String = w
        .chars()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect();
    if s.len() > 4 && s.ends_with("ies") {
        s.truncate(s.len() - 3);
        s.push('y');
    } else if s.len() > 4 && s.ends_with("sses") {
        s.truncate(s.len() - 2);
    } else if s.len() > 3
        && s.ends_with('s')
        && !s.ends_with("ss")
        && !s.ends_with("us")
        && !s.ends_with("is")
    {
        s.pop();
    }
    s
}

/// The original text of words `i..i + len` of [`words`]' output, joined by spaces.
pub fn span_text(ws: &[(String, String)], i: usize, len: usize) -> String {
    ws[i..i + len]
        .iter()
        .map(|w| w.0.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits text into words (at whitespace and punctuation; a possessive `'s` stays with its
/// word), returning (original word, folded word) pairs.
pub fn words(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<(String, String)>| {
        if !cur.is_empty() {
            let f = fold_word(cur);
            if !f.is_empty() {
                out.push((cur.clone(), f));
            }
            cur.clear();
        }
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '\'' || c == '’' {
            cur.push(c);
        } else {
            flush(&mut cur, &mut out);
        }
    }
    flush(&mut cur, &mut out);
    out
}

pub(super) fn fold_text(text: &str) -> Vec<String> {
    words(text).into_iter().map(|(_, f)| f).collect()
}

/// One metaedge a phrase may mean; `reversed` reads a same-type directed relation backwards.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sense {
    pub rel: RelId,
    pub reversed: bool,
}

/// A lexicon, read from its text and checked against a graph.
#[derive(Clone, Debug, Default)]
pub struct LexiconFile {
    /// Type noun words → type; first noun of a type is its display word.
    pub nouns: Vec<(Vec<String>, TypeId)>,
    pub display: HashMap<TypeId, String>,
    pub phrases: Vec<(Vec<String>, Vec<Sense>)>,
    pub pairs: HashMap<(TypeId, TypeId), RelId>,
    /// Written forms of names (abbreviations, lay terms): (folded form, type, folded graph
    /// name, file line).
    pub aliases: Vec<(Vec<String>, TypeId, Vec<String>, usize)>,
    /// `pair` relations in file order (earlier = preferred when a question names no verb).
    pub pair_order: Vec<RelId>,
    /// Relation → (said from its source, said from its target).
    pub verbs: HashMap<RelId, (String, String)>,
    pub stops: Vec<Vec<String>>,
    /// Words joining a gene to what it makes ("encoded by", "encoding"), with the side the
    /// gene is on (`true`: after the words, "the exosome component encoded by EXOSC3";
    /// `false`: before them, "PIGV, which encodes a GPI mannosyltransferase"): the names on the
    /// other side describe the gene's product, they are not more names to join.
    pub encodes: Vec<(Vec<String>, bool)>,
    /// Phrases that leave out the names after them ("besides", "other than", "except").
    pub excepts: Vec<Vec<String>>,
    /// Phrases that make a question a repurposing question ("repurposed", "new uses"): it is
    /// answered with the named disease's or drug's Discover list as well.
    pub repurpose: Vec<Vec<String>>,
    /// Group names that stand for the nodes of a type whose name ends with a stem ("statin":
    /// the drugs named *-vastatin*; USAN/INN stems): (folded group name, type, stem, line).
    pub stems: Vec<(Vec<String>, TypeId, String, usize)>,
    /// What a question asking for one type about a name of another means when it names no
    /// verb, where that is not the types' pair relation: (asked type, named type) → senses
    /// ("drugs for nausea" asks for a treatment, not for what causes it).
    pub bare: HashMap<(TypeId, TypeId), Vec<Sense>>,
    /// Links the graph never holds: a phrase meaning one of these relations, asked of a name
    /// of this type ("which drugs treat tuberculosis", a side effect here), is refused with
    /// the reason — never re-read through the pair relation or a bridge.
    pub never: Vec<(Vec<RelId>, TypeId)>,
    /// Interchangeable words inside names (folded; both directions): "kidney failure" finds
    /// "Renal failure".
    pub synonyms: HashMap<String, Vec<String>>,
}

fn norm_label(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

impl LexiconFile {
    /// Reads a lexicon (`origin` names it in errors: `lexicon.tsv line 12: …`); a node type
    /// or metaedge the graph lacks is an error.
    pub fn parse(text: &str, origin: &str, g: &Graph) -> Result<LexiconFile, String> {
        LexiconFile::parse_with(text, origin, g, false).map(|x| x.0)
    }

    /// Reads a lexicon as an overlay on a graph of another schema: a line naming a node type
    /// or metaedge the graph lacks is left out (a `rel`, `bare` or `never` line keeps the
    /// metaedges the graph has), and a lexicon with no line left is no error. Malformed lines
    /// are still errors. Returns the lexicon and how many lines were left out.
    pub fn parse_overlay(
        text: &str,
        origin: &str,
        g: &Graph,
    ) -> Result<(LexiconFile, usize), String> {
        LexiconFile::parse_with(text, origin, g, true)
    }

    fn parse_with(
        text: &str,
        origin: &str,
        g: &Graph,
        overlay: bool,
    ) -> Result<(LexiconFile, usize), String> {
        let types: HashMap<String, TypeId> = (0..g.type_count() as TypeId)
            .flat_map(|t| {
                [
                    (norm_label(g.type_label(t)), t),
                    (norm_label(g.type_display(t)), t),
                ]
            })
            .collect();
        let rels: HashMap<String, RelId> = (0..g.relation_count() as RelId)
            .flat_map(|r| {
                [
                    (g.relation(r).abbrev.clone(), r),
                    (g.relation(r).name.clone(), r),
                ]
            })
            .collect();
        let mut lx = LexiconFile::default();
        let mut left_out = 0usize;
        // Set when a line names a type or metaedge the graph lacks (an overlay skips it).
        let missing = std::cell::Cell::new(false);
        for (i, line) in text.lines().enumerate() {
            let err = |m: String| format!("{origin} line {}: {m}", i + 1);
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').map(str::trim).collect();
            let want = |n: usize| -> Result<(), String> {
                if cols.len() != n {
                    Err(err(format!(
                        "'{}' takes {} tab-separated columns, found {}",
                        cols[0],
                        n,
                        cols.len()
                    )))
                } else if cols.iter().any(|c| c.is_empty()) {
                    Err(err("empty column".into()))
                } else {
                    Ok(())
                }
            };
            let ty = |s: &str| {
                types.get(&norm_label(s)).copied().ok_or_else(|| {
                    missing.set(true);
                    err(format!("unknown node type '{s}'"))
                })
            };
            let rel = |s: &str| {
                rels.get(s).copied().ok_or_else(|| {
                    missing.set(true);
                    err(format!("unknown metaedge '{s}'"))
                })
            };
            // An overlay keeps the metaedges of a list that the graph has.
            let rel_list = |list: &str| -> Result<Vec<RelId>, String> {
                let mut out = Vec::new();
                for m in list.split(',') {
                    match rel(m.trim()) {
                        Ok(r) => out.push(r),
                        Err(_) if overlay => {}
                        Err(e) => return Err(e),
                    }
                }
                if out.is_empty() {
                    missing.set(true);
                    return Err(err(format!("no metaedge of '{list}' in the graph")));
                }
                missing.set(false);
                Ok(out)
            };
            missing.set(false);
            let apply = |lx: &mut LexiconFile| -> Result<(), String> {
                let phrase = |s: &str| -> Result<Vec<String>, String> {
                    let w = fold_text(s);
                    if w.is_empty() {
                        Err(err(format!("'{s}' has no words")))
                    } else {
                        Ok(w)
                    }
                };
                match cols[0] {
                "type" => {
                    want(3)?;
                    let t = ty(cols[1])?;
                    lx.display.entry(t).or_insert_with(|| cols[2].to_string());
                    lx.nouns.push((phrase(cols[2])?, t));
                }
                "rel" => {
                    want(3)?;
                    let mut senses = Vec::new();
                    let mut named = 0usize;
                    // '*': the two types' pair relation ("share", "in common with").
                    for m in cols[1].split(',').filter(|m| m.trim() != "*") {
                        let m = m.trim();
                        let (m, reversed) = match m.strip_suffix('^') {
                            Some(x) => (x, true),
                            None => (m, false),
                        };
                        named += 1;
                        match rel(m) {
                            Ok(rel) => senses.push(Sense { rel, reversed }),
                            Err(_) if overlay => {}
                            Err(e) => return Err(e),
                        }
                    }
                    if named > 0 && senses.is_empty() {
                        missing.set(true);
                        return Err(err(format!("no metaedge of '{}' in the graph", cols[1])));
                    }
                    missing.set(false);
                    let p = phrase(cols[2])?;
                    match lx.phrases.iter_mut().find(|(q, _)| *q == p) {
                        Some((_, s)) => s.extend(
                            senses
                                .into_iter()
                                .filter(|x| !s.contains(x))
                                .collect::<Vec<_>>(),
                        ),
                        None => lx.phrases.push((p, senses)),
                    }
                }
                "alias" => {
                    want(4)?;
                    let t = ty(cols[1])?;
                    lx.aliases
                        .push((phrase(cols[2])?, t, phrase(cols[3])?, i + 1));
                }
                "pair" => {
                    want(2)?;
                    let r = rel(cols[1])?;
                    let rt = g.relation(r);
                    let (Some(a), Some(b)) = (rt.source_type, rt.target_type) else {
                        return Err(err(format!(
                            "metaedge '{}' has no fixed end types",
                            cols[1]
                        )));
                    };
                    lx.pairs.insert((a, b), r);
                    lx.pairs.insert((b, a), r);
                    lx.pair_order.push(r);
                }
                "verb" => {
                    want(3)?;
                    let r = rel(cols[1])?;
                    let Some((f, b)) = cols[2].split_once('|') else {
                        return Err(err("verb needs '<from source> | <from target>'".into()));
                    };
                    lx.verbs
                        .insert(r, (f.trim().to_string(), b.trim().to_string()));
                }
                "stop" => {
                    want(2)?;
                    lx.stops.push(phrase(cols[1])?);
                }
                "except" => {
                    want(2)?;
                    lx.excepts.push(phrase(cols[1])?);
                }
                "encodes" => {
                    want(3)?;
                    let after = match cols[2] {
                        "after" => true,
                        "before" => false,
                        other => {
                            return Err(err(format!(
                                "encodes: the gene's side is 'before' or 'after', not '{other}'"
                            )))
                        }
                    };
                    lx.encodes.push((phrase(cols[1])?, after));
                }
                "repurpose" => {
                    want(2)?;
                    lx.repurpose.push(phrase(cols[1])?);
                }
                "stem" => {
                    want(4)?;
                    let stem = cols[2].trim().to_lowercase();
                    if stem.is_empty() {
                        return Err(err("'stem' needs a stem".into()));
                    }
                    lx.stems.push((phrase(cols[3])?, ty(cols[1])?, stem, i + 1));
                }
                "bare" => {
                    want(4)?;
                    let (a, b) = (ty(cols[1])?, ty(cols[2])?);
                    let senses = rel_list(cols[3])?
                        .into_iter()
                        .map(|rel| Sense {
                            rel,
                            reversed: false,
                        })
                        .collect();
                    lx.bare.insert((a, b), senses);
                }
                "never" => {
                    want(3)?;
                    let rels = rel_list(cols[1])?;
                    lx.never.push((rels, ty(cols[2])?));
                }
                "synonym" => {
                    want(3)?;
                    let (a, b) = (phrase(cols[1])?, phrase(cols[2])?);
                    if a.len() != 1 || b.len() != 1 {
                        return Err(err("a synonym is one word for one word".into()));
                    }
                    let (a, b) = (a[0].clone(), b[0].clone());
                    lx.synonyms.entry(a.clone()).or_default().push(b.clone());
                    lx.synonyms.entry(b).or_default().push(a);
                }
                other => {
                    return Err(err(format!(
                    "unknown entry kind '{other}' (type, rel, pair, bare, never, verb, stop, except, repurpose, stem, alias or synonym)"
                )))
                }
            }
                Ok(())
            };
            if let Err(e) = apply(&mut lx) {
                if overlay && missing.get() {
                    left_out += 1;
                    continue;
                }
                return Err(e);
            }
        }
        if !overlay && (lx.nouns.is_empty() || lx.phrases.is_empty()) {
            return Err(format!("{origin}: no type nouns or no relation phrases"));
        }
        Ok((lx, left_out))
    }

    /// Whether a phrase meaning one of `senses`, asked of a name of type `t`, asks for a link
    /// the graph never holds (a `never` line).
    pub fn never_holds(&self, senses: &[Sense], t: TypeId) -> bool {
        self.never
            .iter()
            .any(|(rels, nt)| *nt == t && senses.iter().any(|s| rels.contains(&s.rel)))
    }

    /// The span with its words replaced by their synonyms, every combination but the span
    /// itself (at most 16).
    pub(super) fn synonym_variants(&self, span: &[String]) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = vec![span.to_vec()];
        for (i, w) in span.iter().enumerate() {
            let Some(alts) = self.synonyms.get(w) else {
                continue;
            };
            let mut more = Vec::new();
            for v in &out {
                for a in alts {
                    let mut x = v.clone();
                    x[i] = a.clone();
                    more.push(x);
                }
            }
            out.extend(more);
            out.truncate(17);
        }
        out.remove(0);
        out
    }

    /// Reads a lexicon file from disk.
    pub fn load(path: &std::path::Path, g: &Graph) -> Result<LexiconFile, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        LexiconFile::parse(&text, &path.display().to_string(), g)
    }
}

/// A word of a text: byte range and folded form.
pub(super) struct Tok {
    pub start: usize,
    pub end: usize,
    pub folded: String,
}

pub(super) fn tokens(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut start = None;
    let push = |s: usize, e: usize, out: &mut Vec<Tok>| {
        let folded = fold_word(&text[s..e]);
        if !folded.is_empty() {
            out.push(Tok {
                start: s,
                end: e,
                folded,
            });
        }
    };
    for (i, c) in text.char_indices() {
        let word = c.is_alphanumeric() || c == '\'' || c == '’';
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                push(s, i, &mut out);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        push(s, text.len(), &mut out);
    }
    out
}
