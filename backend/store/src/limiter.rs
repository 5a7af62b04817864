//! Sign-in back-off: exponential delays after failed logins instead of a lock-out.
//!
//! Every login attempt is checked against three keys: the e-mail, the client's network
//! (an IPv4 address, an IPv6 /64: one subscriber usually owns a whole /64) and the pair of
//! both. Each key counts failed attempts; once a key has used its free failures, the next
//! attempt must wait `base · 2^(extra failures)`, capped. A wait is answered with 429 and
//! `Retry-After`; the password is not checked during a wait, so waiting is what limits
//! guessing. When the wait is over the next attempt is checked normally: the owner's correct
//! password then succeeds (and clears the e-mail's and the pair's counters), however many
//! failures an attacker caused before. The limits are chosen so that an attacker at one
//! address is slowed by the pair and address keys (few free failures, long caps), while the
//! e-mail key, the only one an attacker elsewhere can push on the owner, allows more free
//! failures and is capped at a minute.
//!
//! Attempts in flight count as failures of the e-mail and pair keys until they finish (so a
//! burst of parallel requests gets no more password checks than the free failures); the
//! network key, shared by honest users behind one NAT, only caps how many run at once. An
//! attempt dropped before it finished (the client went away) counts as a failure. Counters are forgotten after
//! [`Policy::forget`] without failures. The table is bounded: at [`LoginLimiter::capacity`]
//! entries, forgotten ones are purged and then the least recently failed eighth is evicted.
//!
//! Time is passed in (`now: Instant`), so tests drive the clock instead of sleeping.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Back-off parameters of one kind of key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Failures allowed without any wait.
    pub free: u32,
    /// The first wait; each further failure doubles it.
    pub base: Duration,
    /// The longest wait.
    pub cap: Duration,
    /// A key with no failure for this long starts from zero again.
    pub forget: Duration,
    /// Attempts being checked count as failures until they finish (so a burst gets no more
    /// checks than the free failures). Off for the network key, which honest users share
    /// (one office behind NAT signing in at nine); it has [`Policy::max_in_flight`] instead.
    pub count_in_flight: bool,
    /// Attempts being checked at once, at most.
    pub max_in_flight: u32,
}

impl Policy {
    /// The wait after `failures` failures (zero while they are free).
    pub fn delay(&self, failures: u32) -> Duration {
        if failures < self.free {
            return Duration::ZERO;
        }
        let doublings = (failures - self.free).min(30);
        self.base.saturating_mul(1u32 << doublings).min(self.cap)
    }
}

/// The policies of the three keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub email: Policy,
    pub network: Policy,
    pub pair: Policy,
}

impl Default for Limits {
    fn default() -> Self {
        let forget = Duration::from_secs(3600);
        Limits {
            // Reachable from anywhere: generous and short, so the owner waits a minute at most.
            email: Policy {
                free: 10,
                base: Duration::from_secs(1),
                cap: Duration::from_secs(60),
                forget,
                count_in_flight: true,
                max_in_flight: 10,
            },
            // One network guessing many accounts (shared NAT: a few honest typos are free).
            network: Policy {
                free: 20,
                base: Duration::from_secs(1),
                cap: Duration::from_secs(15 * 60),
                forget,
                count_in_flight: false,
                max_in_flight: 64,
            },
            // One network guessing one account.
            pair: Policy {
                free: 3,
                base: Duration::from_secs(1),
                cap: Duration::from_secs(15 * 60),
                forget,
                count_in_flight: true,
                max_in_flight: 3,
            },
        }
    }
}

/// The key of a client address: IPv4 (and IPv4-mapped IPv6) as is, IPv6 by its /64.
pub fn network_key(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Email,
    Network,
    Pair,
}

#[derive(Clone, Debug)]
struct Entry {
    failures: u32,
    in_flight: u32,
    /// Last failure (or creation).
    last: Instant,
}

/// The back-off table (one per server).
pub struct LoginLimiter {
    limits: Limits,
    capacity: usize,
    map: Mutex<HashMap<(Kind, String), Entry>>,
}

impl Default for LoginLimiter {
    fn default() -> Self {
        LoginLimiter::new(Limits::default(), 100_000)
    }
}

/// A login attempt admitted by [`LoginLimiter::begin`]; report its result with
/// [`Attempt::succeeded`] or [`Attempt::failed`]. Dropped unreported, it counts as failed.
pub struct Attempt<'a> {
    limiter: &'a LoginLimiter,
    keys: Vec<(Kind, String)>,
    done: bool,
}

impl Attempt<'_> {
    pub fn succeeded(mut self, now: Instant) {
        self.done = true;
        self.limiter.finish(&self.keys, false, now);
    }
    pub fn failed(mut self, now: Instant) {
        self.done = true;
        self.limiter.finish(&self.keys, true, now);
    }
    /// The password was never checked (the server was busy): nothing is counted.
    pub fn abandoned(mut self) {
        self.done = true;
        self.limiter.release(&self.keys);
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.limiter.finish(&self.keys, true, Instant::now());
        }
    }
}

impl LoginLimiter {
    pub fn new(limits: Limits, capacity: usize) -> Self {
        // At least 24, so that evicting an eighth always frees the three keys of an attempt.
        LoginLimiter {
            limits,
            capacity: capacity.max(24),
            map: Mutex::new(HashMap::new()),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Entries held now (for tests and metrics).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Kind, String), Entry>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn policy(&self, k: Kind) -> Policy {
        match k {
            Kind::Email => self.limits.email,
            Kind::Network => self.limits.network,
            Kind::Pair => self.limits.pair,
        }
    }

    fn keys(email: &str, ip: Option<IpAddr>) -> Vec<(Kind, String)> {
        let email = email.trim().to_lowercase();
        let mut keys = vec![(Kind::Email, email.clone())];
        if let Some(ip) = ip {
            let net = network_key(ip);
            keys.push((Kind::Pair, format!("{email} {net}")));
            keys.push((Kind::Network, net));
        }
        keys
    }

    /// Admits an attempt, or says how long to wait (`Err(wait)`, at least one second).
    pub fn begin(
        &self,
        email: &str,
        ip: Option<IpAddr>,
        now: Instant,
    ) -> Result<Attempt<'_>, Duration> {
        let keys = Self::keys(email, ip);
        let mut map = self.lock();
        let mut wait = Duration::ZERO;
        for k in &keys {
            let p = self.policy(k.0);
            let Some(e) = map.get(k) else { continue };
            if now.saturating_duration_since(e.last) >= p.forget && e.in_flight == 0 {
                continue;
            }
            if e.in_flight >= p.max_in_flight {
                wait = wait.max(Duration::from_secs(1));
                continue;
            }
            let counted = if p.count_in_flight {
                e.failures + e.in_flight
            } else {
                e.failures
            };
            if counted < p.free {
                continue;
            }
            let mut w = (e.last + p.delay(counted)).saturating_duration_since(now);
            if w.is_zero() && p.count_in_flight && e.in_flight > 0 {
                // The free attempts are all being checked right now: wait for their results.
                w = Duration::from_secs(1);
            }
            wait = wait.max(w);
        }
        let new_keys = keys.iter().filter(|k| !map.contains_key(*k)).count();
        if wait.is_zero() && map.len() + new_keys > self.capacity {
            self.make_room(&mut map, now);
            if map.len() + new_keys > self.capacity {
                // Only attempts in flight left to evict: the table stays bounded.
                wait = Duration::from_secs(1);
            }
        }
        if !wait.is_zero() {
            // Whole seconds for Retry-After, rounded up.
            return Err(Duration::from_secs(
                wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
            ));
        }
        for k in &keys {
            let p = self.policy(k.0);
            let e = map.entry(k.clone()).or_insert(Entry {
                failures: 0,
                in_flight: 0,
                last: now,
            });
            if now.saturating_duration_since(e.last) >= p.forget && e.in_flight == 0 {
                *e = Entry {
                    failures: 0,
                    in_flight: 0,
                    last: now,
                };
            }
            e.in_flight += 1;
        }
        Ok(Attempt {
            limiter: self,
            keys,
            done: false,
        })
    }

    fn release(&self, keys: &[(Kind, String)]) {
        let mut map = self.lock();
        for k in keys {
            if let Some(e) = map.get_mut(k) {
                e.in_flight = e.in_flight.saturating_sub(1);
            }
        }
    }

    fn finish(&self, keys: &[(Kind, String)], failed: bool, now: Instant) {
        let mut map = self.lock();
        for k in keys {
            let Some(e) = map.get_mut(k) else { continue };
            e.in_flight = e.in_flight.saturating_sub(1);
            if failed {
                e.failures = e.failures.saturating_add(1);
                e.last = e.last.max(now);
            } else if k.0 != Kind::Network {
                // The owner proved the password: their own counters start over. The network
                // key stays (an attacker holding one account must not wash their address).
                e.failures = 0;
                if e.in_flight == 0 {
                    map.remove(k);
                }
            }
        }
    }

    /// Purges forgotten entries; if that frees too little, evicts the eighth with the oldest
    /// last failure (entries with attempts in flight are kept).
    fn make_room(&self, map: &mut HashMap<(Kind, String), Entry>, now: Instant) {
        map.retain(|k, e| {
            e.in_flight > 0 || now.saturating_duration_since(e.last) < self.policy(k.0).forget
        });
        if map.len() < self.capacity {
            return;
        }
        let mut lasts: Vec<Instant> = map
            .values()
            .filter(|e| e.in_flight == 0)
            .map(|e| e.last)
            .collect();
        let n = (self.capacity / 8).min(lasts.len());
        if n == 0 {
            return;
        }
        let (_, cut, _) = lasts.select_nth_unstable(n - 1);
        let cut = *cut;
        let mut removed = 0;
        map.retain(|_, e| {
            if removed < n && e.in_flight == 0 && e.last <= cut {
                removed += 1;
                false
            } else {
                true
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_and_stop_at_the_cap() {
        let p = Policy {
            free: 2,
            base: Duration::from_secs(1),
            cap: Duration::from_secs(10),
            forget: Duration::from_secs(100),
            count_in_flight: true,
            max_in_flight: 2,
        };
        let d: Vec<u64> = (0..8).map(|n| p.delay(n).as_secs()).collect();
        assert_eq!(d, [0, 0, 1, 2, 4, 8, 10, 10]);
        assert_eq!(p.delay(u32::MAX), Duration::from_secs(10));
    }

    #[test]
    fn ipv6_is_keyed_by_its_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff:1:2:3".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(network_key(a), network_key(b));
        assert_ne!(network_key(a), network_key(c));
        assert_eq!(
            network_key("::ffff:192.0.2.7".parse().unwrap()),
            "192.0.2.7"
        );
        assert_eq!(network_key("192.0.2.7".parse().unwrap()), "192.0.2.7");
    }
}
