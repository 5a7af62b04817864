//! Stage 5: query results detached from the store (nodes and relationships carry their labels,
//! type and properties), rendered as a text table or JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Map as JsonMap, Value as Json};

use crate::store::Store;
use crate::value::{format_float, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct NodeOut {
    pub id: u64,
    pub labels: Vec<String>,
    pub props: BTreeMap<String, Out>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RelOut {
    pub id: u64,
    pub rel_type: String,
    pub start: u64,
    pub end: u64,
    pub props: BTreeMap<String, Out>,
}

/// A result value.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Out>),
    Map(BTreeMap<String, Out>),
    Node(NodeOut),
    Rel(RelOut),
    /// Nodes and relationships in walk order.
    Path(Vec<NodeOut>, Vec<RelOut>),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Out>>,
    /// Rows were cut at [`Options::max_rows`](crate::Options::max_rows).
    pub truncated: bool,
}

pub(crate) fn node_out(store: &dyn Store, n: u32) -> NodeOut {
    let mut labels: Vec<String> = store
        .node_labels(n)
        .into_iter()
        .map(|l| store.label_name(l).to_string())
        .collect();
    labels.sort();
    let props = store
        .node_props(n)
        .into_iter()
        .map(|(k, v)| (k, detach(store, &v)))
        .collect();
    NodeOut {
        id: u64::from(n),
        labels,
        props,
    }
}

pub(crate) fn rel_out(store: &dyn Store, r: &crate::store::RelRef) -> RelOut {
    let props = store
        .rel_props(r)
        .into_iter()
        .map(|(k, v)| (k, detach(store, &v)))
        .collect();
    RelOut {
        id: r.id,
        rel_type: store.rel_type_name(r.ty).to_string(),
        start: u64::from(r.src),
        end: u64::from(r.dst),
        props,
    }
}

/// Converts an execution value into a result value, reading what it needs from the store.
pub fn detach(store: &dyn Store, v: &Value) -> Out {
    match v {
        Value::Null => Out::Null,
        Value::Bool(b) => Out::Bool(*b),
        Value::Int(i) => Out::Int(*i),
        Value::Float(f) => Out::Float(*f),
        Value::Str(s) => Out::Str(s.clone()),
        Value::List(xs) => Out::List(xs.iter().map(|x| detach(store, x)).collect()),
        Value::Map(m) => Out::Map(
            m.iter()
                .map(|(k, x)| (k.clone(), detach(store, x)))
                .collect(),
        ),
        Value::Node(n) => Out::Node(node_out(store, *n)),
        Value::Rel(r) => Out::Rel(rel_out(store, r)),
        Value::Path(p) => Out::Path(
            p.nodes.iter().map(|&n| node_out(store, n)).collect(),
            p.rels.iter().map(|r| rel_out(store, r)).collect(),
        ),
    }
}

fn quote(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('\'');
    for c in s.chars() {
        match c {
            '\'' => o.push_str("\\'"),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o.push('\'');
    o
}

fn props_text(props: &BTreeMap<String, Out>, out: &mut String) {
    if props.is_empty() {
        return;
    }
    out.push_str(" {");
    for (i, (k, v)) in props.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{k}: {}", v.to_cypher());
    }
    out.push('}');
}

impl NodeOut {
    fn to_cypher(&self) -> String {
        let mut s = String::from("(");
        for l in &self.labels {
            let _ = write!(s, ":{l}");
        }
        let mut p = String::new();
        props_text(&self.props, &mut p);
        s.push_str(if self.labels.is_empty() {
            p.trim_start()
        } else {
            &p
        });
        s.push(')');
        s
    }
}

impl RelOut {
    fn to_cypher(&self) -> String {
        let mut s = format!("[:{}", self.rel_type);
        props_text(&self.props, &mut s);
        s.push(']');
        s
    }
}

impl Out {
    /// Cypher literal syntax, as the TCK writes expected values (`(:A {num: 1})`, `[:T]`,
    /// `<(:A)-[:T]->(:B)>`, `'text'`, `1.0`).
    pub fn to_cypher(&self) -> String {
        match self {
            Out::Null => "null".into(),
            Out::Bool(b) => b.to_string(),
            Out::Int(i) => i.to_string(),
            Out::Float(f) => format_float(*f),
            Out::Str(s) => quote(s),
            Out::List(xs) => format!(
                "[{}]",
                xs.iter().map(Out::to_cypher).collect::<Vec<_>>().join(", ")
            ),
            Out::Map(m) => format!(
                "{{{}}}",
                m.iter()
                    .map(|(k, v)| format!("{k}: {}", v.to_cypher()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Out::Node(n) => n.to_cypher(),
            Out::Rel(r) => r.to_cypher(),
            Out::Path(nodes, rels) => {
                let mut s = String::from("<");
                if let Some(first) = nodes.first() {
                    s.push_str(&first.to_cypher());
                }
                for (i, r) in rels.iter().enumerate() {
                    let (prev, next) = (nodes.get(i), nodes.get(i + 1));
                    let forward = prev.is_some_and(|p| p.id == r.start);
                    let _ = write!(
                        s,
                        "{}{}{}",
                        if forward { "-" } else { "<-" },
                        r.to_cypher(),
                        if forward { "->" } else { "-" }
                    );
                    if let Some(n) = next {
                        s.push_str(&n.to_cypher());
                    }
                }
                s.push('>');
                s
            }
        }
    }

    /// Plain text for tables: strings unquoted at the top level.
    pub fn to_text(&self) -> String {
        match self {
            Out::Str(s) => s.clone(),
            other => other.to_cypher(),
        }
    }

    pub fn to_json(&self) -> Json {
        match self {
            Out::Null => Json::Null,
            Out::Bool(b) => json!(b),
            Out::Int(i) => json!(i),
            Out::Float(f) => serde_json::Number::from_f64(*f)
                .map(Json::Number)
                .unwrap_or_else(|| json!(format_float(*f))),
            Out::Str(s) => json!(s),
            Out::List(xs) => Json::Array(xs.iter().map(Out::to_json).collect()),
            Out::Map(m) => Json::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
            Out::Node(n) => node_json(n),
            Out::Rel(r) => rel_json(r),
            Out::Path(nodes, rels) => json!({
                "nodes": nodes.iter().map(node_json).collect::<Vec<_>>(),
                "relationships": rels.iter().map(rel_json).collect::<Vec<_>>(),
            }),
        }
    }
}

fn node_json(n: &NodeOut) -> Json {
    let props: JsonMap<String, Json> = n
        .props
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect();
    json!({ "identity": n.id, "labels": n.labels, "properties": props })
}

fn rel_json(r: &RelOut) -> Json {
    let props: JsonMap<String, Json> = r
        .props
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect();
    json!({ "identity": r.id, "type": r.rel_type, "start": r.start, "end": r.end, "properties": props })
}

impl QueryResult {
    /// `{"columns": [...], "rows": [[...], ...]}`.
    pub fn to_json(&self) -> Json {
        json!({
            "columns": self.columns,
            "rows": self.rows.iter().map(|r| r.iter().map(Out::to_json).collect::<Vec<_>>()).collect::<Vec<_>>(),
        })
    }

    /// A boxed text table; cells longer than `max_width` characters are cut with `…`.
    pub fn to_table(&self, max_width: usize) -> String {
        let cut = |s: String| -> String {
            if s.chars().count() > max_width {
                let mut t: String = s.chars().take(max_width.saturating_sub(1)).collect();
                t.push('…');
                t
            } else {
                s
            }
        };
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|v| cut(v.to_text())).collect())
            .collect();
        let mut w: Vec<usize> = self.columns.iter().map(|c| c.chars().count()).collect();
        for r in &cells {
            for (i, c) in r.iter().enumerate() {
                if let Some(x) = w.get_mut(i) {
                    *x = (*x).max(c.chars().count());
                }
            }
        }
        let line = |l: char, m: char, r: char| -> String {
            let mut s = String::new();
            s.push(l);
            for (i, x) in w.iter().enumerate() {
                if i > 0 {
                    s.push(m);
                }
                s.push_str(&"─".repeat(x + 2));
            }
            s.push(r);
            s.push('\n');
            s
        };
        let row = |vals: &[String]| -> String {
            let mut s = String::from("│");
            for (i, x) in w.iter().enumerate() {
                let v = vals.get(i).map(String::as_str).unwrap_or("");
                let pad = x - v.chars().count();
                let _ = write!(s, " {v}{} │", " ".repeat(pad));
            }
            s.push('\n');
            s
        };
        let mut out = line('┌', '┬', '┐');
        out.push_str(&row(&self.columns));
        out.push_str(&line('├', '┼', '┤'));
        for r in &cells {
            out.push_str(&row(r));
        }
        out.push_str(&line('└', '┴', '┘'));
        let _ = writeln!(
            out,
            "{} row{}",
            self.rows.len(),
            if self.rows.len() == 1 { "" } else { "s" }
        );
        out
    }
}
