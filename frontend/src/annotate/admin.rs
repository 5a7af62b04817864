//! Admins: invite users by one-time link, list accounts (with one-time password-reset links),
//! assign batches to annotators with an overlap target and see each question's coverage,
//! calibrate the RNS weights against the expert partitions and see every stored calibration
//! with its provenance.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::annotate::{
    BatchAssignment, CalibrateRequest, CalibrationReport, CalibrationView, CreateInvite,
    InviteCreated, Me, ResetCreated, Role, SetAssignment, Source, User,
};

use super::account::SignOut;
use super::{fmt3, get, send, Failure, SignedAs};

#[component]
pub fn Admin() -> impl IntoView {
    view! { <SignedAs needs=vec![Role::Admin] children=|me: Me| view! { <AdminBody me=me /> } /> }
}

#[component]
fn AdminBody(me: Me) -> impl IntoView {
    let (users, set_users) = signal(None::<Result<Vec<User>, Failure>>);
    let reload_users =
        move || spawn_local(async move { set_users.set(Some(get("/api/admin/users").await)) });
    reload_users();
    let (email, set_email) = signal(String::new());
    let (role, set_role) = signal(Role::Annotator);
    let (link, set_link) = signal(None::<Result<InviteCreated, String>>);
    let invite = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = CreateInvite {
            email: email.get_untracked(),
            role: role.get_untracked(),
        };
        spawn_local(async move {
            let r: Result<InviteCreated, Failure> = send("POST", "/api/admin/invites", &body).await;
            set_link.set(Some(r.map_err(|f| f.message)));
        });
    };
    let (cals, set_cals) = signal(None::<Result<Vec<CalibrationView>, Failure>>);
    let reload_cals = move || {
        spawn_local(async move { set_cals.set(Some(get("/api/admin/calibrations").await)) });
    };
    reload_cals();
    let (source, set_source) = signal(Source::Serenqa);
    let (step, set_step) = signal(0.05f64);
    let (running, set_running) = signal(false);
    let (report, set_report) = signal(None::<Result<CalibrationReport, String>>);
    let calibrate = move |_| {
        set_running.set(true);
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
            reload_cals();
        });
    };
    view! {
        <h1>"Administration"</h1>
        <SignOut me=me />
        <p class="muted"><a href="/annotate">"Annotate"</a> " · " <a href="/review">"Results"</a></p>
        <section class="panel">
            <h2>"Invite a user"</h2>
            <form class="form inline" on:submit=invite>
                <label>"Email" <input type="email" name="invite-email" required prop:value=email on:input=move |ev| set_email.set(event_target_value(&ev)) /></label>
                <label>"Role"
                    <select name="invite-role" on:change=move |ev| set_role.set(Role::parse(&event_target_value(&ev)).unwrap_or(Role::Annotator))>
                        <option value="annotator">"annotator"</option>
                        <option value="reviewer">"reviewer"</option>
                        <option value="admin">"admin"</option>
                    </select>
                </label>
                <button class="button" type="submit">"Create invite link"</button>
            </form>
            {move || link.get().map(|r| match r {
                Ok(i) => view! { <p>"One-time link (shown once): " <code data-testid="invite-link">{i.link}</code></p> }.into_any(),
                Err(e) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
            })}
        </section>
        <section class="panel">
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
        <Assignments />
        <section class="panel">
            <h2>"Calibrate the RNS weights"</h2>
            <p class="muted">"Searches the weight simplex α + β + γ = 1 for the weights whose RNS-guided partitions agree best with the expert partitions (submitted rankings; candidates must be in the loaded graph)."</p>
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
                Ok(rep) => view! {
                    <div data-testid="calibration-report">
                        <p><strong>{format!("α = {:.2}, β = {:.2}, γ = {:.2}", rep.alpha, rep.beta, rep.gamma)}</strong>
                           {format!(" — agreement with experts {:.3} (default weights {:.3}) on {} questions; {} of {} grid points tie.",
                               rep.agreement, rep.default_agreement, rep.questions, rep.best_points, rep.grid_points)}</p>
                        <div class="table-wrap"><table><thead><tr><th>"Strategies"</th><th class="num">"Agreement"</th><th class="num">"Pearson r"</th></tr></thead>
                        <tbody>{rep.pairs.into_iter().map(|p| view! {
                            <tr><td>{format!("{} vs {}", p.a, p.b)}</td><td class="num">{format!("{:.3}", p.agreement)}</td><td class="num">{fmt3(p.pearson)}</td></tr>
                        }).collect_view()}</tbody></table></div>
                    </div>
                }.into_any(),
            })}
            <h3>"Stored calibrations"</h3>
            {move || match cals.get() {
                None => view! { <p class="loading">"Loading…"</p> }.into_any(),
                Some(Err(f)) => view! { <p class="error">{f.message}</p> }.into_any(),
                Some(Ok(v)) if v.is_empty() => view! { <p class="muted">"None yet."</p> }.into_any(),
                Some(Ok(v)) => view! {
                    <div class="table-wrap"><table><thead><tr><th>"#"</th><th>"Weights (α, β, γ)"</th><th class="num">"Agreement"</th><th class="num">"Questions"</th><th>"Provenance"</th></tr></thead>
                    <tbody>{v.into_iter().map(|c| view! {
                        <tr><td>{c.id}</td><td>{format!("{:.2}, {:.2}, {:.2}", c.alpha, c.beta, c.gamma)}</td>
                            <td class="num">{format!("{:.3}", c.agreement)}</td><td class="num">{c.questions}</td>
                            <td><details><summary>"details"</summary><pre class="prov">{c.provenance}</pre></details></td></tr>
                    }).collect_view()}</tbody></table></div>
                }.into_any(),
            }}
        </section>
    }
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
        <section class="panel" data-testid="assignments">
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
