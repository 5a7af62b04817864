//! Question understanding for everyday clinical phrasing: free text → a structured query over
//! the graph's metaedges → Cypher, with what was understood said in plain words.
//!
//! 1. **Lexicon** ([`LexiconFile`], a data file: `lexicon/hetionet.tsv`, compiled in, or any
//!    path): type nouns, relation phrases → metaedges (in preference order), the default
//!    relation of a type pair, the words the interpretation line uses, and stop words. Errors
//!    name the file line. [`Understander::new`] serves **any graph**: the lexicon is derived
//!    from the graph's own schema ([`lexicon_for`], module `schema`: type nouns from type
//!    labels, relation phrases from relation names, pairs from edge counts, the end types of
//!    relations the loader left open read off the edges by [`Metagraph`]) with the Hetionet
//!    lexicon as an overlay — its lines that name the graph's types and metaedges, and its
//!    stop words, markers and word synonyms. The overlay owns what it names; on Hetionet that
//!    is everything, so the lexicon there is exactly the Hetionet file. Construction never
//!    fails on an unknown schema. Names link as before, and also through a node property of
//!    other names (`synonyms`, `aliases`, … [`SYNONYM_KEYS`]) and by identifier ("DOID:9352";
//!    "disease 101663" — a type noun followed by its node's identifier).
//! 2. **Folding**: lower case, apostrophes and punctuation dropped, a plural or possessive
//!    `s` dropped per word (`Parkinson's` = `parkinsons` = `parkinson`). Names are folded the
//!    same way once per graph.
//! 3. **Tagging**: multi-word exact names first (longest first, `idiopathic pulmonary
//!    fibrosis`), then relation phrases, type nouns and stop words (longest first), then the
//!    remaining words are linked to node names: exact, then a whole-word prefix of a name
//!    (`alzheimers` → `Alzheimer's disease`), then fuzzy (Damerau–Levenshtein through
//!    `strsim`, over names of about the same length with the same first letter), then a name
//!    that contains the words (`diabetes` → the two diabetes mellitus types, a "did you
//!    mean"). A quoted span is looked up whole first ("the pathway 'GTP hydrolysis and joining
//!    of the 60S ribosomal subunit'"). One word links inside a longer name only as its head
//!    (last) word or in a short disease name ("arthritis" → rheumatoid arthritis, "diabetes"
//!    → type 2 diabetes mellitus; not "human" → a pathway that mentions humans), and opens a
//!    longer name only when the rest is vocabulary or words of the question ("alzheimers" →
//!    Alzheimer's disease; not "found" → Found dead). A word that is no vocabulary word but
//!    inflects one is that word ("covarying" → covary).
//! 4. **Assembly**: the first type noun is the answer; relation phrases connect it to
//!    entities (either order: `which drugs treat X`, `what genes does X bind`, `what is X used
//!    for`), a relation phrase followed by a type noun opens a chain (`drugs that bind genes
//!    associated with X`), and further entities after one relation share it (intersection:
//!    `genes associated with X and Y`). Each entity's candidate is chosen by match kind, then
//!    by fitting the relation's types, then by degree; a phrase's metaedge by the types at its
//!    ends; no phrase between two types means the lexicon's `pair` relation.
//!    More readings of the same kind: a name followed by a noun of its own type is that type
//!    ("heart tissue", "fever as a symptom"); a name followed by another type's noun
//!    qualifies it ("interact with obesity genes"); a second type noun right after the
//!    answer's opens a chain by the pair relation ("pathways of genes …"); the same name
//!    twice closes a cycle ("drugs for X that bind genes associated with X"); when no sense
//!    of a phrase fits, the edge is bridged through the type it wants, joined by the pair
//!    relation ("side effects of benzodiazepines" = of the drugs in that class); a name
//!    before its verb is the verb's subject (same-type relations read from it:
//!    "which genes does TP53 regulate"). Lexicon `alias` lines give abbreviations and lay
//!    terms (COPD, lupus, hair loss). Names right after an exception marker (lexicon
//!    `except` lines: "besides", "other than", "apart from", "instead of") are left out of
//!    the answers instead of joined to them — a name of the answer's type is excluded (all
//!    the nodes a contained name matches: "besides diabetes"), a name of another type
//!    excludes the answers joined to it by the pair relation ("other than corticosteroids").
//!    Negations are markers too ("not", "don't", "never", "without"); a relation phrase
//!    between the marker and its names leaves out what that relation joins ("that do not
//!    cause drowsiness"). A yes/no question ("does metformin treat PCOS?": an auxiliary
//!    verb first, no type noun, a name last) is read as "which <type of the last name> …"
//!    keeping only that name; the interpretation answers "Yes." or "No: …" from the graph.
//!    Lexicon `synonym` lines make words interchangeable inside names ("kidney failure" →
//!    *Renal failure*, match kind `synonym`; the relation still picks among the candidates:
//!    "drugs for kidney failure" → the disease *chronic kidney failure*), and a run of words
//!    that all sit in one name is that name before it is split into several. A question
//!    asking for a link the graph never holds (lexicon `never` lines: drugs that treat or
//!    palliate a side effect or a symptom; `bare` lines say that "drugs for insomnia" asks
//!    for one) is not re-read through the pair relation or a bridge — that answered "which
//!    drugs treat tuberculosis" with the drugs that *cause* it — but refused with the reason
//!    ([`NeverHeld`]) and the question the graph can answer about the name.
//!    Names side by side with no conjunction are one thing, one restating the other (an
//!    apposition: "the transcription factor TGIF2LY", "GLUL, the glutamine synthetase
//!    gene"): the one that fits the noun or relation phrase next to them is kept. A gene and
//!    what it makes, joined by lexicon `encodes` words ("encoded by", "which encodes"), are
//!    the gene: the product's description leaves the question ("the exosome component
//!    encoded by EXOSC3", "PIGV, which encodes a GPI mannosyltransferase"). "have" or "show"
//!    before another relation phrase is an auxiliary ("show downregulation of"); "it" after
//!    a relation phrase, in a question naming one thing, names it again ("genes associated
//!    with asthma and upregulated in it"); a relation participle before the answer's noun
//!    qualifies it ("overexpressed genes in melanoma"); a type noun right after a name of
//!    its type says the name's type, and a later noun is the answer ("prostaglandins I
//!    class - meds included?"). When no reading comes
//!    out, names linked only as guesses (prefix, misspelling, containment) are dropped and
//!    the rest is read again, rather than refused over a guess.
//!    `SERENQA_DEBUG_UNDERSTAND=1` prints the tagged items.
//! 5. **Alternatives**: the first reading, then the other metaedges of ambiguous phrases;
//!    the retriever runs them in order and keeps the first that returns rows.
//!
//! # Layout
//! - `lexicon` — the lexicon file and word folding (step 1–2).
//! - `schema` — the lexicon of any graph: derived from its schema, Hetionet as an overlay;
//!   the [`Metagraph`] of relation end types.
//! - `idents` — node identifiers in a question (step 3, after multi-word names).
//! - `names` — the folded-name index: names, synonyms and aliases → nodes, fuzzy targets,
//!   words and head words of names, as sorted string tables (compact at CKG size).
//! - `linking` — entity linking: match kinds and candidates from the name index (step 3's
//!   name lookup).
//! - `focus` — the asking clause of a longer text (a preamble, background, personal context
//!   around the question), read alone with its references back ("the disease", "it") to the
//!   context's names; a gene symbol's gloss in parentheses left out.
//! - `wording` — spoken and second-language habits made plain first: "like" as a filler,
//!   self-corrections ("the drugs no sorry the genes …"), a closing "which tissues" that
//!   restates the answer type, relative "where" after a type noun.
//! - `never` — a question about a link the graph never holds, said plainly.
//! - `tagging` — the question → tagged items (names, relation phrases, type nouns) and the
//!   readings ([`Understander::understand`]).
//! - `assembly` — tagged items → structured queries ([`Parse`](super::retrieval::Parse)):
//!   relation cues, chains, intersections, bridges (steps 4–5).
//! - `ontology` — the Disease Ontology's names: synonyms of the graph's diseases, and the
//!   diseases it lacks (a question about one is refused plainly, with the graph's diseases
//!   that subsume it).
//! - `restate` — type nouns and descriptions beside a name that restate it (appositions).
//! - `describe` — a reading in plain words.

mod assembly;
mod describe;
mod focus;
mod idents;
mod lexicon;
mod linking;
mod names;
mod never;
mod ontology;
mod restate;
mod schema;
mod tagging;
mod wording;

pub use lexicon::{fold_word, words, LexiconFile, Sense, HETIONET_LEXICON};
pub use linking::{
    AbsentDisease, AbsentName, Candidate, Match, Mention, NeverHeld, Understander, Understanding,
    MAX_READINGS,
};
pub use names::SYNONYM_KEYS;
pub use schema::{label_words, lexicon_for, Ends, Metagraph};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_drops_plural_and_possessive() {
        assert_eq!(fold_word("Parkinson's"), "parkinson");
        assert_eq!(fold_word("parkinsons"), "parkinson");
        assert_eq!(fold_word("Drugs"), "drug");
        assert_eq!(fold_word("sclerosis"), "sclerosis");
        assert_eq!(fold_word("therapies"), "therapy");
        assert_eq!(fold_word("processes"), "process");
        let w: Vec<String> = words("Which drugs treat Alzheimer's disease?")
            .into_iter()
            .map(|x| x.1)
            .collect();
        assert_eq!(w, vec!["which", "drug", "treat", "alzheimer", "disease"]);
    }
}
