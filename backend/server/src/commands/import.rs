//! `serenqa import`: load a graph from one of the supported sources, apply the subgraph filter,
//! write a snapshot.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use serenqa_graph::filter::{self, FilterReport, FilterSpec};
use serenqa_graph::load::{hetionet, neo4j_csv, table, LoadOptions};
use serenqa_graph::{datadir, Graph};

use crate::rss;

#[derive(Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    source: Source,
    /// Snapshot to write. Default for Hetionet: the cache the other commands read.
    #[arg(long, global = true, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Keep every node and edge type (no subgraph filter).
    #[arg(long, global = true)]
    keep_all: bool,
    /// Drop node types whose label contains this text (repeatable). Default: the paper's list
    /// (user, unit, experiment, project, transcript, publication).
    #[arg(long, global = true, value_name = "TEXT")]
    drop_type: Vec<String>,
    /// Drop relation types whose name contains this text (repeatable). Default: as for types.
    #[arg(long, global = true, value_name = "TEXT")]
    drop_relation: Vec<String>,
}

#[derive(Subcommand)]
enum Source {
    /// Hetionet files (hetionet-nodes.tsv[.gz], hetionet-edges.sif[.gz], metagraph.json).
    Hetionet {
        /// Directory with the files. Default: `hetionet/` in the data directory.
        dir: Option<PathBuf>,
    },
    /// Neo4j admin-import CSV files (:ID, :LABEL, :START_ID, :END_ID, :TYPE headers).
    Neo4jCsv {
        #[arg(long = "nodes", required = true, value_name = "FILE")]
        nodes: Vec<PathBuf>,
        #[arg(long = "relationships", value_name = "FILE")]
        relationships: Vec<PathBuf>,
        #[arg(long, default_value = ",")]
        delimiter: String,
    },
    /// Generic TSV/CSV tables with a column mapping: a column by header name, `#N` by
    /// position, or `=Value` as a constant.
    Table {
        #[arg(long, value_name = "FILE")]
        nodes: Vec<PathBuf>,
        #[arg(long, default_value = "id")]
        node_id: String,
        #[arg(long, default_value = "name")]
        node_name: String,
        #[arg(long, default_value = "kind")]
        node_kind: String,
        #[arg(long, value_name = "FILE")]
        edges: Vec<PathBuf>,
        #[arg(long, default_value = "source")]
        source: String,
        #[arg(long, default_value = "target")]
        target: String,
        #[arg(long, default_value = "relation")]
        relation: String,
        #[arg(long)]
        score: Option<String>,
        /// `tab`, `comma` or a single character.
        #[arg(long, default_value = "tab")]
        delimiter: String,
        #[arg(long)]
        no_header: bool,
        /// Create nodes (type `Entity`) for edge endpoints missing from the node tables.
        #[arg(long)]
        create_missing: bool,
    },
    /// A live Neo4j over Bolt (build with `--features neo4j`).
    Bolt {
        #[arg(long, env = "NEO4J_URI")]
        uri: String,
        #[arg(long, env = "NEO4J_USER", default_value = "neo4j")]
        user: String,
        #[arg(long, env = "NEO4J_PASSWORD", default_value = "")]
        password: String,
    },
}

fn delimiter_byte(s: &str) -> Result<u8> {
    Ok(match s {
        "tab" | "\\t" | "\t" => b'\t',
        "comma" | "," => b',',
        s if s.len() == 1 => s.as_bytes()[0],
        other => bail!("delimiter {other:?}: use tab, comma or a single character"),
    })
}

pub fn run(args: ImportArgs, progress: bool) -> Result<()> {
    let t = Instant::now();
    let opts = LoadOptions { progress };
    let (graph, default_out) = match &args.source {
        Source::Hetionet { dir } => {
            let dir = match dir {
                Some(d) => d.clone(),
                None => datadir::find_dataset("hetionet")
                    .ok_or_else(|| anyhow::anyhow!(datadir::where_to_put("hetionet")))?,
            };
            let files = hetionet::HetionetFiles::in_dir(&dir)?;
            let default_out = if args.out.is_none() && dir_is_default(&dir) {
                Some(crate::graph_source::default_snapshot()?.1)
            } else {
                None
            };
            (hetionet::load(&files, &opts)?, default_out)
        }
        Source::Neo4jCsv {
            nodes,
            relationships,
            delimiter,
        } => (
            neo4j_csv::load(nodes, relationships, delimiter_byte(delimiter)?, &opts)?,
            None,
        ),
        Source::Table {
            nodes,
            node_id,
            node_name,
            node_kind,
            edges,
            source,
            target,
            relation,
            score,
            delimiter,
            no_header,
            create_missing,
        } => {
            let spec = table::TableSpec {
                nodes: nodes
                    .iter()
                    .map(|p| -> Result<table::NodeTable> {
                        Ok(table::NodeTable {
                            path: p.clone(),
                            id: node_id.parse().map_err(anyhow::Error::msg)?,
                            name: Some(node_name.parse().map_err(anyhow::Error::msg)?),
                            kind: node_kind.parse().map_err(anyhow::Error::msg)?,
                        })
                    })
                    .collect::<Result<_>>()?,
                edges: edges
                    .iter()
                    .map(|p| -> Result<table::EdgeTable> {
                        Ok(table::EdgeTable {
                            path: p.clone(),
                            source: source.parse().map_err(anyhow::Error::msg)?,
                            target: target.parse().map_err(anyhow::Error::msg)?,
                            relation: relation.parse().map_err(anyhow::Error::msg)?,
                            score: score
                                .as_deref()
                                .map(str::parse)
                                .transpose()
                                .map_err(anyhow::Error::msg)?,
                        })
                    })
                    .collect::<Result<_>>()?,
                delimiter: delimiter_byte(delimiter)?,
                has_header: !no_header,
                create_missing: *create_missing,
            };
            (table::load(&spec, &opts)?, None)
        }
        Source::Bolt {
            uri,
            user,
            password,
        } => (load_bolt(uri, user, password, progress)?, None),
    };
    let load_time = t.elapsed();
    let spec = if args.keep_all {
        FilterSpec::none()
    } else if args.drop_type.is_empty() && args.drop_relation.is_empty() {
        FilterSpec::default()
    } else {
        FilterSpec {
            drop_node_types: args.drop_type.clone(),
            drop_relations: args.drop_relation.clone(),
        }
    };
    let (graph, report) = filter::apply(graph, &spec);
    print_report(&report);
    let Some(out) = args.out.or(default_out) else {
        bail!("say where to write the snapshot with --out FILE");
    };
    graph.save(&out)?;
    println!(
        "imported {} nodes, {} edges ({} node types, {} relation types) in {:.2?}; snapshot {} ({:.2?} total, peak RSS {})",
        graph.node_count(),
        graph.edge_count(),
        graph.type_count(),
        graph.relation_count(),
        load_time,
        out.display(),
        t.elapsed(),
        rss::peak_rss_bytes().map(rss::human_bytes).unwrap_or_else(|| "n/a".into())
    );
    Ok(())
}

fn dir_is_default(dir: &std::path::Path) -> bool {
    datadir::find_dataset("hetionet").and_then(|d| std::fs::canonicalize(d).ok())
        == std::fs::canonicalize(dir).ok()
}

pub fn print_report(report: &FilterReport) {
    if report.is_empty() {
        println!("subgraph filter: nothing matched, nothing dropped");
        return;
    }
    for (t, c) in &report.node_types {
        println!("subgraph filter: dropped node type {t} ({c} nodes)");
    }
    for (r, c) in &report.relations {
        println!("subgraph filter: dropped relation {r} ({c} edges)");
    }
    if report.dangling_edges > 0 {
        println!(
            "subgraph filter: dropped {} edges touching dropped nodes",
            report.dangling_edges
        );
    }
}

#[cfg(feature = "neo4j")]
fn load_bolt(uri: &str, user: &str, password: &str, progress: bool) -> Result<Graph> {
    Ok(serenqa_graph::load::bolt::load(
        uri,
        user,
        password,
        &LoadOptions { progress },
    )?)
}

#[cfg(not(feature = "neo4j"))]
fn load_bolt(_uri: &str, _user: &str, _password: &str, _progress: bool) -> Result<Graph> {
    bail!("this build has no Neo4j support; rebuild with `cargo build --release --features neo4j`")
}
