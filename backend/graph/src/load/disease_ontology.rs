//! The Disease Ontology extension files beside Hetionet (`<data>/disease-ontology/`): for each
//! DO Slim disease, the UMLS CUIs among its cross-references (propagated from every term it
//! subsumes) and the names and synonyms of it and its subsumed terms.
//!
//! They join Hetionet's side effects (identified by UMLS CUIs, from SIDER) to its diseases
//! (identified by DOIDs): the clinician's safety flags read them (`serenqa_model::safety`).
//! Disease Ontology content is CC BY 3.0 (Schriml et al., Nucleic Acids Research); the app
//! attributes it where flags are shown.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{open_input, Lines, LoadOptions};
use crate::error::{GraphError, Result};

/// What the three files say of each slim disease (keys are `DOID:…`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiseaseOntology {
    /// UMLS CUIs cross-referenced by the disease or a term it subsumes, sorted.
    pub umls: BTreeMap<String, Vec<String>>,
    /// Names and exact synonyms of the disease and of every term it subsumes, sorted.
    pub names: BTreeMap<String, Vec<String>>,
    /// Every DO term's own name (first) and exact synonyms, keyed by its DOID: what a
    /// question may call a disease the graph does not hold ("cystic fibrosis").
    pub terms: BTreeMap<String, Vec<String>>,
    /// The slim diseases that subsume a term, nearest first (by DO's minimal distance).
    pub within: BTreeMap<String, Vec<String>>,
}

/// The files, in `dir`.
pub const XREFS: &str = "xrefs-prop-slim.tsv";
pub const SUBSUMED: &str = "slim-terms-prop.tsv";
pub const NAMES: &str = "term-names.tsv";

/// Reads a TSV with the expected header, calling `row` with each line's fields.
fn read_tsv(
    path: &Path,
    header: &[&str],
    row: &mut dyn FnMut(u64, &[&str]) -> Result<()>,
) -> Result<()> {
    let (reader, bar) = open_input(path, "disease ontology", &LoadOptions::default())?;
    let mut lines = Lines::new(path, reader);
    let Some((_, first)) = lines.next_line()? else {
        return Err(GraphError::file(
            path,
            "empty file (expected a header line)",
        ));
    };
    let got: Vec<&str> = first.split('\t').collect();
    if got.len() < header.len() || got[..header.len()] != *header {
        return Err(GraphError::line(
            path,
            1,
            format!("expected the header `{}`", header.join("\\t")),
        ));
    }
    while let Some((n, line)) = lines.next_line()? {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < header.len() {
            return Err(GraphError::line(
                path,
                n,
                format!("{} fields, expected {}", f.len(), header.len()),
            ));
        }
        row(n, &f)?;
    }
    bar.finish_and_clear();
    Ok(())
}

impl DiseaseOntology {
    /// Reads the three files in `dir`.
    pub fn load(dir: &Path) -> Result<DiseaseOntology> {
        let mut umls: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        read_tsv(
            &dir.join(XREFS),
            &["doid_code", "doid_name", "resource", "resource_id"],
            &mut |_, f| {
                if f[2] == "UMLS" && !f[3].is_empty() {
                    umls.entry(f[0].to_string())
                        .or_default()
                        .insert(f[3].to_string());
                }
                Ok(())
            },
        )?;
        // slim → the terms it subsumes (itself included), with their names.
        let mut subsumed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut names: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut within: BTreeMap<String, Vec<(u32, String)>> = BTreeMap::new();
        read_tsv(
            &dir.join(SUBSUMED),
            &["slim_id", "slim_name", "subsumed_id", "subsumed_name"],
            &mut |_, f| {
                // The distance column is optional; without it terms keep the file's order.
                let d = f.get(4).and_then(|x| x.parse().ok()).unwrap_or(u32::MAX);
                within
                    .entry(f[2].to_string())
                    .or_default()
                    .push((d, f[0].to_string()));
                subsumed
                    .entry(f[0].to_string())
                    .or_default()
                    .insert(f[2].to_string());
                let n = names.entry(f[0].to_string()).or_default();
                n.insert(f[1].to_string());
                n.insert(f[3].to_string());
                Ok(())
            },
        )?;
        let mut term_names: BTreeMap<String, Vec<String>> = BTreeMap::new();
        read_tsv(&dir.join(NAMES), &["doid", "name", "type"], &mut |_, f| {
            if f[2] == "name" || f[2] == "exact-synonym" {
                let v = term_names.entry(f[0].to_string()).or_default();
                if v.iter().any(|x| x == f[1]) {
                    return Ok(());
                }
                // The term's own name first.
                if f[2] == "name" {
                    v.insert(0, f[1].to_string());
                } else {
                    v.push(f[1].to_string());
                }
            }
            Ok(())
        })?;
        for (slim, terms) in &subsumed {
            let n = names.entry(slim.clone()).or_default();
            for t in terms {
                if let Some(v) = term_names.get(t) {
                    n.extend(v.iter().cloned());
                }
            }
        }
        Ok(DiseaseOntology {
            umls: umls
                .into_iter()
                .map(|(k, v)| (k, v.into_iter().collect()))
                .collect(),
            names: names
                .into_iter()
                .map(|(k, v)| (k, v.into_iter().collect()))
                .collect(),
            terms: term_names,
            within: within
                .into_iter()
                .map(|(k, mut v)| {
                    v.sort();
                    (k, v.into_iter().map(|x| x.1).collect())
                })
                .collect(),
        })
    }

    /// The files in the data directory (`datadir::find_dataset("disease-ontology")`), or
    /// `None` when that directory is absent.
    pub fn find() -> Option<Result<DiseaseOntology>> {
        crate::datadir::find_dataset("disease-ontology").map(|d| DiseaseOntology::load(&d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cuis_and_names_through_subsumption() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(XREFS),
            "doid_code\tdoid_name\tresource\tresource_id\nDOID:1\tlung disease\tUMLS\tC0001\nDOID:1\tlung disease\tMESH\tD1\nDOID:1\tlung disease\tUMLS\tC0002\n",
        )
        .expect("write");
        std::fs::write(
            dir.path().join(SUBSUMED),
            "slim_id\tslim_name\tsubsumed_id\tsubsumed_name\tmin_distance\nDOID:1\tlung disease\tDOID:1\tlung disease\t0\nDOID:1\tlung disease\tDOID:2\tpulmonary fibrosis\t1\n",
        )
        .expect("write");
        std::fs::write(
            dir.path().join(NAMES),
            "doid\tname\ttype\nDOID:2\tpulmonary fibrosis\tname\nDOID:2\tlung fibrosis\texact-synonym\nDOID:2\tfibroid lung\trelated-synonym\n",
        )
        .expect("write");
        let d = DiseaseOntology::load(dir.path()).expect("load");
        assert_eq!(d.umls["DOID:1"], vec!["C0001", "C0002"]);
        assert_eq!(
            d.names["DOID:1"],
            vec!["lung disease", "lung fibrosis", "pulmonary fibrosis"]
        );
        // Each term's own names (the name first, related synonyms left out) and its slims.
        assert_eq!(
            d.terms["DOID:2"],
            vec!["pulmonary fibrosis", "lung fibrosis"]
        );
        assert_eq!(d.within["DOID:2"], vec!["DOID:1"]);
        assert_eq!(d.within["DOID:1"], vec!["DOID:1"]);
        // A bad header names the file and the line.
        std::fs::write(dir.path().join(NAMES), "id\tname\n").expect("write");
        let e = DiseaseOntology::load(dir.path()).expect_err("bad header");
        assert!(e.to_string().contains("term-names.tsv:1:"), "{e}");
    }
}
