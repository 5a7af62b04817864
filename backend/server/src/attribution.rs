//! Data attributions and licenses that the app and the README must show with the data.
//! Facts from the Hetionet v1.0 release and its sources (see the data README).

use serenqa_graph::Graph;
use serenqa_shared::api::Attribution;

fn a(source: &str, license: &str, covers: &str, non_commercial: bool) -> Attribution {
    Attribution {
        source: source.into(),
        license: license.into(),
        covers: covers.into(),
        non_commercial,
    }
}

pub fn hetionet() -> Vec<Attribution> {
    vec![
        a(
            "Hetionet v1.0 (Himmelstein et al., 2017)",
            "CC0 1.0",
            "the network as a whole",
            false,
        ),
        a(
            "PharmacotherapyDB",
            "CC0 1.0",
            "treats (CtD) and palliates (CpD) edges",
            false,
        ),
        a(
            "MEDLINE co-occurrence",
            "CC0 1.0",
            "DrD, DlA, DpS edges",
            false,
        ),
        a(
            "Disease Ontology, Uberon, Gene Ontology, DrugCentral, LINCS L1000, WikiPathways",
            "CC BY",
            "diseases, anatomy, GO terms, pharmacologic classes, expression signatures, pathways",
            false,
        ),
        a(
            "SIDER 4.1",
            "CC BY-NC-SA 4.0",
            "side effects (CcSE edges)",
            true,
        ),
        a(
            "DrugBank",
            "CC BY-NC 4.0",
            "compound names and part of CbG",
            true,
        ),
        a("DisGeNET", "ODbL", "part of DaG", false),
        a("ERC", "used with permission", "GcG (covaries) edges", false),
        a(
            "Bgee, STARGEO and some interactome sources",
            "no license stated",
            "AdG/AeG/AuG, DdG/DuG, part of GiG",
            false,
        ),
        a(
            "Disease Ontology cross-references, subsumption and synonyms (Schriml et al., Nucleic Acids Research; the DO Slim files Hetionet v1.0 was built from)",
            "CC BY 3.0",
            "Discover's safety flags: side effects (UMLS) joined to diseases (DOIDs)",
            false,
        ),
    ]
}

pub fn for_graph(g: &Graph) -> Vec<Attribution> {
    if g.meta().synthetic {
        vec![a(
            "serenqa synth",
            "generated",
            "SYNTHETIC graph — not real biomedical data",
            false,
        )]
    } else if g.meta().name == "hetionet" {
        hetionet()
    } else {
        vec![a(
            &g.meta().source,
            "see the data source",
            "the loaded graph",
            false,
        )]
    }
}

/// Where the edges of one Hetionet metaedge come from, and under which licence (the
/// per-metaedge provenance of the Hetionet v1.0 release; `../shared/data/hetionet/metaedges.tsv`
/// lists what this project's copy of each metaedge was rebuilt from).
pub fn metaedge_source(abbrev: &str) -> (&'static str, &'static str) {
    match abbrev.replace(['>', '<'], "").as_str() {
        "CtD" | "CpD" => ("PharmacotherapyDB", "CC0 1.0"),
        "DrD" | "DlA" | "DpS" => ("MEDLINE co-occurrence", "CC0 1.0"),
        "CcSE" => ("SIDER 4.1", "CC BY-NC-SA 4.0"),
        "CbG" => (
            "DrugBank, ChEMBL, BindingDB",
            "CC BY-NC 4.0 (DrugBank part)",
        ),
        "CrC" => ("DrugBank structures (chemical similarity)", "CC BY-NC 4.0"),
        "CuG" | "CdG" => ("LINCS L1000", "CC BY"),
        "PCiC" => ("DrugCentral", "CC BY"),
        "DaG" => (
            "GWAS Catalog, DISEASES, DisGeNET, DOAF",
            "ODbL (DisGeNET part)",
        ),
        "DuG" | "DdG" => ("STARGEO", "no license stated"),
        "AeG" | "AuG" | "AdG" => ("Bgee", "no license stated"),
        "GiG" => ("Human interactome sources", "no license stated"),
        "GcG" => (
            "ERC (evolutionary rate covariation)",
            "used with permission",
        ),
        "GrG" => ("LINCS L1000 genetic interference", "CC BY"),
        "GpBP" | "GpCC" | "GpMF" => ("Gene Ontology", "CC BY"),
        "GpPW" => ("Reactome, Pathway Commons, WikiPathways", "CC BY"),
        _ => ("the loaded graph", "see the data source"),
    }
}
