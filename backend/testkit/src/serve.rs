//! The `serenqa` binary as a child process of a test: one-shot commands ([`cli`]), a tiny
//! Hetionet snapshot ([`import_hetionet`]) and `serenqa serve` on a free loopback port
//! ([`spawn_serve`], [`Serve`]). `exe` is `env!("CARGO_BIN_EXE_serenqa")` of the caller.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running `serenqa serve`, killed when dropped (before the directory it may own is
/// removed).
pub struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    dir: Option<tempfile::TempDir>,
}

impl Served {
    /// Keeps `dir` (the server's working directory) until the server is dropped.
    pub fn with_dir(mut self, dir: tempfile::TempDir) -> Served {
        self.dir = Some(dir);
        self
    }

    /// The directory given to [`Served::with_dir`].
    pub fn dir(&self) -> &Path {
        self.dir.as_ref().expect("Served::with_dir").path()
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> &str {
        self.base.trim_start_matches("http://")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `serenqa --quiet serve --addr 127.0.0.1:0 …` in a directory, to be [`Serve::spawn`]ed.
pub struct Serve {
    cmd: Command,
}

impl Serve {
    pub fn new(exe: &str, dir: &Path) -> Serve {
        let mut cmd = Command::new(exe);
        cmd.args(["--quiet", "serve", "--addr", "127.0.0.1:0"])
            .current_dir(dir);
        Serve { cmd }
    }

    /// More arguments (`--graph g.snap`, `--dist nodist`, …).
    pub fn args(mut self, args: &[&str]) -> Serve {
        self.cmd.args(args);
        self
    }

    /// An environment variable of the server process.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Serve {
        self.cmd.env(key, value);
        self
    }

    /// Starts the server and waits for the line it prints once it listens (`… http://ADDR`).
    pub fn spawn(mut self) -> Served {
        let mut child = self
            .cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start serenqa serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("serve prints its address");
        let base = line
            .trim()
            .rsplit(' ')
            .next()
            .unwrap_or_default()
            .to_string();
        let served = Served {
            child,
            base,
            dir: None,
        };
        assert!(served.base.starts_with("http://127.0.0.1:"), "{line}");
        served
    }
}

/// `serenqa --quiet serve --addr 127.0.0.1:0 <args>` in `dir`: its base URL and a handle that
/// stops it when dropped.
pub fn spawn_serve(exe: &str, dir: &Path, args: &[&str]) -> Served {
    Serve::new(exe, dir).args(args).spawn()
}

/// Runs `serenqa <args>` in `dir`; asserts it succeeds and returns its stdout.
pub fn cli(exe: &str, dir: &Path, args: &[&str]) -> String {
    let out = Command::new(exe)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Writes `het/hetionet-nodes.tsv` and `het/hetionet-edges.sif` in `dir` and imports them
/// into the snapshot `dir/g.snap`.
pub fn import_hetionet(exe: &str, dir: &Path, nodes: &str, edges: &str) {
    let het = dir.join("het");
    std::fs::create_dir(&het).unwrap();
    std::fs::write(het.join("hetionet-nodes.tsv"), nodes).unwrap();
    std::fs::write(het.join("hetionet-edges.sif"), edges).unwrap();
    let st = Command::new(exe)
        .args(["--quiet", "import", "hetionet", "het", "--out", "g.snap"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success());
}

/// `serenqa admin --db <db> create --email admin@example.org` in `dir`: the invite token (the
/// last segment of the printed link).
pub fn admin_invite(exe: &str, dir: &Path, db: &str) -> String {
    let link = cli(
        exe,
        dir,
        &[
            "admin",
            "--db",
            db,
            "create",
            "--email",
            "admin@example.org",
        ],
    );
    link.trim().rsplit('/').next().unwrap().to_string()
}
