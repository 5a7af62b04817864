//! How a candidate reads: its first-screen item, mechanism badge text, safety warning, the
//! absolute probability, what it is already known for, and the CSV of the ranking as shown.
//! Pure functions of the reply, used by the table (`super`) and by Ask (`known_for_line`).

use serenqa_shared::api::{Candidate, DiscoverResponse, NodeView, SafetyFlag};
use serenqa_shared::rns::Terms;
use serenqa_shared::screen::{Mechanism, ScreenItem, ScreenRule};

/// What the first-screen rule needs of a candidate (the same as the server uses).
pub(super) fn screen_item(c: &Candidate) -> ScreenItem {
    ScreenItem {
        plausibility: c.plausibility.as_ref().map(|p| p.score).unwrap_or(0.0),
        flagged: !c.safety.is_empty(),
        mechanism: c.mechanism.kind,
        key: c.node.index,
    }
}

fn names(nodes: &[NodeView]) -> String {
    nodes
        .iter()
        .map(|n| n.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What follows the mechanism badge's label: "as A, B: K" (same class), "with A: G" (shared
/// target); nothing for a new mechanism or nothing known. Label and detail read as one phrase:
/// "same class as A, B: K".
pub fn mechanism_detail(c: &Candidate) -> Option<String> {
    let m = &c.mechanism;
    let with = |word: &str, shared: &[NodeView]| {
        let mut t = String::new();
        if !m.like.is_empty() {
            t.push_str(&format!("{word} {}", names(&m.like)));
        }
        if !shared.is_empty() {
            if !t.is_empty() {
                t.push(':');
            }
            t.push_str(&format!(" {}", names(shared)));
        }
        let t = t.trim().to_string();
        (!t.is_empty()).then_some(t)
    };
    match m.kind {
        Mechanism::SameClass => with("as", &m.classes),
        Mechanism::SharedTarget => with("with", &m.targets),
        Mechanism::New | Mechanism::NoneKnown => None,
    }
}

/// What the badge means, for its tooltip.
pub(super) fn mechanism_help(kind: Mechanism, query_is_disease: bool) -> &'static str {
    match (kind, query_is_disease) {
        (Mechanism::SameClass, _) => {
            "Shares a pharmacologic class with a known treatment: an obvious suggestion"
        }
        (Mechanism::SharedTarget, _) => {
            "Binds a specific target (a gene few drugs bind) that a known treatment binds: an obvious suggestion"
        }
        (Mechanism::New, true) => {
            "Neither shares a pharmacologic class nor a specific target with any known treatment of the disease"
        }
        (Mechanism::New, false) => {
            "The drug shares neither a pharmacologic class nor a specific target with any known treatment of this disease"
        }
        (Mechanism::NoneKnown, true) => {
            "Nothing is recorded as treating or palliating the disease, so there is nothing to compare with"
        }
        (Mechanism::NoneKnown, false) => {
            "Nothing is recorded as treating or palliating this disease, so there is nothing to compare with"
        }
    }
}

/// "⚠ Recorded as causing Pulmonary fibrosis (SIDER 4.1)"; on a drug's page the candidate is a
/// disease, so the sentence names the drug. The mechanism says how to read the record: a drug
/// of a known treatment's class or target often carries its indication among its label's side
/// effects; with nothing shared, no known treatment explains the record.
pub(super) fn safety_text(
    flags: &[SafetyFlag],
    drug: Option<&str>,
    mechanism: Mechanism,
) -> String {
    let what: Vec<String> = flags
        .iter()
        .map(|f| {
            if f.source.is_empty() {
                f.side_effect.name.clone()
            } else {
                format!("{} ({})", f.side_effect.name, f.source)
            }
        })
        .collect();
    let head = match drug {
        Some(d) => format!("⚠ {d} is recorded as causing {}", what.join("; ")),
        None => format!("⚠ Recorded as causing {}", what.join("; ")),
    };
    let reading = match mechanism {
        Mechanism::SameClass | Mechanism::SharedTarget => {
            " — a known treatment shares its class or target (labels often list a drug's use among its side effects)"
        }
        Mechanism::New => " — unexplained: no known treatment shares its class or target",
        Mechanism::NoneKnown => "",
    };
    format!("{head}{reading}")
}

pub(super) fn safety_title(flags: &[SafetyFlag]) -> String {
    flags
        .iter()
        .map(|f| {
            let by = match f.by.as_str() {
                "identifier" => "matched by identifier",
                "name" => "matched by name",
                _ => "matched",
            };
            let lic = if f.license.is_empty() {
                String::new()
            } else {
                format!(", license {}", f.license)
            };
            format!(
                "{} — {by}: {}; source {}{lic}",
                f.side_effect.name, f.matched, f.source
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A calibrated probability after "P ": "= 0.31", "= 0.006", "< 0.001".
pub fn fmt_p(p: f64) -> String {
    if !p.is_finite() {
        "= —".to_string()
    } else if p >= 0.1 {
        format!("= {p:.2}")
    } else if p >= 0.001 {
        format!("= {p:.3}")
    } else {
        "< 0.001".to_string()
    }
}

/// "treats: A, B, C (+4)" for a drug candidate, "treated by: …" for a disease candidate: what
/// the candidate is already known for, so a clinician can judge the leap at a glance.
pub fn known_for_line(node: &NodeView, known_for: &[NodeView], total: usize) -> Option<String> {
    if known_for.is_empty() {
        return None;
    }
    let verb = if node.kind == "Disease" {
        "treated by"
    } else {
        "treats"
    };
    let names: Vec<&str> = known_for.iter().map(|n| n.name.as_str()).collect();
    let more = total.saturating_sub(names.len());
    let tail = if more > 0 {
        format!(" (+{more})")
    } else {
        String::new()
    };
    Some(format!("{verb}: {}{tail}", names.join(", ")))
}

/// The ranking in CSV: comment lines (what, which weights, the research-only caveat; the
/// order and the first-screen rule), a header, then one row per candidate in the order shown.
/// `(a, b, g)` are the weights in use; with `s_ok` false (S cannot tell candidates apart here)
/// the S cells are empty.
pub(super) fn ranking_csv(
    d: &DiscoverResponse,
    order: &[(usize, Terms)],
    (a, b, g): (f64, f64, f64),
    s_ok: bool,
    from: &str,
    sort: &str,
    screen: Option<ScreenRule>,
) -> String {
    use serenqa_shared::csv::cell as csv_field;
    let mut s = format!(
        "# serenqa candidates for {} ({}), weights alpha={a:.2} beta={b:.2} gamma={g:.2} ({}); research hypotheses, not clinical advice\n",
        d.query.name,
        d.query.id,
        from.replace(['\n', '\r'], " ")
    );
    s.push_str(&format!("# order: {sort}"));
    if let Some(r) = screen {
        s.push_str(&format!(
            "; first-screen rule band={:.2} flagged={} new_mechanisms={}",
            r.band,
            r.flagged.name(),
            if r.favour_new {
                "favoured"
            } else {
                "not-favoured"
            }
        ));
    }
    s.push('\n');
    s.push_str("rank,id,name,kind,rns,r,n,s,known_for,p_treats,mechanism,safety\n");
    for (rank, (ci, t)) in order.iter().enumerate() {
        let Some(c) = d.candidates.get(*ci) else {
            continue;
        };
        let known: Vec<&str> = c.known_for.iter().map(|k| k.name.as_str()).collect();
        let safety: Vec<&str> = c
            .safety
            .iter()
            .map(|f| f.side_effect.name.as_str())
            .collect();
        s.push_str(&format!(
            "{},{},{},{},{:.4},{:.4},{:.4},{},{},{},{},{}\n",
            rank + 1,
            csv_field(&c.node.id),
            csv_field(&c.node.name),
            csv_field(&c.node.kind),
            t.rns,
            t.r,
            t.n,
            if s_ok {
                format!("{:.4}", t.s)
            } else {
                String::new()
            },
            csv_field(&known.join("; ")),
            c.plausibility
                .as_ref()
                .map(|p| format!("{:.6}", p.score))
                .unwrap_or_default(),
            c.mechanism.kind.name(),
            csv_field(&safety.join("; "))
        ));
    }
    s
}
