//! The API's OpenAPI description (`GET /api/openapi.json`) and a readable page of it
//! (`GET /api/docs`), rendered here so it works offline (no CDN scripts).

use axum::response::Html;
use axum::routing::get;
use axum::{Json, Router};
use utoipa::OpenApi;

use super::AppState;

#[derive(OpenApi)]
#[openapi(
    info(title = "serenqa API", description = "Serendipity discovery in biomedical knowledge graphs. Errors are JSON `{code, message}` with a 4xx/5xx status."),
    paths(super::graph::get_graph, super::graph::search, super::graph::find, super::graph::get_node, super::graph::get_paths, super::discover::get_discover, super::rns::get_slice, super::rns::post_rns, super::rns::post_partition, super::cypher::run_query, super::pipeline::post_ask, super::pipeline::get_ask_stream, super::pipeline::get_runs, super::pipeline::get_questions, super::pipeline::get_question, super::pipeline::get_trace, super::understand::get_score, super::annotate::login, super::annotate::logout, super::annotate::me, super::annotate::invite_info, super::annotate::accept_invite, super::annotate::my_batches, super::annotate::my_batch, super::annotate::my_question, super::annotate::save_response, super::annotate::my_responses, super::annotate::one_response, super::annotate::review_batches, super::annotate::review_batch, super::annotate::expert_rankings, super::annotate::export_json, super::annotate::export_csv, super::annotate::runs, super::annotate::create_invite, super::annotate::users, super::annotate::calibrations, super::annotate::calibrate, super::annotate::create_reset, super::annotate::reset_info, super::annotate::reset_password, super::annotate::assignments, super::annotate::set_assignment, super::predictions::get_predictions, super::predictions::get_explain, super::pipeline::get_compare, super::shortlist::get_shortlist, super::shortlist::add, super::shortlist::remove),
    tags((name = "graph", description = "The loaded knowledge graph"), (name = "serendipity", description = "RNS scoring and discovery"), (name = "pipeline", description = "Ask one question; evaluation runs"), (name = "cypher", description = "Read-only Cypher"), (name = "annotation", description = "Sign-in, invites and expert rankings of candidate answers (session cookie)"), (name = "review", description = "Agreement, expert rankings and exports (reviewers, admins)"), (name = "admin", description = "Accounts and RNS weight calibration (admins)"), (name = "shortlist", description = "A signed-in clinician's shortlist of candidates (session cookie)"))
)]
pub struct ApiDoc;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/openapi.json", get(openapi_json))
        .route("/docs", get(docs_page))
}

async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

async fn docs_page() -> Html<String> {
    let doc = ApiDoc::openapi();
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
