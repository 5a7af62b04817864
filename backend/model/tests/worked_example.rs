//! Worked example: a 9-node drug/gene/disease graph where every intermediate value — P1, the
//! P3 block, marginals, embeddings of A, π, T, O, I(As|Ae), Pe, Ps, JSD, R, N, S, RNS — equals the
//! independent pure-Python computation in `tests/fixtures/worked_example.py` (its output is
//! committed as `worked_example.json`) to 1e-9, for both walk directions.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use serde_json::Value;
use serenqa_graph::{Graph, GraphBuilder, GraphMeta, RelationType};
use serenqa_model::embeddings::FastRp;
use serenqa_model::marginals::{MarginalParams, Solver};
use serenqa_model::slice::{build_slice, BlockCache};
use serenqa_model::transition::Transition;
use serenqa_model::{Model, ModelConfig};
use serenqa_shared::rns::{Scorer, Weights};

const TOL: f64 = 1e-9;

fn fixture() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/worked_example.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture exists"))
        .expect("fixture is JSON")
}

fn build(fx: &Value) -> Graph {
    let mut b = GraphBuilder::new(GraphMeta {
        name: "worked-example".into(),
        ..Default::default()
    });
    let mut ids = Vec::new();
    for key in fx["nodes"].as_array().unwrap() {
        let (ty, ident) = key.as_str().unwrap().split_once("::").unwrap();
        let t = b.node_type(ty, ty);
        ids.push((ident.to_string(), b.add_node(t, ident, ident)));
    }
    let find = |s: &str| ids.iter().find(|(i, _)| i == s).unwrap().1;
    for e in fx["edges"].as_array().unwrap() {
        let (s, r, d) = (
            e[0].as_str().unwrap(),
            e[1].as_str().unwrap(),
            e[2].as_str().unwrap(),
        );
        let rel = b
            .relation(RelationType {
                name: r.into(),
                verb: r.to_lowercase(),
                abbrev: r.into(),
                source_type: None,
                target_type: None,
                directed: true,
            })
            .unwrap();
        b.add_edge(find(s), rel, find(d), None);
    }
    b.build()
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|x| {
            if x.is_array() {
                nums(x)
            } else {
                vec![x.as_f64().unwrap()]
            }
        })
        .collect()
}

fn close(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= TOL, "{what}[{k}]: got {g}, reference {w}");
    }
}

fn check(directed: bool) {
    let fx = fixture();
    let g = build(&fx);
    let want = &fx[if directed { "directed" } else { "undirected" }];
    let n = g.node_count();
    // Graph node order = fixture order (nodes added in order).
    let t = Transition::new(&g, directed);
    let mut p1 = vec![0.0; n * n];
    for i in 0..n {
        for (j, p) in t.p1_row(i as u32) {
            p1[i * n + j as usize] = p;
        }
    }
    close("P1", &p1, &nums(&want["p1"]));

    let cfg = ModelConfig {
        directed,
        embedding: FastRp {
            dim: fx["dim"].as_u64().unwrap() as usize,
            seed: fx["seed"].as_u64().unwrap(),
            ..FastRp::default()
        },
        // Algorithm 2 as written: the reference counts its iterations.
        marginals: MarginalParams {
            solver: Solver::Power,
            ..MarginalParams::default()
        },
    };
    let model = Model::compute(&g, &cfg, false);
    assert_eq!(
        model.params.marginal_stats.iterations as u64,
        want["iterations"].as_u64().unwrap()
    );
    close("marginals", &model.marginals, &nums(&want["marginals"]));
    // The default solver reaches the same fixed point.
    let default = Model::compute(
        &g,
        &ModelConfig {
            marginals: MarginalParams::default(),
            ..cfg.clone()
        },
        false,
    );
    close(
        "marginals (default solver)",
        &default.marginals,
        &nums(&want["marginals"]),
    );

    let names = |k: &str| -> Vec<u32> {
        fx[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                let id = v.as_str().unwrap();
                g.find_by_ident(id)[0]
            })
            .collect()
    };
    let (ae, as_) = (names("existing"), names("serendipity"));
    let a: Vec<u32> = ae.iter().chain(&as_).copied().collect();
    let slice = build_slice(&g, &model, &BlockCache::default(), &a).unwrap();
    close("P3 block", &slice.block, &nums(&want["block"]));
    let emb: Vec<f64> = slice.embeddings.iter().map(|&x| x as f64).collect();
    close("embeddings of A", &emb, &nums(&want["embeddings_of_a"]));

    let w = fx["weights"].as_array().unwrap();
    let w = Weights::new(
        w[0].as_f64().unwrap(),
        w[1].as_f64().unwrap(),
        w[2].as_f64().unwrap(),
    )
    .unwrap();
    let sc = Scorer::new(&slice).unwrap();
    let pe: Vec<usize> = (0..ae.len()).collect();
    let ps: Vec<usize> = (ae.len()..a.len()).collect();
    let d = sc.details(&pe, &ps, &w).unwrap();
    close("pi", &d.pi, &nums(&want["pi"]));
    close("T", &d.t, &nums(&want["t"]));
    close(
        "O (observed)",
        &[d.observed],
        &[want["observed"].as_f64().unwrap()],
    );
    close(
        "I (bits)",
        &[d.info_bits],
        &[want["info_bits"].as_f64().unwrap()],
    );
    close(
        "MI (paper's form)",
        &[d.mi_paper],
        &[want["mi_paper"].as_f64().unwrap()],
    );
    close("Pe", &d.pe, &nums(&want["pe"]));
    close("Ps", &d.ps, &nums(&want["ps"]));
    close("JSD", &[d.jsd], &[want["jsd"].as_f64().unwrap()]);
    close(
        "S (paper's form, return-to-self kept)",
        &[d.s_paper],
        &[want["s_paper"].as_f64().unwrap()],
    );
    close("R", &[d.terms.r], &[want["r"].as_f64().unwrap()]);
    close("N", &[d.terms.n], &[want["n"].as_f64().unwrap()]);
    close("S", &[d.terms.s], &[want["s"].as_f64().unwrap()]);
    close("RNS", &[d.terms.rns], &[want["rns"].as_f64().unwrap()]);

    // Greedy swap over A (b = 1) reaches the brute-force best single serendipity entity.
    let all: Vec<usize> = (0..a.len()).collect();
    let res = sc.greedy_swap(&all, None, &w).unwrap();
    let chosen: Vec<&str> = res.serendipity.iter().map(|&p| g.ident(a[p])).collect();
    assert_eq!(chosen, vec![want["best_single"].as_str().unwrap()]);
}

#[test]
fn worked_example_undirected() {
    check(false);
}

#[test]
fn worked_example_directed() {
    check(true);
}
