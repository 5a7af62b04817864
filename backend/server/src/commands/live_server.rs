//! A live `serenqa serve` child process for the perf commands that drive the server over HTTP
//! (`perf hostile`, its client-side phase, `perf ckg`): start it on a free loopback port with a
//! fresh database, sample its resident memory, and an HTTP agent that reports statuses instead
//! of failing on them.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};

/// A `serenqa serve` child process, killed (and its directory removed) when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    dir: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `serenqa serve` on a free loopback port with a fresh database in a temporary
/// directory, plus `extra` arguments; returns once it says it is serving, with its base URL.
pub(crate) fn spawn_server(tag: &str, extra: &[String]) -> Result<(Server, String)> {
    let dir = std::env::temp_dir().join(format!("serenqa-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let addr = format!("127.0.0.1:{port}");
    let exe = std::env::current_exe()?;
    let db = dir.join("hostile.sqlite");
    let mut cmd = Command::new(exe);
    // Loopback is one address: the server believes `X-Forwarded-For` from it, so each
    // simulated client (an attacker thread, the benign clinician) is a client of its own, as
    // behind a reverse proxy. The addresses are documentation ranges, only ever a header.
    cmd.args([
        "--quiet",
        "serve",
        "--addr",
        &addr,
        "--dist",
        "nodist",
        "--trusted-proxy",
        "127.0.0.1/32",
    ])
    .arg("--db")
    .arg(&db);
    cmd.args(extra);
    let log = dir.join("server.log");
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log)?)
        .spawn()
        .context("starting the server")?;
    let stdout = child.stdout.take().context("no server stdout")?;
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    if !line.contains("serving on") {
        let _ = child.kill();
        let _ = child.wait();
        let err = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        bail!(
            "the server did not start: {}",
            err.lines().last().unwrap_or(line.trim())
        );
    }
    // Keep draining its stdout so it never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while reader.read_line(&mut sink).is_ok_and(|n| n > 0) {
            sink.clear();
        }
    });
    Ok((Server { child, dir }, format!("http://{addr}")))
}

/// Resident memory of a process now (`VmRSS`), in bytes.
pub(crate) fn rss_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Samples a process's resident memory on a thread and keeps the highest value seen.
pub(crate) struct RssWatch {
    peak: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl RssWatch {
    pub(crate) fn start(pid: u32, floor: u64, every: Duration) -> RssWatch {
        let (peak, done) = (
            Arc::new(AtomicU64::new(floor)),
            Arc::new(AtomicBool::new(false)),
        );
        let thread = {
            let (peak, done) = (peak.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    if let Some(r) = rss_of(pid) {
                        peak.fetch_max(r, Ordering::Relaxed);
                    }
                    std::thread::sleep(every);
                }
            })
        };
        RssWatch { peak, done, thread }
    }

    /// Stops sampling; the peak seen.
    pub(crate) fn stop(self) -> u64 {
        self.done.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
        self.peak.load(Ordering::Relaxed)
    }
}

pub(crate) fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        // Under the server's idle keep-alive timeout (its header timeout, 10 s), as a client
        // should: a pooled connection the server has closed would fail its next request.
        .max_idle_age(Duration::from_secs(5))
        .build()
        .into()
}
