//! Spoken and second-language wording made plain before a question is read
//! ([`plain`]). Three habits of real askers change what the words mean to the reader here:
//!
//! - **"like" as a filler.** A voice transcript keeps it ("um so like which drugs treat
//!   asthma", "where do they localize like which tissues"); read as "resembles" it adds a
//!   relation nobody asked for. It is a filler before a question word, before "just" or
//!   another filler, at the end, and after a filler or at the start; "drugs like metformin"
//!   keeps its meaning.
//! - **Self-corrections.** "which proteins no wait the genes does X bind": the words between
//!   the question word (or the start) and the correction marker ("no wait", "no sorry",
//!   "sorry I mean", "or rather", "I mean") are taken back.
//! - **"where" after a type noun** is a relative word, not a place: "diseases where IGSF6 is
//!   upregulated" are the diseases in which it is, not the tissues they localize to. Where
//!   the noun is itself the place noun ("tissues where …") nothing changes.

use serenqa_graph::TypeId;

use super::lexicon::tokens;

/// Question words: "like" before one is a filler.
const WH: &[&str] = &["which", "what", "whats", "where", "who", "how", "whom"];
/// Fillers a transcript keeps (folded).
const FILLERS: &[&str] = &[
    "um", "umm", "uh", "uhh", "er", "erm", "hmm", "so", "okay", "ok",
];
/// Markers that take back what was just said (folded words).
const CORRECTIONS: &[&[&str]] = &[
    &["no", "wait"],
    &["wait", "no"],
    &["no", "sorry"],
    &["sorry", "no"],
    &["sorry", "i", "mean"],
    &["no", "i", "mean"],
    &["or", "rather"],
    &["i", "mean"],
    &["actually", "no"],
];

/// `text` with fillers, taken-back words and relative "where" made plain (module docs).
/// `nouns` are the lexicon's type nouns (folded words and type); `place` the type the
/// noun "where" stands for (Anatomy on Hetionet), if the lexicon has it.
pub(super) fn plain(text: &str, nouns: &[(Vec<String>, TypeId)], place: Option<TypeId>) -> String {
    let ws = tokens(text);
    if ws.is_empty() {
        return text.to_string();
    }
    let f = |k: usize| ws.get(k).map_or("", |w| w.folded.as_str());
    // A clause boundary between two words: punctuation that ends a clause.
    let boundary = |a: usize, b: usize| {
        text[ws[a].end..ws[b].start]
            .chars()
            .any(|c| matches!(c, '.' | '?' | '!' | ';' | ':' | ',' | '—' | '–'))
    };
    let mut drop = vec![false; ws.len()];
    let mut replace: Vec<Option<&str>> = vec![None; ws.len()];
    for (k, d) in drop.iter_mut().enumerate() {
        if f(k) == "like" {
            let next_is = |set: &[&str]| k + 1 < ws.len() && set.contains(&f(k + 1));
            let at_end = k + 1 == ws.len() || boundary(k, k + 1);
            let after_filler = k == 0 || (FILLERS.contains(&f(k - 1)) && !boundary(k - 1, k));
            *d = next_is(WH) || next_is(&["just"]) || next_is(FILLERS) || at_end || after_filler;
        }
    }
    // Self-corrections: take back from after the last question word (or the clause start)
    // up to the marker's end.
    let mut k = 0;
    while k < ws.len() {
        let hit = CORRECTIONS
            .iter()
            .find(|m| k + m.len() <= ws.len() && m.iter().enumerate().all(|(i, x)| f(k + i) == *x));
        let Some(m) = hit else {
            k += 1;
            continue;
        };
        let mut from = k;
        while from > 0 && !WH.contains(&f(from - 1)) && !boundary(from - 1, from) {
            from -= 1;
        }
        // Something must have been said to take back.
        if from < k {
            for d in drop.iter_mut().take(k + m.len()).skip(from) {
                *d = true;
            }
        }
        k += m.len();
    }
    // A closing "which tissues" after a question that already asked ("where in the body is
    // NEBL upregulated like which tissues"): the answer's type said again, not a new node.
    let kept: Vec<usize> = (0..ws.len()).filter(|&k| !drop[k]).collect();
    for (p, _) in nouns {
        let n = kept.len();
        if n < p.len() + 2 {
            continue;
        }
        let tail = &kept[n - p.len()..];
        let wh = kept[n - p.len() - 1];
        // Asked before by a question word that is not a relative "which" ("PIGV, which
        // encodes …, is upregulated in which anatomical structures" asks only at the end).
        let asked_before = kept[..n - p.len() - 1].iter().any(|&k| {
            ["where", "what", "whats", "how", "who"].contains(&f(k))
                || (k == kept[0] && f(k) == "which")
        });
        if ["which", "what"].contains(&f(wh))
            && asked_before
            && tail.iter().zip(p).all(|(&k, x)| f(k) == x.as_str())
            && !text[ws[tail[tail.len() - 1]].end..]
                .chars()
                .any(char::is_alphanumeric)
        {
            drop[wh] = true;
            for &k in tail {
                drop[k] = true;
            }
            break;
        }
    }
    // "where" right after a type noun that is not the place noun.
    if let Some(place) = place {
        for (k, r) in replace.iter_mut().enumerate().skip(1) {
            if f(k) != "where" || boundary(k - 1, k) {
                continue;
            }
            let noun = nouns.iter().find(|(p, _)| {
                p.len() <= k
                    && p.iter()
                        .enumerate()
                        .all(|(i, x)| f(k - p.len() + i) == x.as_str())
            });
            if noun.is_some_and(|(_, t)| *t != place) {
                *r = Some("in which");
            }
        }
    }
    if !drop.iter().any(|&d| d) && replace.iter().all(Option::is_none) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (k, w) in ws.iter().enumerate() {
        if drop[k] {
            out.push_str(&text[at..w.start]);
            // Skip the word and the spaces after it.
            at = w.end;
            at += text[at..].len() - text[at..].trim_start_matches(' ').len();
        } else if let Some(r) = replace[k] {
            out.push_str(&text[at..w.start]);
            out.push_str(r);
            at = w.end;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// `text` without the initials in parentheses that follow the words they abbreviate
/// ("amyotrophic lateral sclerosis (ALS)", "chronic obstructive pulmonary disease (COPD)"):
/// the words alone name the thing, and some graph names carry the initials as part of a
/// different node's name (a pathway "Amyotrophic lateral sclerosis (ALS)").
pub(super) fn without_initials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(" (") {
        let Some(close) = rest[open..].find(')').map(|c| open + c) else {
            break;
        };
        let inner = &rest[open + 2..close];
        let n = inner.chars().count();
        let initials = (2..=6).contains(&n) && inner.chars().all(|c| c.is_ascii_uppercase());
        let words: Vec<&str> = rest[..open].split_whitespace().collect();
        let abbreviates = initials
            && words.len() >= n
            && words[words.len() - n..]
                .iter()
                .zip(inner.chars())
                .all(|(w, c)| w.chars().next().is_some_and(|f| f.eq_ignore_ascii_case(&c)));
        out.push_str(if abbreviates {
            &rest[..open]
        } else {
            &rest[..=close]
        });
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nouns() -> Vec<(Vec<String>, TypeId)> {
        vec![
            (vec!["disease".to_string()], 1),
            (vec!["tissue".to_string()], 2),
            (vec!["where".to_string()], 2),
            (vec!["drug".to_string()], 3),
        ]
    }

    fn p(t: &str) -> String {
        plain(t, &nouns(), Some(2))
    }

    #[test]
    fn like_is_a_filler_only_where_it_cannot_mean_resembles() {
        assert_eq!(
            p("um so like which drugs treat asthma"),
            "um so which drugs treat asthma"
        );
        // (and the closing "which tissues" restates the question's answer type)
        assert_eq!(
            p("where do they localize like which tissues"),
            "where do they localize "
        );
        assert_eq!(p("um like, which drugs"), "um , which drugs");
        assert_eq!(p("drugs like metformin"), "drugs like metformin");
        assert_eq!(p("genes like BRCA1, like"), "genes like BRCA1, ");
        assert_eq!(
            p("palliate it like just for relief"),
            "palliate it just for relief"
        );
    }

    #[test]
    fn a_correction_takes_back_what_came_before_it() {
        assert_eq!(
            p("which proteins no wait the genes does X bind"),
            "which the genes does X bind"
        );
        assert_eq!(
            p("the drugs no sorry the genes that X binds"),
            "the genes that X binds"
        );
        assert_eq!(
            p("uh where in the body is nebl upregulated like which tissues"),
            "uh where in the body is nebl upregulated "
        );
        assert_eq!(p("which drugs treat asthma"), "which drugs treat asthma");
        assert_eq!(
            p("Expression of PIGV, which encodes X, is upregulated in which tissues?"),
            "Expression of PIGV, which encodes X, is upregulated in which tissues?"
        );
        // Nothing before the marker: nothing taken back.
        assert_eq!(p("I mean which drugs"), "I mean which drugs");
    }

    #[test]
    fn initials_after_the_words_they_abbreviate_are_left_out() {
        assert_eq!(
            without_initials("drugs for amyotrophic lateral sclerosis (ALS)?"),
            "drugs for amyotrophic lateral sclerosis?"
        );
        assert_eq!(
            without_initials("chronic obstructive pulmonary disease (COPD) drugs"),
            "chronic obstructive pulmonary disease drugs"
        );
        // Not initials of the words before: kept.
        assert_eq!(
            without_initials("drugs for asthma (ALS)"),
            "drugs for asthma (ALS)"
        );
        assert_eq!(
            without_initials("genes (upregulated) in X"),
            "genes (upregulated) in X"
        );
    }

    #[test]
    fn where_after_a_type_noun_is_relative() {
        assert_eq!(
            p("Diseases where IGSF6 are upregulated"),
            "Diseases in which IGSF6 are upregulated"
        );
        assert_eq!(
            p("tissues where X is expressed"),
            "tissues where X is expressed"
        );
        assert_eq!(p("where is X expressed"), "where is X expressed");
        assert_eq!(p("the disease. where is it"), "the disease. where is it");
    }
}
