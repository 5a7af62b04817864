//! A benchmark directory written by `serenqa-benchmark` (`kgqa.jsonl`, `serendipity.jsonl`,
//! `removed-<strategy>.tsv`, `manifest.json`) loaded against the graph it was built on:
//! answer ids, the per-partition serendipity sets and ground-truth paths, and the removed
//! edges R of each partition as an edge mask (so G = Gc − R is a view, never a copy).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serenqa_benchmark::query::EdgeMask;
use serenqa_benchmark::records::{from_jsonl, KgqaRecord, SerendipityRecord, StrategyEntry};
use serenqa_graph::{Graph, NodeId};

pub use serenqa_shared::results::{partition_title, GROUPS, PARTITIONS};

/// Table 2 pattern groups of a pattern code (`1.1` → one-hop …).
pub fn pattern_group(code: &str) -> &'static str {
    match code.split('.').next() {
        Some("1") => "one_hop",
        Some("2") => "two_hop",
        Some("3") => "multi_hop",
        Some("4") => "intersection",
        _ => "other",
    }
}

pub struct Benchmark {
    pub dir: PathBuf,
    pub kgqa: Vec<KgqaRecord>,
    pub seren: BTreeMap<u32, SerendipityRecord>,
    /// Removed edges per partition key; absent when the file is missing.
    pub removed: BTreeMap<String, EdgeMask>,
    /// xxh3 of all benchmark files, hex.
    pub hash: String,
    /// Removed-edge lines that matched no edge of the graph (a graph/benchmark mismatch).
    pub unmatched_removed: usize,
    /// Who scored the `llm` partition, from the benchmark's manifest: `llm`, `offline proxy`
    /// (graph statistics, not language models), `mixed`, or `unknown` without a manifest.
    pub ensemble: String,
}

/// The `ensemble` of a benchmark manifest's text: its field, else derived from `scorers`.
pub fn ensemble_kind(manifest: Option<&str>) -> String {
    let Some(v) = manifest.and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok()) else {
        return "unknown".into();
    };
    if let Some(e) = v["ensemble"].as_str().filter(|e| !e.is_empty()) {
        return e.to_string();
    }
    let Some(sc) = v["scorers"].as_array().filter(|s| !s.is_empty()) else {
        return "unknown".into();
    };
    let llm = sc
        .iter()
        .filter(|s| s["llm"].as_bool() == Some(true))
        .count();
    match llm {
        0 => "offline proxy".into(),
        n if n == sc.len() => "llm".into(),
        _ => "mixed".into(),
    }
}

impl Benchmark {
    pub fn load(dir: &Path, g: &Graph) -> Result<Benchmark, String> {
        Benchmark::from_files(dir, g, |name: &str| {
            std::fs::read_to_string(dir.join(name))
                .map_err(|e| format!("reading {}: {e}", dir.join(name).display()))
        })
    }

    /// The names of a benchmark directory's files that [`Benchmark::load`] reads (the
    /// `removed-*.tsv` ones may be absent), plus its `manifest.json`.
    pub fn file_names() -> Vec<String> {
        let mut v = vec!["kgqa.jsonl".to_string(), "serendipity.jsonl".to_string()];
        v.extend(PARTITIONS.iter().map(|(k, _)| format!("removed-{k}.tsv")));
        v.push("manifest.json".into());
        v
    }

    /// A benchmark from its files' contents, by name (`read` fails for a missing file); `dir`
    /// is only a label. Used by queue workers, which get the files from Redis.
    pub fn from_files(
        dir: &Path,
        g: &Graph,
        read: impl Fn(&str) -> Result<String, String>,
    ) -> Result<Benchmark, String> {
        let kg_text = read("kgqa.jsonl")?;
        let se_text = read("serendipity.jsonl")?;
        let kgqa: Vec<KgqaRecord> = from_jsonl(&kg_text, "kgqa.jsonl")?;
        let seren_list: Vec<SerendipityRecord> = from_jsonl(&se_text, "serendipity.jsonl")?;
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(kg_text.as_bytes());
        h.update(se_text.as_bytes());
        let mut removed = BTreeMap::new();
        let mut unmatched = 0;
        for (key, _) in PARTITIONS {
            let Ok(text) = read(&format!("removed-{key}.tsv")) else {
                continue;
            };
            h.update(key.as_bytes());
            h.update(text.as_bytes());
            let mut mask = EdgeMask::new(g.edge_count());
            for line in text.lines().skip(1) {
                let mut parts = line.split('\t');
                let (Some(s), Some(r), Some(t)) = (parts.next(), parts.next(), parts.next()) else {
                    continue;
                };
                let found = match (g.find_by_key(s), g.relation_id(r), g.find_by_key(t)) {
                    (Some(s), Some(r), Some(t)) => {
                        let mut any = false;
                        for e in g.edges(s, serenqa_graph::Direction::Out) {
                            if e.rel == r && e.target == t {
                                mask.insert(e.id);
                                any = true;
                            }
                        }
                        any
                    }
                    _ => false,
                };
                if !found {
                    unmatched += 1;
                }
            }
            removed.insert(key.to_string(), mask);
        }
        let seren = seren_list.into_iter().map(|r| (r.qid, r)).collect();
        // Not part of the hash: the manifest only labels the partition.
        let ensemble = ensemble_kind(read("manifest.json").ok().as_deref());
        Ok(Benchmark {
            dir: dir.to_path_buf(),
            kgqa,
            seren,
            removed,
            hash: format!("{:016x}", h.digest()),
            unmatched_removed: unmatched,
            ensemble,
        })
    }

    /// The entry of question `qid` under partition `key`.
    pub fn entry(&self, qid: u32, key: &str) -> Option<&StrategyEntry> {
        let r = self.seren.get(&qid)?;
        match key {
            "llm" => r.llm.as_ref(),
            "expert" => r.expert.as_ref(),
            "sscore" => r.sscore.as_ref(),
            _ => None,
        }
    }

    /// Partitions present in the benchmark (some question has an entry).
    pub fn available_partitions(&self) -> Vec<&'static str> {
        PARTITIONS
            .iter()
            .map(|(k, _)| *k)
            .filter(|k| self.seren.keys().any(|&q| self.entry(q, k).is_some()))
            .collect()
    }

    /// A training question with ground-truth paths under `key`, for one-shot guidance.
    pub fn one_shot(&self, key: &str) -> Option<(&KgqaRecord, &StrategyEntry)> {
        self.kgqa
            .iter()
            .filter(|r| r.partition == "train")
            .filter_map(|r| Some((r, self.entry(r.qid, key)?)))
            .find(|(_, e)| !e.explore_queries.paths.is_empty())
    }
}

/// Resolves record ids (bare identifiers of a known type) to nodes.
pub fn resolve_ids(g: &Graph, ids: &[String], type_label: Option<&str>) -> Vec<NodeId> {
    let mut out = Vec::new();
    for id in ids {
        let cands = g.find_by_ident(id);
        let pick = cands
            .iter()
            .copied()
            .find(|&n| type_label.is_none_or(|t| g.type_label(g.node_type(n)) == t))
            .or(cands.first().copied());
        if let Some(n) = pick {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// (source id, target id) of a ground-truth path string `ID--REL--Name:Type--…--ID`.
pub fn path_ends(path: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = path.split("--").collect();
    if parts.len() < 3 {
        return None;
    }
    Some((
        parts[0].trim().to_string(),
        parts[parts.len() - 1].trim().to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn path_ends_and_groups() {
        assert_eq!(
            path_ends("DB1--CtD--Asthma:Disease--DrD--DOID:2"),
            Some(("DB1".into(), "DOID:2".into()))
        );
        assert_eq!(
            path_ends("DB1--CtD--DOID:2"),
            Some(("DB1".into(), "DOID:2".into()))
        );
        assert_eq!(path_ends("DB1"), None);
        assert_eq!(pattern_group("3.2"), "multi_hop");
        assert_eq!(pattern_group("4.1"), "intersection");
    }
}
