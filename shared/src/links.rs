//! Links from a node to its source database, so a clinician can check a claim at its origin.
//! Pure string work (no I/O), shared by server and browser.

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

#[cfg(test)]
mod tests {
    use super::*;

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
