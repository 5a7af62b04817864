//! `serenqa data`: where data is looked for, and downloading the official Hetionet files.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serenqa_graph::datadir;

/// The official Hetionet v1.0 release files: (path under the base URL, local name).
const HETIONET_FILES: &[(&str, &str)] = &[
    ("hetnet/tsv/hetionet-v1.0-nodes.tsv", "hetionet-nodes.tsv"),
    (
        "hetnet/tsv/hetionet-v1.0-edges.sif.gz",
        "hetionet-edges.sif.gz",
    ),
    ("hetnet/json/hetionet-v1.0-metagraph.json", "metagraph.json"),
];
const HETIONET_BASE: &str = "https://github.com/hetio/hetionet/raw/main";

#[derive(Args)]
pub struct DataArgs {
    #[command(subcommand)]
    cmd: DataCmd,
}

#[derive(Subcommand)]
enum DataCmd {
    /// Show the data directories searched and what was found.
    Where,
    /// Download the official Hetionet v1.0 files into `<data>/hetionet/`.
    Fetch {
        /// Directory to write into (default: $SERENQA_DATA, else ./data).
        #[arg(long)]
        dest: Option<PathBuf>,
        /// Mirror to download from (default: the Hetionet repository).
        #[arg(long, default_value = HETIONET_BASE)]
        base_url: String,
    },
}

pub fn run(args: DataArgs, progress: bool) -> Result<()> {
    match args.cmd {
        DataCmd::Where => {
            for d in datadir::candidates() {
                let state = if d.join("hetionet").is_dir() {
                    "has hetionet/"
                } else if d.is_dir() {
                    "exists"
                } else {
                    "missing"
                };
                println!("{:<40} {state}", d.display());
            }
            match datadir::find_dataset("hetionet") {
                Some(d) => println!("using Hetionet from {}", d.display()),
                None => println!("{}", datadir::where_to_put("hetionet")),
            }
            println!("snapshot cache: {}", datadir::cache_dir().display());
            Ok(())
        }
        DataCmd::Fetch { dest, base_url } => {
            let root = dest
                .or_else(|| {
                    std::env::var_os("SERENQA_DATA")
                        .filter(|d| !d.is_empty())
                        .map(PathBuf::from)
                })
                .unwrap_or_else(|| PathBuf::from("data"));
            fetch_hetionet(&root.join("hetionet"), &base_url, progress)
        }
    }
}

pub fn fetch_hetionet(dir: &Path, base_url: &str, progress: bool) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (remote, local) in HETIONET_FILES {
        let url = format!("{}/{remote}", base_url.trim_end_matches('/'));
        let target = dir.join(local);
        download(&url, &target, progress).map_err(|e| {
            anyhow::anyhow!(
                "could not download {url}: {e:#}. If this machine is offline, copy the Hetionet v1.0 files (nodes TSV, edges SIF, metagraph.json) into {} under the names {}",
                dir.display(),
                HETIONET_FILES.iter().map(|f| f.1).collect::<Vec<_>>().join(", ")
            )
        })?;
        println!("downloaded {}", target.display());
    }
    Ok(())
}

fn download(url: &str, target: &Path, progress: bool) -> Result<()> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(600)))
        .build()
        .into();
    let mut resp = agent.get(url).call()?;
    let len = resp
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let bar = serenqa_graph::progress::bytes_bar(len, "download", progress);
    let tmp = target.with_extension("part");
    let mut out = std::fs::File::create(&tmp)?;
    let mut reader = resp.body_mut().as_reader();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        std::io::Write::write_all(&mut out, &buf[..n])?;
        bar.inc(n as u64);
    }
    bar.finish_and_clear();
    std::fs::rename(&tmp, target)?;
    Ok(())
}
