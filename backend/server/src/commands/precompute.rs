//! `serenqa precompute`: marginals (Algorithm 2) and embeddings into the snapshot, so that
//! `score`, `partition` and the server find them ready.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use serenqa_model::embeddings::FastRp;
use serenqa_model::marginals::MarginalParams;
use serenqa_model::{Model, ModelConfig};

use crate::graph_source::GraphArgs;

#[derive(Args)]
pub struct PrecomputeArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// Write graph + model here instead of back into the input snapshot.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Walk edges only in their stored direction (default: both directions).
    #[arg(long)]
    directed: bool,
    /// Damping factor λ of the marginal iteration.
    #[arg(long, default_value_t = 0.85)]
    lambda: f64,
    /// L1 tolerance ε of the marginal iteration.
    #[arg(long, default_value_t = 1e-10)]
    epsilon: f64,
    /// Embedding dimension.
    #[arg(long, default_value_t = 64)]
    dim: usize,
    /// Seed of the random projection.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

pub fn run(args: PrecomputeArgs, progress: bool) -> Result<()> {
    if !(args.lambda > 0.0 && args.lambda < 1.0) {
        anyhow::bail!("--lambda must be in (0, 1)");
    }
    if args.epsilon.is_nan() || args.epsilon <= 0.0 || args.dim == 0 || args.dim > 1024 {
        anyhow::bail!("--epsilon must be positive and --dim in 1..=1024");
    }
    let (path, fresh) = crate::model_source::snapshot_path(&args.graph, progress)?;
    let g = match fresh {
        Some(g) => g,
        None => serenqa_graph::Graph::load(&path)?,
    };
    let cfg = ModelConfig {
        directed: args.directed,
        marginals: MarginalParams {
            lambda: args.lambda,
            epsilon: args.epsilon,
            ..MarginalParams::default()
        },
        embedding: FastRp {
            dim: args.dim,
            seed: args.seed,
            ..FastRp::default()
        },
    };
    let t = Instant::now();
    let model = Model::compute(&g, &cfg, progress);
    let st = &model.params.marginal_stats;
    println!(
        "marginals ({}): {} applications of P3ᵀ, residual {:.2e}{} in {:.2} s",
        match st.solver {
            serenqa_model::marginals::Solver::Power => "power iteration",
            serenqa_model::marginals::Solver::ConjugateGradient => "conjugate gradients",
            serenqa_model::marginals::Solver::ShiftedLanczos => "shifted Lanczos",
            serenqa_model::marginals::Solver::MixedLanczos => "shifted Lanczos, f32 gathers",
        },
        st.iterations,
        st.residual,
        if st.converged {
            ""
        } else {
            " (NOT converged: iteration cap reached)"
        },
        st.seconds
    );
    println!(
        "embeddings: {} d={} in {:.2} s",
        model.embeddings.info.method, model.embeddings.info.dim, model.embeddings.info.seconds
    );
    let out = args.out.unwrap_or(path);
    model
        .save_with_graph(&g, &out)
        .with_context(|| format!("writing {}", out.display()))?;
    println!(
        "wrote graph + model to {} ({:.2} s total)",
        out.display(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
