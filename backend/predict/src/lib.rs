//! Plausibility of every compound × disease pair, in the manner of Project Rephetio
//! (Himmelstein et al. 2017): metapath features, a regularised logistic regression, and an
//! honest cross-validation.
//!
//! Data flows `Graph` → [`metagraph`] (steps, metapaths) → [`dwpc`] (degree-weighted walk
//! counts by sparse products, with an [`dwpc::EdgeMask`] of edges that do not exist) →
//! [`features`] (transformed DWPC + degree prior per pair) → [`learn`] (L2 logistic regression,
//! L-BFGS on `nalgebra`) and [`gbdt`] (gradient-boosted trees, treats head only), combined by
//! [`ensemble`] → [`model`] (the full run: both heads, their calibration, every pair's scores,
//! percentiles, top metapaths) → [`store`] (cached file) → [`external`] (the stored predictions
//! checked against an indication list from outside the graph, as Rephetio was validated, with [`resample`]'s intervals over the list's diseases); [`eval`] (k-fold CV of both heads
//! with the held-out edges masked before any feature is computed; `--learners` compares the
//! learners on the same folds).
//!
//! Choices, and why:
//! - **Metapaths**: every metapath Compound → Disease of length 2–4 over the graph's own
//!   metagraph (Hetionet: 1,000-odd), with at most one treatment step (`CtD`/`CpD`, crossed
//!   disease→compound), kept when ≥ 0.1 % of all pairs have a walk of it. Rephetio used 1,206
//!   metapaths up to length 4 and also let treatment edges inside paths; the single-step limit
//!   is what makes the removal of a pair's own edge from its walks exact (see [`dwpc`]).
//! - **Walks instead of simple paths**, by sparse products from the disease side (rows =
//!   diseases, dense `|D| × |X|` blocks); repeated-node walks are counted (documented in
//!   [`dwpc`]), the pair's own treatment edge never is.
//! - **Prior**: degree features (treatment degrees without the pair's own edge, and every other
//!   metaedge degree of c and d) instead of Rephetio's permutation prior. The learner weighs
//!   them like any feature; the CtD and CpD degree terms alone reach out-of-fold AUROC 0.912
//!   and 0.930 (edge folds), which a permutation prior (≈ a smooth function of the same two
//!   degrees) would not change much; it is not built.
//! - **Learner**: L2 logistic regression (λ = 1e-3 on the mean log-loss, standardised
//!   features), negatives subsampled 20 per positive with a seed, the subsampling undone in
//!   the intercept so scores are on the scale of all pairs. L-BFGS runs until every gradient
//!   component is ≤ 1e-6 or its iteration cap; the iterations and the final gradient are
//!   reported (`serenqa predict`, `predict eval`).
//! - **Treats head = logistic regression + gradient-boosted trees.** Next to the logistic
//!   regression, the treats head fits gradient-boosted trees ([`gbdt`]: depth 3, learning rate
//!   0.1, 300 rounds, ≥ 20 rows per leaf, λ = 1, 64 quantile bins; set before the first run)
//!   on the *same* rows (positives + the same seeded negatives, the same `ln rate` offset);
//!   the served treats logit is the mean of the two logits, each standardised over all
//!   pairs, put back on the logistic logit's scale ([`ensemble::Combine::MeanZ`]), then
//!   calibrated as below (the calibration refits refit both). Why: on the same 5 masked folds
//!   (seed 0) it lifts precision@10 per disease from 0.305 to 0.330 with edges held out and
//!   from 0.182 to 0.216 with diseases held out, in every fold, and AUPRC from 0.390 to 0.444
//!   and from 0.1025 to 0.135 (`predict eval --learners`, bench/README.md: the trees alone,
//!   a deeper variant, the other combinations and weights are there too). Trees see interactions
//!   the additive logistic model cannot (a metapath counts for more when the drug's or the
//!   disease's degree is low, …); the logistic part keeps the ranking smooth in every
//!   feature. **Explanations** (`Predictions::top`, the TSV's `top_metapaths`, the API's
//!   contributions) are the *logistic part's* metapath contributions `β_j·z_j`: trees have no
//!   additive per-metapath share, so the explanation covers half of the served logit. The
//!   palliation head stays logistic (the trees were compared on treats only).
//! - **Two labels, two heads.** The treats relation (`CtD`) and the palliates relation (`CpD`)
//!   each get their own logistic regression on the *same* feature table: one feature
//!   computation, two fits. The served plausibility (`score`) is P(treats); P(palliates) is a
//!   separate output shown next to it (TSV columns appended after the required six, API
//!   field `palliates`). Why not one model of "treats or palliates", or CpD as extra
//!   positives: the two relations mean different things to a clinician (disease-modifying vs
//!   symptomatic), have different evidence (the CpD head weighs other metapaths), and mixing
//!   them would blur the treats score that the external validation and Discover rank by.
//!   Each head is a plain binary classifier of its relation (all other pairs negative), so
//!   its out-of-fold figures are directly comparable with the other's, and `predict eval`
//!   also reports each label ranked by the *other* head, which shows what a head of its own
//!   adds. The no-leakage invariant covers both: a fold masks every treatment edge (CtD and
//!   CpD) of its labelled pairs before features, and a pair's own edges of either relation
//!   are never in its walks or degrees.
//! - **Calibration** ([`calibrate`]): served probabilities map each head's logit through a
//!   monotone beta calibration (Platt scaling with separate slopes below and above z = 0)
//!   fitted on out-of-fold logits of 5 refits per head, so a score of 0.3 means roughly that
//!   30 % of pairs scored like it turned out to be held-out edges; the in-sample fit alone put
//!   the top pairs at 0.9999. The refits reuse the full feature table (recomputing it per fold
//!   would cost the whole feature time five more times) and are warm-started from the full
//!   fit (strictly convex objective: same minimiser) at a looser tolerance (1e-4): cheap, and
//!   slightly optimistic. The honest calibration on masked folds is the one `predict eval`
//!   prints, for comparison; on Hetionet the two agree closely (bench/README.md).
//!   The ranking, percentiles and metapath contributions (logit units) are unchanged by it.
//!
//! - **Contradiction features** ([`contra`], issue 35 item 3: failed is not the same as
//!   unknown): whether the graph records the compound as causing the disease — by a Disease
//!   Ontology cross-reference, by name, or by a symptom specific to the disease — joined by
//!   `serenqa_graph::safety`, the join Discover's safety flags use. The Disease Ontology files
//!   are optional: the callers pass them in ([`features::Space::with_ontology`],
//!   [`model::predict`], the CV), and `PredictionInfo::contradiction` records whether the run
//!   had them. On Hetionet the records mostly say the opposite of their name (SIDER lists a
//!   drug's indication among its side effects), and the learner weighs them as the data say;
//!   the explanation shows each fired record with its contribution. Figures: bench/README.md.
//!
//! - **Any size** ([`topk`]): past [`task::MAX_PAIRS`] the all-pairs table cannot exist (a
//!   CKG-sized graph has 35 billion pairs). The top-k model computes the same kind of features
//!   per disease by sparse walks within a work budget, fits a logistic regression on a sample
//!   of diseases and keeps the best `k` of every disease and compound; see its module docs.
//!
//! **Invariant:** no fold's features read its held-out edges of either label — they are
//! computed on the masked graph, bit-identical to a graph rebuilt without them
//! (`tests/no_leakage.rs`, `tests/second_label.rs`); a fold's trees, fitted on those features
//! and the other folds' labels only, equal the trees of the rebuilt graph and ignore the
//! held-out labels (`tests/learners.rs`).
//! Everything is deterministic: rows of a product are independent, reductions run in a fixed
//! order, and the only randomness is the seeded fold assignment and negative sample.

pub mod calibrate;
pub mod contra;
pub mod dwpc;
pub mod ensemble;
mod error;
pub mod eval;
pub mod explain;
pub mod external;
pub mod features;
pub mod folds;
pub mod gbdt;
pub mod learn;
pub mod metagraph;
pub mod metrics;
pub mod model;
pub mod resample;
pub mod store;
pub mod task;
pub mod topk;

pub use model::{predict, PredictParams, Predictions};

pub use error::PredictError;
