//! Question understanding on Hetionet: lexicon errors, entity linking of misspelt names,
//! "did you mean", the nothing-understood reply, and everyday questions answered through
//! `ask`. Needs ../shared/data (under CI a missing dataset fails the test).
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use serenqa_graph::Graph;
use serenqa_pipeline::ask::{ask, AskContext, AskRequest};
use serenqa_pipeline::llm::ModelsFile;
use serenqa_pipeline::offline::understand::{LexiconFile, Match, Understander, HETIONET_LEXICON};

use common::understand::{answers, gold, graph, retriever};

#[test]
fn lexicon_errors_name_the_line() {
    let Some(g) = graph() else { return };
    let bad = "# comment\ntype\tCompound\tdrug\nrel\tCxD\ttreat\n";
    let e = LexiconFile::parse(bad, "bad.tsv", &g).unwrap_err();
    assert!(
        e.starts_with("bad.tsv line 3: unknown metaedge 'CxD'"),
        "{e}"
    );
    let e = LexiconFile::parse("type\tCompound\n", "x.tsv", &g).unwrap_err();
    assert!(e.starts_with("x.tsv line 1: 'type' takes 3"), "{e}");
    let e = LexiconFile::parse(
        "type\tCompound\tdrug\nrel\tCtD\ttreat\nfrobnicate\tx\n",
        "y.tsv",
        &g,
    )
    .unwrap_err();
    assert!(
        e.starts_with("y.tsv line 3: unknown entry kind 'frobnicate'"),
        "{e}"
    );
    let e = LexiconFile::parse("type\tWidget\tdrug\n", "z.tsv", &g).unwrap_err();
    assert!(e.contains("line 1: unknown node type 'Widget'"), "{e}");
    // The shipped lexicon loads, also from its path.
    LexiconFile::parse(HETIONET_LEXICON, "hetionet.tsv", &g).expect("compiled-in lexicon");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("lexicon/hetionet.tsv");
    LexiconFile::load(&path, &g).expect("lexicon file");
    let e = LexiconFile::load(std::path::Path::new("/nonexistent/lexicon.tsv"), &g).unwrap_err();
    assert!(e.contains("/nonexistent/lexicon.tsv"), "{e}");
}

fn linked(g: &Graph, u: &Understander, q: &str) -> Vec<(String, Match)> {
    let x = u.understand(g, q);
    let Some(ch) = x.chosen.first() else {
        return vec![];
    };
    ch.iter()
        .map(|&(m, n)| {
            (
                g.name(n).to_string(),
                x.mentions[m]
                    .candidates
                    .iter()
                    .find(|c| c.node == n)
                    .map(|c| c.how)
                    .unwrap_or(Match::Exact),
            )
        })
        .collect()
}

#[test]
fn misspelt_names_are_linked() {
    let Some(g) = graph() else { return };
    let u = retriever(&g).understander.as_ref().expect("understander");
    assert_eq!(
        linked(&g, u, "which drugs treat asthmma"),
        vec![("asthma".to_string(), Match::Fuzzy)]
    );
    assert_eq!(
        linked(&g, u, "drugs for alzheimers desease"),
        vec![("Alzheimer's disease".to_string(), Match::Fuzzy)]
    );
    assert_eq!(
        linked(&g, u, "what treats parkinsons"),
        vec![("Parkinson's disease".to_string(), Match::Prefix)]
    );
    assert_eq!(
        linked(&g, u, "Which drugs treat Parkinson's disease?"),
        vec![("Parkinson's disease".to_string(), Match::Exact)]
    );
    assert_eq!(
        linked(&g, u, "medications for multiple sclerosis"),
        vec![("multiple sclerosis".to_string(), Match::Exact)]
    );
}

#[test]
fn ambiguous_name_offers_did_you_mean() {
    let Some(g) = graph() else { return };
    let (_, u) = answers(&g, "which drugs treat diabetes");
    let names: Vec<&str> = u
        .did_you_mean
        .iter()
        .map(|d| d.node.name.as_str())
        .collect();
    assert!(!u.entities.is_empty(), "{u:?}");
    assert_eq!(u.entities[0].node.kind, "Disease", "{u:?}");
    assert!(u.entities[0].node.name.contains("diabetes"), "{u:?}");
    assert!(
        names.len() >= 2 && names.iter().all(|n| n.contains("diabetes")),
        "{u:?}"
    );
    assert!(u.did_you_mean.len() <= 3);
    assert!(
        u.did_you_mean
            .iter()
            .all(|d| d.question.contains(&d.node.name)),
        "{u:?}"
    );
}

#[test]
fn nothing_understood_says_so_with_examples() {
    let Some(g) = graph() else { return };
    let (a, u) = answers(&g, "how is the weather in zqxv today");
    assert!(a.is_empty());
    assert!(u.interpretation.is_none());
    let m = u.not_understood.expect("a message");
    assert!(m.contains("zqxv"), "{m}");
    assert_eq!(u.examples.len(), 3);
    // The examples themselves are understood and answered.
    for q in &u.examples {
        let (a, u) = answers(&g, q);
        assert!(!a.is_empty() && u.interpretation.is_some(), "{q}: {u:?}");
    }
}

#[test]
fn everyday_questions_get_the_right_answers() {
    let Some(g) = graph() else { return };
    let ms = gold(
        &g,
        "MATCH (c:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:2377'}) RETURN c.id",
    );
    let asthma = gold(
        &g,
        "MATCH (c:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:2841'}) RETURN c.id",
    );
    let metformin = gold(
        &g,
        "MATCH (:Compound {id: 'DB00331'})-[:BINDS_CbG]->(x:Gene) RETURN x.id",
    );
    assert!(!ms.is_empty() && !asthma.is_empty() && !metformin.is_empty());
    for (q, want, interp) in [
        (
            "Which drugs treat multiple sclerosis?",
            &ms,
            "Drugs that treat multiple sclerosis",
        ),
        (
            "which drugs treat multiple sclerosis",
            &ms,
            "Drugs that treat multiple sclerosis",
        ),
        (
            "medications for multiple sclerossis",
            &ms,
            "Drugs that treat multiple sclerosis",
        ),
        (
            "Which drugs treat asthma?",
            &asthma,
            "Drugs that treat asthma",
        ),
        (
            "what medicines are used for asthmma",
            &asthma,
            "Drugs that treat asthma",
        ),
        (
            "What genes does metformin bind?",
            &metformin,
            "Genes that are bound by Metformin",
        ),
        (
            "what genes does metfromin bind",
            &metformin,
            "Genes that are bound by Metformin",
        ),
        (
            "targets of metformin",
            &metformin,
            "Genes that are bound by Metformin",
        ),
    ] {
        let (a, u) = answers(&g, q);
        assert_eq!(&a, want, "{q}: {u:?}");
        assert_eq!(u.interpretation.as_deref(), Some(interp), "{q}");
    }
    let (a, u) = answers(
        &g,
        "What drugs could be repurposed for idiopathic pulmonary fibrosis?",
    );
    assert!(!a.is_empty(), "{u:?}");
    assert!(
        u.entities
            .iter()
            .any(|e| e.node.name == "idiopathic pulmonary fibrosis"),
        "{u:?}"
    );
}

#[test]
fn ask_reports_the_interpretation() {
    let Some(g) = graph() else { return };
    let ctx = AskContext::new(g.clone(), None, ModelsFile::default(), None).expect("context");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let r = rt
        .block_on(ask(
            &ctx,
            &AskRequest {
                question: "Which drugs treat multiple sclerosis?".into(),
                ..Default::default()
            },
        ))
        .expect("ask");
    assert!(r.cypher.is_some() && !r.answers.is_empty(), "{r:?}");
    assert_eq!(
        r.understood.interpretation.as_deref(),
        Some("Drugs that treat multiple sclerosis")
    );
    assert_eq!(r.understood.entities.len(), 1);
    assert_eq!(r.understood.entities[0].node.name, "multiple sclerosis");
    let r = rt
        .block_on(ask(
            &ctx,
            &AskRequest {
                question: "zqxv blorf".into(),
                ..Default::default()
            },
        ))
        .expect("ask");
    assert!(
        r.answers.is_empty()
            && r.understood.not_understood.is_some()
            && r.understood.examples.len() == 3,
        "{r:?}"
    );
}

/// Names after "besides", "other than", "except" … are left out of the answers, never joined
/// to them (before, "metformin … besides diabetes" asked for the diseases like diabetes).
#[test]
fn exceptions_leave_answers_out() {
    let Some(g) = graph() else { return };
    let (a, u) = answers(&g, "Is metformin useful for anything besides diabetes?");
    let want = gold(
        &g,
        "MATCH (:Compound {id: 'DB00331'})-[:TREATS_CtD]->(x:Disease) WHERE NOT x.name CONTAINS 'diabetes' RETURN x.id",
    );
    assert!(!want.is_empty());
    assert_eq!(a, want, "{u:?}");
    let i = u.interpretation.clone().unwrap_or_default();
    assert!(
        i.starts_with("Diseases that are treated by Metformin, other than ")
            && i.contains("type 2 diabetes mellitus")
            && i.contains("type 1 diabetes mellitus"),
        "{i}"
    );
    // Every diabetes is left out, so none is offered as "did you mean"; the names say so.
    assert!(u.did_you_mean.is_empty(), "{u:?}");
    assert!(
        u.entities
            .iter()
            .all(|e| e.left_out == e.node.name.contains("diabetes")),
        "{u:?}"
    );
    // Several names, before or after the answer's noun.
    for (q, cypher) in [
        (
            "genes associated with breast cancer except BRCA1 and BRCA2",
            "MATCH (:Disease {id: 'DOID:1612'})-[:ASSOCIATES_DaG]->(x:Gene) WHERE NOT x.name IN ['BRCA1', 'BRCA2'] RETURN x.id",
        ),
        (
            "apart from valproic acid, which drugs treat epilepsy?",
            "MATCH (x:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:1826'}) WHERE x.id <> 'DB00313' RETURN x.id",
        ),
    ] {
        let (a, u) = answers(&g, q);
        assert_eq!(a, gold(&g, cypher), "{q}: {u:?}");
    }
    // A name of another type leaves out what is joined to it: the drugs of a class.
    let (a, u) = answers(&g, "drugs for asthma other than corticosteroids");
    let all = gold(
        &g,
        "MATCH (x:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:2841'}) RETURN x.id",
    );
    let in_class = gold(
        &g,
        "MATCH (x:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:2841'}), (x)<-[:INCLUDES_PCiC]-(p:PharmacologicClass) WHERE p.name CONTAINS 'Corticosteroid' RETURN x.id",
    );
    assert!(!in_class.is_empty());
    let want: Vec<String> = all.into_iter().filter(|x| !in_class.contains(x)).collect();
    assert_eq!(a, want, "{u:?}");
    assert!(
        u.interpretation
            .as_deref()
            .is_some_and(|i| i.contains(", except those that")),
        "{u:?}"
    );
    // A negated relation leaves out what it joins (before: "… and cause Drowsiness").
    let (a, u) = answers(&g, "asthma drugs that do not cause drowsiness");
    let want = gold(
        &g,
        "MATCH (x:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:2841'}) WHERE NOT (x)-[:CAUSES_CcSE]->(:SideEffect {name: 'Drowsiness'}) RETURN x.id",
    );
    assert!(!want.is_empty());
    assert_eq!(a, want, "{u:?}");
    assert_eq!(
        u.interpretation.as_deref(),
        Some("Drugs that treat asthma, except those that cause Drowsiness")
    );
    // Yes/no questions: the asked-about node when the graph holds the link, and the answer
    // in words; a "no" names the link the graph does hold instead, if any.
    let (a, u) = answers(&g, "Does metformin treat polycystic ovary syndrome?");
    assert_eq!(a, vec!["DOID:11612".to_string()], "{u:?}");
    assert_eq!(
        u.interpretation.as_deref(),
        Some("Is polycystic ovary syndrome among the diseases that are treated by Metformin? Yes.")
    );
    let (a, u) = answers(&g, "does prednisone treat migraine");
    assert!(a.is_empty(), "{u:?}");
    let i = u.interpretation.unwrap_or_default();
    assert!(
        i.starts_with("Is migraine among the diseases that are treated by Prednisone? No: ")
            && i.contains("But migraine is among the diseases that are palliated by Prednisone."),
        "{i}"
    );
    // "how many" counts nothing and links nothing.
    let (a, u) = answers(&g, "how many genes are associated with asthma");
    let want = gold(
        &g,
        "MATCH (:Disease {id: 'DOID:2841'})-[:ASSOCIATES_DaG]->(x:Gene) RETURN x.id",
    );
    assert_eq!(a, want, "{u:?}");
}

/// The readings added for three-hop, branching, cyclic and bridged questions: each phrasing
/// must give exactly the answers of its hand-written query.
#[test]
fn deeper_patterns_get_the_right_answers() {
    let Some(g) = graph() else { return };
    let cases = [
        // abbreviation (lexicon alias) in a three-way intersection
        ("genes associated with asthma, COPD and allergic rhinitis", "MATCH (x:Gene), (:Disease {id: 'DOID:2841'})-[:ASSOCIATES_DaG]->(x), (:Disease {id: 'DOID:3083'})-[:ASSOCIATES_DaG]->(x), (:Disease {id: 'DOID:4481'})-[:ASSOCIATES_DaG]->(x) RETURN DISTINCT x.id AS id"),
        // a verb followed by a type noun opens a chain; the same name twice closes a cycle
        ("drugs for hypertension that bind genes associated with hypertension", "MATCH (x:Compound)-[:TREATS_CtD]->(e:Disease {id: 'DOID:10763'}), (x)-[:BINDS_CbG]->(:Gene)<-[:ASSOCIATES_DaG]-(e) RETURN DISTINCT x.id AS id"),
        // a name qualifying the noun after it ("obesity genes")
        ("genes associated with obesity that interact with other obesity genes", "MATCH (e:Disease {id: 'DOID:9970'})-[:ASSOCIATES_DaG]->(x:Gene), (x)-[:INTERACTS_GiG]-(:Gene)<-[:ASSOCIATES_DaG]-(e) RETURN DISTINCT x.id AS id"),
        // two type nouns in a row: a chain by the pair relation
        ("pathways of genes associated with obesity", "MATCH (:Disease {id: 'DOID:9970'})-[:ASSOCIATES_DaG]->(:Gene)-[:PARTICIPATES_GpPW]->(x:Pathway) RETURN DISTINCT x.id AS id"),
        // bridging through the type a relation wants (class → its drugs)
        ("side effects of benzodiazepines", "MATCH (:PharmacologicClass {id: 'N0000007542'})-[:INCLUDES_PCiC]->(:Compound)-[:CAUSES_CcSE]->(x:SideEffect) RETURN DISTINCT x.id AS id"),
        ("which drug classes treat epilepsy", "MATCH (x:PharmacologicClass)-[:INCLUDES_PCiC]->(:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:1826'}) RETURN DISTINCT x.id AS id"),
        // a type noun right after a name restricts the name to that type
        ("genes upregulated in heart tissue", "MATCH (:Anatomy {id: 'UBERON:0000948'})-[:UPREGULATES_AuG]->(x:Gene) RETURN DISTINCT x.id AS id"),
        // "share … with": through a shared neighbour
        ("diseases that share genes with gout", "MATCH (:Disease {id: 'DOID:13189'})-[:ASSOCIATES_DaG]->(:Gene)<-[:ASSOCIATES_DaG]-(x:Disease) WHERE x.id <> 'DOID:13189' RETURN DISTINCT x.id AS id"),
        // a same-type relation whose subject is the name: TP53 regulates the answers
        ("which genes does TP53 regulate", "MATCH (:Gene {id: '7157'})-[:REGULATES_GrG]->(x:Gene) WHERE x.id <> '7157' RETURN DISTINCT x.id AS id"),
    ];
    for (q, c) in cases {
        let (mut got, u) = answers(&g, q);
        let mut want = gold(&g, c);
        got.sort();
        want.sort();
        assert!(!want.is_empty(), "{q}: the gold query is empty");
        assert_eq!(got, want, "{q}: understood as {:?}", u.interpretation);
    }
}

#[test]
fn an_alias_to_a_missing_name_is_skipped_with_a_warning_naming_its_line() {
    let Some(g) = graph() else { return };
    let lex = LexiconFile::parse("type\tDisease\tdisease\nrel\tDrD\tresemble\nalias\tDisease\tzzd\tno such disease\nalias\tDisease\tcopd\tchronic obstructive pulmonary disease\n", "t.tsv", &g).expect("parses");
    let u = Understander::with_lexicon(&g, lex).expect("a missing alias target is not fatal");
    assert_eq!(u.warnings.len(), 1, "{:?}", u.warnings);
    assert!(
        u.warnings[0].contains("line 3") && u.warnings[0].contains("zzd"),
        "{:?}",
        u.warnings
    );
    let copd = u.suggest(&g, "COPD", 3);
    assert_eq!(
        copd.first().map(|(n, m)| (g.ident(*n), *m)),
        Some(("DOID:3083", Match::Exact))
    );
}

#[test]
fn search_suggestions_fold_apostrophes_and_forgive_misspellings() {
    let Some(g) = graph() else { return };
    let u = retriever(&g).understander.as_ref().expect("understander");
    let first = |q: &str| {
        u.suggest(&g, q, 5)
            .first()
            .map(|(n, _)| g.name(*n).to_string())
    };
    assert_eq!(first("alzheimers").as_deref(), Some("Alzheimer's disease"));
    assert_eq!(first("asprin").as_deref(), Some("Acetylsalicylic acid"));
    assert_eq!(first("parkinsons").as_deref(), Some("Parkinson's disease"));
}

/// A treatment asked for something the graph holds only as a side effect or a symptom is
/// refused with the reason and the question it can answer — never answered with the drugs
/// that cause it; lay organ words reach the graph's names; words that all sit in one name
/// are that name.
#[test]
fn links_the_graph_never_holds_are_refused_and_lay_words_reach_names() {
    let Some(g) = graph() else { return };
    for q in [
        "which drugs treat tuberculosis",
        "drugs for insomnia",
        "anxiety medications",
        "what treats atrial fibrillation",
        "does ibuprofen treat fever",
    ] {
        let (r, u) = retriever(&g).retrieve(&g, q);
        assert!(r.cypher.is_none() && r.answers.is_empty(), "{q}: {r:?}");
        let m = u.not_understood.clone().unwrap_or_default();
        assert!(m.starts_with("The graph holds '"), "{q}: {m}");
        assert!(m.contains("no drugs there treat or palliate"), "{q}: {m}");
    }
    let (_, u) = answers(&g, "which drugs treat tuberculosis");
    assert_eq!(
        u.not_understood.as_deref(),
        Some(
            "The graph holds 'tuberculosis' only as a side effect (Tuberculosis), and no drugs \
             there treat or palliate a side effect: drugs are joined to side effects only by \
             'cause'."
        )
    );
    assert_eq!(
        u.examples.first().map(String::as_str),
        Some("which drugs cause Tuberculosis")
    );
    // The offered question is answered, and it is what causing means.
    let (a, _) = answers(&g, "which drugs cause Tuberculosis");
    assert_eq!(
        a,
        gold(&g, "MATCH (x:Compound)-[:CAUSES_CcSE]->(:SideEffect {id: 'C0041296'}) RETURN DISTINCT x.id AS id")
    );
    assert!(!a.is_empty());
    let (_, u) = answers(&g, "does ibuprofen treat fever");
    assert_eq!(
        u.examples.first().map(String::as_str),
        Some("which diseases present with Fever")
    );
    // No relation at all joins genes to a side effect.
    let (_, u) = answers(&g, "genes associated with heart failure");
    let m = u.not_understood.unwrap_or_default();
    assert!(
        m.contains("(Cardiac failure), and nothing there links genes to side effects"),
        "{m}"
    );

    // Lay organ words: the graph's name, said to be reached through a synonym.
    let (a, u) = answers(&g, "which medications cause kidney failure");
    assert_eq!(
        a,
        gold(&g, "MATCH (x:Compound)-[:CAUSES_CcSE]->(:SideEffect {id: 'C0035078'}) RETURN DISTINCT x.id AS id")
    );
    assert_eq!(u.entities[0].node.name, "Renal failure");
    assert_eq!(u.entities[0].matched, "synonym");
    // … and the relation picks among the names: the disease for a treatment question, the
    // disease (not the side effect "Renal cancer"-like names) for genes.
    let (_, u) = answers(&g, "drugs for kidney failure");
    assert_eq!(u.entities[0].node.name, "chronic kidney failure");
    let (a, _) = answers(&g, "genes associated with renal cancer");
    assert_eq!(
        a,
        gold(&g, "MATCH (x:Gene)<-[:ASSOCIATES_DaG]-(:Disease {id: 'DOID:263'}) RETURN DISTINCT x.id AS id")
    );
    // Words that all sit in one name, in another order and with a synonym.
    let (a, u) = answers(&g, "drugs that can trigger congestive heart failure");
    assert_eq!(
        a,
        gold(&g, "MATCH (x:Compound)-[:CAUSES_CcSE]->(:SideEffect {id: 'C0018802'}) RETURN DISTINCT x.id AS id")
    );
    assert_eq!(u.entities.len(), 1, "{:?}", u.entities);
    // Two names of one disease are one link, not the same relationship matched twice.
    let (a, _) = answers(&g, "eczema drugs atopic dermatitis");
    assert_eq!(
        a,
        gold(&g, "MATCH (x:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:3310'}) RETURN DISTINCT x.id AS id")
    );
    assert!(!a.is_empty());
    // "without X" still reads the pair relation: drugs that do not cause it.
    let (a, _) = answers(&g, "asthma drugs without drowsiness");
    assert_eq!(
        a,
        gold(&g, "MATCH (x:Compound)-[:TREATS_CtD]->(:Disease {id: 'DOID:2841'}) WHERE NOT (x)-[:CAUSES_CcSE]-(:SideEffect {id: 'C0013144'}) RETURN DISTINCT x.id AS id")
    );
}

#[test]
fn lexicon_synonyms_are_single_words() {
    let Some(g) = graph() else { return };
    let e = LexiconFile::parse(
        "type\tCompound\tdrug\nrel\tCtD\ttreat\nsynonym\theart attack\tinfarct\n",
        "s.tsv",
        &g,
    )
    .unwrap_err();
    assert!(
        e.starts_with("s.tsv line 3: a synonym is one word for one word"),
        "{e}"
    );
    let e = LexiconFile::parse(
        "type\tCompound\tdrug\nrel\tCtD\ttreat\nnever\tCtD,CxD\tSide Effect\n",
        "n.tsv",
        &g,
    )
    .unwrap_err();
    assert!(e.starts_with("n.tsv line 3: unknown metaedge 'CxD'"), "{e}");
}

/// Other people's wording: a type noun before a name restates it, intent verbs mean treat or
/// cause, and a disease the graph does not hold (a Disease Ontology name) is said so.
#[test]
fn restating_nouns_intent_verbs_and_absent_diseases() {
    let Some(g) = graph() else { return };
    // "the protein encoded by APOE" is APOE, not the genes interacting with it.
    let (got, u) = answers(
        &g,
        "What diseases are linked to the protein encoded by APOE?",
    );
    let want = gold(
        &g,
        "MATCH (x:Disease)-[:ASSOCIATES_DaG]->(:Gene {id: '348'}) RETURN DISTINCT x.id AS id",
    );
    assert_eq!(got, want, "{:?}", u.interpretation);
    let (got, u) = answers(&g, "what genes does the drug metformin bind");
    let want = gold(
        &g,
        "MATCH (:Compound {id: 'DB00331'})-[:BINDS_CbG]->(x:Gene) RETURN DISTINCT x.id AS id",
    );
    assert_eq!(got, want, "{:?}", u.interpretation);
    // "diseases of the liver" keeps the organ (an exact name), not liver cancer.
    let (_, u) = answers(&g, "drugs that treat diseases of the liver");
    let i = u.interpretation.unwrap_or_default();
    assert!(!i.contains("liver cancer"), "{i}");
    // Intent verbs by meaning.
    let (_, u) = answers(&g, "which medications might help rheumatoid arthritis");
    let i = u.interpretation.unwrap_or_default();
    assert!(i.contains("treat rheumatoid arthritis"), "{i}");
    let (_, u) = answers(&g, "drugs that can worsen hypertension");
    let i = u.interpretation.unwrap_or_default();
    assert!(i.starts_with("Drugs that cause"), "{i}");
    // An absent disease is refused plainly, with its DO identifier.
    let (got, u) = answers(&g, "is there anything for cystic fibrosis");
    assert!(got.is_empty());
    let m = u.not_understood.unwrap_or_default();
    assert!(
        m.contains("does not hold the disease 'cystic fibrosis'") && m.contains("DOID:1485"),
        "{m}"
    );
    // Nothing in the graph subsumes it: the nearest names are its diseases named with its words.
    assert!(m.contains("idiopathic pulmonary fibrosis"), "{m}");
    assert!(
        u.examples
            .first()
            .is_some_and(|q| q.contains("idiopathic pulmonary fibrosis")),
        "{:?}",
        u.examples
    );
    // One filed under a graph disease offers the question about that disease.
    let (got, u) = answers(&g, "drugs for hodgkin lymphoma");
    assert!(got.is_empty());
    let m = u.not_understood.unwrap_or_default();
    assert!(m.contains("It is a kind of"), "{m}");
    assert!(
        u.examples.first().is_some_and(|q| !q.contains("hodgkin")),
        "{:?}",
        u.examples
    );
    // Not absent: a name qualified by a type noun, a misspelt side effect, a general term.
    for q in [
        "diseases in the brain that resemble other brain diseases",
        "drugs that cause anemia",
    ] {
        let (got, u) = answers(&g, q);
        assert!(!got.is_empty(), "{q}: {:?}", u.not_understood);
    }
    let (_, u) = answers(&g, "drugs for cancer");
    assert!(u.not_understood.is_none(), "{:?}", u.not_understood);
    // DO synonyms of the graph's own diseases link to them.
    let (got, u) = answers(&g, "genes associated with lupus erythematosus systemic");
    assert!(!got.is_empty(), "{:?}", u.not_understood);
}

/// A group the graph holds no class for is named by its members' name stem: "statins" are
/// the drugs named -vastatin (not the Statin Pathway, nor nystatin).
#[test]
fn name_stem_groups_stand_for_their_members() {
    let Some(g) = graph() else { return };
    let (got, u) = answers(&g, "side effects shared by statins");
    let want = gold(
        &g,
        "MATCH (c:Compound)-[:CAUSES_CcSE]->(x:SideEffect) WHERE c.name ENDS WITH 'vastatin' RETURN DISTINCT x.id AS id",
    );
    assert!(!want.is_empty());
    assert_eq!(got, want, "{:?}", u.interpretation);
    let i = u.interpretation.unwrap_or_default();
    assert!(i.contains("named -vastatin"), "{i}");
    let (got, _) = answers(&g, "which genes do beta blockers bind");
    let want = gold(
        &g,
        "MATCH (c:Compound)-[:BINDS_CbG]->(x:Gene) WHERE c.name ENDS WITH 'olol' RETURN DISTINCT x.id AS id",
    );
    assert_eq!(got, want);
}

/// An ordinary word is not read as a long name that merely holds it ("human" in a pathway's
/// name, "found" opening a side effect's), an inflected relation word is its lexicon word
/// ("covarying" = covary), and a participle before the answer's noun qualifies it
/// ("overexpressed genes in melanoma").
#[test]
fn ordinary_words_are_not_names_and_inflections_are_read() {
    let Some(g) = graph() else { return };
    let cases = [
        (
            "Which human genes are involved in autophagy?",
            "MATCH (x:Gene)-[:PARTICIPATES_GpBP]->(:BiologicalProcess {name: 'autophagy'}) RETURN DISTINCT x.id AS id",
        ),
        (
            "where in the cell is LMNA found",
            "MATCH (:Gene {name: 'LMNA'})-[:PARTICIPATES_GpCC]->(x:CellularComponent) RETURN DISTINCT x.id AS id",
        ),
        (
            "genes covarying with STAT3",
            "MATCH (:Gene {name: 'STAT3'})-[:COVARIES_GcG]-(x:Gene) RETURN DISTINCT x.id AS id",
        ),
        (
            "overexpressed genes in melanoma",
            "MATCH (:Disease {name: 'melanoma'})-[:UPREGULATES_DuG]->(x:Gene) RETURN DISTINCT x.id AS id",
        ),
    ];
    for (q, cypher) in cases {
        let want = gold(&g, cypher);
        assert!(!want.is_empty(), "{cypher}");
        let (got, u) = answers(&g, q);
        assert_eq!(got, want, "{q}: {:?}", u.interpretation);
    }
    // A one-word disease name still finds the diseases it shortens.
    let (got, u) = answers(&g, "Is metformin useful for anything besides diabetes?");
    assert!(!got.is_empty(), "{:?}", u.interpretation);
    let i = u.interpretation.unwrap_or_default();
    assert!(i.contains("type 2 diabetes mellitus"), "{i}");
}
