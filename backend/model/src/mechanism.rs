//! Is a suggestion *obvious* or a *new mechanism*? — serendipity in a clinician's terms.
//!
//! A pair (drug c, disease d) is compared with the drugs already known to treat or palliate d:
//!
//! - **same class**: c shares a pharmacologic class (`Pharmacologic Class –includes→ Compound`)
//!   with one of them — another member of a class already in use;
//! - **shared target**: otherwise, c binds a *specific* target that one of them binds — a gene
//!   bound by at most [`SPECIFIC_TARGET_MAX_DRUGS`] drugs in the graph, so that promiscuous
//!   metabolising enzymes and transporters (CYP3A4 binds ~500 drugs) do not make every drug
//!   "the same mechanism";
//! - **new mechanism**: neither — if plausible, it reaches the disease some other way;
//! - **nothing known to compare**: no drug is known for d.
//!
//! The same rule reads a drug's page (its candidate diseases): the pair is obvious when a drug
//! known for that disease shares c's class or a specific target. Graphs without class or binding
//! relations (abbreviations `PCiC`, `CbG`) label every pair as having nothing to compare with.

use serenqa_graph::{Graph, NodeId};
use serenqa_shared::screen::Mechanism;

type RelId = u16;

/// A target bound by more drugs than this is not evidence of a shared mechanism.
pub const SPECIFIC_TARGET_MAX_DRUGS: usize = 20;
/// Shared classes, targets and known drugs listed per pair.
pub const SHOWN: usize = 3;

/// The relations the rule reads, found once per graph.
#[derive(Clone, Copy, Debug, Default)]
pub struct MechanismRelations {
    /// Pharmacologic Class –includes→ Compound.
    includes: Option<RelId>,
    /// Compound –binds→ Gene.
    binds: Option<RelId>,
}

/// What a pair shares with the known drugs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MechanismOf {
    pub kind: Mechanism,
    pub classes: Vec<NodeId>,
    pub targets: Vec<NodeId>,
    /// The known drugs sharing them.
    pub like: Vec<NodeId>,
}

impl MechanismRelations {
    pub fn find(g: &Graph) -> MechanismRelations {
        let by = |a: &str| (0..g.relation_count() as RelId).find(|&r| g.relation(r).abbrev == a);
        MechanismRelations {
            includes: by("PCiC"),
            binds: by("CbG"),
        }
    }

    fn classes(&self, g: &Graph, c: NodeId) -> Vec<NodeId> {
        let Some(r) = self.includes else {
            return Vec::new();
        };
        let (_, in_s, _, _) = g.in_csr();
        let mut v: Vec<NodeId> = g.in_range_rel(c, r).map(|i| in_s[i]).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn specific_targets(&self, g: &Graph, c: NodeId) -> Vec<NodeId> {
        let Some(r) = self.binds else {
            return Vec::new();
        };
        let (_, out_t, _) = g.out_csr();
        let mut v: Vec<NodeId> = g
            .out_range_rel(c, r)
            .map(|i| out_t[i])
            .filter(|&t| g.in_range_rel(t, r).len() <= SPECIFIC_TARGET_MAX_DRUGS)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// How drug `c` relates to `known` (the drugs known to treat or palliate the disease).
    pub fn of(&self, g: &Graph, c: NodeId, known: &[NodeId]) -> MechanismOf {
        if (self.includes.is_none() && self.binds.is_none()) || known.is_empty() {
            return MechanismOf::default();
        }
        let mine = self.classes(g, c);
        let mut classes = Vec::new();
        let mut like = Vec::new();
        if !mine.is_empty() {
            for &k in known {
                let theirs = self.classes(g, k);
                let shared: Vec<NodeId> = mine
                    .iter()
                    .copied()
                    .filter(|x| theirs.binary_search(x).is_ok())
                    .collect();
                if !shared.is_empty() {
                    like.push(k);
                    for s in shared {
                        if !classes.contains(&s) {
                            classes.push(s);
                        }
                    }
                }
            }
        }
        if !like.is_empty() {
            classes.sort_unstable();
            classes.truncate(SHOWN);
            like.truncate(SHOWN);
            return MechanismOf {
                kind: Mechanism::SameClass,
                classes,
                targets: Vec::new(),
                like,
            };
        }
        let mine = self.specific_targets(g, c);
        let mut targets = Vec::new();
        if !mine.is_empty() {
            let (_, out_t, _) = g.out_csr();
            for &k in known {
                let Some(r) = self.binds else { break };
                let shared: Vec<NodeId> = g
                    .out_range_rel(k, r)
                    .map(|i| out_t[i])
                    .filter(|t| mine.binary_search(t).is_ok())
                    .collect();
                if !shared.is_empty() {
                    like.push(k);
                    for s in shared {
                        if !targets.contains(&s) {
                            targets.push(s);
                        }
                    }
                }
            }
        }
        if !like.is_empty() {
            targets.sort_unstable();
            targets.truncate(SHOWN);
            like.truncate(SHOWN);
            return MechanismOf {
                kind: Mechanism::SharedTarget,
                classes: Vec::new(),
                targets,
                like,
            };
        }
        MechanismOf {
            kind: Mechanism::New,
            ..MechanismOf::default()
        }
    }
}
