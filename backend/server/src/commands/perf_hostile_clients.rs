//! The client-side attacks of `serenqa perf hostile`'s second phase, run together while the
//! benign clinician keeps opening Discover:
//!
//! - **slow reader**: connections that each ask for the largest reply a client can get (a
//!   Cypher result of about 14 MiB as JSON, under the 16 MiB reply limit) and read it 1 KiB
//!   every 100 ms; the server must hold at most its reply cap and drop a reply not read by its
//!   deadline;
//! - **slowloris**: connections that send a request's headers one byte every 2 s; the server
//!   must close them (header timeout);
//! - **Ask monopoly**: one client asks 2,000-character questions in two loops while a second
//!   client asks a short question every second; the second client's Asks must get through.
//!
//! Each simulated client is its own address through `X-Forwarded-For` (the server trusts
//! loopback as a proxy, see `perf_hostile`).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// What the slow readers saw.
#[derive(Default, Debug)]
pub struct SlowReaders {
    /// Replies that started (200) and were then read slowly.
    pub started: usize,
    /// Refusals before a reply started, by status and code.
    pub refused: BTreeMap<String, u64>,
    /// Bytes the readers got in all.
    pub bytes_read: u64,
    /// Connections the server ended before the reply was read whole, and when (seconds
    /// after the reply started).
    pub cut: Vec<f64>,
    /// Size of one reply (its Content-Length).
    pub reply_bytes: u64,
}

/// The Cypher request of the largest reply: 2 Mi characters of U+0001 (each escapes to six
/// bytes) and a 2 MiB string of letters, about 14 MiB of JSON.
fn largest_reply_request(addr: &str, client: &str) -> Vec<u8> {
    let body = serde_json::json!({
        "query": "WITH reduce(s = $c, i IN range(1, 21) | s + s) AS s, reduce(t = 'ab', i IN range(1, 20) | t + t) AS t RETURN s AS a, t AS b",
        "params": { "c": "\u{1}" }
    })
    .to_string();
    format!(
        "POST /api/cypher HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nX-Forwarded-For: {client}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads a response's head (status line and headers); returns it and the body bytes read
/// with it.
fn read_head(s: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..i]).to_string();
            return Some((head, buf[i + 4..].to_vec()));
        }
        if buf.len() > 64 << 10 {
            return None;
        }
    }
}

fn status_of(head: &str) -> String {
    head.split_whitespace().nth(1).unwrap_or("?").to_string()
}

fn header_of(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_string())
    })
}

/// One slow reader: asks (retrying refusals for up to `window`), then reads 1 KiB every
/// 100 ms until the reply ends, the server closes, or `window` has passed.
fn slow_reader(addr: &str, client: &str, window: Duration) -> SlowReaders {
    let mut out = SlowReaders::default();
    let t0 = Instant::now();
    while t0.elapsed() < window {
        let Ok(mut s) = TcpStream::connect(addr) else {
            *out.refused.entry("connect failed".into()).or_default() += 1;
            std::thread::sleep(Duration::from_millis(500));
            continue;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
        if s.write_all(&largest_reply_request(addr, client)).is_err() {
            *out.refused.entry("closed".into()).or_default() += 1;
            continue;
        }
        let Some((head, first)) = read_head(&mut s) else {
            *out.refused.entry("closed".into()).or_default() += 1;
            continue;
        };
        let status = status_of(&head);
        if status != "200" {
            let mut rest = Vec::new();
            let _ = s.take(64 << 10).read_to_end(&mut rest);
            let body = [first, rest].concat();
            let code = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["code"].as_str().map(str::to_string))
                .unwrap_or_default();
            *out.refused.entry(format!("{status} {code}")).or_default() += 1;
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        out.started += 1;
        let total: u64 = header_of(&head, "content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        out.reply_bytes = total;
        let started = Instant::now();
        let mut got = first.len() as u64;
        let mut chunk = [0u8; 1024];
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        loop {
            if got >= total || t0.elapsed() >= window {
                break;
            }
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => {
                    out.cut.push(started.elapsed().as_secs_f64());
                    break;
                }
                Ok(n) => got += n as u64,
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        out.bytes_read += got;
        break;
    }
    out
}

/// `n` slow readers at once, each its own client.
pub fn slow_readers(addr: &str, n: usize, window: Duration) -> SlowReaders {
    let threads: Vec<_> = (0..n)
        .map(|i| {
            let addr = addr.to_string();
            std::thread::spawn(move || slow_reader(&addr, &format!("192.0.2.{}", 100 + i), window))
        })
        .collect();
    let mut all = SlowReaders::default();
    for t in threads {
        let Ok(r) = t.join() else { continue };
        all.started += r.started;
        for (k, v) in r.refused {
            *all.refused.entry(k).or_default() += v;
        }
        all.bytes_read += r.bytes_read;
        all.cut.extend(r.cut);
        all.reply_bytes = all.reply_bytes.max(r.reply_bytes);
    }
    all
}

/// How long the server kept each slowloris connection open (`None`: still open at the end of
/// `window`).
pub fn slowloris(addr: &str, n: usize, every: Duration, window: Duration) -> Vec<Option<f64>> {
    let threads: Vec<_> = (0..n)
        .map(|i| {
            let addr = addr.to_string();
            std::thread::spawn(move || {
                let Ok(mut s) = TcpStream::connect(&addr) else {
                    return Some(0.0);
                };
                let _ = s.set_read_timeout(Some(every));
                let t = Instant::now();
                let head = format!(
                    "GET /api/graph HTTP/1.1\r\nHost: {addr}\r\nX-Forwarded-For: 192.0.2.{}\r\nX-Padding: ",
                    200 + i
                );
                let mut bytes = head.into_bytes().into_iter().chain(std::iter::repeat(b'a'));
                while t.elapsed() < window {
                    let b = bytes.next().unwrap_or(b'a');
                    if s.write_all(&[b]).is_err() {
                        return Some(t.elapsed().as_secs_f64());
                    }
                    let mut buf = [0u8; 256];
                    match s.read(&mut buf) {
                        Ok(_) => return Some(t.elapsed().as_secs_f64()),
                        Err(e)
                            if matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) => {}
                        Err(_) => return Some(t.elapsed().as_secs_f64()),
                    }
                }
                None
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().unwrap_or(None))
        .collect()
}

/// What the Ask monopoly left for the second client.
#[derive(Default, Debug)]
pub struct Monopoly {
    /// The flooding client's replies, status (and code) × count.
    pub hog: BTreeMap<String, u64>,
    /// The second client's replies.
    pub benign: BTreeMap<String, u64>,
    pub benign_ok: u64,
    pub benign_sent: u64,
    /// The second client's Ask latency, ms, sorted.
    pub benign_ms: Vec<f64>,
}

fn ask_once(a: &ureq::Agent, base: &str, client: &str, question: &str) -> String {
    let body = serde_json::json!({ "question": question }).to_string();
    match a
        .post(&format!("{base}/api/ask"))
        .header("content-type", "application/json")
        .header("x-forwarded-for", client)
        .send(body.as_bytes())
    {
        Ok(mut r) => {
            let status = r.status().as_u16();
            let text = r
                .body_mut()
                .with_config()
                .limit(16 << 20)
                .read_to_string()
                .unwrap_or_default();
            if status == 200 {
                "200".into()
            } else {
                let code = serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .and_then(|v| v["code"].as_str().map(str::to_string))
                    .unwrap_or_default();
                format!("{status} {code}")
            }
        }
        Err(e) => format!("transport error: {e}"),
    }
}

/// One client floods Ask with 2,000-character questions in two loops for `window`; a second
/// asks a short question every second.
pub fn ask_monopoly(base: &str, window: Duration) -> Monopoly {
    let mut long = String::new();
    let clause = "Which compounds treat asthma or hypertension and which genes do they bind? ";
    while long.chars().count() + clause.len() <= 2000 {
        long.push_str(clause);
    }
    while long.chars().count() < 2000 {
        long.push('?');
    }
    let deadline = Instant::now() + window;
    let hogs: Vec<_> = (0..2)
        .map(|_| {
            let (base, long) = (base.to_string(), long.clone());
            std::thread::spawn(move || {
                let a = super::live_server::agent(Duration::from_secs(120));
                let mut tally = BTreeMap::<String, u64>::new();
                while Instant::now() < deadline {
                    let r = ask_once(&a, &base, "198.51.100.99", &long);
                    *tally.entry(r).or_default() += 1;
                }
                tally
            })
        })
        .collect();
    // Let the flood take hold first.
    std::thread::sleep(Duration::from_secs(2));
    let mut m = Monopoly::default();
    let a = super::live_server::agent(Duration::from_secs(120));
    while Instant::now() < deadline {
        let t = Instant::now();
        let r = ask_once(&a, base, "203.0.113.8", "Which compounds treat asthma?");
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        m.benign_sent += 1;
        if r == "200" {
            m.benign_ok += 1;
            m.benign_ms.push(ms);
        }
        *m.benign.entry(r).or_default() += 1;
        std::thread::sleep(Duration::from_secs(1).saturating_sub(t.elapsed()));
    }
    for h in hogs {
        if let Ok(t) = h.join() {
            for (k, v) in t {
                *m.hog.entry(k).or_default() += v;
            }
        }
    }
    m.benign_ms.sort_by(f64::total_cmp);
    m
}
