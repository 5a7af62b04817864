//! Prompt templates for every LLM role, kept as files under `prompts/` (compiled in) with
//! `{{placeholder}}`s. A file is the system prompt, a line `=== user ===`, and the user prompt.
//! Structure and output formats follow the paper's Appendix B; the wording is our own.
//!
//! [`render`] fails on a missing or an unknown placeholder, so a template and its caller
//! cannot drift apart silently. [`prompts_hash`] goes into every run manifest.

use std::collections::BTreeMap;

use crate::llm::Message;

/// (name, text) of every template.
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "select_relations",
        include_str!("../prompts/select_relations.txt"),
    ),
    ("select_nodes", include_str!("../prompts/select_nodes.txt")),
    ("continue", include_str!("../prompts/continue.txt")),
    ("summarize", include_str!("../prompts/summarize.txt")),
    ("retrieval", include_str!("../prompts/retrieval.txt")),
    (
        "ensemble_score",
        include_str!("../prompts/ensemble_score.txt"),
    ),
    (
        "judge_faithfulness",
        include_str!("../prompts/judge_faithfulness.txt"),
    ),
    (
        "judge_comprehensiveness",
        include_str!("../prompts/judge_comprehensiveness.txt"),
    ),
    (
        "judge_relevance",
        include_str!("../prompts/judge_relevance.txt"),
    ),
];

const USER_MARK: &str = "=== user ===";

/// The template text by name.
pub fn template(name: &str) -> Result<&'static str, String> {
    TEMPLATES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .ok_or_else(|| format!("no prompt template {name:?}"))
}

/// Placeholder names used by a template, in first-use order.
pub fn placeholders(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        let after = &rest[i + 2..];
        match after.find("}}") {
            Some(j) => {
                let name = after[..j].trim().to_string();
                if !out.contains(&name) {
                    out.push(name);
                }
                rest = &after[j + 2..];
            }
            None => break,
        }
    }
    out
}

fn fill(text: &str, vars: &BTreeMap<&str, String>) -> String {
    let mut out = String::with_capacity(text.len() + 256);
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find("}}") {
            Some(j) => {
                let name = after[..j].trim();
                out.push_str(vars.get(name).map(String::as_str).unwrap_or(""));
                rest = &after[j + 2..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Renders template `name` into a system and a user message.
pub fn render(name: &str, vars: &[(&str, String)]) -> Result<Vec<Message>, String> {
    let text = template(name)?;
    let map: BTreeMap<&str, String> = vars.iter().cloned().collect();
    let needed = placeholders(text);
    if let Some(missing) = needed.iter().find(|p| !map.contains_key(p.as_str())) {
        return Err(format!("prompt {name}: no value for {{{{{missing}}}}}"));
    }
    if let Some(extra) = map.keys().find(|k| !needed.iter().any(|p| p == *k)) {
        return Err(format!("prompt {name}: unknown placeholder {extra:?}"));
    }
    let (sys, user) = text
        .split_once(USER_MARK)
        .ok_or_else(|| format!("prompt {name}: no `{USER_MARK}` line"))?;
    Ok(vec![
        Message::system(fill(sys, &map).trim().to_string()),
        Message::user(fill(user, &map).trim().to_string()),
    ])
}

/// xxh3 over all templates (names and texts), hex.
pub fn prompts_hash() -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for (n, t) in TEMPLATES {
        h.update(n.as_bytes());
        h.update(&[0]);
        h.update(t.as_bytes());
        h.update(&[0]);
    }
    format!("{:016x}", h.digest())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_renders_with_its_placeholders_and_nothing_is_left() {
        for (name, text) in TEMPLATES {
            assert!(text.contains(USER_MARK), "{name}");
            let ph = placeholders(text);
            assert!(!ph.is_empty(), "{name} has no placeholder");
            let vars: Vec<(&str, String)> = ph
                .iter()
                .map(|p| (p.as_str(), format!("<{p}-value>")))
                .collect();
            let msgs = render(name, &vars).unwrap();
            assert_eq!(msgs.len(), 2);
            assert_eq!(msgs[0].role, "system");
            for m in &msgs {
                assert!(
                    !m.content.contains("{{") && !m.content.contains("}}"),
                    "{name}: {}",
                    m.content
                );
                assert!(!m.content.contains(USER_MARK));
            }
            for p in &ph {
                assert!(
                    msgs.iter()
                        .any(|m| m.content.contains(&format!("<{p}-value>"))),
                    "{name}: {p} not rendered"
                );
            }
        }
    }

    #[test]
    fn missing_and_unknown_placeholders_are_errors() {
        assert!(render("summarize", &[("roots", "x".into())])
            .unwrap_err()
            .contains("no value"));
        let ph = placeholders(template("summarize").unwrap());
        let mut vars: Vec<(&str, String)> =
            ph.iter().map(|p| (p.as_str(), String::new())).collect();
        vars.push(("bogus", "1".into()));
        assert!(render("summarize", &vars)
            .unwrap_err()
            .contains("unknown placeholder"));
        assert!(render("nope", &[]).is_err());
    }

    #[test]
    fn judges_ask_for_the_score_line_format() {
        for j in [
            "judge_faithfulness",
            "judge_comprehensiveness",
            "judge_relevance",
        ] {
            let t = template(j).unwrap();
            assert!(
                t.contains("Score: <integer 1-5>") && t.contains("#END"),
                "{j}"
            );
        }
        assert_eq!(prompts_hash().len(), 16);
    }
}
