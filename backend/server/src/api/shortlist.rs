//! A clinician's shortlist of candidates, kept server-side for signed-in users (any role; the
//! browser keeps it in `localStorage` for everyone else).
//!
//! | route | who |
//! |---|---|
//! | `GET /api/shortlist` | signed in (own list) |
//! | `POST /api/shortlist` | signed in, CSRF token: keep a candidate (again: new scores, same place) |
//! | `DELETE /api/shortlist?query=…&candidate=…` | signed in, CSRF token: remove one |
//!
//! Keys are `Type::identifier` and must name nodes of the loaded graph (names are taken from
//! the graph, never from the request); scores must be finite and in range
//! ([`ShortlistScores::check`]); a list holds at most [`SHORTLIST_MAX_ITEMS`] items (409
//! `shortlist_full`, checked in the same transaction as the insert). Every reply of a change
//! is the whole list, so the page shows what is stored.

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serenqa_shared::api::{
    Shortlist, ShortlistAdd, ShortlistEntity, ShortlistItem, SHORTLIST_MAX_ITEMS,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpError;
use super::extract::{J, Q};
use super::session::{db, Authed};
use super::AppState;

/// Largest request body (one item is ~300 bytes).
pub const MAX_SHORTLIST_BODY: usize = 8 * 1024;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_shortlist, add, remove))
        .layer(DefaultBodyLimit::max(MAX_SHORTLIST_BODY))
}

/// The node a key names, as a shortlist entity with its canonical key.
fn entity(s: &AppState, key: &str, what: &'static str) -> Result<ShortlistEntity, HttpError> {
    let n = super::extract::resolve(&s.graph, key).map_err(|e| HttpError {
        message: format!("{what}: {}", e.message),
        ..e
    })?;
    let v = serenqa_graph::view::node_view(&s.graph, n);
    Ok(ShortlistEntity {
        kind: v.kind,
        id: v.id,
        name: v.name,
    })
}

async fn list(a: &Authed) -> Result<Shortlist, HttpError> {
    let uid = a.user_id();
    let items = db(&a.svc, move |r| r.shortlist(uid)).await?;
    Ok(Shortlist {
        items,
        max_items: SHORTLIST_MAX_ITEMS,
    })
}

#[utoipa::path(get, path = "/shortlist", tag = "shortlist", description = "The signed-in user's shortlist of candidates, oldest first.", responses((status = 200, description = "The list", body = Shortlist), (status = 401, description = "Not signed in (the page keeps the list in the browser instead)")))]
pub(crate) async fn get_shortlist(a: Authed) -> Result<Json<Shortlist>, HttpError> {
    Ok(Json(list(&a).await?))
}

#[utoipa::path(post, path = "/shortlist", tag = "shortlist", description = "Keeps a candidate of an entity page with the scores shown and the weights in force; keeping the same pair again replaces its scores in place. Needs `X-CSRF-Token`.", request_body = ShortlistAdd, responses((status = 200, description = "The whole list after the change", body = Shortlist), (status = 400, description = "Bad JSON, a bad key or a score out of range (`bad_scores`)"), (status = 401, description = "Not signed in"), (status = 404, description = "A key names no node (`unknown_node`)"), (status = 409, description = "The list is full (`shortlist_full`)")))]
pub(crate) async fn add(
    State(s): State<AppState>,
    a: Authed,
    J(req): J<ShortlistAdd>,
) -> Result<Json<Shortlist>, HttpError> {
    req.scores
        .check()
        .map_err(|m| HttpError::bad_request("bad_scores", m))?;
    let query = entity(&s, &req.query, "query")?;
    let candidate = entity(&s, &req.candidate, "candidate")?;
    if query == candidate {
        return Err(HttpError::bad_request(
            "same_node",
            "the candidate is the query itself",
        ));
    }
    let item = ShortlistItem {
        query,
        candidate,
        scores: req.scores,
        added_at: serenqa_store::now(),
    };
    let uid = a.user_id();
    db(&a.svc, move |r| {
        r.shortlist_put(uid, &item, SHORTLIST_MAX_ITEMS)
    })
    .await?;
    Ok(Json(list(&a).await?))
}

#[derive(Deserialize)]
pub(crate) struct RemoveQuery {
    query: String,
    candidate: String,
}

#[utoipa::path(delete, path = "/shortlist", tag = "shortlist", description = "Removes one item. Needs `X-CSRF-Token`.", params(("query" = String, Query, description = "`Type::identifier` of the entity whose page proposed it"), ("candidate" = String, Query, description = "`Type::identifier` of the candidate")), responses((status = 200, description = "The whole list after the change", body = Shortlist), (status = 400, description = "Missing or bad keys"), (status = 401, description = "Not signed in"), (status = 404, description = "No such item (`not_in_shortlist`)")))]
pub(crate) async fn remove(
    State(s): State<AppState>,
    a: Authed,
    Q(q): Q<RemoveQuery>,
) -> Result<Json<Shortlist>, HttpError> {
    let (qk, ck) = (
        entity(&s, &q.query, "query")?.key(),
        entity(&s, &q.candidate, "candidate")?.key(),
    );
    let uid = a.user_id();
    let removed = db(&a.svc, move |r| r.shortlist_remove(uid, &qk, &ck)).await?;
    if !removed {
        return Err(HttpError {
            status: StatusCode::NOT_FOUND,
            code: "not_in_shortlist",
            message: "that candidate is not in your shortlist".into(),
        });
    }
    Ok(Json(list(&a).await?))
}
