//! Question understanding on real askers' wording, on Hetionet: appositions and quotes,
//! a gene's product and pronouns, notes' shorthand, and spoken, second-language and curator
//! wording. Needs ../shared/data (under CI a missing dataset fails the test).
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use common::understand::{answers, gold, graph};

/// Researchers' wording: a description beside the name it describes is one thing (an
/// apposition), "have been" is an auxiliary, a quoted name is that name whatever words it
/// holds, and a word read only as a guess at a name is dropped when the question cannot be
/// read with it.
#[test]
fn appositions_quotes_and_guesses() {
    let Some(g) = graph() else { return };
    let cases = [
        (
            "Which genes does the transcription factor TGIF2LY regulate?",
            "MATCH (:Gene {name: 'TGIF2LY'})-[:REGULATES_GrG]->(x:Gene) RETURN DISTINCT x.id AS id",
        ),
        (
            "Which diseases are associated with GLUL, the glutamine synthetase gene?",
            "MATCH (x:Disease)-[:ASSOCIATES_DaG]->(:Gene {name: 'GLUL'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "Which compounds bind the nuclear receptor RXR-alpha encoded by RXRA?",
            "MATCH (x:Compound)-[:BINDS_CbG]->(:Gene {name: 'RXRA'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "Which diseases have been associated with the gene encoding the histamine H3 receptor, HRH3?",
            "MATCH (x:Disease)-[:ASSOCIATES_DaG]->(:Gene {name: 'HRH3'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "Which genes participate in the pathway 'GTP hydrolysis and joining of the 60S ribosomal subunit'?",
            "MATCH (x:Gene)-[:PARTICIPATES_GpPW]->(:Pathway {name: 'GTP hydrolysis and joining of the 60S ribosomal subunit'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "drugs that decrease col4a1 expression",
            "MATCH (x:Compound)-[:DOWNREGULATES_CdG]->(:Gene {name: 'COL4A1'}) RETURN DISTINCT x.id AS id",
        ),
    ];
    for (q, cypher) in cases {
        let want = gold(&g, cypher);
        assert!(!want.is_empty(), "{cypher}");
        let (got, u) = answers(&g, q);
        assert_eq!(got, want, "{q}: {:?}", u.interpretation);
    }
    // Names joined by "and" stay an intersection.
    let (got, u) = answers(&g, "genes associated with asthma and obesity");
    let want = gold(
        &g,
        "MATCH (:Disease {name: 'asthma'})-[:ASSOCIATES_DaG]->(x:Gene)<-[:ASSOCIATES_DaG]-(:Disease {name: 'obesity'}) RETURN DISTINCT x.id AS id",
    );
    assert_eq!(got, want, "{:?}", u.interpretation);
}

/// A gene and what it makes are the gene; "it" names the one thing named again; "show" is an
/// auxiliary; notes' "ca" is cancer; a class noun after a class name is not the answer.
#[test]
fn encoded_products_pronouns_and_notes_shorthand() {
    let Some(g) = graph() else { return };
    let cases = [
        (
            "Which pathways is the DNA repair protein encoded by BRCA1 involved in?",
            "MATCH (:Gene {name: 'BRCA1'})-[:PARTICIPATES_GpPW]->(x:Pathway) RETURN DISTINCT x.id AS id",
        ),
        (
            "Which diseases are associated with APOE, which encodes a lipid transport protein?",
            "MATCH (x:Disease)-[:ASSOCIATES_DaG]->(:Gene {name: 'APOE'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "Which genes interact with TP53, the gene encoding the tumor suppressor p53?",
            "MATCH (x:Gene)-[:INTERACTS_GiG]-(:Gene {name: 'TP53'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "Which genes are linked to breast cancer and downregulated in it?",
            "MATCH (d:Disease {name: 'breast cancer'})-[:ASSOCIATES_DaG]->(x:Gene), (d)-[:DOWNREGULATES_DdG]->(x) RETURN DISTINCT x.id AS id",
        ),
        (
            "Which anatomical structures show downregulation of BRCA2?",
            "MATCH (x:Anatomy)-[:DOWNREGULATES_AdG]->(:Gene {name: 'BRCA2'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "lung ca: drugs?",
            "MATCH (x:Compound)-[:TREATS_CtD]->(:Disease {name: 'lung cancer'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "Corticosteroid Hormone Receptor Agonists class - meds included?",
            "MATCH (:PharmacologicClass {name: 'Corticosteroid Hormone Receptor Agonists'})-[:INCLUDES_PCiC]->(x:Compound) RETURN DISTINCT x.id AS id",
        ),
    ];
    for (q, cypher) in cases {
        let want = gold(&g, cypher);
        assert!(!want.is_empty(), "{cypher}");
        let (got, u) = answers(&g, q);
        assert_eq!(got, want, "{q}: {:?}", u.interpretation);
    }
    // "it" with two different things named earlier is left alone (nothing to say which).
    let (_, u) = answers(
        &g,
        "Which genes are associated with asthma and obesity and upregulated in it?",
    );
    assert!(
        u.interpretation
            .as_deref()
            .is_some_and(|i| i.contains("asthma") && i.contains("obesity")),
        "{:?}",
        u.interpretation
    );
}

/// Spoken, second-language and curator wording (`understand::wording`, `focus`): fillers, a
/// self-correction, a closing restatement of the answer type, relative "where", request
/// verbs and an output instruction, "show … upregulated", the relief of symptoms spelled out.
#[test]
fn spoken_non_native_and_curator_wording() {
    let Some(g) = graph() else { return };
    let cases = [
        (
            "um so like which drugs treat asthma",
            "MATCH (x:Compound)-[:TREATS_CtD]->(:Disease {name: 'asthma'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "which proteins no wait the genes does metformin bind",
            "MATCH (:Compound {name: 'Metformin'})-[:BINDS_CbG]->(x:Gene) RETURN DISTINCT x.id AS id",
        ),
        (
            "uh where in the body is BRCA2 downregulated like which tissues",
            "MATCH (x:Anatomy)-[:DOWNREGULATES_AdG]->(:Gene {name: 'BRCA2'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "Diseases where EGFR is downregulated?",
            "MATCH (x:Disease)-[:DOWNREGULATES_DdG]->(:Gene {name: 'EGFR'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "Fetch all compounds that treat asthma.",
            "MATCH (x:Compound)-[:TREATS_CtD]->(:Disease {name: 'asthma'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "Return the genes metformin binds. Output field: gene identifier.",
            "MATCH (:Compound {name: 'Metformin'})-[:BINDS_CbG]->(x:Gene) RETURN DISTINCT x.id AS id",
        ),
        (
            "Writing about BRCA2 — which anatomical structures show the gene downregulated?",
            "MATCH (x:Anatomy)-[:DOWNREGULATES_AdG]->(:Gene {name: 'BRCA2'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "what drugs palliate Parkinson's disease, just for relieving the symptoms",
            "MATCH (x:Compound)-[:PALLIATES_CpD]->(:Disease {name: \"Parkinson's disease\"}) RETURN DISTINCT x.id AS id",
        ),
    ];
    for (q, cypher) in cases {
        let want = gold(&g, cypher);
        assert!(!want.is_empty(), "{cypher}");
        let (got, u) = answers(&g, q);
        assert_eq!(got, want, "{q}: {:?}", u.interpretation);
    }
    // A set a statement introduces, referred back to ("those diseases"), in writing and in
    // speech; and a polite indirect request.
    for (q, cypher) in [
        (
            "Metformin is used for certain diseases — would you be able to tell me which genes those diseases are associated with?",
            "MATCH (:Compound {name: 'Metformin'})-[:TREATS_CtD]->(:Disease)-[:ASSOCIATES_DaG]->(x:Gene) RETURN DISTINCT x.id AS id",
        ),
        (
            "um metformin treats some diseases right so where in the body do those diseases localize",
            "MATCH (:Compound {name: 'Metformin'})-[:TREATS_CtD]->(:Disease)-[:LOCALIZES_DlA]->(x:Anatomy) RETURN DISTINCT x.id AS id",
        ),
    ] {
        let want = gold(&g, cypher);
        assert!(!want.is_empty(), "{cypher}");
        let (got, u) = answers(&g, q);
        assert_eq!(got, want, "{q}: {:?}", u.interpretation);
    }
    // Initials after the words they abbreviate, and an aside that only names the link.
    for (q, cypher) in [
        (
            "drugs for amyotrophic lateral sclerosis (ALS)",
            "MATCH (x:Compound)-[:TREATS_CtD]->(:Disease {name: 'amyotrophic lateral sclerosis'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "which genes participate in the pathway Amyotrophic lateral sclerosis (ALS)",
            "MATCH (x:Gene)-[:PARTICIPATES_GpPW]->(:Pathway {name: 'Amyotrophic lateral sclerosis (ALS)'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "Which genes (gene–gene 'interacts') interact with TP53?",
            "MATCH (x:Gene)-[:INTERACTS_GiG]-(:Gene {name: 'TP53'}) WHERE x.name <> 'TP53' RETURN DISTINCT x.id AS id",
        ),
    ] {
        let want = gold(&g, cypher);
        assert!(!want.is_empty(), "{cypher}");
        let (got, u) = answers(&g, q);
        assert_eq!(got, want, "{q}: {:?}", u.interpretation);
    }
    // "like" before a name still means "resembles".
    let (_, u) = answers(&g, "drugs like metformin");
    assert!(
        u.interpretation
            .as_deref()
            .is_some_and(|i| i.contains("resemble")),
        "{:?}",
        u.interpretation
    );
    // "Fetch" is a request, not the gene FECH.
    let (_, u) = answers(&g, "Fetch all compounds that treat asthma.");
    assert!(
        !u.entities.iter().any(|e| e.node.name == "FECH"),
        "{:?}",
        u.entities
    );
}
