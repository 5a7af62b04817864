//! The `serenqa` binary end to end: import → stats, synth, errors as one line, data fetch
//! against a loopback HTTP server (no outside network).
#![allow(clippy::unwrap_used)] // tests may panic on a broken fixture

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

fn serenqa(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serenqa"))
        .args(args)
        .current_dir(cwd)
        .env("SERENQA_CACHE", cwd.join("cache"))
        .env_remove("SERENQA_DATA")
        .output()
        .expect("run serenqa")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const NODES: &str = "id\tname\tkind\nCompound::DB1\tdrug one\tCompound\nDisease::D1\tdisease one\tDisease\nGene::1\tG1\tGene\n";
const EDGES: &str =
    "source\tmetaedge\ttarget\nCompound::DB1\tCtD\tDisease::D1\nCompound::DB1\tCbG\tGene::1\n";

#[test]
fn import_then_stats() {
    let dir = tempfile::tempdir().unwrap();
    let het = dir.path().join("het");
    std::fs::create_dir(&het).unwrap();
    std::fs::write(het.join("hetionet-nodes.tsv"), NODES).unwrap();
    std::fs::write(het.join("hetionet-edges.sif"), EDGES).unwrap();
    let o = serenqa(
        &["--quiet", "import", "hetionet", "het", "--out", "g.snap"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("imported 3 nodes, 2 edges"),
        "{}",
        stdout(&o)
    );
    let o = serenqa(&["--quiet", "stats", "--graph", "g.snap"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("3 nodes, 2 edges"), "{out}");
    assert!(
        out.contains("TREATS_CtD") && out.contains("BINDS_CbG"),
        "{out}"
    );
    let o = serenqa(
        &["--quiet", "stats", "--graph", "g.snap", "--json"],
        dir.path(),
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("stats --json is JSON");
    assert_eq!(v["nodes"], 3);
}

#[test]
fn synth_graph_is_labelled_synthetic() {
    let dir = tempfile::tempdir().unwrap();
    let o = serenqa(
        &[
            "--quiet", "synth", "--nodes", "5000", "--edges", "20000", "--out", "s.snap",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = serenqa(&["--quiet", "stats", "--graph", "s.snap"], dir.path());
    let out = stdout(&o);
    assert!(
        out.contains("SYNTHETIC") && out.contains("5000 nodes, 20000 edges"),
        "{out}"
    );
}

#[test]
fn errors_are_one_line_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.snap"), b"garbage").unwrap();
    for args in [
        &["stats", "--graph", "missing.snap"][..],
        &["stats", "--graph", "bad.snap"][..],
        &["import", "hetionet", "nowhere", "--out", "x.snap"][..],
    ] {
        let o = serenqa(args, dir.path());
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn no_data_anywhere_says_where_to_put_it() {
    let dir = tempfile::tempdir().unwrap();
    // Two levels down, so `../shared/data` cannot resolve to anything real.
    let cwd = dir.path().join("a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    let o = serenqa(&["--quiet", "stats"], &cwd);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("no hetionet data found") && err.contains("SERENQA_DATA"),
        "{err}"
    );
}

/// Serves the three Hetionet files from loopback, like the release mirror would.
fn serve_files(
    files: Vec<(&'static str, Vec<u8>)>,
    requests: usize,
) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut stream = stream.unwrap();
            let mut line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            reader.read_line(&mut line).unwrap();
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h == "\r\n" || h.is_empty() {
                    break;
                }
            }
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            match files.iter().find(|(p, _)| path.ends_with(p)) {
                Some((_, body)) => {
                    write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    )
                    .unwrap();
                    stream.write_all(body).unwrap();
                }
                None => write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
                .unwrap(),
            }
        }
    });
    (port, h)
}

#[test]
fn data_fetch_downloads_from_a_mirror_and_the_files_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(EDGES.as_bytes()).unwrap();
    let files = vec![
        ("hetionet-v1.0-nodes.tsv", NODES.as_bytes().to_vec()),
        ("hetionet-v1.0-edges.sif.gz", gz.finish().unwrap()),
        ("hetionet-v1.0-metagraph.json", br#"{"metaedge_tuples":[["Compound","Disease","treats","both"],["Compound","Gene","binds","both"]],"kind_to_abbrev":{"Compound":"C","Disease":"D","Gene":"G","treats":"t","binds":"b"}}"#.to_vec()),
    ];
    let (port, h) = serve_files(files, 3);
    let o = serenqa(
        &[
            "--quiet",
            "data",
            "fetch",
            "--dest",
            "data",
            "--base-url",
            &format!("http://127.0.0.1:{port}"),
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    h.join().unwrap();
    assert!(dir
        .path()
        .join("data/hetionet/hetionet-edges.sif.gz")
        .is_file());
    // ./data is the second place data is looked for.
    let o = serenqa(&["--quiet", "stats"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("3 nodes, 2 edges"), "{}", stdout(&o));
}

#[test]
fn data_fetch_offline_says_where_to_put_files() {
    let dir = tempfile::tempdir().unwrap();
    // A port nobody listens on: the download fails at once, as on an offline machine.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = serenqa(
        &[
            "--quiet",
            "data",
            "fetch",
            "--dest",
            "data",
            "--base-url",
            &format!("http://127.0.0.1:{port}"),
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("could not download") && err.contains("copy the Hetionet v1.0 files"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
