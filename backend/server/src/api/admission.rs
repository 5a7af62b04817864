//! Admission control for the anonymous, expensive endpoints — one place for every limit.
//!
//! Which requests are gated ([`Class::of`]):
//!
//! | class | endpoints | default cap (running / waiting) | tokens per request |
//! |---|---|---|---|
//! | `cypher` | `POST /api/cypher` | 4 / 8 | 1 |
//! | `ask` | `POST /api/ask`, `GET /api/ask/stream` | 2 / 4 | 5 |
//! | `discover` | `GET /api/discover/{key}` (candidates computed per request) | 8 / 16 | 1 |
//! | `paths` | `GET /api/paths` | 8 / 16 | 1 |
//! | `score` | `POST /api/partition`, `POST /api/rns`, `GET /api/slice`, `GET /api/runs/compare` | 8 / 16 | 1 |
//!
//! A gated request first takes its tokens from its client's bucket (default 10 tokens per
//! second, bursts of 60), then a slot of its class: when every slot is busy it waits in a short
//! queue (at most [`AdmissionConfig::queue_wait`], default 1 s; a full queue refuses at once).
//! Refusals are `429 Too Many Requests` with `Retry-After` (seconds) and the API's JSON
//! `{code, message}`: code `rate_limited` (the client's bucket is empty) or `busy` (the class
//! is at its cap). The slot is held until the response body is finished or dropped, so an
//! event stream (`/api/ask/stream`) holds its slot while it runs.
//!
//! Clients are keyed by address ([`client_key`]): IPv4 as is, IPv6 by its /64 (one host
//! usually owns a whole /64), IPv4-mapped IPv6 as IPv4. `X-Forwarded-For` is ignored unless the
//! peer is a trusted proxy (`serve --trusted-proxy CIDR`); then the right-most address in it
//! that is not itself a trusted proxy is the client ([`client_ip`]). The table of buckets holds
//! at most [`AdmissionConfig::max_clients`] entries: full buckets are forgotten first (a full
//! bucket is the same as none), then the least recently used.
//!
//! Ask's own limits live here too: its overall deadline ([`AdmissionConfig::ask_deadline`],
//! `serve --ask-deadline`) and whether a model-backed Ask may run without a signed-in user
//! ([`AdmissionConfig::anonymous_llm`], `serve --anonymous-llm`). `serenqa perf hostile` (and
//! any test) can build an [`AdmissionConfig`] directly; [`AdmissionConfig::default`] is what
//! `serve` uses without flags.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http_body_util::BodyExt;
use serenqa_shared::api::ApiError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The gated endpoint classes (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Cypher,
    Ask,
    Discover,
    Paths,
    Score,
}

impl Class {
    pub const ALL: [Class; 5] = [
        Class::Cypher,
        Class::Ask,
        Class::Discover,
        Class::Paths,
        Class::Score,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Cypher => "cypher",
            Class::Ask => "ask",
            Class::Discover => "discover",
            Class::Paths => "paths",
            Class::Score => "score",
        }
    }

    /// The class of a request, `None` for everything not gated (cheap reads, static files,
    /// the annotation endpoints, which have their own limits).
    pub fn of(method: &Method, path: &str) -> Option<Class> {
        let path = path.strip_prefix("/api")?;
        // HEAD runs the GET handler (axum), so it is gated like GET.
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        match (method, path) {
            (&Method::POST, "/cypher") => Some(Class::Cypher),
            (&Method::POST, "/ask") | (&Method::GET, "/ask/stream") => Some(Class::Ask),
            (&Method::GET, p) if p.starts_with("/discover/") => Some(Class::Discover),
            (&Method::GET, "/paths") => Some(Class::Paths),
            (&Method::POST, "/partition")
            | (&Method::POST, "/rns")
            | (&Method::GET, "/slice")
            | (&Method::GET, "/runs/compare") => Some(Class::Score),
            _ => None,
        }
    }

    fn index(self) -> usize {
        Class::ALL.iter().position(|&c| c == self).unwrap_or(0)
    }
}

/// The cap of one class.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    /// Requests of the class running at once.
    pub concurrent: usize,
    /// Requests waiting for a slot at most; more are refused at once.
    pub queue: usize,
    /// Tokens a request takes from its client's bucket.
    pub cost: f64,
}

/// Every admission limit of the server. Built from `serve`'s flags; [`Default`] gives the
/// documented defaults.
#[derive(Clone, Debug)]
pub struct AdmissionConfig {
    /// Caps per class, indexed like [`Class::ALL`].
    pub limits: [Limit; 5],
    /// Longest wait for a slot before `429 busy` (default 1 s).
    pub queue_wait: Duration,
    /// Tokens added to a client's bucket per second (default 10).
    pub rate: f64,
    /// Bucket size: the largest burst a client may send (default 60).
    pub burst: f64,
    /// Client buckets kept at most (default 65 536; ~50 bytes each).
    pub max_clients: usize,
    /// Peers whose `X-Forwarded-For` is believed (default none: the header is ignored).
    pub trusted_proxies: Vec<Cidr>,
    /// Overall deadline of one Ask, all stages and model calls included (default 60 s).
    pub ask_deadline: Duration,
    /// Let anonymous clients run a model-backed Ask (default false: sign-in required).
    pub anonymous_llm: bool,
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        let l = |concurrent: usize, cost: f64| Limit {
            concurrent,
            queue: 2 * concurrent,
            cost,
        };
        AdmissionConfig {
            limits: [l(4, 1.0), l(2, 5.0), l(8, 1.0), l(8, 1.0), l(8, 1.0)],
            queue_wait: Duration::from_secs(1),
            rate: 10.0,
            burst: 60.0,
            max_clients: 65_536,
            trusted_proxies: Vec::new(),
            ask_deadline: Duration::from_secs(60),
            anonymous_llm: false,
        }
    }
}

impl AdmissionConfig {
    pub fn limit(&self, c: Class) -> Limit {
        self.limits[c.index()]
    }
    pub fn limit_mut(&mut self, c: Class) -> &mut Limit {
        &mut self.limits[c.index()]
    }

    /// Applies `CLASS=N` or `CLASS=N:QUEUE` (a `serve --max-concurrent` value).
    pub fn set_cap(&mut self, spec: &str) -> Result<(), String> {
        let bad = || {
            format!(
                "--max-concurrent {spec:?}: expected CLASS=N or CLASS=N:QUEUE with CLASS one of {}",
                Class::ALL.map(Class::name).join(", ")
            )
        };
        let (name, value) = spec.split_once('=').ok_or_else(bad)?;
        let class = Class::ALL
            .into_iter()
            .find(|c| c.name() == name.trim())
            .ok_or_else(bad)?;
        let (n, q) = match value.split_once(':') {
            Some((n, q)) => (
                n.trim().parse::<usize>().map_err(|_| bad())?,
                Some(q.trim().parse::<usize>().map_err(|_| bad())?),
            ),
            None => (value.trim().parse::<usize>().map_err(|_| bad())?, None),
        };
        if n == 0 || n > 10_000 || q.is_some_and(|q| q > 100_000) {
            return Err(format!(
                "--max-concurrent {spec:?}: N must be 1–10000 and QUEUE at most 100000"
            ));
        }
        let l = self.limit_mut(class);
        l.concurrent = n;
        l.queue = q.unwrap_or(2 * n);
        Ok(())
    }
}

/// An address block, `ip` or `ip/prefix`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl FromStr for Cidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Cidr, String> {
        let bad = || format!("{s:?} is not an IP address or CIDR block (e.g. 10.0.0.0/8, ::1)");
        let (ip, prefix) = match s.trim().split_once('/') {
            Some((ip, p)) => (ip, Some(p.parse::<u8>().map_err(|_| bad())?)),
            None => (s.trim(), None),
        };
        let addr: IpAddr = ip.parse().map_err(|_| bad())?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(max);
        if prefix > max {
            return Err(bad());
        }
        Ok(Cidr {
            addr: canonical(addr),
            prefix,
        })
    }
}

impl Cidr {
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, canonical(ip)) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                mask(u32::from(a) as u128, 32, self.prefix)
                    == mask(u32::from(b) as u128, 32, self.prefix)
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => {
                mask(u128::from(a), 128, self.prefix) == mask(u128::from(b), 128, self.prefix)
            }
            _ => false,
        }
    }
}

fn mask(bits: u128, width: u8, prefix: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        bits >> (width - prefix)
    }
}

/// IPv4-mapped IPv6 (`::ffff:a.b.c.d`) as IPv4.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(a) => a.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

/// The bucket key of a client address: IPv4 as is, IPv6 cut to its /64.
pub fn client_key(ip: IpAddr) -> IpAddr {
    match canonical(ip) {
        IpAddr::V6(a) => IpAddr::V6(Ipv6Addr::from(u128::from(a) & !((1u128 << 64) - 1))),
        v4 => v4,
    }
}

/// The client's address: the peer's, unless the peer is a trusted proxy, in which case the
/// right-most `X-Forwarded-For` entry that is not a trusted proxy (the left-most parsable one
/// when all are). Without a peer address (in-process tests) the unspecified address.
pub fn client_ip(peer: Option<IpAddr>, headers: &HeaderMap, trusted: &[Cidr]) -> IpAddr {
    let peer = peer.unwrap_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED));
    if !trusted.iter().any(|c| c.contains(peer)) {
        return peer;
    }
    let hops: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|h| h.trim().parse::<IpAddr>())
        .collect::<Result<_, _>>()
        .unwrap_or_default();
    hops.iter()
        .rev()
        .copied()
        .find(|ip| !trusted.iter().any(|c| c.contains(*ip)))
        .or_else(|| hops.first().copied())
        .unwrap_or(peer)
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// Per-client token buckets in a bounded table.
pub struct Buckets {
    map: Mutex<HashMap<IpAddr, Bucket>>,
    rate: f64,
    burst: f64,
    max: usize,
}

impl Buckets {
    pub fn new(rate: f64, burst: f64, max: usize) -> Buckets {
        Buckets {
            map: Mutex::new(HashMap::new()),
            rate,
            burst,
            max: max.max(1),
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// Takes `cost` tokens from `key`'s bucket, or says how long until it has them.
    pub fn take(&self, key: IpAddr, cost: f64, now: Instant) -> Result<(), Duration> {
        let mut map = self
            .map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !map.contains_key(&key) && map.len() >= self.max {
            let (rate, burst) = (self.rate, self.burst);
            map.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.last).as_secs_f64() * rate < burst
            });
            if map.len() >= self.max {
                if let Some(oldest) = map.iter().min_by_key(|(_, b)| b.last).map(|(k, _)| *k) {
                    map.remove(&oldest);
                }
            }
        }
        let b = map.entry(key).or_insert(Bucket {
            tokens: self.burst,
            last: now,
        });
        b.tokens = (b.tokens + now.saturating_duration_since(b.last).as_secs_f64() * self.rate)
            .min(self.burst);
        b.last = now;
        if b.tokens >= cost {
            b.tokens -= cost;
            Ok(())
        } else if self.rate > 0.0 {
            Err(Duration::from_secs_f64(
                ((cost - b.tokens) / self.rate).min(86_400.0),
            ))
        } else {
            Err(Duration::from_secs(86_400))
        }
    }
}

/// The slots of one class.
struct Gate {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    queue: usize,
}

impl Gate {
    async fn enter(&self, wait: Duration) -> Option<OwnedSemaphorePermit> {
        if let Ok(p) = self.slots.clone().try_acquire_owned() {
            return Some(p);
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        let r = tokio::time::timeout(wait, self.slots.clone().acquire_owned()).await;
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        r.ok().and_then(Result::ok)
    }
}

/// The live admission state of a server (shared by every request).
pub struct Admission {
    pub cfg: AdmissionConfig,
    pub buckets: Buckets,
    gates: Vec<Gate>,
}

impl Admission {
    pub fn new(cfg: AdmissionConfig) -> Admission {
        let gates = Class::ALL
            .iter()
            .map(|&c| {
                let l = cfg.limit(c);
                Gate {
                    slots: Arc::new(Semaphore::new(l.concurrent.max(1))),
                    waiting: AtomicUsize::new(0),
                    queue: l.queue,
                }
            })
            .collect();
        Admission {
            buckets: Buckets::new(cfg.rate, cfg.burst, cfg.max_clients),
            gates,
            cfg,
        }
    }
}

impl Default for Admission {
    fn default() -> Self {
        Admission::new(AdmissionConfig::default())
    }
}

/// `429` with `Retry-After` and `{code, message}`.
pub fn too_many(code: &str, message: String, retry_after: Duration) -> Response {
    let secs = retry_after.as_secs_f64().ceil().max(1.0) as u64;
    let mut r = (
        StatusCode::TOO_MANY_REQUESTS,
        Json(ApiError {
            code: code.into(),
            message,
        }),
    )
        .into_response();
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    r
}

/// The middleware: rate limit, then a slot of the request's class, held until the response
/// body ends.
pub async fn admit(State(adm): State<Arc<Admission>>, req: Request, next: Next) -> Response {
    let Some(class) = Class::of(req.method(), req.uri().path()) else {
        return next.run(req).await;
    };
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let ip = client_ip(peer, req.headers(), &adm.cfg.trusted_proxies);
    let limit = adm.cfg.limit(class);
    if let Err(wait) = adm.buckets.take(client_key(ip), limit.cost, Instant::now()) {
        return too_many(
            "rate_limited",
            format!(
                "too many requests from your address; retry in {} s",
                wait.as_secs_f64().ceil().max(1.0)
            ),
            wait,
        );
    }
    let Some(permit) = adm.gates[class.index()].enter(adm.cfg.queue_wait).await else {
        return too_many(
            "busy",
            format!(
                "the server is busy with other {} requests; retry shortly",
                class.name()
            ),
            Duration::from_secs(1),
        );
    };
    let resp = next.run(req).await;
    resp.map(move |b| {
        Body::new(b.map_frame(move |f| {
            let _held = &permit;
            f
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn ipv6_clients_share_a_bucket_per_64() {
        assert_eq!(
            client_key(ip("2001:db8:1:2:aaaa::1")),
            client_key(ip("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        );
        assert_eq!(client_key(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_ne!(
            client_key(ip("2001:db8:1:2::1")),
            client_key(ip("2001:db8:1:3::1"))
        );
        assert_eq!(client_key(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_ne!(client_key(ip("192.0.2.7")), client_key(ip("192.0.2.8")));
        // The same /64 drains one bucket.
        let b = Buckets::new(0.0, 2.0, 100);
        let now = Instant::now();
        assert!(b.take(client_key(ip("2001:db8::1")), 1.0, now).is_ok());
        assert!(b.take(client_key(ip("2001:db8::2")), 1.0, now).is_ok());
        assert!(b.take(client_key(ip("2001:db8::3")), 1.0, now).is_err());
        assert!(b.take(client_key(ip("2001:db8:0:1::3")), 1.0, now).is_ok());
    }

    #[test]
    fn buckets_refill_and_say_when() {
        let b = Buckets::new(2.0, 4.0, 100);
        let t0 = Instant::now();
        let k = ip("198.51.100.1");
        for _ in 0..4 {
            assert!(b.take(k, 1.0, t0).is_ok());
        }
        let wait = b.take(k, 1.0, t0).unwrap_err();
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-6, "{wait:?}");
        assert!(b.take(k, 1.0, t0 + Duration::from_millis(600)).is_ok());
        assert!(
            b.take(k, 5.0, t0 + Duration::from_secs(100)).is_err(),
            "never more than the burst"
        );
    }

    #[test]
    fn bucket_table_is_bounded() {
        let b = Buckets::new(1.0, 3.0, 50);
        let t0 = Instant::now();
        for i in 0..1000u32 {
            let k = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + i));
            assert!(b.take(k, 1.0, t0 + Duration::from_millis(i as u64)).is_ok());
            assert!(b.len() <= 50);
        }
        // A drained client is not forgotten while full buckets exist: it stays limited.
        let b = Buckets::new(0.001, 1.0, 3);
        let hog = ip("203.0.113.9");
        assert!(b.take(hog, 1.0, t0).is_ok());
        for i in 0..10u32 {
            let _ = b.take(
                IpAddr::V4(std::net::Ipv4Addr::from(0x0b00_0000 + i)),
                0.0,
                t0,
            );
        }
        assert!(b.take(hog, 1.0, t0).is_err());
    }

    #[test]
    fn forwarded_for_only_from_trusted_proxies() {
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            HeaderValue::from_static("192.0.2.1, 10.0.0.5"),
        );
        let proxy = Some(ip("10.0.0.1"));
        assert_eq!(
            client_ip(proxy, &h, &[]),
            ip("10.0.0.1"),
            "ignored without --trusted-proxy"
        );
        let trusted: Vec<Cidr> = vec!["10.0.0.0/8".parse().unwrap()];
        assert_eq!(
            client_ip(proxy, &h, &trusted),
            ip("192.0.2.1"),
            "right-most untrusted hop"
        );
        assert_eq!(
            client_ip(Some(ip("198.51.100.3")), &h, &trusted),
            ip("198.51.100.3"),
            "an untrusted peer cannot claim an address"
        );
        h.insert("x-forwarded-for", HeaderValue::from_static("garbage"));
        assert_eq!(client_ip(proxy, &h, &trusted), ip("10.0.0.1"));
        assert!("::ffff:10.1.2.3"
            .parse::<IpAddr>()
            .map(|a| trusted[0].contains(a))
            .unwrap());
        assert!("10.0.0.0/33".parse::<Cidr>().is_err());
        assert!("0.0.0.0/0".parse::<Cidr>().unwrap().contains(ip("8.8.8.8")));
        assert!(!"2001:db8::/32"
            .parse::<Cidr>()
            .unwrap()
            .contains(ip("2001:db9::1")));
    }

    #[test]
    fn classes_and_caps() {
        assert_eq!(Class::of(&Method::POST, "/api/cypher"), Some(Class::Cypher));
        assert_eq!(Class::of(&Method::GET, "/api/ask/stream"), Some(Class::Ask));
        assert_eq!(
            Class::of(&Method::GET, "/api/discover/Disease::DOID:1"),
            Some(Class::Discover)
        );
        assert_eq!(Class::of(&Method::HEAD, "/api/paths"), Some(Class::Paths));
        assert_eq!(Class::of(&Method::GET, "/api/graph"), None);
        assert_eq!(Class::of(&Method::GET, "/cypher"), None);
        let mut c = AdmissionConfig::default();
        c.set_cap("ask=1:0").unwrap();
        assert_eq!(
            c.limit(Class::Ask),
            Limit {
                concurrent: 1,
                queue: 0,
                cost: 5.0
            }
        );
        c.set_cap("paths=3").unwrap();
        assert_eq!(c.limit(Class::Paths).queue, 6);
        assert!(
            c.set_cap("planets=3").is_err()
                && c.set_cap("ask=0").is_err()
                && c.set_cap("ask").is_err()
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn gate_queues_briefly_then_refuses() {
        let g = Gate {
            slots: Arc::new(Semaphore::new(1)),
            waiting: AtomicUsize::new(0),
            queue: 1,
        };
        let first = g.enter(Duration::from_millis(10)).await;
        assert!(first.is_some());
        assert!(
            g.enter(Duration::from_millis(20)).await.is_none(),
            "times out in the queue"
        );
        drop(first);
        assert!(g.enter(Duration::from_millis(10)).await.is_some());
    }
}
