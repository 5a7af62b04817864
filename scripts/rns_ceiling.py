#!/usr/bin/env python3
"""How well can ANY score built from what the graph knows order the ensemble's candidates?

A ceiling for issue 13's Spearman goal, measured on the questionnaire's FITTING batches
(1-10) only; the script refuses a dump that holds a held-out batch (11-14).

Input: the dump of `serenqa rns heldout --fit-batches --ae candidates --dump FILE` and the
Hetionet edge file (found as the program finds its data: $SERENQA_DATA, ./data, ../shared/data).

Each candidate gets node features the graph offers - its shipped terms R, N, S (Ae = the other
candidates + the entities the question names), its walk marginal P(x), degree, walk mass in
and out, return-to-self mass, and its degree per metaedge (log) - standardised within its
question, because only the order inside a question counts. Three learners are fitted
leave-one-batch-out (each batch scored by a model fitted on the other nine):
  - ridge regression on all features,
  - gradient-boosted trees (scikit-learn's HistGradientBoostingRegressor, default settings),
  - the shipped RNS weights (no fitting: the weights file's alpha, beta, gamma),
against the best baseline, lowest P(x). For each it reports mean per-question Spearman and
top-b, the LOBO difference to lowest P(x) with a 95% CI from resampling whole batches, and the
power figures on a set of 125 questions (the size of the held-out batches), from the spread of
the per-question differences: the half-width of a 95% CI of the difference, and the true gap a
test of that size would show with its CI above 0 four times in five (80% power: 2.80 standard
errors). Before the learners, a table of single scores by batch shows where the agreement is.

Needs numpy and scikit-learn (`pip install numpy scipy scikit-learn`).
"""
import gzip
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rns_variants as rv  # noqa: E402  (load, anchored terms, Spearman, top-b, bootstrap)

HELD_OUT_N = 125


def data_dir():
    for d in (os.environ.get("SERENQA_DATA"), "data", "../shared/data"):
        if d and os.path.exists(os.path.join(d, "hetionet", "hetionet-edges.sif.gz")):
            return d
    sys.exit("no Hetionet data: set SERENQA_DATA or put it in ./data or ../shared/data")


def metaedge_degrees(keys):
    """Degree of each wanted node per metaedge abbreviation (both directions)."""
    want = set(keys)
    deg = {}
    path = os.path.join(data_dir(), "hetionet", "hetionet-edges.sif.gz")
    with gzip.open(path, "rt") as f:
        next(f)
        for line in f:
            s, m, t = line.rstrip("\n").split("\t")
            if s in want:
                deg.setdefault(s, {}).setdefault(m, 0)
                deg[s][m] += 1
            if t in want:
                deg.setdefault(t, {}).setdefault(m, 0)
                deg[t][m] += 1
    return deg


def zscore(col):
    sd = col.std()
    return (col - col.mean()) / sd if sd > 1e-12 else np.zeros_like(col)


def question_matrix(q, metaedges, deg):
    anchored = rv.v_anchored(q)
    rows = []
    for k, c in enumerate(q["c"]):
        r, n, s = anchored[k]
        d = deg.get(q["tie"][k], {})
        rows.append([r, n, s,
                     math.log(c["marginal"] + 1e-12), math.log1p(c["degree"]),
                     math.log(c["in"] + 1e-12), math.log(c["out"] + 1e-12),
                     math.log(c["self"] + 1e-12)]
                    + [math.log1p(d.get(m, 0)) for m in metaedges])
    X = np.array(rows, dtype=float)
    return np.column_stack([zscore(X[:, j]) for j in range(X.shape[1])]), anchored


def target(m):
    """The ensemble's order as a standardised score: position 0 (rank 1) highest."""
    return zscore(np.array([float(m - k) for k in range(m)]))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.linear_model import Ridge

    qs = rv.load(sys.argv[1])
    keys = [k for q in qs for k in q["tie"]]
    deg = metaedge_degrees(keys)
    metaedges = sorted({m for d in deg.values() for m in d})
    mats = [question_matrix(q, metaedges, deg) for q in qs]
    weights = json.load(open(os.path.join(os.path.dirname(__file__), "..", "backend", "model",
                                          "rns-weights.json")))
    w = weights["weights"]
    a, b, g = w["alpha"], w["beta"], w["gamma"]

    batches = [q["batch"] for q in qs]
    scores = {"lowest P(x)": [], "shipped RNS": [], "ridge, all features": [],
              "boosted trees, all features": []}
    for i, (q, (X, anchored)) in enumerate(zip(qs, mats)):
        scores["lowest P(x)"].append(rv.question_score([-c["marginal"] for c in q["c"]], q["tie"]))
        scores["shipped RNS"].append(rv.question_score(
            [a * r + b * n + g * s for r, n, s in anchored], q["tie"]))
    fold_out = {"ridge, all features": {}, "boosted trees, all features": {}}
    for held in sorted(set(batches)):
        train = [i for i in range(len(qs)) if batches[i] != held]
        Xt = np.vstack([mats[i][0] for i in train])
        yt = np.concatenate([target(qs[i]["n"]) for i in train])
        models = {"ridge, all features": Ridge(alpha=1.0).fit(Xt, yt),
                  "boosted trees, all features": HistGradientBoostingRegressor(random_state=0).fit(Xt, yt)}
        for name, model in models.items():
            for i in range(len(qs)):
                if batches[i] == held:
                    fold_out[name][i] = rv.question_score(list(model.predict(mats[i][0])), qs[i]["tie"])
    for name, out in fold_out.items():
        scores[name] = [out[i] for i in range(len(qs))]
    X_all = np.vstack([m[0] for m in mats])
    y_all = np.concatenate([target(q["n"]) for q in qs])
    ridge_in = Ridge(alpha=1.0).fit(X_all, y_all)
    scores["ridge, all features, IN-SAMPLE"] = [
        rv.question_score(list(ridge_in.predict(m[0])), q["tie"]) for q, m in zip(qs, mats)]

    _, _, lobo_rns = rv.fit(qs, [m[1] for m in mats])
    scores["RNS, weights fitted per fold"] = lobo_rns
    scores["ridge, all features, IN-SAMPLE"] = scores.pop("ridge, all features, IN-SAMPLE")

    print("Mean per-question Spearman of single scores, by batch (the ensemble's order):")
    singles = [("lowest P(x)", lambda q, X, k: -q["c"][k]["marginal"]),
               ("N", lambda q, X, k: X[1][k][1]),
               ("-R", lambda q, X, k: -X[1][k][0]),
               ("fewest side effects", lambda q, X, k: -X[0][k, 8 + metaedges.index("CcSE")])]
    print(f"{'batch':>5} {'n':>4} {'drugs':>6} " + " ".join(f"{n:>20}" for n, _ in singles))
    for bt in sorted(set(batches)) + ["all"]:
        idx = [i for i in range(len(qs)) if bt == "all" or batches[i] == bt]
        drugs = sum(1 for i in idx if qs[i]["c"][0]["type"] == "Compound") / len(idx)
        cells = [rv.mean([rv.spearman_vs_ensemble([f(qs[i], mats[i], k) for k in range(qs[i]["n"])])
                          for i in idx]) for _, f in singles]
        print(f"{bt:>5} {len(idx):4} {drugs:6.0%} " + " ".join(f"{c:+20.3f}" for c in cells))
    print()

    base = scores["lowest P(x)"]
    print(f"{len(qs)} questions, batches 1-10; {len(metaedges)} metaedge degrees + 8 node/term features")
    print(f"{'score (LOBO for the fitted ones)':32} {'top-b':>6} {'rho':>6}   rho - lowest P(x) [95% CI, batches resampled]   at n={HELD_OUT_N}: CI half-width, gap needed for 80% power")
    for name, sc in scores.items():
        tb = rv.mean([t for t, _ in sc])
        rho = rv.mean([r for _, r in sc])
        line = f"{name:32} {tb:6.3f} {rho:6.3f}"
        if name != "lowest P(x)":
            d, lo, hi = rv.bootstrap_diff([r for _, r in sc], [r for _, r in base], batches)
            diffs = np.array([r - r0 for (_, r), (_, r0) in zip(sc, base)])
            se = diffs.std(ddof=1) / math.sqrt(HELD_OUT_N)
            line += f"   {d:+.3f} [{lo:+.3f}, {hi:+.3f}]        ±{1.96 * se:.3f}  {2.80 * se:.3f}"
        print(line)


if __name__ == "__main__":
    main()
