//! JSON shapes of the HTTP API, shared by server and browser.

use serde::{Deserialize, Serialize};

pub mod runs;
pub mod shortlist;
pub mod trace;
pub use runs::{
    endpoint_host, redact_key_words, redact_urls, DatasetInfo, ExploreConfig, Manifest,
    QuestionLines, QueueInfo, RunEntry, RunQuestion, RunsReply, StatsSnapshot,
};
pub use shortlist::{
    shortlist_csv, Shortlist, ShortlistAdd, ShortlistEntity, ShortlistItem, ShortlistScores,
    SHORTLIST_MAX_ITEMS,
};
pub use trace::{
    ExplorationTrace, QuestionTrace, RetrievalTrace, TraceCall, TraceEntity, TraceFailure,
    TraceLevel, TraceMessage, TraceMetric, TraceTreeNode,
};

/// A node as the UI shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeView {
    /// Dense node index in the loaded graph (stable for one snapshot only).
    pub index: u32,
    /// Source identifier (`DB00188`).
    pub id: String,
    pub name: String,
    /// Node type as a person reads it (`Compound`, `Biological Process`).
    pub kind: String,
}

/// Count of one node or relation type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TypeCount {
    pub name: String,
    pub count: u64,
}

/// `GET /api/graph`: what graph the server holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GraphInfo {
    pub name: String,
    pub source: String,
    /// Generated data: the UI must say so.
    pub synthetic: bool,
    pub nodes: u64,
    pub edges: u64,
    pub node_types: Vec<TypeCount>,
    pub relations: Vec<TypeCount>,
    pub dropped: Vec<TypeCount>,
    /// Attribution and license lines for the data shown.
    pub attributions: Vec<Attribution>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Attribution {
    pub source: String,
    pub license: String,
    pub covers: String,
    /// Non-commercial terms apply.
    pub non_commercial: bool,
}

/// Every error the API returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiError {
    /// Stable machine-readable code (`unknown_node`, `bad_request`, …).
    pub code: String,
    pub message: String,
}

/// One step of a path, walked in the stored direction (`forward`) or against it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PathStep {
    /// Relation type name (`TREATS_CtD`).
    pub relation: String,
    /// The verb a person reads (`treats`).
    pub verb: String,
    pub forward: bool,
}

/// A path as the UI shows it: `nodes.len() == steps.len() + 1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PathView {
    pub nodes: Vec<NodeView>,
    pub steps: Vec<PathStep>,
    /// The SerenQA record string (`ID--REL--Name:Type--…--ID`).
    pub record: String,
}

/// Nodes and edges to draw; edges index into `nodes`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SubgraphView {
    pub nodes: Vec<NodeView>,
    /// (source index, target index, relation name), stored direction.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub edges: Vec<(u32, u32, String)>,
}

/// `GET /api/paths`: explanation paths and their union as a subgraph to draw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PathsReply {
    pub paths: Vec<PathView>,
    pub subgraph: SubgraphView,
}

impl SubgraphView {
    /// The union of some paths, each node and edge once.
    pub fn from_paths(paths: &[PathView]) -> SubgraphView {
        let mut sg = SubgraphView::default();
        let mut seen_edges = std::collections::BTreeSet::new();
        for p in paths {
            let idx: Vec<u32> = p
                .nodes
                .iter()
                .map(|n| match sg.nodes.iter().position(|m| m.index == n.index) {
                    Some(i) => i as u32,
                    None => {
                        sg.nodes.push(n.clone());
                        (sg.nodes.len() - 1) as u32
                    }
                })
                .collect();
            for (i, s) in p.steps.iter().enumerate() {
                let (a, b) = if s.forward {
                    (idx[i], idx[i + 1])
                } else {
                    (idx[i + 1], idx[i])
                };
                if seen_edges.insert((a, b, s.relation.clone())) {
                    sg.edges.push((a, b, s.relation.clone()));
                }
            }
        }
        sg
    }
}

/// Neighbours of a node over one relation and direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NeighbourGroup {
    pub relation: String,
    /// Readable phrase from the node's side (`treats`, `is treated by`).
    pub phrase: String,
    pub outgoing: bool,
    pub count: u64,
    /// The first neighbours in name order (capped by the server).
    pub nodes: Vec<NodeView>,
}

/// `GET /api/node/{key}`: a node, its source link and its neighbourhood by relation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeDetail {
    pub node: NodeView,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<String>>))]
    pub link: Option<(String, String)>,
    pub degree: u64,
    pub groups: Vec<NeighbourGroup>,
}

// ----- serendipity (RNS) -----

/// `GET /api/slice?ids=…`: the closed-world slice of a set of entities, for scoring in the
/// browser. `nodes[k]` describes `slice.ids[k]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SliceResponse {
    pub nodes: Vec<NodeView>,
    pub slice: crate::rns::Slice,
}

/// `POST /api/rns`: score a partition (Ae, As) server-side. Ids are `Type::identifier` keys
/// or unambiguous bare identifiers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RnsRequest {
    pub existing: Vec<String>,
    pub serendipity: Vec<String>,
    /// Default: the server's weights in force (an expert calibration, else the shipped fitted
    /// weights); the reply's `weights_source` says which.
    #[serde(default)]
    pub weights: Option<crate::rns::Weights>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RnsResponse {
    pub existing: Vec<NodeView>,
    pub serendipity: Vec<NodeView>,
    /// The weights that produced `terms` (stored with every result).
    pub weights: crate::rns::Weights,
    /// Where `weights` came from.
    #[serde(default)]
    pub weights_source: crate::rns::WeightsSource,
    pub terms: crate::rns::Terms,
}

/// RNS-guided partition of a candidate set (greedy swap, Algorithm 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PartitionRequest {
    pub candidates: Vec<String>,
    /// Default: the server's weights in force (see `RnsRequest::weights`).
    #[serde(default)]
    pub weights: Option<crate::rns::Weights>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PartitionResponse {
    pub existing: Vec<NodeView>,
    pub serendipity: Vec<NodeView>,
    pub weights: crate::rns::Weights,
    /// Where `weights` came from.
    #[serde(default)]
    pub weights_source: crate::rns::WeightsSource,
    /// Score of the starting partition and of the result.
    pub initial: crate::rns::Terms,
    pub terms: crate::rns::Terms,
    pub swaps: usize,
    pub evaluations: u64,
}

// ----- discovery (clinician view) -----

/// One serendipitous candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Candidate {
    pub node: NodeView,
    /// Probability of reaching it in a 1–3 step walk from the known answers (the proposal).
    pub proximity: f64,
    /// RNS(Ae, {candidate}) with `DiscoverResponse::weights`.
    pub terms: crate::rns::Terms,
    /// The candidate's own treatment links — for a drug its current indications, for a
    /// disease the drugs known to treat it — best-connected first, at most a few.
    #[serde(default)]
    pub known_for: Vec<NodeView>,
    /// How many such links the graph has in all.
    #[serde(default)]
    pub known_for_total: usize,
    /// The plausibility model's prediction for (query, candidate), when predictions are loaded.
    #[serde(default)]
    pub plausibility: Option<Prediction>,
    /// Pharmacologic classes of a drug candidate (`includes` edges), for filtering.
    #[serde(default)]
    pub classes: Vec<NodeView>,
    /// How the pair relates to the known treatments: same class, shared target, or a new
    /// mechanism (`crate::screen::Mechanism`), with what is shared.
    #[serde(default)]
    pub mechanism: MechanismView,
    /// The graph records the drug as causing the disease (or a condition that names it): each
    /// flag with its evidence. Empty when nothing is recorded.
    #[serde(default)]
    pub safety: Vec<SafetyFlag>,
}

/// What a candidate shares with the known treatments (`Candidate::mechanism`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MechanismView {
    pub kind: crate::screen::Mechanism,
    /// Pharmacologic classes shared with a known treatment (at most a few).
    #[serde(default)]
    pub classes: Vec<NodeView>,
    /// Specific targets (genes bound by few drugs) shared with a known treatment (at most a few).
    #[serde(default)]
    pub targets: Vec<NodeView>,
    /// The known treatments it shares them with (at most a few).
    #[serde(default)]
    pub like: Vec<NodeView>,
}

/// One safety flag: the graph says the drug causes the disease or a condition matched to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SafetyFlag {
    /// The side effect the drug is recorded as causing.
    pub side_effect: NodeView,
    /// How the side effect was matched to the disease, in words (the identifier or the name).
    pub matched: String,
    /// `identifier` (a UMLS CUI among the Disease Ontology cross-references) or `name`.
    pub by: String,
    /// The edge's source database and its license.
    pub source: String,
    pub license: String,
}

/// A known answer of a Discover page, with the relation that makes it known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KnownAnswer {
    pub node: NodeView,
    /// [`KNOWN_TREATS`] (disease-modifying) or [`KNOWN_PALLIATES`] (symptomatic), whatever
    /// the graph's own verb ("is indicated for" on a CKG is a treatment).
    pub relation: String,
}

/// [`KnownAnswer::relation`] of a treatment.
pub const KNOWN_TREATS: &str = "treats";
/// [`KnownAnswer::relation`] of a palliation.
pub const KNOWN_PALLIATES: &str = "palliates";

/// How the first screen was ordered, and why (`DiscoverResponse::screen`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScreenInfo {
    /// The rule the API's order follows (the page starts from it).
    pub rule: crate::screen::ScreenRule,
    /// The rule in one sentence.
    pub reason: String,
    /// Why these are the defaults (the cross-validation), and which weights the RNS columns use.
    #[serde(default)]
    pub details: String,
    /// How far a safety flag can be trusted on this graph (side-effect records also list
    /// indications: the share of known treatments that carry one).
    #[serde(default)]
    pub flag_note: String,
    /// Candidates with a safety flag.
    pub flagged: usize,
}

/// How strong the plausibility evidence is for the page's entity (`DiscoverResponse::evidence`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EvidenceStrength {
    /// The highest calibrated probability among the candidates.
    pub best: f64,
    /// True when even the best is weak (below `threshold`).
    pub weak: bool,
    pub threshold: f64,
    /// One sentence for the page.
    pub note: String,
}

/// `GET /api/discover/{key}`: known answers and serendipitous candidates for a disease or a
/// drug, with the slice the browser re-scores when the weights move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DiscoverResponse {
    pub query: NodeView,
    /// Type of the answers (`Compound` for a disease, `Disease` for a drug).
    pub answer_kind: String,
    /// Ae as scored: the known answers followed by the query itself (the entity the page
    /// names is always in Ae; docs/RNS.md, "What Ae holds").
    pub existing: Vec<NodeView>,
    /// True when `existing` holds known answers besides the query.
    pub existing_known: bool,
    pub candidates: Vec<Candidate>,
    /// Slice over `existing` then the candidates, in that order.
    pub slice: crate::rns::Slice,
    pub weights: crate::rns::Weights,
    /// Where `weights` came from (the defaults in force, or the request).
    #[serde(default)]
    pub weights_source: crate::rns::WeightsSource,
    /// The server's default weights and their provenance (the sliders' reset position).
    #[serde(default)]
    pub default_weights: crate::rns::WeightsInForce,
    /// How candidates were proposed, for the page to say.
    pub method: String,
    /// Every known answer with its relation (treats before palliates); never a candidate.
    #[serde(default)]
    pub known: Vec<KnownAnswer>,
    /// The known answers in words ("no disease-modifying treatment recorded; 28 symptomatic").
    #[serde(default)]
    pub known_note: String,
    /// The rule behind the candidates' order (they arrive in it).
    #[serde(default)]
    pub screen: Option<ScreenInfo>,
    /// The strength of the plausibility evidence (with predictions).
    #[serde(default)]
    pub evidence: Option<EvidenceStrength>,
    pub elapsed_ms: f64,
}

// ----- ask one question (the SerenQA pipeline for one free-text question) -----

/// `POST /api/ask`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AskRequest {
    pub question: String,
    /// A model configured on the server for every role; default: the configured roles
    /// (offline agents when none).
    #[serde(default)]
    pub model: Option<String>,
    /// Candidates returned at most (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// A serendipitous candidate found by exploration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AskCandidate {
    pub node: NodeView,
    /// R, N, S, RNS of (existing answers, {candidate}); None without a precomputed model.
    pub terms: Option<crate::rns::Terms>,
    pub paths: Vec<PathView>,
    /// As in [`Candidate`]: what the candidate is already known for (treatment links).
    #[serde(default)]
    pub known_for: Vec<NodeView>,
    #[serde(default)]
    pub known_for_total: usize,
}

/// One pipeline stage and how long it took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Stage {
    pub name: String,
    pub ms: f64,
}

/// One event of `GET /api/ask/stream` (server-sent events, JSON data): each stage as it
/// completes, then the result or an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
// One result per stream, moved straight into a channel: boxing it would save nothing.
#[allow(clippy::large_enum_variant)]
pub enum AskEvent {
    Stage(Stage),
    Result(AskResponse),
    Error(ApiError),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AskResponse {
    pub question: String,
    pub cypher: Option<String>,
    pub executable: bool,
    pub error: Option<String>,
    pub answers: Vec<NodeView>,
    pub candidates: Vec<AskCandidate>,
    pub summaries: Vec<String>,
    pub stages: Vec<Stage>,
    /// role → model name or `offline`.
    pub agents: std::collections::BTreeMap<String, String>,
    pub notes: Vec<String>,
    /// Where exploration read the edges: `memory`, or the Redis edge store's address.
    #[serde(default)]
    pub edge_source: String,
    /// The RNS weights exploration ranked candidates with, and where they came from.
    #[serde(default)]
    pub weights: crate::rns::WeightsInForce,
    /// What the offline retrieval understood of the question (empty with an LLM retriever).
    #[serde(default)]
    pub understood: Understood,
    /// True when the candidates were scored against a single known entity, where S cannot
    /// tell them apart ([`crate::rns::surprise_informative`]): their RNS leaves S out and a
    /// view shows no S.
    #[serde(default)]
    pub s_hidden: bool,
    /// A repurposing question ("what could be repurposed for ALS", "new uses for
    /// metformin"): the entity page's own first screen for the entity it names — the same
    /// candidates, order, labels and flags as `GET /api/discover/{key}` with its defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discover: Option<DiscoverResponse>,
}

/// What the question was understood to ask, in plain words, and how its names were linked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Understood {
    /// The reading that was run, in plain words ("Drugs that treat multiple sclerosis").
    pub interpretation: Option<String>,
    /// Entities the query uses, in question order.
    pub entities: Vec<LinkedEntity>,
    /// When a name was linked uncertainly: the closest alternatives (at most 3 per mention).
    pub did_you_mean: Vec<DidYouMean>,
    /// When nothing was understood: what was missing, in one sentence.
    pub not_understood: Option<String>,
    /// Words that were neither vocabulary nor names.
    pub unknown_words: Vec<String>,
    /// Questions of the kind that work (given when nothing was understood).
    pub examples: Vec<String>,
    /// A repurposing question's disease or drug: its entity page's list answers it
    /// ([`AskResponse::discover`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repurpose: Option<NodeView>,
}

/// One name of the question linked to a node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LinkedEntity {
    /// The words of the question.
    pub mention: String,
    pub node: NodeView,
    /// `exact`, `prefix`, `fuzzy` or `contains`.
    pub matched: String,
    /// Named to be left out of the answers ("… besides diabetes").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub left_out: bool,
}

/// An alternative for an uncertain link: the node and the question re-asked with its name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DidYouMean {
    pub mention: String,
    pub node: NodeView,
    pub question: String,
}

/// The offline agent's T1 (knowledge retrieval) on the project's own, independently written
/// everyday questions (`GET /api/understand/score`): the honest T1 figure for the offline
/// agent, beside the benchmark's grammar-oracle row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnderstandScore {
    /// Where the questions come from (a path in the repository).
    pub source: String,
    /// Questions scored.
    pub questions: usize,
    /// One row per pattern type (`1.1` … `4.3`), per set (`set dev`, `set held`) and `all`.
    pub rows: Vec<UnderstandRow>,
}

/// One row of [`UnderstandScore`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnderstandRow {
    pub group: String,
    pub n: usize,
    /// Mean answer F1 against the hand-written gold query.
    pub f1: f64,
    /// Share of questions whose query uses the gold relations and entities.
    pub exact: f64,
}

// ----- plausibility predictions (crate serenqa-predict) -----

/// A metapath's contribution to one prediction (coefficient × standardised feature, logit
/// units) — of the treats score's logistic part: the served score also averages in
/// gradient-boosted trees, which have no per-metapath share.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MetapathContribution {
    /// Abbreviation read from compound to disease (`CbGaD`).
    pub metapath: String,
    pub contribution: f64,
}

/// One compound–disease pair's plausibility.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Prediction {
    pub compound: NodeView,
    pub disease: NodeView,
    /// Predicted probability of a treatment relation, in [0, 1] (calibrated on out-of-fold
    /// predictions when the run was).
    pub score: f64,
    /// Percentile (0–100) of the pair among all the disease's compounds.
    pub disease_percentile: f64,
    /// Percentile (0–100) of the pair among all the compound's diseases.
    pub compound_percentile: f64,
    /// Whether the graph already has this treatment edge.
    pub known: bool,
    /// Strongest positive metapath contributions, strongest first.
    pub top_metapaths: Vec<MetapathContribution>,
    /// Whether `GET /api/predictions/explain` can show the paths behind this score: true for
    /// the all-pairs model; false for top lists (a graph too large to score every pair), whose
    /// model keeps no per-pair metapath values — a page explains such a pair by the graph's
    /// paths from the known answers instead. Older replies lack it: true.
    #[serde(default = "explained_by_default")]
    pub explained: bool,
    /// The second model's view of the pair: probability that the compound palliates (relieves
    /// symptoms of) the disease, when the graph has that relation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub palliates: Option<Palliation>,
}

fn explained_by_default() -> bool {
    true
}

/// The palliation head's score of a pair (CpD on Hetionet).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Palliation {
    /// Predicted probability of a palliation relation, in [0, 1].
    pub score: f64,
    /// Percentile (0–100) among all the disease's compounds / all the compound's diseases.
    pub disease_percentile: f64,
    pub compound_percentile: f64,
    /// Whether the graph already has this palliation edge.
    pub known: bool,
}

/// `GET /api/predictions?disease=…` or `?compound=…`: one entity's predictions, best first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PredictionsResponse {
    pub query: NodeView,
    /// Pairs of the entity in all (the reply holds at most `limit`).
    pub total: usize,
    pub predictions: Vec<Prediction>,
    /// How the scores were made, for the page to say.
    pub method: String,
}

/// One edge of an explanation path, with where the graph got it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExplainEdge {
    /// Relation name (`BINDS_CbG`) and its verb.
    pub relation: String,
    pub verb: String,
    /// Source database of this metaedge and its licence.
    pub source: String,
    pub license: String,
}

/// A path of one metapath, with its DWPC path weight (hub-heavy paths weigh little).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExplainPath {
    /// Indices into `ExplainResponse::subgraph.nodes`, compound first, disease last.
    pub nodes: Vec<u32>,
    pub edges: Vec<ExplainEdge>,
    pub weight: f64,
    /// Share of the metapath's total path weight for this pair.
    pub share: f64,
}

/// The paths of one metapath for a pair, with the metapath's contribution to the score.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MetapathGroup {
    pub metapath: String,
    /// Words for the metapath (`binds gene · associated with disease`).
    pub reading: String,
    pub contribution: f64,
    /// Paths found in all (the group shows the heaviest).
    pub paths_found: usize,
    pub truncated: bool,
    pub paths: Vec<ExplainPath>,
}

/// A contradiction feature that fired for a pair: the graph records the drug as causing the
/// disease (or a symptom specific to it), with what that did to the score and the records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContradictionGroup {
    /// The feature (`causes the disease (identifier)`, `causes the disease (name)`, `causes a
    /// defining symptom`).
    pub feature: String,
    /// Its contribution to the linear half of the logit (0 when the model does not read it).
    pub contribution: f64,
    /// Whether the model reads the feature (else the records are evidence only).
    pub fitted: bool,
    /// What the records are and what the model did with them, in plain words.
    pub text: String,
    /// The side-effect records behind it.
    pub records: Vec<SafetyFlag>,
}

/// `GET /api/predictions/explain?compound=…&disease=…`: the paths that carry a prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExplainResponse {
    pub prediction: Prediction,
    pub groups: Vec<MetapathGroup>,
    /// The contradiction features that fired for the pair (empty: the graph records the drug
    /// as causing neither the disease nor a symptom specific to it).
    #[serde(default)]
    pub contradictions: Vec<ContradictionGroup>,
    /// What the contradiction groups share, said once above them (why a record can count for a
    /// pair, or that the model does not read them).
    #[serde(default)]
    pub contradiction_note: Option<String>,
    /// Union of the shown paths (compound at 0, disease at 1), for drawing.
    pub subgraph: SubgraphView,
    /// Source and licence per edge of `subgraph.edges`, same order.
    pub edge_sources: Vec<String>,
}
