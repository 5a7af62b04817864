//! Admins: invite users by one-time link (`invites`: copy, pending list, revoke, one valid link
//! per address), list accounts (with one-time password-reset links), read each annotator's
//! progress and submitted rankings (`oversight`),
//! assign batches to annotators with an overlap target and see each question's coverage,
//! calibrate the RNS weights against the expert partitions, read each calibration's held-out
//! comparison with the weights in force, put one in force in an explicit step (only within the
//! minimums of `serenqa_shared::annotate::calibration_gate`), go back to the shipped weights or
//! an earlier calibration, and see the weights in force with their history.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::annotate::{
    calibration_gate, BatchAssignment, BatchRef, CalibrateRequest, CalibrationReport,
    CalibrationView, Me, ResetCreated, Role, SetAssignment, Source, UseWeights, User, WeightsAdmin,
};

use super::account::SignOut;
use super::invites::Invites;
use super::oversight::WorkViews;
use super::{date_time, fmt3, get, send, Failure, SignedAs};

#[component]
pub fn Admin() -> impl IntoView {
    view! { <SignedAs needs=vec![Role::Admin] children=|me: Me| view! { <AdminBody me=me /> } /> }
}

#[component]
fn AdminBody(me: Me) -> impl IntoView {
    let (users, set_users) = signal(None::<Result<Vec<User>, Failure>>);
    let (batches, set_batches) = signal(Vec::<BatchRef>::new());
    spawn_local(async move {
        set_users.set(Some(get("/api/admin/users").await));
        if let Ok(v) = get::<Vec<BatchAssignment>>("/api/admin/assignments").await {
            set_batches.set(
                v.into_iter()
                    .map(|a| BatchRef {
                        id: a.batch.id,
                        name: a.batch.name,
                    })
                    .collect(),
            );
        }
    });
    view! {
        <h1>"Administration"</h1>
        <SignOut me=me />
        <p class="muted"><a href="/annotate">"Annotate"</a> " · " <a href="/review">"Results"</a></p>
        <nav class="toc panel" aria-label="On this page" data-testid="admin-toc">
            <strong>"On this page"</strong>
            <ul>
                <li><a href="#invites">"Invites"</a></li>
                <li><a href="#users">"Users"</a></li>
                <li><a href="#progress">"Progress"</a></li>
                <li><a href="#rankings">"Rankings"</a></li>
                <li><a href="#assign">"Assign batches"</a></li>
                <li><a href="#weights">"Weights in force"</a></li>
                <li><a href="#calibrate">"Calibrate"</a></li>
            </ul>
        </nav>
        <Invites />
        <section class="panel" id="users">
            <h2>"Users"</h2>
            {move || match users.get() {
                None => view! { <p class="loading">"Loading…"</p> }.into_any(),
                Some(Err(f)) => view! { <p class="error">{f.message}</p> }.into_any(),
                Some(Ok(v)) => view! {
                    <div class="table-wrap"><table data-testid="users"><thead><tr><th>"Email"</th><th>"Name"</th><th>"Role"</th><th>"Password"</th></tr></thead>
                    <tbody>{v.into_iter().map(|u| view! { <tr><td>{u.email.clone()}</td><td>{u.name.clone()}</td><td>{u.role.as_str()}</td><td><ResetButton user=u /></td></tr> }).collect_view()}</tbody></table></div>
                }.into_any(),
            }}
        </section>
        <WorkViews batches=batches />
        <Assignments />
        <Calibration />
        <p class="to-top"><a href="#main">"↑ Back to the top"</a></p>
    }
}

/// The weights in force, their history, calibrating, and putting a calibration in force.
#[component]
fn Calibration() -> impl IntoView {
    let (weights, set_weights) = signal(None::<Result<WeightsAdmin, Failure>>);
    let (cals, set_cals) = signal(None::<Result<Vec<CalibrationView>, Failure>>);
    let reload = move || {
        spawn_local(async move {
            set_weights.set(Some(get("/api/admin/weights").await));
            set_cals.set(Some(get("/api/admin/calibrations").await));
        });
    };
    reload();
    let (source, set_source) = signal(Source::Serenqa);
    let (step, set_step) = signal(0.05f64);
    let (running, set_running) = signal(false);
    let (report, set_report) = signal(None::<Result<CalibrationReport, String>>);
    // The calibration the admin asked to put in force (`Some(None)`: the shipped weights),
    // awaiting the confirmation; and the outcome of the last change.
    // Where the confirmation shows: beside the report, in the stored list or in the panel.
    let asking = RwSignal::new(None::<(Option<i64>, &'static str)>);
    let (change, set_change) = signal(None::<Result<String, String>>);
    let calibrate = move |_| {
        set_running.set(true);
        set_change.set(None);
        let body = CalibrateRequest {
            source: source.get_untracked(),
            step: step.get_untracked(),
            min_annotators: 1,
        };
        spawn_local(async move {
            let r: Result<CalibrationReport, Failure> =
                send("POST", "/api/admin/calibrations", &body).await;
            set_running.set(false);
            set_report.set(Some(r.map_err(|f| f.message)));
            reload();
        });
    };
    let put_in_force = move |calibration: Option<i64>| {
        asking.set(None);
        spawn_local(async move {
            let body = UseWeights {
                calibration,
                confirm: true,
            };
            let r: Result<WeightsAdmin, Failure> = send("PUT", "/api/admin/weights", &body).await;
            set_change.set(Some(match &r {
                Ok(w) => Ok(format!("In force now: {}", w.in_force.source.label)),
                Err(f) => Err(f.message.clone()),
            }));
            reload();
        });
    };
    // The explicit step: what changes, for everyone, and a confirmation.
    let confirm_box = move |target: Option<i64>, place: &'static str, worse: Option<String>| {
        move || {
            (asking.get() == Some((target, place))).then(|| {
                let what = match target {
                    Some(id) => format!("calibration #{id}"),
                    None => "the shipped weights".to_string(),
                };
                view! {
                    <div class="notice" role="alertdialog" data-testid="confirm-weights">
                        <p>{format!("Put {what} in force? Discover, Ask and every partition use the weights in force for everyone from now on; you can go back at any time.")}</p>
                        {worse.clone().map(|w| view! { <p class="field-error" data-testid="heldout-worse">{w}</p> })}
                        <button class="button" type="button" data-testid="confirm-use" on:click=move |_| put_in_force(target)>{format!("Yes, use {what}")}</button>
                        " "
                        <button class="link-button" type="button" on:click=move |_| asking.set(None)>"Cancel"</button>
                    </div>
                }
            })
        }
    };
    let in_force_now = move |id: i64| {
        weights.with(|w| {
            w.as_ref()
                .and_then(|w| w.as_ref().ok())
                .is_some_and(|w| w.calibration == Some(id))
        })
    };
    let use_button = move |id: i64, blocked: Option<String>, place: &'static str| {
        let in_force = in_force_now(id);
        if in_force {
            return view! { <span class="tag" data-testid="in-force-tag">"in force"</span> }
                .into_any();
        }
        match blocked {
            Some(why) => view! {
                <span class="use-weights">
                    <button class="button secondary" type="button" disabled=true data-testid="use-weights" aria-describedby=format!("blocked-{id}")>"Use these weights"</button>
                    <span class="field-error" id=format!("blocked-{id}") data-testid="use-blocked">{why}</span>
                </span>
            }.into_any(),
            None => view! {
                <button class="button" type="button" data-testid="use-weights" on:click=move |_| asking.set(Some((Some(id), place)))>"Use these weights"</button>
            }.into_any(),
        }
    };
    view! {
        <section class="panel" id="weights" data-testid="weights-panel">
            <h2>"RNS weights in force"</h2>
            {move || match weights.get() {
                None => view! { <p class="loading">"Loading…"</p> }.into_any(),
                Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
                Some(Ok(w)) => {
                    let calibrated = w.calibration.is_some();
                    view! {
                        <p data-testid="weights-in-force"><strong>{format!("α = {:.2}, β = {:.2}, γ = {:.2}", w.in_force.weights.alpha, w.in_force.weights.beta, w.in_force.weights.gamma)}</strong>
                            " — " {w.in_force.source.label.clone()}</p>
                        <p class="muted">{format!("A calibration can be put in force once it uses at least {} questions ranked by at least {} annotators.", w.min_questions, w.min_annotators)}</p>
                        {calibrated.then(|| view! {
                            <button class="button secondary" type="button" data-testid="revert-shipped" on:click=move |_| asking.set(Some((None, "panel")))>"Go back to the shipped weights"</button>
                        })}
                        {confirm_box(None, "panel", None)}
                        {(!w.history.is_empty()).then(|| view! {
                            <details data-testid="weights-history"><summary>{format!("History ({} change{})", w.history.len(), if w.history.len() == 1 { "" } else { "s" })}</summary>
                                <ul class="weights-history">{w.history.into_iter().map(|h| view! {
                                    <li><strong>{h.calibration.map_or("shipped weights".to_string(), |c| format!("calibration #{c}"))}</strong>
                                        {format!(" — {} by {}", date_time(h.at), h.by)}
                                        {(!h.note.is_empty()).then(|| format!(" ({})", h.note))}</li>
                                }).collect_view()}</ul>
                            </details>
                        })}
                    }.into_any()
                }
            }}
            {move || change.get().map(|r| match r {
                Ok(m) => view! { <p class="notice ok" role="status" data-testid="weights-changed">{m}</p> }.into_any(),
                Err(m) => view! { <p class="field-error" role="alert" data-testid="weights-error">{m}</p> }.into_any(),
            })}
        </section>
        <section class="panel" id="calibrate">
            <h2>"Calibrate the RNS weights"</h2>
            <p class="muted">"Searches the weights |α| + |β| + |γ| = 1 (signs free: a negative weight favours low values of its term) for those whose RNS-guided partitions agree best with the expert partitions (submitted rankings, skips left out; candidates must be in the loaded graph). Every fifth question is held out and compares the result with the weights in force. A calibration is stored, not used, until you put it in force."</p>
            <div class="form inline">
                <label>"Question set"
                    <select on:change=move |ev| set_source.set(Source::parse(&event_target_value(&ev)).unwrap_or(Source::Serenqa))>
                        <option value="serenqa">"SerenQA questionnaire"</option>
                        <option value="benchmark">"Generated benchmark"</option>
                    </select>
                </label>
                <label>"Grid step"
                    <input type="number" min="0.01" max="0.5" step="0.01" prop:value=move || step.get().to_string()
                        on:change=move |ev| set_step.set(event_target_value(&ev).parse().unwrap_or(0.05)) />
                </label>
                <button class="button" type="button" on:click=calibrate disabled=running>
                    {move || if running.get() { "Calibrating…" } else { "Calibrate" }}
                </button>
            </div>
            {move || report.get().map(|r| match r {
                Err(e) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
                Ok(rep) => {
                    let id = rep.id.unwrap_or(0);
                    let blocked = calibration_gate(rep.questions, rep.annotators).err();
                    let worse = worse_heldout(&rep);
                    view! {
                        <div data-testid="calibration-report">
                            <p><strong>{format!("α = {:.2}, β = {:.2}, γ = {:.2}", rep.alpha, rep.beta, rep.gamma)}</strong>
                               {format!(" (calibration #{id}) — {} questions ranked by {} annotators; their agreement: mean Kendall's W {}.",
                                   rep.questions, rep.annotators, fmt3(rep.mean_kendall_w))}</p>
                            <p class="muted">{format!("On the fitting questions: agreement with the experts {:.3} (equal weights {:.3}); {} of {} grid points tie.",
                                   rep.agreement, rep.default_agreement, rep.best_points, rep.grid_points)}</p>
                            <Heldout rep=rep.clone() />
                            <div class="table-wrap"><table><thead><tr><th>"Strategies"</th><th class="num">"Agreement"</th><th class="num">"Pearson r"</th></tr></thead>
                            <tbody>{rep.pairs.into_iter().map(|p| view! {
                                <tr><td>{format!("{} vs {}", p.a, p.b)}</td><td class="num">{format!("{:.3}", p.agreement)}</td><td class="num">{fmt3(p.pearson)}</td></tr>
                            }).collect_view()}</tbody></table></div>
                            <div class="actions">{move || use_button(id, blocked.clone(), "report")}</div>
                            {confirm_box(Some(id), "report", worse)}
                        </div>
                    }.into_any()
                }
            })}
            <h3>"Stored calibrations"</h3>
            {move || match cals.get() {
                None => view! { <p class="loading">"Loading…"</p> }.into_any(),
                Some(Err(f)) => view! { <p class="error">{f.message}</p> }.into_any(),
                Some(Ok(v)) if v.is_empty() => view! { <p class="muted">"None yet."</p> }.into_any(),
                Some(Ok(v)) => view! {
                    <ul class="cal-list" data-testid="calibrations">
                    {v.into_iter().map(|c| {
                        let id = c.id;
                        let heldout = c.report.as_ref().and_then(|r| r.heldout.clone());
                        let worse = c.report.as_ref().and_then(worse_heldout);
                        let blocked = c.blocked.clone();
                        view! {
                            <li class="cal" data-cal=id>
                                <p><strong>{format!("#{id}: α = {:.2}, β = {:.2}, γ = {:.2}", c.alpha, c.beta, c.gamma)}</strong>
                                    {format!(" — {} · {} questions, {} annotators · agreement {:.3}", date_time(c.created_at), c.questions, c.annotators, c.agreement)}
                                    {heldout.map(|h| format!(" · held out ({} q.): {:.3} in force then → {:.3}", h.questions, h.before, h.after))}</p>
                                <div class="actions">{move || use_button(id, blocked.clone(), "list")}</div>
                                {confirm_box(Some(id), "list", worse)}
                                <details><summary>"provenance"</summary><pre class="prov">{c.provenance}</pre></details>
                            </li>
                        }
                    }).collect_view()}
                    </ul>
                }.into_any(),
            }}
        </section>
    }
}

/// The before/after comparison on held-out questions, in words.
#[component]
fn Heldout(rep: CalibrationReport) -> impl IntoView {
    match rep.heldout {
        None => view! { <p class="muted" data-testid="heldout">{format!("No held-out comparison: {} question(s) are too few to hold any out.", rep.questions)}</p> }.into_any(),
        Some(h) => {
            let verdict = if h.after > h.before + 1e-12 {
                "better than"
            } else if h.after + 1e-12 < h.before {
                "worse than"
            } else {
                "the same as"
            };
            view! {
                <div class="table-wrap" data-testid="heldout"><table>
                    <caption>{format!("Held out: {} questions the fit never saw — these weights do {verdict} the weights in force", h.questions)}</caption>
                    <thead><tr><th>"Weights"</th><th class="num">"Agreement"</th></tr></thead>
                    <tbody>
                        <tr><td>{format!("in force now: α = {:.2}, β = {:.2}, γ = {:.2} ({})", h.before_weights[0], h.before_weights[1], h.before_weights[2], h.before_label)}</td><td class="num">{format!("{:.3}", h.before)}</td></tr>
                        <tr><td>{format!("this calibration: α = {:.2}, β = {:.2}, γ = {:.2}", rep.alpha, rep.beta, rep.gamma)}</td><td class="num">{format!("{:.3}", h.after)}</td></tr>
                    </tbody>
                </table></div>
            }.into_any()
        }
    }
}

/// A warning for the confirmation when the calibration agrees less with the experts than the
/// weights in force on the held-out questions.
fn worse_heldout(rep: &CalibrationReport) -> Option<String> {
    rep.heldout.as_ref().filter(|h| h.after < h.before).map(|h| {
        format!(
            "On the {} held-out questions these weights agree less with the experts ({:.3}) than the weights in force when it ran ({:.3}).",
            h.questions, h.after, h.before
        )
    })
}

/// "Reset link": a one-time link that lets the user choose a new password (shown once).
#[component]
fn ResetButton(user: User) -> impl IntoView {
    let (out, set_out) = signal(None::<Result<ResetCreated, String>>);
    let id = user.id;
    let click = move |_| {
        spawn_local(async move {
            let r: Result<ResetCreated, Failure> = send(
                "POST",
                &format!("/api/admin/users/{id}/reset"),
                &serde_json::json!({}),
            )
            .await;
            set_out.set(Some(r.map_err(|f| f.message)));
        });
    };
    view! {
        {move || match out.get() {
            None => view! { <button class="link-button big" type="button" data-testid="reset" on:click=click>{format!("Reset link for {}", user.email)}</button> }.into_any(),
            Some(Ok(r)) => view! { <span>"One-time link (24 h, shown once): " <code data-testid="reset-link">{r.link}</code></span> }.into_any(),
            Some(Err(e)) => view! { <span class="error" role="alert">{e}</span> }.into_any(),
        }}
    }
}

/// Batches → annotators with an overlap target (k annotators per question), and coverage.
#[component]
fn Assignments() -> impl IntoView {
    let (list, set_list) = signal(None::<Result<Vec<BatchAssignment>, Failure>>);
    let (people, set_people) = signal(Vec::<User>::new());
    spawn_local(async move {
        if let Ok(u) = get::<Vec<User>>("/api/admin/users").await {
            set_people.set(
                u.into_iter()
                    .filter(|u| u.role == Role::Annotator)
                    .collect(),
            );
        }
        set_list.set(Some(get("/api/admin/assignments").await));
    });
    view! {
        <section class="panel" id="assign" data-testid="assignments">
            <h2>"Assign batches"</h2>
            <p class="muted">"A batch nobody is assigned to is open to every annotator; once assigned, only its annotators see it. The overlap target k is how many annotators each question should get; coverage counts submitted rankings per question."</p>
            {move || match list.get() {
                None => view! { <p class="loading">"Loading…"</p> }.into_any(),
                Some(Err(f)) => view! { <p class="error" role="alert">{f.message}</p> }.into_any(),
                Some(Ok(v)) => view! {
                    <div class="assign-list">
                        {v.into_iter().map(|a| view! { <AssignRow a=a people=people.get_untracked() /> }).collect_view()}
                    </div>
                }.into_any(),
            }}
        </section>
    }
}

#[component]
fn AssignRow(a: BatchAssignment, people: Vec<User>) -> impl IntoView {
    let bid = a.batch.id;
    let current = RwSignal::new(a.clone());
    let chosen = RwSignal::new(a.annotators.clone());
    let k = RwSignal::new(a.overlap.map(|k| k.to_string()).unwrap_or_default());
    let (msg, set_msg) = signal(None::<Result<String, String>>);
    let save = move |_| {
        let overlap = match k.get_untracked().trim() {
            "" => None,
            t => match t.parse::<i64>() {
                Ok(n) => Some(n),
                Err(_) => {
                    set_msg.set(Some(Err(
                        "k must be a whole number (or empty for no target)".into(),
                    )));
                    return;
                }
            },
        };
        let body = SetAssignment {
            annotators: chosen.get_untracked(),
            overlap,
        };
        spawn_local(async move {
            let r: Result<BatchAssignment, Failure> = send(
                "PUT",
                &format!("/api/admin/batches/{bid}/assignment"),
                &body,
            )
            .await;
            match r {
                Ok(x) => {
                    current.set(x);
                    set_msg.set(Some(Ok("Saved.".into())));
                }
                Err(f) => set_msg.set(Some(Err(f.message))),
            }
        });
    };
    let name = a.batch.name.clone();
    view! {
        <div class="assign" data-testid="assign-row" data-batch=bid>
            <div class="assign-head">
                <strong>{name.clone()}</strong>
                <span class="muted">{move || {
                    let c = current.get();
                    let n = c.coverage.len();
                    let k = c.overlap.unwrap_or(1);
                    let who = if c.annotators.is_empty() { "open to every annotator".to_string() } else { format!("{} assigned", c.annotators.len()) };
                    format!("{who} · {} of {n} questions have ≥ {k} submitted ranking{}", c.covered, if k == 1 { "" } else { "s" })
                }}</span>
            </div>
            <div class="progress" role="progressbar" aria-label=format!("{name} coverage")
                aria-valuemin="0" aria-valuemax=move || current.get().coverage.len() aria-valuenow=move || current.get().covered>
                <span style=move || { let c = current.get(); format!("width: {}%", if c.coverage.is_empty() { 0 } else { 100 * c.covered as usize / c.coverage.len() }) }></span>
            </div>
            <div class="form inline">
                <fieldset class="assign-people">
                    <legend>"Annotators"</legend>
                    {if people.is_empty() { Some(view! { <span class="muted">"No annotator accounts yet."</span> }) } else { None }}
                    {people.into_iter().map(|u| {
                        let uid = u.id;
                        view! {
                            <label class="check"><input type="checkbox" data-testid="assign-user" data-user=uid
                                prop:checked=move || chosen.get().contains(&uid)
                                on:change=move |ev| { let on = event_target_checked(&ev); chosen.update(|v| { v.retain(|x| *x != uid); if on { v.push(uid); } }); } />
                                {u.email.clone()}</label>
                        }
                    }).collect_view()}
                </fieldset>
                <label>"k per question"
                    <input type="number" min="1" max="1000" data-testid="assign-k" placeholder="none" prop:value=move || k.get() on:input=move |ev| k.set(event_target_value(&ev)) />
                </label>
                <button class="button" type="button" data-testid="assign-save" on:click=save>"Save"</button>
                {move || msg.get().map(|m| match m {
                    Ok(t) => view! { <span class="muted" role="status">{t}</span> }.into_any(),
                    Err(e) => view! { <span class="error" role="alert">{e}</span> }.into_any(),
                })}
            </div>
            <details>
                <summary>"Coverage per question"</summary>
                <ol class="coverage" data-testid="coverage">
                    {move || {
                        let c = current.get();
                        let k = c.overlap.unwrap_or(1).max(1);
                        c.coverage.iter().enumerate().map(|(i, n)| {
                            let class = if *n >= k { "cov full" } else if *n > 0 { "cov part" } else { "cov none" };
                            view! { <li class=class title=format!("question {}: {n} of {k}", i + 1)>{format!("{} · {n}/{k}", i + 1)}</li> }
                        }).collect_view()
                    }}
                </ol>
            </details>
        </div>
    }
}
