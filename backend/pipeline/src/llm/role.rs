//! The agent roles: each is played by a model named in the models file or, when none is, by
//! the offline agent. [`Role::as_str`] is the role's name in models files, manifests and
//! traces; [`Role::template`] its prompt template.

/// One agent role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// T1: question → Cypher.
    Retrieval,
    /// T3: relation types per frontier node.
    Relations,
    /// T3: nodes kept in the beam.
    Nodes,
    /// T3: level description and the continue decision.
    Continue,
    /// T2: one summary per hop level.
    Summary,
    /// T2/T3 judge (faithfulness, comprehensiveness, relevance).
    Judge,
    /// The benchmark builder's LLM ensemble (not mapped in `roles`: the models file's
    /// `ensemble` list names its models).
    Ensemble,
}

impl Role {
    /// The roles a models file maps, in manifest order.
    pub const MAPPED: [Role; 6] = [
        Role::Retrieval,
        Role::Relations,
        Role::Nodes,
        Role::Continue,
        Role::Summary,
        Role::Judge,
    ];

    /// The role's name (models file `roles` key, manifest, trace `role`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Retrieval => "retrieval",
            Role::Relations => "relations",
            Role::Nodes => "nodes",
            Role::Continue => "continue",
            Role::Summary => "summary",
            Role::Judge => "judge",
            Role::Ensemble => "ensemble",
        }
    }

    /// What the role does, in a few words (the `--models` help, `serenqa models check`).
    pub const fn summary(self) -> &'static str {
        match self {
            Role::Retrieval => "T1: writes the Cypher query for a question",
            Role::Relations => "T3: picks the relation types to follow from a node",
            Role::Nodes => "T3: picks the nodes the beam keeps",
            Role::Continue => "T3: describes a level and decides whether to go deeper",
            Role::Summary => "T2/T3: summarises each hop level",
            Role::Judge => "T2/T3: scores faithfulness, comprehensiveness, relevance",
            Role::Ensemble => "benchmark builder: scores candidate answers 0-20",
        }
    }

    /// The prompt template the role renders (`prompts/<name>.txt`); the judge has one per
    /// judgement (`judge_faithfulness`, …), named by the judgement.
    pub const fn template(self) -> &'static str {
        match self {
            Role::Retrieval => "retrieval",
            Role::Relations => "select_relations",
            Role::Nodes => "select_nodes",
            Role::Continue => "continue",
            Role::Summary => "summarize",
            Role::Judge => "judge",
            Role::Ensemble => "ensemble_score",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The roles a model can play. Every role not mapped in the models file is played by the
/// offline agent (or offline proxy judge).
pub const ROLES: &[&str] = &[
    Role::Retrieval.as_str(),
    Role::Relations.as_str(),
    Role::Nodes.as_str(),
    Role::Continue.as_str(),
    Role::Summary.as_str(),
    Role::Judge.as_str(),
];
