//! The annotation app's API. Every route states who may call it; `tests/annotate.rs` checks
//! each rule.
//!
//! | route | who |
//! |---|---|
//! | `POST /api/auth/login`, `GET/POST /api/auth/invite/{token}` | anyone (CSRF header; login backs off after failures) |
//! | `GET /api/auth/me` | anyone (anonymous: 200 `{signed_in: false}`, not 401) |
//! | `POST /api/auth/logout` | signed in |
//! | `GET /api/annotate/batches[/{id}]`, `GET /api/annotate/questions/{id}`, `PUT …/response`, `GET /api/annotate/responses` | annotator (own data only), admin |
//! | `GET /api/responses/{id}` | the response's author, admin (others 403) |
//! | `GET /api/review/batches[/{id}]`, `/api/review/expert-rankings`, `/api/review/export.{json,csv}`, `/api/review/runs` | reviewer, admin (pseudonyms; emails for admin only) |
//! | `GET /api/review/progress`, `GET /api/review/rankings` (in `oversight.rs`) | reviewer (pseudonyms only), admin |
//! | `GET/POST /api/auth/reset/{token}` | anyone holding an admin-issued reset link (CSRF header) |
//! | `POST /api/admin/invites`, `GET/DELETE /api/admin/invites[/{id}]` (in `oversight.rs`), `GET /api/admin/users`, `POST /api/admin/users/{id}/reset`, `GET /api/admin/assignments`, `PUT /api/admin/batches/{id}/assignment`, `GET/POST /api/admin/calibrations`, `GET/PUT /api/admin/weights` | admin |
//!
//! A batch assigned to some annotators is theirs only: others do not see it, and its questions
//! answer them 403 (a batch nobody is assigned to is open to every annotator).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::Json;
use serde::Deserialize;
use serenqa_shared::annotate::*;
use serenqa_shared::links::{source_label, source_link};
use serenqa_store::aggregate;
use serenqa_store::auth;
use serenqa_store::StoreError;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::extract::{J, Q};
use super::session::{
    db, forbidden, hashing, over_tls, session_cookie, store_error, Annotation, Authed, PublicWrite,
    SESSION_SECS,
};
use super::AppState;

/// Largest annotation request body (a ranking of 20 candidates is ~2 KB).
pub const MAX_ANNOTATION_BODY: usize = 64 * 1024;
/// Invite links stay valid this long.
pub const INVITE_SECS: i64 = 7 * 24 * 3600;
/// Password-reset links stay valid this long.
pub const RESET_SECS: i64 = 24 * 3600;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(me))
        .routes(routes!(invite_info, accept_invite))
        .routes(routes!(reset_info, reset_password))
        .routes(routes!(my_batches))
        .routes(routes!(my_batch))
        .routes(routes!(my_question))
        .routes(routes!(save_response))
        .routes(routes!(my_responses))
        .routes(routes!(one_response))
        .routes(routes!(review_batches))
        .routes(routes!(review_batch))
        .routes(routes!(expert_rankings))
        .routes(routes!(export_json))
        .routes(routes!(export_csv))
        .routes(routes!(runs))
        .routes(routes!(create_invite))
        .routes(routes!(users))
        .routes(routes!(create_reset))
        .routes(routes!(assignments))
        .routes(routes!(set_assignment))
        .routes(routes!(calibrations, calibrate))
        .routes(routes!(weights_admin, use_weights))
        .layer(DefaultBodyLimit::max(MAX_ANNOTATION_BODY))
}

fn unprocessable(code: &'static str, message: impl Into<String>) -> HttpError {
    HttpError {
        status: StatusCode::UNPROCESSABLE_ENTITY,
        code,
        message: message.into(),
    }
}

fn with_cookie<T: serde::Serialize>(body: T, cookie: String) -> HttpResponse {
    let mut resp = Json(body).into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    resp
}

/// Creates a session for `user`; returns the reply with its cookie.
async fn start_session(
    svc: &Arc<Annotation>,
    user: User,
    tls: bool,
) -> Result<HttpResponse, HttpError> {
    let token = auth::new_token().map_err(HttpError::internal)?;
    let csrf = auth::new_token().map_err(HttpError::internal)?;
    let (hash, c, uid) = (auth::token_hash(&token), csrf.clone(), user.id);
    db(svc, move |r| {
        r.create_session(&hash, uid, &c, serenqa_store::now() + SESSION_SECS)
    })
    .await?;
    Ok(with_cookie(
        Me { user, csrf },
        session_cookie(Some(&token), tls),
    ))
}

// ----- auth -----

#[utoipa::path(post, path = "/auth/login", tag = "annotation", description = "Sign in with e-mail and password; sets the session cookie. Failed attempts back off exponentially per e-mail, per client network (IPv6 /64) and per pair (429 with Retry-After while backing off).", request_body(content = serde_json::Value, description = "`{email, password}`"), responses((status = 200, description = "The signed-in user (`Me`) and a `Set-Cookie` session"), (status = 400, description = "E-mail over 254 bytes or password too long"), (status = 401, description = "Wrong e-mail or password"), (status = 429, description = "Backing off: retry after `Retry-After` seconds"), (status = 503, description = "Too many sign-ins being checked at once")))]
pub(crate) async fn login(
    w: PublicWrite,
    J(req): J<LoginRequest>,
) -> Result<HttpResponse, HttpError> {
    let email = req.email.trim().to_string();
    if email.len() > auth::MAX_EMAIL {
        return Err(HttpError::bad_request(
            "email_too_long",
            format!(
                "the e-mail address has {} bytes; at most {} are allowed",
                email.len(),
                auth::MAX_EMAIL
            ),
        ));
    }
    if req.password.len() > auth::MAX_PASSWORD {
        return Err(HttpError::bad_request(
            "bad_password",
            format!("the password has more than {} bytes", auth::MAX_PASSWORD),
        ));
    }
    let attempt = match w
        .svc
        .limiter
        .begin(&email, w.ip.map(|a| a.ip()), Instant::now())
    {
        Ok(a) => a,
        Err(wait) => {
            let secs = wait.as_secs().max(1);
            let mut e = HttpError {
                status: StatusCode::TOO_MANY_REQUESTS,
                code: "rate_limited",
                message: format!("too many failed sign-ins; try again in {secs} s"),
            }
            .into_response();
            e.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
            return Ok(e);
        }
    };
    let (em, pw) = (email.clone(), req.password.clone());
    // Verify against a dummy hash for unknown emails so timing does not reveal accounts.
    let user = hashing(&w.svc, move |r| {
        let found = r.user_by_email(&em)?;
        let ok = match &found {
            Some((_, h)) => auth::verify_password(&pw, h),
            None => {
                auth::verify_password(&pw, auth::dummy_hash());
                false
            }
        };
        Ok(found.filter(|_| ok).map(|(u, _)| u))
    })
    .await;
    match user {
        Ok(Some(u)) => {
            attempt.succeeded(Instant::now());
            start_session(&w.svc, u, w.tls).await
        }
        Ok(None) => {
            attempt.failed(Instant::now());
            Err(HttpError {
                status: StatusCode::UNAUTHORIZED,
                code: "bad_credentials",
                message: "wrong email or password".into(),
            })
        }
        Err(e) => {
            // Never checked (busy, store error): not a failure of the password.
            attempt.abandoned();
            Err(e)
        }
    }
}

#[utoipa::path(post, path = "/auth/logout", tag = "annotation", description = "Ends the session.", responses((status = 200, description = "Signed out"), (status = 401, description = "Not signed in")))]
pub(crate) async fn logout(a: Authed, headers: HeaderMap) -> Result<HttpResponse, HttpError> {
    let token =
        super::session::cookie(&headers, super::session::SESSION_COOKIE).unwrap_or_default();
    let hash = auth::token_hash(&token);
    db(&a.svc, move |r| r.delete_session(&hash)).await?;
    Ok(with_cookie(
        serde_json::json!({"signed_out": true}),
        session_cookie(None, over_tls(&a.svc, &headers)),
    ))
}

/// Who is signed in. Anonymous is an answer, not an error (`{"signed_in": false}`): every page
/// asks on load, and a 401 there would be a failed request in every anonymous visitor's
/// console. A cross-site request is still refused; the routes that need a session answer 401.
#[utoipa::path(get, path = "/auth/me", tag = "annotation", description = "Who is signed in: `{signed_in: false}` for an anonymous visitor (or a server without accounts), else `{signed_in: true, user, csrf}`.", responses((status = 200, description = "`Whoami`"), (status = 403, description = "Cross-site request")))]
pub(crate) async fn me(a: Result<Authed, HttpError>) -> Result<Json<Whoami>, HttpError> {
    match a {
        Ok(a) => Ok(Json(Whoami::from(Me {
            user: a.session.user,
            csrf: a.session.csrf,
        }))),
        Err(e) if e.status == StatusCode::UNAUTHORIZED || e.code == "no_store" => {
            Ok(Json(Whoami::anonymous()))
        }
        Err(e) => Err(e),
    }
}

fn check_token(token: &str) -> Result<String, HttpError> {
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(HttpError::not_found(
            "unknown_invite",
            "this invite link is not valid",
        ));
    }
    Ok(auth::token_hash(token))
}

/// 410 with the one reason the invite cannot be accepted (used, replaced, withdrawn, expired).
fn refuse_invite(inv: &Invite) -> Result<(), HttpError> {
    match invite_refusal(inv, serenqa_store::now()) {
        None => Ok(()),
        Some((code, message)) => Err(HttpError {
            status: StatusCode::GONE,
            code,
            message,
        }),
    }
}

#[utoipa::path(get, path = "/auth/invite/{token}", tag = "annotation", description = "What an invite link grants (role, e-mail) before it is accepted.", params(("token" = String, Path, description = "The invite token from the link")), responses((status = 200, description = "`InviteInfo`"), (status = 404, description = "Unknown invite"), (status = 410, description = "Used (`invite_used`), replaced by a newer link (`invite_replaced`), withdrawn (`invite_revoked`) or expired (`invite_expired`)")))]
pub(crate) async fn invite_info(
    State(s): State<AppState>,
    Path(token): Path<String>,
) -> Result<Json<InviteInfo>, HttpError> {
    let svc = super::session::service(&s)?;
    let hash = check_token(&token)?;
    let inv = db(&svc, move |r| r.invite(&hash))
        .await?
        .ok_or_else(|| HttpError::not_found("unknown_invite", "this invite link is not valid"))?;
    refuse_invite(&inv)?;
    Ok(Json(InviteInfo {
        email: inv.email,
        role: inv.role,
    }))
}

#[utoipa::path(post, path = "/auth/invite/{token}", tag = "annotation", description = "Accepts an invite: sets the password (and display name); signs in.", params(("token" = String, Path, description = "The invite token from the link")), request_body(content = serde_json::Value, description = "`{password, display_name?}`"), responses((status = 200, description = "Signed in as the new user"), (status = 400, description = "Bad body"), (status = 404, description = "Unknown invite"), (status = 410, description = "Used, replaced, withdrawn or expired invite (the codes of `GET`)"), (status = 422, description = "Weak password")))]
pub(crate) async fn accept_invite(
    w: PublicWrite,
    Path(token): Path<String>,
    J(req): J<AcceptInvite>,
) -> Result<HttpResponse, HttpError> {
    let hash = check_token(&token)?;
    // Refused before any password work; the store checks again in its transaction.
    let h = hash.clone();
    if let Some(inv) = db(&w.svc, move |r| r.invite(&h)).await? {
        refuse_invite(&inv)?;
    }
    auth::check_password_policy(&req.password).map_err(|m| unprocessable("weak_password", m))?;
    let name = req.name.trim().chars().take(100).collect::<String>();
    let pw = req.password.clone();
    let user = hashing(&w.svc, move |r| {
        let h = auth::hash_password(&pw).map_err(StoreError::Db)?;
        r.accept_invite(&hash, &name, &h, serenqa_store::now())
    })
    .await
    .map_err(|e| {
        if e.code == "not_found" {
            HttpError::not_found("unknown_invite", "this invite link is not valid")
        } else {
            e
        }
    })?;
    start_session(&w.svc, user, w.tls).await
}

// ----- annotators -----

const ANNOTATE: &[Role] = &[Role::Annotator];
const REVIEW: &[Role] = &[Role::Reviewer];

#[utoipa::path(get, path = "/annotate/batches", tag = "annotation", description = "The batches assigned to the signed-in annotator, with progress.", responses((status = 200, description = "`[BatchProgress]`"), (status = 401, description = "Not signed in")))]
pub(crate) async fn my_batches(a: Authed) -> Result<Json<Vec<BatchProgress>>, HttpError> {
    a.require(ANNOTATE)?;
    let uid = a.user_id();
    Ok(Json(db(&a.svc, move |r| r.progress(uid)).await?))
}

#[utoipa::path(get, path = "/annotate/batches/{id}", tag = "annotation", description = "One batch: its questions and which are answered.", params(("id" = i64, Path, description = "Numeric id")), responses((status = 200, description = "`BatchView`"), (status = 403, description = "Not your batch"), (status = 404, description = "No such batch")))]
pub(crate) async fn my_batch(a: Authed, Path(id): Path<i64>) -> Result<Json<BatchView>, HttpError> {
    a.require(ANNOTATE)?;
    let uid = a.user_id();
    let (batch, questions, open) = db(&a.svc, move |r| {
        Ok((
            r.batch(id)?,
            r.questions_in_batch(id, uid)?,
            r.may_annotate(id, uid)?,
        ))
    })
    .await?;
    let batch =
        batch.ok_or_else(|| HttpError::not_found("unknown_batch", format!("no batch {id}")))?;
    if !open && a.role() != Role::Admin {
        return Err(not_assigned());
    }
    Ok(Json(BatchView { batch, questions }))
}

fn not_assigned() -> HttpError {
    forbidden("this batch is assigned to other annotators")
}

/// 403 unless the user may annotate the batch (admins may).
async fn check_assigned(a: &Authed, batch_id: i64) -> Result<(), HttpError> {
    let uid = a.user_id();
    if a.role() == Role::Admin || db(&a.svc, move |r| r.may_annotate(batch_id, uid)).await? {
        Ok(())
    } else {
        Err(not_assigned())
    }
}

/// A stable per-annotator shuffle of the candidates (no saved order yet), so nobody starts
/// from the LLM's order or the same order as everyone else.
fn shuffle_key(user: i64, cand: i64) -> u64 {
    use serenqa_shared::rng::{mix64, GOLDEN_GAMMA};
    mix64((user as u64).wrapping_mul(GOLDEN_GAMMA) ^ (cand as u64))
}

/// The order `user` is shown `q`'s candidates in (their shuffle): what a save records as the
/// presentation order and what the engagement gate compares a submission with.
fn presentation_order(user: i64, q: &mut Question) -> Vec<i64> {
    q.candidates.sort_by_key(|c| shuffle_key(user, c.id));
    q.candidates.iter().map(|c| c.id).collect()
}

/// Relation groups shown per candidate, and neighbours named per group.
const CONTEXT_GROUPS: usize = 4;
const CONTEXT_NAMES: usize = 3;

/// Longest neighbour name shown in a context line (GO terms run to 100+ characters).
const CONTEXT_NAME_CHARS: usize = 48;

fn short_name(name: &str) -> String {
    if name.chars().count() <= CONTEXT_NAME_CHARS {
        return name.to_string();
    }
    let cut: String = name.chars().take(CONTEXT_NAME_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// A few graph facts about a candidate. Neighbours are grouped by the relation's phrase from
/// the candidate's side, so a symmetric relation stored in both directions ("resembles") is one
/// group; the largest groups come first. Within a group the most specific neighbours are named:
/// fewest links of their own first (a rare side effect says more than "Nausea"), then by name.
fn context(g: &serenqa_graph::Graph, c: &Candidate) -> CandidateContext {
    let link = c
        .link
        .clone()
        .map(|l| (source_label(&l), l))
        .or_else(|| source_link(&c.kind, &c.ident).map(|(a, b)| (a.to_string(), b)));
    let node = serenqa_benchmark::questionnaire::resolve_candidate(g, c);
    let Some(n) = node else {
        return CandidateContext {
            candidate: c.id,
            in_graph: false,
            degree: 0,
            lines: Vec::new(),
            link,
        };
    };
    let mut groups: Vec<(String, Vec<serenqa_graph::NodeId>)> = Vec::new();
    for outgoing in [true, false] {
        for r in 0..g.relation_count() as u16 {
            let range = if outgoing {
                g.out_range_rel(n, r)
            } else {
                g.in_range_rel(n, r)
            };
            if range.is_empty() {
                continue;
            }
            let ids = if outgoing {
                &g.out_csr().1[range]
            } else {
                &g.in_csr().1[range]
            };
            let verb = &g.relation(r).verb;
            let phrase = if outgoing {
                verb.clone()
            } else {
                serenqa_shared::phrases::passive(verb)
            };
            match groups.iter_mut().find(|(p, _)| *p == phrase) {
                Some((_, v)) => v.extend_from_slice(ids),
                None => groups.push((phrase, ids.to_vec())),
            }
        }
    }
    for (_, v) in &mut groups {
        v.sort_unstable();
        v.dedup();
        v.retain(|&m| m != n);
        v.sort_by(|&a, &b| {
            g.degree(a)
                .cmp(&g.degree(b))
                .then_with(|| serenqa_graph::store::cmp_folded(g.name(a), g.name(b)))
                .then(a.cmp(&b))
        });
    }
    groups.retain(|(_, v)| !v.is_empty());
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    let lines = groups
        .iter()
        .take(CONTEXT_GROUPS)
        .map(|(phrase, v)| {
            let names: Vec<String> = v
                .iter()
                .take(CONTEXT_NAMES)
                .map(|&m| short_name(g.name(m)))
                .collect();
            let more = if v.len() > names.len() { ", …" } else { "" };
            format!("{phrase} {}: {}{more}", v.len(), names.join(", "))
        })
        .collect();
    CandidateContext {
        candidate: c.id,
        in_graph: true,
        degree: g.degree(n) as u64,
        lines,
        link,
    }
}

#[utoipa::path(get, path = "/annotate/questions/{id}", tag = "annotation", description = "One question with its candidate answers (source links and graph context; never their questionnaire position or LLM rank, in a per-annotator shuffle), the annotator's saved response, its place in the batch and the next question to do.", params(("id" = i64, Path, description = "Numeric id")), responses((status = 200, description = "`QuestionView`"), (status = 403, description = "Not assigned to you"), (status = 404, description = "No such question")))]
pub(crate) async fn my_question(
    State(s): State<AppState>,
    a: Authed,
    Path(id): Path<i64>,
) -> Result<Json<QuestionView>, HttpError> {
    a.require(ANNOTATE)?;
    let uid = a.user_id();
    let (q, resp) = db(&a.svc, move |r| {
        Ok((r.question(id)?, r.response_for(uid, id)?))
    })
    .await?;
    let mut q =
        q.ok_or_else(|| HttpError::not_found("unknown_question", format!("no question {id}")))?;
    let bid = q.batch_id;
    check_assigned(&a, bid).await?;
    let (batch, list) = db(&a.svc, move |r| {
        Ok((r.batch(bid)?, r.questions_in_batch(bid, uid)?))
    })
    .await?;
    let batch = batch.ok_or_else(|| HttpError::internal("question without batch"))?;
    // Neither the questionnaire position nor the LLM rank leaves the server (showing either
    // anchors the experts' judgment): candidates go out as `BlindCandidate`s, always in this
    // annotator's shuffle (a saved ranking is re-applied by the page from the response).
    presentation_order(uid, &mut q);
    let context = q.candidates.iter().map(|c| context(&s.graph, c)).collect();
    let pos = list.iter().position(|x| x.id == id);
    let prev = pos.and_then(|p| p.checked_sub(1)).map(|p| list[p].id);
    let next = pos.and_then(|p| list.get(p + 1)).map(|x| x.id);
    let next_todo = pos.and_then(|p| {
        let n = list.len();
        (1..n)
            .map(|k| &list[(p + k) % n])
            .find(|x| x.status != Some(Status::Complete))
            .map(|x| x.id)
    });
    let question = BlindQuestion {
        id: q.id,
        batch_id: q.batch_id,
        source: q.source,
        qid: q.qid,
        text: q.text,
        category: q.category,
        pattern: q.pattern,
        resources: q.resources,
        candidates: q.candidates.iter().map(BlindCandidate::from).collect(),
    };
    Ok(Json(QuestionView {
        question,
        batch,
        context,
        response: resp,
        prev,
        next,
        index: pos.map_or(0, |p| p + 1),
        total: list.len(),
        next_todo,
    }))
}

#[utoipa::path(put, path = "/annotate/questions/{id}/response", tag = "annotation", description = "Saves a ranking based on the revision the page loaded (`base_revision`, 0 for none). A retry with the same `submission_id` is answered with the first outcome; the id reused on another question is 409 `submission_id_reused`; a save based on an older revision is 409 `stale_revision` with the stored response. A draft save of a submitted response is kept as its pending edit until a complete save.", params(("id" = i64, Path, description = "Numeric id")), request_body(content = serde_json::Value, description = "`NewResponse`: `{submission_id, base_revision, ranking: [{candidate, rank, unsure}], confidence, comment, status, confirm_shown_order?, time_ms?}`"), responses((status = 200, description = "`SaveOutcome`"), (status = 403, description = "Not assigned to you"), (status = 409, description = "`StaleRevision` (`code: stale_revision`, stored `revision` and `current` response) or `submission_id_reused`"), (status = 422, description = "Not a ranking of the question's candidates, or (`untouched_order`) a submission in the untouched shown order without `confirm_shown_order`")))]
pub(crate) async fn save_response(
    a: Authed,
    Path(id): Path<i64>,
    J(body): J<NewResponse>,
) -> Result<HttpResponse, HttpError> {
    a.require(ANNOTATE)?;
    let uid = a.user_id();
    let mut q = db(&a.svc, move |r| r.question(id))
        .await?
        .ok_or_else(|| HttpError::not_found("unknown_question", format!("no question {id}")))?;
    check_assigned(&a, q.batch_id).await?;
    let ids: Vec<i64> = q.candidates.iter().map(|c| c.id).collect();
    let ranking = serenqa_store::ranking::validate(&ids, &body)
        .map_err(|e| unprocessable(e.code, e.message))?;
    let r = NewResponse { ranking, ..body };
    let shown = presentation_order(uid, &mut q);
    serenqa_store::ranking::gate(&shown, &r).map_err(|e| unprocessable(e.code, e.message))?;
    match db(&a.svc, move |repo| {
        Ok(repo.save_response_shown(uid, id, &r, &shown))
    })
    .await?
    {
        Ok(out) => Ok(Json(out).into_response()),
        Err(StoreError::Stale { revision, current }) => {
            let message = format!("this ranking was changed elsewhere (now revision {revision}); keep yours or take the stored one");
            let body = StaleRevision {
                code: "stale_revision".into(),
                message,
                revision,
                current: current.map(|c| *c),
            };
            Ok((StatusCode::CONFLICT, Json(body)).into_response())
        }
        Err(e) => Err(store_error(e)),
    }
}

#[utoipa::path(get, path = "/annotate/responses", tag = "annotation", description = "The signed-in annotator's responses.", responses((status = 200, description = "`[Response]`")))]
pub(crate) async fn my_responses(a: Authed) -> Result<Json<Vec<Response>>, HttpError> {
    a.require(ANNOTATE)?;
    let uid = a.user_id();
    let all = db(&a.svc, move |r| r.all_responses()).await?;
    Ok(Json(all.into_iter().filter(|r| r.user_id == uid).collect()))
}

#[utoipa::path(get, path = "/responses/{id}", tag = "annotation", description = "One response (its author or an admin).", params(("id" = i64, Path, description = "Numeric id")), responses((status = 200, description = "`Response`"), (status = 403, description = "Someone else's response"), (status = 404, description = "No such response")))]
pub(crate) async fn one_response(
    a: Authed,
    Path(id): Path<i64>,
) -> Result<Json<Response>, HttpError> {
    let r = db(&a.svc, move |r| r.response(id))
        .await?
        .ok_or_else(|| HttpError::not_found("unknown_response", format!("no response {id}")))?;
    if r.user_id != a.user_id() && a.role() != Role::Admin {
        return Err(forbidden("this response belongs to another annotator"));
    }
    Ok(Json(r))
}

// ----- reviewers -----

#[utoipa::path(get, path = "/review/batches", tag = "review", description = "Per-batch aggregates: responses, agreement (Kendall's W, Krippendorff's alpha). Reviewers and admins.", responses((status = 200, description = "`[BatchAggregate]`"), (status = 403, description = "Not a reviewer")))]
pub(crate) async fn review_batches(a: Authed) -> Result<Json<Vec<BatchAggregate>>, HttpError> {
    a.require(REVIEW)?;
    Ok(Json(db(&a.svc, |r| aggregate::batch_aggregates(r)).await?))
}

#[utoipa::path(get, path = "/review/batches/{id}", tag = "review", description = "One batch in detail: per-question rankings by pseudonym, agreement, consensus.", params(("id" = i64, Path, description = "Numeric id")), responses((status = 200, description = "`BatchReview`"), (status = 403, description = "Not a reviewer"), (status = 404, description = "No such batch")))]
pub(crate) async fn review_batch(
    a: Authed,
    Path(id): Path<i64>,
) -> Result<Json<BatchReview>, HttpError> {
    a.require(REVIEW)?;
    let (batch, questions) = db(&a.svc, move |r| {
        Ok((r.batch(id)?, aggregate::batch_questions(r, id)?))
    })
    .await?;
    let batch =
        batch.ok_or_else(|| HttpError::not_found("unknown_batch", format!("no batch {id}")))?;
    Ok(Json(BatchReview { batch, questions }))
}

#[derive(Deserialize)]
pub(crate) struct ExpertQuery {
    #[serde(default = "default_source")]
    source: String,
    #[serde(default)]
    min_annotators: Option<usize>,
}

fn default_source() -> String {
    "serenqa".into()
}

fn parse_source(s: &str) -> Result<Source, HttpError> {
    Source::parse(s).ok_or_else(|| {
        HttpError::bad_request(
            "bad_source",
            format!("source must be serenqa or benchmark, not {s:?}"),
        )
    })
}

#[utoipa::path(get, path = "/review/expert-rankings", tag = "review", description = "The expert rankings file the benchmark builder reads (expert partition).", params(("source" = Option<String>, Query, description = "Question set (default `serenqa`)"), ("min_annotators" = Option<usize>, Query, description = "Questions with at least this many submitted rankings")), responses((status = 200, description = "`ExpertRankings`"), (status = 403, description = "Not a reviewer")))]
pub(crate) async fn expert_rankings(
    a: Authed,
    Q(q): Q<ExpertQuery>,
) -> Result<HttpResponse, HttpError> {
    a.require(REVIEW)?;
    let source = parse_source(&q.source)?;
    let min = q.min_annotators.unwrap_or(1);
    let rankings = db(&a.svc, move |r| aggregate::expert_rankings(r, source, min)).await?;
    super::reply::json(rankings, EXPORT_TOO_LARGE).await
}

#[utoipa::path(get, path = "/review/export.json", tag = "review", description = "Every response as rows (pseudonyms; e-mails for admins only).", responses((status = 200, description = "`[ExportRow]`"), (status = 403, description = "Not a reviewer")))]
pub(crate) async fn export_json(a: Authed) -> Result<HttpResponse, HttpError> {
    a.require(REVIEW)?;
    let ident = a.role() == Role::Admin;
    let rows = db(&a.svc, move |r| aggregate::export_rows(r, ident)).await?;
    super::reply::json(rows, EXPORT_TOO_LARGE).await
}

/// What to do when an export is past the reply budget.
const EXPORT_TOO_LARGE: &str = "export from the server with `serenqa annotate results`";

#[utoipa::path(get, path = "/review/export.csv", tag = "review", description = "The same rows as CSV.", responses((status = 200, description = "text/csv"), (status = 403, description = "Not a reviewer")))]
pub(crate) async fn export_csv(a: Authed) -> Result<HttpResponse, HttpError> {
    a.require(REVIEW)?;
    let ident = a.role() == Role::Admin;
    let rows = db(&a.svc, move |r| aggregate::export_rows(r, ident)).await?;
    let csv = aggregate::export_csv(&rows).map_err(HttpError::internal)?;
    drop(rows);
    let bytes = super::reply::check_size(csv.into_bytes(), EXPORT_TOO_LARGE)?;
    let mut r = super::reply::held(bytes, "text/csv; charset=utf-8");
    if r.status().is_success() {
        r.headers_mut().insert(
            header::CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment; filename=\"serenqa-responses.csv\""),
        );
    }
    Ok(r)
}

#[utoipa::path(get, path = "/review/runs", tag = "review", description = "Evaluation runs imported into the store.", responses((status = 200, description = "`[RunRecord]`"), (status = 403, description = "Not a reviewer")))]
pub(crate) async fn runs(a: Authed) -> Result<Json<Vec<serenqa_store::RunRecord>>, HttpError> {
    a.require(REVIEW)?;
    Ok(Json(db(&a.svc, |r| r.runs()).await?))
}

// ----- admins -----

const ADMIN: &[Role] = &[Role::Admin];

#[utoipa::path(post, path = "/admin/invites", tag = "admin", description = "Creates an invite link for an e-mail and role (admins). One valid link per address: an earlier unused link for the same address stops working (`replaced` names it when it was still valid).", request_body(content = serde_json::Value, description = "`{email, role}`"), responses((status = 200, description = "`InviteCreated` with the link and the invite it replaced"), (status = 403, description = "Not an admin"), (status = 409, description = "The address has an account"), (status = 422, description = "Not an e-mail address")))]
pub(crate) async fn create_invite(
    a: Authed,
    headers: HeaderMap,
    J(req): J<CreateInvite>,
) -> Result<Json<InviteCreated>, HttpError> {
    a.require(ADMIN)?;
    let email = req.email.trim().to_string();
    auth::check_email(&email).map_err(|m| unprocessable("bad_email", m))?;
    let token = auth::new_token().map_err(HttpError::internal)?;
    let (hash, uid, role, em) = (
        auth::token_hash(&token),
        a.user_id(),
        req.role,
        email.clone(),
    );
    let expires_at = serenqa_store::now() + INVITE_SECS;
    // One valid link per address: the store revokes an earlier one in the same transaction.
    let replaced = db(&a.svc, move |r| {
        r.create_invite(&hash, &em, role, Some(uid), expires_at)
    })
    .await?;
    Ok(Json(InviteCreated {
        link: format!("{}/invite/{token}", link_base(&a, &headers)),
        expires_at,
        email,
        replaced,
    }))
}

#[utoipa::path(get, path = "/admin/users", tag = "admin", description = "Every account (admins).", responses((status = 200, description = "`[User]`"), (status = 403, description = "Not an admin")))]
pub(crate) async fn users(a: Authed) -> Result<Json<Vec<User>>, HttpError> {
    a.require(ADMIN)?;
    Ok(Json(db(&a.svc, |r| r.users()).await?))
}

/// The link base (`scheme://host`) of this request, as the invite links use it.
fn link_base(a: &Authed, headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1:8080");
    let scheme = if over_tls(&a.svc, headers) {
        "https"
    } else {
        "http"
    };
    format!("{scheme}://{host}")
}

#[utoipa::path(post, path = "/admin/users/{id}/reset", tag = "admin", description = "Creates a one-time password-reset link for a user (admins); valid 24 hours. Using it sets a new password and ends the user's sessions.", params(("id" = i64, Path, description = "User id")), responses((status = 200, description = "`ResetCreated` with the link"), (status = 403, description = "Not an admin"), (status = 404, description = "No such user")))]
pub(crate) async fn create_reset(
    a: Authed,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> Result<Json<ResetCreated>, HttpError> {
    a.require(ADMIN)?;
    let token = auth::new_token().map_err(HttpError::internal)?;
    let (hash, by) = (auth::token_hash(&token), a.user_id());
    let expires_at = serenqa_store::now() + RESET_SECS;
    db(&a.svc, move |r| {
        r.create_reset(&hash, id, Some(by), expires_at)
    })
    .await?;
    Ok(Json(ResetCreated {
        link: format!("{}/reset/{token}", link_base(&a, &headers)),
        expires_at,
    }))
}

fn check_reset_token(token: &str) -> Result<String, HttpError> {
    check_token(token)
        .map_err(|_| HttpError::not_found("unknown_reset", "this password-reset link is not valid"))
}

#[utoipa::path(get, path = "/auth/reset/{token}", tag = "annotation", description = "Whose password a reset link sets, before it is used.", params(("token" = String, Path, description = "The token from the link")), responses((status = 200, description = "`ResetInfo`"), (status = 404, description = "Unknown, used or expired link")))]
pub(crate) async fn reset_info(
    State(s): State<AppState>,
    Path(token): Path<String>,
) -> Result<Json<ResetInfo>, HttpError> {
    let svc = super::session::service(&s)?;
    let hash = check_reset_token(&token)?;
    let user = db(&svc, move |r| r.reset_user(&hash, serenqa_store::now())).await?;
    let user = user.ok_or_else(|| {
        HttpError::not_found(
            "unknown_reset",
            "this password-reset link is not valid, has been used or has expired",
        )
    })?;
    Ok(Json(ResetInfo { email: user.email }))
}

#[utoipa::path(post, path = "/auth/reset/{token}", tag = "annotation", description = "Sets a new password with a reset link, ends the user's other sessions and signs in.", params(("token" = String, Path, description = "The token from the link")), request_body(content = serde_json::Value, description = "`{password}`"), responses((status = 200, description = "Signed in (`Me`)"), (status = 404, description = "Unknown link"), (status = 409, description = "Used or expired link"), (status = 422, description = "Weak password")))]
pub(crate) async fn reset_password(
    w: PublicWrite,
    Path(token): Path<String>,
    J(req): J<ResetPassword>,
) -> Result<HttpResponse, HttpError> {
    let hash = check_reset_token(&token)?;
    auth::check_password_policy(&req.password).map_err(|m| unprocessable("weak_password", m))?;
    let pw = req.password.clone();
    let user = hashing(&w.svc, move |r| {
        let h = auth::hash_password(&pw).map_err(StoreError::Db)?;
        r.use_reset(&hash, &h, serenqa_store::now())
    })
    .await
    .map_err(|e| {
        if e.code == "not_found" {
            HttpError::not_found("unknown_reset", "this password-reset link is not valid")
        } else {
            e
        }
    })?;
    start_session(&w.svc, user, w.tls).await
}

#[utoipa::path(get, path = "/admin/assignments", tag = "admin", description = "Every batch with its assigned annotators, overlap target (k annotators per question) and coverage per question (admins).", responses((status = 200, description = "`[BatchAssignment]`"), (status = 403, description = "Not an admin")))]
pub(crate) async fn assignments(a: Authed) -> Result<Json<Vec<BatchAssignment>>, HttpError> {
    a.require(ADMIN)?;
    Ok(Json(db(&a.svc, |r| r.assignments()).await?))
}

#[utoipa::path(put, path = "/admin/batches/{id}/assignment", tag = "admin", description = "Assigns a batch to annotators (replacing the previous set; an empty list opens it to every annotator) with an overlap target (admins).", params(("id" = i64, Path, description = "Batch id")), request_body(content = serde_json::Value, description = "`{annotators: [user id], overlap?}`"), responses((status = 200, description = "The batch's `BatchAssignment`"), (status = 400, description = "Not annotators, or overlap outside 1–1000"), (status = 403, description = "Not an admin"), (status = 404, description = "No such batch")))]
pub(crate) async fn set_assignment(
    a: Authed,
    Path(id): Path<i64>,
    J(req): J<SetAssignment>,
) -> Result<Json<BatchAssignment>, HttpError> {
    a.require(ADMIN)?;
    if req.annotators.len() > 10_000 {
        return Err(HttpError::bad_request(
            "too_many",
            "at most 10000 annotators per batch",
        ));
    }
    let all = db(&a.svc, move |r| {
        r.set_assignment(id, &req.annotators, req.overlap)?;
        r.assignments()
    })
    .await?;
    all.into_iter()
        .find(|x| x.batch.id == id)
        .map(Json)
        .ok_or_else(|| HttpError::not_found("unknown_batch", format!("no batch {id}")))
}

fn calibration_view(c: serenqa_store::CalibrationRecord, in_force: Option<i64>) -> CalibrationView {
    let blocked = calibration_gate(
        usize::try_from(c.questions).unwrap_or(0),
        usize::try_from(c.annotators).unwrap_or(0),
    )
    .err();
    let report = c
        .provenance
        .get("report")
        .and_then(|r| serde_json::from_value::<CalibrationReport>(r.clone()).ok())
        .map(|mut r| {
            // The admin page needs the comparison and counts, not the whole grid.
            r.surface.clear();
            r.id = Some(c.id);
            r
        });
    CalibrationView {
        id: c.id,
        created_at: c.created_at,
        alpha: c.alpha,
        beta: c.beta,
        gamma: c.gamma,
        agreement: c.agreement,
        questions: c.questions,
        annotators: c.annotators,
        provenance: c.provenance.to_string(),
        in_force: in_force == Some(c.id),
        blocked,
        report,
    }
}

#[utoipa::path(get, path = "/admin/calibrations", tag = "admin", description = "Stored calibrations of the RNS weights, newest first, with provenance, whether each is in force and, when it cannot be put in force, why (admins).", responses((status = 200, description = "`[CalibrationView]`"), (status = 403, description = "Not an admin")))]
pub(crate) async fn calibrations(a: Authed) -> Result<Json<Vec<CalibrationView>>, HttpError> {
    a.require(ADMIN)?;
    let (all, now) = db(&a.svc, |r| Ok((r.calibrations()?, r.weights_in_force()?))).await?;
    let now = now.map(|c| c.id);
    Ok(Json(
        all.into_iter().map(|c| calibration_view(c, now)).collect(),
    ))
}

#[utoipa::path(post, path = "/admin/calibrations", tag = "admin", description = "Fits the RNS weights (signed, |α|+|β|+|γ| = 1) to the expert partitions and stores the result with a held-out comparison against the weights in force (admins). It is not put in force: that is `PUT /api/admin/weights`.", request_body(content = serde_json::Value, description = "`{source, step?, min_annotators?}`"), responses((status = 200, description = "`CalibrationReport` with the stored `id`"), (status = 400, description = "Bad grid step"), (status = 403, description = "Not an admin"), (status = 422, description = "Not enough expert data (`calibration_failed`)")))]
pub(crate) async fn calibrate(
    State(s): State<AppState>,
    a: Authed,
    J(req): J<CalibrateRequest>,
) -> Result<Json<CalibrationReport>, HttpError> {
    a.require(ADMIN)?;
    let model = super::rns::require_model(&s)?;
    if !(req.step >= 0.01 && req.step <= 0.5) {
        return Err(HttpError::bad_request(
            "bad_step",
            "step must lie in [0.01, 0.5]",
        ));
    }
    let who = a.session.user.email.clone();
    let (svc, graph, blocks) = (a.svc.clone(), s.graph.clone(), s.blocks.clone());
    let out = tokio::task::spawn_blocking(move || {
        crate::calibration::run(svc.repo.as_ref(), &graph, &model, &blocks, &req, &who)
    })
    .await
    .map_err(|e| HttpError::internal(e.to_string()))?
    .map_err(|e| unprocessable("calibration_failed", format!("{e:#}")))?;
    let mut report = out.1;
    report.surface.clear();
    Ok(Json(report))
}

async fn weights_reply(a: &Authed) -> Result<WeightsAdmin, HttpError> {
    let (now, history) = db(&a.svc, |r| {
        Ok((r.weights_in_force()?, r.weights_history()?))
    })
    .await?;
    let in_force = now
        .as_ref()
        .and_then(crate::weights::of_calibration)
        .unwrap_or_else(serenqa_model::weights::shipped);
    Ok(WeightsAdmin {
        in_force,
        calibration: now.map(|c| c.id),
        history,
        min_questions: CALIBRATION_MIN_QUESTIONS,
        min_annotators: CALIBRATION_MIN_ANNOTATORS,
    })
}

#[utoipa::path(get, path = "/admin/weights", tag = "admin", description = "The RNS weights in force (the shipped ones or a calibration an admin put in force), every change with who made it, and the minimums a calibration must meet (admins).", responses((status = 200, description = "`WeightsAdmin`"), (status = 403, description = "Not an admin")))]
pub(crate) async fn weights_admin(a: Authed) -> Result<Json<WeightsAdmin>, HttpError> {
    a.require(ADMIN)?;
    Ok(Json(weights_reply(&a).await?))
}

#[utoipa::path(put, path = "/admin/weights", tag = "admin", description = "Puts a stored calibration in force (`{calibration: id, confirm: true}`) or goes back to the shipped weights (`{calibration: null, confirm: true}`); every Discover, Ask and partition request uses them from then on (admins).", request_body(content = serde_json::Value, description = "`UseWeights`: `{calibration: id | null, confirm: true}`"), responses((status = 200, description = "`WeightsAdmin` after the change"), (status = 403, description = "Not an admin"), (status = 404, description = "No such calibration"), (status = 422, description = "`confirm_required`, or `below_minimum`: too few questions or annotators")))]
pub(crate) async fn use_weights(
    a: Authed,
    J(req): J<UseWeights>,
) -> Result<Json<WeightsAdmin>, HttpError> {
    a.require(ADMIN)?;
    if !req.confirm {
        return Err(unprocessable(
            "confirm_required",
            "changing the weights in force for everyone needs `confirm: true`",
        ));
    }
    let by = a.session.user.email.clone();
    let note = match req.calibration {
        Some(id) => format!("calibration #{id} put in force"),
        None => "back to the shipped weights".to_string(),
    };
    db(&a.svc, move |r| {
        r.use_weights(req.calibration, &by, &note, serenqa_store::now())
    })
    .await?;
    Ok(Json(weights_reply(&a).await?))
}
