//! Accounts on the HTTP side: the annotation service handle, session cookies, CSRF checks,
//! role checks and login rate limiting.
//!
//! - Session cookie `sq_session`: 256-bit random token, `HttpOnly; SameSite=Strict; Path=/`,
//!   plus `Secure` when the server runs with `--secure-cookies` or the request arrived over
//!   TLS at a proxy (`X-Forwarded-Proto: https`). The store keeps only its SHA-256.
//! - CSRF: every state-changing request of a session must send the session's CSRF token in
//!   `X-CSRF-Token` (the page learns it from `/api/auth/me`; another origin cannot read it).
//!   State-changing requests without a session (login, accepting an invite) must send
//!   `X-Requested-With: serenqa`, a header a cross-origin page cannot add without a CORS
//!   preflight, which this server never grants. Requests whose `Origin` differs from `Host`
//!   or whose `Sec-Fetch-Site` is `cross-site` are refused outright.
//! - Login back-off (not lock-out): [`serenqa_store::limiter`] delays further attempts
//!   exponentially per e-mail, per client network (IPv6 by /64) and per pair, capped, with a
//!   bounded table; a waiting client gets 429 with `Retry-After`.
//! - Password hashing (argon2id, ~19 MiB and tens of milliseconds each) runs on the blocking
//!   pool under [`Annotation::hashing`], a semaphore with one permit per core, so a login flood
//!   queues there (and gets 503 after [`HASH_QUEUE_WAIT`]) instead of taking every thread.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, Method, StatusCode};
use serenqa_store::auth::token_hash;
use serenqa_store::limiter::LoginLimiter;
use serenqa_store::{Repo, Role, Session, StoreError};

use super::error::HttpError;
use super::AppState;

pub const SESSION_COOKIE: &str = "sq_session";
pub const SESSION_SECS: i64 = 12 * 3600;
/// How long a request waits for a hashing permit before it is told to come back (503).
pub const HASH_QUEUE_WAIT: Duration = Duration::from_secs(10);

/// The annotation service: the store, the login back-off and the hashing semaphore.
pub struct Annotation {
    pub repo: Arc<dyn Repo>,
    pub limiter: LoginLimiter,
    /// One permit per core for argon2 work.
    pub hashing: Arc<tokio::sync::Semaphore>,
    pub secure_cookies: bool,
}

impl Annotation {
    pub fn new(repo: Arc<dyn Repo>, secure_cookies: bool) -> Self {
        let cores = std::thread::available_parallelism()
            .map(std::num::NonZero::get)
            .unwrap_or(1);
        Annotation {
            repo,
            limiter: LoginLimiter::default(),
            hashing: Arc::new(tokio::sync::Semaphore::new(cores)),
            secure_cookies,
        }
    }
}

/// Runs argon2 work (and the store calls that go with it) on the blocking pool once a hashing
/// permit is free; 503 `busy` when none frees up within [`HASH_QUEUE_WAIT`].
pub async fn hashing<T: Send + 'static>(
    svc: &Arc<Annotation>,
    f: impl FnOnce(&dyn Repo) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, HttpError> {
    let permit =
        match tokio::time::timeout(HASH_QUEUE_WAIT, svc.hashing.clone().acquire_owned()).await {
            Ok(Ok(p)) => p,
            Ok(Err(_)) => return Err(HttpError::internal("the hashing semaphore is closed")),
            Err(_) => {
                return Err(HttpError::unavailable(
                    "busy",
                    "too many sign-ins at once; try again in a few seconds",
                ))
            }
        };
    // The permit moves into the blocking task: it is released when the work ends, even if
    // the client went away and the request future was dropped.
    db(svc, move |r| {
        let _permit = permit;
        f(r)
    })
    .await
}

/// Runs a store call on the blocking pool (SQLite and argon2 must not stall the runtime).
pub async fn db<T: Send + 'static>(
    svc: &Arc<Annotation>,
    f: impl FnOnce(&dyn Repo) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, HttpError> {
    let svc = svc.clone();
    tokio::task::spawn_blocking(move || f(svc.repo.as_ref()))
        .await
        .map_err(|e| HttpError::internal(format!("store task failed: {e}")))?
        .map_err(store_error)
}

pub fn store_error(e: StoreError) -> HttpError {
    match e {
        StoreError::NotFound(what) => {
            HttpError::not_found("not_found", format!("{what} not found"))
        }
        StoreError::Conflict(m) => HttpError {
            status: StatusCode::CONFLICT,
            code: "conflict",
            message: m,
        },
        StoreError::Invalid(m) => HttpError::bad_request("invalid", m),
        StoreError::SubmissionReused(m) => HttpError {
            status: StatusCode::CONFLICT,
            code: "submission_id_reused",
            message: m,
        },
        e @ StoreError::Stale { .. } => HttpError {
            status: StatusCode::CONFLICT,
            code: "stale_revision",
            message: e.to_string(),
        },
        StoreError::Full(m) => HttpError {
            status: StatusCode::CONFLICT,
            code: "shortlist_full",
            message: m,
        },
        StoreError::Refused { code, message } => HttpError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            code,
            message,
        },
        StoreError::Db(m) => HttpError::internal(m),
    }
}

pub fn forbidden(message: impl Into<String>) -> HttpError {
    HttpError {
        status: StatusCode::FORBIDDEN,
        code: "forbidden",
        message: message.into(),
    }
}

fn csrf_error(message: &str) -> HttpError {
    HttpError {
        status: StatusCode::FORBIDDEN,
        code: "csrf",
        message: message.to_string(),
    }
}

pub fn service(state: &AppState) -> Result<Arc<Annotation>, HttpError> {
    state.annotation.clone().ok_or_else(|| HttpError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        code: "no_store",
        message: "the annotation store is not configured (start the server with --db)".into(),
    })
}

pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|kv| {
            let (k, v) = kv.trim().split_once('=')?;
            (k == name).then(|| v.to_string())
        })
}

/// Equal-time comparison, so the CSRF check leaks nothing through timing.
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn is_safe(m: &Method) -> bool {
    matches!(*m, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Refuses requests a browser marks as coming from another site.
fn same_origin(parts: &Parts) -> Result<(), HttpError> {
    if parts
        .headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        == Some("cross-site")
    {
        return Err(csrf_error("cross-site requests are refused"));
    }
    if let Some(origin) = parts
        .headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
    {
        let host = parts
            .headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let origin_host = origin.split_once("://").map(|(_, h)| h).unwrap_or(origin);
        if origin != "null" && origin_host != host {
            return Err(csrf_error(
                "the request's Origin does not match this server",
            ));
        }
        if origin == "null" {
            return Err(csrf_error("requests from an opaque origin are refused"));
        }
    }
    Ok(())
}

/// True when the client reached us over TLS (directly flagged or via a proxy).
pub fn over_tls(svc: &Annotation, headers: &HeaderMap) -> bool {
    svc.secure_cookies
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            == Some("https")
}

/// `Set-Cookie` value for a new session (or, with `token = None`, one that clears it).
pub fn session_cookie(token: Option<&str>, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    match token {
        Some(t) => format!("{SESSION_COOKIE}={t}; Path=/; HttpOnly; SameSite=Strict; Max-Age={SESSION_SECS}{secure}"),
        None => format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    }
}

/// A signed-in user; for state-changing methods the CSRF token has been checked.
pub struct Authed {
    pub session: Session,
    pub svc: Arc<Annotation>,
}

impl Authed {
    pub fn role(&self) -> Role {
        self.session.user.role
    }
    pub fn user_id(&self) -> i64 {
        self.session.user.id
    }
    /// 403 unless the user has one of `roles` (admins pass every check).
    pub fn require(&self, roles: &[Role]) -> Result<(), HttpError> {
        if self.role() == Role::Admin || roles.contains(&self.role()) {
            Ok(())
        } else {
            let names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
            Err(forbidden(format!(
                "this needs the {} role",
                names.join(" or ")
            )))
        }
    }
}

impl FromRequestParts<AppState> for Authed {
    type Rejection = HttpError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let svc = service(state)?;
        same_origin(parts)?;
        let unauth = || HttpError {
            status: StatusCode::UNAUTHORIZED,
            code: "not_signed_in",
            message: "sign in first".into(),
        };
        let token = cookie(&parts.headers, SESSION_COOKIE).ok_or_else(unauth)?;
        let hash = token_hash(&token);
        let session = db(&svc, move |r| r.session(&hash, serenqa_store::now()))
            .await?
            .ok_or_else(unauth)?;
        if !is_safe(&parts.method) {
            let sent = parts
                .headers
                .get("x-csrf-token")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if !ct_eq(sent.as_bytes(), session.csrf.as_bytes()) {
                return Err(csrf_error("missing or wrong X-CSRF-Token header"));
            }
        }
        Ok(Authed { session, svc })
    }
}

/// A state-changing request without a session (login, invite acceptance): same origin and
/// `X-Requested-With: serenqa` required.
pub struct PublicWrite {
    pub svc: Arc<Annotation>,
    pub ip: Option<SocketAddr>,
    pub tls: bool,
}

impl FromRequestParts<AppState> for PublicWrite {
    type Rejection = HttpError;
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let svc = service(state)?;
        same_origin(parts)?;
        if parts
            .headers
            .get("x-requested-with")
            .and_then(|v| v.to_str().ok())
            != Some("serenqa")
        {
            return Err(csrf_error("missing X-Requested-With: serenqa header"));
        }
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        let tls = over_tls(&svc, &parts.headers);
        Ok(PublicWrite { svc, ip, tls })
    }
}
