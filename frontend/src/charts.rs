//! Small SVG charts for the leaderboard: compass (radar), grouped bars, heatmap (one colour
//! scale with its legend) and a correlation matrix. Inputs are plain numbers; everything is drawn in the browser.

use leptos::prelude::*;

const PALETTE: &[&str] = &[
    "#2f6f8f", "#c9853a", "#5a9a5a", "#b5473a", "#7a5aa6", "#4f8f86", "#d46a9a", "#8d6e63",
];

pub fn series_colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A radar chart: one polygon per series over axes whose values are already in [0, 1].
/// Axis labels are 15 user units tall in a 400-unit-wide drawing, so they stay ≥ 12 px down
/// to a 320 px wide chart, and sit outside the rings, anchored away from the centre.
#[component]
pub fn Compass(axes: Vec<String>, series: Vec<(String, Vec<f64>)>) -> impl IntoView {
    let (cx, cy, r) = (200.0f64, 150.0f64, 100.0f64);
    let k = axes.len().max(3);
    let angle =
        move |i: usize| -std::f64::consts::FRAC_PI_2 + std::f64::consts::TAU * i as f64 / k as f64;
    let point = move |i: usize, v: f64| {
        (
            cx + r * v.clamp(0.0, 1.0) * angle(i).cos(),
            cy + r * v.clamp(0.0, 1.0) * angle(i).sin(),
        )
    };
    let rings = [0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|&f| {
            let pts: Vec<String> = (0..k)
                .map(|i| {
                    let (x, y) = point(i, f);
                    format!("{x:.1},{y:.1}")
                })
                .collect();
            view! { <polygon points=pts.join(" ") class="ring" /> }
        })
        .collect_view();
    let ring_labels = [0.5, 1.0]
        .iter()
        .map(|&f| view! { <text x=cx + 4.0 y=cy - r * f + 12.0 class="ring-label">{format!("{f}")}</text> })
        .collect_view();
    let spokes = axes
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let (x, y) = point(i, 1.0);
            let (dx, dy) = (angle(i).cos(), angle(i).sin());
            let (lx, ly) = (cx + (r + 10.0) * dx, cy + (r + 10.0) * dy);
            let anchor = if dx.abs() < 0.2 {
                "middle"
            } else if dx > 0.0 {
                "start"
            } else {
                "end"
            };
            // Baseline: below the point for lower labels, above it for upper ones.
            let ly = if dy > 0.2 {
                ly + 13.0
            } else if dy < -0.2 {
                ly - 3.0
            } else {
                ly + 5.0
            };
            view! {
                <line x1=cx y1=cy x2=x y2=y class="spoke" />
                <text x=lx y=ly text-anchor=anchor class="compass-label">{a.clone()}</text>
            }
        })
        .collect_view();
    let polys = series
        .iter()
        .enumerate()
        .map(|(si, (name, vals))| {
            let pts: Vec<String> = vals.iter().enumerate().map(|(i, &v)| { let (x, y) = point(i, v); format!("{x:.1},{y:.1}") }).collect();
            let c = series_colour(si);
            view! { <polygon points=pts.join(" ") fill=c stroke=c class="series"><title>{name.clone()}</title></polygon> }
        })
        .collect_view();
    let legend = series
        .iter()
        .enumerate()
        .map(|(si, (name, _))| view! { <li><span class="swatch" style=format!("background:{}", series_colour(si))></span>{name.clone()}</li> })
        .collect_view();
    view! {
        <figure class="chart compass" data-testid="compass">
            <svg viewBox="0 0 400 300" role="img" aria-label="Compass chart of the models across the metrics">{rings}{ring_labels}{spokes}{polys}</svg>
            <ul class="legend">{legend}</ul>
        </figure>
    }
}

/// Grouped vertical bars: one group per category, one bar per series; values in [0, max].
#[component]
pub fn GroupedBars(
    categories: Vec<String>,
    series: Vec<(String, Vec<f64>)>,
    max: f64,
    unit: &'static str,
) -> impl IntoView {
    let (w, h, left, bottom) = (560.0f64, 240.0f64, 36.0f64, 34.0f64);
    let plot_h = h - bottom - 10.0;
    let group_w = (w - left) / categories.len().max(1) as f64;
    let bar_w = (group_w * 0.8 / series.len().max(1) as f64).min(28.0);
    let max = if max > 0.0 { max } else { 1.0 };
    let grid = [0.0, 0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|&f| {
            let y = 10.0 + plot_h * (1.0 - f);
            view! { <line x1=left y1=y x2=w y2=y class="grid" /><text x=left - 4.0 y=y + 3.0 text-anchor="end" class="axis-label">{format!("{:.0}", f * max)}</text> }
        })
        .collect_view();
    let bars = categories
        .iter()
        .enumerate()
        .map(|(ci, cat)| {
            let gx = left + group_w * ci as f64 + group_w * 0.1;
            let group = series
                .iter()
                .enumerate()
                .map(|(si, (name, vals))| {
                    let v = vals.get(ci).copied().unwrap_or(0.0).max(0.0);
                    let bh = plot_h * (v / max).min(1.0);
                    let x = gx + bar_w * si as f64;
                    view! { <rect x=x y=10.0 + plot_h - bh width=bar_w - 2.0 height=bh fill=series_colour(si)><title>{format!("{name} · {cat}: {v:.1}{unit}")}</title></rect> }
                })
                .collect_view();
            view! { {group} <text x=left + group_w * (ci as f64 + 0.5) y=h - 12.0 text-anchor="middle" class="axis-label">{cat.clone()}</text> }
        })
        .collect_view();
    let legend = series
        .iter()
        .enumerate()
        .map(|(si, (name, _))| view! { <li><span class="swatch" style=format!("background:{}", series_colour(si))></span>{name.clone()}</li> })
        .collect_view();
    view! {
        <figure class="chart wide">
            <svg viewBox=format!("0 0 {w} {h}") role="img" aria-label=format!("Retrieval {unit} by query pattern")>{grid}{bars}</svg>
            <ul class="legend">{legend}</ul>
        </figure>
    }
}

/// The heatmap's one colour scale: share `t` in [0, 1] of the scale → background.
fn heat_colour(t: f64) -> String {
    format!("rgba(47,111,143,{:.2})", 0.08 + 0.82 * t.clamp(0.0, 1.0))
}

/// Rows × columns heatmap of values already scaled to [0, 1] (`unit` says how), all cells on
/// one colour scale, shown in a legend under the table.
#[component]
pub fn Heatmap(
    rows: Vec<String>,
    cols: Vec<String>,
    values: Vec<Vec<f64>>,
    unit: &'static str,
) -> impl IntoView {
    let head = cols
        .iter()
        .map(|c| view! { <th class="num">{c.clone()}</th> })
        .collect_view();
    let body = rows
        .iter()
        .enumerate()
        .map(|(ri, r)| {
            let cells = (0..cols.len())
                .map(|c| {
                    let v = values.get(ri).and_then(|row| row.get(c)).copied().unwrap_or(f64::NAN);
                    if !v.is_finite() {
                        return view! { <td class="num heat empty" title="no question in this cell">"–"</td> }.into_any();
                    }
                    let ink = if v > 0.55 { "color:#fff" } else { "" };
                    view! { <td class="num heat" style=format!("background:{};{ink}", heat_colour(v))>{format!("{v:.2}")}</td> }.into_any()
                })
                .collect_view();
            view! { <tr><th scope="row">{r.clone()}</th>{cells}</tr> }
        })
        .collect_view();
    let stops: Vec<String> = (0..=4)
        .map(|i| format!("{} {}%", heat_colour(f64::from(i) / 4.0), i * 25))
        .collect();
    view! {
        <div class="scroll-x">
            <table class="heatmap" data-testid="heatmap"><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table>
        </div>
        <figure class="heat-legend" data-testid="heatmap-legend">
            <div class="heat-ramp" style=format!("background: linear-gradient(to right, {})", stops.join(", ")) role="img" aria-label="Colour scale from 0 (light) to 1 (dark), the same for every cell"></div>
            <div class="heat-ticks"><span>"0"</span><span>"0.25"</span><span>"0.5"</span><span>"0.75"</span><span>"1"</span></div>
            <figcaption class="muted">{format!("One colour scale for every cell: {unit}. –: no question in the cell.")}</figcaption>
        </figure>
    }
}

/// A symmetric correlation matrix with values in [−1, 1], each with the n it rests on; with
/// `lower`, only the lower triangle (diagonal included) is drawn, as the paper's Figure 3.
#[component]
pub fn CorrelationMatrix(
    labels: Vec<String>,
    matrix: Vec<Vec<Option<f64>>>,
    counts: Vec<Vec<usize>>,
    #[prop(optional)] lower: bool,
    #[prop(optional)] testid: Option<String>,
) -> impl IntoView {
    let head = labels
        .iter()
        .map(|l| view! { <th class="num">{l.clone()}</th> })
        .collect_view();
    let body = labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let cells = (0..labels.len())
                .map(|j| {
                    if lower && j > i {
                        return view! { <td class="blank"></td> }.into_any();
                    }
                    let v = matrix.get(i).and_then(|r| r.get(j)).copied().flatten();
                    let style = match v {
                        Some(x) if x >= 0.0 => format!("background: rgba(90,154,90,{:.2})", 0.15 + 0.7 * x),
                        Some(x) => format!("background: rgba(181,71,58,{:.2})", 0.15 + 0.7 * -x),
                        None => String::new(),
                    };
                    let n = counts.get(i).and_then(|r| r.get(j)).copied().unwrap_or(0);
                    view! { <td class="num heat" style=style>{v.map(|x| format!("{:.0}%", 100.0 * x)).unwrap_or_else(|| "n/a".into())}<span class="n" data-testid="corr-n">{format!("n={n}")}</span></td> }.into_any()
                })
                .collect_view();
            view! { <tr><th scope="row">{l.clone()}</th>{cells}</tr> }
        })
        .collect_view();
    let testid = testid.unwrap_or_else(|| "correlation".to_string());
    view! { <div class="scroll-x"><table class="heatmap" data-testid=testid><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table></div> }
}

/// A scatter plot on a log10 x axis (e.g. model size in billions of parameters) against a
/// y value in [0, y_max]; each point labelled.
#[component]
pub fn LogScatter(
    points: Vec<(String, f64, f64)>,
    x_unit: &'static str,
    y_label: String,
    y_max: f64,
) -> impl IntoView {
    let (w, h, left, bottom) = (560.0f64, 240.0f64, 44.0f64, 34.0f64);
    let plot_w = w - left - 16.0;
    let plot_h = h - bottom - 10.0;
    let xs: Vec<f64> = points.iter().map(|p| p.1.log10()).collect();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min).floor();
    let hi = xs
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .max(lo + 1.0);
    let y_max = if y_max > 0.0 { y_max } else { 1.0 };
    let px = move |x: f64| left + plot_w * (x.log10() - lo) / (hi - lo);
    let py = move |y: f64| 10.0 + plot_h * (1.0 - (y / y_max).clamp(0.0, 1.0));
    let ticks = ((lo as i32)..=(hi as i32))
        .map(|e| {
            let x = left + plot_w * (f64::from(e) - lo) / (hi - lo);
            view! { <line x1=x y1=10.0 x2=x y2=10.0 + plot_h class="grid" /><text x=x y=h - 12.0 text-anchor="middle" class="axis-label">{format!("{}{x_unit}", 10f64.powi(e))}</text> }
        })
        .collect_view();
    let dots = points
        .iter()
        .enumerate()
        .map(|(i, (name, x, y))| {
            view! { <circle cx=px(*x) cy=py(*y) r=5.0 fill=series_colour(i)><title>{format!("{name}: {x}{x_unit}, {y:.3}")}</title></circle> }
        })
        .collect_view();
    let legend = points.iter().enumerate().map(|(i, (name, x, y))| view! { <li><span class="swatch" style=format!("background:{}", series_colour(i))></span>{format!("{name} ({x}{x_unit}, {y:.3})")}</li> }).collect_view();
    view! {
        <figure class="chart wide">
            <svg viewBox=format!("0 0 {w} {h}") role="img" aria-label=format!("{y_label} against model size")>
                {ticks}
                <line x1=left y1=10.0 + plot_h x2=w - 16.0 y2=10.0 + plot_h class="grid" />
                <text x=left - 4.0 y=14.0 text-anchor="end" class="axis-label">{format!("{y_max}")}</text>
                <text x=left - 4.0 y=10.0 + plot_h text-anchor="end" class="axis-label">"0"</text>
                {dots}
            </svg>
            <ul class="legend">{legend}</ul>
        </figure>
    }
}
