//! A generic TSV/CSV loader with a column mapping, for graphs exported by other tools.
//!
//! Columns are named by header (`name`) or by 0-based position (`#2`); a node type or a
//! relation may also be a constant (`=Gene`). Edges must refer to ids of the node table unless
//! `create_missing` is set, in which case unknown endpoints become nodes of type `Entity`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{label_of, open_input, read_error_message, LoadOptions};
use crate::error::{GraphError, Result};
use crate::{Graph, GraphBuilder, GraphMeta, NodeId, RelationType};

/// Where a field comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    Column(String),
    Index(usize),
    Const(String),
}

impl std::str::FromStr for Field {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if let Some(c) = s.strip_prefix('=') {
            Ok(Field::Const(c.to_string()))
        } else if let Some(i) = s.strip_prefix('#') {
            i.parse()
                .map(Field::Index)
                .map_err(|_| format!("{s:?}: a column position is #N with N a number"))
        } else if s.is_empty() {
            Err("empty column name".into())
        } else {
            Ok(Field::Column(s.to_string()))
        }
    }
}

#[derive(Clone, Debug)]
pub struct NodeTable {
    pub path: PathBuf,
    pub id: Field,
    pub name: Option<Field>,
    pub kind: Field,
}

#[derive(Clone, Debug)]
pub struct EdgeTable {
    pub path: PathBuf,
    pub source: Field,
    pub target: Field,
    pub relation: Field,
    pub score: Option<Field>,
}

#[derive(Clone, Debug)]
pub struct TableSpec {
    pub nodes: Vec<NodeTable>,
    pub edges: Vec<EdgeTable>,
    /// `b'\t'` or `b','`.
    pub delimiter: u8,
    pub has_header: bool,
    pub create_missing: bool,
}

enum Resolved {
    At(usize),
    Const(String),
}

fn resolve(
    path: &Path,
    f: &Field,
    header: Option<&csv::StringRecord>,
    width: usize,
) -> Result<Resolved> {
    Ok(match f {
        Field::Const(c) => Resolved::Const(c.clone()),
        Field::Index(i) if *i < width => Resolved::At(*i),
        Field::Index(i) => {
            return Err(GraphError::line(
                path,
                1,
                format!("column #{i} does not exist ({width} columns)"),
            ))
        }
        Field::Column(name) => match header {
            Some(h) => Resolved::At(h.iter().position(|c| c == name).ok_or_else(|| {
                GraphError::line(path, 1, format!("no column named {name:?} in the header"))
            })?),
            None => {
                return Err(GraphError::invalid(format!(
                    "{}: column {name:?} named, but the table has no header",
                    path.display()
                )))
            }
        },
    })
}

fn get<'a>(r: &'a Resolved, rec: &'a csv::StringRecord) -> &'a str {
    match r {
        Resolved::At(i) => rec.get(*i).unwrap_or(""),
        Resolved::Const(c) => c,
    }
}

fn err(path: &Path, e: csv::Error) -> GraphError {
    let line = e.position().map(csv::Position::line).unwrap_or(0);
    let msg = match e.kind() {
        csv::ErrorKind::Io(io) => read_error_message(io),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("expected {expected_len} fields, found {len}"),
        _ => e.to_string(),
    };
    GraphError::line(path, line, msg)
}

pub fn load(spec: &TableSpec, opts: &LoadOptions) -> Result<Graph> {
    let meta = GraphMeta {
        name: "table".into(),
        source: "TSV/CSV tables with a column mapping".into(),
        synthetic: false,
        dropped: Vec::new(),
    };
    let mut b = GraphBuilder::new(meta);
    let mut ids: HashMap<String, (NodeId, u64)> = HashMap::new();
    let reader = |path: &Path,
                  what: &str|
     -> Result<(
        csv::Reader<Box<dyn std::io::BufRead + Send>>,
        indicatif::ProgressBar,
    )> {
        let (input, bar) = open_input(path, what, opts)?;
        Ok((
            csv::ReaderBuilder::new()
                .delimiter(spec.delimiter)
                .has_headers(spec.has_header)
                .flexible(false)
                .from_reader(input),
            bar,
        ))
    };

    for t in &spec.nodes {
        let (mut rdr, bar) = reader(&t.path, "nodes")?;
        let header = if spec.has_header {
            Some(rdr.headers().map_err(|e| err(&t.path, e))?.clone())
        } else {
            None
        };
        let mut cols: Option<(Resolved, Option<Resolved>, Resolved)> = None;
        for rec in rdr.records() {
            let rec = rec.map_err(|e| err(&t.path, e))?;
            let line = rec.position().map(csv::Position::line).unwrap_or(0);
            if cols.is_none() {
                let w = rec.len();
                cols = Some((
                    resolve(&t.path, &t.id, header.as_ref(), w)?,
                    t.name
                        .as_ref()
                        .map(|f| resolve(&t.path, f, header.as_ref(), w))
                        .transpose()?,
                    resolve(&t.path, &t.kind, header.as_ref(), w)?,
                ));
            }
            let Some((ic, nc, kc)) = cols.as_ref() else {
                continue;
            };
            let id = get(ic, &rec);
            if id.is_empty() {
                return Err(GraphError::line(&t.path, line, "empty node id"));
            }
            let kind = get(kc, &rec);
            if kind.is_empty() {
                return Err(GraphError::line(&t.path, line, "empty node type"));
            }
            let name = nc
                .as_ref()
                .map(|c| get(c, &rec))
                .filter(|s| !s.is_empty())
                .unwrap_or(id);
            let ty = b.node_type(&label_of(kind), kind);
            let n = b.add_node(ty, id, name);
            if let Some((_, first)) = ids.insert(id.to_string(), (n, line)) {
                return Err(GraphError::line(
                    &t.path,
                    line,
                    format!("duplicate node id {id:?} (first seen on line {first})"),
                ));
            }
        }
        bar.finish_and_clear();
    }

    for t in &spec.edges {
        let (mut rdr, bar) = reader(&t.path, "edges")?;
        let header = if spec.has_header {
            Some(rdr.headers().map_err(|e| err(&t.path, e))?.clone())
        } else {
            None
        };
        #[allow(clippy::type_complexity)]
        let mut cols: Option<(Resolved, Resolved, Resolved, Option<Resolved>)> = None;
        for rec in rdr.records() {
            let rec = rec.map_err(|e| err(&t.path, e))?;
            let line = rec.position().map(csv::Position::line).unwrap_or(0);
            if cols.is_none() {
                let w = rec.len();
                cols = Some((
                    resolve(&t.path, &t.source, header.as_ref(), w)?,
                    resolve(&t.path, &t.target, header.as_ref(), w)?,
                    resolve(&t.path, &t.relation, header.as_ref(), w)?,
                    t.score
                        .as_ref()
                        .map(|f| resolve(&t.path, f, header.as_ref(), w))
                        .transpose()?,
                ));
            }
            let Some((sc, tc, rc, scc)) = cols.as_ref() else {
                continue;
            };
            let rel_name = get(rc, &rec);
            if rel_name.is_empty() {
                return Err(GraphError::line(&t.path, line, "empty relation"));
            }
            let mut endpoint = |b: &mut GraphBuilder, id: &str, role: &str| -> Result<NodeId> {
                if let Some((n, _)) = ids.get(id) {
                    return Ok(*n);
                }
                if !spec.create_missing || id.is_empty() {
                    return Err(GraphError::line(
                        &t.path,
                        line,
                        format!("unknown {role} node {id:?}"),
                    ));
                }
                let ty = b.node_type("Entity", "Entity");
                let n = b.add_node(ty, id, id);
                ids.insert(id.to_string(), (n, line));
                Ok(n)
            };
            let src = endpoint(&mut b, get(sc, &rec), "source")?;
            let dst = endpoint(&mut b, get(tc, &rec), "target")?;
            let rel = match b.relation_id(rel_name) {
                Some(r) => r,
                None => b
                    .relation(RelationType {
                        name: rel_name.to_string(),
                        verb: rel_name.to_lowercase().replace('_', " "),
                        abbrev: rel_name.to_string(),
                        source_type: None,
                        target_type: None,
                        directed: true,
                    })
                    .map_err(|m| GraphError::line(&t.path, line, m))?,
            };
            let score = match scc {
                Some(c) if !get(c, &rec).is_empty() => Some(
                    get(c, &rec)
                        .trim()
                        .parse::<f32>()
                        .map_err(|_| GraphError::line(&t.path, line, "score is not a number"))?,
                ),
                _ => None,
            };
            b.add_edge(src, rel, dst, score);
        }
        bar.finish_and_clear();
    }
    Ok(b.build())
}
