#!/usr/bin/env python3
"""scipy.sparse reference for serenqa's marginal computation (Algorithm 2), on the CSR
arrays exported by `serenqa-model-bench --export DIR`.

Same definition as the Rust code: W = M + M^T (edge multiplicities), P1 = D^-1 W with a
self-loop on dangling rows, P3 = P1/6 + 2 P1^2/6 + 3 P1^3/6, p0 = 1/V,
p_{t+1} = lambda P3^T p_t + (1 - lambda) p0 until ||p_{t+1} - p_t||_1 < eps.
Prints scipy's time (matrix build excluded, reported separately), iterations, the largest
difference from serenqa's marginals, and the time ratio scipy / serenqa, for three solvers on
scipy's side:
- the power iteration of Algorithm 2 as written;
- conjugate gradients on the symmetrised system, the solver serenqa uses for the undirected
  walk (same start q = 0, same stopping rule: the L1 residual of p = D^1/2 q), so the ratio is
  not only "fewer passes" but the same algorithm on both sides;
- shifted Lanczos (serenqa's default for the undirected walk): the same system, one product by S
  per Lanczos step, the three shifted systems of 1/h's partial fractions from one Lanczos
  process (pure Python loop over three shifts, complex vectors for the whole pair).
serenqa's own power-iteration time from the same export is printed too when present.

    pip install numpy scipy
    python3 bench/marginals_scipy.py DIR
"""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp


def main(d):
    h = json.load(open(f"{d}/header.json"))
    n = h["nodes"]
    indptr = np.fromfile(f"{d}/out_offsets.u64", dtype="<u8").astype(np.int64)
    indices = np.fromfile(f"{d}/out_targets.u32", dtype="<u4").astype(np.int32)
    ours = np.fromfile(f"{d}/marginals.f64", dtype="<f8")
    t0 = time.perf_counter()
    m = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(n, n))
    w = (m + m.T).tocsr() if not h["directed"] else m
    deg = np.asarray(w.sum(axis=1)).ravel()
    dangling = deg == 0
    inv = np.where(dangling, 1.0, 1.0 / np.maximum(deg, 1))
    wt = w.T.tocsr()
    build = time.perf_counter() - t0

    def p1t(x):
        return wt @ (x * inv) + np.where(dangling, x, 0.0)

    lam, eps = h["lambda"], h["epsilon"]
    p0 = 1.0 / n
    p = np.full(n, p0)
    t0 = time.perf_counter()
    it = 0
    while True:
        y1 = p1t(p)
        y2 = p1t(y1)
        y3 = p1t(y2)
        nxt = lam * (y1 / 6 + 2 * y2 / 6 + 3 * y3 / 6) + (1 - lam) * p0
        diff = np.abs(nxt - p).sum()
        p = nxt
        it += 1
        if diff < eps or it >= 1000:
            break
    secs = time.perf_counter() - t0

    # Conjugate gradients on (I - lam f(S)) q = D^-1/2 b, S = D^-1/2 W D^-1/2, p = D^1/2 q.
    t0 = time.perf_counter()
    s = np.sqrt(np.where(dangling, 1.0, deg))
    wl = w + sp.diags(np.where(dangling, 1.0, 0.0))
    sm = (sp.diags(1.0 / s) @ wl @ sp.diags(1.0 / s)).tocsr()
    cg_build = time.perf_counter() - t0

    def mat(x):
        y1 = sm @ x
        y2 = sm @ y1
        y3 = sm @ y2
        return x - lam * (y1 + 2 * y2 + 3 * y3) / 6

    t0 = time.perf_counter()
    c = (1 - lam) * p0 / s
    q = np.zeros(n)
    r = c.copy()
    d = r.copy()
    rr = r @ r
    cg_it = 0
    while True:
        md = mat(d)
        cg_it += 1
        alpha = rr / (d @ md)
        q += alpha * d
        r -= alpha * md
        if np.abs(r * s).sum() < eps:
            r = c - mat(q)  # the exact residual, as serenqa checks it
            cg_it += 1
            if np.abs(r * s).sum() < eps or cg_it >= 1000:
                break
            d = r.copy()
            rr = r @ r
            continue
        rr_new = r @ r
        d = r + (rr_new / rr) * d
        rr = rr_new
    pcg = q * s
    cg_secs = time.perf_counter() - t0

    # Shifted Lanczos (serenqa's default): one product by S per step; q = -sum a_i x_i with
    # (r_i I - S) x_i = c for the roots r_i of h(mu) = 1 - lam f(mu), all from one Lanczos
    # process (D-Lanczos recurrences per shift); the exact residual checked as serenqa does.
    all_roots = np.roots([-lam * 3 / 6, -lam * 2 / 6, -lam / 6, 1.0])
    # the real root, and one of the complex pair counted twice (its conjugate gives the
    # conjugate solution)
    roots = [all_roots[np.argmin(np.abs(all_roots.imag))].real,
             all_roots[np.argmax(all_roots.imag)]]
    dh = lambda m: -lam * (1 / 6 + 2 * 2 / 6 * m + 3 * 3 / 6 * m * m)
    weights = [1.0 / dh(roots[0]), 2.0 / dh(roots[1])]
    t0 = time.perf_counter()
    ql = np.zeros(n)
    lz_it = 0
    start = c.copy()
    gamma = (1 - lam) / np.linalg.norm(c)
    while True:
        norm = np.linalg.norm(start)
        v, vp, beta = start / norm, np.zeros(n), 0.0
        ps = [np.zeros(n), np.zeros(n, dtype=complex)]
        eta = [1.0, 1.0 + 0j]
        zeta = [0.0, 0j]
        first = True
        while True:
            u = sm @ v
            lz_it += 1
            alpha = v @ u
            for i, r in enumerate(roots):
                if first:
                    eta[i], zeta[i] = r - alpha, norm
                else:
                    zeta[i] = beta * zeta[i] / eta[i]
                    eta[i] = r - alpha - beta * beta / eta[i]
                ps[i] = (v + beta * ps[i]) / eta[i]
                ql -= (weights[i] * zeta[i] * ps[i]).real
            first = False
            wv = u - alpha * v - beta * vp
            beta = np.linalg.norm(wv)
            vp, v = v, wv / beta
            est = beta * sum(abs(weights[i] * zeta[i] / eta[i]) for i in range(len(roots)))
            if est * gamma < 0.5 * eps or lz_it >= 1000:
                break
        r = c - mat(ql)
        lz_it += 3
        res = np.abs(r * s).sum()
        if res < eps or lz_it >= 1000:
            break
        gamma = res / est
        start = r
    plz = ql * s
    lz_secs = time.perf_counter() - t0

    o = h["ours"]
    out = {
        "nodes": n, "edges": len(indices),
        "scipy_build_seconds": round(build, 3),
        "scipy_power_seconds": round(secs, 3), "scipy_power_iterations": it,
        "scipy_cg_build_seconds": round(cg_build, 3),
        "scipy_cg_seconds": round(cg_secs, 3), "scipy_cg_applications": cg_it,
        "serenqa_solver": o["stats"].get("solver", "power"),
        "serenqa_seconds": round(o["stats"]["seconds"], 3), "serenqa_iterations": o["stats"]["iterations"],
        "ratio_scipy_power_over_serenqa": round(secs / o["stats"]["seconds"], 2),
        "ratio_scipy_cg_over_serenqa": round(cg_secs / o["stats"]["seconds"], 2),
        "scipy_lanczos_seconds": round(lz_secs, 3), "scipy_lanczos_passes": lz_it,
        "ratio_scipy_lanczos_over_serenqa": round(lz_secs / o["stats"]["seconds"], 2),
        "max_abs_diff_lanczos": float(np.abs(plz - ours).max()), "l1_diff_lanczos": float(np.abs(plz - ours).sum()),
        "max_abs_diff_power": float(np.abs(p - ours).max()), "l1_diff_power": float(np.abs(p - ours).sum()),
        "max_abs_diff_cg": float(np.abs(pcg - ours).max()), "l1_diff_cg": float(np.abs(pcg - ours).sum()),
    }
    base = o.get("baseline")
    if base:
        out["serenqa_power_seconds"] = round(base["power"]["seconds"], 3)
        out["serenqa_power_iterations"] = base["power"]["iterations"]
        out["ratio_scipy_power_over_serenqa_power"] = round(secs / base["power"]["seconds"], 2)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "target/scipy-export")
