//! `serenqa perf annotate`: the annotation load test and crash test on loopback.
//!
//! A throwaway database gets `questions` synthetic questions (5 candidates each) and
//! `annotators` accounts; a real `serenqa serve` child process serves it on a loopback port.
//! Every annotator signs in over HTTP and submits one complete ranking per question, each
//! with its own submission id; a submission is *acknowledged* when the server answered 200.
//! Failed requests (the server is down) are retried with the same id, which the store makes
//! idempotent. With `--crash` the server is killed with SIGKILL once half the submissions are
//! acknowledged and restarted on the same port. At the end the database is read directly:
//! every acknowledged submission must be present (zero lost), every (annotator, question)
//! must hold exactly one stored submission at revision 1 (zero duplicated), and the total
//! must be annotators × questions. Latency percentiles are over acknowledged requests.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use serenqa_graph::synth::{generate, SynthSpec};
use serenqa_shared::annotate::{NewResponse, RankEntry, Role, Source, Status};
use serenqa_store::repo::{NewBatch, NewCandidate, NewQuestion};
use serenqa_store::{auth, Repo, SqliteRepo};

#[derive(Args, Clone)]
pub struct AnnotateLoadArgs {
    /// Concurrent annotators (one thread each).
    #[arg(long, default_value_t = 50)]
    pub annotators: usize,
    /// Submissions per annotator (one per question).
    #[arg(long, default_value_t = 100)]
    pub submissions: usize,
    /// Kill the server with SIGKILL halfway and restart it.
    #[arg(long)]
    pub crash: bool,
    /// Where the throwaway database and graph go (a fresh temporary directory by default).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
}

struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(dir: &Path, addr: &str) -> Result<Server> {
    let exe = std::env::current_exe()?;
    let mut child = Command::new(exe)
        .args([
            "--quiet",
            "serve",
            "--graph",
            "g.snap",
            "--db",
            "load.sqlite",
            "--addr",
            addr,
            "--dist",
            "nodist",
        ])
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting the server")?;
    let mut line = String::new();
    let stdout = child.stdout.take().context("no server stdout")?;
    BufReader::new(stdout).read_line(&mut line)?;
    if !line.contains("serving on") {
        let _ = child.kill();
        bail!("the server did not start: {line:?}");
    }
    Ok(Server { child })
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// Signs in; returns (cookie header, csrf token).
fn login(a: &ureq::Agent, base: &str, email: &str, pw: &str) -> Result<(String, String)> {
    let body = serde_json::json!({"email": email, "password": pw}).to_string();
    let mut resp = a
        .post(&format!("{base}/api/auth/login"))
        .header("Content-Type", "application/json")
        .header("X-Requested-With", "serenqa")
        .send(body.as_str())?;
    if resp.status() != 200 {
        bail!("login {email}: HTTP {}", resp.status());
    }
    let cookie = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("sq_session="))
        .and_then(|v| v.split(';').next())
        .context("no session cookie")?
        .to_string();
    let me: serde_json::Value = serde_json::from_str(&resp.body_mut().read_to_string()?)?;
    Ok((cookie, me["csrf"].as_str().unwrap_or("").to_string()))
}

pub fn run(args: AnnotateLoadArgs) -> Result<()> {
    let tmp;
    let dir = match &args.work_dir {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d.clone()
        }
        None => {
            tmp = std::env::temp_dir().join(format!("serenqa-load-{}", std::process::id()));
            std::fs::create_dir_all(&tmp)?;
            tmp.clone()
        }
    };
    let db_path = dir.join("load.sqlite");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db_path.display()));
    }
    let (na, nq) = (args.annotators.max(1), args.submissions.max(1));
    // Setup straight into the store (not part of what is measured).
    let q_ids: Vec<(i64, Vec<i64>)> = {
        let repo = SqliteRepo::open(&db_path)?;
        let questions = (0..nq)
            .map(|i| NewQuestion {
                qid: i as i64 + 1,
                text: format!("Load-test question {}", i + 1),
                category: "load".into(),
                pattern: None,
                resources: vec![],
                candidates: (0..5)
                    .map(|k| NewCandidate {
                        name: format!("C{k}"),
                        kind: "Compound".into(),
                        ident: format!("DB9{i:04}{k}"),
                        link: None,
                        llm_rank: Some(k + 1),
                    })
                    .collect(),
            })
            .collect();
        repo.import_batches(&[NewBatch {
            source: Source::Benchmark,
            key: "load".into(),
            name: "Load test".into(),
            questions,
        }])?;
        let hash = auth::hash_password("load-test-password").map_err(anyhow::Error::msg)?;
        for u in 0..na {
            repo.create_user(&format!("load{u}@example.org"), "", Role::Annotator, &hash)?;
        }
        repo.questions_of_source(Source::Benchmark)?
            .into_iter()
            .map(|q| (q.id, q.candidates.iter().map(|c| c.id).collect()))
            .collect()
    };
    generate(&SynthSpec {
        nodes: 200,
        edges: 800,
        seed: 1,
        progress: false,
    })
    .save(&dir.join("g.snap"))?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let addr = format!("127.0.0.1:{port}");
    let base = format!("http://{addr}");
    let server = Arc::new(Mutex::new(Some(start_server(&dir, &addr)?)));

    let acked: Arc<Mutex<Vec<(String, Duration)>>> =
        Arc::new(Mutex::new(Vec::with_capacity(na * nq)));
    let retries = Arc::new(AtomicUsize::new(0));
    let q_ids = Arc::new(q_ids);
    let t0 = Instant::now();
    let crash_info: Arc<Mutex<Option<(usize, Duration)>>> = Arc::new(Mutex::new(None));
    let crasher = args.crash.then(|| {
        let (acked, server, dir, addr, crash_info) = (
            acked.clone(),
            server.clone(),
            dir.clone(),
            addr.clone(),
            crash_info.clone(),
        );
        std::thread::spawn(move || -> Result<()> {
            while acked.lock().map(|a| a.len()).unwrap_or(0) < na * nq / 2 {
                std::thread::sleep(Duration::from_millis(2));
            }
            let at = acked.lock().map(|a| a.len()).unwrap_or(0);
            // SIGKILL: no shutdown code runs in the server.
            drop(server.lock().map_err(|_| anyhow::anyhow!("lock"))?.take());
            let down = Instant::now();
            let s = start_server(&dir, &addr)?;
            *server.lock().map_err(|_| anyhow::anyhow!("lock"))? = Some(s);
            *crash_info.lock().map_err(|_| anyhow::anyhow!("lock"))? = Some((at, down.elapsed()));
            Ok(())
        })
    });
    let workers: Vec<_> = (0..na)
        .map(|u| {
            let (base, acked, retries, q_ids) =
                (base.clone(), acked.clone(), retries.clone(), q_ids.clone());
            std::thread::spawn(move || -> Result<()> {
                let a = agent();
                let (cookie, csrf) = login(
                    &a,
                    &base,
                    &format!("load{u}@example.org"),
                    "load-test-password",
                )?;
                for (i, (qid, cands)) in q_ids.iter().enumerate() {
                    // A deterministic permutation per (annotator, question).
                    let ranking: Vec<RankEntry> = cands
                        .iter()
                        .enumerate()
                        .map(|(k, &c)| RankEntry {
                            candidate: c,
                            rank: Some(((k + u + i) % cands.len()) as u32 + 1),
                            unsure: false,
                        })
                        .collect();
                    let sub = format!("u{u}-q{i}");
                    let body = serde_json::to_string(&NewResponse {
                        submission_id: sub.clone(),
                        ranking,
                        confidence: Some(3),
                        comment: String::new(),
                        status: Status::Complete,
                        base_revision: 0,
                        // The load does not look at the order it was shown, so a
                        // permutation may be that order: it confirms it, as a person would.
                        confirm_shown_order: true,
                        time_ms: None,
                    })?;
                    let deadline = Instant::now() + Duration::from_secs(60);
                    loop {
                        let t = Instant::now();
                        let r = a
                            .put(&format!("{base}/api/annotate/questions/{qid}/response"))
                            .header("Content-Type", "application/json")
                            .header("Cookie", &cookie)
                            .header("X-CSRF-Token", &csrf)
                            .send(body.as_str());
                        match r {
                            Ok(resp) if resp.status() == 200 => {
                                acked
                                    .lock()
                                    .map_err(|_| anyhow::anyhow!("lock"))?
                                    .push((sub.clone(), t.elapsed()));
                                break;
                            }
                            Ok(resp) if resp.status().is_client_error() => {
                                bail!("submission {sub}: HTTP {}", resp.status())
                            }
                            _ if Instant::now() < deadline => {
                                retries.fetch_add(1, Ordering::Relaxed);
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            Ok(resp) => {
                                bail!("submission {sub}: HTTP {} after retries", resp.status())
                            }
                            Err(e) => bail!("submission {sub}: {e}"),
                        }
                    }
                }
                Ok(())
            })
        })
        .collect();
    let mut failures = Vec::new();
    for w in workers {
        match w.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(e.to_string()),
            Err(_) => failures.push("a client thread panicked".into()),
        }
    }
    if let Some(c) = crasher {
        match c.join() {
            Ok(r) => r?,
            Err(_) => bail!("the crash thread panicked"),
        }
    }
    let wall = t0.elapsed();
    // Stop the server the hard way too, then read what is on disk.
    drop(server.lock().map_err(|_| anyhow::anyhow!("lock"))?.take());
    if !failures.is_empty() {
        bail!(
            "{} client(s) failed; first: {}",
            failures.len(),
            failures[0]
        );
    }
    let acked = std::mem::take(&mut *acked.lock().map_err(|_| anyhow::anyhow!("lock"))?);
    let repo = SqliteRepo::open(&db_path)?;
    let stored: Vec<(String, i64)> = repo.submission_ids()?;
    let stored_ids: HashSet<&str> = stored.iter().map(|(s, _)| s.as_str()).collect();
    let lost = acked
        .iter()
        .filter(|(s, _)| !stored_ids.contains(s.as_str()))
        .count();
    let responses = repo.all_responses()?;
    let duplicated = responses.iter().filter(|r| r.revision != 1).count()
        + stored.len().saturating_sub(stored_ids.len());
    let expected = na * nq;
    let mut lat: Vec<Duration> = acked.iter().map(|(_, d)| *d).collect();
    lat.sort();
    let pct = |p: f64| {
        lat.get(
            ((lat.len() as f64 * p).ceil() as usize)
                .saturating_sub(1)
                .min(lat.len().saturating_sub(1)),
        )
        .copied()
        .unwrap_or_default()
    };
    println!(
        "annotate load: {na} annotators × {nq} submissions = {expected}; acknowledged {}, stored {}, lost {lost}, duplicated {duplicated}, retries {}",
        acked.len(),
        stored.len(),
        retries.load(Ordering::Relaxed)
    );
    println!(
        "latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; wall {:.2} s ({:.0} submissions/s)",
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        lat.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        wall.as_secs_f64(),
        acked.len() as f64 / wall.as_secs_f64()
    );
    if let Some((at, down)) = *crash_info.lock().map_err(|_| anyhow::anyhow!("lock"))? {
        println!("crash: server killed with SIGKILL after {at} acknowledged submissions, restarted in {:.2} s; every acknowledged submission was found after restart: {}", down.as_secs_f64(), lost == 0);
    }
    if lost > 0
        || duplicated > 0
        || stored.len() != expected
        || responses.len() != expected
        || acked.len() != expected
    {
        bail!("annotation load test FAILED: lost {lost}, duplicated {duplicated}, stored {} of {expected}", stored.len());
    }
    if args.work_dir.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}
