//! HTTP calls of tests (the status is returned, never an error) and the assertions on the
//! API's error replies: one line of JSON, `{"code": "…", "message": "…"}`.

use serde_json::Value;

/// An agent that returns 4xx/5xx replies instead of failing on them.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// `GET url`: status and body.
pub fn get(url: &str) -> (u16, String) {
    let (st, body, _) = get_with_headers(url);
    (st, body)
}

/// `GET url`: status, body and the response headers.
pub fn get_with_headers(url: &str) -> (u16, String, Vec<(String, String)>) {
    let mut resp = agent().get(url).call().unwrap();
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    (status, resp.body_mut().read_to_string().unwrap(), headers)
}

/// `GET url`: status and the JSON body (panics when the body is not JSON).
pub fn get_json(url: &str) -> (u16, Value) {
    let (status, body) = get(url);
    (
        status,
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}")),
    )
}

/// `POST url` with a JSON body: status and body.
pub fn post_json(url: &str, body: &str) -> (u16, String) {
    let mut resp = agent()
        .post(url)
        .header("Content-Type", "application/json")
        .send(body)
        .unwrap();
    (
        resp.status().as_u16(),
        resp.body_mut().read_to_string().unwrap(),
    )
}

/// An error reply: `want_status`, a one-line non-empty message; returns its code.
pub fn error_code(st: u16, v: &Value, want_status: u16) -> String {
    assert_eq!(st, want_status, "{v}");
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty() && !m.contains('\n')),
        "{v}"
    );
    v["code"].as_str().unwrap_or_default().to_string()
}

/// An error reply to `what`: `status`, a JSON body with `code`; returns the JSON.
pub fn assert_error(st: u16, body: &str, status: u16, code: &str, what: &str) -> Value {
    assert_eq!(st, status, "{what}: {body}");
    let e: Value =
        serde_json::from_str(body).unwrap_or_else(|_| panic!("{what}: not JSON: {body}"));
    assert_eq!(e["code"], code, "{what}: {body}");
    e
}

/// [`assert_error`], and the body is one line with a non-empty `message`.
pub fn assert_error_line(st: u16, body: &str, status: u16, code: &str, what: &str) -> Value {
    assert!(!body.trim_end().contains('\n'), "{what}: one line: {body}");
    let e = assert_error(st, body, status, code, what);
    assert!(
        e["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{what}: {body}"
    );
    e
}

/// `method url` with `headers` and, when given, a JSON body: status, body (empty when it
/// cannot be read) and the response headers.
pub fn call(
    method: &str,
    url: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> (u16, String, Vec<(String, String)>) {
    let agent = agent();
    let mut b = ureq::http::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let resp = match body {
        Some(body) => agent.run(
            b.header("Content-Type", "application/json")
                .body(body.to_string())
                .unwrap(),
        ),
        None => agent.run(b.body(()).unwrap()),
    };
    let mut resp = resp.unwrap();
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    (
        status,
        resp.body_mut().read_to_string().unwrap_or_default(),
        headers,
    )
}

/// A client of the signed-in API: the session cookie (`sq_session=…`) and the CSRF token sent
/// on every call but GET (empty: none).
#[derive(Clone, Debug, Default)]
pub struct Session {
    pub cookie: String,
    pub csrf: String,
}

impl Session {
    /// The session's `Set-Cookie` header (with its attributes) in a reply's headers.
    pub fn set_cookie(headers: &[(String, String)]) -> String {
        headers
            .iter()
            .find(|(k, v)| k == "set-cookie" && v.starts_with("sq_session="))
            .map(|(_, v)| v.clone())
            .expect("session cookie")
    }

    /// The session a login / invite-accept reply opens (asserts it succeeded).
    pub fn from_reply(status: u16, body: &str, headers: &[(String, String)]) -> Session {
        assert_eq!(status, 200, "{body}");
        let cookie = Session::set_cookie(headers);
        let me: Value = serde_json::from_str(body).unwrap();
        Session {
            cookie: cookie.split(';').next().unwrap().to_string(),
            csrf: me["csrf"].as_str().unwrap().to_string(),
        }
    }

    /// [`call`] with the session's cookie and CSRF token, then `extra` headers.
    pub fn req(
        &self,
        method: &str,
        url: &str,
        body: Option<&str>,
        extra: &[(&str, &str)],
    ) -> (u16, String, Vec<(String, String)>) {
        let mut headers: Vec<(&str, &str)> = Vec::new();
        if !self.cookie.is_empty() {
            headers.push(("Cookie", &self.cookie));
        }
        if !self.csrf.is_empty() && method != "GET" {
            headers.push(("X-CSRF-Token", &self.csrf));
        }
        headers.extend_from_slice(extra);
        call(method, url, body, &headers)
    }

    /// `GET url`: status and body.
    pub fn get(&self, url: &str) -> (u16, String) {
        let (s, b, _) = self.req("GET", url, None, &[]);
        (s, b)
    }
}
