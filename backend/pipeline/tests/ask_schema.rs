//! Ask on any graph: the question understanding's lexicon derived from the loaded graph's own
//! schema (node types, relation names, names, identifiers, synonyms), with the Hetionet
//! lexicon as an overlay. On a small synthetic CKG-shaped graph and on a hand-built graph
//! whose relations have no fixed end types (as a Neo4j CSV import has them); every query is
//! run on the graph and its answers compared with the graph's own edges. The Hetionet check
//! needs ../shared/data.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

mod common;

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serenqa_graph::synth::{generate, SynthSpec};
use serenqa_graph::{Graph, GraphBuilder, GraphMeta, NodeId, PropValue, RelationType};
use serenqa_pipeline::offline::understand::{
    lexicon_for, LexiconFile, Metagraph, Understander, HETIONET_LEXICON,
};
use serenqa_pipeline::retrieval::OfflineRetriever;

fn synth() -> &'static (Graph, OfflineRetriever) {
    static S: OnceLock<(Graph, OfflineRetriever)> = OnceLock::new();
    S.get_or_init(|| {
        let g = generate(&SynthSpec {
            nodes: 6_000,
            edges: 60_000,
            seed: 11,
            progress: false,
        });
        let r = OfflineRetriever::new(&g);
        (g, r)
    })
}

/// The identifiers of the nodes of type `want` joined to `n` by relation `rel` (either way).
fn linked(g: &Graph, n: NodeId, rel: &str, want: &str) -> BTreeSet<String> {
    let r = g.relation_id(rel).unwrap();
    let t = g.type_id(want).unwrap();
    g.edges(n, serenqa_graph::Direction::Both)
        .filter(|e| e.rel == r)
        .map(|e| if e.source == n { e.target } else { e.source })
        .filter(|&x| g.node_type(x) == t)
        .map(|x| g.ident(x).to_string())
        .collect()
}

/// The node of type `ty` with the most `rel` edges.
fn busiest(g: &Graph, ty: &str, rel: &str) -> NodeId {
    let t = g.type_id(ty).unwrap();
    let r = g.relation_id(rel).unwrap();
    *g.nodes_of_type(t)
        .iter()
        .max_by_key(|&&n| {
            (
                g.edges(n, serenqa_graph::Direction::Both)
                    .filter(|e| e.rel == r)
                    .count(),
                std::cmp::Reverse(n),
            )
        })
        .unwrap()
}

fn ask(g: &Graph, r: &OfflineRetriever, q: &str) -> (BTreeSet<String>, String) {
    let (res, u) = r.retrieve(g, q);
    assert!(
        res.executable,
        "{q}: {:?} {:?} {:?}",
        res.error, res.cypher, u.not_understood
    );
    (
        res.answers.into_iter().collect(),
        res.cypher.unwrap_or_default(),
    )
}

#[test]
fn understanding_builds_on_a_non_hetionet_schema() {
    let (g, r) = synth();
    let u = r.understander.as_ref().expect("understander on synth");
    // Type nouns from the labels, head nouns, relation phrases from the names.
    let noun = |w: &str| {
        u.lex
            .nouns
            .iter()
            .find(|n| n.0.join(" ") == w)
            .map(|n| g.type_label(n.1).to_string())
    };
    assert_eq!(noun("known variant").as_deref(), Some("Known_variant"));
    assert_eq!(
        noun("biological process").as_deref(),
        Some("Biological_process")
    );
    assert_eq!(
        noun("protein").as_deref(),
        Some("Protein"),
        "the schema's own type wins"
    );
    assert_eq!(noun("drug").as_deref(), Some("Drug"));
    // "variant": Known_variant has far more nodes than Clinically_relevant_variant.
    assert_eq!(noun("variant").as_deref(), Some("Known_variant"));
    let phrase = |w: &str| -> Vec<String> {
        u.lex
            .phrases
            .iter()
            .find(|p| p.0.join(" ") == w)
            .map(|p| p.1.iter().map(|s| g.relation(s.rel).name.clone()).collect())
            .unwrap_or_default()
    };
    assert!(phrase("found in").contains(&"VARIANT_FOUND_IN_GENE".to_string()));
    assert!(phrase("associated with").contains(&"ASSOCIATED_WITH_BP".to_string()));
    assert!(phrase("associated with").contains(&"ASSOCIATED_WITH".to_string()));
    assert_eq!(
        phrase("targeted by").len(),
        2,
        "{:?}",
        phrase("targeted by")
    );
    assert!(phrase("is biomarker of").contains(&"IS_BIOMARKER_OF_DISEASE".to_string()));
    assert!(phrase("act on").contains(&"ACTS_ON".to_string()));
    // Pairs: the only relation, or a clear most frequent one.
    let pair = |a: &str, b: &str| {
        u.lex
            .pairs
            .get(&(g.type_id(a).unwrap(), g.type_id(b).unwrap()))
            .map(|&r| g.relation(r).name.clone())
    };
    assert_eq!(pair("Drug", "Disease").as_deref(), Some("IS_INDICATED_FOR"));
    assert_eq!(
        pair("Disease", "Protein").as_deref(),
        Some("ASSOCIATED_WITH_DISEASE")
    );
    // Every relation is reachable by some phrase or a pair.
    for (i, rt) in g.relations().iter().enumerate() {
        let reached = u
            .lex
            .phrases
            .iter()
            .any(|p| p.1.iter().any(|s| s.rel as usize == i))
            || u.lex.pairs.values().any(|&r| r as usize == i);
        assert!(reached, "{} has no phrase and no pair", rt.name);
    }
}

#[test]
fn schema_questions_are_answered_from_the_graph() {
    let (g, r) = synth();
    // The pair relation: "associated with" names no Drug–Disease relation here, so the one
    // relation between the two types answers.
    let d = busiest(g, "Disease", "IS_INDICATED_FOR");
    let want = linked(g, d, "IS_INDICATED_FOR", "Drug");
    assert!(!want.is_empty());
    let (got, cypher) = ask(
        g,
        r,
        &format!("which drugs are associated with {}", g.name(d)),
    );
    assert_eq!(got, want, "{cypher}");
    assert!(cypher.contains("IS_INDICATED_FOR"), "{cypher}");
    // By identifier, with and without its type noun.
    let (got, _) = ask(g, r, &format!("drugs for disease {}?", g.ident(d)));
    assert_eq!(got, want);
    let (got, _) = ask(
        g,
        r,
        &format!("Which drugs are indicated for {}?", g.ident(d)),
    );
    assert_eq!(got, want);
    // A relation phrase read off the relation's name, end-type words stripped.
    let d = busiest(g, "Disease", "IS_BIOMARKER_OF_DISEASE");
    let want = linked(g, d, "IS_BIOMARKER_OF_DISEASE", "Protein");
    let (got, cypher) = ask(
        g,
        r,
        &format!("proteins that are biomarkers of {}", g.name(d)),
    );
    assert_eq!(got, want, "{cypher}");
    let gene = busiest(g, "Gene", "VARIANT_FOUND_IN_GENE");
    let want = linked(g, gene, "VARIANT_FOUND_IN_GENE", "Known_variant");
    let (got, cypher) = ask(g, r, &format!("variants found in {}", g.name(gene)));
    assert_eq!(got, want, "{cypher}");
    // The passive (two relations share it: the one the query uses must give the answers;
    // the benchmark grammar, tried first, may take either).
    let drug = busiest(g, "Drug", "COMPILED_TARGETS");
    let (got, cypher) = ask(
        g,
        r,
        &format!("which proteins are targeted by {}", g.name(drug)),
    );
    let rel = ["COMPILED_TARGETS", "CURATED_TARGETS"]
        .into_iter()
        .find(|r| cypher.contains(r))
        .unwrap_or_else(|| panic!("{cypher}"));
    assert_eq!(got, linked(g, drug, rel, "Protein"), "{cypher}");
    assert!(!got.is_empty());
}

#[test]
fn a_two_hop_question_follows_both_relations() {
    let (g, r) = synth();
    let d = busiest(g, "Disease", "ASSOCIATED_WITH_DISEASE");
    let proteins = linked(g, d, "ASSOCIATED_WITH_DISEASE", "Protein");
    let mut want = BTreeSet::new();
    for p in &proteins {
        let n = g
            .find_by_ident(p)
            .iter()
            .copied()
            .find(|&x| g.type_label(g.node_type(x)) == "Protein")
            .unwrap();
        want.extend(linked(g, n, "COMPILED_TARGETS", "Drug"));
    }
    assert!(!want.is_empty());
    let (got, cypher) = ask(
        g,
        r,
        &format!("which drugs target proteins associated with {}", g.name(d)),
    );
    assert_eq!(got, want, "{cypher}");
    assert!(
        cypher.contains("COMPILED_TARGETS") && cypher.contains("ASSOCIATED_WITH_DISEASE"),
        "{cypher}"
    );
}

#[test]
fn an_unreadable_question_is_refused_plainly() {
    let (g, r) = synth();
    for q in ["what is the meaning of life", "zzqx wibble frobnicate", ""] {
        let (res, u) = r.retrieve(g, q);
        assert!(res.cypher.is_none(), "{q}: {:?}", res.cypher);
        assert!(res.answers.is_empty());
        assert!(u.not_understood.is_some(), "{q}");
    }
}

/// A graph as a Neo4j CSV import builds it: relations with no fixed end types, one name
/// shared by two type pairs, synonyms as a node property.
fn imported() -> Graph {
    let mut b = GraphBuilder::new(GraphMeta {
        name: "tiny-import".into(),
        ..Default::default()
    });
    let protein = b.node_type("Protein", "Protein");
    let drug = b.node_type("Medication", "Medication");
    let disease = b.node_type("Illness", "Illness");
    let rel = |b: &mut GraphBuilder, name: &str| {
        b.relation(RelationType {
            name: name.into(),
            verb: name.to_lowercase().replace('_', " "),
            abbrev: name.into(),
            source_type: None,
            target_type: None,
            directed: true,
        })
        .unwrap()
    };
    let acts = rel(&mut b, "ACTS_ON");
    let marker = rel(&mut b, "IS_BIOMARKER_OF");
    let assoc = rel(&mut b, "ASSOCIATED_WITH");
    let parent = rel(&mut b, "HAS_PARENT");
    let p53 = b.add_node(protein, "P04637", "TP53");
    let egfr = b.add_node(protein, "P00533", "EGFR");
    let brca = b.add_node(protein, "P38398", "BRCA1");
    let aspirin = b.add_node(drug, "DB00945", "aspirin");
    let gefitinib = b.add_node(drug, "DB00317", "gefitinib");
    let mi = b.add_node(disease, "DOID:5844", "myocardial infarction");
    let cancer = b.add_node(disease, "DOID:162", "cancer");
    let lung = b.add_node(disease, "DOID:1324", "lung cancer");
    b.set_node_prop(
        mi,
        "synonyms",
        PropValue::List(vec![PropValue::Str("heart attack".into())]),
    );
    b.add_edge(gefitinib, acts, egfr, None);
    b.add_edge(aspirin, acts, p53, None);
    b.add_edge(egfr, acts, p53, None);
    b.add_edge(p53, marker, cancer, None);
    b.add_edge(brca, marker, cancer, None);
    b.add_edge(egfr, marker, lung, None);
    b.add_edge(p53, marker, mi, None);
    b.add_edge(aspirin, assoc, mi, None);
    b.add_edge(lung, parent, cancer, None);
    b.build()
}

#[test]
fn an_imported_graph_without_fixed_end_types_is_understood() {
    let g = imported();
    let meta = Metagraph::of(&g);
    let acts = g.relation_id("ACTS_ON").unwrap();
    assert_eq!(meta.ends(acts).len(), 2, "{:?}", meta.ends(acts));
    let r = OfflineRetriever::new(&g);
    let ids = |xs: &[&str]| xs.iter().map(|s| (*s).to_string()).collect::<BTreeSet<_>>();
    let cases: &[(&str, &[&str])] = &[
        // Orientation from the edges: the drug is the source, the protein the target.
        ("which medications act on TP53", &["DB00945"]),
        ("what proteins are acted on by gefitinib", &["P00533"]),
        // Same type: subject → object, and the passive reads backwards.
        ("which proteins act on TP53", &["P00533"]),
        ("proteins acted on by EGFR", &["P04637"]),
        (
            "which proteins are biomarkers of cancer",
            &["P04637", "P38398"],
        ),
        // A graph synonym, an identifier after its type noun, a bare identifier.
        ("which proteins are biomarkers of heart attack", &["P04637"]),
        (
            "what illnesses is protein P00533 a biomarker of",
            &["DOID:1324"],
        ),
        ("medications associated with DOID:5844", &["DB00945"]),
        // "has parent" / "parent of" (backwards) on a same-type relation.
        ("illnesses that have parent cancer", &["DOID:1324"]),
        ("the parent of lung cancer", &["DOID:162"]),
    ];
    for (q, want) in cases {
        let (got, cypher) = ask(&g, &r, q);
        assert_eq!(got, ids(want), "{q}: {cypher}");
    }
    let (res, u) = r.retrieve(&g, "which medications treat the common cold");
    assert!(res.answers.is_empty() && u.not_understood.is_some());
}

#[test]
fn on_hetionet_the_lexicon_is_exactly_the_hetionet_lexicon() {
    if common::shared_data().is_none() {
        serenqa_graph::datadir::missing_resource("Hetionet data (../shared/data/hetionet)");
        return;
    }
    let g = common::hetionet();
    let strict = LexiconFile::parse(HETIONET_LEXICON, "hetionet.tsv", &g).unwrap();
    let (lx, left_out) = lexicon_for(&g, &Metagraph::of(&g)).unwrap();
    assert_eq!(left_out, 0);
    assert_eq!(lx.nouns, strict.nouns);
    assert_eq!(lx.display, strict.display);
    assert_eq!(lx.phrases, strict.phrases);
    assert_eq!(lx.pairs, strict.pairs);
    assert_eq!(lx.pair_order, strict.pair_order);
    assert_eq!(lx.verbs, strict.verbs);
    assert_eq!(lx.stops, strict.stops);
    assert_eq!(lx.bare, strict.bare);
    assert_eq!(lx.never, strict.never);
    let u = Understander::new(&g).unwrap();
    assert_eq!(u.lex.phrases, strict.phrases);
}

#[test]
fn the_schema_check_asks_and_verifies_a_question() {
    use serenqa_pipeline::offline::schema_check::check_schema_question;
    let (g, r) = synth();
    let c = check_schema_question(g, r).unwrap();
    assert!(c.ok && c.expected > 0, "{c:?}");
    let g = imported();
    let c = check_schema_question(&g, &OfflineRetriever::new(&g)).unwrap();
    assert!(c.ok, "{c:?}");
}
