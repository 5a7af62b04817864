//! Force-directed layout for explanation subgraphs (a few hundred nodes), computed in the
//! browser (wasm32) or on the server alike.
//!
//! Fruchterman–Reingold with a cooling schedule: pairwise repulsion k²/d, attraction d²/k along
//! edges, displacement capped by a temperature that falls linearly. O(n²) per iteration, which
//! for n ≤ 400 and 150 iterations is a few tens of milliseconds in WebAssembly. Deterministic:
//! the start is a circle with hashed jitter, so the same subgraph always looks the same.

/// Where each node goes, in a `width` × `height` box (origin top-left).
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub positions: Vec<(f64, f64)>,
}

#[derive(Clone, Copy, Debug)]
pub struct LayoutParams {
    pub width: f64,
    pub height: f64,
    pub iterations: usize,
}

impl Default for LayoutParams {
    fn default() -> Self {
        LayoutParams { width: 800.0, height: 600.0, iterations: 150 }
    }
}

fn jitter(i: usize) -> f64 {
    // SplitMix64 finaliser: a fixed pseudo-random value in [0, 1) per index.
    let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// Lays out `n` nodes joined by `edges` (pairs of node indexes; out-of-range pairs and
/// self-loops are ignored). `pinned[i] = Some((x, y))` keeps node i fixed (e.g. the query
/// disease in the centre).
pub fn force_layout(n: usize, edges: &[(usize, usize)], pinned: &[Option<(f64, f64)>], p: LayoutParams) -> Layout {
    if n == 0 {
        return Layout { positions: Vec::new() };
    }
    let (w, h) = (p.width.max(1.0), p.height.max(1.0));
    let (cx, cy) = (w / 2.0, h / 2.0);
    let r0 = 0.35 * w.min(h);
    let mut pos: Vec<(f64, f64)> = (0..n)
        .map(|i| {
            let a = std::f64::consts::TAU * (i as f64 + 0.5 * jitter(i)) / n as f64;
            let r = r0 * (0.6 + 0.4 * jitter(i + 7919));
            (cx + r * a.cos(), cy + r * a.sin())
        })
        .collect();
    for (i, pin) in pinned.iter().enumerate().take(n) {
        if let Some(xy) = pin {
            pos[i] = *xy;
        }
    }
    if n == 1 {
        return Layout { positions: pos };
    }
    let k = (w * h / n as f64).sqrt() * 0.8;
    let k2 = k * k;
    let edges: Vec<(usize, usize)> = edges.iter().copied().filter(|&(a, b)| a < n && b < n && a != b).collect();
    let mut disp = vec![(0.0f64, 0.0f64); n];
    let t0 = w.min(h) / 8.0;
    for it in 0..p.iterations {
        let temp = t0 * (1.0 - it as f64 / p.iterations as f64) + 0.5;
        disp.iter_mut().for_each(|d| *d = (0.0, 0.0));
        for i in 0..n {
            for j in (i + 1)..n {
                let (dx, dy) = (pos[i].0 - pos[j].0, pos[i].1 - pos[j].1);
                let d2 = (dx * dx + dy * dy).max(0.01);
                let f = k2 / d2; // = (k²/d) / d, so (dx, dy)·f has length k²/d
                disp[i].0 += dx * f;
                disp[i].1 += dy * f;
                disp[j].0 -= dx * f;
                disp[j].1 -= dy * f;
            }
        }
        for &(a, b) in &edges {
            let (dx, dy) = (pos[a].0 - pos[b].0, pos[a].1 - pos[b].1);
            let d = (dx * dx + dy * dy).sqrt().max(0.01);
            let f = d / k; // = (d²/k) / d
            disp[a].0 -= dx * f;
            disp[a].1 -= dy * f;
            disp[b].0 += dx * f;
            disp[b].1 += dy * f;
        }
        for i in 0..n {
            if pinned.get(i).copied().flatten().is_some() {
                continue;
            }
            // A weak pull to the centre keeps disconnected parts on screen.
            disp[i].0 += (cx - pos[i].0) * 0.02 * k / r0.max(1.0);
            disp[i].1 += (cy - pos[i].1) * 0.02 * k / r0.max(1.0);
            let (dx, dy) = disp[i];
            let len = (dx * dx + dy * dy).sqrt();
            if len > 0.0 {
                let step = len.min(temp);
                pos[i].0 = (pos[i].0 + dx / len * step).clamp(10.0, w - 10.0);
                pos[i].1 = (pos[i].1 + dy / len * step).clamp(10.0, h - 10.0);
            }
        }
    }
    Layout { positions: pos }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(a: (f64, f64), b: (f64, f64)) -> f64 {
        ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
    }

    #[test]
    fn deterministic_in_bounds_and_neighbours_closer() {
        // Two triangles joined by one edge.
        let edges = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (2, 3)];
        let p = LayoutParams { width: 400.0, height: 300.0, iterations: 200 };
        let a = force_layout(6, &edges, &[], p);
        let b = force_layout(6, &edges, &[], p);
        assert_eq!(a, b);
        for &(x, y) in &a.positions {
            assert!((0.0..=400.0).contains(&x) && (0.0..=300.0).contains(&y));
        }
        let within = (dist(a.positions[0], a.positions[1]) + dist(a.positions[3], a.positions[4])) / 2.0;
        let across = (dist(a.positions[0], a.positions[4]) + dist(a.positions[1], a.positions[5])) / 2.0;
        assert!(within < across, "within {within} across {across}");
    }

    #[test]
    fn pinned_nodes_stay_and_bad_edges_are_ignored() {
        let pins = [Some((50.0, 60.0)), None, None];
        let l = force_layout(3, &[(0, 1), (1, 2), (2, 9), (1, 1)], &pins, LayoutParams::default());
        assert_eq!(l.positions[0], (50.0, 60.0));
        assert_eq!(force_layout(0, &[], &[], LayoutParams::default()).positions.len(), 0);
        assert_eq!(force_layout(1, &[], &[], LayoutParams::default()).positions.len(), 1);
    }

    #[test]
    fn nodes_do_not_collapse() {
        let n = 60;
        let edges: Vec<(usize, usize)> = (1..n).map(|i| (0, i)).collect();
        let l = force_layout(n, &edges, &[], LayoutParams::default());
        let mut min = f64::MAX;
        for i in 0..n {
            for j in (i + 1)..n {
                min = min.min(dist(l.positions[i], l.positions[j]));
            }
        }
        assert!(min > 3.0, "closest pair {min}");
    }
}
