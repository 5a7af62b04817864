//! Real Redis for tests: the servers `scripts/redis.sh` started (`SERENQA_REDIS_URL`,
//! `SERENQA_REDIS_CLUSTER`), else servers this test starts itself on free loopback ports
//! (stopped on drop), else a loud SKIPPED line.
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Servers {
    children: Vec<Child>,
    dirs: Vec<tempfile::TempDir>,
}

impl Drop for Servers {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.dirs.clear();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

fn have(bin: &str) -> bool {
    Command::new(bin)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn spawn(port: u16, cluster: bool) -> Option<(Child, tempfile::TempDir)> {
    let dir = tempfile::tempdir().ok()?;
    let mut cmd = Command::new("redis-server");
    cmd.args([
        "--bind",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--save",
        "",
        "--appendonly",
        "no",
    ])
    .arg("--dir")
    .arg(dir.path());
    if cluster {
        cmd.args([
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "5000",
        ]);
    }
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some((child, dir));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// A single Redis: `(base URL without a db, keep-alive guard)`.
pub fn single() -> Option<(String, Option<Servers>)> {
    if let Ok(u) = std::env::var("SERENQA_REDIS_URL") {
        if !u.is_empty() {
            return Some((u.trim_end_matches('/').to_string(), None));
        }
    }
    if !have("redis-server") {
        serenqa_graph::datadir::missing_resource(
            "no Redis (set SERENQA_REDIS_URL or install redis-server)",
        );
        return None;
    }
    let port = free_port();
    let Some((child, dir)) = spawn(port, false) else {
        serenqa_graph::datadir::missing_resource("redis-server did not start on a loopback port");
        return None;
    };
    Some((
        format!("redis://127.0.0.1:{port}"),
        Some(Servers {
            children: vec![child],
            dirs: vec![dir],
        }),
    ))
}

/// A three-shard Redis Cluster: `(redis+cluster:// URL, keep-alive guard)`.
pub fn cluster() -> Option<(String, Option<Servers>)> {
    if let Ok(u) = std::env::var("SERENQA_REDIS_CLUSTER") {
        if !u.is_empty() {
            return Some((u, None));
        }
    }
    if !have("redis-server") || !have("redis-cli") {
        serenqa_graph::datadir::missing_resource(
            "no Redis Cluster (set SERENQA_REDIS_CLUSTER or install redis-server and redis-cli)",
        );
        return None;
    }
    let mut servers = Servers {
        children: Vec::new(),
        dirs: Vec::new(),
    };
    let mut ports = Vec::new();
    for _ in 0..3 {
        let port = free_port();
        let Some((c, d)) = spawn(port, true) else {
            serenqa_graph::datadir::missing_resource(
                "redis-server (cluster mode) did not start on a loopback port",
            );
            return None;
        };
        servers.children.push(c);
        servers.dirs.push(d);
        ports.push(port);
    }
    let hosts: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let ok = Command::new("redis-cli")
        .arg("--cluster")
        .arg("create")
        .args(&hosts)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        serenqa_graph::datadir::missing_resource(
            "could not create a Redis Cluster with redis-cli --cluster create",
        );
        return None;
    }
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        let out = Command::new("redis-cli")
            .args(["-p", &ports[0].to_string(), "cluster", "info"])
            .output();
        if out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("cluster_state:ok")) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((
        format!("redis+cluster://{}", hosts.join(",")),
        Some(servers),
    ))
}
