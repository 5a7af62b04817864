//! Neo4j admin-import CSV: node files with `:ID` and `:LABEL` columns, relationship files with
//! `:START_ID`, `:END_ID` and `:TYPE` columns, other columns as typed properties
//! (`name`, `score:float`, `aliases:string[]`…). This is what a Neo4j (e.g. the Clinical
//! Knowledge Graph) export produces.
//!
//! Rules: a node's type is its first label (further labels are kept as the `labels` property);
//! `id:ID` (named) stores the id as property `id`, which becomes the node identifier; ID spaces
//! `:ID(Group)` are honoured; a `score`, `confidence` or `weight` float property on a
//! relationship becomes the edge score.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{label_of, open_input, read_error_message, LoadOptions};
use crate::error::{GraphError, Result};
use crate::{Graph, GraphBuilder, GraphMeta, NodeId, PropValue, RelationType};

#[derive(Clone, Debug, PartialEq)]
enum ColType {
    Str,
    Int,
    Float,
    Bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Col {
    Id {
        prop: Option<String>,
        group: String,
    },
    Label,
    StartId(String),
    EndId(String),
    Type,
    Ignore,
    Prop {
        name: String,
        ty: ColType,
        array: bool,
    },
}

fn parse_header(path: &Path, fields: &csv::StringRecord) -> Result<Vec<Col>> {
    fields
        .iter()
        .map(|f| {
            let (name, spec) = match f.rsplit_once(':') {
                Some((n, s)) => (n.trim(), s.trim()),
                None => (f.trim(), "string"),
            };
            let (kind, group) = match spec.split_once('(') {
                Some((k, g)) => (k, g.trim_end_matches(')').to_string()),
                None => (spec, String::new()),
            };
            let array = kind.ends_with("[]");
            let kind = kind.trim_end_matches("[]").to_ascii_lowercase();
            Ok(match kind.as_str() {
                "id" => Col::Id {
                    prop: (!name.is_empty()).then(|| name.to_string()),
                    group,
                },
                "label" => Col::Label,
                "start_id" => Col::StartId(group),
                "end_id" => Col::EndId(group),
                "type" => Col::Type,
                "ignore" => Col::Ignore,
                "string" | "char" | "" => Col::Prop {
                    name: name.to_string(),
                    ty: ColType::Str,
                    array,
                },
                "int" | "long" | "short" | "byte" => Col::Prop {
                    name: name.to_string(),
                    ty: ColType::Int,
                    array,
                },
                "float" | "double" => Col::Prop {
                    name: name.to_string(),
                    ty: ColType::Float,
                    array,
                },
                "boolean" => Col::Prop {
                    name: name.to_string(),
                    ty: ColType::Bool,
                    array,
                },
                other => {
                    return Err(GraphError::line(
                        path,
                        1,
                        format!("unsupported column type {other:?} in header field {f:?}"),
                    ))
                }
            })
        })
        .collect()
}

fn parse_value(raw: &str, ty: &ColType) -> std::result::Result<PropValue, String> {
    Ok(match ty {
        ColType::Str => PropValue::Str(raw.to_string()),
        ColType::Int => PropValue::Int(
            raw.trim()
                .parse()
                .map_err(|_| format!("{raw:?} is not an integer"))?,
        ),
        ColType::Float => PropValue::Float(
            raw.trim()
                .parse()
                .map_err(|_| format!("{raw:?} is not a number"))?,
        ),
        ColType::Bool => PropValue::Bool(match raw.trim().to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            _ => return Err(format!("{raw:?} is not a boolean")),
        }),
    })
}

fn prop_value(raw: &str, ty: &ColType, array: bool) -> std::result::Result<PropValue, String> {
    if array {
        raw.split(';')
            .filter(|s| !s.is_empty())
            .map(|s| parse_value(s, ty))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(PropValue::List)
    } else {
        parse_value(raw, ty)
    }
}

fn csv_reader(
    path: &Path,
    what: &str,
    opts: &LoadOptions,
    delimiter: u8,
) -> Result<(
    csv::Reader<Box<dyn std::io::BufRead + Send>>,
    indicatif::ProgressBar,
)> {
    let (input, bar) = open_input(path, what, opts)?;
    let rdr = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(true)
        .flexible(false)
        .from_reader(input);
    Ok((rdr, bar))
}

fn csv_error(path: &Path, e: csv::Error) -> GraphError {
    let line = e.position().map(csv::Position::line).unwrap_or(0);
    let msg = match e.kind() {
        csv::ErrorKind::Io(io) => read_error_message(io),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("expected {expected_len} fields, found {len}"),
        csv::ErrorKind::Utf8 { .. } => "not valid UTF-8".to_string(),
        _ => e.to_string(),
    };
    if line > 0 {
        GraphError::line(path, line, msg)
    } else {
        GraphError::file(path, msg)
    }
}

/// Loads node files and relationship files (each with its own header line).
pub fn load(
    node_files: &[PathBuf],
    rel_files: &[PathBuf],
    delimiter: u8,
    opts: &LoadOptions,
) -> Result<Graph> {
    let meta = GraphMeta {
        name: "neo4j-csv".into(),
        source: format!(
            "Neo4j admin-import CSV ({} node files, {} relationship files)",
            node_files.len(),
            rel_files.len()
        ),
        synthetic: false,
        dropped: Vec::new(),
    };
    let mut b = GraphBuilder::new(meta);
    let mut ids: HashMap<(String, String), (NodeId, PathBuf, u64)> = HashMap::new();

    for path in node_files {
        let (mut rdr, bar) = csv_reader(path, "nodes", opts, delimiter)?;
        let header = rdr.headers().map_err(|e| csv_error(path, e))?.clone();
        let cols = parse_header(path, &header)?;
        let id_col = cols.iter().position(|c| matches!(c, Col::Id { .. }));
        let Some(id_col) = id_col else {
            return Err(GraphError::line(path, 1, "a node file needs an :ID column"));
        };
        let Col::Id {
            prop: id_prop,
            group,
        } = cols[id_col].clone()
        else {
            unreachable!()
        };
        let name_col = cols
            .iter()
            .position(|c| matches!(c, Col::Prop { name, .. } if name == "name"));
        let label_col = cols.iter().position(|c| matches!(c, Col::Label));
        for rec in rdr.records() {
            let rec = rec.map_err(|e| csv_error(path, e))?;
            let line = rec.position().map(csv::Position::line).unwrap_or(0);
            let id = rec.get(id_col).unwrap_or("");
            if id.is_empty() {
                return Err(GraphError::line(path, line, "empty :ID"));
            }
            let labels: Vec<&str> = label_col
                .map(|c| {
                    rec.get(c)
                        .unwrap_or("")
                        .split(';')
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            let display = labels.first().copied().unwrap_or("Node");
            let t = b.node_type(&label_of(display), display);
            let name = name_col
                .and_then(|c| rec.get(c))
                .filter(|s| !s.is_empty())
                .unwrap_or(id);
            let n = b.add_node(t, id, name);
            if let Some((_, p0, l0)) =
                ids.insert((group.clone(), id.to_string()), (n, path.clone(), line))
            {
                return Err(GraphError::line(
                    path,
                    line,
                    format!(
                        "duplicate node id {id:?} (first seen at {}:{l0})",
                        p0.display()
                    ),
                ));
            }
            if labels.len() > 1 {
                b.set_node_prop(
                    n,
                    "labels",
                    PropValue::List(
                        labels
                            .iter()
                            .map(|l| PropValue::Str(l.to_string()))
                            .collect(),
                    ),
                );
            }
            for (i, c) in cols.iter().enumerate() {
                if let Col::Prop {
                    name: key,
                    ty,
                    array,
                } = c
                {
                    let raw = rec.get(i).unwrap_or("");
                    if raw.is_empty()
                        || (key == "name" && *ty == ColType::Str)
                        || Some(key) == id_prop.as_ref()
                    {
                        continue;
                    }
                    let v = prop_value(raw, ty, *array)
                        .map_err(|m| GraphError::line(path, line, format!("column {key}: {m}")))?;
                    b.set_node_prop(n, key, v);
                }
            }
        }
        bar.finish_and_clear();
    }

    for path in rel_files {
        let (mut rdr, bar) = csv_reader(path, "relationships", opts, delimiter)?;
        let header = rdr.headers().map_err(|e| csv_error(path, e))?.clone();
        let cols = parse_header(path, &header)?;
        let find = |f: &dyn Fn(&Col) -> bool| cols.iter().position(f);
        let (Some(sc), Some(ec)) = (
            find(&|c| matches!(c, Col::StartId(_))),
            find(&|c| matches!(c, Col::EndId(_))),
        ) else {
            return Err(GraphError::line(
                path,
                1,
                "a relationship file needs :START_ID and :END_ID columns",
            ));
        };
        let Some(tc) = find(&|c| matches!(c, Col::Type)) else {
            return Err(GraphError::line(
                path,
                1,
                "a relationship file needs a :TYPE column",
            ));
        };
        let (Col::StartId(sg), Col::EndId(eg)) = (cols[sc].clone(), cols[ec].clone()) else {
            unreachable!()
        };
        let score_col = cols.iter().position(|c| matches!(c, Col::Prop { name, ty: ColType::Float | ColType::Int, array: false } if ["score", "confidence", "weight"].contains(&name.as_str())));
        for rec in rdr.records() {
            let rec = rec.map_err(|e| csv_error(path, e))?;
            let line = rec.position().map(csv::Position::line).unwrap_or(0);
            let (s, e, ty) = (
                rec.get(sc).unwrap_or(""),
                rec.get(ec).unwrap_or(""),
                rec.get(tc).unwrap_or(""),
            );
            if ty.is_empty() {
                return Err(GraphError::line(path, line, "empty :TYPE"));
            }
            let src = ids
                .get(&(sg.clone(), s.to_string()))
                .map(|x| x.0)
                .ok_or_else(|| GraphError::line(path, line, format!("unknown :START_ID {s:?}")))?;
            let dst = ids
                .get(&(eg.clone(), e.to_string()))
                .map(|x| x.0)
                .ok_or_else(|| GraphError::line(path, line, format!("unknown :END_ID {e:?}")))?;
            let rel = match b.relation_id(ty) {
                Some(r) => r,
                None => b
                    .relation(RelationType {
                        name: ty.to_string(),
                        verb: ty.to_lowercase().replace('_', " "),
                        abbrev: ty.to_string(),
                        source_type: None,
                        target_type: None,
                        directed: true,
                    })
                    .map_err(|m| GraphError::line(path, line, m))?,
            };
            let score = match score_col {
                Some(c) if !rec.get(c).unwrap_or("").is_empty() => Some(
                    rec.get(c)
                        .unwrap_or("")
                        .trim()
                        .parse::<f32>()
                        .map_err(|_| GraphError::line(path, line, "score is not a number"))?,
                ),
                _ => None,
            };
            let ei = b.add_edge(src, rel, dst, score);
            for (i, c) in cols.iter().enumerate() {
                if let Col::Prop {
                    name: key,
                    ty,
                    array,
                } = c
                {
                    let raw = rec.get(i).unwrap_or("");
                    if raw.is_empty() || Some(i) == score_col {
                        continue;
                    }
                    let v = prop_value(raw, ty, *array)
                        .map_err(|m| GraphError::line(path, line, format!("column {key}: {m}")))?;
                    b.set_edge_prop(ei, key, v);
                }
            }
        }
        bar.finish_and_clear();
    }
    Ok(b.build())
}
