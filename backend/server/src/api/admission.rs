//! Admission control for the anonymous, expensive endpoints — one place for every limit.
//!
//! Which requests are gated ([`Class::of`]):
//!
//! | class | endpoints | default cap (running / waiting / per client) | tokens: at entry, per second held |
//! |---|---|---|---|
//! | `cypher` | `POST /api/cypher` | 4 / 8 / 2 | 1, 2 |
//! | `ask` | `POST /api/ask`, `GET /api/ask/stream` | 2 / 4 / 1 | 1, 5 |
//! | `discover` | `GET /api/discover/{key}` (candidates computed per request) | 8 / 16 / 4 | 1, 2 |
//! | `paths` | `GET /api/paths` | 8 / 16 / 4 | 1, 2 |
//! | `score` | `POST /api/partition`, `POST /api/rns`, `GET /api/slice`, `GET /api/runs/compare` | 8 / 16 / 4 | 1, 2 |
//!
//! A gated request first needs its entry tokens in its client's bucket (default 10 tokens per
//! second, bursts of 60), then a slot of its class. **Fair share**: one client holds at most
//! [`Limit::per_client`] of a class's slots (default half, at least one) and as many places in
//! its queue, so a client flooding a class cannot take every slot while another waits. When
//! every slot it may take is busy, a request waits in a short queue (at most
//! [`AdmissionConfig::queue_wait`], default 1 s; a full queue refuses at once); a freed slot
//! goes to the waiting client that holds the fewest slots of the class, the longest-waiting
//! first among equals ([`Gate`]). **Cost by work**: when the request ends (its response body
//! finished or dropped) its client is charged for the time it held the slot —
//! `max(entry, per_sec × seconds)` tokens in all ([`Limit::per_sec`]) — so a question that
//! kept a slot busy for 20 s costs 100 tokens and one answered in 0.1 s costs 1; the bucket may
//! go into debt down to minus one burst, and the client waits that debt off.
//! Refusals are `429 Too Many Requests` with `Retry-After` (seconds) and the API's JSON
//! `{code, message}`: code `rate_limited` (the client's bucket is empty) or `busy` (the class,
//! or the client's share of it, is at its cap). The slot is held until the response body is
//! finished or dropped, so an event stream (`/api/ask/stream`) holds its slot while it runs;
//! a reply built whole ([`super::reply::HeldReply`]) gives its slot back as soon as it is
//! built, since a slow reader of it holds memory, which `api::reply` meters, not work.
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

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use http_body_util::BodyExt;
use serenqa_shared::api::ApiError;
use tokio::sync::oneshot;

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
    /// Slots of the class one client may hold at once (and places in its queue).
    pub per_client: usize,
    /// Tokens a request needs to enter (and its least cost).
    pub cost: f64,
    /// Tokens per second the request held its slot, charged when it ends (in all
    /// `max(cost, per_sec × seconds)`).
    pub per_sec: f64,
}

impl Limit {
    /// A cap of `concurrent` slots with the default queue (twice as many) and share (half).
    pub fn new(concurrent: usize, cost: f64, per_sec: f64) -> Limit {
        Limit {
            concurrent,
            queue: 2 * concurrent,
            per_client: (concurrent / 2).max(1),
            cost,
            per_sec,
        }
    }

    /// Tokens still owed by a request that entered with `cost` and held its slot `held`.
    pub fn owed_after(&self, held: Duration) -> f64 {
        (self.per_sec * held.as_secs_f64() - self.cost).max(0.0)
    }
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
        AdmissionConfig {
            limits: [
                Limit::new(4, 1.0, 2.0),
                Limit::new(2, 1.0, 5.0),
                Limit::new(8, 1.0, 2.0),
                Limit::new(8, 1.0, 2.0),
                Limit::new(8, 1.0, 2.0),
            ],
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

    /// Applies `CLASS=N`, `CLASS=N:QUEUE` or `CLASS=N:QUEUE:PER_CLIENT` (a `serve
    /// --max-concurrent` value); the queue defaults to twice N, the share to half N (at
    /// least 1).
    pub fn set_cap(&mut self, spec: &str) -> Result<(), String> {
        let bad = || {
            format!(
                "--max-concurrent {spec:?}: expected CLASS=N[:QUEUE[:PER_CLIENT]] with CLASS one of {}",
                Class::ALL.map(Class::name).join(", ")
            )
        };
        let (name, value) = spec.split_once('=').ok_or_else(bad)?;
        let class = Class::ALL
            .into_iter()
            .find(|c| c.name() == name.trim())
            .ok_or_else(bad)?;
        let parts = value
            .split(':')
            .map(|p| p.trim().parse::<usize>().map_err(|_| bad()))
            .collect::<Result<Vec<usize>, String>>()?;
        let (n, q, share) = match parts[..] {
            [n] => (n, None, None),
            [n, q] => (n, Some(q), None),
            [n, q, share] => (n, Some(q), Some(share)),
            _ => return Err(bad()),
        };
        if n == 0 || n > 10_000 || q.is_some_and(|q| q > 100_000) {
            return Err(format!(
                "--max-concurrent {spec:?}: N must be 1–10000 and QUEUE at most 100000"
            ));
        }
        if share.is_some_and(|s| s == 0 || s > n) {
            return Err(format!("--max-concurrent {spec:?}: PER_CLIENT must be 1–N"));
        }
        let l = self.limit_mut(class);
        let fresh = Limit::new(n, l.cost, l.per_sec);
        l.concurrent = n;
        l.queue = q.unwrap_or(fresh.queue);
        l.per_client = share.unwrap_or(fresh.per_client);
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

    /// Charges `tokens` more to `key`'s bucket for work already done (a request that held its
    /// slot longer than its entry paid for). The bucket may go into debt, down to minus one
    /// burst; a forgotten bucket is not charged.
    pub fn charge(&self, key: IpAddr, tokens: f64, now: Instant) {
        if tokens <= 0.0 {
            return;
        }
        let mut map = self
            .map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(b) = map.get_mut(&key) {
            b.tokens = (b.tokens + now.saturating_duration_since(b.last).as_secs_f64() * self.rate)
                .min(self.burst);
            b.last = now;
            b.tokens = (b.tokens - tokens).max(-self.burst);
        }
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

/// Why a request got no slot.
#[derive(Debug, PartialEq, Eq)]
enum NoSlot {
    /// The class's queue, or the client's share of it, is full: refused at once.
    Full,
    /// Waited [`AdmissionConfig::queue_wait`] without a slot.
    TimedOut,
}

/// A request waiting for a slot.
struct Waiter {
    id: u64,
    key: IpAddr,
    grant: oneshot::Sender<()>,
}

#[derive(Default)]
struct GateState {
    running: usize,
    /// Slots held per client (absent: none).
    held: HashMap<IpAddr, usize>,
    /// Waiting requests, oldest first.
    waiting: VecDeque<Waiter>,
    next_id: u64,
}

impl GateState {
    fn held_by(&self, key: &IpAddr) -> usize {
        self.held.get(key).copied().unwrap_or(0)
    }
    fn waiting_of(&self, key: &IpAddr) -> usize {
        self.waiting.iter().filter(|w| w.key == *key).count()
    }
    fn add(&mut self, key: IpAddr) {
        self.running += 1;
        *self.held.entry(key).or_insert(0) += 1;
    }
    fn remove(&mut self, key: &IpAddr) {
        self.running = self.running.saturating_sub(1);
        if let Some(n) = self.held.get_mut(key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.held.remove(key);
            }
        }
    }
}

/// The slots of one class, shared fairly between clients: a client holds at most
/// `per_client` of them and has at most `per_client` requests waiting; a freed slot goes to
/// the waiting request whose client holds the fewest slots (the oldest among equals).
struct Gate {
    state: Mutex<GateState>,
    concurrent: usize,
    queue: usize,
    per_client: usize,
}

/// A slot of a [`Gate`], given back when dropped.
struct Slot {
    gate: Arc<Gate>,
    key: IpAddr,
    since: Instant,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut st = self.gate.lock();
        st.remove(&self.key);
        self.gate.hand_over(&mut st);
    }
}

/// A queued request's place, removed if the request goes away before it gets a slot (and
/// the slot given back if it was granted just then).
struct Place {
    gate: Arc<Gate>,
    id: u64,
    key: IpAddr,
    granted: Option<oneshot::Receiver<()>>,
}

impl Drop for Place {
    fn drop(&mut self) {
        let Some(mut rx) = self.granted.take() else {
            return;
        };
        let mut st = self.gate.lock();
        if let Some(i) = st.waiting.iter().position(|w| w.id == self.id) {
            st.waiting.remove(i);
        } else if rx.try_recv().is_ok() {
            // Granted after the wait ended: the slot was counted for us; give it back.
            st.remove(&self.key);
            self.gate.hand_over(&mut st);
        }
    }
}

impl Gate {
    fn new(l: Limit) -> Gate {
        Gate {
            state: Mutex::new(GateState::default()),
            concurrent: l.concurrent.max(1),
            queue: l.queue,
            per_client: l.per_client.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Gives free slots to the waiting requests that may take them, fewest held first.
    fn hand_over(&self, st: &mut GateState) {
        while st.running < self.concurrent {
            let next = st
                .waiting
                .iter()
                .enumerate()
                .filter(|(_, w)| st.held_by(&w.key) < self.per_client)
                .min_by_key(|(i, w)| (st.held_by(&w.key), *i))
                .map(|(i, _)| i);
            let Some(w) = next.and_then(|i| st.waiting.remove(i)) else {
                return;
            };
            st.add(w.key);
            if w.grant.send(()).is_err() {
                // Its request went away in the meantime.
                st.remove(&w.key);
            }
        }
    }

    /// A slot for client `key`, waiting at most `wait` for one.
    async fn enter(self: &Arc<Self>, key: IpAddr, wait: Duration) -> Result<Slot, NoSlot> {
        let slot = |gate: &Arc<Gate>| Slot {
            gate: gate.clone(),
            key,
            since: Instant::now(),
        };
        let mut place = {
            let mut st = self.lock();
            if st.running < self.concurrent && st.held_by(&key) < self.per_client {
                st.add(key);
                return Ok(slot(self));
            }
            if st.waiting.len() >= self.queue || st.waiting_of(&key) >= self.per_client {
                return Err(NoSlot::Full);
            }
            let (tx, rx) = oneshot::channel();
            let id = st.next_id;
            st.next_id += 1;
            st.waiting.push_back(Waiter { id, key, grant: tx });
            Place {
                gate: self.clone(),
                id,
                key,
                granted: Some(rx),
            }
        };
        let granted = match place.granted.as_mut() {
            Some(rx) => matches!(tokio::time::timeout(wait, rx).await, Ok(Ok(()))),
            None => false,
        };
        if granted {
            // Ours now: the place has nothing left to undo.
            place.granted = None;
            return Ok(slot(self));
        }
        // Dropping the place leaves the queue, or gives back a slot granted just now.
        drop(place);
        Err(NoSlot::TimedOut)
    }
}

/// The live admission state of a server (shared by every request).
pub struct Admission {
    pub cfg: AdmissionConfig,
    pub buckets: Buckets,
    gates: Vec<Arc<Gate>>,
}

impl Admission {
    pub fn new(cfg: AdmissionConfig) -> Admission {
        let gates = Class::ALL
            .iter()
            .map(|&c| Arc::new(Gate::new(cfg.limit(c))))
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

/// A running request's slot and its bill: the client is charged for the time the slot was
/// held when the handler has answered (before a byte of the reply is sent), and for the rest
/// when the response body ends or is dropped (an event stream's time), when the slot is
/// given back.
struct Running {
    adm: Arc<Admission>,
    key: IpAddr,
    limit: Limit,
    slot: Option<Slot>,
    /// Tokens charged so far beyond the entry.
    charged: f64,
}

impl Running {
    /// Charges what the time held so far owes beyond what was charged.
    fn bill(&mut self) {
        let Some(slot) = &self.slot else { return };
        let now = Instant::now();
        let owed = self
            .limit
            .owed_after(now.saturating_duration_since(slot.since));
        if owed > self.charged {
            self.adm.buckets.charge(self.key, owed - self.charged, now);
            self.charged = owed;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.bill();
        self.slot = None;
    }
}

/// The middleware: the client's entry tokens, then a slot of the request's class within the
/// client's share, held until the response body ends; then the bill for the time held.
pub async fn admit(State(adm): State<Arc<Admission>>, req: Request, next: Next) -> Response {
    let Some(class) = Class::of(req.method(), req.uri().path()) else {
        return next.run(req).await;
    };
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let key = client_key(client_ip(peer, req.headers(), &adm.cfg.trusted_proxies));
    let limit = adm.cfg.limit(class);
    if let Err(wait) = adm.buckets.take(key, limit.cost, Instant::now()) {
        return too_many(
            "rate_limited",
            format!(
                "too many requests from your address; retry in {} s",
                wait.as_secs_f64().ceil().max(1.0)
            ),
            wait,
        );
    }
    let slot = match adm.gates[class.index()]
        .enter(key, adm.cfg.queue_wait)
        .await
    {
        Ok(slot) => slot,
        Err(_) => {
            return too_many(
                "busy",
                format!(
                    "the server is busy with {} requests (yours or others'); retry shortly",
                    class.name()
                ),
                Duration::from_secs(1),
            )
        }
    };
    let mut running = Running {
        adm: adm.clone(),
        key,
        limit,
        slot: Some(slot),
        charged: 0.0,
    };
    let resp = next.run(req).await;
    running.bill();
    if resp.extensions().get::<super::reply::HeldReply>().is_some() {
        // Built whole: a slow reader of it holds memory (metered by `api::reply`), not a slot.
        drop(running);
        return resp;
    }
    resp.map(move |b| {
        Body::new(b.map_frame(move |f| {
            let _held = &running;
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
                per_client: 1,
                cost: 1.0,
                per_sec: 5.0,
            }
        );
        c.set_cap("paths=3").unwrap();
        assert_eq!(
            (
                c.limit(Class::Paths).queue,
                c.limit(Class::Paths).per_client
            ),
            (6, 1)
        );
        c.set_cap("cypher=6:3:4").unwrap();
        assert_eq!(
            (
                c.limit(Class::Cypher).concurrent,
                c.limit(Class::Cypher).queue,
                c.limit(Class::Cypher).per_client
            ),
            (6, 3, 4)
        );
        assert!(
            c.set_cap("planets=3").is_err()
                && c.set_cap("ask=0").is_err()
                && c.set_cap("ask").is_err()
                && c.set_cap("ask=2:4:3").is_err()
                && c.set_cap("ask=2:4:0").is_err()
                && c.set_cap("ask=2:4:1:1").is_err()
        );
        // By default no class lets one client hold every slot.
        let d = AdmissionConfig::default();
        for class in Class::ALL {
            let l = d.limit(class);
            assert!(l.per_client < l.concurrent, "{}", class.name());
        }
    }

    fn gate(concurrent: usize, queue: usize, per_client: usize) -> Arc<Gate> {
        Arc::new(Gate::new(Limit {
            concurrent,
            queue,
            per_client,
            cost: 1.0,
            per_sec: 0.0,
        }))
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn gate_queues_briefly_then_refuses() {
        let g = gate(1, 1, 1);
        let (a, b) = (ip("192.0.2.1"), ip("192.0.2.2"));
        let wait = Duration::from_millis(10);
        let first = g.enter(a, wait).await.unwrap();
        assert_eq!(
            g.enter(b, Duration::from_millis(20)).await.err(),
            Some(NoSlot::TimedOut),
            "times out in the queue"
        );
        assert_eq!(
            g.lock().waiting.len(),
            0,
            "a timed-out waiter leaves the queue"
        );
        drop(first);
        assert!(g.enter(b, wait).await.is_ok());
    }

    /// One client cannot hold every slot of a class: past its share it waits (and is refused
    /// when its place in the queue is taken), while another client walks in.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn one_client_holds_at_most_its_share() {
        let g = gate(2, 4, 1);
        let (hog, other) = (ip("198.51.100.1"), ip("198.51.100.2"));
        let wait = Duration::from_secs(1);
        let held = g.enter(hog, wait).await.unwrap();
        assert_eq!(
            g.enter(hog, wait).await.err(),
            Some(NoSlot::TimedOut),
            "the hog's second request does not get the free slot"
        );
        let mine = g.enter(other, wait).await.unwrap();
        assert_eq!(g.lock().running, 2);
        // The hog queues one request at most; a second is refused at once.
        let queued = {
            let g = g.clone();
            tokio::spawn(async move { g.enter(hog, Duration::from_secs(60)).await.is_ok() })
        };
        tokio::task::yield_now().await;
        assert_eq!(g.lock().waiting.len(), 1);
        assert_eq!(g.enter(hog, wait).await.err(), Some(NoSlot::Full));
        // When the hog's slot frees, its queued request takes it.
        drop(held);
        assert!(queued.await.unwrap());
        drop(mine);
        assert_eq!(g.lock().running, 0, "every slot given back");
        assert!(g.lock().held.is_empty());
    }

    /// A freed slot goes to the waiting client holding the fewest slots, not to the oldest
    /// waiter of a client that already holds more.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn freed_slots_go_to_the_client_holding_fewest() {
        let g = gate(2, 4, 2);
        let (hog, other) = (ip("198.51.100.1"), ip("198.51.100.2"));
        let long = Duration::from_secs(60);
        let h1 = g.enter(hog, long).await.unwrap();
        let _h2 = g.enter(hog, long).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let spawn = |key: IpAddr, name: &'static str| {
            let (g, order) = (g.clone(), order.clone());
            tokio::spawn(async move {
                let slot = g.enter(key, long).await;
                order.lock().unwrap().push(name);
                // Keep the slot until the test ends.
                tokio::time::sleep(Duration::from_secs(3600)).await;
                drop(slot);
            })
        };
        let _first = spawn(hog, "hog");
        tokio::task::yield_now().await;
        let _second = spawn(other, "other");
        tokio::task::yield_now().await;
        assert_eq!(g.lock().waiting.len(), 2);
        drop(h1);
        tokio::task::yield_now().await;
        assert_eq!(*order.lock().unwrap(), vec!["other"]);
    }

    /// A request that goes away while queued leaves no place and no slot behind.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn cancelled_waiters_leave_nothing_behind() {
        let g = gate(1, 4, 1);
        let (a, b) = (ip("192.0.2.1"), ip("192.0.2.2"));
        let held = g.enter(a, Duration::from_secs(1)).await.unwrap();
        let waiter = {
            let g = g.clone();
            tokio::spawn(async move { g.enter(b, Duration::from_secs(60)).await.is_ok() })
        };
        tokio::task::yield_now().await;
        assert_eq!(g.lock().waiting.len(), 1);
        waiter.abort();
        let _ = waiter.await;
        assert_eq!(g.lock().waiting.len(), 0);
        drop(held);
        assert_eq!(g.lock().running, 0);
        assert!(g.enter(b, Duration::from_secs(1)).await.is_ok());
    }

    #[test]
    fn work_is_charged_after_the_fact_with_bounded_debt() {
        let ask = AdmissionConfig::default().limit(Class::Ask);
        assert_eq!(
            ask.owed_after(Duration::from_millis(100)),
            0.0,
            "a quick answer costs its entry"
        );
        assert!((ask.owed_after(Duration::from_secs(20)) - 99.0).abs() < 1e-9);
        let b = Buckets::new(1.0, 10.0, 100);
        let t0 = Instant::now();
        let k = ip("198.51.100.1");
        assert!(b.take(k, 1.0, t0).is_ok());
        b.charge(k, 99.0, t0);
        // In debt down to minus one burst (-10): 11 s of refill before the next token.
        let wait = b.take(k, 1.0, t0).unwrap_err();
        assert!((wait.as_secs_f64() - 11.0).abs() < 1e-6, "{wait:?}");
        assert!(b.take(k, 1.0, t0 + Duration::from_secs(11)).is_ok());
        // Another client is not charged.
        assert!(b.take(ip("198.51.100.2"), 1.0, t0).is_ok());
        // A client with no bucket (forgotten) is not given one by a charge.
        b.charge(ip("198.51.100.3"), 5.0, t0);
        assert!(b.take(ip("198.51.100.3"), 10.0, t0).is_ok());
    }
}
