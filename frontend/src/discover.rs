//! Discover (clinicians): find a disease or a drug, see what the graph says about it, and
//! open the explanation subgraph between it and any related entity.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::{use_navigate, use_params_map};
use serenqa_shared::api::{DiscoverResponse, ExplainResponse, NodeDetail, NodeView, PathsReply};

use crate::api::{self, key_of, Kind, Refusal};
use crate::refused::{Refused, Retrying};
use crate::subgraph::SubgraphSvg;

#[component]
pub fn Discover() -> impl IntoView {
    let navigate = use_navigate();
    let (kind, set_kind) = signal(None::<String>);
    let on_pick = Callback::new(move |n: NodeView| {
        navigate(
            &format!("/entity/{}", api::enc(&key_of(&n))),
            Default::default(),
        );
    });
    let kind_button = move |label: &'static str, value: Option<&'static str>| {
        view! {
            <button
                class="chip"
                class:on=move || kind.get().as_deref() == value
                aria-pressed=move || (kind.get().as_deref() == value).to_string()
                on:click=move |_| set_kind.set(value.map(str::to_string))
            >{label}</button>
        }
    };
    view! {
        <h1>"Discover"</h1>
        <p class="muted">"Find a disease to see its known treatments and where the graph leads beyond them, or a drug to see the diseases it may serve."</p>
        <crate::notice::Notice />
        <section class="panel">
            <div class="chips" role="group" aria-label="What to search">
                {kind_button("Any", None)}
                {kind_button("Diseases", Some("Disease"))}
                {kind_button("Drugs", Some("Compound"))}
            </div>
            <crate::search_box::SearchBox on_pick=on_pick kind=kind />
        </section>
        <crate::ask::AskBox />
        <crate::start::StartingPoints />
    }
}

#[component]
pub fn Entity() -> impl IntoView {
    let params = use_params_map();
    let key = move || params.read().get("key").unwrap_or_default();
    let (detail, set_detail) = signal(None::<Result<NodeDetail, Refusal>>);
    let (explain, set_explain) = signal(None::<(NodeView, Option<Result<PathsReply, String>>)>);
    // The paths drawer stands in for a prediction the model cannot explain (top lists).
    let (explain_note, set_explain_note) = signal(false);
    let (discovery, set_discovery) = signal(None::<Result<DiscoverResponse, Refusal>>);
    let (discovering, set_discovering) = signal(false);
    // Refused with a `Retry-After`: the reason and the seconds left before the one retry.
    let (disc_wait, set_disc_wait) = signal(None::<(Refusal, u32)>);
    // The candidates of `k`, retried once when the server says when to come back; a reply
    // for another page than the one shown is dropped.
    let load_discovery = move |k: String| {
        set_discovery.set(None);
        set_discovering.set(true);
        spawn_local(async move {
            let shown = move || params.try_with_untracked(|p| p.get("key")).flatten();
            let here = k.clone();
            let r = api::with_one_retry(
                || api::discover(&k),
                move |w| {
                    let still = shown().as_deref() == Some(here.as_str());
                    if still {
                        set_disc_wait.set(w);
                    }
                    still
                },
            )
            .await;
            if shown().as_deref() == Some(k.as_str()) {
                set_disc_wait.set(None);
                set_discovering.set(false);
                set_discovery.set(Some(r));
            }
        });
    };
    // The plausibility explanation of a candidate: (candidate, reply).
    let (explain_pred, set_explain_pred) =
        signal(None::<(NodeView, Option<Result<ExplainResponse, String>>)>);
    // "Try again" after the entity itself could not be loaded.
    let (reload, set_reload) = signal(0u32);
    Effect::new(move |_| {
        let k = key();
        reload.track();
        set_detail.set(None);
        set_explain.set(None);
        set_discovery.set(None);
        set_disc_wait.set(None);
        set_explain_pred.set(None);
        spawn_local(async move {
            let d = api::node(&k).await;
            let kind = d.as_ref().ok().map(|d| d.node.kind.clone());
            set_detail.set(Some(d));
            if matches!(kind.as_deref(), Some("Disease" | "Compound" | "Drug")) {
                load_discovery(k);
            }
        });
    });
    // Explanations open in a drawer over the page, where the user is (not below 200 rows),
    // take the focus, and close with Esc or the close button.
    let drawer = NodeRef::<leptos::html::Aside>::new();
    let drawer_open = Memo::new(move |_| {
        explain.with(std::option::Option::is_some)
            || explain_pred.with(std::option::Option::is_some)
    });
    let close_drawer = move || {
        set_explain.set(None);
        set_explain_pred.set(None);
        crate::url_state::set(&[("why", None)]);
    };
    // The candidate selected in the table, with its current scores (the drawer's Keep button).
    let selected_item = RwSignal::new(None::<serenqa_shared::api::ShortlistItem>);
    Effect::new(move |was_open: Option<bool>| {
        let now = drawer_open.get();
        if now && was_open != Some(true) {
            request_animation_frame(move || {
                if let Some(el) = drawer.get_untracked() {
                    let _ = el.focus();
                }
            });
        }
        now
    });
    let esc = window_event_listener(leptos::ev::keydown, move |e| {
        if e.key() == "Escape" && drawer_open.get_untracked() {
            close_drawer();
        }
    });
    on_cleanup(move || esc.remove());
    let open_explain = Callback::new(move |other: NodeView| {
        crate::url_state::set(&[("why", None)]);
        let from = key();
        let to = key_of(&other);
        set_explain_note.set(false);
        set_explain.set(Some((other.clone(), None)));
        spawn_local(async move {
            let r = api::paths(&from, &to).await;
            set_explain.set(Some((other, Some(r))));
        });
    });
    // A candidate is explained by paths from the entity and its known answers.
    let explain_candidate = Callback::new(move |cand: NodeView| {
        // The open explanation is part of the view's address.
        crate::url_state::set(&[("why", Some(key_of(&cand)))]);
        // With predictions that keep their metapaths: the paths that carry the prediction,
        // grouped by metapath. Top lists (a graph too large to score every pair) keep none: such
        // a candidate is explained, like one without a prediction, by the graph's paths from
        // the known answers, and the drawer says why.
        let mut unexplained = false;
        if let Some(Ok(d)) = discovery.get_untracked() {
            let plaus = d
                .candidates
                .iter()
                .find(|c| c.node.index == cand.index)
                .and_then(|c| c.plausibility.clone());
            unexplained = plaus.as_ref().is_some_and(|p| !p.explained);
            if let Some(p) = plaus.filter(|p| p.explained) {
                set_explain.set(None);
                set_explain_pred.set(Some((cand.clone(), None)));
                let (ck, dk) = (key_of(&p.compound), key_of(&p.disease));
                spawn_local(async move {
                    let r = api::explain(&ck, &dk).await;
                    set_explain_pred.set(Some((cand, Some(r))));
                });
                return;
            }
        }
        let me = key();
        let mut from = vec![me.clone()];
        if let Some(Ok(d)) = discovery.get_untracked() {
            if d.existing_known {
                // Ae = the known answers + this entity, which `from` already holds.
                from.extend(d.existing.iter().map(key_of).filter(|k| *k != me));
            }
        }
        let to = key_of(&cand);
        set_explain_note.set(unexplained);
        set_explain.set(Some((cand.clone(), None)));
        spawn_local(async move {
            let r = api::paths_from_set(&from, &to).await;
            set_explain.set(Some((cand, Some(r))));
        });
    });
    view! {
        <p><a href="/">"← Discover"</a></p>
        {move || match detail.get() {
            None => view! { <p class="loading">"Loading…"</p> }.into_any(),
            Some(Err(e)) if e.kind == Kind::NotInGraph => view! { <NotInGraph key=key() /> }.into_any(),
            Some(Err(e)) => view! { <Refused refusal=e testid="entity-error" try_again=Callback::new(move |()| set_reload.update(|n| *n += 1)) /> }.into_any(),
            Some(Ok(d)) => view! { <EntityHeader detail=d /> }.into_any(),
        }}
        {move || disc_wait.get().map(|(r, secs)| view! { <Retrying refusal=r seconds=secs testid="discover-retrying" /> })}
        {move || (discovering.get() && disc_wait.get().is_none()).then(|| view! { <p class="loading">"Scoring serendipitous candidates…"</p> })}
        {move || match discovery.get() {
            None => None,
            Some(Err(e)) => Some(view! { <Refused refusal=e testid="discover-error" try_again=Callback::new(move |()| load_discovery(key())) /> }.into_any()),
            Some(Ok(d)) => Some(view! { <crate::candidates::Candidates data=d on_explain=explain_candidate selected_item=selected_item /> }.into_any()),
        }}
        <aside
            class="drawer"
            node_ref=drawer
            hidden=move || !drawer_open.get()
            tabindex="-1"
            role="dialog"
            aria-label="Explanation"
            data-testid="explain-drawer"
        >
            <button class="drawer-close" aria-label="Close the explanation (Esc)" data-testid="explain-close" on:click=move |_| close_drawer()>"✕ Close"</button>
        {move || explain_pred.get().map(|(other, reply)| view! {
            <section class="panel" aria-live="polite" data-testid="explanation">
                <h2>"Why " {other.name.clone()} " is plausible"</h2>
                <DrawerKeep candidate=other.clone() selected_item=selected_item />
                {match reply {
                    None => view! { <p class="loading">"Finding the paths behind the prediction…"</p> }.into_any(),
                    Some(Err(e)) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
                    Some(Ok(r)) => view! { <Explanation reply=r /> }.into_any(),
                }}
            </section>
        })}
        {move || explain.get().map(|(other, reply)| view! {
            <section class="panel" aria-live="polite">
                <h2>"How it connects to " {other.name.clone()}</h2>
                <DrawerKeep candidate=other.clone() selected_item=selected_item />
                {move || explain_note.get().then(|| view! {
                    <p class="muted" data-testid="no-metapath-explanation">"At this graph's size the plausibility model keeps only each entity's best pairs, not the metapath values behind a score: these are the graph's paths from the known answers to the candidate."</p>
                })}
                {match reply {
                    None => view! { <p class="loading">"Finding paths of up to three hops…"</p> }.into_any(),
                    Some(Err(e)) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
                    Some(Ok(r)) if r.paths.is_empty() => view! { <p class="muted">"No path of three hops or fewer."</p> }.into_any(),
                    Some(Ok(r)) => view! { <SubgraphSvg graph=r.subgraph centre=0 paths=r.paths /> }.into_any(),
                }}
            </section>
        })}
        </aside>
        {move || match detail.get() {
            Some(Ok(d)) => Some(view! { <Neighbourhood detail=d on_explain=open_explain /> }),
            _ => None,
        }}
    }
}

/// An address whose entity the graph does not hold (a mistyped or foreign identifier): said in
/// plain words, with a search by name and the way back.
#[component]
fn NotInGraph(key: String) -> impl IntoView {
    let navigate = use_navigate();
    let on_pick = Callback::new(move |n: NodeView| {
        navigate(
            &format!("/entity/{}", api::enc(&key_of(&n))),
            Default::default(),
        );
    });
    // "Disease::DOID:999999" reads as "DOID:999999 (a disease)".
    let shown = match key.split_once("::") {
        Some((kind, id)) if !kind.is_empty() && !id.is_empty() => {
            format!("{id} ({})", kind.to_lowercase())
        }
        _ => key.clone(),
    };
    view! {
        <section class="panel" role="alert" data-testid="not-in-graph">
            <h1>"Not in the graph"</h1>
            <p>{format!("Nothing in the knowledge graph has the identifier “{shown}”: it may be mistyped, or come from a database the graph does not cover.")}</p>
            <p>"Search for it by name instead:"</p>
            <crate::search_box::SearchBox on_pick=on_pick kind=Signal::derive(|| None::<String>) placeholder="A disease or drug name, e.g. asthma" />
            <p><a href="/">"← Back to Discover"</a></p>
        </section>
    }
}

/// The drawer's "Keep" button, when the explained node is the candidate selected in the table.
#[component]
fn DrawerKeep(
    candidate: NodeView,
    selected_item: RwSignal<Option<serenqa_shared::api::ShortlistItem>>,
) -> impl IntoView {
    move || {
        selected_item
            .get()
            .filter(|it| it.candidate.kind == candidate.kind && it.candidate.id == candidate.id)
            .map(|it| view! { <p class="drawer-keep"><crate::shortlist::KeepButton item=it /> " " <a href="/shortlist">"See the shortlist"</a></p> })
    }
}

#[component]
fn EntityHeader(detail: NodeDetail) -> impl IntoView {
    let n = detail.node.clone();
    let link = detail.link.clone().map(|(site, url)| {
        view! { <a href=url target="_blank" rel="noopener noreferrer">{format!("{site} ↗")}</a> }
    });
    view! {
        <section class="panel">
            <h1 data-testid="entity-name">{n.name.clone()}</h1>
            <p>
                <span class="kind-dot" style=format!("background:{}", crate::kind_colour(&n.kind))></span>
                {n.kind.clone()} " · " <code>{n.id.clone()}</code> " · " {detail.degree} " edges " {link}
            </p>
        </section>
    }
}

#[component]
fn Neighbourhood(detail: NodeDetail, on_explain: Callback<NodeView>) -> impl IntoView {
    let groups = detail
        .groups
        .iter()
        .map(|g| {
            let more = g.count as usize - g.nodes.len();
            let items = g
                .nodes
                .iter()
                .map(|m| {
                    let m2 = m.clone();
                    let href = format!("/entity/{}", api::enc(&key_of(m)));
                    view! {
                        <li>
                            <a href=href>{m.name.clone()}</a>
                            " "
                            <button class="link-button" on:click=move |_| on_explain.run(m2.clone()) title="Show the explanation subgraph">"paths"</button>
                        </li>
                    }
                })
                .collect_view();
            view! {
                <article class="group" data-relation=g.relation.clone()>
                    <h3>{format!("{} · {}", g.phrase, g.count)}</h3>
                    <ul>{items}</ul>
                    {(more > 0).then(|| view! { <p class="muted">{format!("and {more} more")}</p> })}
                </article>
            }
        })
        .collect_view();
    view! {
        <h2>"Neighbourhood in the graph"</h2>
        <div class="groups">{groups}</div>
    }
}

/// A prediction's evidence: one group per top metapath with its contribution to the score,
/// the heaviest paths (DWPC path weights: hub-heavy paths weigh little) with every edge's
/// source, and the drawing of those paths with the drug and the disease in it.
#[component]
fn Explanation(reply: ExplainResponse) -> impl IntoView {
    let p = reply.prediction.clone();
    let nodes = reply.subgraph.nodes.clone();
    let link = move |i: u32| {
        let n = nodes.get(i as usize).cloned();
        n.map(|n| {
            let href = format!("/entity/{}", api::enc(&key_of(&n)));
            view! { <a href=href>{n.name.clone()}</a> }
        })
    };
    let groups = reply
        .groups
        .iter()
        .map(|g| {
            let paths = g
                .paths
                .iter()
                .map(|path| {
                    let mut parts = Vec::new();
                    for (k, &ni) in path.nodes.iter().enumerate() {
                        parts.push(view! { <span class="path-node">{link(ni)}</span> }.into_any());
                        if let Some(e) = path.edges.get(k) {
                            let title = format!("{} — source: {} ({})", e.relation, e.source, e.license);
                            parts.push(view! { <span class="path-edge" title=title.clone() data-source=e.source.clone()>{format!(" —{}→ ", e.verb)}<sup class="muted">{e.source.clone()}</sup>" "</span> }.into_any());
                        }
                    }
                    view! { <li><span class="muted">{format!("{:.0}% · ", path.share * 100.0)}</span>{parts}</li> }
                })
                .collect_view();
            let more = g.paths_found.saturating_sub(g.paths.len());
            view! {
                <article class="group" data-testid="metapath-group" data-metapath=g.metapath.clone()>
                    <h3><code>{g.metapath.clone()}</code>{format!(" · contribution {:+.2}", g.contribution)}</h3>
                    <p class="muted">{g.reading.clone()}</p>
                    <ul>{paths}</ul>
                    {(more > 0).then(|| view! { <p class="muted">{format!("and {more} lighter paths{}", if g.truncated { " (enumeration cut)" } else { "" })}</p> })}
                </article>
            }
        })
        .collect_view();
    let empty = reply.groups.is_empty();
    // Side-effect records of the drug for this disease: what the model did with them, in
    // words, and each record with its source.
    let contradictions = reply
        .contradictions
        .iter()
        .map(|c| {
            let records = c
                .records
                .iter()
                .map(|r| {
                    let href = format!("/entity/{}", api::enc(&key_of(&r.side_effect)));
                    view! { <li><a href=href>{r.side_effect.name.clone()}</a>{format!(" — {} · source: {} ({})", r.matched, r.source, r.license)}</li> }
                })
                .collect_view();
            let head = if c.fitted {
                format!(" · contribution {:+.2}", c.contribution)
            } else {
                " · not read by the model".to_string()
            };
            view! {
                <article class="group" data-testid="contradiction-group" data-feature=c.feature.clone()>
                    <h3>{c.feature.clone()}{head}</h3>
                    <p>{c.text.clone()}</p>
                    <ul>{records}</ul>
                </article>
            }
        })
        .collect_view();
    let has_contradictions = !reply.contradictions.is_empty();
    let contradiction_note = reply.contradiction_note.clone();
    view! {
        <p data-testid="explain-score">
            {format!("Plausibility {:.3}: {}; {}.", p.score, standing(p.disease_percentile, "drugs", &p.disease.name), standing(p.compound_percentile, "diseases", &p.compound.name))}
        </p>
        <p class="muted">"Each group is a metapath (a kind of connection) with its contribution to the linear half of the score (the served score averages a linear model over these metapaths with gradient-boosted trees, whose share is not split by metapath); paths are weighted as in the model, so connections through hubs (common side effects, promiscuous enzymes) count little. Hover an edge for its source."</p>
        {empty.then(|| view! { <p class="muted">"No metapath raises this prediction above average."</p> })}
        <div class="groups">{groups}</div>
        {has_contradictions.then(|| view! {
            <h3>"Recorded as causing the disease"</h3>
            {contradiction_note.clone().map(|t| view! { <p data-testid="contradiction-note">{t}</p> })}
            <div class="groups">{contradictions}</div>
        })}
        {(!reply.subgraph.nodes.is_empty()).then(|| view! { <SubgraphSvg graph=reply.subgraph.clone() centre=0 paths=Vec::new() /> })}
        <p class="muted" data-testid="edge-sources">{format!("Edge sources: {}", {
            let mut v = reply.edge_sources.clone();
            v.sort();
            v.dedup();
            v.join("; ")
        })}</p>
    }
}

/// Where a pair stands among the others scored for the same entity, in words: a percentile
/// (the share of the others scoring lower, ties counted half) reads as "above 95.5% of …", and
/// the top one as "the highest of …" rather than "the 100.0th percentile".
fn standing(percentile: f64, others: &str, of: &str) -> String {
    if percentile >= 99.95 {
        format!("the highest of the {others} scored for {of}")
    } else {
        format!("above {percentile:.1}% of the {others} scored for {of}")
    }
}
