#!/usr/bin/env python3
"""Does another random walk make RNS agree better with the SerenQA ensemble? Judged on the
questionnaire's FITTING batches (1-10) only, by the rule of docs/RNS.md ("Choosing between
variants of a term"): the in-sample fit must differ and the leave-one-batch-out (LOBO) gain
must clear the selection noise (+0.087) with a batch-resampled 95% CI above 0.

Input: the dump of `serenqa rns heldout --fit-batches --ae candidates --dump DUMP` (it holds,
per question, the candidates in ensemble order, the node keys of the candidates and of the
entities the question names, and the slice's embeddings, block and marginals) and the
Hetionet files (`$SERENQA_DATA`, else ./data, else ../shared/data).

The walks compared, all undirected (W = M + M^T with edge multiplicities, as the model):
  - shipped: P1[u][v] = (edges u-v) / degree(u)  - a hub's many edges of one kind (a gene's
    anatomy and biological-process edges, a compound's side effects) take most of the walk;
  - metaedge-balanced: from u, pick one of the metaedges u has uniformly, then one of u's
    edges of that metaedge uniformly: P1[u][v] = sum over edges e of u-v of
    1 / (|metaedges(u)| * degree_{metaedge(e)}(u)). A drug's few `treats` edges weigh as much
    as its hundred side effects;
  - degree-damped: an edge u-v weighs degree(v)^-0.4 (see `p1_damped`): walks avoid hubs;
  - near hops first: the shipped P1 with P3 = 3 P1/6 + 2 P1^2/6 + P1^3/6;
  - one hop: the shipped P1 with P3 = P1 (only direct edges).
P3 = P1/6 + 2 P1^2/6 + 3 P1^3/6 (unless stated) and the marginals (Algorithm 2, lambda 0.85,
eps 1e-10, with the same hop weights) are recomputed for each walk. Extra arguments keep
only the variants whose names contain one of them (the shipped walk always runs). The script first checks that its shipped walk reproduces the
dump's blocks and marginals (an independent re-implementation of the model), then scores
RNS(Ae, {c}) for every candidate c with Ae = the other candidates + the named entities, with
the shipped terms (R mean distance, N = I/40 with the 2^-20 background draw, S over the
leaving walks renormalised in A), fits (alpha, beta, gamma) on the 0.05 grid by mean top-b +
mean Spearman, and prints in-sample, LOBO and the LOBO difference with its CI.

    pip install numpy scipy
    python3 scripts/rns_walk_variant.py DUMP [VARIANT-SUBSTRING ...]
"""
import gzip
import math
import os
import sys

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rns_variants as rv  # noqa: E402  (grid fit, LOBO, batch bootstrap, JSD: one home)

import json  # noqa: E402

LAMBDA, TOL = 0.85, 1e-10
ALPHA = (1 / 6, 2 / 6, 3 / 6)


def data_dir():
    for d in (os.environ.get("SERENQA_DATA"), "data", "../shared/data"):
        if d and os.path.exists(os.path.join(d, "hetionet", "hetionet-edges.sif.gz")):
            return os.path.join(d, "hetionet")
    sys.exit("no Hetionet: set SERENQA_DATA")


def load_graph():
    d = data_dir()
    keys = {}
    with gzip.open(os.path.join(d, "hetionet-nodes.tsv.gz"), "rt") as f:
        next(f)
        for line in f:
            keys[line.split("\t", 1)[0]] = len(keys)
    src, dst, rel, rels = [], [], [], {}
    with gzip.open(os.path.join(d, "hetionet-edges.sif.gz"), "rt") as f:
        next(f)
        for line in f:
            s, m, t = line.rstrip("\n").split("\t")
            src.append(keys[s])
            dst.append(keys[t])
            rel.append(rels.setdefault(m, len(rels)))
    return keys, np.array(src), np.array(dst), np.array(rel), len(rels)


def p1_shipped(n, s, t):
    u = np.concatenate([s, t])
    v = np.concatenate([t, s])
    w = sp.csr_matrix((np.ones(len(u)), (u, v)), shape=(n, n))
    return normalise(w)


def normalise(w):
    deg = np.asarray(w.sum(axis=1)).ravel()
    dangling = deg == 0
    inv = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, deg))
    p = sp.diags(inv) @ w
    return (p + sp.diags(dangling.astype(float))).tocsr()


def p1_damped(n, s, t, w=0.4):
    """Degree-damped walk: an edge u-v weighs degree(v)^-w before normalising (w = 0.4, the
    damping exponent of Hetionet's degree-weighted path count, Himmelstein et al. 2017, chosen
    there for Project Rephetio - not tuned here): walks avoid hubs."""
    u = np.concatenate([s, t])
    v = np.concatenate([t, s])
    deg = np.bincount(u, minlength=n).astype(float)
    return normalise(sp.csr_matrix((deg[v] ** -w, (u, v)), shape=(n, n)))


def p1_balanced(n, s, t, r, nrel):
    u = np.concatenate([s, t])
    v = np.concatenate([t, s])
    rr = np.concatenate([r, r])
    # degree of u within each metaedge, and the number of metaedges u has
    key = u.astype(np.int64) * nrel + rr
    uniq, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    per_type = cnt[inv].astype(float)
    kinds = np.bincount(uniq // nrel, minlength=n).astype(float)
    w = 1.0 / (kinds[u] * per_type)
    p = sp.csr_matrix((w, (u, v)), shape=(n, n))
    dangling = kinds == 0
    return (p + sp.diags(dangling.astype(float))).tocsr()


def p3_rows(p1t, nodes, cols, alpha=ALPHA, chunk=400):
    """Rows `nodes` of P3 restricted to columns `cols` (P3 = sum_h alpha_h P1^h)."""
    out = np.zeros((len(nodes), len(cols)))
    for a in range(0, len(nodes), chunk):
        idx = nodes[a:a + chunk]
        x = np.zeros((p1t.shape[0], len(idx)))
        x[idx, np.arange(len(idx))] = 1.0
        acc = np.zeros((len(cols), len(idx)))
        for h in range(3):
            x = p1t @ x
            acc += alpha[h] * x[cols, :]
        out[a:a + chunk, :] = acc.T
    return out


def marginals(p1t, n, alpha=ALPHA):
    p0 = np.full(n, 1.0 / n)
    p = p0.copy()
    for _ in range(1000):
        h1 = p1t @ p
        h2 = p1t @ h1
        h3 = p1t @ h2
        q = LAMBDA * (alpha[0] * h1 + alpha[1] * h2 + alpha[2] * h3) + (1 - LAMBDA) * p0
        done = np.abs(q - p).sum() < TOL
        p = q
        if done:
            break
    return p / p.sum()


def anchored_terms(B, P, E, c):
    """RNS(Ae, {c}) terms with Ae = every other row (shipped definitions, docs/RNS.md)."""
    N = len(P)
    ae = [i for i in range(N) if i != c]
    A = ae + [c]
    z = sum(P[i] for i in A)
    ze = sum(P[i] for i in ae)
    o = sum(P[i] / ze * B[i][c] * rv.leave(B[i][i]) for i in ae)
    bits = -math.log2((1 - rv.EPS) * o + rv.EPS * P[c] / z + rv.DELTA)
    r = 1.0 - sum(rv.dist(E[c], E[j]) for j in ae) / len(ae)
    T = []
    for i in A:
        row = [(0.0 if x == i else B[i][x]) + rv.DELTA for x in A]
        s = sum(row)
        T.append([v / s for v in row])
    pe = [sum(T[k][x] for k in range(len(ae))) / len(ae) for x in range(len(A))]
    return r, min(1.0, bits / rv.BITS), rv.jsd(T[-1], pe)


def main(path, only):
    qs = []
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d["batch"] not in rv.FIT_BATCHES:
                sys.exit(f"{path}: batch {d['batch']} is held out; dump with --fit-batches only")
            if "keys" not in d or not d.get("wide"):
                sys.exit(f"{path}: no node keys or wide slice; dump with a newer `serenqa rns heldout`")
            qs.append(d)
    keys, s, t, r, nrel = load_graph()
    n = len(keys)
    print(f"{len(qs)} questions; graph {n} nodes, {len(s)} edges, {nrel} metaedges", flush=True)
    union = sorted({keys[k] for d in qs for k in d["keys"]})
    col = {x: i for i, x in enumerate(union)}
    cols = np.array(union)
    walks = {}
    shipped = p1_shipped(n, s, t)
    variants = [("shipped", lambda: shipped, ALPHA),
                ("metaedge-balanced", lambda: p1_balanced(n, s, t, r, nrel), ALPHA),
                ("degree-damped (w = 0.4)", lambda: p1_damped(n, s, t), ALPHA),
                ("near hops first (3/6, 2/6, 1/6)", lambda: shipped, (3 / 6, 2 / 6, 1 / 6)),
                ("one hop (P1 only)", lambda: shipped, (1.0, 0.0, 0.0))]
    if only:
        variants = [v for v in variants if v[0] == "shipped" or any(o in v[0] for o in only)]
    for name, make, alpha in variants:
        p1t = make().T.tocsr()
        walks[name] = (p3_rows(p1t, cols, cols, alpha), marginals(p1t, n, alpha))
        print(f"{name}: P3 rows for {len(union)} nodes and marginals done", flush=True)

    # Independent check: the shipped walk must reproduce the program's slices.
    blk, mar = walks["shipped"]
    worst_b = worst_m = 0.0
    for d in qs:
        ids = [col[keys[k]] for k in d["keys"]]
        N = len(ids)
        ours = blk[np.ix_(ids, ids)].ravel()
        theirs = np.array(d["wide"]["block"])
        worst_b = max(worst_b, float(np.max(np.abs(ours - theirs))))
        pm = mar[[union[i] for i in ids]]
        tm = np.array(d["wide"]["marginals"])
        worst_m = max(worst_m, float(np.max(np.abs(pm / pm.sum() - tm / tm.sum()))))
        assert N == len(d["wide"]["marginals"])
    print(f"check against the program's slices: block max |diff| {worst_b:.2e}, restricted marginals {worst_m:.2e}")
    if worst_b > 1e-9 or worst_m > 1e-6:
        sys.exit("the shipped walk does not reproduce the program's slices: stop")

    res = {}
    for name, (blk, mar) in walks.items():
        terms = []
        for d in qs:
            ids = [col[keys[k]] for k in d["keys"]]
            B = blk[np.ix_(ids, ids)].tolist()
            P = mar[[union[i] for i in ids]].tolist()
            N, dim = len(ids), d["dim"]
            E = [rv.unit(d["wide"]["embeddings"][k * dim:(k + 1) * dim]) for k in range(N)]
            terms.append([anchored_terms(B, P, E, k) for k in range(len(d["c"]))])
        fq = [{"batch": d["batch"], "tie": d["keys"][:len(d["c"])]} for d in qs]
        w, ins, cv = rv.fit(fq, terms)
        res[name] = (w, ins, cv)
        print(f"| {name} | ({w[0]:+.2f}, {w[1]:+.2f}, {w[2]:+.2f}) | {rv.mean([a for a, _ in ins]):.3f} | "
              f"{rv.mean([b for _, b in ins]):.3f} | {rv.mean([a for a, _ in cv]):.3f} | "
              f"{rv.mean([b for _, b in cv]):.3f} |", flush=True)
    b = [x + y for x, y in res["shipped"][2]]
    for name, _, _ in variants[1:]:
        a = [x + y for x, y in res[name][2]]
        m, lo, hi = rv.bootstrap_diff(a, b, [d["batch"] for d in qs])
        print(f"LOBO (top-b + ρ), {name} − shipped: {m:+.3f} [95% CI, batches resampled: {lo:+.3f}, {hi:+.3f}]")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: rns_walk_variant.py DUMP [VARIANT-SUBSTRING ...]  "
                 "(DUMP from `serenqa rns heldout --fit-batches --ae candidates --dump DUMP`)")
    main(sys.argv[1], sys.argv[2:])
