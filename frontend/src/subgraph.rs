//! The explanation subgraph as SVG: force-directed layout computed in WebAssembly by
//! `serenqa_shared::layout`, then nodes moved apart where their names (measured in the page's
//! font) would overlap or leave the drawing (`layout::separate`); nodes coloured by type and
//! linking to their entity pages (click, or Enter on a focused node); edges labelled by
//! relation where a label fits without overlapping another label or a node
//! (`layout::place_labels`; the others appear when the edge is highlighted, and every edge has
//! a title), labels drawn above all lines with a halo; hover a node or a path to highlight it,
//! drag to pan, wheel (or the buttons) to zoom. Exports of what is drawn: a standalone SVG, a
//! PNG (the same SVG rasterised on a canvas at twice its size) and Cytoscape.js JSON.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_navigate;
use serenqa_shared::api::{PathView, SubgraphView};
use serenqa_shared::layout::{force_layout, place_labels, separate, LayoutParams, Rect};
use wasm_bindgen::JsCast;

/// The drawing's size in its own units (names are drawn at 11 units, edge labels at 9): wide
/// on a wide screen; upright on a phone, where a wide drawing would shrink to 0.4× (names
/// 4 px high) and leave most of the screen's height unused.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Canvas {
    w: f64,
    h: f64,
}

const WIDE: Canvas = Canvas { w: 800.0, h: 520.0 };
const UPRIGHT: Canvas = Canvas { w: 400.0, h: 600.0 };

/// The canvas for a window `width` CSS pixels wide.
fn canvas_for(width: f64) -> Canvas {
    if width < 600.0 {
        UPRIGHT
    } else {
        WIDE
    }
}

/// Short label for a relation: Hetionet's abbreviation after the underscore (`TREATS_CtD` → `CtD`
/// is cryptic, so use the verb part: `treats`).
fn edge_label(rel: &str) -> String {
    rel.split('_').next().unwrap_or(rel).to_lowercase()
}

/// Pixels per drawing unit of the PNG export.
pub const PNG_SCALE: f64 = 2.0;

/// A node's name as drawn (long GO terms are cut).
fn short_name(name: &str) -> String {
    if name.chars().count() > 22 {
        format!("{}…", name.chars().take(21).collect::<String>())
    } else {
        name.to_string()
    }
}

thread_local! {
    /// The page's font family (the names are drawn in it, and the SVG export names it).
    static FAMILY: String = page_font_family();
    /// A 2D canvas context set to the names' font (11 px in the page's family), to measure
    /// names as this browser will draw them; `None` where no canvas is available.
    static MEASURE: Option<web_sys::CanvasRenderingContext2d> = name_measurer();
}

fn page_font_family() -> String {
    web_sys::window()
        .and_then(|w| {
            let body = w.document()?.body()?;
            w.get_computed_style(&body).ok().flatten()
        })
        .and_then(|st| st.get_property_value("font-family").ok())
        .filter(|f| !f.trim().is_empty())
        .unwrap_or_else(|| "sans-serif".to_string())
}

fn name_measurer() -> Option<web_sys::CanvasRenderingContext2d> {
    let document = web_sys::window()?.document()?;
    let canvas: web_sys::HtmlCanvasElement =
        document.create_element("canvas").ok()?.dyn_into().ok()?;
    let cx: web_sys::CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    FAMILY.with(|f| cx.set_font(&format!("11px {f}")));
    Some(cx)
}

/// Width of a drawn name (11-unit font) in drawing units: measured in this browser's font,
/// else estimated from its length.
fn name_width(name: &str) -> f64 {
    let text = short_name(name);
    MEASURE
        .with(|m| {
            m.as_ref()
                .and_then(|cx| cx.measure_text(&text).ok())
                .map(|t| t.width())
        })
        .unwrap_or_else(|| text.chars().count() as f64 * 6.3)
        + 2.0
}

/// Where each node's name starts and its anchor: right of the circle, or left of it
/// (anchored at its end) when it would run past the drawing's right edge and the left side is
/// free of other nodes' circles and names (else it stays right, cut by the edge).
fn name_sides(graph: &SubgraphView, pos: &[(f64, f64)], cw: f64) -> Vec<(f64, &'static str)> {
    let circle = |x: f64, y: f64| Rect {
        x: x - 10.0,
        y: y - 10.0,
        w: 20.0,
        h: 20.0,
    };
    let right = |x: f64, y: f64, w: f64| Rect {
        x: x + 10.0,
        y: y - 8.0,
        w,
        h: 13.0,
    };
    let nodes: Vec<(f64, f64, f64)> = graph
        .nodes
        .iter()
        .zip(pos)
        .map(|(v, &(x, y))| (x, y, name_width(&v.name)))
        .collect();
    nodes
        .iter()
        .enumerate()
        .map(|(i, &(x, y, w))| {
            if x + 11.0 + w <= cw {
                return (x + 11.0, "start");
            }
            let left = Rect {
                x: x - 10.0 - w,
                y: y - 8.0,
                w,
                h: 13.0,
            };
            let free = left.x >= 0.0
                && nodes.iter().enumerate().all(|(j, &(ox, oy, ow))| {
                    // (another name that does not fit on the right is not there either)
                    j == i
                        || !(left.overlaps(&circle(ox, oy))
                            || (ox + 11.0 + ow <= cw && left.overlaps(&right(ox, oy, ow))))
                });
            if free {
                (x - 11.0, "end")
            } else {
                (x + 11.0, "start")
            }
        })
        .collect()
}

/// Moves apart nodes whose circles and names overlap (the force layout spaces points, not
/// names), when the canvas has room for all of them: footprints covering more than half of it
/// cannot all be cleared, and trying would only scatter the drawing.
fn untangle_names(
    graph: &SubgraphView,
    pos: &mut [(f64, f64)],
    pins: &[Option<(f64, f64)>],
    canvas: Canvas,
) {
    let footprint: Vec<Rect> = graph
        .nodes
        .iter()
        .map(|v| Rect {
            x: -10.0,
            y: -10.0,
            w: 21.0 + name_width(&v.name),
            h: 20.0,
        })
        .collect();
    let area: f64 = footprint.iter().map(|r| r.w * r.h).sum();
    if area <= 0.5 * canvas.w * canvas.h {
        separate(pos, &footprint, pins, canvas.w, canvas.h, 60);
    }
}

/// Where each edge's label goes (its centre), or `None` when no spot is free: labels avoid
/// each other, the node circles and the node names (sizes estimated from the font sizes of
/// `style/main.css`: 9 px edge labels, 11 px names) and the drawing's borders.
fn label_positions(
    graph: &SubgraphView,
    pos: &[(f64, f64)],
    names: &[(f64, &'static str)],
    canvas: Canvas,
) -> Vec<Option<(f64, f64)>> {
    let mut obstacles = Vec::with_capacity(graph.nodes.len() * 2 + 4);
    // Outside the drawing: a label there would be cut by its edge.
    let (far, Canvas { w: cw, h: ch }) = (1e5, canvas);
    obstacles.extend([
        Rect {
            x: -far,
            y: -far,
            w: far,
            h: 3.0 * far,
        },
        Rect {
            x: cw,
            y: -far,
            w: far,
            h: 3.0 * far,
        },
        Rect {
            x: -far,
            y: -far,
            w: 3.0 * far,
            h: far,
        },
        Rect {
            x: -far,
            y: ch,
            w: 3.0 * far,
            h: far,
        },
    ]);
    for (i, v) in graph.nodes.iter().enumerate() {
        let Some(&(x, y)) = pos.get(i) else { continue };
        obstacles.push(Rect {
            x: x - 10.0,
            y: y - 10.0,
            w: 20.0,
            h: 20.0,
        });
        let w = name_width(&v.name);
        let (nx, anchor) = names.get(i).copied().unwrap_or((x + 11.0, "start"));
        obstacles.push(Rect {
            x: if anchor == "end" {
                nx - w + 1.0
            } else {
                nx - 1.0
            },
            y: y - 8.0,
            w,
            h: 13.0,
        });
    }
    let mut segments = Vec::with_capacity(graph.edges.len());
    let mut sizes = Vec::with_capacity(graph.edges.len());
    for (a, b, rel) in &graph.edges {
        let (pa, pb) = (
            pos.get(*a as usize).copied().unwrap_or_default(),
            pos.get(*b as usize).copied().unwrap_or_default(),
        );
        segments.push((pa, pb));
        sizes.push((edge_label(rel).chars().count() as f64 * 5.2 + 4.0, 11.0));
    }
    place_labels(&segments, &sizes, &obstacles)
}

#[component]
pub fn SubgraphSvg(
    graph: SubgraphView,
    /// Node index (into `graph.nodes`) to pin in the centre, e.g. the query entity.
    #[prop(optional)]
    centre: Option<usize>,
    paths: Vec<PathView>,
) -> impl IntoView {
    // The drawing is laid out again when the window crosses to the other canvas (a phone
    // turned sideways, a window narrowed), not on every resize.
    let window_width = || {
        web_sys::window()
            .and_then(|w| w.inner_width().ok())
            .and_then(|v| v.as_f64())
            .unwrap_or(WIDE.w)
    };
    let (canvas, set_canvas) = signal(canvas_for(window_width()));
    let resize = window_event_listener(leptos::ev::resize, move |_| {
        let now = canvas_for(window_width());
        if canvas.get_untracked() != now {
            set_canvas.set(now);
        }
    });
    on_cleanup(move || resize.remove());
    move || {
        view! { <Drawing graph=graph.clone() centre=centre paths=paths.clone() canvas=canvas.get() /> }
    }
}

/// The drawing on one canvas.
#[component]
fn Drawing(
    graph: SubgraphView,
    centre: Option<usize>,
    paths: Vec<PathView>,
    canvas: Canvas,
) -> impl IntoView {
    let n = graph.nodes.len();
    let edges: Vec<(usize, usize)> = graph
        .edges
        .iter()
        .map(|(a, b, _)| (*a as usize, *b as usize))
        .collect();
    let Canvas { w: cw, h: ch } = canvas;
    let mut pins = vec![None; n];
    if let Some(c) = centre.filter(|&c| c < n) {
        pins[c] = Some((cw / 2.0, ch / 2.0));
    }
    let perf = web_sys::window().and_then(|w| w.performance());
    let t0 = perf.as_ref().map(web_sys::Performance::now).unwrap_or(0.0);
    let layout = force_layout(
        n,
        &edges,
        &pins,
        LayoutParams {
            width: cw,
            height: ch,
            iterations: if n > 200 { 80 } else { 150 },
        },
    );
    let mut pos = layout.positions;
    untangle_names(&graph, &mut pos, &pins, canvas);
    let layout_ms = perf.as_ref().map(|p| p.now() - t0).unwrap_or(0.0);

    // Highlight: a node (its edges) or a path (its nodes and edges).
    let (hover_node, set_hover_node) = signal(None::<usize>);
    let (hover_path, set_hover_path) = signal(None::<usize>);
    let path_nodes: Vec<Vec<u32>> = paths
        .iter()
        .map(|p| p.nodes.iter().map(|v| v.index).collect())
        .collect();
    let node_index: Vec<u32> = graph.nodes.iter().map(|v| v.index).collect();
    let path_nodes = StoredValue::new(path_nodes);
    let node_index = StoredValue::new(node_index);
    let on_path = move |node_i: usize| -> bool {
        match hover_path.get() {
            Some(p) => path_nodes.with_value(|pn| {
                node_index.with_value(|ni| pn.get(p).is_some_and(|v| v.contains(&ni[node_i])))
            }),
            None => false,
        }
    };
    let edge_lit = move |a: usize, b: usize| -> bool {
        hover_node.get().is_some_and(|h| h == a || h == b)
            || (hover_path.get().is_some() && on_path(a) && on_path(b))
    };

    // Pan and zoom through the viewBox.
    let (zoom, set_zoom) = signal(1.0f64);
    let (pan, set_pan) = signal((0.0f64, 0.0f64));
    let (drag, set_drag) = signal(None::<(f64, f64)>);
    let view_box = move || {
        let z = zoom.get();
        let (px, py) = pan.get();
        let (w, h) = (cw / z, ch / z);
        format!(
            "{:.1} {:.1} {:.1} {:.1}",
            (cw - w) / 2.0 - px,
            (ch - h) / 2.0 - py,
            w,
            h
        )
    };

    let names = name_sides(&graph, &pos, cw);
    let labels = label_positions(&graph, &pos, &names, canvas);
    // Lines first, then every label above all lines (a halo keeps a label readable where
    // another edge's line passes behind it), then the nodes.
    struct EdgeDraw {
        ends: (usize, usize),
        line: ((f64, f64), (f64, f64)),
        label: String,
        title: String,
        /// No free spot: the label waits at the middle, shown only when its edge is lit.
        spare: bool,
        at: (f64, f64),
    }
    let name_of = |i: usize| {
        graph
            .nodes
            .get(i)
            .map(|n| n.name.clone())
            .unwrap_or_default()
    };
    let drawn_edges: Vec<EdgeDraw> = graph
        .edges
        .iter()
        .enumerate()
        .filter_map(|(k, (a, b, rel))| {
            let (a, b) = (*a as usize, *b as usize);
            let ((x1, y1), (x2, y2)) = (*pos.get(a)?, *pos.get(b)?);
            let label = edge_label(rel);
            let title = format!("{} {} {}", name_of(a), label, name_of(b));
            let (spare, at) = match labels.get(k).copied().flatten() {
                Some(p) => (false, p),
                None => (true, ((x1 + x2) / 2.0, (y1 + y2) / 2.0)),
            };
            Some(EdgeDraw {
                ends: (a, b),
                line: ((x1, y1), (x2, y2)),
                label,
                title,
                spare,
                at,
            })
        })
        .collect();
    let edges_view = drawn_edges
        .iter()
        .map(|e| {
            let (a, b) = e.ends;
            let ((x1, y1), (x2, y2)) = e.line;
            view! {
                <g class="edge" class:lit=move || edge_lit(a, b)>
                    <title>{e.title.clone()}</title>
                    <line x1=x1 y1=y1 x2=x2 y2=y2 marker-end="url(#arrow)" />
                </g>
            }
        })
        .collect_view();
    let edge_labels_view = drawn_edges
        .iter()
        .map(|e| {
            let (a, b) = e.ends;
            let (lx, ly) = e.at;
            view! {
                <g class="edge-tag" class:lit=move || edge_lit(a, b)>
                    <title>{e.title.clone()}</title>
                    <text x=lx y=ly + 3.0 text-anchor="middle" class="edge-label" class:spare=e.spare>{e.label.clone()}</text>
                </g>
            }
        })
        .collect_view();
    // Nodes link to their entity pages; a click that ends a pan does not count.
    let navigate = use_navigate();
    let (dragged, set_dragged) = signal(false);
    let nodes_view = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let (x, y) = pos[i];
            let colour = crate::kind_colour(&v.kind);
            let title = format!("{} ({} {}) — open its page", v.name, v.kind, v.id);
            let name = short_name(&v.name);
            let (name_x, anchor) = names.get(i).copied().unwrap_or((x + 11.0, "start"));
            let href = format!("/entity/{}", crate::api::enc(&crate::api::key_of(v)));
            let (nav1, nav2) = (navigate.clone(), navigate.clone());
            let (href1, href2) = (href.clone(), href.clone());
            view! {
                <g class="node" class:lit=move || hover_node.get() == Some(i) || on_path(i)
                    data-href=href
                    role="link"
                    aria-label=format!("{} ({}): open its page", v.name, v.kind)
                    on:mouseenter=move |_| set_hover_node.set(Some(i))
                    on:mouseleave=move |_| set_hover_node.set(None)
                    tabindex="0"
                    on:focus=move |_| set_hover_node.set(Some(i))
                    on:blur=move |_| set_hover_node.set(None)
                    on:click=move |_| if !dragged.get_untracked() { nav1(&href1, Default::default()) }
                    on:keydown=move |ev| if ev.key() == "Enter" { nav2(&href2, Default::default()) }
                >
                    <title>{title}</title>
                    <circle cx=x cy=y r=if Some(i) == centre { 11.0 } else { 8.0 } fill=colour />
                    <text x=name_x y=y + 4.0 text-anchor=anchor>{name}</text>
                </g>
            }
        })
        .collect_view();

    // Legend: one entry per node type drawn.
    let mut kinds: Vec<String> = Vec::new();
    for v in &graph.nodes {
        if !kinds.contains(&v.kind) {
            kinds.push(v.kind.clone());
        }
    }
    let legend = kinds
        .into_iter()
        .map(|k| view! { <li><span class="kind-dot" style=format!("background:{}", crate::kind_colour(&k))></span>{k}</li> })
        .collect_view();
    // Exports of what is drawn: a standalone SVG and Cytoscape.js JSON (data: links).
    let svg_doc = standalone_svg(&graph, &pos, &labels, &names, canvas);
    let svg_href = format!(
        "data:image/svg+xml;charset=utf-8,{}",
        crate::api::enc(&svg_doc)
    );
    let svg_doc = StoredValue::new(svg_doc);
    let (png_error, set_png_error) = signal(None::<String>);
    let export_png = move |_| {
        let doc = svg_doc.get_value();
        spawn_local(async move {
            match svg_to_png(&doc, canvas, PNG_SCALE).await {
                Ok(url) => {
                    set_png_error.set(None);
                    download(&url, "explanation.png");
                }
                Err(e) => set_png_error.set(Some(format!("PNG export failed: {e}"))),
            }
        });
    };
    let cyjs_href = format!(
        "data:application/json;charset=utf-8,{}",
        crate::api::enc(&cytoscape_json(&graph, &pos))
    );

    let path_rows = paths
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let mut parts = Vec::new();
            for (i, node) in p.nodes.iter().enumerate() {
                parts.push(view! { <strong>{node.name.clone()}</strong> }.into_any());
                if let Some(s) = p.steps.get(i) {
                    parts.push(
                        view! { <span class="verb">{format!(" {} ", s.verb)}</span> }.into_any(),
                    );
                }
            }
            view! {
                <li tabindex="0" class:lit=move || hover_path.get() == Some(pi)
                    on:mouseenter=move |_| set_hover_path.set(Some(pi))
                    on:mouseleave=move |_| set_hover_path.set(None)
                    on:focus=move |_| set_hover_path.set(Some(pi))
                    on:blur=move |_| set_hover_path.set(None)
                >{parts}</li>
            }
        })
        .collect_view();

    view! {
        <div class="subgraph" data-testid="subgraph">
            <div class="toolbar">
                <button on:click=move |_| set_zoom.update(|z| *z = (*z * 1.25).min(8.0)) aria-label="Zoom in">"+"</button>
                <button on:click=move |_| set_zoom.update(|z| *z = (*z / 1.25).max(0.25)) aria-label="Zoom out">"−"</button>
                <button on:click=move |_| { set_zoom.set(1.0); set_pan.set((0.0, 0.0)); }>"Reset view"</button>
                <a class="button" download="explanation.svg" href=svg_href data-testid="export-svg">"SVG"</a>
                <button class="button" on:click=export_png data-testid="export-png" title=format!("The drawing as a PNG image, {} × {} pixels", (cw * PNG_SCALE) as u32, (ch * PNG_SCALE) as u32)>"PNG"</button>
                <a class="button" download="explanation.cyjs" href=cyjs_href data-testid="export-cyjs">"Cytoscape JSON"</a>
                <span class="muted" data-testid="layout-time">{format!("{n} nodes, {} edges · layout {layout_ms:.1} ms in WebAssembly", graph.edges.len())}</span>
            </div>
            <svg viewBox=view_box role="img" aria-label="Explanation subgraph"
                on:wheel=move |ev: leptos::ev::WheelEvent| {
                    ev.prevent_default();
                    let f = if ev.delta_y() < 0.0 { 1.1 } else { 1.0 / 1.1 };
                    set_zoom.update(|z| *z = (*z * f).clamp(0.25, 8.0));
                }
                on:pointerdown=move |ev: leptos::ev::PointerEvent| {
                    set_dragged.set(false);
                    set_drag.set(Some((ev.client_x() as f64, ev.client_y() as f64)));
                }
                on:pointermove=move |ev: leptos::ev::PointerEvent| {
                    if let Some((x0, y0)) = drag.get() {
                        let (x, y) = (ev.client_x() as f64, ev.client_y() as f64);
                        if (x - x0).abs() + (y - y0).abs() > 3.0 {
                            set_dragged.set(true);
                        }
                        let z = zoom.get();
                        set_pan.update(|p| { p.0 += (x - x0) / z; p.1 += (y - y0) / z; });
                        set_drag.set(Some((x, y)));
                    }
                }
                on:pointerup=move |_| set_drag.set(None)
                on:pointerleave=move |_| set_drag.set(None)
            >
                <defs>
                    <marker id="arrow" viewBox="0 0 10 10" refX="18" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
                        <path d="M 0 0 L 10 5 L 0 10 z" fill="#8a94a6" />
                    </marker>
                </defs>
                {edges_view}
                {edge_labels_view}
                {nodes_view}
            </svg>
            {move || png_error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            <ul class="inline-list legend" data-testid="subgraph-legend" aria-label="Node colours">{legend}</ul>
            <ol class="paths" data-testid="paths">{path_rows}</ol>
        </div>
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The drawn subgraph as a standalone SVG document (inline styles, node titles, the edge
/// labels that are drawn without hovering).
fn standalone_svg(
    graph: &SubgraphView,
    pos: &[(f64, f64)],
    labels: &[Option<(f64, f64)>],
    names: &[(f64, &'static str)],
    Canvas { w: cw, h: ch }: Canvas,
) -> String {
    let mut s = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {cw} {ch}\" width=\"{cw}\" height=\"{ch}\" font-family=\"{}\" font-size=\"11\">", FAMILY.with(|f| xml_escape(f)));
    s.push_str("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>");
    for (a, b, _) in &graph.edges {
        let (Some(&(x1, y1)), Some(&(x2, y2))) = (pos.get(*a as usize), pos.get(*b as usize))
        else {
            continue;
        };
        s.push_str(&format!("<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"#8a94a6\" stroke-width=\"1.2\"/>"));
    }
    // Labels above every line, with a white halo, as on the page.
    for (k, (_, _, rel)) in graph.edges.iter().enumerate() {
        if let Some((lx, ly)) = labels.get(k).copied().flatten() {
            s.push_str(&format!("<text x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#5b6475\" font-size=\"9\" stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\">{}</text>", ly + 3.0, xml_escape(&edge_label(rel))));
        }
    }
    for (i, v) in graph.nodes.iter().enumerate() {
        let Some(&(x, y)) = pos.get(i) else { continue };
        let (name_x, anchor) = names.get(i).copied().unwrap_or((x + 11.0, "start"));
        s.push_str(&format!(
            "<g><title>{}</title><circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"8\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text></g>",
            xml_escape(&format!("{} ({} {})", v.name, v.kind, v.id)),
            crate::kind_colour(&v.kind),
            name_x,
            y + 4.0,
            xml_escape(&v.name)
        ));
    }
    s.push_str("</svg>");
    s
}

fn js_err(e: wasm_bindgen::JsValue) -> String {
    e.as_string()
        .or_else(|| js_sys::JSON::stringify(&e).ok().and_then(|s| s.as_string()))
        .unwrap_or_else(|| "browser error".into())
}

/// Rasterises an SVG document on a canvas `scale` times its size; a `data:image/png` URL.
async fn svg_to_png(
    svg: &str,
    Canvas { w: cw, h: ch }: Canvas,
    scale: f64,
) -> Result<String, String> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let img = web_sys::HtmlImageElement::new().map_err(js_err)?;
    img.set_src(&format!(
        "data:image/svg+xml;charset=utf-8,{}",
        crate::api::enc(svg)
    ));
    wasm_bindgen_futures::JsFuture::from(img.decode())
        .await
        .map_err(|_| "the drawing could not be decoded as an image".to_string())?;
    let canvas: web_sys::HtmlCanvasElement = document
        .create_element("canvas")
        .map_err(js_err)?
        .dyn_into()
        .map_err(|_| "no canvas".to_string())?;
    let (w, h) = ((cw * scale).round(), (ch * scale).round());
    canvas.set_width(w as u32);
    canvas.set_height(h as u32);
    let ctx: web_sys::CanvasRenderingContext2d = canvas
        .get_context("2d")
        .map_err(js_err)?
        .ok_or("no 2d context")?
        .dyn_into()
        .map_err(|_| "no 2d context".to_string())?;
    ctx.draw_image_with_html_image_element_and_dw_and_dh(&img, 0.0, 0.0, w, h)
        .map_err(js_err)?;
    canvas.to_data_url_with_type("image/png").map_err(js_err)
}

/// Saves `href` as a file named `name` (a temporary link, clicked).
pub fn download(href: &str, name: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(a) = document.create_element("a") else {
        return;
    };
    let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>() else {
        return;
    };
    a.set_href(href);
    a.set_download(name);
    if let Some(body) = document.body() {
        let _ = body.append_child(&a);
        a.click();
        a.remove();
    }
}

/// The drawn subgraph in Cytoscape.js's JSON (`elements.nodes` / `elements.edges`, with positions).
fn cytoscape_json(graph: &SubgraphView, pos: &[(f64, f64)]) -> String {
    let nodes: Vec<serde_json::Value> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let (x, y) = pos.get(i).copied().unwrap_or((0.0, 0.0));
            serde_json::json!({"data": {"id": format!("{}::{}", v.kind, v.id), "label": v.name, "kind": v.kind}, "position": {"x": x, "y": y}})
        })
        .collect();
    let edges: Vec<serde_json::Value> = graph
        .edges
        .iter()
        .enumerate()
        .filter_map(|(k, (a, b, rel))| {
            let (va, vb) = (graph.nodes.get(*a as usize)?, graph.nodes.get(*b as usize)?);
            Some(serde_json::json!({"data": {"id": format!("e{k}"), "source": format!("{}::{}", va.kind, va.id), "target": format!("{}::{}", vb.kind, vb.id), "label": rel}}))
        })
        .collect();
    serde_json::json!({"elements": {"nodes": nodes, "edges": edges}}).to_string()
}
