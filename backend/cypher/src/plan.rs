//! Stage 3: the logical plan the executor runs. Variables are resolved to row slots by
//! [`semantic`](crate::semantic); a query is a pipeline of [`Op`]s per UNION branch.
//!
//! Pattern plans are *anchored* at run time: for each pattern part the executor starts from the
//! cheapest node position — one already bound, else one with an `id`/`name` equality the store
//! can answer from its index (inline `{id: …}` or a `WHERE n.id = …` conjunct), else the
//! smallest label, else all nodes — and expands outwards along typed adjacency ranges.

use crate::ids::Dir;
use crate::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Or,
    Xor,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Regex,
    In,
    StartsWith,
    EndsWith,
    Contains,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantKind {
    All,
    Any,
    None,
    Single,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Lit(Value),
    Param(String),
    Var(usize),
    Prop(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    List(Vec<Expr>),
    Map(Vec<(String, Expr)>),
    MapProj(Box<Expr>, Vec<MapItem>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    IsNull(Box<Expr>, bool),
    HasLabels(Box<Expr>, Vec<String>),
    /// A scalar function, name lower-cased.
    Call(String, Vec<Expr>),
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        els: Option<Box<Expr>>,
    },
    ListComp {
        slot: usize,
        list: Box<Expr>,
        pred: Option<Box<Expr>>,
        proj: Option<Box<Expr>>,
    },
    Quant {
        kind: QuantKind,
        slot: usize,
        list: Box<Expr>,
        pred: Box<Expr>,
    },
    Reduce {
        acc: usize,
        init: Box<Expr>,
        slot: usize,
        list: Box<Expr>,
        expr: Box<Expr>,
    },
    /// A pattern used as a predicate: true when it has at least one match.
    Exists(Box<PatternPlan>),
    /// `EXISTS { MATCH pattern WHERE filter }` (`count: false`) or `COUNT { … }` (`true`).
    Subquery {
        count: bool,
        pattern: Box<PatternPlan>,
        filter: Option<Box<Expr>>,
    },
    /// `[pattern WHERE pred | proj]`.
    PatternComp {
        pattern: Box<PatternPlan>,
        pred: Option<Box<Expr>>,
        proj: Box<Expr>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum MapItem {
    Prop(String),
    All,
    Var(String, usize),
    Entry(String, Expr),
}

impl Expr {
    /// Calls `f` with every slot the expression reads.
    pub fn visit_slots(&self, f: &mut dyn FnMut(usize)) {
        match self {
            Expr::Lit(_) | Expr::Param(_) => {}
            Expr::Var(s) => f(*s),
            Expr::Prop(e, _)
            | Expr::Not(e)
            | Expr::Neg(e)
            | Expr::IsNull(e, _)
            | Expr::HasLabels(e, _) => e.visit_slots(f),
            Expr::Index(a, b) | Expr::Bin(_, a, b) => {
                a.visit_slots(f);
                b.visit_slots(f);
            }
            Expr::Slice(a, b, c) => {
                a.visit_slots(f);
                if let Some(b) = b {
                    b.visit_slots(f);
                }
                if let Some(c) = c {
                    c.visit_slots(f);
                }
            }
            Expr::List(xs) | Expr::Call(_, xs) => xs.iter().for_each(|x| x.visit_slots(f)),
            Expr::Map(xs) => xs.iter().for_each(|(_, x)| x.visit_slots(f)),
            Expr::MapProj(b, items) => {
                b.visit_slots(f);
                for it in items {
                    match it {
                        MapItem::Var(_, s) => f(*s),
                        MapItem::Entry(_, e) => e.visit_slots(f),
                        _ => {}
                    }
                }
            }
            Expr::Case {
                operand,
                whens,
                els,
            } => {
                if let Some(o) = operand {
                    o.visit_slots(f);
                }
                for (w, t) in whens {
                    w.visit_slots(f);
                    t.visit_slots(f);
                }
                if let Some(e) = els {
                    e.visit_slots(f);
                }
            }
            Expr::ListComp {
                list, pred, proj, ..
            } => {
                list.visit_slots(f);
                if let Some(p) = pred {
                    p.visit_slots(f);
                }
                if let Some(p) = proj {
                    p.visit_slots(f);
                }
            }
            Expr::Quant { list, pred, .. } => {
                list.visit_slots(f);
                pred.visit_slots(f);
            }
            Expr::Reduce {
                init, list, expr, ..
            } => {
                init.visit_slots(f);
                list.visit_slots(f);
                expr.visit_slots(f);
            }
            Expr::Exists(p) => p.visit_slots(f),
            Expr::Subquery {
                pattern, filter, ..
            } => {
                pattern.visit_slots(f);
                if let Some(x) = filter {
                    x.visit_slots(f);
                }
            }
            Expr::PatternComp {
                pattern,
                pred,
                proj,
            } => {
                pattern.visit_slots(f);
                if let Some(p) = pred {
                    p.visit_slots(f);
                }
                proj.visit_slots(f);
            }
        }
    }

    /// True when every slot read is below `width` (evaluable before a pattern binds more).
    pub fn only_uses_below(&self, width: usize) -> bool {
        let mut ok = true;
        self.visit_slots(&mut |s| ok &= s < width);
        ok
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodePat {
    pub slot: usize,
    pub labels: Vec<String>,
    pub props: Vec<(String, Expr)>,
    /// A parameter or other expression that must evaluate to a property map.
    pub props_expr: Option<Expr>,
    /// `key = expr` equalities from the WHERE clause: used to find anchors, not to filter.
    pub hints: Vec<(String, Expr)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RelPat {
    pub slot: usize,
    pub types: Vec<String>,
    /// Direction read left to right as written.
    pub dir: Dir,
    pub props: Vec<(String, Expr)>,
    pub props_expr: Option<Expr>,
    /// `Some((min, max))` for variable length; the slot then holds a list of relationships.
    pub range: Option<(u32, Option<u32>)>,
    /// The query names the relationship: a variable-length match then keeps the list of
    /// relationships it walked in the slot (anonymous ones skip building it).
    pub named: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PartPlan {
    pub path_slot: Option<usize>,
    pub nodes: Vec<NodePat>,
    pub rels: Vec<RelPat>,
    /// Which MATCH clause the part came from: consecutive MATCH clauses are merged into one
    /// pattern so that the planner can order all their parts, but relationship uniqueness
    /// holds only within a clause.
    pub group: usize,
    /// Slots outside the part read by its property maps: the part can only be matched once
    /// they are bound.
    pub deps: Vec<usize>,
    /// A property map reads another element of the same part: match left to right.
    pub self_dep: bool,
    /// `Some(all)` for `shortestPath` (`false`) / `allShortestPaths` (`true`): the part has
    /// one variable-length relationship, found by breadth-first search.
    pub shortest: Option<bool>,
}

impl PartPlan {
    pub fn own_slots(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .nodes
            .iter()
            .map(|n| n.slot)
            .chain(self.rels.iter().map(|r| r.slot))
            .collect();
        v.extend(self.path_slot);
        v
    }

    /// Fills `deps` and `self_dep` from the property maps.
    pub fn compute_deps(&mut self) {
        let own = self.own_slots();
        let mut deps = Vec::new();
        let mut self_dep = false;
        let mut visit = |e: &Expr| {
            e.visit_slots(&mut |s| {
                if own.contains(&s) {
                    self_dep = true;
                } else if !deps.contains(&s) {
                    deps.push(s);
                }
            });
        };
        for n in &self.nodes {
            n.props.iter().for_each(|(_, e)| visit(e));
            n.props_expr.iter().for_each(&mut visit);
        }
        for r in &self.rels {
            r.props.iter().for_each(|(_, e)| visit(e));
            r.props_expr.iter().for_each(&mut visit);
        }
        self.deps = deps;
        self.self_dep = self_dep;
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct PatternPlan {
    pub parts: Vec<PartPlan>,
    /// Slots bound before the pattern (the incoming row's width).
    pub in_width: usize,
    /// Row width once all of the pattern's variables are bound.
    pub out_width: usize,
}

impl PatternPlan {
    fn visit_slots(&self, f: &mut dyn FnMut(usize)) {
        for p in &self.parts {
            for n in &p.nodes {
                f(n.slot);
                n.props.iter().for_each(|(_, e)| e.visit_slots(f));
                if let Some(e) = &n.props_expr {
                    e.visit_slots(f);
                }
            }
            for r in &p.rels {
                f(r.slot);
                r.props.iter().for_each(|(_, e)| e.visit_slots(f));
                if let Some(e) = &r.props_expr {
                    e.visit_slots(f);
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFn {
    Count,
    CountStar,
    Sum,
    Avg,
    Min,
    Max,
    Collect,
    StDev,
    StDevP,
    PercentileCont,
    PercentileDisc,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AggSpec {
    pub func: AggFn,
    pub distinct: bool,
    pub arg: Option<Expr>,
    /// Second argument (percentiles).
    pub arg2: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SortKey {
    pub expr: Expr,
    pub descending: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    pub columns: Vec<String>,
    /// Evaluated on the input row, extended by the aggregate values when aggregating.
    pub items: Vec<Expr>,
    /// Non-empty: group by the items that contain no aggregate.
    pub aggs: Vec<AggSpec>,
    pub is_key: Vec<bool>,
    pub distinct: bool,
    /// Evaluated on `output row ++ input row (++ aggregates)`.
    pub order: Vec<SortKey>,
    pub skip: Option<Expr>,
    pub limit: Option<Expr>,
    /// WITH … WHERE: evaluated on `output row ++ input row`, after SKIP / LIMIT.
    pub filter: Option<Expr>,
    pub in_width: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Match {
        pattern: PatternPlan,
        optional: bool,
        filter: Option<Expr>,
    },
    Unwind {
        expr: Expr,
        slot: usize,
    },
    Project(Box<Projection>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    pub ops: Vec<Op>,
    pub columns: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct QueryPlan {
    pub branches: Vec<Branch>,
    /// For each UNION after the first branch: true for UNION ALL.
    pub union_all: Vec<bool>,
}
