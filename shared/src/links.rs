//! The one home of source-database URLs: from a node to its source database page (so a
//! clinician can check a claim at its origin), and back from a questionnaire link to its
//! database and entity. Pure string work (no I/O), shared by server and browser.
//!
//! - [`source_link`]: (type, identifier) → (database, URL).
//! - [`entity_from_link`]: URL → (type, identifier) (the questionnaire's candidates).
//! - [`source_of`]: URL → short source key by host (`drugbank`, `uniprot`, …).
//! - [`source_label`]: URL → the database's display name.

/// The source database page of a node, given its type (display name) and identifier.
pub fn source_link(kind: &str, id: &str) -> Option<(&'static str, String)> {
    let link = match kind {
        "Compound" | "Drug" if id.starts_with("DB") => {
            ("DrugBank", format!("https://go.drugbank.com/drugs/{id}"))
        }
        "Disease" if id.starts_with("DOID:") => (
            "Disease Ontology",
            format!("https://disease-ontology.org/?id={id}"),
        ),
        "Gene" if id.chars().all(|c| c.is_ascii_digit()) && !id.is_empty() => (
            "Entrez Gene",
            format!("https://www.ncbi.nlm.nih.gov/gene/{id}"),
        ),
        "Anatomy" if id.starts_with("UBERON:") => (
            "Uberon",
            format!("http://purl.obolibrary.org/obo/{}", id.replace(':', "_")),
        ),
        "Biological Process" | "Cellular Component" | "Molecular Function"
            if id.starts_with("GO:") =>
        {
            (
                "Gene Ontology",
                format!("https://amigo.geneontology.org/amigo/term/{id}"),
            )
        }
        "Pathway" if id.starts_with("WP") => (
            "WikiPathways",
            format!(
                "https://www.wikipathways.org/pathways/{}",
                id.split('_').next().unwrap_or(id)
            ),
        ),
        "Pathway" if id.starts_with("PC7_") || id.starts_with("PC_") => (
            "Pathway Commons",
            format!("https://www.pathwaycommons.org/search?q={id}"),
        ),
        "Pathway" if id.starts_with("R-HSA") => (
            "Reactome",
            format!("https://reactome.org/content/detail/{id}"),
        ),
        "Side Effect" if id.starts_with('C') => (
            "UMLS (via SIDER)",
            format!("http://sideeffects.embl.de/se/{id}/"),
        ),
        "Symptom" if id.starts_with('D') => (
            "MeSH",
            format!("https://meshb.nlm.nih.gov/record/ui?ui={id}"),
        ),
        "Pharmacologic Class" if id.starts_with('N') => (
            "NDF-RT (via DrugCentral)",
            format!("https://drugcentral.org/?q={id}"),
        ),
        "Protein" => ("UniProt", format!("https://www.uniprot.org/uniprotkb/{id}")),
        _ => return None,
    };
    Some(link)
}

/// (type, identifier) of an entity from its source-database link.
pub fn entity_from_link(link: &str, name: &str) -> (String, String) {
    let after = |marker: &str| link.split_once(marker).map(|(_, r)| r.to_string());
    let first_segment = |s: String| {
        s.split(['/', '?', '#', '&'])
            .next()
            .unwrap_or("")
            .to_string()
    };
    let found = if link.contains("drugbank") {
        after("/drugs/")
            .map(first_segment)
            .map(|id| ("Compound", id))
    } else if link.contains("uniprot.org") {
        after("/uniprotkb/")
            .or_else(|| after("/uniprot/"))
            .map(first_segment)
            .map(|id| ("Protein", id))
    } else if link.contains("genecards.org") {
        after("gene=").map(first_segment).map(|id| ("Gene", id))
    } else if link.contains("reactome.org") {
        link.find("R-HSA-")
            .map(|i| first_segment(link[i..].to_string()))
            .map(|id| ("Pathway", id))
    } else if link.contains("smpdb.ca") {
        after("/view/").map(first_segment).map(|id| ("Pathway", id))
    } else if link.contains("monarchinitiative.org") {
        link.rsplit('/')
            .next()
            .filter(|s| s.starts_with("HP:"))
            .map(|s| ("Phenotype", s.to_string()))
    } else if link.contains("disease-ontology.org") {
        after("id=").map(first_segment).map(|id| ("Disease", id))
    } else if link.contains("hmdb.ca") {
        after("/metabolites/")
            .map(first_segment)
            .map(|id| ("Metabolite", id))
    } else if link.contains("/pfam/") {
        after("/pfam/")
            .map(first_segment)
            .map(|id| ("Protein family", id))
    } else {
        None
    };
    match found {
        Some((k, id)) if !id.is_empty() => (k.to_string(), id),
        _ => ("Entity".to_string(), name.to_string()),
    }
}

/// The link's source, named by host ("drugbank", "uniprot", …).
pub fn source_of(link: &str) -> String {
    let host = link
        .split("://")
        .nth(1)
        .unwrap_or(link)
        .split('/')
        .next()
        .unwrap_or("");
    let host = host.trim_start_matches("www.").trim_start_matches("go.");
    host.split('.').next().unwrap_or("").to_string()
}

/// The database a stored link points to, for its label.
pub fn source_label(url: &str) -> String {
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .split('/')
        .next()
        .unwrap_or("");
    let label = match host {
        h if h.contains("drugbank") => "DrugBank",
        h if h.contains("uniprot") => "UniProt",
        h if h.contains("genecards") => "GeneCards",
        h if h.contains("reactome") => "Reactome",
        h if h.contains("smpdb") => "SMPDB",
        h if h.contains("monarchinitiative") => "Monarch (HPO)",
        h if h.contains("disease-ontology") => "Disease Ontology",
        h if h.contains("hmdb") => "HMDB",
        h if h.contains("ebi.ac.uk") => "InterPro/Pfam",
        h => h,
    };
    label.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_give_types_and_ids() {
        assert_eq!(
            entity_from_link("https://go.drugbank.com/drugs/DB01593", "Zinc"),
            ("Compound".into(), "DB01593".into())
        );
        assert_eq!(
            entity_from_link("https://www.uniprot.org/uniprotkb/P01106/entry", "MYC"),
            ("Protein".into(), "P01106".into())
        );
        assert_eq!(
            entity_from_link(
                "https://www.genecards.org/cgi-bin/carddisp.pl?gene=BOLA2",
                "BOLA2"
            ),
            ("Gene".into(), "BOLA2".into())
        );
        assert_eq!(
            entity_from_link("https://reactome.org/PathwayBrowser/#/R-HSA-110312", "x"),
            ("Pathway".into(), "R-HSA-110312".into())
        );
        assert_eq!(
            entity_from_link("http://smpdb.ca/view/SMP0111853", "x"),
            ("Pathway".into(), "SMP0111853".into())
        );
        assert_eq!(
            entity_from_link("https://disease-ontology.org/?id=DOID:162", "cancer"),
            ("Disease".into(), "DOID:162".into())
        );
        assert_eq!(
            entity_from_link("https://monarchinitiative.org/HP:0002664", "x"),
            ("Phenotype".into(), "HP:0002664".into())
        );
        assert_eq!(
            entity_from_link("https://hmdb.ca/metabolites/HMDB0011649", "x"),
            ("Metabolite".into(), "HMDB0011649".into())
        );
        assert_eq!(
            entity_from_link("https://www.ebi.ac.uk/interpro/entry/pfam/PF00653/", "x"),
            ("Protein family".into(), "PF00653".into())
        );
        assert_eq!(
            entity_from_link("", "Thing"),
            ("Entity".into(), "Thing".into())
        );
    }

    #[test]
    fn links_for_hetionet_kinds() {
        assert_eq!(
            source_link("Compound", "DB00945").unwrap().1,
            "https://go.drugbank.com/drugs/DB00945"
        );
        assert_eq!(
            source_link("Disease", "DOID:10763").unwrap().0,
            "Disease Ontology"
        );
        assert_eq!(
            source_link("Gene", "1017").unwrap().1,
            "https://www.ncbi.nlm.nih.gov/gene/1017"
        );
        assert_eq!(
            source_link("Anatomy", "UBERON:0000002").unwrap().1,
            "http://purl.obolibrary.org/obo/UBERON_0000002"
        );
        assert!(source_link("Gene", "not-a-number").is_none());
        assert!(source_link("Planet", "X").is_none());
    }
}
