//! Discover's first screen: known answers are treats and palliates (labelled, never
//! candidates), every candidate carries a mechanism label and its safety flags, and the API
//! returns candidates in the first-screen order — the one `serenqa_shared::screen::order`
//! computes from the reply's own fields under the default rule — on a small graph served end to
//! end; and the labels on the real Hetionet with the Disease Ontology files.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::path::Path;
use std::process::Command;

use serenqa_graph::load::disease_ontology::DiseaseOntology;
use serenqa_graph::safety::{MatchedBy, SafetyIndex};
use serenqa_model::mechanism::MechanismRelations;
use serenqa_shared::api::DiscoverResponse;
use serenqa_shared::screen::{order, Mechanism, ScreenItem};
use serenqa_testkit::data::{hetionet_data, hetionet_graph};
use serenqa_testkit::http::get_json as get;
use serenqa_testkit::serve::{import_hetionet, Serve, Served};

const EXE: &str = env!("CARGO_BIN_EXE_serenqa");

const DISEASES: [&str; 6] = [
    "asthma",
    "gout",
    "psoriasis",
    "migraine",
    "epilepsy",
    "glaucoma",
];

/// 43 compounds, 6 diseases, 27 genes, 5 pharmacologic classes; treatments and palliations
/// follow shared genes; some drugs cause "<disease> aggravated" (a side effect named after a
/// disease), others a side effect named after nothing.
fn write_graph(dir: &Path) {
    let mut nodes = String::from("id\tname\tkind\n");
    let mut edges = String::from("source\tmetaedge\ttarget\n");
    for i in 0..40 {
        nodes += &format!("Compound::DB{i:05}\tdrug {i}\tCompound\n");
    }
    for (i, n) in DISEASES.iter().enumerate() {
        nodes += &format!("Disease::DOID:{i}\t{n}\tDisease\n");
        nodes += &format!("Side Effect::C000{i}\t{n} aggravated\tSide Effect\n");
    }
    nodes += "Side Effect::C0999\tNausea\tSide Effect\n";
    for i in 0..24 {
        nodes += &format!("Gene::{i}\tGENE{i}\tGene\n");
    }
    for k in 0..5 {
        nodes += &format!("Pharmacologic Class::N{k}\tclass {k}\tPharmacologic Class\n");
    }
    let mut s = 7u64;
    let mut r = |n: u64| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) % n
    };
    let binds: Vec<Vec<u64>> = (0..40).map(|_| (0..2).map(|_| r(24)).collect()).collect();
    let assoc: Vec<Vec<u64>> = (0..6).map(|_| (0..5).map(|_| r(24)).collect()).collect();
    for (c, gs) in binds.iter().enumerate() {
        for g in gs {
            edges += &format!("Compound::DB{c:05}\tCbG\tGene::{g}\n");
        }
        if c < 10 {
            edges += &format!(
                "Pharmacologic Class::N{}\tPCiC\tCompound::DB{c:05}\n",
                c % 5
            );
        }
        if c % 3 == 0 {
            edges += &format!("Compound::DB{c:05}\tCcSE\tSide Effect::C000{}\n", c % 6);
        }
        edges += &format!("Compound::DB{c:05}\tCcSE\tSide Effect::C0999\n");
    }
    for (d, gs) in assoc.iter().enumerate() {
        for g in gs {
            edges += &format!("Disease::DOID:{d}\tDaG\tGene::{g}\n");
        }
    }
    for (c, bc) in binds.iter().enumerate() {
        for (d, ad) in assoc.iter().enumerate() {
            if bc.iter().any(|g| ad.contains(g)) && r(3) > 0 {
                edges += &format!("Compound::DB{c:05}\tCtD\tDisease::DOID:{d}\n");
            } else if r(6) == 0 {
                edges += &format!("Compound::DB{c:05}\tCpD\tDisease::DOID:{d}\n");
            }
        }
    }
    // Three drugs on a target of their own (no class, no target shared with any known drug)
    // that cause a disease: flagged with no known treatment to explain the record.
    for i in 0..3 {
        nodes += &format!("Compound::DB{:05}\tdrug {}\tCompound\n", 40 + i, 40 + i);
        nodes += &format!("Gene::{}\tGENE{}\tGene\n", 24 + i, 24 + i);
        edges += &format!("Compound::DB{:05}\tCbG\tGene::{}\n", 40 + i, 24 + i);
        edges += &format!("Compound::DB{:05}\tCcSE\tSide Effect::C000{i}\n", 40 + i);
    }
    import_hetionet(EXE, dir, &nodes, &edges);
}

fn serenqa(dir: &Path, args: &[&str]) {
    let o = Command::new(EXE)
        .args(args)
        .current_dir(dir)
        .env("SERENQA_CACHE", dir.join("cache"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn serve(dir: &Path) -> Served {
    Serve::new(EXE, dir)
        // This test makes more requests than the default per-client burst: its own budget.
        .args(&[
            "--graph", "gm.snap", "--dist", "nodist", "--db", "a.sqlite", "--burst", "10000",
        ])
        .env("SERENQA_CACHE", dir.join("cache"))
        .spawn()
}

/// The order `screen::order` gives the reply's own candidates under the reply's rule.
fn recomputed(d: &DiscoverResponse) -> Vec<String> {
    let rule = d.screen.as_ref().expect("a screen with predictions").rule;
    let items: Vec<ScreenItem> = d
        .candidates
        .iter()
        .map(|c| ScreenItem {
            plausibility: c.plausibility.as_ref().map_or(0.0, |p| p.score),
            flagged: !c.safety.is_empty(),
            mechanism: c.mechanism.kind,
            key: c.node.index,
        })
        .collect();
    order(&items, &rule)
        .into_iter()
        .map(|i| d.candidates[i].node.id.clone())
        .collect()
}

#[test]
fn the_api_returns_the_first_screen_with_known_palliatives_labels_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_graph(d);
    serenqa(
        d,
        &[
            "--quiet",
            "precompute",
            "--graph",
            "g.snap",
            "--out",
            "gm.snap",
        ],
    );
    serenqa(d, &["--quiet", "predict", "--graph", "gm.snap"]);
    let s = serve(d);
    let mut pages_with_palliatives = 0;
    let mut flagged_seen = 0;
    let mut unexplained_seen = 0;
    let mut kinds: Vec<Mechanism> = Vec::new();
    let keys: Vec<String> = (0..DISEASES.len())
        .map(|i| format!("Disease::DOID:{i}"))
        .chain((0..40).step_by(3).map(|c| format!("Compound::DB{c:05}")))
        .collect();
    for key in &keys {
        let (st, v) = get(&format!("{}/api/discover/{key}?limit=200", s.base));
        assert_eq!(st, 200, "{key}: {v}");
        let page: DiscoverResponse = serde_json::from_value(v).unwrap();
        // Known answers: treats before palliates, each labelled, none a candidate.
        let rels: Vec<&str> = page.known.iter().map(|k| k.relation.as_str()).collect();
        assert!(
            rels.iter().all(|r| *r == "treats" || *r == "palliates"),
            "{key}: {rels:?}"
        );
        assert!(
            rels.windows(2)
                .all(|w| !(w[0] == "palliates" && w[1] == "treats")),
            "{key}: treats first: {rels:?}"
        );
        pages_with_palliatives += usize::from(rels.contains(&"palliates"));
        assert!(!page.known_note.is_empty());
        for c in &page.candidates {
            assert!(
                !page.known.iter().any(|k| k.node.id == c.node.id),
                "{key}: known {} proposed as a candidate",
                c.node.name
            );
            if !kinds.contains(&c.mechanism.kind) {
                kinds.push(c.mechanism.kind);
            }
        }
        // The API's order is the first screen's, computed from the reply's own fields.
        let ids: Vec<String> = page.candidates.iter().map(|c| c.node.id.clone()).collect();
        assert_eq!(ids, recomputed(&page), "{key}");
        // Flagged drugs say why; an unexplained one goes last, an explained one keeps its place.
        let flags: Vec<bool> = page
            .candidates
            .iter()
            .map(|c| !c.safety.is_empty())
            .collect();
        assert_eq!(
            page.screen.as_ref().unwrap().rule,
            serenqa_shared::screen::ScreenRule::default()
        );
        // By default a flagged drug that shares nothing with a known treatment (a new
        // mechanism: no known treatment explains its record) comes after every other candidate.
        let aside: Vec<bool> = page
            .candidates
            .iter()
            .map(|c| !c.safety.is_empty() && c.mechanism.kind == Mechanism::New)
            .collect();
        assert!(
            aside.windows(2).all(|w| !w[0] || w[1]),
            "{key}: unexplained flagged drugs last: {aside:?}"
        );
        unexplained_seen += aside.iter().filter(|&&a| a).count();
        for c in page.candidates.iter().filter(|c| !c.safety.is_empty()) {
            flagged_seen += 1;
            let f = &c.safety[0];
            assert!(f.side_effect.name.ends_with("aggravated"), "{f:?}");
            assert_eq!((f.by.as_str(), f.source.as_str()), ("name", "SIDER 4.1"));
            assert!(f.matched.contains("a name of"), "{}", f.matched);
        }
        assert_eq!(
            page.screen.as_ref().unwrap().flagged,
            flags.iter().filter(|&&b| b).count()
        );
        let ev = page.evidence.as_ref().expect("evidence with predictions");
        assert_eq!(ev.weak, ev.best < ev.threshold);
        // A short reply is the top of the long one.
        let (_, v5) = get(&format!("{}/api/discover/{key}?limit=5", s.base));
        let short: DiscoverResponse = serde_json::from_value(v5).unwrap();
        let ids5: Vec<String> = short.candidates.iter().map(|c| c.node.id.clone()).collect();
        assert_eq!(ids5, ids[..ids.len().min(5)], "{key}");
    }
    // The rule's parameters: `flagged=last` puts every flagged drug after every other one;
    // bad values are one-line 400s.
    for key in &keys {
        let (_, v) = get(&format!(
            "{}/api/discover/{key}?limit=200&flagged=last&band=0.5",
            s.base
        ));
        let page: DiscoverResponse = serde_json::from_value(v).unwrap();
        let rule = page.screen.as_ref().unwrap().rule;
        assert_eq!(
            (rule.band, rule.flagged),
            (0.5, serenqa_shared::screen::Flagged::Last)
        );
        let ids: Vec<String> = page.candidates.iter().map(|c| c.node.id.clone()).collect();
        assert_eq!(ids, recomputed(&page), "{key}");
        let flags: Vec<bool> = page
            .candidates
            .iter()
            .map(|c| !c.safety.is_empty())
            .collect();
        assert!(
            flags.windows(2).all(|w| !w[0] || w[1]),
            "{key}: flagged last: {flags:?}"
        );
    }
    for bad in ["band=2", "band=x", "flagged=never", "favour_new=maybe"] {
        let (st, v) = get(&format!("{}/api/discover/Disease::DOID:0?{bad}", s.base));
        assert_eq!(st, 400, "{bad}: {v}");
        assert!(!v["message"].as_str().unwrap_or("").contains('\n'), "{v}");
    }
    assert!(pages_with_palliatives > 0, "the fixture has palliations");
    assert!(flagged_seen > 0, "the fixture has drugs causing a disease");
    assert!(
        unexplained_seen > 0,
        "the fixture has a drug causing a disease with no class or target of its known drugs"
    );
    assert!(
        kinds.contains(&Mechanism::SameClass) && kinds.contains(&Mechanism::New),
        "{kinds:?}"
    );
}

#[test]
fn hetionet_labels_read_the_disease_ontology() {
    let Some(data) = hetionet_data() else { return };
    let g = hetionet_graph(&data);
    let dox = DiseaseOntology::load(&data.join("disease-ontology")).unwrap();
    let safety = SafetyIndex::build(&g, Some(&dox));
    assert!(
        safety.diseases_covered() >= 100,
        "{}",
        safety.diseases_covered()
    );
    let node = |k: &str| g.find_by_key(k).unwrap_or_else(|| panic!("{k}"));
    let flag = |c: &str, d: &str| safety.flags(&g, node(c), node(d));
    // Isoniazid causes lupus: by the DO's UMLS cross-reference of SLE.
    let f = flag("Compound::DB00951", "Disease::DOID:9074");
    assert!(
        f.iter()
            .any(|x| matches!(&x.by, MatchedBy::Identifier(c) if c == "C0024141")),
        "{f:?}"
    );
    // Gentamicin causes pulmonary fibrosis: a broader name inside IPF's.
    let f = flag("Compound::DB00798", "Disease::DOID:0050156");
    assert!(
        f.iter()
            .any(|x| g.name(x.condition) == "Pulmonary fibrosis" && x.by.kind() == "name"),
        "{f:?}"
    );
    // Molindone (an antipsychotic) causes dyskinesia and rigidity: symptoms specific to PD.
    let f = flag("Compound::DB01618", "Disease::DOID:14330");
    assert!(f.iter().any(|x| x.by.kind() == "symptom"), "{f:?}");
    // Nothing ties metformin to Parkinson's disease.
    assert!(flag("Compound::DB00331", "Disease::DOID:14330").is_empty());

    // Pramipexole against the other drugs known for Parkinson's disease (ropinirole, …):
    // obvious; metformin: a new mechanism.
    let pd = node("Disease::DOID:14330");
    let known: Vec<u32> = serenqa_model::discover::known_of(&g, pd);
    assert!(
        known.len() >= 20,
        "PD's palliatives are known: {}",
        known.len()
    );
    let prami = node("Compound::DB00413");
    let others: Vec<u32> = known.iter().copied().filter(|&k| k != prami).collect();
    let rel = MechanismRelations::find(&g);
    let m = rel.of(&g, prami, &others);
    assert!(m.kind.is_obvious(), "{m:?}");
    assert!((!m.classes.is_empty() || !m.targets.is_empty()) && !m.like.is_empty());
    let m = rel.of(&g, node("Compound::DB00331"), &known);
    assert_eq!(m.kind, Mechanism::New, "{m:?}");
}
