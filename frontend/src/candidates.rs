//! Candidates of a disease or drug: proposed by the plausibility model (when the server has
//! predictions), each with its plausibility (a calibrated probability) and percentiles next to
//! R, N, S, how it relates to the known treatments (new mechanism, same class, shared target)
//! and any safety flag (the graph records the drug as causing the disease). The default order
//! is the server's *first screen* (`serenqa_shared::screen`: plausible first, new mechanisms
//! preferred inside a plausibility band, flagged drugs last), recomputed here with the same
//! function when its controls move, so an untouched page shows the API's order exactly. Other
//! orders: the user's blend of plausibility and RNS (a slider) and any column. Shown as a
//! plausibility × serendipity scatter (click a point to explain it) and as a table filterable
//! by plausibility percentile, pharmacologic class and mechanism. The known answers are listed
//! by relation: disease-modifying (`treats`) and symptomatic (`palliates`).
//!
//! The list comes first: the settings (the first screen's rule, the RNS weights, the blend, the
//! filters and the scatter) are folded under "Adjust the order and filters", which starts open
//! only when something is set away from the defaults (a shared link), and says so when closed;
//! the count of rows shown stays beside the sort menu, so a filtered list never looks whole.
//!
//! The view's state — weights, blend, the first screen's rule, filters, sort and the candidate
//! whose explanation is open — is kept in the address (`crate::url_state`), so a link
//! reproduces the view. Each
//! candidate can be kept on the shortlist (`crate::shortlist`) with the scores shown. On
//! phones the table becomes one card per candidate (`style/main.css`, `table.cards`).
//!
//! Serendipity is re-weighted in the browser: the α, β, γ
//! sliders re-score every candidate from the slice with `serenqa_shared::rns` compiled to
//! WebAssembly — no request to the server — and the page shows how long that took.
//! The sliders start at the weights the server used (its defaults in force: an expert
//! calibration, else the shipped fitted weights), the page says where those came from, and
//! "Reset" returns to them. Weights are normalised (only their proportions matter) and may be
//! negative (a negative weight prefers low values of its term); equal RNS values are ordered
//! by `rns::rank` (terms, then node index), so the order never depends on chance.

use leptos::prelude::*;
use serenqa_shared::api::{
    DiscoverResponse, NodeView, ShortlistEntity, ShortlistItem, ShortlistScores, KNOWN_PALLIATES,
    KNOWN_TREATS,
};
use serenqa_shared::rns::{rank, Scorer, Terms, Weights};
use serenqa_shared::screen::{self, Flagged, Mechanism, ScreenItem, ScreenRule};

use crate::url_state::{self, num, parse_num};

mod labels;
pub use labels::known_for_line;
use labels::{
    fmt_p, mechanism_detail, mechanism_help, ranking_csv, safety_text, safety_title, screen_item,
};

/// How long the view must stay unchanged before the address is updated.
const URL_DEBOUNCE_MS: u64 = 250;
/// The blend slider's start (half plausibility, half serendipity) when the server has
/// predictions; the settings fold counts any other value as a change.
const DEFAULT_BLEND: f64 = 0.5;

/// Why a page with only its own entity known shows no S.
/// One-sentence definitions of the terms, for the column headers of every candidates table
/// (Discover, the shortlist, Ask).
pub const RNS_HELP: &str = "RNS = (αR + βN + γS) / (|α| + |β| + |γ|): the weighted mean of the three terms; ties ordered by the terms, then by node.";
pub const R_HELP: &str = "Relevance, 0–1: one minus the mean embedding distance to what is already known — the known answers and the entity the page or question names (1 = same context).";
pub const N_HELP: &str = "Novelty, 0–1: how unlikely it is that a 1–3 step walk leaving what is already known (the known answers and the named entity) lands on this candidate, in bits / 40: ½ at one chance in a million; a candidate no walk reaches is scored by how rare it is.";
pub const S_HELP: &str = "Surprise, 0–1: how differently walks leaving the candidate and walks leaving what is already known spread over these entities (Jensen–Shannon divergence, bits).";

const S_UNINFORMATIVE: &str = "Surprise is not shown: with only this entity known, S compares where walks from the entity and from the candidate land among just those two, so it only says whether walks connect them at all (S = 1 if so, 0 if not), which N already measures. RNS leaves it out here.";

fn entity(n: &NodeView) -> ShortlistEntity {
    ShortlistEntity {
        kind: n.kind.clone(),
        id: n.id.clone(),
        name: n.name.clone(),
    }
}

/// Re-scores all candidates; returns the terms (candidate order) and the elapsed milliseconds.
fn rescore(d: &DiscoverResponse, w: &Weights) -> (Result<Vec<Terms>, String>, f64) {
    let perf = web_sys::window().and_then(|w| w.performance());
    let t0 = perf.as_ref().map(web_sys::Performance::now).unwrap_or(0.0);
    let result = Scorer::new(&d.slice)
        .map_err(|e| e.to_string())
        .and_then(|s| {
            let ne = d.existing.len();
            let ae: Vec<usize> = (0..ne).collect();
            let cands: Vec<usize> = (ne..ne + d.candidates.len()).collect();
            if cands.is_empty() {
                return Ok(Vec::new());
            }
            s.score_candidates(&ae, &cands, w)
                .map_err(|e| e.to_string())
        });
    let ms = perf.as_ref().map(|p| p.now() - t0).unwrap_or(0.0);
    (result, ms)
}

fn bar(value: f64, lo: f64, hi: f64) -> impl IntoView {
    let pct = if hi > lo {
        ((value - lo) / (hi - lo)).clamp(0.0, 1.0) * 100.0
    } else {
        0.0
    };
    view! { <span class="bar" aria-hidden="true"><span style=format!("width:{pct:.0}%")></span></span> }
}

#[component]
pub fn Candidates(
    data: DiscoverResponse,
    on_explain: Callback<NodeView>,
    /// The selected candidate as a shortlist item with its current scores (for the drawer's
    /// "Keep" button).
    #[prop(optional)]
    selected_item: Option<RwSignal<Option<ShortlistItem>>>,
) -> impl IntoView {
    // Start where the address says (a shared link), else where the server scored: the weights
    // of the reply (its defaults); "Reset" goes back to the server's defaults.
    let from_url = url_state::get("w").and_then(|s| {
        let v: Vec<f64> = s
            .split(',')
            .filter_map(|x| parse_num(x, -1.0, 1.0))
            .collect();
        (v.len() == 3).then(|| Weights {
            alpha: v[0],
            beta: v[1],
            gamma: v[2],
        })
    });
    let start = from_url.unwrap_or(data.weights);
    // With only the page's entity known (|A| = 2 per candidate) S cannot tell candidates apart:
    // it is not shown, and RNS leaves it out (γ is disabled).
    let s_ok = serenqa_shared::rns::surprise_informative(data.existing.len(), 1);
    let defaults = data.default_weights.clone();
    let data = StoredValue::new(data);
    let (alpha, set_alpha) = signal(start.alpha);
    let (beta, set_beta) = signal(start.beta);
    let (gamma, set_gamma) = signal(start.gamma);
    // The γ RNS uses: the slider's, or 0 where S is not shown (one home for that rule).
    let gamma_in_use = move || if s_ok { gamma.get() } else { 0.0 };
    let gamma_in_use_untracked = move || if s_ok { gamma.get_untracked() } else { 0.0 };
    let moved = move || {
        let d = defaults.weights;
        (alpha.get() - d.alpha).abs() > 1e-9
            || (beta.get() - d.beta).abs() > 1e-9
            || (gamma.get() - d.gamma).abs() > 1e-9
    };
    let source_line = {
        let d = data.with_value(|x| x.default_weights.clone());
        let date = if d.source.date.is_empty() {
            String::new()
        } else {
            format!(", {}", d.source.date)
        };
        format!(
            "Default weights α = {:.2}, β = {:.2}, γ = {:.2}: {}{date}.",
            d.weights.alpha, d.weights.beta, d.weights.gamma, d.source.label
        )
    };
    let default_w = data.with_value(|x| x.default_weights.weights);
    let reset = move |_| {
        set_alpha.set(default_w.alpha);
        set_beta.set(default_w.beta);
        set_gamma.set(default_w.gamma);
    };
    let (last_ms, set_last_ms) = signal(None::<f64>);
    // Re-scores so far: lets a test (or a curious reader) tell a fresh time from the last one.
    let (rescores, set_rescores) = signal(0u64);
    // (terms per candidate, error)
    let scored = Memo::new(move |_| {
        let w = Weights {
            alpha: alpha.get(),
            beta: beta.get(),
            gamma: gamma_in_use(),
        };
        let (r, ms) = data.with_value(|d| rescore(d, &w));
        set_last_ms.set(Some(ms));
        set_rescores.update(|n| *n += 1);
        r
    });
    let has_plaus = data.with_value(|d| d.candidates.iter().any(|c| c.plausibility.is_some()));
    // Blend: 1 = plausibility only, 0 = RNS only.
    let classes: Vec<String> = data.with_value(|d| {
        let mut v: Vec<String> = d
            .candidates
            .iter()
            .flat_map(|c| c.classes.iter().map(|k| k.name.clone()))
            .collect();
        v.sort();
        v.dedup();
        v
    });
    let url_blend = url_state::get("blend")
        .and_then(|s| parse_num(&s, 0.0, 1.0))
        .filter(|_| has_plaus);
    let (blend, set_blend) =
        signal(url_blend.unwrap_or(if has_plaus { DEFAULT_BLEND } else { 0.0 }));
    // The first screen (`serenqa_shared::screen`): the API's order, and the default sort when
    // the server says which rule it followed; its controls start at that rule.
    let screen_rule0: Option<ScreenRule> = data.with_value(|d| d.screen.as_ref().map(|s| s.rule));
    let has_screen = screen_rule0.is_some();
    let rule0 = screen_rule0.unwrap_or_default();
    let default_sort = if has_screen {
        SortKey::Screen
    } else {
        SortKey::Blend
    };
    let (sort, set_sort) = signal(
        url_state::get("sort")
            .and_then(|s| SortKey::parse(&s))
            .filter(|k| s_ok || *k != SortKey::S)
            .filter(|k| has_screen || *k != SortKey::Screen)
            .unwrap_or(default_sort),
    );
    let (band, set_band) = signal(
        url_state::get("band")
            .and_then(|s| parse_num(&s, 0.0, 1.0))
            .unwrap_or(rule0.band),
    );
    let (favour_new, set_favour_new) = signal(match url_state::get("newmech").as_deref() {
        Some("0") => false,
        Some("1") => true,
        _ => rule0.favour_new,
    });
    // Where flagged drugs go: last when unexplained, in the band after the others, last, or in place.
    let (flagged_at, set_flagged_at) = signal(
        url_state::get("flagged")
            .and_then(|f| Flagged::parse(&f))
            .unwrap_or(rule0.flagged),
    );
    let show_flagged = move || flagged_at.get() == Flagged::InPlace;
    let rule = move || ScreenRule {
        band: band.get(),
        flagged: flagged_at.get(),
        favour_new: favour_new.get(),
    };
    let screen_moved = move || rule() != rule0;
    let reset_screen = move |_| {
        set_band.set(rule0.band);
        set_favour_new.set(rule0.favour_new);
        set_flagged_at.set(rule0.flagged);
    };
    // Mechanism filter: `any`, `new` (a new mechanism) or `obvious` (same class / shared target).
    let has_mechanism = has_screen
        || data.with_value(|d| {
            d.candidates
                .iter()
                .any(|c| c.mechanism.kind != Mechanism::NoneKnown)
        });
    let (mech_filter, set_mech_filter) = signal(
        url_state::get("mech")
            .filter(|m| m == "new" || m == "obvious")
            .unwrap_or_else(|| "any".to_string()),
    );
    // Position of each candidate in the first-screen order of the current controls.
    let screen_pos = Memo::new(move |_| {
        let r = rule();
        data.with_value(|d| {
            let items: Vec<ScreenItem> = d.candidates.iter().map(screen_item).collect();
            let mut pos = vec![0usize; items.len()];
            for (k, i) in screen::order(&items, &r).into_iter().enumerate() {
                if let Some(p) = pos.get_mut(i) {
                    *p = k;
                }
            }
            pos
        })
    });
    let (min_plaus, set_min_plaus) = signal(
        url_state::get("pmin")
            .and_then(|s| parse_num(&s, 0.0, 100.0))
            .unwrap_or(0.0),
    );
    let (class_filter, set_class_filter) = signal(
        url_state::get("class")
            .filter(|c| classes.contains(c))
            .unwrap_or_default(),
    );
    let (class_mode, set_class_mode) = signal(
        if url_state::get("cmode").as_deref() == Some("exclude") {
            "exclude"
        } else {
            "include"
        }
        .to_string(),
    );
    // Anything set away from the defaults (a shared link, a reload): the settings start open,
    // so the reader sees why the order differs; otherwise the list comes first.
    let filters_on = move || {
        min_plaus.get() > 0.0
            || !class_filter.get().is_empty()
            || mech_filter.get() != "any"
            || (has_plaus && (blend.get() - DEFAULT_BLEND).abs() > 1e-9)
    };
    let tune_open = untrack(|| moved() || screen_moved() || filters_on());
    let (selected, set_selected) = signal(None::<usize>);
    // Every change of the view goes to the address (not the first run: an untouched page keeps
    // a clean address), once the change has settled: dragging a slider fires many input events,
    // and browsers throttle (and refetch the page icon on) address changes.
    let url_timer = StoredValue::new(None::<TimeoutHandle>);
    Effect::new(move |first: Option<()>| {
        let (a, b, g) = (alpha.get(), beta.get(), gamma.get());
        let (bl, pmin, cf, cm, so) = (
            blend.get(),
            min_plaus.get(),
            class_filter.get(),
            class_mode.get(),
            sort.get(),
        );
        let (bd, fav, inplace, mf) = (
            band.get(),
            favour_new.get(),
            flagged_at.get(),
            mech_filter.get(),
        );
        if first.is_some() {
            let changes: Vec<(&'static str, Option<String>)> = vec![
                ("w", Some(format!("{},{},{}", num(a), num(b), num(g)))),
                ("blend", has_plaus.then(|| num(bl))),
                ("pmin", (pmin > 0.0).then(|| num(pmin))),
                ("class", (!cf.is_empty()).then_some(cf)),
                ("cmode", (cm == "exclude").then(|| cm.clone())),
                ("sort", (so != default_sort).then(|| so.name().to_string())),
                ("band", ((bd - rule0.band).abs() > 1e-9).then(|| num(bd))),
                (
                    "newmech",
                    (fav != rule0.favour_new).then(|| if fav { "1" } else { "0" }.to_string()),
                ),
                (
                    "flagged",
                    (inplace != rule0.flagged).then(|| inplace.name().to_string()),
                ),
                ("mech", (mf != "any").then_some(mf)),
            ];
            if let Some(h) = url_timer.get_value() {
                h.clear();
            }
            let h = set_timeout_with_handle(
                move || url_state::set(&changes),
                std::time::Duration::from_millis(URL_DEBOUNCE_MS),
            )
            .ok();
            url_timer.set_value(h);
        }
    });
    let plaus_of = move |ci: usize| -> Option<(f64, f64, f64)> {
        data.with_value(|d| {
            d.candidates[ci]
                .plausibility
                .as_ref()
                .map(|p| (p.score, p.disease_percentile, p.compound_percentile))
        })
    };
    // Percentile of the pair among the query's own predictions (the query's side).
    let query_is_disease = data.with_value(|d| d.query.kind == "Disease");
    let pct_of = move |ci: usize| -> f64 {
        plaus_of(ci)
            .map(|(_, dp, cp)| if query_is_disease { dp } else { cp })
            .unwrap_or(0.0)
    };
    let blended = move |ci: usize, t: &Terms| -> f64 {
        let b = blend.get();
        b * pct_of(ci) / 100.0 + (1.0 - b) * t.rns
    };
    let order = move || -> Vec<(usize, Terms)> {
        match scored.get() {
            Ok(terms) => {
                let ids: Vec<u32> =
                    data.with_value(|d| d.candidates.iter().map(|c| c.node.index).collect());
                let mut v: Vec<(usize, Terms)> = rank(&terms, &ids)
                    .into_iter()
                    .map(|k| (k, terms[k]))
                    .collect();
                let min = min_plaus.get();
                let cf = class_filter.get();
                let include = class_mode.get() == "include";
                let mf = mech_filter.get();
                v.retain(|(ci, _)| {
                    let ok_plaus = !has_plaus || pct_of(*ci) >= min;
                    let ok_class = cf.is_empty() || {
                        let has = data
                            .with_value(|d| d.candidates[*ci].classes.iter().any(|k| k.name == cf));
                        has == include
                    };
                    let kind = data.with_value(|d| d.candidates[*ci].mechanism.kind);
                    let ok_mech = !has_mechanism
                        || match mf.as_str() {
                            "new" => kind == Mechanism::New,
                            "obvious" => kind.is_obvious(),
                            _ => true,
                        };
                    ok_plaus && ok_class && ok_mech
                });
                let key = sort.get();
                if key == SortKey::Screen {
                    // The first screen is ordered over every candidate, then filtered: a filter
                    // hides rows, it does not change who competes for a slot.
                    screen_pos.with(|pos| {
                        v.sort_by_key(|(ci, _)| pos.get(*ci).copied().unwrap_or(usize::MAX));
                    });
                    return v;
                }
                // Stable sorts on top of the RNS order: ties keep the deterministic RNS order.
                let val = |ci: usize, t: &Terms| -> f64 {
                    match key {
                        SortKey::Blend => blended(ci, t),
                        SortKey::Plausibility => plaus_of(ci).map(|p| p.0).unwrap_or(0.0),
                        SortKey::Percentile => pct_of(ci),
                        SortKey::Rns => t.rns,
                        SortKey::R => t.r,
                        SortKey::N => t.n,
                        SortKey::S => t.s,
                        SortKey::Name | SortKey::Screen => 0.0,
                    }
                };
                if key == SortKey::Name {
                    v.sort_by_cached_key(|(ci, _)| {
                        data.with_value(|d| d.candidates[*ci].node.name.to_lowercase())
                    });
                } else {
                    v.sort_by(|a, b| val(b.0, &b.1).total_cmp(&val(a.0, &a.1)));
                }
                v
            }
            Err(_) => Vec::new(),
        }
    };
    // The candidate the address names (`why=`) has its explanation opened.
    let why = url_state::get("why");
    Effect::new(move |_| {
        if let Some(w) = why.clone() {
            let hit = data.with_value(|d| {
                d.candidates
                    .iter()
                    .position(|c| crate::api::key_of(&c.node) == w)
            });
            if let Some(ci) = hit {
                set_selected.set(Some(ci));
                on_explain.run(data.with_value(|d| d.candidates[ci].node.clone()));
            }
        }
    });
    // A candidate as a shortlist item, with the scores and weights of the moment.
    let item_of = move |ci: usize, t: &Terms| -> Option<ShortlistItem> {
        let (query, cand) = data.with_value(|d| {
            (
                entity(&d.query),
                d.candidates.get(ci).map(|c| entity(&c.node)),
            )
        });
        let pl = plaus_of(ci);
        Some(ShortlistItem {
            query,
            candidate: cand?,
            scores: ShortlistScores {
                plausibility: pl.map(|p| p.0),
                percentile: pl.map(|_| pct_of(ci)),
                rns: t.rns,
                r: t.r,
                n: t.n,
                s: s_ok.then_some(t.s),
                weights: Weights {
                    alpha: alpha.get_untracked(),
                    beta: beta.get_untracked(),
                    gamma: gamma_in_use_untracked(),
                },
                blend: has_plaus.then(|| blend.get_untracked()),
            },
            added_at: 0,
        })
    };
    if let Some(out) = selected_item {
        Effect::new(move |_| {
            let item = selected.get().and_then(|ci| {
                let _ = (alpha.get(), beta.get(), gamma.get(), blend.get());
                scored
                    .with(|r| r.as_ref().ok().and_then(|terms| terms.get(ci).copied()))
                    .and_then(|t| item_of(ci, &t))
            });
            out.set(item);
        });
    }
    let slider = move |label: &'static str,
                       help: &'static str,
                       get: ReadSignal<f64>,
                       set: WriteSignal<f64>,
                       id: &'static str,
                       enabled: bool| {
        view! {
            <label class="slider" for=id>
                <span>{label} " " <span class="muted">{help}</span></span>
                <input id=id type="range" min="-1" max="1" step="0.05" data-testid=id disabled=!enabled
                    prop:value=move || get.get().to_string()
                    on:input=move |ev| {
                        if let Ok(v) = event_target_value(&ev).parse::<f64>() {
                            set.set(v);
                        }
                    } />
                <output>{move || format!("{:.2}", get.get())}</output>
            </label>
        }
    };
    let (existing, answer_kind, existing_known, method, query_name) = data.with_value(|d| {
        (
            d.existing.clone(),
            d.answer_kind.clone(),
            d.existing_known,
            d.method.clone(),
            d.query.name.clone(),
        )
    });
    let (
        known_answers,
        known_note,
        screen_reason,
        screen_details,
        flag_note,
        flagged_total,
        weak_note,
    ) = data.with_value(|d| {
        (
            d.known.clone(),
            d.known_note.clone(),
            d.screen.as_ref().map(|s| s.reason.clone()),
            d.screen
                .as_ref()
                .map(|s| s.details.clone())
                .filter(|x| !x.is_empty()),
            d.screen
                .as_ref()
                .map(|s| s.flag_note.clone())
                .unwrap_or_default(),
            d.screen.as_ref().map(|s| s.flagged).unwrap_or(0),
            d.evidence
                .as_ref()
                .filter(|e| e.weak)
                .map(|e| e.note.clone()),
        )
    });
    // Headings for a disease's page (its drugs) and a drug's page (its diseases).
    let (known_title, palliates_title) = if query_is_disease {
        (
            "Known treatments (disease-modifying)",
            "Symptomatic (palliates)",
        )
    } else {
        ("Known indications", "Palliates")
    };
    // The ranking as shown (current weights), for a clinician to take away.
    let csv_name = data.with_value(|d| {
        format!(
            "serenqa-{}-candidates.csv",
            d.query
                .name
                .to_lowercase()
                .replace(|c: char| !c.is_alphanumeric(), "-")
        )
    });
    let csv_href = move || {
        let w = (alpha.get(), beta.get(), gamma_in_use());
        let from = if moved() {
            "set on the page".to_string()
        } else {
            data.with_value(|d| d.default_weights.source.label.clone())
        };
        let screen = has_screen.then(rule);
        let so = sort.get();
        let csv = data.with_value(|d| ranking_csv(d, &order(), w, s_ok, &from, so.label(), screen));
        format!("data:text/csv;charset=utf-8,{}", crate::api::enc(&csv))
    };
    // Ae ends with the page's own entity; the list shows the known answers only.
    let query_key = data.with_value(|d| crate::api::key_of(&d.query));
    let known_li = |n: &NodeView, relation: &'static str| {
        view! { <li data-relation=relation><a href=format!("/entity/{}", crate::api::enc(&crate::api::key_of(n)))>{n.name.clone()}</a></li> }
    };
    let known_view = if known_answers.is_empty() {
        // An older server: one list of what is known.
        let existing_view = existing
            .iter()
            .filter(|n| crate::api::key_of(n) != query_key)
            .map(|n| known_li(n, KNOWN_TREATS))
            .collect_view();
        view! {
            <h2>{if query_is_disease { "Known treatments" } else { "Known indications" }}</h2>
            {if existing_known {
                view! { <ul class="inline-list" data-testid="existing">{existing_view}</ul> }.into_any()
            } else {
                view! { <p class="muted">"None recorded in the graph: candidates are scored against the entity itself."</p> }.into_any()
            }}
        }
        .into_any()
    } else {
        let of = |rel: &str| -> Vec<NodeView> {
            known_answers
                .iter()
                .filter(|k| k.relation == rel)
                .map(|k| k.node.clone())
                .collect()
        };
        let (treats, palliates) = (of(KNOWN_TREATS), of(KNOWN_PALLIATES));
        let none = |what: &str| view! { <p class="muted">{format!("No {what} recorded in the graph.")}</p> };
        view! {
            <div class="known-answers">
                {(!known_note.is_empty()).then(|| view! { <p class="known-note" data-testid="known-note">{known_note.clone()}</p> })}
                <div class="known-groups">
                <div class="known-group">
                    <h2>{known_title}</h2>
                    <ul class="inline-list" data-testid="existing">{treats.iter().map(|n| known_li(n, KNOWN_TREATS)).collect_view()}</ul>
                    {treats.is_empty().then(|| none(if query_is_disease { "disease-modifying treatment" } else { "indication" }))}
                </div>
                <div class="known-group">
                    <h2>{palliates_title}</h2>
                    <ul class="inline-list" data-testid="known-palliates">{palliates.iter().map(|n| known_li(n, KNOWN_PALLIATES)).collect_view()}</ul>
                    {palliates.is_empty().then(|| none(if query_is_disease { "symptomatic (palliative) drug" } else { "palliated disease" }))}
                </div>
                </div>
            </div>
        }
        .into_any()
    };
    // On a drug's page the candidates are diseases: the drug is the one that may cause them.
    let drug_name = (!query_is_disease).then(|| query_name.clone());
    let flagged_sentence = move |n: usize| -> String {
        let s = if n == 1 { "" } else { "s" };
        let (is, where_) = (
            if n == 1 { "is" } else { "are" },
            match flagged_at.get() {
                Flagged::Last => "at the end of the list",
                Flagged::UnexplainedLast => "at the end of the list when no class or target shared with a known treatment explains the record; the others keep their place, with their warning",
                Flagged::InBand | Flagged::InPlace => "after the unflagged candidates of similar plausibility",
            },
        );
        if query_is_disease {
            format!("{n} drug{s} recorded as causing {query_name} (or a condition matched to it) {is} placed {where_}.")
        } else {
            format!("{n} disease{s} that {query_name} is recorded as causing {is} placed {where_}.")
        }
    };
    // How many of the first ten rows shown are new mechanisms.
    let top10_line = move || {
        let o = order();
        let top: Vec<usize> = o.iter().take(10).map(|(ci, _)| *ci).collect();
        if top.is_empty() {
            return None;
        }
        let (new, obvious) = data.with_value(|d| {
            top.iter().fold((0, 0), |(n, ob), &ci| {
                let k = d.candidates[ci].mechanism.kind;
                (
                    n + usize::from(k == Mechanism::New),
                    ob + usize::from(k.is_obvious()),
                )
            })
        });
        // Nothing to compare with (no class or target known for any of them, as on a graph
        // without pharmacologic classes): a count of zeros would say nothing.
        (new + obvious > 0).then(|| {
            format!(
                "Of the top {} shown: {new} new mechanism{}, {obvious} same class or shared target as a known treatment.",
                top.len(),
                if new == 1 { "" } else { "s" }
            )
        })
    };
    view! {
            <section class="panel" data-testid="discovery">
                {known_view}
                <h2>{format!("Serendipitous {} candidates", answer_kind.to_lowercase())}</h2>
                {weak_note.map(|n| view! { <p class="notice" data-testid="weak-evidence" role="note"><strong>"Weak evidence. "</strong>{n}</p> })}
                <p class="muted">{method}</p>
                <details class="tune" data-testid="tune" prop:open=tune_open>
                    <summary>
                        "Adjust the order and filters"
                        <span class="muted">" — first-screen rule, serendipity weights, blend, filters, chart"</span>
                        {move || (moved() || screen_moved() || filters_on()).then(|| view! { <span class="tune-changed" data-testid="tune-changed">" · changed from the defaults"</span> })}
                    </summary>
                {has_screen.then(|| view! {
                    <fieldset class="sliders screen-controls" data-testid="screen-controls">
                        <legend>"First screen"</legend>
                        {screen_reason.map(|r| view! { <p class="muted screen-reason" data-testid="screen-reason">{r}</p> })}
                        {screen_details.map(|t| view! { <details class="muted screen-details" data-testid="screen-details"><summary>"Why this order"</summary><p>{t}</p></details> })}
                        <label class="slider" for="w-band">
                            <span>"Plausibility band " <span class="muted">"(a candidate competes for a slot when its plausibility is at least this share of the best remaining; 1 = plausibility order)"</span></span>
                            <input id="w-band" type="range" min="0" max="1" step="0.05" data-testid="w-band"
                                prop:value=move || band.get().to_string()
                                on:input=move |ev| { if let Ok(v) = event_target_value(&ev).parse::<f64>() { set_band.set(v.clamp(0.0, 1.0)); } } />
                            <output>{move || format!("{:.2}", band.get())}</output>
                        </label>
                        <label class="toggle">
                            <input type="checkbox" data-testid="favour-new" prop:checked=move || favour_new.get()
                                on:change=move |ev| set_favour_new.set(event_target_checked(&ev)) />
                            " Favour new mechanisms inside the band"
                        </label>
                        <label class="toggle" for="flagged-at">
                            {if query_is_disease { "Drugs recorded as causing the disease: " } else { "Diseases the drug is recorded as causing: " }}
                            <select id="flagged-at" data-testid="flagged-at" on:change=move |ev| if let Some(f) = Flagged::parse(&event_target_value(&ev)) { set_flagged_at.set(f) }>
                                {Flagged::ALL.into_iter().map(|f| view! {
                                    <option value=f.name() selected=move || flagged_at.get() == f>{match f {
                                        Flagged::UnexplainedLast => "last if no known class or target explains it",
                                        Flagged::InBand => "after the others of similar plausibility",
                                        Flagged::Last => "at the end of the list",
                                        Flagged::InPlace => "in place (flag shown only)",
                                    }}</option>
                                }).collect_view()}
                            </select>
                        </label>
                        <p class="muted">
                            {move || if sort.get() == SortKey::Screen { "These set the \"First screen\" order. " } else { "These set the \"First screen\" order (the table is sorted otherwise now). " }}
                            {move || screen_moved().then(|| view! { <button class="link-button" data-testid="screen-reset" on:click=reset_screen>"Reset to the server's rule"</button> })}
                            {move || (sort.get() != SortKey::Screen).then(|| view! { " " <button class="link-button" data-testid="sort-screen" on:click=move |_| set_sort.set(SortKey::Screen)>"Sort by the first screen"</button> })}
                        </p>
                    </fieldset>
                })}
                <div class="sliders" role="group" aria-label="RNS weights">
                    {slider("α relevance", "(closeness in embedding space)", alpha, set_alpha, "w-alpha", true)}
                    {slider("β novelty", "(not predicted by walks from what is already known)", beta, set_beta, "w-beta", true)}
                    {slider("γ surprise", if s_ok { "(different walk distribution)" } else { "(not used here: with only this entity known, S cannot tell candidates apart)" }, gamma, set_gamma, "w-gamma", s_ok)}
                    {move || {
                        // A negative weight reverses what its term rewards; say so in words.
                        let meaning = [
                            (alpha.get(), "α < 0 favours candidates unlike what is already known"),
                            (beta.get(), "β < 0 favours candidates the walks from what is already known predict"),
                            (gamma_in_use(), "γ < 0 favours candidates whose walks resemble those of what is already known"),
                        ];
                        let neg: Vec<&str> = meaning.iter().filter(|(w, _)| *w < 0.0).map(|(_, t)| *t).collect();
                        (!neg.is_empty()).then(|| view! {
                            <p class="muted" data-testid="negative-weights">{format!("A negative weight favours low values of its term: {}.", neg.join("; "))}</p>
                        })
                    }}
                    <p class="muted" data-testid="weights-source"
                        data-alpha=default_w.alpha.to_string() data-beta=default_w.beta.to_string() data-gamma=default_w.gamma.to_string()>
                        {source_line}
                        {move || moved().then_some(" You have moved the sliders; RNS uses their proportions.")}
                        " "
                        <button class="link-button" data-testid="weights-reset" on:click=reset>"Reset to defaults"</button>
                    </p>
                    <p class="muted" data-testid="rescore-time" data-rescores=move || rescores.get().to_string()>
                        {move || last_ms.get().map(|ms| format!("Re-scored {} candidates in {:.2} ms in WebAssembly (no server request).", data.with_value(|d| d.candidates.len()), ms))}
                    </p>
                </div>
                {has_plaus.then(|| view! {
                    <div class="sliders" role="group" aria-label="Blend and filters">
                        <label class="slider" for="w-blend">
                            <span>"Blend " <span class="muted">"(for the \"Blend\" sort: 0 = serendipity only, 1 = plausibility only)"</span></span>
                            <input id="w-blend" type="range" min="0" max="1" step="0.05" data-testid="w-blend"
                                prop:value=move || blend.get().to_string()
                                on:input=move |ev| { if let Ok(v) = event_target_value(&ev).parse::<f64>() { set_blend.set(v.clamp(0.0, 1.0)); } } />
                            <output>{move || format!("{:.2}", blend.get())}</output>
                        </label>
                        <label class="slider" for="filter-plaus">
                            <span>"Plausibility percentile at least"</span>
                            <input id="filter-plaus" type="number" min="0" max="100" step="1" data-testid="filter-plaus"
                                prop:value=move || min_plaus.get().to_string()
                                on:input=move |ev| { if let Ok(v) = event_target_value(&ev).parse::<f64>() { set_min_plaus.set(v.clamp(0.0, 100.0)); } } />
                        </label>
                        <label class="slider" for="filter-class">
                            <span>"Pharmacologic class"</span>
                            <span class="class-filter">
                            <select id="filter-mode" data-testid="filter-mode" on:change=move |ev| set_class_mode.set(event_target_value(&ev))>
                                <option value="include" selected=move || class_mode.get() == "include">"only"</option>
                                <option value="exclude" selected=move || class_mode.get() == "exclude">"exclude"</option>
                            </select>
                            <select id="filter-class" data-testid="filter-class" on:change=move |ev| set_class_filter.set(event_target_value(&ev))>
                                <option value="">"any class"</option>
                                {classes.iter().map(|k| { let k2 = k.clone(); view! { <option value=k.clone() selected=move || class_filter.get() == k2>{k.clone()}</option> } }).collect_view()}
                            </select>
                            </span>
                        </label>
                        {has_mechanism.then(|| view! {
                            <label class="slider" for="filter-mechanism">
                                <span>"Mechanism"</span>
                                <select id="filter-mechanism" data-testid="filter-mechanism" on:change=move |ev| set_mech_filter.set(event_target_value(&ev))>
                                    <option value="any" selected=move || mech_filter.get() == "any">"any"</option>
                                    <option value="new" selected=move || mech_filter.get() == "new">"new mechanism only"</option>
                                    <option value="obvious" selected=move || mech_filter.get() == "obvious">"same class or shared target only"</option>
                                </select>
                            </label>
                        })}
                    </div>
                    {move || {
                        let pts: Vec<(usize, f64, f64, String)> = order().iter().map(|(ci, t)| (*ci, pct_of(*ci), t.rns, data.with_value(|d| d.candidates[*ci].node.name.clone()))).collect();
                        let on_pick = move |ci: usize| {
                            set_selected.set(Some(ci));
                            on_explain.run(data.with_value(|d| d.candidates[ci].node.clone()));
                        };
                        scatter(pts, selected, on_pick)
                    }}
                })}
                </details>
                {move || scored.get().err().map(|e| view! { <p class="error" role="alert">{e}</p> })}
                {move || (flagged_total > 0 && sort.get() == SortKey::Screen && !show_flagged()).then(|| view! {
                    <p class="notice flagged-note" data-testid="flagged-note" role="note">
                        {flagged_sentence(flagged_total)} " "
                        <button class="link-button" data-testid="flagged-inplace" on:click=move |_| set_flagged_at.set(Flagged::InPlace)>"Show them in place"</button>
                        {(!flag_note.is_empty()).then(|| view! { <details class="flag-note" data-testid="flag-note"><summary>"What a flag means on this graph"</summary>{flag_note.clone()}</details> })}
                    </p>
                })}
                {move || has_mechanism.then(top10_line).flatten().map(|t| view! { <p class="muted" data-testid="new-count">{t}</p> })}
                <p class="muted" data-testid="shown-count">{move || format!("{} of {} candidates shown", order().len(), data.with_value(|d| d.candidates.len()))}{move || filters_on().then_some(" (filtered: see \"Adjust the order and filters\")")}</p>
    <div class="row-between list-head">
                            <label class="sort-select" for="sort-select">
                    "Sort by "
                    <select id="sort-select" data-testid="sort-select" on:change=move |ev| if let Some(k) = SortKey::parse(&event_target_value(&ev)) { set_sort.set(k) }>
                        {SortKey::ALL.into_iter().filter(|k| (has_plaus || !matches!(k, SortKey::Blend | SortKey::Plausibility | SortKey::Percentile)) && (s_ok || *k != SortKey::S) && (has_screen || *k != SortKey::Screen)).map(|k| view! {
                            <option value=k.name() selected=move || sort.get() == k>{k.label()}</option>
                        }).collect_view()}
                    </select>
                </label>
                <a class="button" download=csv_name href=csv_href data-testid="candidates-csv">"Download this ranking (CSV)"</a>
                </div>
                <div class="scroll-x">
                <table class="candidates cards" data-testid="candidates">
                    <thead><tr><th title="Position in the order chosen above">"#"</th>
                        {sort_header("Candidate", "Sort by name", SortKey::Name, sort, set_sort)}
                        {has_plaus.then(|| view! {
                            {sort_header("Blend", "blend × plausibility percentile + (1 − blend) × RNS: the order the slider sets", SortKey::Blend, sort, set_sort)}
                            {sort_header("Plausibility", "Predicted probability of a treatment relation (logistic regression and gradient-boosted trees on metapath path counts, cross-validated without leakage, calibrated on out-of-fold predictions); below it, a second model's probability that the drug palliates the disease", SortKey::Plausibility, sort, set_sort)}
                            {sort_header("Percentile", "Percentile of the pair among all the query's predictions (disease percentile for a disease, compound percentile for a drug); the other percentile is shown below it", SortKey::Percentile, sort, set_sort)}
                        })}
                        {sort_header("RNS", RNS_HELP, SortKey::Rns, sort, set_sort)}
                        {sort_header("R", R_HELP, SortKey::R, sort, set_sort)}
                        {sort_header("N", N_HELP, SortKey::N, sort, set_sort)}
                        {if s_ok {
                            sort_header("S", S_HELP, SortKey::S, sort, set_sort).into_any()
                        } else {
                            view! { <th title=S_UNINFORMATIVE data-testid="s-header">"S"</th> }.into_any()
                        }}
                        <th></th></tr></thead>
                    <tbody>
                        {move || order().into_iter().enumerate().map(|(rank, (ci, t))| {
                            let c = data.with_value(|d| d.candidates[ci].node.clone());
                            let known = data.with_value(|d| { let c = &d.candidates[ci]; known_for_line(&c.node, &c.known_for, c.known_for_total) });
                            let c2 = c.clone();
                            let href = format!("/entity/{}", crate::api::enc(&crate::api::key_of(&c)));
                            let pl = plaus_of(ci);
                            let pall = data.with_value(|d| d.candidates[ci].plausibility.as_ref().and_then(|p| p.palliates));
                            let bl = blended(ci, &t);
                            let item = item_of(ci, &t);
                            let (mech_kind, mech_detail, safety) = data.with_value(|d| {
                                let c = &d.candidates[ci];
                                (c.mechanism.kind, mechanism_detail(c), c.safety.clone())
                            });
                            // The drug's classes, less those its mechanism line already names
                            // ("same class as …: <class>"), so no class is said twice in a row.
                            let class_line = data.with_value(|d| {
                                let named = mech_detail.as_deref().unwrap_or("");
                                let k: Vec<String> = d.candidates[ci].classes.iter().map(|k| k.name.clone()).filter(|k| !named.contains(k.as_str())).collect();
                                (!k.is_empty()).then(|| k.join(", "))
                            });
                            let flagged = !safety.is_empty();
                            let badge_class = match mech_kind {
                                Mechanism::New => "mechanism mech-new",
                                Mechanism::SameClass | Mechanism::SharedTarget => "mechanism mech-obvious",
                                Mechanism::NoneKnown => "mechanism mech-none muted",
                            };
                            let safety_view = flagged.then(|| view! {
                                <div class="safety" data-testid="safety-flag" role="note" title=safety_title(&safety)>{safety_text(&safety, drug_name.as_deref(), mech_kind)}</div>
                            });
                            view! {
                                <tr data-candidate=c.name.clone() data-mechanism=mech_kind.name() class:flagged=flagged class:selected=move || selected.get() == Some(ci)>
                                    <td class="col-rank">{rank + 1}</td>
                                    <td class="col-name"><a href=href>{c.name.clone()}</a>
                                        {safety_view}
                                        {has_mechanism.then(|| view! {
                                            <div class="mechanism-line" data-testid="mechanism" data-mechanism=mech_kind.name() title=mechanism_help(mech_kind, query_is_disease)>
                                                <span class=badge_class>{mech_kind.label()}</span>
                                                {mech_detail.map(|t| view! { " " <span class="mech-detail">{t}</span> })}
                                            </div>
                                        })}
                                        {known.map(|k| view! { <div class="known-for muted">{k}</div> })}
                                        {class_line.map(|k| view! { <div class="muted classes">{k}</div> })}</td>
                                    {has_plaus.then(|| view! {
                                        <td class="num" data-testid="blend" data-label="Blend">{format!("{bl:.3}")}</td>
                                        <td class="num" data-label="Plausibility"><span data-testid="plausibility">{pl.map(|p| format!("{:.3}", p.0)).unwrap_or_default()}</span>
                                            {pall.map(|q| view! { <div class="muted" data-testid="palliates" title="Probability that the drug palliates (relieves symptoms of) the disease: a second model learned from the graph's palliation edges">{format!("palliates {:.3}{}", q.score, if q.known { " (known)" } else { "" })}</div> })}</td>
                                        <td class="num" data-testid="percentile" data-label="Percentile">{pl.map(|p| {
                                            let (mine, other, other_label) = if query_is_disease { (p.1, p.2, "of the drug's diseases") } else { (p.2, p.1, "of the disease's drugs") };
                                            view! { {format!("{mine:.1}%")} " " <span class="p-abs" title="Calibrated probability of a treatment relation (the plausibility): the percentile only ranks the pair among the query's own predictions">{format!("(P {})", fmt_p(p.0))}</span> <div class="muted">{format!("{other:.0}% {other_label}")}</div> }
                                        })}</td>
                                    })}
                                    <td class="num" data-testid="rns" data-label="RNS"><strong>{format!("{:.3}", t.rns)}</strong></td>
                                    <td class="num" data-testid="r" data-label="R">{format!("{:.3}", t.r)} {bar(t.r, 0.0, 1.0)}</td>
                                    <td class="num" data-testid="n" data-label="N">{format!("{:.3}", t.n)} {bar(t.n, 0.0, 1.0)}</td>
                                    {if s_ok {
                                        view! { <td class="num" data-testid="s" data-label="S">{format!("{:.3}", t.s)} {bar(t.s, 0.0, 1.0)}</td> }.into_any()
                                    } else {
                                        view! { <td class="num muted" data-testid="s" data-label="S" title=S_UNINFORMATIVE>"—"</td> }.into_any()
                                    }}
                                    <td class="col-actions">
                                        <button class="link-button why" on:click=move |_| { set_selected.set(Some(ci)); on_explain.run(c2.clone()) }>"why?"</button>
                                        {item.map(|it| view! { <crate::shortlist::KeepButton item=it /> })}
                                    </td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
                </div>
            </section>
        }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SortKey {
    Screen,
    Blend,
    Plausibility,
    Percentile,
    Rns,
    R,
    N,
    S,
    Name,
}

impl SortKey {
    const ALL: [SortKey; 9] = [
        SortKey::Screen,
        SortKey::Blend,
        SortKey::Plausibility,
        SortKey::Percentile,
        SortKey::Rns,
        SortKey::R,
        SortKey::N,
        SortKey::S,
        SortKey::Name,
    ];
    /// The name in the address (`sort=`).
    fn name(self) -> &'static str {
        match self {
            SortKey::Screen => "screen",
            SortKey::Blend => "blend",
            SortKey::Plausibility => "plausibility",
            SortKey::Percentile => "percentile",
            SortKey::Rns => "rns",
            SortKey::R => "r",
            SortKey::N => "n",
            SortKey::S => "s",
            SortKey::Name => "name",
        }
    }
    fn parse(s: &str) -> Option<SortKey> {
        SortKey::ALL.into_iter().find(|k| k.name() == s)
    }
    /// What the sort menu says.
    fn label(self) -> &'static str {
        match self {
            SortKey::Screen => "First screen",
            SortKey::Blend => "Blend",
            SortKey::Plausibility => "Plausibility",
            SortKey::Percentile => "Percentile",
            SortKey::Rns => "RNS",
            SortKey::R => "R (relevance)",
            SortKey::N => "N (novelty)",
            SortKey::S => "S (surprise)",
            SortKey::Name => "Name",
        }
    }
}

fn sort_header(
    label: &'static str,
    title: &'static str,
    key: SortKey,
    sort: ReadSignal<SortKey>,
    set_sort: WriteSignal<SortKey>,
) -> impl IntoView {
    let testid = format!("sort-{}", label.to_lowercase());
    // Names read left-aligned, so their header is too; figures are right-aligned.
    let class = if key == SortKey::Name { "" } else { "num" };
    view! {
        <th class=class title=title aria-sort=move || if sort.get() == key { "descending" } else { "none" }>
            <button class="link-button" data-testid=testid on:click=move |_| set_sort.set(key)>
                {label} {move || (sort.get() == key).then_some(" ▾")}
            </button>
        </th>
    }
}

/// The plausibility × serendipity scatter: x = plausibility percentile, y = RNS; the
/// "plausible but unexpected" corner is top right. Clicking a point explains the candidate.
fn scatter(
    pts: Vec<(usize, f64, f64, String)>,
    selected: ReadSignal<Option<usize>>,
    on_pick: impl Fn(usize) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    const W: f64 = 520.0;
    const H: f64 = 300.0;
    const PAD: f64 = 36.0;
    let (ylo, yhi) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.2), hi.max(p.2))
        });
    let (ylo, yhi) = if ylo.is_finite() && yhi > ylo {
        (ylo, yhi)
    } else {
        (0.0, 1.0)
    };
    // x spans the candidates' own percentiles (all are high when proposed by plausibility).
    let xlo = pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let xlo = if xlo.is_finite() && xlo < 100.0 {
        xlo.floor()
    } else {
        0.0
    };
    let x = move |v: f64| PAD + (v - xlo) / (100.0 - xlo) * (W - 2.0 * PAD);
    let y = move |v: f64| H - PAD - (v - ylo) / (yhi - ylo) * (H - 2.0 * PAD);
    // Drawn from the last row to the first, so the first rows' points lie on top where points
    // overlap (and can be clicked).
    let dots = pts
        .into_iter()
        .rev()
        .map(|(ci, px, py, name)| {
            let title = format!("{name}: plausibility percentile {px:.1}, RNS {py:.3}");
            view! {
                <circle cx=format!("{:.1}", x(px)) cy=format!("{:.1}", y(py)) r=move || if selected.get() == Some(ci) { "7" } else { "4" }
                    fill=move || if selected.get() == Some(ci) { "#e07a1f" } else { "#3b6fd8" } fill-opacity="0.6" stroke="#1d3f8a" stroke-width="0.6" style="cursor:pointer"
                    class="dot" class:on=move || selected.get() == Some(ci) data-candidate=name.clone()
                    tabindex="0" role="button" aria-label=title.clone()
                    on:click=move |_| on_pick(ci)
                    on:keydown=move |ev| if ev.key() == "Enter" { on_pick(ci) }>
                    <title>{title.clone()}</title>
                </circle>
            }
        })
        .collect_view();
    view! {
        <figure class="scatter">
            <svg viewBox=format!("0 0 {W} {H}") width="100%" style="max-width:560px;font-size:11px" role="img" data-testid="scatter" aria-label="Plausibility against serendipity; click a point to explain it">
                <line x1=PAD y1=H - PAD x2=W - PAD y2=H - PAD class="axis" stroke="#8a94a6" />
                <line x1=PAD y1=PAD x2=PAD y2=H - PAD class="axis" stroke="#8a94a6" />
                <text x=PAD y=H - PAD + 14.0 text-anchor="middle" fill="#4a5568">{format!("{xlo:.0}")}</text>
                <text x=W - PAD y=H - PAD + 14.0 text-anchor="middle" fill="#4a5568">"100"</text>
                <text x=W / 2.0 y=H - 6.0 text-anchor="middle" class="axis-label" fill="#4a5568">"plausibility percentile →"</text>
                <text x=12 y=H / 2.0 text-anchor="middle" class="axis-label" fill="#4a5568" transform=format!("rotate(-90 12 {})", H / 2.0)>"serendipity (RNS) →"</text>
                <text x=W - PAD y=PAD - 8.0 text-anchor="end" class="axis-label" fill="#8a94a6">"plausible and unexpected ↗"</text>
                {dots}
            </svg>
        </figure>
    }
}
