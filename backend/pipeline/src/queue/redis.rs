//! [`Redis`]: one connection (a server, `redis://…`, or a Redis Cluster,
//! `redis+cluster://…`) with typed errors ([`QueueError`]) and reconnection after a
//! connection error; [`LocalRedis`], a throwaway `redis-server` for tests and
//! `serenqa perf queue`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::{ErrorKind, FromRedisValue, RedisError};
use serenqa_edges::{RedisConn, RedisTarget};

use super::error::{QueueError, QueueResult};

/// One-line description of a Redis error, with a hint for the common cases.
fn redis_error(url: &str, e: &RedisError) -> String {
    if e.is_connection_refusal() {
        format!("{url}: connection refused — is redis-server running?")
    } else if e.is_timeout() {
        format!("{url}: timed out — is the Redis server reachable?")
    } else {
        let mut s = e.to_string().replace('\n', " ");
        let mut src = std::error::Error::source(e);
        while let Some(c) = src {
            s.push_str(": ");
            s.push_str(&c.to_string());
            src = c.source();
        }
        format!("{url}: {s}")
    }
}

/// Whether the connection is to be dropped (and remade by the next command) after `e`.
fn breaks_connection(e: &RedisError) -> bool {
    e.is_io_error() || e.is_connection_dropped() || e.is_unrecoverable_error() || e.is_timeout()
}

/// The typed error of a failed command (`script`: of a failed Lua script).
fn classify(url: &str, e: &RedisError, script: bool) -> QueueError {
    let message = redis_error(url, e);
    let code = e.code().map(str::to_string);
    if breaks_connection(e) || e.is_connection_refusal() {
        QueueError::Connect(message)
    } else if matches!(e.kind(), ErrorKind::Parse | ErrorKind::UnexpectedReturnType) {
        QueueError::Protocol(message)
    } else if script {
        QueueError::Script { message, code }
    } else {
        QueueError::Command { message, code }
    }
}

/// `redis://user:secret@host` → `redis://***@host`.
pub fn redact(url: &str) -> String {
    serenqa_edges::redis_store::redact(url)
}

/// A Redis connection (one server, `redis://…`, or a Redis Cluster, `redis+cluster://…`) that
/// reconnects on the next command after a connection error. Every key of a run shares the
/// run's hash tag, so each script runs on one shard of a cluster.
pub struct Redis {
    url: String,
    target: RedisTarget,
    conn: tokio::sync::Mutex<Option<RedisConn>>,
}

impl Redis {
    /// Connects and pings; a one-line error when the server is not there.
    pub async fn connect(url: &str) -> QueueResult<Arc<Redis>> {
        let shown = redact(url);
        let target = RedisTarget::parse(url).map_err(QueueError::Url)?;
        let r = Arc::new(Redis {
            url: shown,
            target,
            conn: tokio::sync::Mutex::new(None),
        });
        let pong: String = r.query(&redis::cmd("PING")).await?;
        if pong != "PONG" {
            return Err(QueueError::Protocol(format!(
                "{}: unexpected reply to PING: {pong:?}",
                r.url
            )));
        }
        Ok(r)
    }

    /// The URL without credentials.
    pub fn url(&self) -> &str {
        &self.url
    }

    async fn conn(&self) -> QueueResult<RedisConn> {
        let mut g = self.conn.lock().await;
        if let Some(c) = g.as_ref() {
            return Ok(c.clone());
        }
        let c = RedisConn::connect(&self.target)
            .await
            .map_err(|e| QueueError::Connect(e.to_string()))?;
        *g = Some(c.clone());
        Ok(c)
    }

    async fn failed(&self, e: RedisError, script: bool) -> QueueError {
        if breaks_connection(&e) {
            *self.conn.lock().await = None;
        }
        classify(&self.url, &e, script)
    }

    /// Runs one command.
    pub async fn query<T: FromRedisValue>(&self, cmd: &redis::Cmd) -> QueueResult<T> {
        let mut c = self.conn().await?;
        match c.query::<T>(cmd).await {
            Ok(v) => Ok(v),
            Err(e) => Err(self.failed(e, false).await),
        }
    }

    /// Runs a Lua script (EVALSHA, loading it on NOSCRIPT).
    pub async fn script<T: FromRedisValue>(
        &self,
        script: &redis::Script,
        keys: &[String],
        args: &[String],
    ) -> QueueResult<T> {
        let mut c = self.conn().await?;
        let mut inv = script.prepare_invoke();
        for k in keys {
            inv.key(k);
        }
        for a in args {
            inv.arg(a);
        }
        match c.invoke::<T>(&inv).await {
            Ok(v) => Ok(v),
            Err(e) => Err(self.failed(e, true).await),
        }
    }
}

/// A throwaway `redis-server` on a free loopback port, without persistence, killed on drop.
/// For tests and `serenqa perf queue` only.
pub struct LocalRedis {
    child: std::process::Child,
    pub url: String,
}

impl LocalRedis {
    pub fn start() -> QueueResult<LocalRedis> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| QueueError::LocalServer(format!("finding a free port: {e}")))?
            .port();
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(std::env::temp_dir())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| QueueError::LocalServer(format!("starting redis-server: {e}")))?;
        let mut r = LocalRedis {
            child,
            url: format!("redis://127.0.0.1:{port}"),
        };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if ping(port) {
                return Ok(r);
            }
            if let Ok(Some(status)) = r.child.try_wait() {
                return Err(QueueError::LocalServer(format!(
                    "redis-server exited at start ({status})"
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(QueueError::LocalServer(
            "redis-server did not answer PING within 10 s".into(),
        ))
    }
}

fn ping(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let mut buf = [0u8; 16];
    s.write_all(b"PING\r\n").is_ok()
        && s.read(&mut buf)
            .is_ok_and(|n| buf[..n].starts_with(b"+PONG"))
}

impl Drop for LocalRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_passwords() {
        assert_eq!(
            redact("redis://:s3cret@host:6379/2"),
            "redis://***@host:6379/2"
        );
        assert_eq!(redact("redis://user:pw@host"), "redis://***@host");
        assert_eq!(redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
