//! Why a question with no reading cannot be answered, when the reason is a link the graph never
//! holds ([`Understander::never_held`]): "which drugs treat tuberculosis" (no drug treats it in
//! the graph, by its `never` lines) or "genes associated with heart failure" (a side effect
//! here, and genes meet side effects nowhere). The reply says so instead of guessing.

use serenqa_graph::{Graph, RelId, TypeId};

use super::lexicon::Sense;
use super::linking::{Candidate, Item, Mention, NeverHeld, Understander};

impl Understander {
    /// Why a question with no reading cannot be answered, when the reason is a link the graph
    /// never holds: the first name every candidate of which has a type that the question's
    /// relation phrase — or the bare juxtaposition of the answer's type with it — never
    /// reaches ("which drugs treat tuberculosis", "drugs for insomnia").
    pub(super) fn never_held(
        &self,
        g: &Graph,
        items: &[Item],
        mentions: &[Mention],
    ) -> Option<NeverHeld> {
        let answer = items.iter().find_map(|x| match x {
            Item::Noun(t) => Some(*t),
            _ => None,
        });
        let phrase: Vec<Sense> = items
            .iter()
            .filter_map(|x| match x {
                Item::Rel(r) => Some(self.lex.phrases[*r].1.iter().copied()),
                _ => None,
            })
            .flatten()
            .collect();
        // The distinct types of candidates, in their order.
        let types_of = |cands: &[&Candidate]| -> Vec<TypeId> {
            let mut types: Vec<TypeId> = Vec::new();
            for c in cands {
                if !types.contains(&g.node_type(c.node)) {
                    types.push(g.node_type(c.node));
                }
            }
            types
        };
        // A name's best-matched candidates ("fever" is the symptom, not "fever generation").
        let best = |m: usize| -> Vec<&Candidate> {
            let c = &mentions[m].candidates;
            let top = c.iter().map(|x| x.how).min();
            c.iter().filter(|x| Some(x.how) == top).collect()
        };
        for it in items {
            let Item::Ent(m) = *it else { continue };
            let cands = best(m);
            let asked_of = |t: TypeId| -> Vec<Sense> {
                let mut s = phrase.clone();
                if let Some(b) = answer.and_then(|a| self.lex.bare.get(&(a, t))) {
                    s.extend(b.iter().copied());
                }
                s
            };
            if cands.is_empty()
                || !cands.iter().all(|c| {
                    self.lex
                        .never_holds(&asked_of(g.node_type(c.node)), g.node_type(c.node))
                })
            {
                continue;
            }
            let types = types_of(&cands);
            let mut asked: Vec<RelId> = Vec::new();
            for s in asked_of(types[0]) {
                if self.lex.never_holds(&[s], types[0]) && !asked.contains(&s.rel) {
                    asked.push(s.rel);
                }
            }
            let asking = answer.or_else(|| asked.first().and_then(|&r| g.relation(r).source_type));
            return Some(NeverHeld {
                mention: m,
                node: cands[0].node,
                types,
                asked,
                asking,
            });
        }
        // Or no relation at all joins the answer's type to what a name is ("genes associated
        // with heart failure": a side effect here, and genes meet side effects nowhere).
        let a = answer?;
        let joins = |t: TypeId| {
            self.lex.pairs.contains_key(&(a, t))
                || phrase.iter().any(|s| {
                    let rt = g.relation(s.rel);
                    (rt.source_type == Some(a) && rt.target_type == Some(t))
                        || (rt.source_type == Some(t) && rt.target_type == Some(a))
                })
        };
        items.iter().find_map(|it| {
            let Item::Ent(m) = *it else { return None };
            let cands = best(m);
            if cands.is_empty() || cands.iter().any(|c| joins(g.node_type(c.node))) {
                return None;
            }
            let types = types_of(&cands);
            Some(NeverHeld {
                mention: m,
                node: cands[0].node,
                types,
                asked: Vec::new(),
                asking: Some(a),
            })
        })
    }
}
