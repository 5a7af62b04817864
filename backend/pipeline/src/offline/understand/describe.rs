//! A reading in plain words (the interpretation line shown with every answer).

use serenqa_graph::{Graph, TypeId};

use super::linking::{NeverHeld, Understander};
use crate::offline::retrieval::{Except, PNode, Parse};

impl Understander {
    /// Plural display word of a type ("drugs", "side effects").
    pub fn plural(&self, g: &Graph, t: TypeId) -> String {
        let w = self
            .lex
            .display
            .get(&t)
            .cloned()
            .unwrap_or_else(|| g.type_display(t).to_lowercase());
        if w.ends_with('s') || w.ends_with("sh") || w.ends_with("ch") {
            format!("{w}es")
        } else if w.ends_with('y') && !w.ends_with("ay") && !w.ends_with("ey") {
            format!("{}ies", &w[..w.len() - 1])
        } else {
            format!("{w}s")
        }
    }

    /// The plain-words interpretation of a reading: "Drugs that treat multiple sclerosis";
    /// a yes/no reading asks: "Is polycystic ovary syndrome among the diseases that are
    /// treated by Metformin?"
    pub fn describe(&self, g: &Graph, p: &Parse) -> String {
        let s = self.answers_phrase(g, p);
        if let Some(n) = p.only {
            return format!("Is {} among the {s}?", g.name(n));
        }
        let mut c = s.chars();
        match c.next() {
            Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
            None => s,
        }
    }

    /// The answers a reading asks for, in lower case and without the yes/no frame: "drugs
    /// that treat asthma, other than Prednisone, except those that cause Drowsiness".
    pub fn answers_phrase(&self, g: &Graph, p: &Parse) -> String {
        let mut seen = vec![false; p.nodes.len()];
        let mut s = self.describe_var(g, p, 0, &mut seen);
        let nodes: Vec<&str> = p
            .except
            .iter()
            .filter_map(|x| match x {
                Except::Node(n) => Some(g.name(*n)),
                Except::LinkedTo(..) => None,
            })
            .collect();
        if !nodes.is_empty() {
            s.push_str(&format!(", other than {}", join_and(&nodes)));
        }
        for x in &p.except {
            if let Except::LinkedTo(r, n) = *x {
                let answer_is_source = g.relation(r).source_type != Some(g.node_type(n));
                let (f, bk) = self.lex.verbs.get(&r).cloned().unwrap_or_else(|| {
                    (
                        g.relation(r).verb.clone(),
                        format!("are linked by {} to", g.relation(r).verb),
                    )
                });
                let verb = if answer_is_source { f } else { bk };
                s.push_str(&format!(", except those that {verb} {}", g.name(n)));
            }
        }
        s
    }

    fn describe_var(&self, g: &Graph, p: &Parse, i: usize, seen: &mut Vec<bool>) -> String {
        seen[i] = true;
        let head = match p.nodes[i] {
            PNode::Var(t) => self.plural(g, t),
            PNode::Entity(e) => {
                return match p.groups.iter().find(|x| x.0 == e) {
                    Some((_, name, _)) => name.clone(),
                    None => g.name(e).to_string(),
                }
            }
        };
        let mut clauses = Vec::new();
        for &(a, r, b) in &p.edges {
            let (other, from_source) = if a == i && !seen[b] {
                (b, true)
            } else if b == i && !seen[a] {
                (a, false)
            } else {
                continue;
            };
            let (f, bk) = self.lex.verbs.get(&r).cloned().unwrap_or_else(|| {
                (
                    g.relation(r).verb.clone(),
                    format!("are linked by {} to", g.relation(r).verb),
                )
            });
            let verb = if from_source { f } else { bk };
            let obj = self.describe_var(g, p, other, seen);
            clauses.push((verb, obj));
        }
        // Entities sharing one verb are joined: "associated with asthma and eczema".
        let mut text = Vec::new();
        let mut k = 0;
        while k < clauses.len() {
            let verb = clauses[k].0.clone();
            let mut objs = vec![clauses[k].1.clone()];
            while k + 1 < clauses.len() && clauses[k + 1].0 == verb {
                k += 1;
                objs.push(clauses[k].1.clone());
            }
            let joined = if objs.len() > 1 {
                format!("both {}", objs.join(" and "))
            } else {
                objs.remove(0)
            };
            text.push(format!("{verb} {joined}"));
            k += 1;
        }
        if text.is_empty() {
            head
        } else {
            format!("{head} that {}", text.join(" and "))
        }
    }
}

impl Understander {
    /// The refusal of a question that asks for a link the graph never holds, and the question
    /// the graph can answer about the same name: ("The graph holds 'tuberculosis' only as a
    /// side effect (Tuberculosis), and no drugs there treat or palliate a side effect: drugs
    /// are joined to side effects only by 'cause'.", "which drugs cause Tuberculosis"); when
    /// no relation joins the asked type to the name's at all: "… and nothing there links genes
    /// to side effects."
    pub fn never_message(
        &self,
        g: &Graph,
        n: &NeverHeld,
        mention: &str,
    ) -> (String, Option<String>) {
        let word = |t: TypeId| {
            self.lex
                .display
                .get(&t)
                .cloned()
                .unwrap_or_else(|| g.type_display(t).to_lowercase())
        };
        let kinds: Vec<String> = n.types.iter().map(|&t| format!("a {}", word(t))).collect();
        let kinds_ref: Vec<&str> = kinds.iter().map(String::as_str).collect();
        let mut verbs: Vec<String> = Vec::new();
        for r in &n.asked {
            let v = self
                .lex
                .verbs
                .get(r)
                .map(|v| v.0.clone())
                .unwrap_or_else(|| g.relation(*r).verb.clone());
            if !verbs.contains(&v) {
                verbs.push(v);
            }
        }
        let verbs = verbs.join(" or ");
        let name = g.name(n.node);
        let asking = n.asking.map(|a| self.plural(g, a));
        let mut msg = format!(
            "The graph holds '{mention}' only as {} ({name})",
            join_and(&kinds_ref)
        );
        match &asking {
            Some(a) if n.asked.is_empty() => {
                let kinds: Vec<String> = n.types.iter().map(|&t| self.plural(g, t)).collect();
                let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
                msg.push_str(&format!(
                    ", and nothing there links {a} to {}",
                    kinds.join(" or ")
                ));
            }
            Some(a) => msg.push_str(&format!(
                ", and no {a} there {verbs} {}",
                kinds_ref.join(" or ")
            )),
            None => {}
        }
        // What the graph does join to the name's first type, and the question that asks it.
        let t = n.types[0];
        let link = n
            .asking
            .and_then(|a| self.lex.pairs.get(&(a, t)).map(|&r| (a, r)))
            .or_else(|| {
                self.lex.pair_order.iter().find_map(|&r| {
                    let rt = g.relation(r);
                    match (rt.source_type, rt.target_type) {
                        (Some(x), Some(y)) if y == t && x != t => Some((x, r)),
                        (Some(x), Some(y)) if x == t && y != t => Some((y, r)),
                        _ => None,
                    }
                })
            });
        let Some((other, r)) = link else {
            msg.push('.');
            return (msg, None);
        };
        let (from_source, from_target) = self
            .lex
            .verbs
            .get(&r)
            .cloned()
            .unwrap_or_else(|| (g.relation(r).verb.clone(), g.relation(r).verb.clone()));
        let verb = if g.relation(r).source_type == Some(other) {
            from_source
        } else {
            from_target
        };
        let others = self.plural(g, other);
        if Some(other) == n.asking {
            msg.push_str(&format!(
                ": {others} are joined to {} only by '{verb}'.",
                self.plural(g, t)
            ));
        } else {
            msg.push('.');
        }
        (msg, Some(format!("which {others} {verb} {name}")))
    }
}

/// "A", "A and B", "A, B and C".
fn join_and(xs: &[&str]) -> String {
    match xs {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
