//! Hardening of the public surface on a live `serenqa serve` (loopback): admission control
//! (concurrency caps, per-client token buckets, `X-Forwarded-For` only from trusted proxies),
//! Ask's deadline, cancellation on disconnect and sign-in rule, the Origin check of the event
//! stream, and the security headers. Model-backed Asks run against the scripted
//! OpenAI-compatible double (`src/scripted_llm.rs`), whose request counter shows what the
//! server still sends after a client has gone.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

#[path = "../src/scripted_llm.rs"]
mod scripted_llm;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serenqa_testkit::serve::{admin_invite, import_hetionet, Serve, Served};

const EXE: &str = env!("CARGO_BIN_EXE_serenqa");

/// A graph snapshot, a built-looking `dist/index.html` with an inline module script, and an
/// empty cache directory, in `dir`.
fn setup(dir: &Path) {
    import_hetionet(
        EXE,
        dir,
        "id\tname\tkind\nCompound::DB00945\tAcetylsalicylic acid\tCompound\nCompound::DB00316\tAcetaminophen\tCompound\nDisease::DOID:10763\thypertension\tDisease\nGene::5743\tPTGS2\tGene\nDisease::DOID:0050783\tfever\tDisease\nGene::1\tA1BG\tGene\n",
        "source\tmetaedge\ttarget\nCompound::DB00945\tCtD\tDisease::DOID:10763\nCompound::DB00945\tCbG\tGene::5743\nCompound::DB00316\tCbG\tGene::5743\nCompound::DB00316\tCtD\tDisease::DOID:0050783\nCompound::DB00316\tCbG\tGene::1\nCompound::DB00945\tCbG\tGene::1\n",
    );
    std::fs::create_dir(dir.join("dist")).unwrap();
    std::fs::write(dir.join("dist/index.html"), "<!DOCTYPE html><html><head><script type=\"module\">import init from '/app.js';await init();</script></head><body></body></html>").unwrap();
}

fn serve(dir: &Path, extra: &[&str]) -> Served {
    serve_with_cache(dir, extra, "cache")
}

/// `serve` with its own LLM response cache directory (`$SERENQA_CACHE`), so that model calls
/// are really made.
fn serve_with_cache(dir: &Path, extra: &[&str], cache: &str) -> Served {
    Serve::new(EXE, dir)
        .args(&["--graph", "g.snap", "--dist", "dist", "--db", "a.sqlite"])
        .args(extra)
        .env("SERENQA_CACHE", dir.join(cache))
        .spawn()
}

struct Reply {
    status: u16,
    body: String,
    headers: Vec<(String, String)>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    fn code(&self) -> String {
        serde_json::from_str::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| v["code"].as_str().map(String::from))
            .unwrap_or_default()
    }
}

fn call(method: &str, url: &str, body: Option<&str>, headers: &[(&str, &str)]) -> Reply {
    let (status, body, headers) = serenqa_testkit::http::call(method, url, body, headers);
    Reply {
        status,
        body,
        headers,
    }
}

fn get(url: &str, headers: &[(&str, &str)]) -> Reply {
    call("GET", url, None, headers)
}

fn assert_429(r: &Reply, code: &str) {
    assert_eq!(r.status, 429, "{}", r.body);
    assert_eq!(r.code(), code, "{}", r.body);
    let secs: u64 = r
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("Retry-After in seconds");
    assert!(secs >= 1, "{secs}");
}

/// Past the cap (one Cypher query at a time, no queue) a request is refused at once with 429,
/// `Retry-After` and the JSON error; the slot frees when the holder finishes. A client still
/// sending its body holds no slot (bodies are read, under a deadline, before admission).
#[test]
fn concurrency_cap_answers_429_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let s = serve(dir.path(), &["--max-concurrent", "cypher=1:0"]);
    let q = r#"{"query":"MATCH (c:Compound) RETURN count(c) AS n"}"#;
    assert_eq!(
        call("POST", &format!("{}/api/cypher", s.base), Some(q), &[]).status,
        200
    );

    // A client that has sent its headers and half its body holds nothing: others get through.
    let mut slow = TcpStream::connect(s.addr()).unwrap();
    write!(slow, "POST /api/cypher HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}", s.addr(), q.len(), &q[..10]).unwrap();
    slow.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        call("POST", &format!("{}/api/cypher", s.base), Some(q), &[]).status,
        200,
        "a half-sent body must not hold the slot"
    );
    slow.write_all(&q.as_bytes()[10..]).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 12];
    slow.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"HTTP/1.1 200");
    drop(slow);

    // A long-running query holds the only slot: 36M comparisons in nested comprehensions,
    // seconds of work with no rows and little memory (it ends with its answer or its budget).
    let long = r#"{"query":"RETURN size([i IN range(1, 6000) WHERE size([j IN range(1, 6000) WHERE j = i + 6000]) > 0]) AS n"}"#;
    let start_holder = || {
        let base = s.base.clone();
        std::thread::spawn(move || {
            call("POST", &format!("{base}/api/cypher"), Some(long), &[]).status
        })
    };
    let mut holder = start_holder();
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    let r = loop {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the long query never held the slot"
        );
        if holder.is_finished() {
            // It lost the slot to a probe (429) or already ended: start it again.
            let st = holder.join().unwrap();
            assert!(
                matches!(st, 200 | 400 | 429),
                "the long query ended with {st}"
            );
            holder = start_holder();
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        let r = call("POST", &format!("{}/api/cypher", s.base), Some(q), &[]);
        if r.status == 429 {
            break r;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_429(&r, "busy");
    assert!(r.body.contains("busy"), "{}", r.body);
    // Other classes are not affected.
    assert_eq!(
        get(
            &format!(
                "{}/api/paths?from=Compound::DB00945&to=Disease::DOID:10763",
                s.base
            ),
            &[]
        )
        .status,
        200
    );
    // The holder finishes (an answer or its time budget): the slot is free again.
    let st = holder.join().unwrap();
    assert!(matches!(st, 200 | 400), "the long query ended with {st}");
    let t = Instant::now();
    while call("POST", &format!("{}/api/cypher", s.base), Some(q), &[]).status != 200 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the slot was never released"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Each client has its own bucket; `X-Forwarded-For` names the client only when the peer is
/// a trusted proxy; IPv6 clients of one /64 share a bucket.
#[test]
fn token_bucket_per_client_and_forwarded_for_only_from_trusted_proxies() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let paths = "/api/paths?from=Compound::DB00945&to=Disease::DOID:10763";

    let s = serve(dir.path(), &["--rate", "0.001", "--burst", "2"]);
    let url = format!("{}{paths}", s.base);
    assert_eq!(get(&url, &[]).status, 200);
    assert_eq!(
        get(&url, &[("X-Forwarded-For", "198.51.100.1")]).status,
        200
    );
    assert_429(&get(&url, &[]), "rate_limited");
    // Without --trusted-proxy the header is ignored: still the same (loopback) client.
    assert_429(
        &get(&url, &[("X-Forwarded-For", "198.51.100.2")]),
        "rate_limited",
    );
    // Cheap endpoints are not limited.
    assert_eq!(get(&format!("{}/api/graph", s.base), &[]).status, 200);
    drop(s);

    let s = serve(
        dir.path(),
        &[
            "--rate",
            "0.001",
            "--burst",
            "2",
            "--trusted-proxy",
            "127.0.0.0/8",
        ],
    );
    let url = format!("{}{paths}", s.base);
    let from = |ip: &str| get(&url, &[("X-Forwarded-For", ip)]).status;
    assert_eq!(
        (
            from("198.51.100.1"),
            from("198.51.100.1"),
            from("198.51.100.1")
        ),
        (200, 200, 429)
    );
    assert_eq!(
        from("198.51.100.2"),
        200,
        "another client behind the proxy has its own bucket"
    );
    // The right-most hop that is not a trusted proxy is the client.
    assert_eq!(
        from("203.0.113.7, 198.51.100.1"),
        429,
        "198.51.100.1 is the client, its bucket is empty"
    );
    assert_eq!(from("2001:db8:1:2::1"), 200);
    assert_eq!(from("2001:db8:1:2:ffff::9"), 200);
    assert_eq!(
        from("2001:db8:1:2:abcd::5"),
        429,
        "the same /64 shares one bucket"
    );
    assert_eq!(
        from("2001:db8:1:3::1"),
        200,
        "the next /64 is another client"
    );
}

/// A page on another site may open an EventSource on the stream: refused with 403 JSON.
#[test]
fn ask_stream_refuses_foreign_origins_and_pages_carry_security_headers() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let s = serve(dir.path(), &[]);
    let url = format!(
        "{}/api/ask/stream?question=Which%20compounds%20treat%20hypertension%3F",
        s.base
    );
    for origin in [
        "http://evil.example",
        "null",
        &format!("http://{}.evil.example", s.addr()),
    ] {
        let r = get(&url, &[("Origin", origin)]);
        assert_eq!(
            (r.status, r.code().as_str()),
            (403, "cross_origin"),
            "{origin}: {}",
            r.body
        );
    }
    let r = get(&url, &[("Sec-Fetch-Site", "cross-site")]);
    assert_eq!(r.status, 403);
    let r = get(&url, &[("Origin", &s.base)]);
    assert_eq!(r.status, 200, "same origin: {}", r.body);
    assert!(r.body.contains("\"kind\":\"result\""), "{}", r.body);
    assert_eq!(
        get(&url, &[]).status,
        200,
        "no Origin (same-origin GET, curl) passes"
    );

    // Security headers on the page, on the API, on errors.
    let script = "import init from '/app.js';await init();";
    let hash = {
        use base64::Engine;
        use sha2::Digest;
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(script.as_bytes()))
    };
    for path in [
        "/",
        "/discover",
        "/api/graph",
        "/api/nothing-here",
        "/api/node/Compound::NOPE",
    ] {
        let r = get(&format!("{}{path}", s.base), &[]);
        let csp = r
            .header("content-security-policy")
            .unwrap_or_else(|| panic!("{path}: no CSP"));
        assert!(
            csp.contains("script-src 'self' 'wasm-unsafe-eval'")
                && csp.contains(&format!("'sha256-{hash}'")),
            "{path}: {csp}"
        );
        assert!(
            csp.contains("frame-ancestors 'none'")
                && csp.contains("object-src 'none'")
                && !csp.contains("'unsafe-eval'"),
            "{path}: {csp}"
        );
        assert_eq!(
            r.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(
            r.header("cross-origin-opener-policy"),
            Some("same-origin"),
            "{path}"
        );
        assert_eq!(
            r.header("cross-origin-embedder-policy"),
            Some("require-corp"),
            "{path}"
        );
        // Tokens in invite and reset addresses never leave as a referrer.
        assert_eq!(r.header("referrer-policy"), Some("no-referrer"), "{path}");
        // API replies (the CSRF token of /api/auth/me, exports) are never cached.
        if path.starts_with("/api/") {
            assert_eq!(r.header("cache-control"), Some("no-store"), "{path}");
        }
    }
    // Anonymous answers carry no absolute server paths.
    for path in ["/api/runs", "/api/graph"] {
        let r = get(&format!("{}{path}", s.base), &[]);
        assert_eq!(r.status, 200);
        assert!(
            !r.body.contains(&dir.path().display().to_string()),
            "{path}: {}",
            r.body
        );
    }
}

fn models_file(dir: &Path, base_url: &str) {
    std::fs::write(
        dir.join("models.json"),
        scripted_llm::models_file(base_url, &[], 4).to_string(),
    )
    .unwrap();
}

/// With `--models`, an Ask needs a signed-in user unless the operator opts out; an offline
/// Ask stays open.
#[test]
fn model_backed_ask_needs_a_signed_in_user_unless_opted_out() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let llm = rt.block_on(scripted_llm::start(Duration::ZERO)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    models_file(dir.path(), &llm.base_url);
    let token = admin_invite(EXE, dir.path(), "a.sqlite");

    let s = serve(dir.path(), &["--models", "models.json"]);
    let ask = format!("{}/api/ask", s.base);
    let q = r#"{"question":"Which compounds treat hypertension?"}"#;
    let r = call("POST", &ask, Some(q), &[]);
    assert_eq!(
        (r.status, r.code().as_str()),
        (401, "not_signed_in"),
        "{}",
        r.body
    );
    let r = get(
        &format!("{}/api/ask/stream?question=Which%20compounds%3F", s.base),
        &[],
    );
    assert_eq!(r.status, 401, "{}", r.body);
    let r = call("POST", &ask, Some(q), &[("Cookie", "sq_session=forged")]);
    assert_eq!(r.status, 401, "a made-up session is no session");
    assert_eq!(
        llm.calls.load(Ordering::SeqCst),
        0,
        "nothing reached the model"
    );
    let r = call(
        "POST",
        &ask,
        Some(r#"{"question":"Which compounds treat hypertension?","model":"offline"}"#),
        &[],
    );
    assert_eq!(r.status, 200, "offline Ask is open: {}", r.body);

    // Signed in (accepting the admin invite): allowed, the model answers.
    let body = serde_json::json!({"name": "Admin", "password": "a long password 1"}).to_string();
    let r = call(
        "POST",
        &format!("{}/api/auth/invite/{token}", s.base),
        Some(&body),
        &[("X-Requested-With", "serenqa")],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let cookie = r
        .header("set-cookie")
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_string();
    let r = call("POST", &ask, Some(q), &[("Cookie", &cookie)]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(llm.calls.load(Ordering::SeqCst) > 0);
    drop(s);

    let s = serve(dir.path(), &["--models", "models.json", "--anonymous-llm"]);
    let r = call(
        "POST",
        &format!("{}/api/ask", s.base),
        Some(r#"{"question":"Which compounds treat fever?"}"#),
        &[],
    );
    assert_eq!(r.status, 200, "--anonymous-llm: {}", r.body);
    assert!(r.body.contains("\"retrieval\":\"scripted\""), "{}", r.body);
}

/// An Ask whose model is slower than the deadline ends with a clear 504 (or an error event).
#[test]
fn ask_deadline_gives_a_clear_error() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let llm = rt
        .block_on(scripted_llm::start(Duration::from_millis(1500)))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    models_file(dir.path(), &llm.base_url);
    let s = serve(
        dir.path(),
        &[
            "--models",
            "models.json",
            "--anonymous-llm",
            "--ask-deadline",
            "0.5",
        ],
    );
    let t = Instant::now();
    let r = call(
        "POST",
        &format!("{}/api/ask", s.base),
        Some(r#"{"question":"Which compounds treat hypertension?"}"#),
        &[],
    );
    assert_eq!(
        (r.status, r.code().as_str()),
        (504, "ask_deadline"),
        "{}",
        r.body
    );
    assert!(r.body.contains("0.5 s"), "{}", r.body);
    assert!(
        t.elapsed() < Duration::from_millis(1400),
        "answered at the deadline, not after the model: {:?}",
        t.elapsed()
    );
    let r = get(
        &format!(
            "{}/api/ask/stream?question=Which%20compounds%20treat%20fever%3F",
            s.base
        ),
        &[],
    );
    assert_eq!(r.status, 200);
    assert!(
        r.body.contains("\"kind\":\"error\"") && r.body.contains("\"code\":\"ask_deadline\""),
        "{}",
        r.body
    );
}

/// Sends `request` on a raw connection, waits until the scripted model has received one more
/// call, then closes the connection; returns how many calls the Ask made in all (counted
/// after waiting long enough for several more model calls).
fn calls_after_disconnect(
    addr: &str,
    request: &str,
    calls: &std::sync::atomic::AtomicUsize,
) -> usize {
    let before = calls.load(Ordering::SeqCst);
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(request.as_bytes()).unwrap();
    let t = Instant::now();
    while calls.load(Ordering::SeqCst) == before {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the Ask never called the model"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    c.shutdown(std::net::Shutdown::Both).unwrap();
    drop(c);
    // Ten model latencies: an Ask that kept going would make several more calls.
    std::thread::sleep(Duration::from_millis(3000));
    calls.load(Ordering::SeqCst) - before
}

/// A client that goes away cancels its Ask: the model stops receiving calls.
#[test]
fn client_disconnect_cancels_the_ask() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let llm = rt
        .block_on(scripted_llm::start(Duration::from_millis(300)))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    models_file(dir.path(), &llm.base_url);
    let flags = ["--models", "models.json", "--anonymous-llm"];
    let question = "Which compounds treat hypertension?";

    // A complete Ask, for reference: how many calls one makes.
    let s = serve_with_cache(dir.path(), &flags, "cache-full");
    let r = call(
        "POST",
        &format!("{}/api/ask", s.base),
        Some(&serde_json::json!({"question": question}).to_string()),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let full = llm.calls.load(Ordering::SeqCst);
    assert!(
        full >= 5,
        "a complete Ask makes several model calls ({full})"
    );
    drop(s);

    // The same Ask (each server with an empty response cache), the client gone after the
    // first model call.
    let s = serve_with_cache(dir.path(), &flags, "cache-post");
    let body = serde_json::json!({"question": question}).to_string();
    let post = format!("POST /api/ask HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", s.addr(), body.len());
    let n = calls_after_disconnect(s.addr(), &post, &llm.calls);
    eprintln!("complete Ask: {full} model calls; POST cancelled after the first: {n}");
    assert!(
        n <= 2,
        "POST /api/ask: {n} model calls after the client left (a complete Ask makes {full})"
    );
    drop(s);

    let s = serve_with_cache(dir.path(), &flags, "cache-stream");
    let stream = format!("GET /api/ask/stream?question=Which%20compounds%20treat%20hypertension%3F HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n", s.addr());
    let n = calls_after_disconnect(s.addr(), &stream, &llm.calls);
    eprintln!("stream cancelled after the first: {n}");
    assert!(
        n <= 2,
        "GET /api/ask/stream: {n} model calls after the client left (a complete Ask makes {full})"
    );
}

/// Fair share: one client flooding Ask cannot hold both Ask slots while another waits. The
/// flooding client's Asks hang in the scripted model (they hold their slot until the server
/// stops), so nothing here depends on timing: its first Ask holds its one slot of two, its
/// second finds its share taken and is refused `busy` after the queue wait, a third is
/// refused at once (its place in the queue is taken), and another client's Ask still
/// gets the free slot.
#[test]
fn one_client_cannot_take_every_ask_slot() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let faults = scripted_llm::Faults {
        on: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
        every: Some(scripted_llm::Fault::Hang),
        ..Default::default()
    };
    let llm = rt
        .block_on(scripted_llm::start_with_faults(Duration::ZERO, faults))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    models_file(dir.path(), &llm.base_url);
    let s = serve(
        dir.path(),
        &[
            "--models",
            "models.json",
            "--anonymous-llm",
            "--ask-deadline",
            "3600",
            "--max-concurrent",
            "ask=2:4",
            "--queue-wait",
            "0.3",
            "--trusted-proxy",
            "127.0.0.0/8",
        ],
    );
    let ask = format!("{}/api/ask", s.base);
    let hog = "198.51.100.1";
    let held = {
        let ask = ask.clone();
        std::thread::spawn(move || {
            call(
                "POST",
                &ask,
                Some(r#"{"question":"Which compounds treat hypertension?"}"#),
                &[("X-Forwarded-For", hog)],
            )
            .status
        })
    };
    // The hog's first Ask holds a slot once it has reached the model (where it hangs).
    let t = Instant::now();
    while llm.calls.load(Ordering::SeqCst) == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the Ask never called the model"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!held.is_finished());
    let offline = r#"{"question":"Which compounds treat fever?","model":"offline"}"#;
    // Its second Ask waits for its own share (one slot), not for the free one, and is refused.
    let r = call("POST", &ask, Some(offline), &[("X-Forwarded-For", hog)]);
    assert_429(&r, "busy");
    // Another client walks into the free slot.
    let r = call(
        "POST",
        &ask,
        Some(offline),
        &[("X-Forwarded-For", "203.0.113.7")],
    );
    assert_eq!(r.status, 200, "the second client's Ask: {}", r.body);
    // The same /64 rule holds for shares: another client from the hog's own address range
    // is still another client under IPv4.
    let r = call(
        "POST",
        &ask,
        Some(offline),
        &[("X-Forwarded-For", "198.51.100.2")],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!held.is_finished(), "the hog's Ask still holds its slot");
}

/// Cost by work: an Ask is charged for the time it held its slot (5 tokens a second), not a
/// flat price. The scripted model answers each call after 2 s, so the Ask held its slot at
/// least 2 s — at least 10 tokens, the whole bucket of this server — and its client is then
/// refused for a while, while another client is not.
#[test]
fn an_ask_is_charged_for_the_time_it_held_its_slot() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let llm = rt
        .block_on(scripted_llm::start(Duration::from_secs(2)))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    models_file(dir.path(), &llm.base_url);
    let s = serve(
        dir.path(),
        &[
            "--models",
            "models.json",
            "--anonymous-llm",
            "--rate",
            "0.001",
            "--burst",
            "10",
            "--trusted-proxy",
            "127.0.0.0/8",
        ],
    );
    let paths = format!(
        "{}/api/paths?from=Compound::DB00945&to=Disease::DOID:10763",
        s.base
    );
    let asker = [("X-Forwarded-For", "198.51.100.1")];
    // Quick requests cost their entry token only: three of them leave 7 tokens.
    for _ in 0..3 {
        assert_eq!(get(&paths, &asker).status, 200);
    }
    let r = call(
        "POST",
        &format!("{}/api/ask", s.base),
        Some(r#"{"question":"Which compounds treat hypertension?"}"#),
        &asker,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(llm.calls.load(Ordering::SeqCst) > 0);
    // A flat price of 5 would leave 2 tokens; the time held left none.
    assert_429(&get(&paths, &asker), "rate_limited");
    assert_eq!(
        get(&paths, &[("X-Forwarded-For", "203.0.113.7")]).status,
        200,
        "another client's bucket is untouched"
    );
}

/// Every endpoint that can answer a large body goes through the reply budget: with
/// `--max-reply-bytes 1024`, a reply that is larger on a server without the limit is refused
/// `400 reply_too_large` (one line, a hint), and a smaller one is served unchanged.
#[test]
fn large_replies_of_every_endpoint_are_refused_past_the_reply_budget() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let urls = [
        "/api/paths?from=Compound::DB00945,Compound::DB00316&to=Disease::DOID:10763,Disease::DOID:0050783,Gene::1",
        "/api/paths?from=Compound::DB00945&to=Disease::DOID:10763&max_hops=1",
        "/api/node/Compound::DB00945",
        "/api/slice?ids=Compound::DB00945,Compound::DB00316,Gene::5743,Gene::1",
        "/api/discover/Disease::DOID:10763",
        "/api/runs",
    ];
    let full = serve(dir.path(), &[]);
    let sizes: Vec<(u16, usize)> = urls
        .iter()
        .map(|u| {
            let r = get(&format!("{}{u}", full.base), &[]);
            (r.status, r.body.len())
        })
        .collect();
    drop(full);
    assert!(
        sizes.iter().any(|&(st, n)| st == 200 && n > 1024),
        "some reply must pass 1 KiB: {sizes:?}"
    );
    assert!(
        sizes.iter().any(|&(st, n)| st == 200 && n <= 1024),
        "some reply must stay under 1 KiB: {sizes:?}"
    );
    let s = serve(dir.path(), &["--max-reply-bytes", "1024"]);
    for (u, (st, n)) in urls.iter().zip(sizes) {
        let r = get(&format!("{}{u}", s.base), &[]);
        if st == 200 && n > 1024 {
            serenqa_testkit::http::assert_error_line(r.status, &r.body, 400, "reply_too_large", u);
            assert!(r.body.contains("1024 bytes"), "{u}: {}", r.body);
        } else {
            assert_eq!((r.status, r.body.len()), (st, n), "{u}: {}", r.body);
        }
    }
    let r = call(
        "POST",
        &format!("{}/api/cypher", s.base),
        Some(r#"{"query":"RETURN range(1, 1000) AS xs"}"#),
        &[],
    );
    assert_eq!(
        (r.status, r.code().as_str()),
        (400, "cypher_budget"),
        "{}",
        r.body
    );
}

/// A kept-alive connection that sends no next request, and a connection that never sends
/// one, are closed after the header timeout (here 1 s; the bound checked is generous).
#[test]
fn idle_connections_are_closed_after_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let s = serve(dir.path(), &["--header-timeout", "1"]);
    let closed_within = |c: &mut TcpStream| {
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut buf = [0u8; 1 << 16];
        loop {
            match c.read(&mut buf) {
                Ok(0) => return true,
                // The reply to the first request: read on.
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                Err(_) => return false,
            }
        }
    };
    let mut kept = TcpStream::connect(s.addr()).unwrap();
    write!(
        kept,
        "GET /api/graph HTTP/1.1\r\nHost: {}\r\n\r\n",
        s.addr()
    )
    .unwrap();
    assert!(
        closed_within(&mut kept),
        "an idle kept-alive connection stayed open"
    );
    let mut silent = TcpStream::connect(s.addr()).unwrap();
    assert!(
        closed_within(&mut silent),
        "a silent connection stayed open"
    );
    // A slowloris: one header byte every 300 ms never completes its headers in time.
    let mut slow = TcpStream::connect(s.addr()).unwrap();
    let t = Instant::now();
    let mut gone = false;
    for b in b"GET /api/graph HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
        if slow.write_all(&[*b]).is_err() {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(
        gone || closed_within(&mut slow),
        "a slowloris connection stayed open for {:?}",
        t.elapsed()
    );
}
