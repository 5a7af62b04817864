//! The accept loop of `serenqa serve`: what a connection may cost before any request reaches
//! the router.
//!
//! - **Header deadline**: a client has [`Limits::header_timeout`] to send a request's headers
//!   (hyper's HTTP/1 header read timeout, armed with a Tokio timer); a client dribbling one byte
//!   every few seconds is disconnected instead of holding the connection open.
//! - **Connections per client**: at most [`Limits::per_client`] open connections per client
//!   address (IPv6 by its /64, as the admission layer keys clients); more are closed at once.
//!   Trusted reverse proxies (`--trusted-proxy`) are exempt: all their clients share their
//!   address, and the admission layer meters those clients one by one.
//!
//! Each connection's requests carry `ConnectInfo<SocketAddr>` as `axum::serve` gives them.
//! Ctrl-C stops accepting; open connections end with the process.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tower::ServiceExt;

use crate::api::admission::Cidr;

/// What one client's connections may cost.
#[derive(Clone, Debug)]
pub struct Limits {
    pub header_timeout: Duration,
    pub per_client: usize,
    pub trusted_proxies: Vec<Cidr>,
}

/// Open connections per client key.
#[derive(Default)]
struct Open {
    by_client: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection of a client, counted until dropped.
struct Slot {
    open: Arc<Open>,
    key: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut m = match self.open.by_client.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        if let Some(n) = m.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.key);
            }
        }
    }
}

/// The key a client's connections are counted under: its address, an IPv6 one by its /64
/// (one host commonly holds a whole /64).
fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(bits.into())
            }
        },
        v4 => v4,
    }
}

impl Open {
    /// A slot for `ip`, or `None` when it already has `cap` open connections.
    fn take(self: &Arc<Self>, ip: IpAddr, cap: usize) -> Option<Slot> {
        let key = client_key(ip);
        let mut m = match self.by_client.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        let n = m.entry(key).or_insert(0);
        if *n >= cap {
            return None;
        }
        *n += 1;
        Some(Slot {
            open: self.clone(),
            key,
        })
    }
}

/// Serves `app` on `listener` until Ctrl-C.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: Limits,
) -> std::io::Result<()> {
    let open = Arc::new(Open::default());
    // HTTP/1.1, as `axum::serve` with axum's default features.
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let builder = Arc::new(builder);
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stop => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok(x) => x,
                // Out of file descriptors or a connection reset before accept: wait a little
                // rather than spin, and go on.
                Err(e) => {
                    eprintln!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let trusted = limits.trusted_proxies.iter().any(|c| c.contains(peer.ip()));
        let slot = if trusted {
            None
        } else {
            match open.take(peer.ip(), limits.per_client) {
                Some(s) => Some(s),
                // Over the cap: closed before a byte is read.
                None => continue,
            }
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let builder = builder.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let svc = app.map_request(move |mut req: hyper::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
                req
            });
            let conn = builder
                .serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc))
                .with_upgrades();
            // A client that goes away or times out ends its connection; nothing to report.
            let _ = conn.await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_counted_per_client_and_released() {
        let open = Arc::new(Open::default());
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let s1 = open.take(a, 2).unwrap();
        let s2 = open.take(a, 2).unwrap();
        assert!(
            open.take(a, 2).is_none(),
            "a third connection of one client"
        );
        assert!(open.take("10.0.0.2".parse().unwrap(), 2).is_some());
        drop(s1);
        let _s3 = open.take(a, 2).unwrap();
        drop(s2);
        // One IPv6 host's /64 is one client.
        let v6a: IpAddr = "2001:db8::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8::ffff:2".parse().unwrap();
        let _t = open.take(v6a, 1).unwrap();
        assert!(open.take(v6b, 1).is_none());
        assert!(open.take("2001:db8:0:1::1".parse().unwrap(), 1).is_some());
    }
}
