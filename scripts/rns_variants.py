#!/usr/bin/env python3
"""Compare variants of the RNS terms on the questionnaire's FITTING batches (1-10) only.

Input: the dump written by
    serenqa rns heldout --fit-batches --ae candidates --dump FILE
(one JSON line per linked question: its candidates in ensemble order with R, N, S and node
statistics, the P3 block and the marginals of the slice, and the slice's embeddings).
The script refuses a dump that holds a held-out batch (11-14).

For each variant it recomputes the per-candidate terms RNS(Ac minus {c}, {c}) from the slice,
fits (alpha, beta, gamma) on the grid |a|+|b|+|g| = 1 (step 0.05, signs free) by mean top-b +
mean Spearman, exactly as `serenqa rns fit` does (top-b here takes the b best single scores,
which for b = 1 - every list under 10 candidates - is what the greedy swap picks; ties are
broken by node key, never by position, which is the ensemble's order), and reports
  - the in-sample fit,
  - leave-one-batch-out (LOBO): each batch scored with the weights fitted on the other nine,
  - the LOBO difference to the shipped definition with a 95% CI from resampling whole batches.
A variant is worth adopting only when that CI is above 0 AND its in-sample fit differs:
two variants with the same fitted weights and the same in-sample scores can still differ in
LOBO only because a fold picked another grid point - selection noise, not a better term.

`--per-type DUMP` instead fits one weight triple per answer type (drug questions, gene
questions) on the shipped Ae and compares its LOBO with the one shared fit.

Pure Python (no numpy): about a minute per variant on one core, a few minutes in all.
"""
import json
import math
import random
import sys

EPS = 2.0 ** -20  # shared::rns::PRIOR_MIX
DELTA = 1e-12  # shared::rns::DELTA
BITS = 40.0  # shared::rns::NOVELTY_BITS
FIT_BATCHES = range(1, 11)


def load(path):
    qs = []
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d["batch"] not in FIT_BATCHES:
                sys.exit(f"{path}: batch {d['batch']} is held out; dump with --fit-batches only")
            n = len(d["c"])
            B = [d["block"][r * n:(r + 1) * n] for r in range(n)]
            dim = d.get("dim", 0)
            emb = d.get("embeddings", [])
            E = [unit(emb[r * dim:(r + 1) * dim]) if dim else [] for r in range(n)]
            if "keys" not in d:
                sys.exit(f"{path}: no node keys (needed to break ties as the program does); dump again")
            q = {"batch": d["batch"], "c": d["c"], "B": B, "P": d["marginals"], "E": E, "n": n,
                 "tie": d["keys"][:n]}
            w = d.get("wide")
            if w:
                # Candidates first, then the entities the question names (its `resource`).
                N = len(w["marginals"])
                q["wide"] = {
                    "B": [w["block"][r * N:(r + 1) * N] for r in range(N)],
                    "P": w["marginals"],
                    "E": [unit(w["embeddings"][r * dim:(r + 1) * dim]) for r in range(N)],
                    "N": N,
                }
            qs.append(q)
    return qs


def unit(v):
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm > 0 else list(v)


def jsd(p, q):
    acc = 0.0
    for a, b in zip(p, q):
        m = (a + b) / 2
        if a > 0:
            acc += a * math.log2(a / m)
        if b > 0:
            acc += b * math.log2(b / m)
    return min(1.0, max(0.0, acc / 2))


def leave(b_ii):
    rest = 1.0 - b_ii
    return 1.0 / rest if rest > 1e-15 else 0.0


def info_bits(q, c):
    n, B, P = q["n"], q["B"], q["P"]
    z = sum(P)
    pi = [p / z for p in P]
    ze = sum(pi[i] for i in range(n) if i != c)
    o = sum(pi[i] / ze * B[i][c] * leave(B[i][i]) for i in range(n) if i != c)
    return -math.log2((1 - EPS) * o + EPS * pi[c] + DELTA)


def rows(q, diagonal):
    n, B = q["n"], q["B"]
    T = []
    for i in range(n):
        row = [(0.0 if (x == i and not diagonal) else B[i][x]) + DELTA for x in range(n)]
        s = sum(row)
        T.append([v / s for v in row])
    return T


def rows_outside(q):
    """Leaving walks over A and one 'outside A' bucket (no renormalisation to A)."""
    n, B = q["n"], q["B"]
    T = []
    for i in range(n):
        lf = leave(B[i][i])
        row = [0.0 if x == i else B[i][x] * lf for x in range(n)]
        row.append(max(0.0, 1.0 - sum(row)))
        T.append(row)
    return T


def surprise(T, c):
    n = len(T)
    ae = [i for i in range(n) if i != c]
    pe = [sum(T[i][x] for i in ae) / len(ae) for x in range(len(T[0]))]
    return jsd(T[c], pe)


def dist(u, v):
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(u, v))) * 0.5


def relevance(q, c, how):
    d = [dist(q["E"][c], q["E"][j]) for j in range(q["n"]) if j != c]
    return 1.0 - (min(d) if how == "min" else sum(d) / len(d))


# Each variant: per question, a list of (R, N, S) per candidate.
def v_shipped(q):
    return [(c["r"], c["n"], c["s"]) for c in q["c"]]


def v_s_with_self(q):
    T = rows(q, diagonal=True)
    return [(c["r"], c["n"], surprise(T, k)) for k, c in enumerate(q["c"])]


def v_s_outside(q):
    T = rows_outside(q)
    return [(c["r"], c["n"], surprise(T, k)) for k, c in enumerate(q["c"])]


def v_n_soft(h):
    def f(q):
        return [(c["r"], info_bits(q, k) / (info_bits(q, k) + h), c["s"]) for k, c in enumerate(q["c"])]
    return f


def v_r_nearest(q):
    return [(relevance(q, k, "min"), c["n"], c["s"]) for k, c in enumerate(q["c"])]


def anchored_terms(q, c):
    """RNS(Ae, {c}) with Ae = the other candidates + the entities the question names."""
    w = q.get("wide")
    if not w or w["N"] == q["n"]:
        return None
    B, P, E = w["B"], w["P"], w["E"]
    ae = [i for i in range(w["N"]) if i != c]
    A = ae + [c]
    z = sum(P[i] for i in A)
    ze = sum(P[i] for i in ae)
    o = sum(P[i] / ze * B[i][c] * leave(B[i][i]) for i in ae)
    bits = -math.log2((1 - EPS) * o + EPS * P[c] / z + DELTA)
    r = 1.0 - sum(dist(E[c], E[j]) for j in ae) / len(ae)
    T = []
    for i in A:
        row = [(0.0 if x == i else B[i][x]) + DELTA for x in A]
        s = sum(row)
        T.append([v / s for v in row])
    pe = [sum(T[k][x] for k in range(len(ae))) / len(ae) for x in range(len(A))]
    return r, min(1.0, bits / BITS), jsd(T[-1], pe)


def v_anchored(q):
    out = []
    for k, c in enumerate(q["c"]):
        t = anchored_terms(q, k)
        out.append(t if t is not None else (c["r"], c["n"], c["s"]))
    return out


VARIANTS = [
    ("shipped: R mean distance, N = I/40, S over leaving walks (rows renormalised in A)", v_shipped),
    ("S with return-to-self (the paper's rows; shipped until session 28)", v_s_with_self),
    ("S over leaving walks + an outside-A bucket", v_s_outside),
    ("N = I/(I + 4)", v_n_soft(4.0)),
    ("N = I/(I + 8)", v_n_soft(8.0)),
    ("R = 1 - distance to the nearest other candidate", v_r_nearest),
    ("Ae = the other candidates + the entities the question names", v_anchored),
]


def avg_ranks(x):
    idx = sorted(range(len(x)), key=lambda k: x[k])
    r = [0.0] * len(x)
    i = 0
    while i < len(idx):
        j = i
        while j + 1 < len(idx) and x[idx[j + 1]] == x[idx[i]]:
            j += 1
        for k in idx[i:j + 1]:
            r[k] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman_vs_ensemble(x):
    m = len(x)
    rx = avg_ranks(x)
    ry = [float(m - k) for k in range(m)]  # ensemble order: position 0 is rank 1 (best)
    mx, my = sum(rx) / m, sum(ry) / m
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else 0.0


def question_score(scores, tie):
    """Top-b agreement and Spearman of one question. `scores` are in ensemble order, so ties
    must NOT be broken by position (that would hand a tied score the ensemble's own order):
    they are broken by `tie`, each candidate's node key, as the program breaks them by node."""
    m = len(scores)
    b = max(1, m // 5)
    top = sorted(range(m), key=lambda k: (-round(scores[k], 12), tie[k]))[:b]
    return sum(1 for k in top if k < b) / b, spearman_vs_ensemble([round(s, 12) for s in scores])


def grid(step=0.05):
    k = round(1 / step)
    out = []
    for a in range(-k, k + 1):
        for b in range(-(k - abs(a)), k - abs(a) + 1):
            c = k - abs(a) - abs(b)
            for sg in ([1] if c == 0 else [-1, 1]):
                out.append((a / k, b / k, sg * c / k))
    return out


def fit(qs, terms):
    G = grid()
    per = [[question_score([w[0] * r + w[1] * n + w[2] * s for r, n, s in t], q["tie"]) for q, t in zip(qs, terms)]
           for w in G]

    def best(keep):
        top, arg = -1e300, 0
        for gi, scores in enumerate(per):
            kept = [s for i, s in enumerate(scores) if keep(i)]
            v = sum(a for a, _ in kept) / len(kept) + sum(b for _, b in kept) / len(kept)
            if v > top + 1e-12:
                top, arg = v, gi
        return arg

    all_ = best(lambda i: True)
    cv = [None] * len(qs)
    for b in sorted({q["batch"] for q in qs}):
        k = best(lambda i: qs[i]["batch"] != b)
        for i, q in enumerate(qs):
            if q["batch"] == b:
                cv[i] = per[k][i]
    return G[all_], per[all_], cv


def mean(x):
    return sum(x) / len(x)


def bootstrap_diff(a, b, batches, seed=7, draws=2000):
    """Mean of a − b with a 95% CI from resampling whole batches (a cluster bootstrap): each
    fold's weights are one draw per batch, so resampling single questions would treat that
    choice as fixed and give far too narrow an interval."""
    by = {}
    for x, y, bt in zip(a, b, batches):
        by.setdefault(bt, []).append(x - y)
    keys = sorted(by)
    rng = random.Random(seed)
    means = []
    for _ in range(draws):
        pick = [by[keys[rng.randrange(len(keys))]] for _ in keys]
        flat = [v for grp in pick for v in grp]
        means.append(mean(flat))
    means.sort()
    return mean([x - y for x, y in zip(a, b)]), means[int(0.025 * (draws - 1))], means[int(0.975 * (draws - 1))]


def compare_cv(path_a, path_b):
    """Question-by-question LOBO of two `serenqa rns fit --cv-out` files (B − A), with the
    batch-resampled CI: how a variant implemented in the program (e.g. `--ae with-named`)
    compares with another, judged on the fitting batches alone."""
    def read(path):
        out = {}
        with open(path) as f:
            for line in f:
                d = json.loads(line)
                if d["batch"] not in FIT_BATCHES:
                    sys.exit(f"{path}: batch {d['batch']} is held out")
                out[(d["batch"], d["qid"])] = d["top_b"] + d["spearman"]
        return out
    a, b = read(path_a), read(path_b)
    keys = sorted(set(a) & set(b))
    if not keys:
        sys.exit("the two files share no question")
    m, lo, hi = bootstrap_diff([b[k] for k in keys], [a[k] for k in keys], [k[0] for k in keys])
    print(f"{len(keys)} questions in both ({len(a)} in A, {len(b)} in B)")
    print(f"LOBO top-b + Spearman: A {mean([a[k] for k in keys]):.3f}, B {mean([b[k] for k in keys]):.3f}")
    print(f"B − A: {m:+.3f} [95% CI, batches resampled: {lo:+.3f}, {hi:+.3f}]")


def answer_type(q):
    types = {c["type"] for c in q["c"]}
    return types.pop() if len(types) == 1 else "mixed"


def per_type(path):
    """One weight triple per answer type (drug questions, gene questions) against one for all,
    both on the shipped Ae (the other candidates + the named entities), judged by LOBO."""
    qs = load(path)
    terms = [v_anchored(q) for q in qs]
    types = [answer_type(q) for q in qs]
    w, ins, cv = fit(qs, terms)
    print(f"one fit for all {len(qs)} questions: ({w[0]:+.2f}, {w[1]:+.2f}, {w[2]:+.2f}), "
          f"LOBO top-b {mean([a for a, _ in cv]):.3f}, ρ {mean([b for _, b in cv]):.3f}")
    cv_t = list(cv)
    for t in sorted(set(types)):
        idx = [i for i, x in enumerate(types) if x == t]
        wt, _, cvt = fit([qs[i] for i in idx], [terms[i] for i in idx])
        print(f"{t} ({len(idx)} questions): ({wt[0]:+.2f}, {wt[1]:+.2f}, {wt[2]:+.2f}), "
              f"LOBO top-b {mean([a for a, _ in cvt]):.3f}, ρ {mean([b for _, b in cvt]):.3f} "
              f"(one fit for all, same questions: {mean([cv[i][0] for i in idx]):.3f}, {mean([cv[i][1] for i in idx]):.3f})")
        for k, i in enumerate(idx):
            cv_t[i] = cvt[k]
    m, lo, hi = bootstrap_diff([a + b for a, b in cv_t], [a + b for a, b in cv], [q["batch"] for q in qs])
    print(f"LOBO (top-b + ρ), per type − one fit: {m:+.3f} [95% CI, batches resampled: {lo:+.3f}, {hi:+.3f}]")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--cv":
        return compare_cv(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 3 and sys.argv[1] == "--per-type":
        return per_type(sys.argv[2])
    if len(sys.argv) != 2:
        sys.exit("usage: rns_variants.py DUMP  (from `serenqa rns heldout --fit-batches --ae candidates --dump DUMP`)\n"
                 "       rns_variants.py --cv A B  (two `serenqa rns fit --cv-out` files)\n"
                 "       rns_variants.py --per-type DUMP  (one weight triple per answer type vs one for all)")
    qs = load(sys.argv[1])
    print(f"{len(qs)} questions, batches {sorted({q['batch'] for q in qs})}\n")
    print("| variant | fitted (α, β, γ) | fit top-b | fit ρ | LOBO top-b | LOBO ρ | LOBO (top-b + ρ) − shipped [95% CI] |")
    print("|---|---|---:|---:|---:|---:|---|")
    ref = None
    for name, f in VARIANTS:
        terms = [f(q) for q in qs]
        w, ins, cv = fit(qs, terms)
        obj = [a + b for a, b in cv]
        if ref is None:
            ref = obj
            diff = "—"
        else:
            m, lo, hi = bootstrap_diff(obj, ref, [q["batch"] for q in qs])
            diff = f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        print(
            f"| {name} | ({w[0]:+.2f}, {w[1]:+.2f}, {w[2]:+.2f}) | {mean([a for a, _ in ins]):.3f} | "
            f"{mean([b for _, b in ins]):.3f} | {mean([a for a, _ in cv]):.3f} | {mean([b for _, b in cv]):.3f} | {diff} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
