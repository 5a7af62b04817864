//! The first screen of a Discover page: serendipity *among the plausible*.
//!
//! A clinician reads the top of the list, so the default order must keep what the plausibility
//! model believes at the top, and only then prefer what is new. The rule, in words:
//!
//! 1. Slots are filled one at a time: among the remaining candidates whose plausibility is at
//!    least `band` × the best remaining plausibility (the *band*: predictions the model does not
//!    tell apart by much), an unflagged drug is taken before one the graph records as causing
//!    the disease (`flagged = in-band`), and a drug that reaches the disease through a **new
//!    mechanism** before one of the same pharmacologic class or a shared specific target as a
//!    known treatment (`favour_new`); ties go to the more plausible, then to the lower node
//!    index.
//! 2. `flagged = unexplained-last` (the default) sets aside — after every other drug — a
//!    flagged drug that shares no class or specific target with a known treatment: no known
//!    treatment explains its record. Every other flagged drug keeps the place its plausibility
//!    and mechanism give it, with its warning shown: one that shares a class or target with a
//!    known treatment, because drug labels list a drug's indication among its side effects so
//!    often (41% of Hetionet's treatments carry such a record for the disease they treat; a
//!    flagged drug of a known treatment's class is 40× likelier than other pairs to be a
//!    treatment) that the flag is not a verdict there; and one for a disease with nothing
//!    known, where there is nothing to tell the two readings apart. `in-band` makes every
//!    flagged drug yield inside the band; `last` sets every flagged drug aside; `in-place`
//!    ignores the flags in the order (they are still shown).
//!
//! `band = 1` is plausibility order; a lower band lets new mechanisms climb further. The
//! shipped rule was chosen by cross-validation (`serenqa discover cv`, docs/DISCOVER.md): about
//! as many held-out treatments in the top 10 as plausibility order, fewer "obvious" drugs, and
//! no unexplained flagged drug in the top 20.
//! The same function runs on the server (the API's order) and in the browser (the controls), so
//! the page and the API never disagree.

use serde::{Deserialize, Serialize};

/// How a candidate relates to what is already known to treat the disease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// Shares a pharmacologic class with a known treatment (obvious).
    SameClass,
    /// Binds a specific target that a known treatment binds (obvious).
    SharedTarget,
    /// Neither: it reaches the disease through a different mechanism.
    New,
    /// Nothing is known to treat or palliate the disease, so there is nothing to compare with.
    #[default]
    NoneKnown,
}

impl Mechanism {
    /// Same class or shared target: what a clinician would call an obvious suggestion.
    pub fn is_obvious(self) -> bool {
        matches!(self, Mechanism::SameClass | Mechanism::SharedTarget)
    }
    /// The short label the page shows.
    pub fn label(self) -> &'static str {
        match self {
            Mechanism::SameClass => "same class",
            Mechanism::SharedTarget => "shared target",
            Mechanism::New => "new mechanism",
            Mechanism::NoneKnown => "nothing known to compare",
        }
    }
    /// The name in an address or a CSV (`same-class`, …).
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::SameClass => "same-class",
            Mechanism::SharedTarget => "shared-target",
            Mechanism::New => "new",
            Mechanism::NoneKnown => "none-known",
        }
    }
}

/// Where drugs recorded as causing the disease go in the first screen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Flagged {
    /// Ordered as if unflagged (the flag is still shown).
    InPlace,
    /// Inside the band, after the unflagged drugs.
    InBand,
    /// After every unflagged drug.
    Last,
    /// A flagged drug with no class or specific target shared with a known treatment (no known
    /// treatment explains the record) goes after every other drug. A flagged drug that does
    /// share one (the side-effect record most often repeats the indication of its class), or
    /// one for a disease with nothing known to compare, keeps its place; the flag is shown.
    #[default]
    UnexplainedLast,
}

impl Flagged {
    pub const ALL: [Flagged; 4] = [
        Flagged::UnexplainedLast,
        Flagged::InBand,
        Flagged::Last,
        Flagged::InPlace,
    ];
    /// The name in an address or the JSON (`in-band`, …).
    pub fn name(self) -> &'static str {
        match self {
            Flagged::InPlace => "in-place",
            Flagged::InBand => "in-band",
            Flagged::Last => "last",
            Flagged::UnexplainedLast => "unexplained-last",
        }
    }
    pub fn parse(s: &str) -> Option<Flagged> {
        Flagged::ALL.into_iter().find(|f| f.name() == s)
    }
}

/// The parameters of the first screen's order.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScreenRule {
    /// 0–1: a candidate competes for a slot when its plausibility is at least `band` × the best
    /// remaining one (1 = plausibility order).
    pub band: f64,
    /// Where flagged drugs go.
    pub flagged: Flagged,
    /// Inside the band, new mechanisms before same class / shared target.
    pub favour_new: bool,
}

/// The shipped band (chosen by `serenqa discover cv`; docs/DISCOVER.md has the table).
pub const DEFAULT_BAND: f64 = 0.8;

impl Default for ScreenRule {
    fn default() -> Self {
        ScreenRule {
            band: DEFAULT_BAND,
            flagged: Flagged::default(),
            favour_new: true,
        }
    }
}

/// What the rule needs to know of one candidate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScreenItem {
    /// Calibrated probability (or any score where ratios mean something; ≥ 0).
    pub plausibility: f64,
    /// The graph records the drug as causing the disease.
    pub flagged: bool,
    /// How it relates to the known treatments (same class or shared target = obvious).
    pub mechanism: Mechanism,
    /// Final tie-break (node index).
    pub key: u32,
}

/// The first-screen order of `items`: positions into `items`, first shown first.
pub fn order(items: &[ScreenItem], rule: &ScreenRule) -> Vec<usize> {
    let band = if rule.band.is_finite() {
        rule.band.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let plaus = |i: usize| {
        let p = items[i].plausibility;
        if p.is_finite() {
            p.max(0.0)
        } else {
            0.0
        }
    };
    // Plausibility order (ties by key): the order every band walks down.
    let mut by_plaus: Vec<usize> = (0..items.len()).collect();
    by_plaus.sort_by(|&a, &b| {
        plaus(b)
            .total_cmp(&plaus(a))
            .then(items[a].key.cmp(&items[b].key))
    });
    // Which flagged drugs go after every other one.
    let set_aside = |i: usize| match rule.flagged {
        Flagged::Last => items[i].flagged,
        Flagged::UnexplainedLast => items[i].flagged && items[i].mechanism == Mechanism::New,
        Flagged::InBand | Flagged::InPlace => false,
    };
    let groups: Vec<Vec<usize>> =
        if matches!(rule.flagged, Flagged::Last | Flagged::UnexplainedLast) {
            let (bad, good): (Vec<usize>, Vec<usize>) =
                by_plaus.into_iter().partition(|&i| set_aside(i));
            vec![good, bad]
        } else {
            vec![by_plaus]
        };
    // Only `in-band` makes a flagged drug yield inside the band: under `unexplained-last` the
    // flagged drugs still in the first group are the explained ones (or nothing is known).
    let soft = rule.flagged == Flagged::InBand;
    // Inside the band, the lowest of (flagged, obvious) wins; the first such is the most
    // plausible of them.
    let demerit = |i: usize| {
        (
            u8::from(soft && items[i].flagged),
            u8::from(rule.favour_new && items[i].mechanism.is_obvious()),
        )
    };
    let mut out = Vec::with_capacity(items.len());
    for mut rest in groups {
        while !rest.is_empty() {
            let floor = band * plaus(rest[0]);
            // `rest` is in plausibility order, so the band is a prefix of it.
            let mut pick = 0;
            for (k, &i) in rest.iter().enumerate().skip(1) {
                if plaus(i) < floor {
                    break;
                }
                if demerit(i) < demerit(rest[pick]) {
                    pick = k;
                }
            }
            out.push(rest.remove(pick));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(p: f64, flagged: bool, obvious: bool, key: u32) -> ScreenItem {
        ScreenItem {
            plausibility: p,
            flagged,
            mechanism: if obvious {
                Mechanism::SameClass
            } else {
                Mechanism::New
            },
            key,
        }
    }

    #[test]
    fn band_one_is_plausibility_order_with_flagged_last() {
        let items = [
            item(0.2, false, true, 3),
            item(0.9, true, false, 1),
            item(0.5, false, true, 2),
            item(0.5, false, false, 0),
        ];
        let rule = ScreenRule {
            band: 1.0,
            flagged: Flagged::Last,
            favour_new: true,
        };
        // 0.5 tie: the new one (key 0) first; the flagged 0.9 last.
        assert_eq!(order(&items, &rule), vec![3, 2, 0, 1]);
        let shown = ScreenRule {
            flagged: Flagged::InPlace,
            ..rule
        };
        assert_eq!(order(&items, &shown), vec![1, 3, 2, 0]);
        // In the band: band 1 holds only ties, so the flagged 0.9 stays first.
        let soft = ScreenRule {
            flagged: Flagged::InBand,
            ..rule
        };
        assert_eq!(order(&items, &soft), vec![1, 3, 2, 0]);
        // A wider band lets the unflagged 0.5s pass it.
        let wide = ScreenRule { band: 0.5, ..soft };
        assert_eq!(order(&items, &wide), vec![3, 2, 1, 0]);
    }

    #[test]
    fn unexplained_flags_go_last_explained_ones_keep_their_place() {
        let mut none_known = item(0.95, true, false, 4);
        none_known.mechanism = Mechanism::NoneKnown;
        let items = [
            item(1.0, true, false, 0), // flagged, new mechanism: set aside
            item(0.9, true, true, 1),  // flagged, same class: kept in place
            item(0.85, false, true, 2),
            item(0.1, false, false, 3),
            none_known, // flagged, nothing to compare: kept in place
        ];
        let rule = ScreenRule {
            band: 0.8,
            flagged: Flagged::UnexplainedLast,
            favour_new: true,
        };
        // Without item 0 the best is 0.95 (floor 0.76): the "nothing known" 4 is not obvious,
        // so it wins its band; then 1 before 2 (both obvious, 1 more plausible); 3; item 0
        // at the end.
        assert_eq!(order(&items, &rule), vec![4, 1, 2, 3, 0]);
        // `in-band` makes the explained flag yield to the unflagged drug of its band.
        let soft = ScreenRule {
            flagged: Flagged::InBand,
            ..rule
        };
        assert_eq!(order(&items, &soft)[..3], [2, 0, 4]);
        assert_eq!(ScreenRule::default().flagged, Flagged::UnexplainedLast);
        assert_eq!(
            Flagged::parse("unexplained-last"),
            Some(Flagged::UnexplainedLast)
        );
    }

    #[test]
    fn new_mechanisms_climb_only_inside_the_band() {
        let items = [
            item(1.0, false, true, 0),
            item(0.9, false, true, 1),
            item(0.75, false, false, 2),
            item(0.5, false, false, 3),
        ];
        let rule = ScreenRule {
            band: 0.7,
            flagged: Flagged::InBand,
            favour_new: true,
        };
        // 0.75 ≥ 0.7 × 1.0 climbs to the top; 0.5 < 0.7 × 1.0 waits until the floor falls
        // (after item 0 is placed the best is 0.9, floor 0.63: still out; then 0.9 placed).
        assert_eq!(order(&items, &rule), vec![2, 0, 1, 3]);
        let off = ScreenRule {
            favour_new: false,
            ..rule
        };
        assert_eq!(order(&items, &off), vec![0, 1, 2, 3]);
    }

    #[test]
    fn odd_numbers_do_not_panic() {
        let items = [
            item(f64::NAN, false, false, 1),
            item(-1.0, false, true, 0),
            item(f64::INFINITY, false, false, 2),
        ];
        let rule = ScreenRule {
            band: f64::NAN,
            flagged: Flagged::InBand,
            favour_new: true,
        };
        let o = order(&items, &rule);
        let mut s = o.clone();
        s.sort_unstable();
        assert_eq!(s, vec![0, 1, 2]);
        assert!(order(&[], &ScreenRule::default()).is_empty());
    }
}
