//! The question inside a longer text ([`Understander::understand`]). A question often comes
//! with words around it that ask nothing: a preamble before a colon ("Med review for a
//! patient on a PGx panel: in which tissues is ABCB7 downregulated?"), background before a
//! semicolon with the aim after "we" ("ARL3 … displays marked differences between tissues; in
//! this aim we will define the set of anatomical entities in which ARL3 is upregulated"), or
//! sentences of personal context ("been on oxybutynin for years now. which genes does
//! oxybutynin upregulate? worried about long term effects tbh"). Their names and nouns
//! ("PGx", "tissues", "long term") would otherwise join the question as constraints.
//!
//! The text is split into clauses (at `;`, `?`, `!`, a colon or a full stop before a space,
//! and a comma before "we" or a question word). When exactly one clause asks — a question
//! word or a request verb at its start ("in which …", "what …", "name the …", after openers
//! that ask nothing: "does anyone know which …"), or "we" (or "our aim/goal is") and an aim
//! verb ("we will enumerate …", "we ask which …", read from after the verb) — that clause
//! is read alone. A reference back to the context in it is the context's name: "the disease"
//! (a type noun in the singular after "the", "this" or "that", when the clause names nothing
//! of that type) is the context's first name of that type ("Counselling a patient with
//! polycystic ovary syndrome: which parts of the body does the disease localize to?"), and
//! "it" in a clause naming nothing is the context's first name ("im on trospium for my
//! bladder, what genes does it bind to?"). Context holding an exception marker ("besides
//! simvastatin, what treats …") is part of the question: the text is read whole. A gene
//! symbol's gloss in parentheses ("PCTP (phosphatidylcholine transfer protein)") restates the
//! gene and is left out. When the clause gives no reading, the whole text is read.

use serenqa_graph::{Graph, TypeId};

use super::lexicon::{fold_word, tokens, Tok};
use super::linking::{Match, Understander, Understanding};

/// Words that open an asking clause.
const ASK: &[&str] = &[
    "which",
    "what",
    "whats",
    "where",
    "who",
    "how",
    "name",
    "list",
    "identify",
    "enumerate",
    "find",
    "give",
    "tell",
    "show",
    // A curator's or a script's requests ("Return compounds that …", "Fetch all …").
    "return",
    "fetch",
    "retrieve",
    "export",
    "get",
    "provide",
    "display",
];
/// A preposition may come before the question word ("in which tissues …").
const PREP: &[&str] = &[
    "in", "for", "to", "at", "from", "on", "with", "by", "of", "into", "under", "through",
];
/// Verbs that state a research aim after "we" ("we will enumerate …").
const AIM: &[&str] = &[
    "identify",
    "enumerate",
    "define",
    "list",
    "compile",
    "summarise",
    "summarize",
    "determine",
    "ask",
    "map",
    "catalog",
    "catalogue",
    "characterise",
    "characterize",
    "examine",
    "investigate",
    "query",
    "retrieve",
    "find",
    "establish",
    "chart",
    "describe",
    "survey",
    "delineate",
    "assemble",
    "collect",
    "extract",
    "report",
    "rank",
    "tabulate",
];
/// Words that state an aim before its verb ("we will …", "our goal is to …").
const AIM_SUBJECT: &[&str] = &["we", "aim", "goal", "objective", "purpose"];
/// Words before a question word that ask nothing themselves (folded: "does" is "doe").
const OPENERS: &[&str] = &[
    "anyone",
    "anybody",
    "someone",
    "somebody",
    "doe",
    "do",
    "can",
    "could",
    "know",
    "knows",
    "tell",
    "me",
    "i",
    "im",
    "wondering",
    "wonder",
    "want",
    "to",
    "so",
    "ok",
    "okay",
    "hi",
    "hey",
    "please",
    "pls",
    "just",
    "curious",
    "and",
    "but",
    "also",
    "quick",
    "question",
    // Polite, indirect requests ("would you be able to tell me which …", "I was wondering
    // whether you might know which …", "would it be possible to find …").
    "would",
    "you",
    "be",
    "able",
    "it",
    "possible",
    "was",
    "whether",
    "if",
    "might",
    "kindly",
];
/// Words between "we" and its aim verb.
const AIM_AUX: &[&str] = &[
    "will",
    "shall",
    "aim",
    "to",
    "first",
    "then",
    "also",
    "propose",
    "plan",
    "seek",
    "here",
    "further",
    "next",
    "now",
    "would",
    "intend",
    "can",
    "must",
    "is",
    "of",
    "this",
    "study",
    "therefore",
    "systematically",
    "comprehensively",
    "be",
];
/// Words before a full stop that do not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "vs", "etc", "dr", "st", "no", "fig", "approx", "al", "mr", "mrs", "ms", "jr", "sr", "inc",
];

/// The clauses of a text, as byte ranges.
fn clauses(text: &str, noun_starts: &[&str]) -> Vec<(usize, usize)> {
    let cs: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for (k, &(i, c)) in cs.iter().enumerate() {
        let space_after = cs.get(k + 1).is_none_or(|x| x.1.is_whitespace());
        let cut = match c {
            ';' | '?' | '!' => true,
            ':' => space_after,
            // A dash set off by spaces parts a preamble from the question ("Working on a
            // feature about DMRT2 — which tissues …"), as a colon does.
            '—' | '–' => space_after && k > 0 && cs[k - 1].1.is_whitespace(),
            '.' => {
                let last = text[start..i].split_whitespace().last().unwrap_or("");
                space_after
                    && last.chars().count() > 1
                    && !last.contains('.')
                    && !ABBREVIATIONS.contains(&last.to_lowercase().as_str())
            }
            ',' => {
                let rest = tokens(&text[i + 1..]);
                let word = |k: usize| rest.get(k).map_or("", |w| w.folded.as_str());
                // "which" opens a question before a type noun ("…, which genes …"), a
                // relative clause otherwise ("PIGV, which encodes …").
                space_after
                    && (["we", "what", "whats", "where", "how"].contains(&word(0))
                        || (word(0) == "which" && noun_starts.contains(&word(1))))
            }
            _ => false,
        };
        if cut {
            out.push((start, i));
            start = i + c.len_utf8();
        }
    }
    out.push((start, text.len()));
    // Speech has no commas: "liotrix treats some diseases right so where do they localize"
    // turns to its question at "so" before a question word.
    let mut spoken = Vec::with_capacity(out.len());
    for (a, b) in out {
        let ws = tokens(&text[a..b]);
        let mut from = a;
        for k in 1..ws.len().saturating_sub(1) {
            if ws[k].folded == "so"
                && ["which", "what", "where", "how", "who"].contains(&ws[k + 1].folded.as_str())
            {
                spoken.push((from, a + ws[k].start));
                from = a + ws[k].start;
            }
        }
        spoken.push((from, b));
    }
    spoken.retain(|&(a, b)| !tokens(&text[a..b]).is_empty());
    spoken
}

/// Where the asking part of a clause starts, if the clause asks. `noun_starts` are the first
/// words of the lexicon's type nouns: a type noun with a relative word after it asks too
/// ("…lookup: diseases in which PHF3 is downregulated").
fn asks(clause: &str, noun_starts: &[&str]) -> Option<usize> {
    let ws = tokens(clause);
    for k in (0..ws.len()).filter(|&k| AIM_SUBJECT.contains(&ws[k].folded.as_str())) {
        let mut j = k + 1;
        while ws
            .get(j)
            .is_some_and(|w| AIM_AUX.contains(&w.folded.as_str()))
        {
            j += 1;
        }
        if ws.get(j).is_some_and(|w| AIM.contains(&w.folded.as_str())) {
            return Some(ws.get(j + 1).map_or(clause.len(), |w| w.start));
        }
    }
    // Openers that ask nothing themselves ("does anyone know which …", "hi, what …").
    let opened = ws
        .iter()
        .take_while(|w| OPENERS.contains(&w.folded.as_str()))
        .count();
    let ws = &ws[opened..];
    let first = ws.first()?;
    let wh = |w: &Tok| ["which", "what", "whom"].contains(&w.folded.as_str());
    if ASK.contains(&first.folded.as_str())
        || (PREP.contains(&first.folded.as_str()) && ws.get(1).is_some_and(wh))
    {
        return Some(first.start);
    }
    let word = |k: usize| ws.get(k).map_or("", |w| w.folded.as_str());
    let relative = ["that", "which", "where", "whose", "who"];
    if noun_starts.contains(&word(0))
        && (relative.contains(&word(1)) || (PREP.contains(&word(1)) && wh_word(word(2))))
    {
        return Some(first.start);
    }
    None
}

fn wh_word(w: &str) -> bool {
    ["which", "what", "whom"].contains(&w)
}

/// What "those diseases" in the asking clause refers to.
enum Set {
    /// No such reference.
    None,
    /// The clause with the reference spelled out from the context's statement.
    Defined(String),
    /// A reference the context does not define: read the whole text.
    Undefined,
}

/// Quantifiers that introduce a set in a statement ("liotrix treats some diseases").
const SOME: &[&str] = &[
    "some",
    "certain",
    "several",
    "various",
    "many",
    "particular",
];

/// "those diseases" / "these drugs" in the asking clause `(a, b, s)` of `text` refers to the
/// set a statement in the context introduces ("chlordiazepoxide is used palliatively for
/// certain diseases — which symptoms do those diseases present?"): spelled out as "diseases
/// that chlordiazepoxide is used palliatively for", the words of the statement before its
/// quantifier. A reference with no such statement leaves the text whole.
fn sets_of_context(
    text: &str,
    clauses: &[(usize, usize)],
    (a, b, s): (usize, usize, usize),
    noun_starts: &[&str],
) -> Set {
    let focus = text[s..b].trim();
    let fw = tokens(focus);
    let Some(k) = fw.windows(2).position(|p| {
        ["those", "these", "such"].contains(&p[0].folded.as_str())
            && noun_starts.contains(&p[1].folded.as_str())
    }) else {
        return Set::None;
    };
    let noun = fw[k + 1].folded.as_str();
    for &(ca, cb) in clauses.iter().filter(|&&(ca, _)| ca != a) {
        let cw = tokens(&text[ca..cb]);
        let Some(q) = cw
            .windows(2)
            .position(|p| SOME.contains(&p[0].folded.as_str()) && p[1].folded == noun)
        else {
            continue;
        };
        let statement = text[ca..ca + cw[q].start].trim();
        if tokens(statement).is_empty() {
            continue;
        }
        let noun_text = &focus[fw[k + 1].start..fw[k + 1].end];
        let spelled = format!(
            "{}{noun_text} that {statement}{}",
            &focus[..fw[k].start],
            &focus[fw[k + 1].end..]
        );
        return Set::Defined(spelled);
    }
    Set::Undefined
}

impl Understander {
    /// Understands a question (the asking clause of a longer text first; module docs).
    pub fn understand(&self, g: &Graph, question: &str) -> Understanding {
        let place = self
            .lex
            .nouns
            .iter()
            .find(|(p, _)| p.len() == 1 && p[0] == "where")
            .map(|x| x.1);
        let text = super::wording::plain(&self.without_gloss(g, question), &self.lex.nouns, place);
        // "drugs for amyotrophic lateral sclerosis (ALS)": with its initials the name is a
        // pathway's ("Amyotrophic lateral sclerosis (ALS)"); the words alone name the disease.
        // Read without the initials first, with them when that gives nothing.
        let bare = super::wording::without_initials(&text);
        if bare != text {
            let v = self.understand_whole(g, &bare);
            if !v.readings.is_empty() {
                return v;
            }
        }
        let u = self.understand_whole(g, &text);
        if u.readings.is_empty() && text != question {
            return self.understand_text(g, question);
        }
        u
    }

    /// The asking clause of `text` if it has one that gives a reading, else the whole text.
    fn understand_whole(&self, g: &Graph, text: &str) -> Understanding {
        if let Some(focused) = self.focused(g, text) {
            let u = self.understand_text(g, &focused);
            if !u.readings.is_empty() {
                return u;
            }
        }
        self.understand_text(g, text)
    }

    /// The one asking clause of a text of several, its references to the context replaced by
    /// the context's names.
    fn focused(&self, g: &Graph, text: &str) -> Option<String> {
        let noun_starts: Vec<&str> = self.lex.nouns.iter().map(|x| x.0[0].as_str()).collect();
        let cl = clauses(text, &noun_starts);
        let asking: Vec<(usize, usize, usize)> = cl
            .iter()
            .filter_map(|&(a, b)| asks(&text[a..b], &noun_starts).map(|s| (a, b, a + s)))
            .collect();
        let [(a, b, s)] = asking[..] else {
            return None;
        };
        if cl.len() < 2 && s == a {
            return None;
        }
        let rewritten = match sets_of_context(text, &cl, (a, b, s), &noun_starts) {
            Set::None => text[s..b].trim().to_string(),
            Set::Defined(f) => f,
            Set::Undefined => return None,
        };
        let focus = rewritten.as_str();
        let context = format!("{} {}", &text[..s], &text[b..]);
        // An exception marker's names belong to the question wherever they stand ("besides
        // simvastatin, what treats coronary artery disease").
        let cw: Vec<String> = tokens(&context).into_iter().map(|w| w.folded).collect();
        if self
            .lex
            .excepts
            .iter()
            .any(|p| !p.is_empty() && cw.windows(p.len()).any(|w| w == &p[..]))
        {
            return None;
        }
        let ctx = self.understand_text(g, &context);
        let lower = context.to_lowercase();
        // The context's names linked exactly, in the order written.
        let mut named: Vec<(usize, String, Vec<TypeId>)> = ctx
            .mentions
            .iter()
            .filter(|m| {
                m.candidates
                    .iter()
                    .any(|c| matches!(c.how, Match::Exact | Match::Synonym))
            })
            .filter_map(|m| {
                let at = lower.find(&m.text.to_lowercase())?;
                let types = m.candidates.iter().map(|c| g.node_type(c.node)).collect();
                Some((at, m.text.clone(), types))
            })
            .collect();
        named.sort_by_key(|x| x.0);
        let own = self.understand_text(g, focus);
        let own_types: Vec<TypeId> = own
            .mentions
            .iter()
            .flat_map(|m| m.candidates.iter())
            .filter(|c| matches!(c.how, Match::Exact | Match::Synonym))
            .map(|c| g.node_type(c.node))
            .collect();
        let ws = tokens(focus);
        let mut out = String::new();
        let mut at = 0;
        let mut k = 0;
        while k < ws.len() {
            let mut replaced = None;
            if ws[k].folded == "it" && own_types.is_empty() {
                replaced = named.first().map(|x| (k, x.1.clone()));
            } else if ["the", "this", "that"].contains(&ws[k].folded.as_str()) {
                for (p, t) in &self.lex.nouns {
                    let end = k + 1 + p.len();
                    // In the singular: "the diseases that …" asks for diseases.
                    let singular = end <= ws.len()
                        && ws[k + 1..end].iter().zip(p).all(|(w, x)| w.folded == *x)
                        && {
                            let last = &focus[ws[end - 1].start..ws[end - 1].end];
                            fold_word(last) == last.to_lowercase()
                        };
                    if singular && !own_types.contains(t) {
                        if let Some(x) = named.iter().find(|x| x.2.contains(t)) {
                            replaced = Some((end - 1, x.1.clone()));
                            break;
                        }
                    }
                }
            }
            match replaced {
                Some((last, name)) => {
                    out.push_str(&focus[at..ws[k].start]);
                    out.push_str(&name);
                    at = ws[last].end;
                    k = last + 1;
                }
                None => k += 1,
            }
        }
        out.push_str(&focus[at..]);
        Some(out)
    }

    /// The text without a gene symbol's gloss in parentheses: "PCTP (phosphatidylcholine
    /// transfer protein)" is PCTP.
    fn without_gloss(&self, g: &Graph, text: &str) -> String {
        let symbol = |w: &str| {
            w.chars().count() >= 2
                && w.chars().any(|c| c.is_ascii_uppercase())
                && !w.chars().any(char::is_lowercase)
        };
        let gene = self
            .lex
            .nouns
            .iter()
            .find(|(p, _)| p.len() == 1 && p[0] == "gene")
            .map(|x| x.1);
        let mut out = String::new();
        let mut rest = text;
        while let Some(open) = rest.find(" (") {
            let Some(close) = rest[open..].find(')').map(|c| open + c) else {
                break;
            };
            let before = rest[..open].split_whitespace().last().unwrap_or("");
            let inner = &rest[open + 2..close];
            let inner_words: Vec<&str> = inner.split_whitespace().collect();
            let is_gene = symbol(before)
                && self
                    .link(g, &[fold_word(before)], Match::Exact)
                    .iter()
                    .any(|c| Some(g.node_type(c.node)) == gene);
            // Or the aside only says the kind of link in the lexicon's words and names
            // nothing ("Interaction partners (gene–gene 'interacts') of ATXN1L").
            let inner_folded: Vec<String> = tokens(inner).into_iter().map(|w| w.folded).collect();
            let vocabulary = |w: &String| {
                self.lex.nouns.iter().any(|(p, _)| p.contains(w))
                    || self.lex.phrases.iter().any(|(p, _)| p.contains(w))
                    || self.lex.stops.iter().any(|p| p.contains(w))
            };
            // …when the sentence around it states a link itself ("Which genes (upregulated)
            // in liver" keeps its only verb).
            let around: Vec<String> = tokens(&format!(
                "{} {}",
                &text[..text.len() - rest.len() + open],
                &rest[close + 1..]
            ))
            .into_iter()
            .map(|w| w.folded)
            .collect();
            let states_link = self
                .lex
                .phrases
                .iter()
                .any(|(p, _)| !p.is_empty() && around.windows(p.len()).any(|w| w == &p[..]));
            let restates_link = !inner_folded.is_empty()
                && states_link
                && inner_folded.iter().all(vocabulary)
                && self
                    .lex
                    .phrases
                    .iter()
                    .any(|(p, _)| p.len() == 1 && inner_folded.contains(&p[0]));
            if (is_gene && inner_words.len() >= 2 && !inner_words.iter().any(|w| symbol(w)))
                || restates_link
            {
                out.push_str(&rest[..open]);
            } else {
                out.push_str(&rest[..=close]);
            }
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> Vec<&str> {
        clauses(text, &["gene"])
            .iter()
            .map(|&(a, b)| text[a..b].trim())
            .collect()
    }

    #[test]
    fn clauses_split_at_sentence_marks_and_before_we() {
        assert_eq!(
            parts("been on it for years now. which genes? worried tbh"),
            vec!["been on it for years now", "which genes", "worried tbh"]
        );
        assert_eq!(
            parts("Background; as a basis, we will list genes. DOID:9352 e.g. this"),
            vec![
                "Background",
                "as a basis",
                "we will list genes",
                "DOID:9352 e.g. this"
            ]
        );
        assert_eq!(
            parts("PIGV, which encodes X"),
            vec!["PIGV, which encodes X"]
        );
        assert_eq!(parts("on X, which genes"), vec!["on X", "which genes"]);
        assert_eq!(
            parts("um X treats some diseases right so where do they localize"),
            vec![
                "um X treats some diseases right",
                "so where do they localize"
            ]
        );
        assert_eq!(
            parts("about DMRT2 — which tissues; gene–gene"),
            vec!["about DMRT2", "which tissues", "gene–gene"]
        );
    }

    #[test]
    fn a_set_the_context_defines_is_spelled_out() {
        let nouns = ["disease", "symptom", "drug"];
        let t = "X is used palliatively for certain diseases — which symptoms do those diseases present?";
        let cl = clauses(t, &nouns);
        let (a, b) = cl[1];
        let got = match sets_of_context(t, &cl, (a, b, a + 1), &nouns) {
            Set::Defined(f) => f,
            _ => String::new(),
        };
        assert_eq!(
            got,
            "which symptoms do diseases that X is used palliatively for present"
        );
        let t = "hi there — which symptoms do those diseases present?";
        let cl = clauses(t, &nouns);
        let (a, b) = cl[1];
        assert!(matches!(
            sets_of_context(t, &cl, (a, b, a), &nouns),
            Set::Undefined
        ));
        let t = "hi there — which symptoms does asthma present?";
        let cl = clauses(t, &nouns);
        let (a, b) = cl[1];
        assert!(matches!(
            sets_of_context(t, &cl, (a, b, a), &nouns),
            Set::None
        ));
    }

    #[test]
    fn asking_clauses() {
        assert_eq!(
            asks("in which tissues is ABCB7 downregulated", &[]),
            Some(0)
        );
        let c = "in this aim we will define the genes";
        assert_eq!(asks(c, &[]).map(|s| &c[s..]), Some("the genes"));
        assert_eq!(asks("worried about long term effects", &[]), None);
        let c = "does anyone know which genes";
        assert_eq!(asks(c, &[]).map(|s| &c[s..]), Some("which genes"));
        let c = "would you be able to tell me which symptoms";
        assert_eq!(asks(c, &[]).map(|s| &c[s..]), Some("which symptoms"));
        let c = "our goal is to identify the genes";
        assert_eq!(asks(c, &[]).map(|s| &c[s..]), Some("the genes"));
        assert_eq!(asks("prescribed in settings where it helps", &[]), None);
        let nouns = ["disease", "gene"];
        assert_eq!(
            asks("diseases in which PHF3 is downregulated", &nouns),
            Some(0)
        );
        assert_eq!(asks("genes that X binds", &nouns), Some(0));
        assert_eq!(asks("Disease gene downregulation lookup", &nouns), None);
    }
}
