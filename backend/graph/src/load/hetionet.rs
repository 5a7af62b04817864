//! Hetionet's own file format: a nodes TSV (`id name kind`, ids like `Compound::DB00188`) and
//! an edges SIF (`source metaedge target`, metaedges abbreviated like `CtD`).
//!
//! Metaedge abbreviations are resolved through `metagraph.json` next to the nodes file when
//! present (the official release ships it), else through Hetionet v1.0's metagraph built in
//! here. Relation types are named as in Hetionet's Neo4j database (`TREATS_CtD`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{label_of, open_input, Lines, LoadOptions};
use crate::error::{GraphError, Result};
use crate::{Graph, GraphBuilder, GraphMeta, RelId, RelationType};

/// The files of one Hetionet release.
#[derive(Clone, Debug)]
pub struct HetionetFiles {
    pub nodes: PathBuf,
    pub edges: PathBuf,
    pub metagraph: Option<PathBuf>,
}

impl HetionetFiles {
    /// The one snapshot-name rule: where the graph built from these files (default filter) is
    /// cached, `<cache dir>/hetionet-<fingerprint of the inputs>.snap`, so any change to an
    /// input file (path, size, modification time) names a new snapshot.
    pub fn snapshot_path(&self) -> PathBuf {
        let mut inputs: Vec<&Path> = vec![&self.nodes, &self.edges];
        if let Some(m) = &self.metagraph {
            inputs.push(m);
        }
        let fp = crate::datadir::fingerprint(&inputs);
        crate::datadir::cache_dir().join(format!("hetionet-{fp:016x}.snap"))
    }

    /// Finds the files in a directory (`hetionet-nodes.tsv[.gz]`, `hetionet-edges.sif[.gz]`).
    pub fn in_dir(dir: &Path) -> Result<Self> {
        let pick = |stem: &str| -> Option<PathBuf> {
            [format!("{stem}.gz"), stem.to_string()]
                .into_iter()
                .map(|n| dir.join(n))
                .find(|p| p.is_file())
        };
        let nodes = pick("hetionet-nodes.tsv")
            .ok_or_else(|| GraphError::file(dir, "no hetionet-nodes.tsv(.gz) in this directory"))?;
        let edges = pick("hetionet-edges.sif")
            .ok_or_else(|| GraphError::file(dir, "no hetionet-edges.sif(.gz) in this directory"))?;
        let metagraph = Some(dir.join("metagraph.json")).filter(|p| p.is_file());
        Ok(HetionetFiles {
            nodes,
            edges,
            metagraph,
        })
    }
}

/// One metaedge: `Compound - treats - Disease`.
#[derive(Clone, Debug, PartialEq)]
pub struct Metaedge {
    pub abbrev: String,
    pub source: String,
    pub target: String,
    pub verb: String,
    pub directed: bool,
}

#[derive(Deserialize)]
struct Metagraph {
    metaedge_tuples: Vec<(String, String, String, String)>,
    kind_to_abbrev: HashMap<String, String>,
}

/// Hetionet v1.0's metagraph: (source, target, verb, direction) and the abbreviations.
const BUILTIN_TUPLES: &[(&str, &str, &str, &str)] = &[
    ("Anatomy", "Gene", "downregulates", "both"),
    ("Anatomy", "Gene", "expresses", "both"),
    ("Anatomy", "Gene", "upregulates", "both"),
    ("Compound", "Compound", "resembles", "both"),
    ("Compound", "Disease", "palliates", "both"),
    ("Compound", "Disease", "treats", "both"),
    ("Compound", "Gene", "binds", "both"),
    ("Compound", "Gene", "downregulates", "both"),
    ("Compound", "Gene", "upregulates", "both"),
    ("Compound", "Side Effect", "causes", "both"),
    ("Disease", "Anatomy", "localizes", "both"),
    ("Disease", "Disease", "resembles", "both"),
    ("Disease", "Gene", "associates", "both"),
    ("Disease", "Gene", "downregulates", "both"),
    ("Disease", "Gene", "upregulates", "both"),
    ("Disease", "Symptom", "presents", "both"),
    ("Gene", "Biological Process", "participates", "both"),
    ("Gene", "Cellular Component", "participates", "both"),
    ("Gene", "Gene", "covaries", "both"),
    ("Gene", "Gene", "interacts", "both"),
    ("Gene", "Gene", "regulates", "forward"),
    ("Gene", "Molecular Function", "participates", "both"),
    ("Gene", "Pathway", "participates", "both"),
    ("Pharmacologic Class", "Compound", "includes", "both"),
];
const BUILTIN_ABBREV: &[(&str, &str)] = &[
    ("Anatomy", "A"),
    ("Biological Process", "BP"),
    ("Cellular Component", "CC"),
    ("Compound", "C"),
    ("Disease", "D"),
    ("Gene", "G"),
    ("Molecular Function", "MF"),
    ("Pathway", "PW"),
    ("Pharmacologic Class", "PC"),
    ("Side Effect", "SE"),
    ("Symptom", "S"),
    ("associates", "a"),
    ("binds", "b"),
    ("causes", "c"),
    ("covaries", "c"),
    ("downregulates", "d"),
    ("expresses", "e"),
    ("includes", "i"),
    ("interacts", "i"),
    ("localizes", "l"),
    ("palliates", "p"),
    ("participates", "p"),
    ("presents", "p"),
    ("regulates", "r"),
    ("resembles", "r"),
    ("treats", "t"),
    ("upregulates", "u"),
];

/// A metaedge as the metagraph lists it: source kind, target kind, relation, direction.
type MetaedgeTuple = (String, String, String, String);

/// Metaedges from a `metagraph.json`, or Hetionet v1.0's when `path` is `None`.
pub fn metaedges(path: Option<&Path>) -> Result<Vec<Metaedge>> {
    let (tuples, abbrev): (Vec<MetaedgeTuple>, HashMap<String, String>) = match path {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| GraphError::file(p, e.to_string()))?;
            let mg: Metagraph = serde_json::from_str(&text)
                .map_err(|e| GraphError::file(p, format!("not a Hetionet metagraph: {e}")))?;
            (mg.metaedge_tuples, mg.kind_to_abbrev)
        }
        None => (
            BUILTIN_TUPLES
                .iter()
                .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()))
                .collect(),
            BUILTIN_ABBREV
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
    };
    let ab = |k: &str| -> Result<String> {
        abbrev
            .get(k)
            .cloned()
            .ok_or_else(|| GraphError::invalid(format!("metagraph has no abbreviation for {k:?}")))
    };
    tuples
        .into_iter()
        .map(|(source, target, verb, dir)| {
            let directed = dir == "forward" || dir == "backward";
            let arrow = match dir.as_str() {
                "forward" => ">",
                "backward" => "<",
                _ => "",
            };
            let abbrev = format!("{}{}{}{}", ab(&source)?, ab(&verb)?, arrow, ab(&target)?);
            Ok(Metaedge {
                abbrev,
                source,
                target,
                verb,
                directed,
            })
        })
        .collect()
}

/// Relation type name as in Hetionet's Neo4j (`TREATS_CtD`, `REGULATES_GrG`).
pub fn relation_name(m: &Metaedge) -> String {
    format!(
        "{}_{}",
        m.verb.to_uppercase(),
        m.abbrev.replace(['>', '<'], "")
    )
}

pub fn load(files: &HetionetFiles, opts: &LoadOptions) -> Result<Graph> {
    let metaedges = metaedges(files.metagraph.as_deref())?;
    let meta = GraphMeta {
        name: "hetionet".into(),
        source: describe_source(files),
        synthetic: false,
        dropped: Vec::new(),
    };
    let mut b = GraphBuilder::new(meta);

    // Nodes.
    let mut ids: HashMap<String, (u32, u64)> = HashMap::new();
    let (reader, bar) = open_input(&files.nodes, "nodes", opts)?;
    let mut lines = Lines::new(&files.nodes, reader);
    let path = files.nodes.clone();
    while let Some((no, line)) = lines.next_line()? {
        if no == 1 {
            if line.split('\t').collect::<Vec<_>>() != ["id", "name", "kind"] {
                return Err(GraphError::line(
                    &path,
                    no,
                    format!("expected the header `id<TAB>name<TAB>kind`, found {line:?}"),
                ));
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [id, name, kind] = cols[..] else {
            return Err(GraphError::line(
                &path,
                no,
                format!(
                    "expected 3 tab-separated columns (id, name, kind), found {}",
                    cols.len()
                ),
            ));
        };
        let Some((prefix, ident)) = id.split_once("::") else {
            return Err(GraphError::line(
                &path,
                no,
                format!("node id {id:?} is not of the form Kind::identifier"),
            ));
        };
        if prefix != kind {
            return Err(GraphError::line(
                &path,
                no,
                format!("node id {id:?} does not match its kind {kind:?}"),
            ));
        }
        if ident.is_empty() || kind.is_empty() {
            return Err(GraphError::line(&path, no, "empty identifier or kind"));
        }
        let t = b.node_type(&label_of(kind), kind);
        let n = b.add_node(t, ident, name);
        if let Some((_, first)) = ids.insert(id.to_string(), (n, no)) {
            return Err(GraphError::line(
                &path,
                no,
                format!("duplicate node id {id:?} (first seen on line {first})"),
            ));
        }
    }
    bar.finish_and_clear();

    // Relation types: one per metaedge, in metagraph order.
    let mut by_abbrev: HashMap<String, RelId> = HashMap::new();
    for m in &metaedges {
        let rel = RelationType {
            name: relation_name(m),
            verb: m.verb.clone(),
            abbrev: m.abbrev.clone(),
            source_type: Some(b.node_type(&label_of(&m.source), &m.source)),
            target_type: Some(b.node_type(&label_of(&m.target), &m.target)),
            directed: m.directed,
        };
        let r = b.relation(rel).map_err(GraphError::invalid)?;
        by_abbrev.insert(m.abbrev.clone(), r);
    }

    // Edges.
    let (reader, bar) = open_input(&files.edges, "edges", opts)?;
    let mut lines = Lines::new(&files.edges, reader);
    let path = files.edges.clone();
    while let Some((no, line)) = lines.next_line()? {
        if no == 1 {
            if line.split('\t').collect::<Vec<_>>() != ["source", "metaedge", "target"] {
                return Err(GraphError::line(
                    &path,
                    no,
                    format!("expected the header `source<TAB>metaedge<TAB>target`, found {line:?}"),
                ));
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let mut it = line.split('\t');
        let (Some(s), Some(me), Some(t), None) = (it.next(), it.next(), it.next(), it.next())
        else {
            return Err(GraphError::line(
                &path,
                no,
                "expected 3 tab-separated columns (source, metaedge, target)",
            ));
        };
        let &rel = by_abbrev.get(me).ok_or_else(|| {
            GraphError::line(
                &path,
                no,
                format!("unknown metaedge {me:?} (not in the metagraph)"),
            )
        })?;
        let (src, _) = *ids
            .get(s)
            .ok_or_else(|| GraphError::line(&path, no, format!("unknown source node {s:?}")))?;
        let (dst, _) = *ids
            .get(t)
            .ok_or_else(|| GraphError::line(&path, no, format!("unknown target node {t:?}")))?;
        let r = &metaedges[rel as usize];
        let (st, tt) = (b.node_type_of(src), b.node_type_of(dst));
        let want = (b.type_id(&r.source), b.type_id(&r.target));
        if want != (Some(st), Some(tt)) && want != (Some(tt), Some(st)) {
            return Err(GraphError::line(
                &path,
                no,
                format!(
                    "metaedge {me} joins {} and {}, but this edge joins {} and {}",
                    r.source,
                    r.target,
                    b.type_label(st),
                    b.type_label(tt)
                ),
            ));
        }
        b.add_edge(src, rel, dst, None);
    }
    bar.finish_and_clear();
    Ok(b.build())
}

/// "Hetionet files N and E in DIR", with DIR resolved: a test run from a crate directory finds the
/// data as `crate/../../../shared/data`, and that string is stored in the snapshot and shown to users.
fn describe_source(files: &HetionetFiles) -> String {
    let name = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let dir = files
        .nodes
        .parent()
        .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf()));
    match dir {
        Some(dir)
            if files
                .edges
                .parent()
                .and_then(|d| std::fs::canonicalize(d).ok())
                .as_deref()
                == Some(dir.as_path()) =>
        {
            format!(
                "Hetionet files {} and {} in {}",
                name(&files.nodes),
                name(&files.edges),
                dir.display()
            )
        }
        _ => format!(
            "Hetionet files {} and {}",
            files.nodes.display(),
            files.edges.display()
        ),
    }
}
