//! The LLM explorer and summariser: Algorithm 3's decisions and the hop summaries asked of a
//! model with the `select_relations`, `select_nodes`, `continue` and `summarize` prompts, and
//! the parsing of their replies (bad items are dropped and recorded as the call's issues).

use std::collections::{BTreeMap, HashMap, HashSet};

use serenqa_graph::{NodeId, RelId, TypeId};

use super::traits::{Explorer, LevelDecision, LevelView, Summarizer};
use crate::explore::{node_label, path_line, Step};
use crate::llm::{BoxFuture, CallTrace, Message, Role, RoleModel};
use crate::prompts;

/// Renders a prompt; a template failure becomes a visible system message in the trace.
pub(super) fn render_or_issue(name: &str, vars: &[(&str, String)]) -> Vec<Message> {
    // Templates are compiled in and tested, so a failure here is a programming error made
    // visible in the trace rather than a crash.
    prompts::render(name, vars)
        .unwrap_or_else(|e| vec![Message::system(format!("prompt error: {e}"))])
}

/// One call of `role`, with a truncated reply flagged as an issue.
async fn call(m: &RoleModel, role: Role, prompt: Vec<Message>) -> CallTrace {
    let (mut t, truncated) = m.call(role.as_str(), prompt).await;
    if truncated {
        t.issues.push("reply truncated (length limit)".into());
    }
    t
}

/// Comma/newline-separated items of a reply, stripped of quotes, bullets and code fences.
pub fn split_list(reply: &str) -> Vec<String> {
    reply
        .split([',', '\n', ';'])
        .map(|s| {
            s.trim_matches(|c: char| {
                c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '*' | '-' | '[' | ']')
            })
            .to_string()
        })
        .filter(|s| !s.is_empty() && s != "```")
        .collect()
}

/// Splits a continue reply into (description, decision): the decision is the last line that
/// is exactly YES or NO (markdown and punctuation ignored); the description is the text before it.
pub fn parse_continue(reply: &str) -> (String, Option<bool>) {
    let lines: Vec<&str> = reply.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let w = l
            .trim()
            .trim_matches(|c: char| !c.is_ascii_alphabetic())
            .to_ascii_uppercase();
        if w == "YES" || w == "NO" {
            let desc = lines[..i].join("\n").trim().to_string();
            return (desc, Some(w == "YES"));
        }
    }
    (reply.trim().to_string(), None)
}

/// A model making Algorithm 3's decisions.
#[derive(Clone)]
pub struct LlmExplorer {
    pub model: RoleModel,
}

impl LlmExplorer {
    async fn pick_relations(
        &self,
        v: &LevelView<'_>,
        u: NodeId,
        rels: &BTreeMap<RelId, usize>,
    ) -> (Vec<RelId>, Option<CallTrace>) {
        let g = v.env.g;
        let offered: Vec<String> = rels
            .iter()
            .map(|(&r, &c)| format!("{} ({} edges)", g.relation(r).name, c))
            .collect();
        let prompt = render_or_issue(
            Role::Relations.template(),
            &[
                (
                    "node_types",
                    (0..g.type_count() as TypeId)
                        .map(|t| g.type_label(t).to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
                ("example", v.task.example.clone()),
                ("m", v.cfg.relations_per_node.to_string()),
                ("question", v.task.question.to_string()),
                ("frontier", node_label(g, u)),
                ("level", v.level.to_string()),
                ("context", v.context.to_string()),
                ("relations", offered.join("\n")),
            ],
        );
        let mut t = call(&self.model, Role::Relations, prompt).await;
        let mut out = Vec::new();
        if let Some(reply) = &t.reply {
            for item in split_list(reply) {
                let name = item.split_whitespace().next().unwrap_or("").to_string();
                match g.relation_id(&name).filter(|r| rels.contains_key(r)) {
                    Some(r) if !out.contains(&r) => out.push(r),
                    Some(_) => {}
                    None => t.issues.push(format!("not an offered relation: {item:?}")),
                }
            }
            if out.len() > v.cfg.relations_per_node {
                t.issues.push(format!(
                    "{} relations chosen, {} allowed",
                    out.len(),
                    v.cfg.relations_per_node
                ));
                out.truncate(v.cfg.relations_per_node);
            }
        }
        (out, Some(t))
    }

    async fn pick_nodes(
        &self,
        v: &LevelView<'_>,
        cands: &[(Step, f64)],
    ) -> (Vec<NodeId>, Option<CallTrace>) {
        let g = v.env.g;
        let visited_now: HashSet<NodeId> = v.ex.paths.keys().copied().collect();
        let list: Vec<String> = cands
            .iter()
            .map(|(s, sc)| {
                format!(
                    "{} | {} | {} | {} | {} | {:.3}",
                    g.ident(s.to),
                    g.name(s.to),
                    g.type_label(g.node_type(s.to)),
                    g.ident(s.from),
                    g.relation(s.rel).name,
                    sc
                )
            })
            .collect();
        let visited: Vec<&str> = v.ex.order.iter().take(200).map(|&n| g.ident(n)).collect();
        let prompt = render_or_issue(
            Role::Nodes.template(),
            &[
                ("n", v.cfg.beam_width.to_string()),
                ("example", v.task.example.clone()),
                ("question", v.task.question.to_string()),
                ("level", v.level.to_string()),
                ("context", v.context.to_string()),
                ("visited", visited.join(", ")),
                ("candidates", list.join("\n")),
            ],
        );
        let mut t = call(&self.model, Role::Nodes, prompt).await;
        let mut out = Vec::new();
        if let Some(reply) = &t.reply {
            let by_id: HashMap<&str, NodeId> =
                cands.iter().map(|(s, _)| (g.ident(s.to), s.to)).collect();
            for item in split_list(reply) {
                let id = item.split([' ', '|']).next().unwrap_or("");
                match by_id.get(id) {
                    Some(&n) if !out.contains(&n) && !visited_now.contains(&n) => {
                        out.push(n);
                    }
                    Some(_) => {}
                    None => t.issues.push(format!("not a candidate id: {item:?}")),
                }
            }
            if out.len() > v.cfg.beam_width {
                t.issues.push(format!(
                    "{} nodes chosen, beam width {}",
                    out.len(),
                    v.cfg.beam_width
                ));
                out.truncate(v.cfg.beam_width);
            }
        }
        (out, Some(t))
    }

    async fn decide_level(
        &self,
        v: &LevelView<'_>,
        next: &[NodeId],
    ) -> (LevelDecision, Option<CallTrace>) {
        let level_paths: Vec<String> = next
            .iter()
            .filter_map(|n| v.ex.paths.get(n))
            .map(|p| path_line(v.env.g, p))
            .collect();
        let prompt = render_or_issue(
            Role::Continue.template(),
            &[
                ("question", v.task.question.to_string()),
                ("roots", v.roots.to_string()),
                ("paths", level_paths.join("\n")),
            ],
        );
        let mut t = call(&self.model, Role::Continue, prompt).await;
        let (description, decision) = parse_continue(t.reply.as_deref().unwrap_or(""));
        if decision.is_none() && t.reply.is_some() {
            t.issues
                .push("no YES/NO line; continuing (the prompt's default)".into());
        }
        let d = LevelDecision {
            description,
            go_on: decision.unwrap_or(true),
            no_is_decision: true,
        };
        (d, Some(t))
    }
}

impl Explorer for LlmExplorer {
    fn relations<'a>(
        &'a self,
        v: &'a LevelView<'a>,
        u: NodeId,
        rels: &'a BTreeMap<RelId, usize>,
    ) -> BoxFuture<'a, (Vec<RelId>, Option<CallTrace>)> {
        Box::pin(self.pick_relations(v, u, rels))
    }

    fn nodes<'a>(
        &'a self,
        v: &'a LevelView<'a>,
        cands: &'a [(Step, f64)],
    ) -> BoxFuture<'a, (Vec<NodeId>, Option<CallTrace>)> {
        Box::pin(self.pick_nodes(v, cands))
    }

    fn decide<'a>(
        &'a self,
        v: &'a LevelView<'a>,
        next: &'a [NodeId],
    ) -> BoxFuture<'a, (LevelDecision, Option<CallTrace>)> {
        Box::pin(self.decide_level(v, next))
    }

    fn model(&self) -> Option<&str> {
        Some(&self.model.name)
    }
}

/// A model writing the hop summaries.
#[derive(Clone)]
pub struct LlmSummarizer {
    pub model: RoleModel,
}

impl LlmSummarizer {
    async fn write(&self, v: &LevelView<'_>) -> (String, Option<CallTrace>) {
        let lines: Vec<String> =
            v.ex.paths_of_depth(v.level)
                .iter()
                .map(|p| path_line(v.env.g, p))
                .collect();
        let prompt = render_or_issue(
            Role::Summary.template(),
            &[
                ("roots", v.roots.to_string()),
                ("question", v.task.question.to_string()),
                ("level", v.level.to_string()),
                ("paths", lines.join("\n")),
            ],
        );
        let t = call(&self.model, Role::Summary, prompt).await;
        let s = t.reply.clone().unwrap_or_default();
        (s, Some(t))
    }
}

impl Summarizer for LlmSummarizer {
    fn summarize<'a>(&'a self, v: &'a LevelView<'a>) -> BoxFuture<'a, (String, Option<CallTrace>)> {
        Box::pin(self.write(v))
    }

    fn model(&self) -> Option<&str> {
        Some(&self.model.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_replies() {
        assert_eq!(
            parse_continue("The paths...\n\nYES\n\nBecause."),
            ("The paths...".to_string(), Some(true))
        );
        assert_eq!(parse_continue("Summary\n**NO**\nwhy").1, Some(false));
        assert_eq!(parse_continue("no decision here").1, None);
        assert_eq!(parse_continue("").1, None);
    }

    #[test]
    fn list_items() {
        assert_eq!(
            split_list("`TREATS_CtD`, BINDS_CbG\n- \"X\""),
            vec!["TREATS_CtD", "BINDS_CbG", "X"]
        );
        assert!(split_list("  \n").is_empty());
    }
}
