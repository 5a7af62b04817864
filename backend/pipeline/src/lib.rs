//! serenqa-pipeline: the SerenQA evaluation pipeline (paper §5, §6, Appendices B, D, E) —
//! knowledge retrieval (T1), subgraph reasoning (T2) and serendipity exploration (T3) with
//! any OpenAI-compatible LLM per role, or with offline agents that need no model.
//!
//! # Code map
//! - [`llm`] — the [`llm::ChatModel`] trait (one chat completion → reply or typed error) and
//!   its OpenAI-compatible impl [`llm::LlmClient`]: retries with backoff (429/5xx/timeouts),
//!   per-model concurrency limit (default 64), on-disk response cache, token/latency
//!   accounting; the models file ([`llm::ModelsFile`]), the roles ([`llm::Role`]) and the
//!   role → model map ([`llm::Roles`]).
//! - [`agents`] — the agent traits [`agents::Retriever`], [`agents::Explorer`],
//!   [`agents::Summarizer`], [`agents::Judge`], each with an offline and an LLM impl; the
//!   set playing a run or an Ask ([`agents::Agents`]) is chosen once from the roles.
//! - [`prompts`] — template files (`prompts/*.txt`, compiled in) for every role, rendered
//!   with checked `{{placeholders}}`; their hash goes into every run manifest.
//! - [`bench`] — loads a benchmark directory (issue 5's output) against the graph:
//!   records, partitions, removed edges as masks (G = Gc − R as a view).
//! - [`retrieval`] — T1: NL → Cypher (the offline [`retrieval::OfflineRetriever`]; the LLM
//!   one is in [`agents`]),
//!   execution with `serenqa-cypher`, answer extraction, Hit / F1 / Executability.
//! - [`explore`] — T3 (edges through `serenqa_edges::EdgeSource`: memory or Redis): Algorithm 3 (beam width 30, depth 3, m relations and k nodes per
//!   frontier node, edge confidence or the documented graph score at hubs, uniform sampling
//!   without scores, continue decision, level descriptions as context, summaries per level,
//!   one-shot guidance).
//! - [`reasoning`] — T2: judging through an [`agents::Judge`] (LLM `Score: N` or offline
//!   proxy) and SerenCov; T3 Relevance.
//! - [`offline`] — the no-LLM agents: grammar retrieval, statistics/RNS explorer, template
//!   summariser, code-based proxy judges (labelled `proxy` everywhere).
//! - [`metrics`] — Hit, F1, Executability, SerenCov, TypeMatch, SerenHit, `Score: N` parsing.
//! - [`report`] — aggregate tables in the Table 2 / Table 3 layouts (JSON, CSV, Markdown).
//! - [`run`] — `serenqa eval`: a run's plan (run id, directory, work items, what is done,
//!   manifest), the local executor and the end of a run (aggregates, manifest `complete`).
//! - [`items`] — one work item (T1 of a question, T2+T3 of a question × partition × mode),
//!   the shared per-run inputs ([`items::Ctx`], G = Gc − R per partition) and the executor
//!   both the local run and the queue workers call ([`items::run_item`]).
//! - [`failures`] — failed work items (a model call failed: connection, timeout, HTTP,
//!   malformed reply): kept out of the traces and the tables, listed in `failed.jsonl`,
//!   retried by a resume; call statistics summed over a run's invocations.
//! - [`trace`] — the trace records ([`trace::T1Record`], [`trace::T3Record`]), appending and
//!   reading the JSONL files, and one question of a run as a reviewer reads it
//!   (`serenqa_shared::api::QuestionTrace`): names from the served graph, predicted vs gold
//!   with hits marked, every metric with its scale and meaning, the beam's paths as a tree.
//! - [`runs_dir`] — the runs directory: the manifest, listing runs, a run's questions, one
//!   question's lines or view (for the web app); [`runs_dir::check_run_id`] is the only
//!   run-id validation.
//! - [`ask`] — one free-text question end to end (`serenqa ask`, `POST /api/ask`, and
//!   `GET /api/ask/stream`, which sends each stage as it completes).
//! - [`queue`] — distributed runs over Redis Streams: the coordinator (`serenqa eval
//!   --queue`) publishes a run spec and one stream entry per work item; workers (`serenqa
//!   worker`) run the items with [`items::run_item`] and store each result once (`HSETNX`);
//!   reclaim of dead workers' entries, keepalive of slow ones, poison tasks; workers build
//!   model clients from their own models file only (the spec carries model names and a
//!   hash); key layout and invariants in the module docs.
//!
//! # Runs directory (`$SERENQA_RUNS`, default `./runs`) — read by the web app's leaderboard
//! One subdirectory per run, named by the run id (`<label>-<hash>`; the hash covers the
//! benchmark, models, tasks, partitions, exploration settings and prompts, so rerunning the
//! same command resumes the same run):
//! - `manifest.json` — [`runs_dir::Manifest`]: `format` = `serenqa-run`, `run_id`, `label`
//!   (models of the roles joined by `+`, or `offline`), `status` (`running` / `complete` /
//!   `incomplete`: some items failed, see `failed`),
//!   `created_unix`, `updated_unix`, `dataset` {dir, hash, graph_hash, questions},
//!   `models_file`, `models` (no keys), `roles` (role → model or `offline`), `prompts_hash`,
//!   `code_version`, `tasks`, `partitions`, `split`, `limit`, `explore` (beam settings),
//!   `seeds`, `items` (work items per task), `llm` (calls, cache hits, errors, retries,
//!   tokens, mean latency, max in flight; summed over every invocation of the run), `failed`
//!   and `failed_by_kind` (items without a result because a model call failed), `seconds`,
//!   `notes`.
//! - `failed.jsonl` — one [`failures::FailedItem`] per failed attempt at an item: `key`,
//!   `qid`, the cell (`group`, or `partition` and `mode`), `error_kind` (`connect`,
//!   `timeout`, `http`, `malformed`), `error`, `role`, `failed_calls`, `calls`, `unix`. A
//!   failed item has no trace line; rerunning `serenqa eval` retries exactly these items.
//! - `t1.jsonl` — one [`trace::T1Record`] per question: `key` (`t1:<qid>`), `qid`, `pattern`,
//!   `group`, `question`, `agent`, `gold`, `cypher`, `executable`, `error`, `answers`, `rows`,
//!   `hit`, `f1`, `call` (prompt, reply, error, latency, cache, issues).
//! - `t3.jsonl` — one [`trace::T3Record`] per (question, partition, mode): `key`
//!   (`t3:<qid>:<partition>:<with|without>`), `roots`, `gold`, `gold_paths`, `levels` (chosen
//!   relations per frontier node, candidates, selected ids, description, continue decision),
//!   `paths`, `leaves`, `leaf_types`, `summaries`, `t2` {faithfulness, comprehensiveness
//!   (each {score, judge, unparsable}), seren_cov}, `t3` {relevance, type_match, seren_hit},
//!   `calls`, `error`.
//! - `aggregate.json` — [`report::Aggregate`] (= `serenqa_shared::results::Aggregate`, the
//!   type the web app's leaderboard deserialises): `label`, `judge` (`proxy` or a model),
//!   `table2` (group → {hit, f1, exe (all %), n}; groups `one_hop`, `two_hop`, `multi_hop`,
//!   `intersection`, `all`), `table3_reasoning` (partition → {faithfulness,
//!   comprehensiveness, seren_cov, n}), `table3_exploration` and
//!   `table3_exploration_wo_summary` (partition → {relevance, type_match, seren_hit, n}),
//!   `partitions` (`llm` = LLM Ensemble, `expert` = Expert Crowdsourced, `sscore` = RNS Guided),
//!   `retrieval` (the T1 agent; `offline` = the grammar oracle), `ensemble` (who scored the
//!   benchmark's `llm` partition: `llm` or `offline proxy`); every cell has `n` and `ci`
//!   (metric → 95% exact interval over questions, [`report::Series`]) and, when
//!   some of its items failed, `failed` (left out of the means and of `n`).
//! - `aggregate.csv` (the tidy long format of `serenqa_shared::tidy`: one line per run ×
//!   table × row × column × metric with value, interval, n and failed items; proxy judge
//!   metrics named `…_proxy`) and `aggregate.md` (the printed tables: value [interval], n, "–" for n = 0).
//! - Two runs are compared by [`compare`] (`serenqa compare A B`, `GET /api/runs/compare`).
//!
//! The server exposes them as `GET /api/runs` (every run: id, manifest, aggregate),
//! `GET /api/runs/{id}/questions` (qid, pattern, question) and
//! `GET /api/runs/{id}/questions/{qid}` (`{run_id, qid, t1: [...], t3: [...]}`).
//!
//! # How good the offline agents are
//! Offline retrieval ([`retrieval::OfflineRetriever`], behind the [`agents::Retriever`]
//! trait that Ask and T1 call) tries two stages. The grammar shares the benchmark generator's
//! vocabulary (relation phrases, type nouns) and parses its sentence shapes, so on generated
//! questions it is a grammar oracle (T1 F1 ≈ 100%), labelled so on the leaderboard. Questions
//! it cannot answer go to [`offline::understand`]: a lexicon data file
//! (`lexicon/hetionet.tsv`) written from the metaedges and everyday clinical words, entity
//! linking with prefix and fuzzy matching, and one-hop / chain / intersection readings; it
//! reports its interpretation, the linked entities and "did you mean" alternatives. Its own
//! hand-written evaluation set (`eval/understand.jsonl`, not from the generator) is scored
//! by `serenqa bench understand`. The explorer and summariser are honest baselines; the
//! judges are proxies.
//!
//! # Choices
//! - T1 runs on Gc against the standard KGQA answers Ac; T2/T3 run per partition on
//!   G = Gc − R with Ae as roots and As as gold.
//! - Exploration starts from all of Ae in one beam; predicted serendipity set = leaves of Π.
//! - SerenCov, Faithfulness, Comprehensiveness and Relevance average over *rational
//!   samples* only (questions with a ground-truth path; the count is shown: T2's `n`, T3's
//!   `n_rational`); TypeMatch and SerenHit over every explored question.
//! - A continue decision of NO stops the walk before its level is summarised (Algorithm 3);
//!   the offline agent's "no" at the last level is the depth limit and that level is summarised.
//! - D.3: neighbour scores are min-max normalised per relation before the top k per frontier
//!   node; a frontier node with no scored edge (Hetionet has no edge confidences) keeps a
//!   seeded uniform sample. The Adamic–Adar graph score for unscored edges is opt-in
//!   (`ExploreConfig::graph_score`, `serenqa eval --graph-score`).
//! - Bad model output is recorded in the trace (`issues`, `error`) and scored as the paper
//!   does: no Cypher / failing Cypher → non-executable, Hit = F1 = 0; hallucinated ids are
//!   dropped; a judge reply without `Score: N` scores 1. A failed model call (connection
//!   refused, timeout, HTTP error after retries, malformed reply) is not an answer: its item
//!   is recorded as failed ([`failures`]), never scored, and the run ends `incomplete`
//!   (`serenqa eval` exits non-zero) until a rerun retries it. The run goes on.

pub mod agents;
pub mod ask;
pub mod bench;
pub mod compare;
pub mod ensemble;
pub mod explore;
pub mod failures;
pub mod items;
pub mod llm;
pub mod metrics;
pub mod offline;
pub mod prompts;
pub mod queue;
pub mod reasoning;
pub mod report;
pub mod retrieval;
pub mod run;
pub mod runs_dir;
pub mod trace;
