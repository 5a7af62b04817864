//! `serenqa perf hostile`: hostile traffic against a real `serenqa serve` child process on
//! loopback, while a benign clinician keeps opening a Discover page.
//!
//! The attackers (`--attackers` threads, 64 by default, each sending `--rounds` rounds of
//! every attack) send what one anonymous client can send: Cypher that doubles strings or
//! walks unbounded `*`, cartesian products, deep walks, huge literals, 1 MiB bodies,
//! malformed JSON, oversized questions, and slow clients that dribble a body a byte at a time.
//! Every attack must be answered with a 4xx, 429 or 503 carrying a JSON `code` (a slow
//! client may instead be disconnected by the server). The report gives the server's peak
//! resident memory over its idle level (sampled every 20 ms from `/proc/<pid>/status`),
//! the benign client's p50 / p99 latency during the attack and before it, and whether the
//! server is still alive and answering at the end. Loopback only; bounded in count and time
//! (`--max-seconds`), it stops by itself.
//!
//! A second phase (`perf_hostile_clients`) then runs the client-side attacks together for
//! `--phase-two-seconds`: `--slow-readers` connections reading the largest reply slowly (the
//! server's RSS rise is reported; goal ≤ 256 MB), `--slowloris` connections sending a header
//! byte every 2 s (time until the server closes each; goal ≤ 30 s), and one client flooding Ask
//! with 2,000-character questions in two loops while a second asks a short question every
//! second (its success rate; goal ≥ 90%), with the benign Discover p99 measured throughout
//! (goal ≤ 500 ms).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;

use super::live_server::{agent, rss_of, spawn_server, RssWatch, Server};
use crate::rss::human_bytes;

#[derive(Args, Clone)]
pub struct HostileArgs {
    /// Concurrent attacking clients.
    #[arg(long, default_value_t = 64)]
    pub attackers: usize,
    /// Rounds of every attack per attacker.
    #[arg(long, default_value_t = 2)]
    pub rounds: usize,
    /// Hard stop for the whole attack, in seconds.
    #[arg(long, default_value_t = 240)]
    pub max_seconds: u64,
    /// Disease whose Discover page the benign client opens (`Type::identifier`).
    #[arg(long, default_value = "Disease::DOID:2841")]
    pub benign: String,
    /// Extra arguments for the server (e.g. `--graph g.snap`), as one string.
    #[arg(long, default_value = "")]
    pub serve_args: String,
    /// Slow readers of the largest reply in the second phase.
    #[arg(long, default_value_t = 12)]
    pub slow_readers: usize,
    /// Slowloris connections in the second phase.
    #[arg(long, default_value_t = 16)]
    pub slowloris: usize,
    /// Length of the second phase (slow readers run all of it; slowloris and the Ask
    /// monopoly the first 45 s), in seconds. 0 skips it.
    #[arg(long, default_value_t = 75)]
    pub phase_two_seconds: u64,
}

/// The benign clinician opening Discover every `pause` until `stop`: latencies and failures.
fn benign_loop(
    stop: Arc<AtomicBool>,
    url: String,
    pause: Duration,
) -> std::thread::JoinHandle<(Vec<f64>, Vec<String>)> {
    std::thread::spawn(move || {
        let a = agent(Duration::from_secs(60));
        let mut lat = Vec::new();
        let mut failures = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            match benign_once(&a, &url) {
                Ok(ms) => lat.push(ms),
                Err(e) => failures.push(e.to_string()),
            }
            std::thread::sleep(pause);
        }
        (lat, failures)
    })
}

fn start_server(extra: &str) -> Result<(Server, String)> {
    let extra: Vec<String> = extra.split_whitespace().map(str::to_string).collect();
    spawn_server("hostile", &extra)
}

/// One attack: a name and how to send it.
#[derive(Clone)]
enum Attack {
    Cypher(&'static str, String),
    Body(&'static str, &'static str, Vec<u8>),
    Get(&'static str, String),
    Slow(&'static str),
}

impl Attack {
    fn name(&self) -> &'static str {
        match self {
            Attack::Cypher(n, _) | Attack::Body(n, _, _) | Attack::Get(n, _) | Attack::Slow(n) => n,
        }
    }
}

fn attacks() -> Vec<Attack> {
    let cy = |q: &str| serde_json::json!({ "query": q }).to_string();
    let huge_literal = format!("RETURN '{}' AS x", "y".repeat(200_000));
    let mut megabyte = br#"{"query": "RETURN 1", "pad": ""#.to_vec();
    megabyte.extend(std::iter::repeat_n(b'z', 1 << 20));
    megabyte.extend(br#""}"#);
    vec![
        Attack::Cypher(
            "string doubling",
            cy(r#"RETURN size(reduce(s = "xx", i IN range(1,40) | s + s)) AS n"#),
        ),
        Attack::Cypher(
            "unbounded *",
            cy("MATCH (a:Disease)-[*]->(b) RETURN count(*)"),
        ),
        Attack::Cypher(
            "cartesian product",
            cy("MATCH (a), (b) RETURN count(*) AS n"),
        ),
        Attack::Cypher(
            "cartesian sort",
            cy("MATCH (a:Gene), (b:Gene) RETURN a.name + b.name AS x ORDER BY x"),
        ),
        Attack::Cypher(
            "deep walk",
            cy("MATCH p = (c:Compound)-[*1..20]-(x) RETURN count(p) AS n"),
        ),
        Attack::Cypher(
            "range bomb",
            cy("UNWIND range(1, 10000000) AS i RETURN collect(toString(i)) AS xs"),
        ),
        Attack::Cypher("huge literal", cy(&huge_literal)),
        Attack::Body("1 MiB body", "/api/cypher", megabyte.clone()),
        Attack::Body("1 MiB ask", "/api/ask", megabyte),
        Attack::Body(
            "malformed JSON",
            "/api/cypher",
            b"{\"query\": \"MATCH (n) RETURN n".to_vec(),
        ),
        Attack::Body(
            "wrong JSON shape",
            "/api/cypher",
            br#"{"query": 42, "params": [1,2]}"#.to_vec(),
        ),
        Attack::Body(
            "huge question",
            "/api/ask",
            serde_json::json!({ "question": "asthma ".repeat(5000) })
                .to_string()
                .into_bytes(),
        ),
        Attack::Get(
            "discover bad key",
            "/api/discover/Disease::DOID:nope?limit=200".into(),
        ),
        Attack::Get(
            "discover huge limit",
            "/api/discover/Disease::DOID:2841?limit=100000000".into(),
        ),
        Attack::Slow("slow client"),
    ]
}

#[derive(Default)]
struct Tally {
    /// attack → status → count
    by_attack: BTreeMap<&'static str, BTreeMap<String, u64>>,
    /// Replies that break the rule (2xx, 5xx other than 503, no JSON code), with an example.
    violations: Vec<String>,
    slowest: BTreeMap<&'static str, Duration>,
}

fn json_code(body: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()?
        .get("code")?
        .as_str()
        .map(str::to_string)
}

fn send(a: &ureq::Agent, base: &str, attack: &Attack, client: &str) -> (String, Option<String>) {
    let reply = match attack {
        Attack::Cypher(_, body) => a
            .post(&format!("{base}/api/cypher"))
            .header("content-type", "application/json")
            .header("x-forwarded-for", client)
            .send(body.as_bytes()),
        Attack::Body(name, path, body) => {
            // A fresh connection each time: a server that refuses an oversized body early closes
            // the connection, which must not be blamed on the next request of a pooled one.
            let fresh = agent(Duration::from_secs(30));
            let r = fresh
                .post(&format!("{base}{path}"))
                .header("content-type", "application/json")
                .header("x-forwarded-for", client)
                .send(&body[..]);
            if let (Err(e), true) = (&r, body.len() > 1 << 19) {
                // The server answered (413) and closed before the client finished writing.
                return (
                    format!("closed by server ({name}: {e})"),
                    Some("closed".into()),
                );
            }
            r
        }
        Attack::Get(_, path) => a
            .get(&format!("{base}{path}"))
            .header("x-forwarded-for", client)
            .call(),
        Attack::Slow(_) => return slow_client(base),
    };
    match reply {
        Ok(mut r) => {
            let status = r.status().as_u16();
            let body = r
                .body_mut()
                .with_config()
                .limit(64 << 20)
                .read_to_string()
                .unwrap_or_default();
            (status.to_string(), json_code(&body))
        }
        Err(e) => (format!("transport error: {e}"), None),
    }
}

/// Sends headers promising a body, then one byte every 200 ms, for at most the server's body
/// deadline plus 3 s.
fn slow_client(base: &str) -> (String, Option<String>) {
    let addr = base.trim_start_matches("http://");
    let Ok(mut s) = TcpStream::connect(addr) else {
        return ("connect failed".into(), None);
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let head = format!("POST /api/cypher HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{{");
    if s.write_all(head.as_bytes()).is_err() {
        return ("closed by server".into(), Some("closed".into()));
    }
    let window = crate::api::body::BODY_DEADLINE + Duration::from_secs(3);
    let t = Instant::now();
    let mut buf = Vec::new();
    while t.elapsed() < window {
        if s.write_all(b" ").is_err() {
            break;
        }
        let mut chunk = [0u8; 4096];
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                break;
            }
            Err(_) => {}
        }
    }
    let text = String::from_utf8_lossy(&buf);
    if text.is_empty() {
        return if t.elapsed() >= window {
            (format!("still open after {} s", window.as_secs()), None)
        } else {
            ("closed by server".into(), Some("closed".into()))
        };
    }
    let status = text.split_whitespace().nth(1).unwrap_or("?").to_string();
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    (
        status,
        json_code(body).or_else(|| (!body.is_empty()).then(|| "partial".into())),
    )
}

fn acceptable(status: &str, code: &Option<String>) -> bool {
    if status.starts_with("closed by server") {
        return true;
    }
    let Ok(s) = status.parse::<u16>() else {
        return false;
    };
    ((400..500).contains(&s) || s == 503) && code.is_some()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The benign clinician's address (a documentation range, only ever a header).
const BENIGN: &str = "203.0.113.7";

fn benign_once(a: &ureq::Agent, url: &str) -> Result<f64> {
    let t = Instant::now();
    let mut r = a.get(url).header("x-forwarded-for", BENIGN).call()?;
    let status = r.status().as_u16();
    let _ = r
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_string()?;
    if status != 200 {
        bail!("benign Discover answered {status}");
    }
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

pub fn run(args: HostileArgs) -> Result<()> {
    let (mut server, base) = start_server(&args.serve_args)?;
    let pid = server.child.id();
    let benign_url = format!("{base}/api/discover/{}?limit=50", args.benign);
    let calm = agent(Duration::from_secs(60));
    // Warm-up, then the idle level and the benign latency before the attack.
    benign_once(&calm, &benign_url).context(
        "the benign Discover request failed before the attack (is the model precomputed?)",
    )?;
    let mut before = Vec::new();
    for _ in 0..20 {
        before.push(benign_once(&calm, &benign_url)?);
    }
    std::thread::sleep(Duration::from_millis(300));
    let idle = rss_of(pid).context("cannot read the server's memory")?;

    // The issue's two queries, one at a time on the idle server: time to the budget error and
    // how far the server's memory rises meanwhile.
    let mut alone = Vec::new();
    for q in [
        r#"RETURN size(reduce(s = "xx", i IN range(1,40) | s + s)) AS n"#,
        "MATCH (a:Disease)-[*]->(b) RETURN count(*)",
    ] {
        let base_rss = rss_of(pid).unwrap_or(idle);
        let watch = RssWatch::start(pid, base_rss, Duration::from_millis(10));
        let t = Instant::now();
        let (status, code) = send(
            &calm,
            &base,
            &Attack::Cypher("alone", serde_json::json!({ "query": q }).to_string()),
            "198.51.100.250",
        );
        let took = t.elapsed();
        std::thread::sleep(Duration::from_millis(50));
        let top = watch.stop();
        alone.push((q, status, code, took, top.saturating_sub(base_rss)));
    }

    let stop = Arc::new(AtomicBool::new(false));
    let sampler = RssWatch::start(pid, idle, Duration::from_millis(20));
    let benign = benign_loop(stop.clone(), benign_url.clone(), Duration::from_millis(50));

    let tally = Arc::new(Mutex::new(Tally::default()));
    let deadline = Instant::now() + Duration::from_secs(args.max_seconds);
    let started = Instant::now();
    let list = attacks();
    let mut workers = Vec::new();
    for w in 0..args.attackers.max(1) {
        let (tally, base, list) = (tally.clone(), base.clone(), list.clone());
        let rounds = args.rounds.max(1);
        workers.push(std::thread::spawn(move || {
            let a = agent(Duration::from_secs(30));
            let client = format!("198.51.100.{}", w % 250);
            for r in 0..rounds {
                for k in 0..list.len() {
                    if Instant::now() > deadline {
                        return;
                    }
                    // Each attacker starts at a different attack, so all kinds overlap.
                    let attack = &list[(k + w + r) % list.len()];
                    let t = Instant::now();
                    let (status, code) = send(&a, &base, attack, &client);
                    let took = t.elapsed();
                    let mut tl = tally
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    let slot = tl.slowest.entry(attack.name()).or_default();
                    *slot = (*slot).max(took);
                    if !acceptable(&status, &code) && tl.violations.len() < 20 {
                        tl.violations
                            .push(format!("{}: {status} {code:?}", attack.name()));
                    }
                    let label = match &code {
                        Some(c) => format!("{status} {c}"),
                        None => status,
                    };
                    *tl.by_attack
                        .entry(attack.name())
                        .or_default()
                        .entry(label)
                        .or_default() += 1;
                }
            }
        }));
    }
    for w in workers {
        let _ = w.join();
    }
    let attack_secs = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let peak = sampler.stop();
    let (mut during, benign_failures) = benign.join().unwrap_or_default();

    let alive =
        server.child.try_wait().ok().flatten().is_none() && benign_once(&calm, &benign_url).is_ok();
    // The second phase on a fresh server, so its memory rise is measured from a clean idle
    // level rather than from an allocator still holding the first phase's freed memory.
    drop(server);
    let two = if args.phase_two_seconds > 0 {
        Some(phase_two(&args)?)
    } else {
        None
    };
    before.sort_by(f64::total_cmp);
    during.sort_by(f64::total_cmp);
    let tally = tally
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let sent: u64 = tally.by_attack.values().flat_map(|m| m.values()).sum();

    println!("serenqa perf hostile — {} attackers × {} rounds × {} attacks on {base} ({attack_secs:.1} s)", args.attackers, args.rounds, list.len());
    println!();
    println!("| query alone on the idle server | reply | time | server RSS rise |");
    println!("|---|---|---:|---:|");
    for (q, status, code, took, rise) in &alone {
        println!(
            "| `{q}` | {status} {} | {:.3} s | {} |",
            code.as_deref().unwrap_or("-"),
            took.as_secs_f64(),
            human_bytes(*rise)
        );
    }
    println!();
    println!("| attack | replies (status code × count) | slowest |");
    println!("|---|---|---:|");
    for (name, statuses) in &tally.by_attack {
        let s: Vec<String> = statuses.iter().map(|(k, v)| format!("{k} × {v}")).collect();
        let slow = tally
            .slowest
            .get(name)
            .map(std::time::Duration::as_secs_f64)
            .unwrap_or(0.0);
        println!("| {name} | {} | {slow:.2} s |", s.join(", "));
    }
    println!();
    let over = peak.saturating_sub(idle);
    let p99 = percentile(&during, 0.99);
    println!(
        "hostile requests: {sent}; not answered with 4xx/429/503 + JSON code: {}",
        tally.violations.len()
    );
    for v in &tally.violations {
        println!("  {v}");
    }
    println!(
        "server RSS: idle {}, peak during the attack {} (+{}; goal ≤ 2 GiB over idle)",
        human_bytes(idle),
        human_bytes(peak),
        human_bytes(over)
    );
    println!(
        "benign Discover ({}): before p50 {:.1} ms p99 {:.1} ms; during p50 {:.1} ms p99 {p99:.1} ms over {} requests (goal p99 ≤ 500 ms); failures {}",
        args.benign,
        percentile(&before, 0.5),
        percentile(&before, 0.99),
        percentile(&during, 0.5),
        during.len(),
        benign_failures.len()
    );
    for f in benign_failures.iter().take(5) {
        println!("  benign failure: {f}");
    }
    if let Some(two) = &two {
        two.print(&args);
    }
    let alive = alive && two.as_ref().is_none_or(|t| t.alive);
    println!(
        "server alive and answering at the end (of each phase): {}",
        if alive { "yes (0 crashes)" } else { "NO" }
    );
    if !alive {
        bail!("the server died under hostile traffic");
    }
    if !tally.violations.is_empty() {
        bail!(
            "{} hostile requests were not refused with a JSON error",
            tally.violations.len()
        );
    }
    Ok(())
}

/// The second phase's figures.
struct PhaseTwo {
    alive: bool,
    secs: f64,
    rss_idle: u64,
    rss_start: u64,
    rss_peak: u64,
    rss_end: u64,
    readers: super::perf_hostile_clients::SlowReaders,
    loris: Vec<Option<f64>>,
    monopoly: super::perf_hostile_clients::Monopoly,
    benign: Vec<f64>,
    benign_failures: Vec<String>,
}

/// Slow readers, slowloris and the Ask monopoly at once on a fresh server, the benign
/// clinician (a page every 200 ms: within its own rate budget) throughout.
fn phase_two(args: &HostileArgs) -> Result<PhaseTwo> {
    use super::perf_hostile_clients as clients;
    let (mut server, base) = start_server(&args.serve_args)?;
    let pid = server.child.id();
    let benign_url = format!("{base}/api/discover/{}?limit=50", args.benign);
    let calm = agent(Duration::from_secs(60));
    for _ in 0..5 {
        benign_once(&calm, &benign_url)?;
    }
    // Ask builds its context (the graph's lexicon) on first use: built before the idle level
    // is read, so the rise below is the attacks', not a one-time start-up cost.
    let mut warm = calm
        .post(&format!("{base}/api/ask"))
        .header("content-type", "application/json")
        .send(br#"{"question":"Which compounds treat asthma?"}"#.as_slice())
        .context("the warm-up Ask failed")?;
    let _ = warm.body_mut().read_to_string();
    let addr = base.trim_start_matches("http://").to_string();
    let window = Duration::from_secs(args.phase_two_seconds);
    let short = window.min(Duration::from_secs(45));
    std::thread::sleep(Duration::from_millis(500));
    let rss_idle = rss_of(pid).unwrap_or(0);
    let rss_start = rss_idle;
    let sampler = RssWatch::start(pid, rss_start, Duration::from_millis(20));
    let stop = Arc::new(AtomicBool::new(false));
    let benign = benign_loop(stop.clone(), benign_url.clone(), Duration::from_millis(200));
    let t = Instant::now();
    let readers = {
        let (addr, n) = (addr.clone(), args.slow_readers);
        std::thread::spawn(move || clients::slow_readers(&addr, n, window))
    };
    let loris = {
        let (addr, n) = (addr.clone(), args.slowloris);
        std::thread::spawn(move || clients::slowloris(&addr, n, Duration::from_secs(2), short))
    };
    let monopoly = clients::ask_monopoly(&base, short);
    let loris = loris.join().unwrap_or_default();
    let readers = readers.join().unwrap_or_default();
    stop.store(true, Ordering::Relaxed);
    let (mut during, benign_failures) = benign.join().unwrap_or_default();
    during.sort_by(f64::total_cmp);
    let rss_peak = sampler.stop();
    let rss_end = rss_of(pid).unwrap_or(0);
    let alive =
        server.child.try_wait().ok().flatten().is_none() && benign_once(&calm, &benign_url).is_ok();
    Ok(PhaseTwo {
        alive,
        secs: t.elapsed().as_secs_f64(),
        rss_idle,
        rss_start,
        rss_peak,
        rss_end,
        readers,
        loris,
        monopoly,
        benign: during,
        benign_failures,
    })
}

impl PhaseTwo {
    fn print(&self, args: &HostileArgs) {
        let r = &self.readers;
        let rise = self.rss_peak.saturating_sub(self.rss_start);
        println!();
        println!(
            "second phase ({:.0} s, a fresh server, idle RSS {}): slow readers, slowloris and the Ask monopoly together",
            self.secs,
            human_bytes(self.rss_idle)
        );
        println!();
        println!("| attack | result | goal |");
        println!("|---|---|---|");
        let refused: Vec<String> = r
            .refused
            .iter()
            .map(|(k, v)| format!("{k} × {v}"))
            .collect();
        println!(
            "| slow reader: {} connections ask for a {} reply, read 1 KiB / 100 ms | {} replies started ({} refused first: {}); {} read in all; server RSS +{} at peak over idle ({}), {} at the end; {} seen cut by the server | RSS rise ≤ 256 MB |",
            args.slow_readers,
            human_bytes(r.reply_bytes),
            r.started,
            r.refused.values().sum::<u64>(),
            if refused.is_empty() { "none".to_string() } else { refused.join(", ") },
            human_bytes(r.bytes_read),
            human_bytes(rise),
            human_bytes(self.rss_start),
            human_bytes(self.rss_end),
            r.cut.len(),
        );
        let mut closed: Vec<f64> = self.loris.iter().flatten().copied().collect();
        closed.sort_by(f64::total_cmp);
        let open = self.loris.iter().filter(|c| c.is_none()).count();
        println!(
            "| slowloris: {} connections, one header byte every 2 s | closed by the server after median {:.1} s, max {:.1} s; {} still open after 45 s | closed within 30 s |",
            self.loris.len(),
            percentile(&closed, 0.5),
            closed.last().copied().unwrap_or(f64::NAN),
            open
        );
        let m = &self.monopoly;
        let hog: Vec<String> = m.hog.iter().map(|(k, v)| format!("{k} × {v}")).collect();
        let benign: Vec<String> = m.benign.iter().map(|(k, v)| format!("{k} × {v}")).collect();
        println!(
            "| Ask monopoly: one client, two loops of 2,000-character questions | flooder: {}; second client: {} of {} Asks answered ({:.0}%; {}), p50 {:.0} ms | second client ≥ 90% |",
            hog.join(", "),
            m.benign_ok,
            m.benign_sent,
            100.0 * m.benign_ok as f64 / (m.benign_sent.max(1) as f64),
            benign.join(", "),
            percentile(&m.benign_ms, 0.5),
        );
        println!(
            "| benign Discover ({}) during the phase | p50 {:.1} ms, p99 {:.1} ms over {} requests; failures {} | p99 ≤ 500 ms |",
            args.benign,
            percentile(&self.benign, 0.5),
            percentile(&self.benign, 0.99),
            self.benign.len(),
            self.benign_failures.len()
        );
        for f in self.benign_failures.iter().take(5) {
            println!("  benign failure: {f}");
        }
        println!();
    }
}
