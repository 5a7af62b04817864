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
        LayoutParams {
            width: 800.0,
            height: 600.0,
            iterations: 150,
        }
    }
}

fn jitter(i: usize) -> f64 {
    // A fixed pseudo-random value in [0, 1) per index.
    crate::rng::unit_f64(crate::rng::splitmix64(i as u64))
}

/// Lays out `n` nodes joined by `edges` (pairs of node indexes; out-of-range pairs and
/// self-loops are ignored). `pinned[i] = Some((x, y))` keeps node i fixed (e.g. the query
/// disease in the centre).
pub fn force_layout(
    n: usize,
    edges: &[(usize, usize)],
    pinned: &[Option<(f64, f64)>],
    p: LayoutParams,
) -> Layout {
    if n == 0 {
        return Layout {
            positions: Vec::new(),
        };
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
    let edges: Vec<(usize, usize)> = edges
        .iter()
        .copied()
        .filter(|&(a, b)| a < n && b < n && a != b)
        .collect();
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

/// Moves nodes apart until their footprints — each node's box given relative to its position
/// (e.g. its circle and its name) — no longer overlap, or `passes` sweeps are spent: the force
/// layout spaces *points*, so two nodes a name's width apart on one row can still print their
/// names over each other, or print a name past the edge. First every free node is moved just
/// enough for its footprint to lie within the `width` × `height` box (where it fits); then
/// each sweep visits the pairs in index order and separates an overlapping pair along the
/// axis where they overlap least (for wide, short names: up or down), by half the overlap
/// each (all of it by the free one when the other is pinned), keeping footprints in the box.
/// Deterministic; a node whose footprint is in the box and overlaps nothing does not move.
/// Returns the number of overlapping pairs left (passes can run out where the box is crowded).
pub fn separate(
    pos: &mut [(f64, f64)],
    footprint: &[Rect],
    pinned: &[Option<(f64, f64)>],
    width: f64,
    height: f64,
    passes: usize,
) -> usize {
    let n = pos.len().min(footprint.len());
    let at = |pos: &[(f64, f64)], i: usize| placed(pos, footprint, i);
    let fixed = |i: usize| pinned.get(i).copied().flatten().is_some();
    // Keeps node i's footprint in the box where it fits (else its position within 10 units).
    let clamp = |p: &mut (f64, f64), i: usize| {
        let f = footprint[i];
        let (lo_x, hi_x) = (-f.x, width - (f.x + f.w));
        let (lo_y, hi_y) = (-f.y, height - (f.y + f.h));
        p.0 = if lo_x <= hi_x {
            p.0.clamp(lo_x, hi_x)
        } else {
            p.0.clamp(10.0, (width - 10.0).max(10.0))
        };
        p.1 = if lo_y <= hi_y {
            p.1.clamp(lo_y, hi_y)
        } else {
            p.1.clamp(10.0, (height - 10.0).max(10.0))
        };
    };
    for (i, p) in pos.iter_mut().enumerate().take(n) {
        if !fixed(i) {
            clamp(p, i);
        }
    }
    for _ in 0..passes {
        let mut moved = false;
        for i in 0..n {
            for j in (i + 1)..n {
                let (a, b) = (at(pos, i), at(pos, j));
                if !a.overlaps(&b) || (fixed(i) && fixed(j)) {
                    continue;
                }
                // Overlap along each axis, and which way j must go (away from i's centre).
                let ox = (a.x + a.w).min(b.x + b.w) - a.x.max(b.x);
                let oy = (a.y + a.h).min(b.y + b.h) - a.y.max(b.y);
                let ca = (a.x + a.w / 2.0, a.y + a.h / 2.0);
                let cb = (b.x + b.w / 2.0, b.y + b.h / 2.0);
                // Ties (identical centres) are broken by index, so the result is deterministic.
                let away = |d: f64| {
                    if d > 0.0 || (d == 0.0 && j > i) {
                        1.0
                    } else {
                        -1.0
                    }
                };
                let (dx, dy) = if oy <= ox {
                    (0.0, away(cb.1 - ca.1) * (oy + 0.5))
                } else {
                    (away(cb.0 - ca.0) * (ox + 0.5), 0.0)
                };
                let share_j = if fixed(i) {
                    1.0
                } else if fixed(j) {
                    0.0
                } else {
                    0.5
                };
                pos[j].0 += dx * share_j;
                pos[j].1 += dy * share_j;
                pos[i].0 -= dx * (1.0 - share_j);
                pos[i].1 -= dy * (1.0 - share_j);
                if !fixed(i) {
                    clamp(&mut pos[i], i);
                }
                if !fixed(j) {
                    clamp(&mut pos[j], j);
                }
                moved = true;
            }
        }
        if !moved {
            return 0;
        }
    }
    overlapping_pairs(pos, footprint)
}

/// Node i's footprint where it stands.
fn placed(pos: &[(f64, f64)], footprint: &[Rect], i: usize) -> Rect {
    Rect {
        x: pos[i].0 + footprint[i].x,
        y: pos[i].1 + footprint[i].y,
        w: footprint[i].w,
        h: footprint[i].h,
    }
}

/// How many pairs of nodes have overlapping footprints (each node's box relative to its
/// position, as for [`separate`]).
pub fn overlapping_pairs(pos: &[(f64, f64)], footprint: &[Rect]) -> usize {
    let n = pos.len().min(footprint.len());
    (0..n)
        .flat_map(|i| ((i + 1)..n).map(move |j| (i, j)))
        .filter(|&(i, j)| placed(pos, footprint, i).overlaps(&placed(pos, footprint, j)))
        .count()
}

/// An axis-aligned box: left, top, width, height.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

/// A straight edge: its two end points.
pub type Segment = ((f64, f64), (f64, f64));

/// Places edge labels so that no two overlap and none covers an obstacle (the nodes and their
/// names). `edges` are segments (from, to), `sizes` the labels' width and height. Each label
/// tries points along its edge, middle first, then a little to either side of the line; the
/// first free spot wins, in edge order (deterministic). A label with no free spot gets `None`:
/// the caller shows it only on hover or focus. Returns each label's centre.
pub fn place_labels(
    edges: &[Segment],
    sizes: &[(f64, f64)],
    obstacles: &[Rect],
) -> Vec<Option<(f64, f64)>> {
    const ALONG: [f64; 7] = [0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78];
    const ACROSS: [f64; 3] = [0.0, 1.0, -1.0];
    let mut placed: Vec<Rect> = Vec::with_capacity(edges.len());
    let mut out = Vec::with_capacity(edges.len());
    for (k, &((x1, y1), (x2, y2))) in edges.iter().enumerate() {
        let (w, h) = sizes.get(k).copied().unwrap_or((0.0, 0.0));
        let len = ((x2 - x1).powi(2) + (y2 - y1).powi(2)).sqrt();
        // Unit normal of the edge (straight up for a point-like edge).
        let (nx, ny) = if len > 1e-9 {
            (-(y2 - y1) / len, (x2 - x1) / len)
        } else {
            (0.0, -1.0)
        };
        let mut found = None;
        'search: for across in ACROSS {
            for t in ALONG {
                let off = across * (h * 0.5 + 2.0);
                let (cx, cy) = (x1 + (x2 - x1) * t + nx * off, y1 + (y2 - y1) * t + ny * off);
                let r = Rect {
                    x: cx - w / 2.0,
                    y: cy - h / 2.0,
                    w,
                    h,
                };
                if !placed.iter().chain(obstacles).any(|o| o.overlaps(&r)) {
                    placed.push(r);
                    found = Some((cx, cy));
                    break 'search;
                }
            }
        }
        out.push(found);
    }
    out
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
        let p = LayoutParams {
            width: 400.0,
            height: 300.0,
            iterations: 200,
        };
        let a = force_layout(6, &edges, &[], p);
        let b = force_layout(6, &edges, &[], p);
        assert_eq!(a, b);
        for &(x, y) in &a.positions {
            assert!((0.0..=400.0).contains(&x) && (0.0..=300.0).contains(&y));
        }
        let within =
            (dist(a.positions[0], a.positions[1]) + dist(a.positions[3], a.positions[4])) / 2.0;
        let across =
            (dist(a.positions[0], a.positions[4]) + dist(a.positions[1], a.positions[5])) / 2.0;
        assert!(within < across, "within {within} across {across}");
    }

    #[test]
    fn pinned_nodes_stay_and_bad_edges_are_ignored() {
        let pins = [Some((50.0, 60.0)), None, None];
        let l = force_layout(
            3,
            &[(0, 1), (1, 2), (2, 9), (1, 1)],
            &pins,
            LayoutParams::default(),
        );
        assert_eq!(l.positions[0], (50.0, 60.0));
        assert_eq!(
            force_layout(0, &[], &[], LayoutParams::default())
                .positions
                .len(),
            0
        );
        assert_eq!(
            force_layout(1, &[], &[], LayoutParams::default())
                .positions
                .len(),
            1
        );
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

    #[test]
    fn labels_never_overlap_each_other_or_obstacles() {
        use super::{place_labels, Rect};
        // Eight edges through one hub: their middles crowd together.
        let hub = (100.0, 100.0);
        let edges: Vec<_> = (0..8)
            .map(|i| {
                let a = i as f64 * std::f64::consts::PI / 4.0;
                (hub, (100.0 + 60.0 * a.cos(), 100.0 + 60.0 * a.sin()))
            })
            .collect();
        let sizes = vec![(40.0, 10.0); edges.len()];
        let node = Rect {
            x: 92.0,
            y: 92.0,
            w: 16.0,
            h: 16.0,
        };
        let got = place_labels(&edges, &sizes, &[node]);
        let rects: Vec<Rect> = got
            .iter()
            .zip(&sizes)
            .filter_map(|(p, s)| {
                p.map(|(x, y)| Rect {
                    x: x - s.0 / 2.0,
                    y: y - s.1 / 2.0,
                    w: s.0,
                    h: s.1,
                })
            })
            .collect();
        assert!(rects.len() >= 4, "most labels find a place: {got:?}");
        for (i, a) in rects.iter().enumerate() {
            assert!(!a.overlaps(&node));
            for b in &rects[i + 1..] {
                assert!(!a.overlaps(b), "{a:?} overlaps {b:?}");
            }
        }
        // A lone edge gets its label at the middle; the same input gives the same answer.
        assert_eq!(
            place_labels(&[((0.0, 0.0), (100.0, 0.0))], &[(20.0, 8.0)], &[]),
            vec![Some((50.0, 0.0))]
        );
        assert_eq!(place_labels(&edges, &sizes, &[node]), got);
    }

    /// A node's circle and, to its right, its name `w` units wide (as the frontend draws them).
    fn named(w: f64) -> Rect {
        Rect {
            x: -10.0,
            y: -10.0,
            w: 20.0 + w,
            h: 20.0,
        }
    }

    #[test]
    fn separate_moves_overlapping_names_apart_and_leaves_the_rest() {
        // Two names on one row, 40 units apart, each 100 wide: they overlap; a third node far
        // away overlaps nothing.
        let mut pos = vec![(100.0, 200.0), (140.0, 200.0), (600.0, 400.0)];
        let fp = vec![named(100.0); 3];
        let left = separate(&mut pos, &fp, &[], 800.0, 520.0, 50);
        assert_eq!(left, 0);
        // Wide, short footprints part vertically, half each; x does not move.
        assert_eq!((pos[0].0, pos[1].0), (100.0, 140.0));
        assert!((pos[1].1 - pos[0].1).abs() >= 20.0, "{pos:?}");
        assert!(((pos[0].1 + pos[1].1) / 2.0 - 200.0).abs() < 1e-9);
        assert_eq!(pos[2], (600.0, 400.0));
        // A name that would run past the right edge: its node moves left just enough.
        let mut edge = vec![(750.0, 100.0)];
        assert_eq!(separate(&mut edge, &fp[..1], &[], 800.0, 520.0, 50), 0);
        assert_eq!(edge[0], (800.0 - 110.0, 100.0));
        // A pinned node stays where it is; the other takes the whole move.
        let mut pos = vec![(400.0, 260.0), (420.0, 265.0)];
        let pins = [Some((400.0, 260.0)), None];
        assert_eq!(separate(&mut pos, &fp[..2], &pins, 800.0, 520.0, 50), 0);
        assert_eq!(pos[0], (400.0, 260.0));
        assert!(pos[1].1 >= 280.0, "{pos:?}");
        // Two nodes on the same spot still part, and the same input gives the same output.
        let mut a = vec![(300.0, 300.0), (300.0, 300.0)];
        let mut b = a.clone();
        separate(&mut a, &fp[..2], &[], 800.0, 520.0, 50);
        separate(&mut b, &fp[..2], &[], 800.0, 520.0, 50);
        assert_eq!(a, b);
        assert!(!Rect {
            x: a[0].0 - 10.0,
            y: a[0].1 - 10.0,
            w: 120.0,
            h: 20.0
        }
        .overlaps(&Rect {
            x: a[1].0 - 10.0,
            y: a[1].1 - 10.0,
            w: 120.0,
            h: 20.0
        }));
    }

    #[test]
    fn separate_clears_a_force_layout_with_room_to_spare() {
        // 40 nodes on a chain with hubs, names 40–140 units wide: the force layout leaves
        // some names over each other; after `separate` none overlap and all stay in the box.
        let n = 40;
        let edges: Vec<(usize, usize)> = (1..n).map(|i| (i / 3, i)).collect();
        let mut pos = force_layout(
            n,
            &edges,
            &[],
            LayoutParams {
                width: 800.0,
                height: 520.0,
                iterations: 150,
            },
        )
        .positions;
        let fp: Vec<Rect> = (0..n)
            .map(|i| named(40.0 + (i * 37 % 100) as f64))
            .collect();
        let overlapping = |pos: &[(f64, f64)]| overlapping_pairs(pos, &fp);
        assert!(
            overlapping(&pos) > 0,
            "the fixture must start with overlaps"
        );
        assert_eq!(separate(&mut pos, &fp, &[], 800.0, 520.0, 200), 0);
        assert_eq!(overlapping(&pos), 0);
        // Every footprint lies in the box: no name runs past the edge.
        for (p, f) in pos.iter().zip(&fp) {
            let r = Rect {
                x: p.0 + f.x,
                y: p.1 + f.y,
                w: f.w,
                h: f.h,
            };
            assert!(
                r.x >= 0.0 && r.y >= 0.0 && r.x + r.w <= 800.0 + 1e-9 && r.y + r.h <= 520.0 + 1e-9,
                "{r:?}"
            );
        }
    }
}
