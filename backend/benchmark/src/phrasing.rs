//! Words for the questions: relation phrases in both directions, type nouns (singular and
//! plural), entity mentions, and the sentence templates of each pattern type.
//!
//! Hetionet's 24 relations have hand-written phrases ([`hetionet_phrase`]); any other schema
//! falls back to phrases derived from the relation's verb, so every graph gets readable (if
//! plainer) questions. Every template is checked by [`check_text`]: no `{placeholder}` left,
//! no word written twice in a row.

use serenqa_graph::{Graph, NodeId, RelId, TypeId};

use crate::patterns::PatternType;
use crate::query::{QNode, Query};

/// A verb phrase in the singular and plural third person ("treats" / "treat").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verb {
    pub sg: String,
    pub pl: String,
}

fn v(sg: &str, pl: &str) -> Verb {
    Verb {
        sg: sg.into(),
        pl: pl.into(),
    }
}

/// Hand-written phrases for Hetionet's metaedges: (from the source, from the target).
pub fn hetionet_phrase(abbrev: &str) -> Option<(Verb, Verb)> {
    let passive = |p: &str| v(&format!("is {p}"), &format!("are {p}"));
    Some(match abbrev {
        "CtD" => (v("treats", "treat"), passive("treated by")),
        "CpD" => (v("palliates", "palliate"), passive("palliated by")),
        "CbG" => (v("binds", "bind"), passive("bound by")),
        "CuG" => (v("upregulates", "upregulate"), passive("upregulated by")),
        "CdG" => (
            v("downregulates", "downregulate"),
            passive("downregulated by"),
        ),
        "CrC" | "DrD" => (v("resembles", "resemble"), v("resembles", "resemble")),
        "CcSE" => (v("causes", "cause"), passive("caused by")),
        "PCiC" => (v("includes", "include"), v("belongs to", "belong to")),
        "DaG" => (passive("associated with"), passive("associated with")),
        "DuG" => (v("upregulates", "upregulate"), passive("upregulated in")),
        "DdG" => (
            v("downregulates", "downregulate"),
            passive("downregulated in"),
        ),
        "DlA" => (
            v("localizes to", "localize to"),
            v("is a site of", "are sites of"),
        ),
        "DpS" => (
            v("presents with", "present with"),
            v("occurs in", "occur in"),
        ),
        "AeG" => (v("expresses", "express"), passive("expressed in")),
        "AuG" => (v("upregulates", "upregulate"), passive("upregulated in")),
        "AdG" => (
            v("downregulates", "downregulate"),
            passive("downregulated in"),
        ),
        "GiG" => (
            v("interacts with", "interact with"),
            v("interacts with", "interact with"),
        ),
        "GcG" => (
            v("covaries with", "covary with"),
            v("covaries with", "covary with"),
        ),
        "Gr>G" | "GrG" => (v("regulates", "regulate"), passive("regulated by")),
        "GpPW" | "GpBP" | "GpCC" | "GpMF" => (
            v("participates in", "participate in"),
            v("involves", "involve"),
        ),
        _ => return None,
    })
}

/// Plural of an English 3rd-person verb form's first word ("covaries with" → "covary with").
fn verb_plural(sg: &str) -> String {
    let (first, rest) = sg
        .split_once(' ')
        .map(|(a, b)| (a, Some(b)))
        .unwrap_or((sg, None));
    let base = if first == "is" {
        "are".to_string()
    } else if first == "has" {
        "have".to_string()
    } else if let Some(s) = first.strip_suffix("ies") {
        format!("{s}y")
    } else if ["sses", "shes", "ches", "xes", "zes"]
        .iter()
        .any(|e| first.ends_with(e))
    {
        first[..first.len() - 2].to_string()
    } else if let Some(s) = first.strip_suffix('s') {
        s.to_string()
    } else {
        first.to_string()
    };
    match rest {
        Some(r) => format!("{base} {r}"),
        None => base,
    }
}

/// Past participle guess for schemas without hand-written phrases ("targets" → "targeted",
/// "maps to" → "mapped to", "binds" → "bound").
fn participle(sg: &str) -> String {
    let p = verb_plural(sg);
    let (first, rest) = p
        .split_once(' ')
        .map(|(a, b)| (a.to_string(), format!(" {b}")))
        .unwrap_or((p.clone(), String::new()));
    let irregular = [
        ("bind", "bound"),
        ("find", "found"),
        ("hold", "held"),
        ("make", "made"),
        ("have", "had"),
        ("take", "taken"),
    ];
    let part = if let Some((_, pp)) = irregular.iter().find(|(v, _)| *v == first) {
        pp.to_string()
    } else if first.ends_with('e') {
        format!("{first}d")
    } else {
        let c: Vec<char> = first.chars().collect();
        let vowel = |ch: char| "aeiou".contains(ch);
        // Short consonant-vowel-consonant verbs double the consonant ("map" → "mapped").
        let cvc = c.len() >= 3
            && c.len() <= 4
            && !vowel(c[c.len() - 1])
            && !"wxy".contains(c[c.len() - 1])
            && vowel(c[c.len() - 2])
            && !vowel(c[c.len() - 3]);
        if cvc {
            format!("{first}{}ed", c[c.len() - 1])
        } else {
            format!("{first}ed")
        }
    };
    format!("{part}{rest}")
}

/// Plural of a noun phrase's last word ("side effect" → "side effects").
fn noun_plural(sg: &str) -> String {
    if let Some(s) = sg
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u']))
    {
        format!("{s}ies")
    } else if ["s", "x", "ch", "sh"].iter().any(|e| sg.ends_with(e)) {
        format!("{sg}es")
    } else {
        format!("{sg}s")
    }
}

/// Words of a relation name for the fallback phrases: lower case; provenance qualifiers
/// ("curated", "compiled", "predicted") dropped; trailing words that only repeat an end's
/// type ("ASSOCIATED_WITH_DISEASE", "HAS_SIDE_EFFECT_SE") dropped while a phrase remains.
fn relation_words(g: &Graph, rel: RelId) -> Vec<String> {
    let r = g.relation(rel);
    let raw = if r.verb.is_empty() {
        r.name.clone()
    } else {
        r.verb.clone()
    };
    let mut w: Vec<String> = raw
        .to_lowercase()
        .split(|c: char| c == '_' || c.is_whitespace())
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect();
    w.retain(|x| !matches!(x.as_str(), "curated" | "compiled" | "predicted"));
    // Whole type names (as word sequences) and common abbreviations, trimmed from the end.
    let mut suffixes: Vec<Vec<String>> = Vec::new();
    for t in [r.source_type, r.target_type].into_iter().flatten() {
        suffixes.push(
            g.type_display(t)
                .to_lowercase()
                .split(|c: char| c == '_' || c.is_whitespace())
                .map(str::to_string)
                .collect(),
        );
        suffixes.push(vec![g.type_label(t).to_lowercase()]);
    }
    suffixes.extend(["se", "cc", "bp", "mf"].map(|a| vec![a.to_string()]));
    while let Some(sfx) = suffixes
        .iter()
        .find(|sfx| w.len() >= sfx.len() + 2 && w.ends_with(sfx))
    {
        let keep = w.len() - sfx.len();
        w.truncate(keep);
    }
    w
}

/// The phrase for relation `rel` read with the subject on its source side
/// (`subject_is_source`) or on its target side.
pub fn relation_phrase(g: &Graph, rel: RelId, subject_is_source: bool) -> Verb {
    let r = g.relation(rel);
    if let Some((fwd, rev)) = hetionet_phrase(&r.abbrev) {
        return if subject_is_source { fwd } else { rev };
    }
    let words = relation_words(g, rel);
    let raw = if words.is_empty() {
        "is related to".to_string()
    } else {
        words.join(" ")
    };
    let sym = crate::query::symmetric(g, rel);
    let first = raw.split(' ').next().unwrap_or("").to_string();
    let reverse = !subject_is_source && !sym;
    // "has side effect": the target is "the side effect of" the source.
    if first == "has" || first == "have" {
        let noun = raw
            .split_once(' ')
            .map(|x| x.1.to_string())
            .unwrap_or_default();
        if noun.is_empty() {
            return if reverse {
                v("belongs to", "belong to")
            } else {
                v("has", "have")
            };
        }
        return if reverse {
            v(
                &format!("is a {noun} of"),
                &format!("are {} of", noun_plural(&noun)),
            )
        } else {
            v(&format!("has {noun}"), &format!("have {noun}"))
        };
    }
    // A state ("is indicated for", "associated with", "detected in pathology sample").
    if first == "is" || first == "are" || first.ends_with("ed") {
        let body = raw
            .split_once(' ')
            .filter(|_| first == "is" || first == "are")
            .map(|x| x.1.to_string())
            .unwrap_or(raw.clone());
        // Association reads the same both ways; other states name their direction.
        if reverse && !body.starts_with("associated") {
            return v(
                &format!("is linked through '{body}' to"),
                &format!("are linked through '{body}' to"),
            );
        }
        return v(&format!("is {body}"), &format!("are {body}"));
    }
    let sg = if first.ends_with('s') {
        raw.clone()
    } else {
        format!("{raw}s")
    };
    // Interaction-like verbs ("interacts with") are mutual.
    if !reverse || raw.ends_with(" with") {
        Verb {
            pl: verb_plural(&sg),
            sg,
        }
    } else {
        let p = participle(&sg);
        v(&format!("is {p} by"), &format!("are {p} by"))
    }
}

/// The common noun for a node type, singular or plural ("side effect" / "side effects").
pub fn type_noun(g: &Graph, t: TypeId, plural: bool) -> String {
    let display = g.type_display(t);
    let sg = match display {
        "Anatomy" => "anatomical structure".to_string(),
        d => d.to_lowercase(),
    };
    if !plural {
        return sg;
    }
    if let Some(s) = sg
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u']))
    {
        format!("{s}ies")
    } else if ["s", "x", "ch", "sh"].iter().any(|e| sg.ends_with(e)) {
        format!("{sg}es")
    } else {
        format!("{sg}s")
    }
}

/// "a" or "an" before a word.
pub fn article(word: &str) -> &'static str {
    match word.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

/// How a named entity appears in a question: its name, with its kind where a bare name would
/// be unclear (a gene symbol, a GO term).
pub fn mention(g: &Graph, n: NodeId) -> String {
    let name = g.name(n).trim();
    let name = if name.is_empty() { g.ident(n) } else { name };
    match g.type_display(g.node_type(n)) {
        "Gene" => format!("the {name} gene"),
        "Anatomy" => format!("the {name}"),
        "Pathway" if name.to_lowercase().contains("pathway") => format!("the {name}"),
        "Pathway" => format!("the {name} pathway"),
        "Pharmacologic Class" => format!("the pharmacologic class {name}"),
        t @ ("Biological Process" | "Cellular Component" | "Molecular Function") => {
            format!("{name} ({})", t.to_lowercase())
        }
        _ => name.to_string(),
    }
}

/// How many phrasings a pattern type has.
pub fn variants(p: PatternType) -> usize {
    match p {
        PatternType::P1_1 | PatternType::P1_2 => 4,
        PatternType::P2_1 | PatternType::P4_1 => 3,
        _ => 2,
    }
}

fn cap_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Renders the natural-language question of a pattern instance with phrasing `variant`.
/// Node roles follow the shapes documented in [`crate::patterns`].
pub fn render(g: &Graph, p: PatternType, q: &Query, variant: usize) -> Result<String, String> {
    let class_of = |i: usize| match q.nodes.get(i) {
        Some(QNode::Class(t)) => Ok(*t),
        Some(QNode::Entity(n)) => Ok(g.node_type(*n)),
        None => Err(format!("pattern {p} lacks node {i}")),
    };
    let ent = |i: usize| match q.nodes.get(i) {
        Some(QNode::Entity(n)) => Ok(mention(g, *n)),
        _ => Err(format!("pattern {p}: node {i} is not an entity")),
    };
    // Phrase of query edge k with query node `subj` as the grammatical subject.
    let ph = |k: usize, subj: usize| -> Result<Verb, String> {
        let e = q
            .edges
            .get(k)
            .ok_or_else(|| format!("pattern {p} lacks edge {k}"))?;
        Ok(relation_phrase(g, e.rel, e.start == subj))
    };
    let tpl = type_noun(g, class_of(0)?, true);
    let noun =
        |i: usize, pl: bool| -> Result<String, String> { Ok(type_noun(g, class_of(i)?, pl)) };
    let a = |w: &str| format!("{} {w}", article(w));
    let v = variant % variants(p);
    let text = match p {
        PatternType::P1_1 | PatternType::P1_2 => {
            let x = ph(0, 0)?;
            let e = ent(1)?;
            match v {
                0 => format!("Which {tpl} {} {e}?", x.pl),
                1 => format!("List the {tpl} that {} {e}.", x.pl),
                2 => format!("What {tpl} {} {e}?", x.pl),
                _ => format!("{} {} which {tpl}?", cap_first(&e), ph(0, 1)?.sg),
            }
        }
        PatternType::P2_1 => {
            let (p2, p1) = (ph(0, 0)?, ph(1, 1)?);
            let e = ent(2)?;
            match v {
                0 => format!(
                    "Which {tpl} {} {} that {} {e}?",
                    p2.pl,
                    noun(1, true)?,
                    p1.pl
                ),
                1 => format!(
                    "List the {tpl} that {} any {} that {} {e}.",
                    p2.pl,
                    noun(1, false)?,
                    p1.sg
                ),
                _ => format!(
                    "Which {tpl} {} at least one {} that {} {e}?",
                    p2.pl,
                    noun(1, false)?,
                    p1.sg
                ),
            }
        }
        PatternType::P3_1 => {
            let (p3, p2, p1) = (ph(0, 0)?, ph(1, 1)?, ph(2, 2)?);
            let e = ent(3)?;
            match v {
                0 => format!(
                    "Which {tpl} {} {} that {} {} that {} {e}?",
                    p3.pl,
                    noun(1, true)?,
                    p2.pl,
                    noun(2, true)?,
                    p1.pl
                ),
                _ => format!(
                    "Find the {tpl} that {} {} which {} {} that {} {e}.",
                    p3.pl,
                    a(&noun(1, false)?),
                    p2.sg,
                    a(&noun(2, false)?),
                    p1.sg
                ),
            }
        }
        PatternType::P3_2 => {
            let (p1, p2, p3) = (ph(0, 0)?, ph(1, 1)?, ph(2, 1)?);
            let (e2, e3) = (ent(2)?, ent(3)?);
            match v {
                0 => format!(
                    "Which {tpl} {} {} that {} {e2} and {} {e3}?",
                    p1.pl,
                    a(&noun(1, false)?),
                    p2.sg,
                    p3.sg
                ),
                _ => format!(
                    "List the {tpl} that {} any {} which both {} {e2} and {} {e3}.",
                    p1.pl,
                    noun(1, false)?,
                    p2.sg,
                    p3.sg
                ),
            }
        }
        PatternType::P3_3 => {
            let (p1, p2, p3) = (ph(0, 0)?, ph(1, 0)?, ph(2, 2)?);
            let (e2, e3) = (ent(1)?, ent(3)?);
            match v {
                0 => format!(
                    "Which {tpl} {} {e2} and {} {} that {} {e3}?",
                    p1.pl,
                    p2.pl,
                    a(&noun(2, false)?),
                    p3.sg
                ),
                _ => format!(
                    "List the {tpl} that {} {e2} and also {} some {} that {} {e3}.",
                    p1.pl,
                    p2.pl,
                    noun(2, false)?,
                    p3.sg
                ),
            }
        }
        PatternType::P4_1 => {
            let (p1, p2) = (ph(0, 0)?, ph(1, 0)?);
            let (e2, e3) = (ent(1)?, ent(2)?);
            match v {
                0 => format!("Which {tpl} {} {e2} and {} {e3}?", p1.pl, p2.pl),
                1 => format!(
                    "List the {tpl} that both {} {e2} and {} {e3}.",
                    p1.pl, p2.pl
                ),
                _ => format!("What {tpl} {} {e2} and also {} {e3}?", p1.pl, p2.pl),
            }
        }
        PatternType::P4_2 => {
            let (p1, p2, p3) = (ph(0, 0)?, ph(1, 0)?, ph(2, 0)?);
            let (e2, e3, e4) = (ent(1)?, ent(2)?, ent(3)?);
            match v {
                0 => format!(
                    "Which {tpl} {} {e2}, {} {e3}, and {} {e4}?",
                    p1.pl, p2.pl, p3.pl
                ),
                _ => format!(
                    "List the {tpl} that {} {e2}, {} {e3} and {} {e4}.",
                    p1.pl, p2.pl, p3.pl
                ),
            }
        }
        PatternType::P4_3 => {
            let (p1, p2, p3) = (ph(0, 0)?, ph(1, 0)?, ph(2, 2)?);
            let e = ent(1)?;
            match v {
                0 => format!(
                    "Which {tpl} {} {e} and also {} {} that {} that same {}?",
                    p1.pl,
                    p2.pl,
                    a(&noun(2, false)?),
                    p3.sg,
                    noun(1, false)?
                ),
                _ => format!(
                    "List the {tpl} that {} {e} and {} at least one {} that {} {e} as well.",
                    p1.pl,
                    p2.pl,
                    noun(2, false)?,
                    p3.sg
                ),
            }
        }
    };
    let text = cap_first(&text);
    check_text(&text)?;
    Ok(text)
}

/// Rejects text with an unfilled `{placeholder}` or a word repeated back to back
/// (case-insensitive, punctuation ignored).
pub fn check_text(text: &str) -> Result<(), String> {
    if text.contains('{') || text.contains('}') {
        return Err(format!("unfilled placeholder in {text:?}"));
    }
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    if let Some(w) = words.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("doubled word {:?} in {text:?}", w[0]));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plural_verbs() {
        assert_eq!(verb_plural("covaries with"), "covary with");
        assert_eq!(verb_plural("is associated with"), "are associated with");
        assert_eq!(verb_plural("binds"), "bind");
        assert_eq!(verb_plural("expresses"), "express");
        assert_eq!(participle("treats"), "treated");
        assert_eq!(participle("maps to"), "mapped to");
        assert_eq!(participle("targets"), "targeted");
        assert_eq!(participle("binds"), "bound");
        assert_eq!(noun_plural("side effect"), "side effects");
    }

    #[test]
    fn check_text_rejects() {
        assert!(check_text("Which genes bind {x}?").is_err());
        assert!(check_text("Which genes the The gene?").is_err());
        assert!(check_text("Which compounds treat asthma?").is_ok());
    }

    #[test]
    fn every_hetionet_relation_has_both_directions() {
        for ab in [
            "CtD", "CpD", "CbG", "CuG", "CdG", "CrC", "CcSE", "PCiC", "DaG", "DuG", "DdG", "DlA",
            "DpS", "DrD", "AeG", "AuG", "AdG", "GiG", "GcG", "Gr>G", "GpPW", "GpBP", "GpCC",
            "GpMF",
        ] {
            let (f, r) = hetionet_phrase(ab).expect(ab);
            for s in [f.sg, f.pl, r.sg, r.pl] {
                assert!(!s.is_empty() && check_text(&s).is_ok(), "{ab}: {s:?}");
            }
        }
    }
}

#[cfg(test)]
mod fallback_tests {
    use super::*;
    use serenqa_graph::{GraphBuilder, GraphMeta, RelationType};

    /// CKG-style relation names read in both directions without hand-written phrases.
    #[test]
    fn ckg_relation_names() {
        let mut b = GraphBuilder::new(GraphMeta::default());
        let drug = b.node_type("Drug", "Drug");
        let prot = b.node_type("Protein", "Protein");
        let dis = b.node_type("Disease", "Disease");
        let se = b.node_type("Side_effect", "Side_effect");
        let mut rel = |name: &str, s, t| {
            b.relation(RelationType {
                name: name.into(),
                verb: String::new(),
                abbrev: name.into(),
                source_type: Some(s),
                target_type: Some(t),
                directed: true,
            })
            .unwrap()
        };
        let cases = [
            (
                rel("CURATED_TARGETS", drug, prot),
                ("targets", "target"),
                ("is targeted by", "are targeted by"),
            ),
            (
                rel("HAS_SIDE_EFFECT_SE", drug, se),
                ("has side effect", "have side effect"),
                ("is a side effect of", "are side effects of"),
            ),
            (
                rel("ASSOCIATED_WITH_DISEASE", prot, dis),
                ("is associated with", "are associated with"),
                ("is associated with", "are associated with"),
            ),
            (
                rel("IS_INDICATED_FOR", drug, dis),
                ("is indicated for", "are indicated for"),
                (
                    "is linked through 'indicated for' to",
                    "are linked through 'indicated for' to",
                ),
            ),
            (
                rel("ACTS_ON", prot, prot),
                ("acts on", "act on"),
                ("is acted on by", "are acted on by"),
            ),
            (
                rel("MAPS_TO", dis, dis),
                ("maps to", "map to"),
                ("is mapped to by", "are mapped to by"),
            ),
        ];
        let g = b.build();
        for (r, f, rv) in cases {
            let (a, z) = (relation_phrase(&g, r, true), relation_phrase(&g, r, false));
            assert_eq!((a.sg.as_str(), a.pl.as_str()), f, "{}", g.relation(r).name);
            assert_eq!((z.sg.as_str(), z.pl.as_str()), rv, "{}", g.relation(r).name);
        }
    }
}
