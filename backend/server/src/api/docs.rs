//! The API's OpenAPI description (`GET /api/openapi.json`) and a readable page of it
//! (`GET /api/docs`), rendered here so it works offline (no CDN scripts).

use axum::response::Html;
use axum::Json;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;

/// The document's title, description and tags; its paths are the routes, registered in
/// [`super::api_routes`] (each handler once, for routing and for this document).
#[derive(OpenApi)]
#[openapi(
    info(title = "serenqa API", description = "Serendipity discovery in biomedical knowledge graphs. Errors are JSON `{code, message}` with a 4xx/5xx status."),
    tags((name = "graph", description = "The loaded knowledge graph"), (name = "serendipity", description = "RNS scoring and discovery"), (name = "pipeline", description = "Ask one question; evaluation runs"), (name = "cypher", description = "Read-only Cypher"), (name = "annotation", description = "Sign-in, invites and expert rankings of candidate answers (session cookie)"), (name = "review", description = "Agreement, expert rankings and exports (reviewers, admins)"), (name = "admin", description = "Accounts and RNS weight calibration (admins)"), (name = "shortlist", description = "A signed-in clinician's shortlist of candidates (session cookie)"), (name = "docs", description = "This description of the API"))
)]
pub struct ApiDoc;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(openapi_json))
        .routes(routes!(docs_page))
}

/// This document (OpenAPI 3.1).
#[utoipa::path(get, path = "/openapi.json", tag = "docs", responses((status = 200, description = "The OpenAPI document of every endpoint")))]
async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(super::openapi())
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// This document as a readable page (rendered here: no CDN scripts).
#[utoipa::path(get, path = "/docs", tag = "docs", responses((status = 200, description = "HTML")))]
async fn docs_page() -> Html<String> {
    let doc = super::openapi();
    let json = serde_json::to_value(&doc).unwrap_or_default();
    let mut body = String::new();
    body.push_str(&format!(
        "<h1>{}</h1><p>{}</p><p><a href=\"/api/openapi.json\">openapi.json</a></p>",
        esc(&doc.info.title),
        esc(doc.info.description.as_deref().unwrap_or(""))
    ));
    if let Some(paths) = json.get("paths").and_then(|p| p.as_object()) {
        for (path, ops) in paths {
            let Some(ops) = ops.as_object() else { continue };
            for (method, op) in ops {
                body.push_str(&format!(
                    "<section><h2><code>{} {}</code></h2>",
                    esc(&method.to_uppercase()),
                    esc(path)
                ));
                if let Some(d) = op
                    .get("description")
                    .or_else(|| op.get("summary"))
                    .and_then(|d| d.as_str())
                {
                    body.push_str(&format!("<p>{}</p>", esc(d)));
                }
                if let Some(params) = op.get("parameters").and_then(|p| p.as_array()) {
                    body.push_str("<table><tr><th>parameter</th><th>in</th><th>required</th><th>description</th></tr>");
                    for p in params {
                        let s =
                            |k: &str| p.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
                        let req = p
                            .get("required")
                            .and_then(serde_json::Value::as_bool)
                            .unwrap_or(false);
                        body.push_str(&format!(
                            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                            esc(&s("name")),
                            esc(&s("in")),
                            req,
                            esc(&s("description"))
                        ));
                    }
                    body.push_str("</table>");
                }
                if let Some(rs) = op.get("responses").and_then(|r| r.as_object()) {
                    let codes: Vec<String> = rs.keys().map(|k| esc(k)).collect();
                    body.push_str(&format!("<p>responses: {}</p>", codes.join(", ")));
                }
                body.push_str("</section>");
            }
        }
    }
    Html(format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>serenqa API</title><style>body{{font-family:system-ui,sans-serif;max-width:900px;margin:2rem auto;padding:0 1rem;color:#1d2430}}section{{border-top:1px solid #dde2ea;padding:.5rem 0}}table{{border-collapse:collapse}}td,th{{border-bottom:1px solid #eee;padding:.2rem .5rem;text-align:left}}</style></head><body>{body}</body></html>"
    ))
}
