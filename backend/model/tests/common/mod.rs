//! Test helpers: small graphs from edge lists, and dense reference computations written
//! straight from the definitions in docs/RNS.md (independent of the sparse code under test).
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture
#![allow(dead_code)]

use serenqa_graph::{Graph, GraphBuilder, GraphMeta, NodeId, RelationType};

/// A graph with nodes `N0..N{n-1}` of type `Thing` (node i's key is `Thing::N{i}`), plus the
/// given edges (source, target) with relation `rel0`/`rel1` alternating.
pub fn graph(n: usize, edges: &[(u32, u32)]) -> Graph {
    graph_named(n, edges, |i| format!("N{i}"))
}

pub fn graph_named(n: usize, edges: &[(u32, u32)], ident: impl Fn(usize) -> String) -> Graph {
    let mut b = GraphBuilder::new(GraphMeta {
        name: "test".into(),
        ..Default::default()
    });
    let t = b.node_type("Thing", "Thing");
    let mut rels = Vec::new();
    for r in 0..2 {
        rels.push(
            b.relation(RelationType {
                name: format!("rel{r}"),
                verb: format!("rel{r}"),
                abbrev: format!("r{r}"),
                source_type: Some(t),
                target_type: Some(t),
                directed: true,
            })
            .unwrap(),
        );
    }
    for i in 0..n {
        b.add_node(t, &ident(i), &format!("thing {i}"));
    }
    for (k, &(s, d)) in edges.iter().enumerate() {
        b.add_edge(s, rels[k % 2], d, None);
    }
    b.build()
}

pub type Dense = Vec<Vec<f64>>;

/// P1 from the edge list: W = M + Mᵀ (or M when directed), dangling rows get a self-loop.
pub fn dense_p1(n: usize, edges: &[(u32, u32)], directed: bool) -> Dense {
    let mut w = vec![vec![0.0; n]; n];
    for &(s, d) in edges {
        w[s as usize][d as usize] += 1.0;
        if !directed {
            w[d as usize][s as usize] += 1.0;
        }
    }
    for (i, row) in w.iter_mut().enumerate() {
        let s: f64 = row.iter().sum();
        if s == 0.0 {
            row[i] = 1.0;
        } else {
            row.iter_mut().for_each(|x| *x /= s);
        }
    }
    w
}

pub fn matmul(a: &Dense, b: &Dense) -> Dense {
    let n = a.len();
    let mut c = vec![vec![0.0; n]; n];
    for i in 0..n {
        for k in 0..n {
            if a[i][k] != 0.0 {
                for j in 0..n {
                    c[i][j] += a[i][k] * b[k][j];
                }
            }
        }
    }
    c
}

/// P3 = P1/6 + 2P1²/6 + 3P1³/6, materialised (fine for tiny graphs).
pub fn dense_p3(p1: &Dense) -> Dense {
    let p2 = matmul(p1, p1);
    let p3 = matmul(&p2, p1);
    let n = p1.len();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| p1[i][j] / 6.0 + 2.0 * p2[i][j] / 6.0 + 3.0 * p3[i][j] / 6.0)
                .collect()
        })
        .collect()
}

/// Algorithm 2 on a dense P3.
pub fn dense_marginals(p3: &Dense, lambda: f64, eps: f64) -> (Vec<f64>, usize) {
    let n = p3.len();
    let p0 = 1.0 / n as f64;
    let mut p = vec![p0; n];
    let mut it = 0;
    loop {
        let mut next = vec![(1.0 - lambda) * p0; n];
        for i in 0..n {
            for j in 0..n {
                next[j] += lambda * p3[i][j] * p[i];
            }
        }
        let diff: f64 = next.iter().zip(&p).map(|(a, b)| (a - b).abs()).sum();
        p = next;
        it += 1;
        if diff < eps {
            return (p, it);
        }
    }
}

/// R, N, S straight from RNS.md against full-graph matrices: `p3` the full P3, `marg` the full
/// marginal vector, `emb(x)` the embedding row of node x. Returns (R, N, S).
pub fn full_rns(
    p3: &Dense,
    marg: &[f64],
    emb: &dyn Fn(usize) -> Vec<f64>,
    ae: &[usize],
    as_: &[usize],
) -> (f64, f64, f64) {
    let delta = 1e-12;
    let a: Vec<usize> = ae.iter().chain(as_).copied().collect();
    let z: f64 = a.iter().map(|&x| marg[x]).sum();
    let pi = |x: usize| marg[x] / z;
    // S's rows: the walk from i that leaves its start, conditioned on landing in A.
    let off = |i: usize, x: usize| if i == x { delta } else { p3[i][x] + delta };
    let t = |i: usize, x: usize| off(i, x) / a.iter().map(|&y| off(i, y)).sum::<f64>();
    let norm = |v: Vec<f64>| {
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n > 0.0 {
            v.iter().map(|x| x / n).collect()
        } else {
            v
        }
    };
    let mut r = 0.0;
    for &i in as_ {
        for &j in ae {
            let (u, v) = (norm(emb(i)), norm(emb(j)));
            r += u
                .iter()
                .zip(&v)
                .map(|(x, y)| (x - y) * (x - y))
                .sum::<f64>()
                .sqrt()
                / 2.0;
        }
    }
    let r = 1.0 - r / (ae.len() * as_.len()) as f64;
    // Novelty (docs/RNS.md): the walk from Ae that leaves its start, landing in As.
    let ze: f64 = ae.iter().map(|&i| pi(i)).sum();
    let mut observed = 0.0;
    for &i in ae {
        let leave = if 1.0 - p3[i][i] > 1e-15 {
            1.0 / (1.0 - p3[i][i])
        } else {
            0.0
        };
        for &j in as_ {
            observed += pi(i) / ze * p3[i][j] * leave;
        }
    }
    // Mixed with a background draw from A's marginals (ε = 2⁻²⁰), on a 40-bit scale.
    let eps = 1.0 / 1_048_576.0;
    let prior: f64 = as_.iter().map(|&j| pi(j)).sum();
    let novelty = (-((1.0 - eps) * observed + eps * prior + delta).log2() / 40.0).clamp(0.0, 1.0);
    let pe: Vec<f64> = a
        .iter()
        .map(|&x| ae.iter().map(|&i| t(i, x)).sum::<f64>() / ae.len() as f64)
        .collect();
    let ps: Vec<f64> = a
        .iter()
        .map(|&x| as_.iter().map(|&j| t(j, x)).sum::<f64>() / as_.len() as f64)
        .collect();
    let mut jsd = 0.0;
    for k in 0..a.len() {
        let m = (pe[k] + ps[k]) / 2.0;
        jsd += 0.5 * ps[k] * (ps[k] / m).log2() + 0.5 * pe[k] * (pe[k] / m).log2();
    }
    (r, novelty, jsd)
}

pub fn node(i: usize) -> NodeId {
    i as NodeId
}

/// The exact fixed point of Algorithm 2: (I − λP3ᵀ) p = (1 − λ)/V, by Gaussian elimination with
/// partial pivoting (fine for tiny graphs).
pub fn dense_exact_marginals(p3: &Dense, lambda: f64) -> Vec<f64> {
    let n = p3.len();
    let mut a: Vec<Vec<f64>> = (0..n)
        .map(|j| {
            let mut row: Vec<f64> = (0..n)
                .map(|i| f64::from(u8::from(i == j)) - lambda * p3[i][j])
                .collect();
            row.push((1.0 - lambda) / n as f64);
            row
        })
        .collect();
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .unwrap_or(col);
        a.swap(col, piv);
        let pivot = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot[col];
                for (x, p) in row[col..].iter_mut().zip(&pivot[col..]) {
                    *x -= f * p;
                }
            }
        }
    }
    (0..n).map(|i| a[i][n] / a[i][i]).collect()
}
