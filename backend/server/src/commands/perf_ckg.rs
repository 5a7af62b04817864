//! `serenqa perf ckg`: the whole app on a CKG-sized synthetic graph, as one table.
//!
//! The sequence is what an operator runs: `synth` → `precompute` → `predict` → `serve`, each
//! a child process whose wall time and peak resident memory are measured (sampled from
//! `/proc/<pid>/status` every 100 ms); then, against the served graph over loopback HTTP,
//! Discover pages of diseases spread over the whole disease range (each cold — its first
//! request, so no P3 block of it is cached — then warm), schema-derived Ask questions,
//! node-local Cypher and explanation paths, with the server's resident memory after each.
//! Not in the test command: the default size needs ~13 GB of memory and ~10 minutes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use serenqa_graph::synth::{identifier, type_counts, NODE_TYPES};

use super::live_server::{agent, rss_of, spawn_server, RssWatch};
use crate::rss::human_bytes;

#[derive(Args)]
pub struct CkgArgs {
    /// Nodes of the synthetic graph (the CKG: ~15.4M).
    #[arg(long, default_value_t = 15_400_000)]
    nodes: u64,
    /// Edges of the synthetic graph (the CKG: ~200M).
    #[arg(long, default_value_t = 200_000_000)]
    edges: u64,
    /// Where the snapshot goes (kept for `--reuse`).
    #[arg(long, default_value = "target/perf-ckg")]
    work_dir: PathBuf,
    /// Keep a snapshot (with its model) from an earlier run of the same size instead of
    /// generating and precomputing it again.
    #[arg(long)]
    reuse: bool,
    /// Disease pages opened, spread evenly over the diseases; each cold, then warm.
    #[arg(long, default_value_t = 100)]
    pages: usize,
    /// Longest metapath of the plausibility model (`predict --max-len`).
    #[arg(long, default_value_t = 4)]
    max_len: usize,
}

/// One measured line of the table.
struct Row {
    what: String,
    result: String,
    memory: String,
}

/// Runs a child `serenqa` with `args`; its wall time, peak RSS, last output line and whole
/// stderr, or its last error line.
fn phase(args: &[String]) -> Result<(f64, u64, String, String)> {
    let exe = std::env::current_exe()?;
    let t = Instant::now();
    let mut child = Command::new(exe)
        .arg("--quiet")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting a child serenqa")?;
    let watch = RssWatch::start(child.id(), 0, Duration::from_millis(100));
    // Drain both pipes on threads so the child never blocks on a full one.
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(child.stdout.take().map(|o| Box::new(o) as _));
    let err = drain(child.stderr.take().map(|e| Box::new(e) as _));
    let status = child.wait()?;
    let peak = watch.stop();
    let (out, err) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    let secs = t.elapsed().as_secs_f64();
    let last = |s: &str| {
        s.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string()
    };
    if status.success() {
        Ok((secs, peak, last(&out), err))
    } else {
        bail!("{}", last(&err))
    }
}

fn quantile(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

fn spread(v: &[f64]) -> String {
    format!(
        "p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms (n = {})",
        quantile(v, 0.5),
        quantile(v, 0.99),
        quantile(v, 1.0),
        v.len()
    )
}

/// GET or POST `url`; (milliseconds, status, body).
fn call(
    a: &ureq::Agent,
    url: &str,
    body: Option<&serde_json::Value>,
) -> Result<(f64, u16, String)> {
    let t = Instant::now();
    let mut r = match body {
        Some(b) => a
            .post(url)
            .header("content-type", "application/json")
            .send(b.to_string())?,
        None => a.get(url).call()?,
    };
    let status = r.status().as_u16();
    let text = r
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_string()?;
    Ok((t.elapsed().as_secs_f64() * 1e3, status, text))
}

/// The `k`-th of `n` nodes of `label` spread evenly over its `count` nodes, as a key.
fn spread_key(label: &str, count: u64, k: usize, n: usize) -> String {
    let i = (k as u64 * count) / n.max(1) as u64;
    format!("{label}::{}", identifier(label, i))
}

fn count_of(counts: &[u64], label: &str) -> Result<u64> {
    NODE_TYPES
        .iter()
        .position(|t| t.0 == label)
        .map(|i| counts[i])
        .with_context(|| format!("the synthetic schema has no {label}"))
}

pub fn run(args: CkgArgs) -> Result<()> {
    if args.pages == 0 {
        bail!("--pages must be at least 1");
    }
    std::fs::create_dir_all(&args.work_dir)
        .with_context(|| format!("creating {}", args.work_dir.display()))?;
    let snap = args
        .work_dir
        .join(format!("ckg-{}-{}.snap", args.nodes, args.edges));
    let s = |p: &Path| p.display().to_string();
    let mut rows: Vec<Row> = Vec::new();
    let mut print = |row: Row| {
        eprintln!("{:<34} {:<70} {}", row.what, row.result, row.memory);
        rows.push(row);
    };

    let have = args.reuse && snap.is_file();
    if have {
        print(Row {
            what: "synth + precompute".into(),
            result: format!("reused {}", s(&snap)),
            memory: String::new(),
        });
    } else {
        let (secs, peak, _, _) = phase(&[
            "synth".into(),
            "--nodes".into(),
            args.nodes.to_string(),
            "--edges".into(),
            args.edges.to_string(),
            "--out".into(),
            s(&snap),
        ])?;
        let size = std::fs::metadata(&snap).map(|m| m.len()).unwrap_or(0);
        print(Row {
            what: format!("synth {} nodes / {} edges", args.nodes, args.edges),
            result: format!("{secs:.0} s, snapshot {}", human_bytes(size)),
            memory: format!("peak {}", human_bytes(peak)),
        });
        let (secs, peak, _, _) = phase(&["precompute".into(), "--graph".into(), s(&snap)])?;
        let size = std::fs::metadata(&snap).map(|m| m.len()).unwrap_or(0);
        print(Row {
            what: "precompute (marginals, FastRP)".into(),
            result: format!("{secs:.0} s, snapshot with model {}", human_bytes(size)),
            memory: format!("peak {}", human_bytes(peak)),
        });
    }
    match phase(&[
        "predict".into(),
        "--graph".into(),
        s(&snap),
        "--max-len".into(),
        args.max_len.to_string(),
    ]) {
        Ok((secs, peak, _, err)) => {
            // The run's own summary: what it built, and its held-out smoke test.
            let said: Vec<&str> = err
                .lines()
                .filter(|l| l.starts_with("top-") && l.contains("lists:") || l.contains("held-out"))
                .map(str::trim)
                .collect();
            print(Row {
                what: "predict (plausibility)".into(),
                result: format!("{secs:.0} s; {}", said.join("; ")),
                memory: format!("peak {}", human_bytes(peak)),
            });
        }
        Err(e) => print(Row {
            what: "predict (plausibility)".into(),
            result: format!("not built: {e}"),
            memory: String::new(),
        }),
    }

    let t = Instant::now();
    let serve_args: Vec<String> = [
        "--graph",
        &s(&snap),
        "--rate",
        "100000",
        "--burst",
        "1000000",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    let (server, base) = spawn_server("ckg", &serve_args)?;
    let pid = server.child.id();
    let ready = t.elapsed().as_secs_f64();
    let watch = RssWatch::start(pid, 0, Duration::from_millis(100));
    let rss_now = || rss_of(pid).map(human_bytes).unwrap_or_else(|| "n/a".into());
    print(Row {
        what: "serve: ready".into(),
        result: format!("{ready:.1} s"),
        memory: format!("RSS {}", rss_now()),
    });

    let counts = type_counts(args.nodes);
    let diseases = count_of(&counts, "Disease")?;
    let drugs = count_of(&counts, "Drug")?;
    let a = agent(Duration::from_secs(120));

    // Discover: each page cold (first request), then warm.
    let (mut cold, mut warm, mut failed) = (Vec::new(), Vec::new(), Vec::<String>::new());
    let mut by_model = 0usize;
    for k in 0..args.pages {
        let key = spread_key("Disease", diseases, k, args.pages);
        let url = format!("{base}/api/discover/{key}?limit=50");
        for times in [&mut cold, &mut warm] {
            match call(&a, &url, None) {
                Ok((ms, 200, body)) => {
                    times.push(ms);
                    by_model += usize::from(body.contains("plausibility model"));
                }
                Ok((_, st, body)) => failed.push(format!(
                    "{key}: {st} {}",
                    body.chars().take(160).collect::<String>()
                )),
                Err(e) => failed.push(format!("{key}: {e}")),
            }
        }
    }
    let fail_note = |f: &[String]| match f.first() {
        Some(first) => format!("; {} failed, first: {first}", f.len()),
        None => String::new(),
    };
    print(Row {
        what: "Discover, disease page, cold".into(),
        result: format!(
            "{}; {} of {} replies proposed by the plausibility model{}",
            spread(&cold),
            by_model,
            cold.len() + warm.len(),
            fail_note(&failed)
        ),
        memory: format!("RSS {}", rss_now()),
    });
    print(Row {
        what: "Discover, disease page, warm".into(),
        result: spread(&warm),
        memory: String::new(),
    });

    // Ask: questions in the loaded graph's own words (its type and relation names).
    let mut ask_ms = Vec::new();
    let (mut answered, mut understood) = (0, 0);
    let mut ask_fail = Vec::new();
    let asks = 10usize;
    for k in 0..asks {
        let i = (k as u64 * diseases) / asks as u64;
        let q = if k % 2 == 0 {
            format!("which proteins are associated with disease {i}")
        } else {
            format!("which drugs are indicated for disease {i}")
        };
        match call(
            &a,
            &format!("{base}/api/ask"),
            Some(&serde_json::json!({ "question": q })),
        ) {
            Ok((ms, 200, body)) => {
                ask_ms.push(ms);
                let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                let n = v["answers"].as_array().map_or(0, Vec::len);
                // Understood: a query was written and ran (a disease may have no such edge).
                if v["cypher"].is_string() && v["executable"] == true && v["error"].is_null() {
                    understood += 1;
                    answered += usize::from(n > 0);
                } else {
                    let why = v["error"].as_str().unwrap_or("no query").to_string();
                    ask_fail.push(format!("\"{q}\": {why}"));
                }
            }
            Ok((_, st, body)) => ask_fail.push(format!(
                "\"{q}\": {st} {}",
                body.chars().take(160).collect::<String>()
            )),
            Err(e) => ask_fail.push(format!("\"{q}\": {e}")),
        }
    }
    print(Row {
        what: "Ask, schema-derived questions".into(),
        result: format!(
            "{understood}/{asks} understood, {answered} with answers; {}{}",
            spread(&ask_ms),
            fail_note(&ask_fail)
        ),
        memory: format!("RSS {}", rss_now()),
    });

    // Cypher, node-local; paths between a disease and a drug.
    let mut cy = Vec::new();
    let mut cy_fail = Vec::new();
    let mut paths = Vec::new();
    let mut path_fail = Vec::new();
    for k in 0..20 {
        let id = identifier("Disease", (k as u64 * diseases) / 20);
        let query = format!(
            "MATCH (n:Disease {{id: '{id}'}})-[r]-(m) RETURN type(r) AS rel, count(m) AS c"
        );
        match call(
            &a,
            &format!("{base}/api/cypher"),
            Some(&serde_json::json!({ "query": query })),
        ) {
            Ok((ms, 200, _)) => cy.push(ms),
            Ok((_, st, body)) => cy_fail.push(format!(
                "{st} {}",
                body.chars().take(160).collect::<String>()
            )),
            Err(e) => cy_fail.push(e.to_string()),
        }
        let from = spread_key("Disease", diseases, k, 20);
        let to = spread_key("Drug", drugs, k, 20);
        match call(
            &a,
            &format!("{base}/api/paths?from={from}&to={to}&max_hops=3&limit=10"),
            None,
        ) {
            Ok((ms, 200, _)) => paths.push(ms),
            Ok((_, st, body)) => path_fail.push(format!(
                "{st} {}",
                body.chars().take(160).collect::<String>()
            )),
            Err(e) => path_fail.push(e.to_string()),
        }
    }
    print(Row {
        what: "Cypher, node-local".into(),
        result: format!("{}{}", spread(&cy), fail_note(&cy_fail)),
        memory: String::new(),
    });
    print(Row {
        what: "paths disease → drug (≤ 3 hops)".into(),
        result: format!("{}{}", spread(&paths), fail_note(&path_fail)),
        memory: format!("RSS {}", rss_now()),
    });
    let peak = watch.stop();
    print(Row {
        what: "serve: peak over the run".into(),
        result: String::new(),
        memory: format!("peak {}", human_bytes(peak)),
    });
    drop(server);

    println!("| step | result | memory |\n|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} |",
            r.what,
            r.result.replace('|', "/"),
            r.memory
        );
    }
    Ok(())
}
