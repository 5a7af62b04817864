//! Node identifiers in a question: "DOID:9352", "P04637", and a type noun followed by its
//! node's identifier ("disease 101663", "gene 1017"). Looked up in the graph's own identifier
//! index (no copy of it is kept), as written and upper-cased.

use serenqa_graph::{Graph, NodeId, TypeId};

use super::lexicon::{span_text, words};
use super::linking::{Candidate, Item, Match, Mention, Understander};

impl Understander {
    /// Links the question's identifiers that no name covers: a token after a type noun to
    /// that type's node with that identifier; any other token only when it mixes letters and
    /// digits (at least four characters), so a number is never read as an identifier on its
    /// own ("type 2 diabetes").
    #[allow(clippy::too_many_arguments)]
    pub(super) fn link_identifiers(
        &self,
        g: &Graph,
        question: &str,
        ws: &[(String, String)],
        folded: &[String],
        tags: &mut [Option<(usize, Item)>],
        covered: &mut [bool],
        mentions: &mut Vec<Mention>,
    ) {
        let n = folded.len();
        for (start, token) in tokens(question) {
            let (i, len) = (words(&question[..start]).len(), words(token).len());
            if len == 0 || i + len > n || covered[i..i + len].iter().any(|c| *c) {
                continue;
            }
            let span = &folded[i..i + len];
            if self.names.has_exact(&span.join(" ")) {
                continue;
            }
            let typed: Option<TypeId> =
                self.lex.nouns.iter().find_map(|(p, t)| {
                    (p.len() <= i && folded[i - p.len()..i] == p[..]).then_some(*t)
                });
            let mixed = token.chars().any(char::is_alphabetic)
                && token.chars().any(|c| c.is_ascii_digit())
                && token.chars().count() >= 4;
            if typed.is_none() && !mixed {
                continue;
            }
            let mut nodes: Vec<NodeId> = Vec::new();
            for form in [token.to_string(), token.to_uppercase()] {
                for &x in g.find_by_ident(&form) {
                    if !nodes.contains(&x) && typed.is_none_or(|t| g.node_type(x) == t) {
                        nodes.push(x);
                    }
                }
            }
            if nodes.is_empty() {
                continue;
            }
            mentions.push(Mention {
                text: span_text(ws, i, len),
                candidates: nodes
                    .into_iter()
                    .map(|node| Candidate {
                        node,
                        how: Match::Exact,
                        distance: 0,
                    })
                    .collect(),
                group: None,
            });
            tags[i] = Some((len, Item::Ent(mentions.len() - 1)));
            covered[i..i + len].iter_mut().for_each(|c| *c = true);
        }
    }
}

/// Whitespace-separated tokens with their byte offsets, without the punctuation around them.
fn tokens(q: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut at = 0;
    for part in q.split_whitespace() {
        let Some(off) = q[at..].find(part).map(|o| o + at) else {
            continue;
        };
        at = off + part.len();
        let trimmed = part.trim_start_matches(|c: char| !c.is_alphanumeric());
        let lead = part.len() - trimmed.len();
        let token = trimmed.trim_end_matches(|c: char| !c.is_alphanumeric());
        if !token.is_empty() {
            out.push((off + lead, token));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::tokens;

    #[test]
    fn tokens_lose_their_punctuation() {
        assert_eq!(
            tokens("drugs for (DOID:9352)? and P04637."),
            vec![
                (0, "drugs"),
                (6, "for"),
                (11, "DOID:9352"),
                (23, "and"),
                (27, "P04637")
            ]
        );
    }
}
