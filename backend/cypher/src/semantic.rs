//! Stage 2: checks the syntax tree and lowers it to the [`plan`](crate::plan).
//!
//! Rejects writing clauses ("read-only: CREATE is not supported"), resolves every variable to a
//! row slot (unknown variable → `UndefinedVariable`), checks that a variable keeps one kind
//! (node, relationship, path) across patterns, places aggregates (not in WHERE, not nested),
//! requires aliases where Cypher does, and folds literals (integer overflow is caught here).

use open_cypher::ast::{self as A, ExprKind as E};

use crate::error::{CypherError, ErrorKind, Result};
use crate::ids::Dir;
use crate::plan::*;
use crate::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Node,
    Rel,
    RelList,
    Path,
    /// Certainly not a graph element (a literal, list, map, arithmetic…).
    Value,
    Any,
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    kind: Kind,
}

/// The variables visible at one point, in slot order. Hidden names (anonymous pattern
/// elements, comprehension variables out of scope) start with a space.
#[derive(Clone, Debug, Default)]
struct Scope {
    vars: Vec<Var>,
}

impl Scope {
    fn find(&self, name: &str) -> Option<usize> {
        self.vars.iter().rposition(|v| v.name == name)
    }
    fn push(&mut self, name: &str, kind: Kind) -> usize {
        self.vars.push(Var {
            name: name.to_string(),
            kind,
        });
        self.vars.len() - 1
    }
    fn len(&self) -> usize {
        self.vars.len()
    }
    fn visible(&self) -> Vec<(String, usize)> {
        let mut v: Vec<(String, usize)> = Vec::new();
        for (i, var) in self.vars.iter().enumerate() {
            if var.name.starts_with(' ') {
                continue;
            }
            if let Some(e) = v.iter_mut().find(|(n, _)| *n == var.name) {
                e.1 = i;
            } else {
                v.push((var.name.clone(), i));
            }
        }
        v
    }
}

/// A pattern element's properties: `{k: v}` entries, or an expression giving a map.
type PropSpec = (Vec<(String, Expr)>, Option<Expr>);

/// Where aggregates may appear while lowering an expression.
struct AggCtx<'a> {
    aggs: &'a mut Vec<AggSpec>,
    base: usize,
}

pub struct Lowerer<'q> {
    src: &'q str,
    anon: usize,
}

fn sem(code: &'static str, msg: impl Into<String>) -> CypherError {
    CypherError::semantic(code, msg)
}

pub fn is_aggregate(name: &str) -> Option<AggFn> {
    Some(match name {
        "count" => AggFn::Count,
        "sum" => AggFn::Sum,
        "avg" => AggFn::Avg,
        "min" => AggFn::Min,
        "max" => AggFn::Max,
        "collect" => AggFn::Collect,
        "stdev" => AggFn::StDev,
        "stdevp" => AggFn::StDevP,
        "percentilecont" => AggFn::PercentileCont,
        "percentiledisc" => AggFn::PercentileDisc,
        _ => return None,
    })
}

fn fn_name(q: &A::QualifiedName) -> String {
    q.parts
        .iter()
        .map(|p| p.kind.text.to_lowercase())
        .collect::<Vec<_>>()
        .join(".")
}

/// Lowers a parsed program to a plan.
pub fn lower(src: &str, program: &A::Program) -> Result<QueryPlan> {
    let stmt = match program.statements.as_slice() {
        [s] => s,
        [] => {
            return Err(CypherError::new(
                ErrorKind::Syntax { line: 1, col: 1 },
                "empty query",
            ))
        }
        _ => return Err(CypherError::unsupported("more than one statement")),
    };
    let A::StatementKind::Query(q) = &stmt.kind else {
        return Err(CypherError::new(
            ErrorKind::Syntax { line: 1, col: 1 },
            "not a query",
        ));
    };
    if q.mode.is_some() {
        return Err(CypherError::unsupported("EXPLAIN / PROFILE"));
    }
    let A::QueryKind::Regular(reg) = &q.query.kind else {
        return Err(CypherError::new(
            ErrorKind::Syntax { line: 1, col: 1 },
            "not a query",
        ));
    };
    let mut l = Lowerer { src, anon: 0 };
    // Read-only check over every branch first, so a write is reported as such even when
    // something else in the query is also wrong.
    for sq in std::iter::once(&reg.head).chain(reg.unions.iter().map(|u| &u.query)) {
        for c in &sq.kind.clauses {
            check_read_only(c)?;
        }
    }
    let mut branches = vec![l.single(&reg.head)?];
    let mut union_all = Vec::new();
    for u in &reg.unions {
        let all = matches!(u.operator.kind, A::UnionOperator::All);
        if !union_all.is_empty() && union_all[0] != all {
            return Err(sem(
                "InvalidClauseComposition",
                "cannot mix UNION and UNION ALL",
            ));
        }
        union_all.push(all);
        let b = l.single(&u.query)?;
        if b.columns != branches[0].columns {
            return Err(sem(
                "DifferentColumnsInUnion",
                "all sub queries in a UNION must have the same return column names",
            ));
        }
        branches.push(b);
    }
    Ok(QueryPlan {
        branches,
        union_all,
    })
}

fn check_read_only(c: &A::Clause) -> Result<()> {
    let name = match &c.kind {
        A::ClauseKind::Create(_) => "CREATE",
        A::ClauseKind::Insert(_) => "INSERT",
        A::ClauseKind::Merge(_) => "MERGE",
        A::ClauseKind::Delete(_) => "DELETE",
        A::ClauseKind::Set(_) => "SET",
        A::ClauseKind::Remove(_) => "REMOVE",
        A::ClauseKind::Foreach(_) => "FOREACH",
        A::ClauseKind::LoadCsv(_) => "LOAD CSV",
        _ => return Ok(()),
    };
    Err(CypherError::read_only(name))
}

impl<'q> Lowerer<'q> {
    fn text(&self, span: open_cypher::Span) -> &'q str {
        span.text(self.src).unwrap_or("").trim()
    }

    fn hidden(&mut self, what: &str) -> String {
        self.anon += 1;
        format!(" {what}{}", self.anon)
    }

    fn single(&mut self, sq: &A::SingleQuery) -> Result<Branch> {
        let mut scope = Scope::default();
        let mut ops = Vec::new();
        let clauses = &sq.kind.clauses;
        let mut columns = None;
        for (i, c) in clauses.iter().enumerate() {
            let last = i + 1 == clauses.len();
            match &c.kind {
                A::ClauseKind::Match(m) => {
                    let op = self.match_clause(m, &mut scope)?;
                    // MATCH after MATCH (neither optional) is one pattern with the filters
                    // and-ed: lets the executor start from the most selective part of either.
                    match (ops.last_mut(), op) {
                        (
                            Some(Op::Match {
                                pattern: prev,
                                optional: false,
                                filter: prev_filter,
                            }),
                            Op::Match {
                                pattern,
                                optional: false,
                                filter,
                            },
                        ) => {
                            let group = prev.parts.iter().map(|p| p.group).max().unwrap_or(0) + 1;
                            for mut part in pattern.parts {
                                part.group = group;
                                prev.parts.push(part);
                            }
                            prev.out_width = pattern.out_width;
                            *prev_filter = match (prev_filter.take(), filter) {
                                (Some(a), Some(b)) => {
                                    Some(Expr::Bin(BinOp::And, Box::new(a), Box::new(b)))
                                }
                                (a, b) => a.or(b),
                            };
                            let f = prev_filter.clone();
                            if let Some(f) = f {
                                for part in &mut prev.parts {
                                    for n in &mut part.nodes {
                                        n.hints.clear();
                                    }
                                }
                                add_hints(&f, prev);
                            }
                        }
                        (_, op) => ops.push(op),
                    }
                }
                A::ClauseKind::Unwind(u) => {
                    let expr = self.expr(&u.expression, &scope, None)?;
                    let name = &u.variable.kind.text;
                    if scope.visible().iter().any(|(n, _)| n == name) {
                        return Err(sem(
                            "VariableAlreadyBound",
                            format!("variable `{name}` already declared"),
                        ));
                    }
                    let slot = scope.push(name, Kind::Any);
                    ops.push(Op::Unwind { expr, slot });
                }
                A::ClauseKind::With(w) => {
                    let (p, new_scope) =
                        self.projection(&w.projection, &scope, w.where_clause.as_ref(), false)?;
                    ops.push(Op::Project(Box::new(p)));
                    scope = new_scope;
                }
                A::ClauseKind::Return(r) => {
                    if !last {
                        return Err(sem(
                            "InvalidClauseComposition",
                            "RETURN must be the last clause",
                        ));
                    }
                    let (p, _) = self.projection(&r.projection, &scope, None, true)?;
                    columns = Some(p.columns.clone());
                    ops.push(Op::Project(Box::new(p)));
                }
                A::ClauseKind::Call(_) => {
                    return Err(CypherError::unsupported("CALL (procedures and subqueries)"))
                }
                A::ClauseKind::Error(_) => {
                    return Err(CypherError::new(
                        ErrorKind::Syntax { line: 1, col: 1 },
                        "invalid clause",
                    ))
                }
                _ => {
                    check_read_only(c)?;
                    return Err(CypherError::unsupported(format!(
                        "clause `{}`",
                        first_word(self.text(c.span))
                    )));
                }
            }
        }
        let columns =
            columns.ok_or_else(|| sem("InvalidClauseComposition", "query must end with RETURN"))?;
        Ok(Branch { ops, columns })
    }

    fn match_clause(&mut self, m: &A::MatchClause, scope: &mut Scope) -> Result<Op> {
        if m.mode.is_some() {
            return Err(CypherError::unsupported("path modes in MATCH"));
        }
        let mut extra_filters = Vec::new();
        let pattern = self.pattern(&m.pattern, scope, &mut extra_filters, true)?;
        let mut filter = match &m.where_clause {
            Some(w) => Some(self.expr(w, scope, None)?),
            None => None,
        };
        for f in extra_filters {
            filter = Some(match filter {
                Some(x) => Expr::Bin(BinOp::And, Box::new(f), Box::new(x)),
                None => f,
            });
        }
        let mut pattern = pattern;
        if let Some(f) = &filter {
            add_hints(f, &mut pattern);
        }
        Ok(Op::Match {
            pattern,
            optional: m.optional,
            filter,
        })
    }

    /// Lowers a pattern, adding its new variables to `scope`. Inline WHERE clauses of nodes
    /// and relationships go to `filters`.
    fn pattern(
        &mut self,
        p: &A::Pattern,
        scope: &mut Scope,
        filters: &mut Vec<Expr>,
        in_match: bool,
    ) -> Result<PatternPlan> {
        let in_width = scope.len();
        let mut parts = Vec::new();
        // Relationship variables bound in this pattern (a relationship cannot appear twice).
        let mut rels_here: Vec<String> = Vec::new();
        for part in &p.parts {
            if part.kind.selector.is_some() {
                return Err(CypherError::unsupported("path selectors (SHORTEST, ANY…)"));
            }
            let mut nodes = Vec::new();
            let mut rels = Vec::new();
            let mut factors = part.kind.path.kind.factors.as_slice();
            // shortestPath((a)-[…]-(b)) / allShortestPaths(…): one relationship, searched
            // breadth-first.
            let mut shortest = None;
            if let [f] = factors {
                if let A::PathFactorKind::LegacyShortest { all, pattern } = &f.kind {
                    shortest = Some(*all);
                    factors = pattern.kind.factors.as_slice();
                }
            }
            for (i, f) in factors.iter().enumerate() {
                let want_node = i % 2 == 0;
                match (&f.kind, want_node) {
                    (A::PathFactorKind::Node(n), true) => {
                        nodes.push(self.node_pat(n, scope, filters, in_width, in_match)?);
                    }
                    (A::PathFactorKind::Relationship(r), false) => {
                        if let Some(v) = &r.variable {
                            if rels_here.contains(&v.kind.text) {
                                return Err(sem(
                                    "RelationshipUniquenessViolation",
                                    format!(
                                        "relationship `{}` used twice in one pattern",
                                        v.kind.text
                                    ),
                                ));
                            }
                            rels_here.push(v.kind.text.clone());
                        }
                        rels.push(self.rel_pat(r, scope, filters, in_width, in_match)?);
                    }
                    (A::PathFactorKind::LegacyShortest { .. }, _) => {
                        return Err(CypherError::unsupported(
                            "shortestPath inside a longer pattern",
                        ))
                    }
                    _ => {
                        return Err(CypherError::unsupported(format!(
                            "pattern form `{}`",
                            self.text(f.span)
                        )))
                    }
                }
            }
            if nodes.len() != rels.len() + 1 {
                return Err(CypherError::unsupported(format!(
                    "pattern `{}`",
                    self.text(part.span)
                )));
            }
            if shortest.is_some() {
                let [rel] = rels.as_mut_slice() else {
                    return Err(CypherError::unsupported(
                        "shortestPath over more than one relationship",
                    ));
                };
                let range = rel.range.unwrap_or((1, Some(1)));
                if range.0 > 1 {
                    return Err(CypherError::unsupported(
                        "shortestPath with a minimum length above 1",
                    ));
                }
                rel.range = Some(range);
                if let Some(v) = scope.vars.get_mut(rel.slot) {
                    if v.kind == Kind::Rel {
                        v.kind = Kind::RelList;
                    }
                }
            }
            let path_slot = match &part.kind.binding {
                Some(b) => {
                    let name = &b.kind.text;
                    if scope.find(name).is_some() && !name.starts_with(' ') {
                        return Err(sem(
                            "VariableAlreadyBound",
                            format!("variable `{name}` already declared"),
                        ));
                    }
                    Some(scope.push(name, Kind::Path))
                }
                None => None,
            };
            let mut pp = PartPlan {
                path_slot,
                nodes,
                rels,
                group: 0,
                deps: Vec::new(),
                self_dep: false,
                shortest,
            };
            pp.compute_deps();
            parts.push(pp);
        }
        Ok(PatternPlan {
            parts,
            in_width,
            out_width: scope.len(),
        })
    }

    fn bind_var(
        &mut self,
        v: Option<&A::Name>,
        kind: Kind,
        scope: &mut Scope,
        in_width: usize,
        in_match: bool,
    ) -> Result<usize> {
        let Some(v) = v else {
            let h = self.hidden("anon");
            return Ok(scope.push(&h, kind));
        };
        let name = &v.kind.text;
        if let Some(s) = scope.find(name) {
            let have = scope.vars[s].kind;
            let compatible = have == kind || (have == Kind::Any && kind != Kind::Path);
            if !compatible {
                return Err(sem(
                    "VariableTypeConflict",
                    format!("variable `{name}` is a {have:?}, used as a {kind:?}"),
                ));
            }
            if kind == Kind::RelList && s < in_width {
                return Err(sem(
                    "VariableAlreadyBound",
                    format!("variable `{name}` already declared"),
                ));
            }
            return Ok(s);
        }
        if !in_match {
            // Pattern predicates and comprehensions may only introduce variables in
            // comprehensions; a predicate like `(a)-->(b)` with unknown `b` is an error.
            return Err(sem(
                "UndefinedVariable",
                format!("variable `{name}` not defined"),
            ));
        }
        Ok(scope.push(name, kind))
    }

    fn props(&mut self, p: Option<&A::Expr>, scope: &Scope) -> Result<PropSpec> {
        let Some(p) = p else {
            return Ok((Vec::new(), None));
        };
        match &p.kind {
            E::Map(entries) => {
                let mut v = Vec::new();
                for e in entries {
                    v.push((e.key.kind.text.clone(), self.expr(&e.value, scope, None)?));
                }
                Ok((v, None))
            }
            E::Parameter(_) => Err(sem(
                "InvalidParameterUse",
                format!(
                    "a parameter cannot be used as a property map in a pattern: `{}`",
                    self.text(p.span)
                ),
            )),
            _ => Ok((Vec::new(), Some(self.expr(p, scope, None)?))),
        }
    }

    fn node_pat(
        &mut self,
        n: &A::NodePattern,
        scope: &mut Scope,
        filters: &mut Vec<Expr>,
        in_width: usize,
        in_match: bool,
    ) -> Result<NodePat> {
        let labels = match &n.labels {
            Some(l) => label_conj(l)?,
            None => Vec::new(),
        };
        // Property maps are evaluated against the scope before this node is bound.
        let (props, props_expr) = self.props(n.properties.as_deref(), scope)?;
        let slot = self.bind_var(
            n.variable.as_ref(),
            Kind::Node,
            scope,
            in_width,
            in_match || n.variable.is_none(),
        )?;
        if let Some(w) = &n.where_clause {
            filters.push(self.expr(w, scope, None)?);
        }
        Ok(NodePat {
            slot,
            labels,
            props,
            props_expr,
            hints: Vec::new(),
        })
    }

    fn rel_pat(
        &mut self,
        r: &A::RelationshipPattern,
        scope: &mut Scope,
        filters: &mut Vec<Expr>,
        in_width: usize,
        in_match: bool,
    ) -> Result<RelPat> {
        let types = match &r.labels {
            Some(l) => label_disj(l)?,
            None => Vec::new(),
        };
        let dir = match r.direction.kind {
            A::RelationshipDirection::Right => Dir::Out,
            A::RelationshipDirection::Left => Dir::In,
            _ => Dir::Both,
        };
        if r.graph_quantifier.is_some() {
            return Err(CypherError::unsupported("GQL quantifiers on relationships"));
        }
        let range = match &r.legacy_quantifier {
            None => None,
            Some(q) => Some(match &q.kind {
                A::QuantifierKind::ZeroOrMore | A::QuantifierKind::OneOrMore => (1, None),
                A::QuantifierKind::Optional => (0, Some(1)),
                A::QuantifierKind::Fixed(t) => {
                    let n = parse_bound(t)?;
                    (n, Some(n))
                }
                A::QuantifierKind::Range { lower, upper } => {
                    let lo = match lower {
                        Some(t) => parse_bound(t)?,
                        None => 1,
                    };
                    let hi = match upper {
                        Some(t) => Some(parse_bound(t)?),
                        None => None,
                    };
                    (lo, hi)
                }
                _ => return Err(CypherError::unsupported("quantifier")),
            }),
        };
        let (props, props_expr) = self.props(r.properties.as_deref(), scope)?;
        let kind = if range.is_some() {
            Kind::RelList
        } else {
            Kind::Rel
        };
        let slot = self.bind_var(
            r.variable.as_ref(),
            kind,
            scope,
            in_width,
            in_match || r.variable.is_none(),
        )?;
        if let Some(w) = &r.where_clause {
            filters.push(self.expr(w, scope, None)?);
        }
        Ok(RelPat {
            slot,
            types,
            dir,
            props,
            props_expr,
            range,
            named: r.variable.is_some(),
        })
    }

    /// WITH / RETURN. Returns the projection and the scope after it.
    fn projection(
        &mut self,
        p: &A::ProjectionClause,
        scope: &Scope,
        where_: Option<&A::Expr>,
        is_return: bool,
    ) -> Result<(Projection, Scope)> {
        if p.offset.is_some() {
            return Err(CypherError::unsupported("OFFSET"));
        }
        let in_width = scope.len();
        let mut columns = Vec::new();
        let mut items = Vec::new();
        let mut kinds = Vec::new();
        let mut aggs = Vec::new();
        let mut is_key = Vec::new();
        for it in &p.items {
            match &it.kind {
                A::ProjectionItemKind::Wildcard => {
                    let mut vis = scope.visible();
                    if vis.is_empty() {
                        return Err(sem(
                            "NoVariablesInScope",
                            "RETURN * has no variables in scope",
                        ));
                    }
                    vis.sort();
                    for (name, slot) in vis {
                        columns.push(name);
                        items.push(Expr::Var(slot));
                        kinds.push(scope.vars[slot].kind);
                        is_key.push(true);
                    }
                }
                A::ProjectionItemKind::Expression { expression, alias } => {
                    let before = aggs.len();
                    let e = self.expr(
                        expression,
                        scope,
                        Some(&mut AggCtx {
                            aggs: &mut aggs,
                            base: in_width,
                        }),
                    )?;
                    let has_agg = aggs.len() > before;
                    let name = match alias {
                        Some(a) => a.kind.text.clone(),
                        None => {
                            if !is_return && !matches!(expression.kind, E::Variable(_)) {
                                return Err(sem(
                                    "NoExpressionAlias",
                                    format!(
                                        "expression `{}` in WITH must be aliased",
                                        self.text(expression.span)
                                    ),
                                ));
                            }
                            self.text(expression.span).to_string()
                        }
                    };
                    kinds.push(match &e {
                        Expr::Var(s) if *s < in_width => scope.vars[*s].kind,
                        Expr::Lit(Value::Null) => Kind::Any,
                        Expr::Lit(_)
                        | Expr::List(_)
                        | Expr::Map(_)
                        | Expr::MapProj(..)
                        | Expr::Bin(..)
                        | Expr::Not(_)
                        | Expr::Neg(_)
                        | Expr::IsNull(..) => Kind::Value,
                        Expr::ListComp { .. }
                        | Expr::PatternComp { .. }
                        | Expr::Exists(_)
                        | Expr::Quant { .. } => Kind::Value,
                        _ => Kind::Any,
                    });
                    columns.push(name);
                    items.push(e);
                    is_key.push(!has_agg);
                }
                _ => return Err(CypherError::unsupported("projection item")),
            }
        }
        for (i, c) in columns.iter().enumerate() {
            if columns[..i].contains(c) {
                return Err(sem(
                    "ColumnNameConflict",
                    format!("multiple result columns with the same name `{c}`"),
                ));
            }
        }
        let aggregating = !aggs.is_empty();
        if aggregating {
            let keys: Vec<Expr> = items
                .iter()
                .zip(&is_key)
                .filter(|(_, k)| **k)
                .map(|(e, _)| e.clone())
                .collect();
            for ((e, k), it) in items.iter().zip(&is_key).zip(&p.items) {
                if !*k {
                    check_ambiguous(e, &keys, 0, in_width, self.text(it.span))?;
                }
            }
        }
        // ORDER BY sees the projected columns first, then the incoming variables.
        let mut order_scope = Scope::default();
        for (c, k) in columns.iter().zip(&kinds) {
            order_scope.push(c, *k);
        }
        for v in &scope.vars {
            // ORDER BY may also use the incoming variables, unless a column of the same name
            // shadows them.
            let shadowed = columns.contains(&v.name);
            order_scope.push(if shadowed { " shadowed" } else { &v.name }, v.kind);
        }
        let mut order = Vec::new();
        if let Some(ob) = &p.order_by {
            for si in &ob.items {
                let descending = si
                    .direction
                    .as_ref()
                    .is_some_and(|d| matches!(d.kind, A::SortDirection::Descending));
                // An ORDER BY expression equal to a projected one reads that column, so
                // `RETURN n.x, count(*) ORDER BY count(*)` works.
                let ex = self.text(si.expression.span);
                let expr = if let Some(i) =
                    columns
                        .iter()
                        .zip(&p.items)
                        .position(|(_, it)| match &it.kind {
                            A::ProjectionItemKind::Expression { expression, .. } => {
                                self.text(expression.span) == ex
                            }
                            _ => false,
                        }) {
                    Expr::Var(i)
                } else if aggregating {
                    let base = columns.len() + in_width;
                    let e = self.expr(
                        &si.expression,
                        &order_scope,
                        Some(&mut AggCtx {
                            aggs: &mut aggs,
                            base,
                        }),
                    )?;
                    let keys: Vec<Expr> = items
                        .iter()
                        .zip(&is_key)
                        .filter(|(_, k)| **k)
                        .map(|(e, _)| shift(e, columns.len()))
                        .collect();
                    check_ambiguous(
                        &e,
                        &keys,
                        columns.len(),
                        base,
                        self.text(si.expression.span),
                    )?;
                    e
                } else {
                    let before = aggs.len();
                    let e = self.expr(
                        &si.expression,
                        &order_scope,
                        Some(&mut AggCtx {
                            aggs: &mut aggs,
                            base: 0,
                        }),
                    )?;
                    if aggs.len() > before {
                        return Err(sem(
                            "InvalidAggregation",
                            "aggregate in ORDER BY of a projection without aggregation",
                        ));
                    }
                    e
                };
                order.push(SortKey { expr, descending });
            }
        }
        let empty = Scope::default();
        let skip = match &p.skip {
            Some(e) => Some(self.const_expr(e, &empty, "SKIP")?),
            None => None,
        };
        let limit = match &p.limit {
            Some(e) => Some(self.const_expr(e, &empty, "LIMIT")?),
            None => None,
        };
        let mut new_scope = Scope::default();
        for (c, k) in columns.iter().zip(&kinds) {
            new_scope.push(c, *k);
        }
        // WITH … WHERE sees the new columns and, unless shadowed, the incoming variables
        // (evaluated on `output row ++ input row`, like ORDER BY).
        let filter = match where_ {
            Some(w) => {
                let mut s = order_scope.clone();
                s.vars.truncate(columns.len() + in_width);
                Some(self.expr(w, &s, None)?)
            }
            None => None,
        };
        let distinct = p
            .quantifier
            .as_ref()
            .is_some_and(|q| matches!(q.kind, A::SetQuantifier::Distinct));
        Ok((
            Projection {
                columns,
                items,
                aggs,
                is_key,
                distinct,
                order,
                skip,
                limit,
                filter,
                in_width,
            },
            new_scope,
        ))
    }

    /// SKIP / LIMIT: no variables allowed.
    fn const_expr(&mut self, e: &A::Expr, empty: &Scope, what: &str) -> Result<Expr> {
        self.expr(e, empty, None).map_err(|err| {
            if err.code == Some("UndefinedVariable") {
                sem(
                    "NonConstantExpression",
                    format!(
                        "{what} must be a constant expression: `{}`",
                        self.text(e.span)
                    ),
                )
            } else {
                err
            }
        })
    }

    fn expr(&mut self, e: &A::Expr, scope: &Scope, mut agg: Option<&mut AggCtx>) -> Result<Expr> {
        let sub = |l: &mut Self, x: &A::Expr, agg: &mut Option<&mut AggCtx>| -> Result<Box<Expr>> {
            Ok(Box::new(l.expr(x, scope, agg.as_deref_mut())?))
        };
        Ok(match &e.kind {
            E::Literal(lit) => Expr::Lit(literal(lit, false)?),
            E::Variable(v) => {
                let name = &v.kind.text;
                match scope.find(name) {
                    Some(s) => Expr::Var(s),
                    None => {
                        return Err(sem(
                            "UndefinedVariable",
                            format!("variable `{name}` not defined"),
                        ))
                    }
                }
            }
            E::Parameter(p) => match &p.name {
                A::ParameterName::Named(n) | A::ParameterName::Positional(n) => {
                    Expr::Param(n.clone())
                }
                _ => return Err(CypherError::unsupported("parameter form")),
            },
            E::Wildcard => {
                return Err(sem(
                    "InvalidArgumentType",
                    "`*` is only allowed in count(*)",
                ))
            }
            E::List(xs) => Expr::List(
                xs.iter()
                    .map(|x| self.expr(x, scope, agg.as_deref_mut()))
                    .collect::<Result<_>>()?,
            ),
            E::Map(entries) => {
                let mut v = Vec::new();
                for en in entries {
                    v.push((
                        en.key.kind.text.clone(),
                        self.expr(&en.value, scope, agg.as_deref_mut())?,
                    ));
                }
                Expr::Map(v)
            }
            E::MapProjection(mp) => {
                let base = sub(self, &mp.base, &mut agg)?;
                let mut items = Vec::new();
                for it in &mp.items {
                    items.push(match &it.kind {
                        A::MapProjectionItemKind::Property(n) => MapItem::Prop(n.kind.text.clone()),
                        A::MapProjectionItemKind::AllProperties => MapItem::All,
                        A::MapProjectionItemKind::Variable(n) => match scope.find(&n.kind.text) {
                            Some(s) => MapItem::Var(n.kind.text.clone(), s),
                            None => {
                                return Err(sem(
                                    "UndefinedVariable",
                                    format!("variable `{}` not defined", n.kind.text),
                                ))
                            }
                        },
                        A::MapProjectionItemKind::Entry(en) => MapItem::Entry(
                            en.key.kind.text.clone(),
                            self.expr(&en.value, scope, agg.as_deref_mut())?,
                        ),
                        _ => return Err(CypherError::unsupported("map projection item")),
                    });
                }
                Expr::MapProj(base, items)
            }
            E::Unary { operator, operand } => match operator.kind {
                A::UnaryOperator::Minus => {
                    if let E::Literal(lit) = &operand.kind {
                        if matches!(
                            lit.kind,
                            A::LiteralKind::Integer(_) | A::LiteralKind::Float(_)
                        ) {
                            return Ok(Expr::Lit(literal(lit, true)?));
                        }
                    }
                    Expr::Neg(sub(self, operand, &mut agg)?)
                }
                A::UnaryOperator::Plus => *sub(self, operand, &mut agg)?,
                A::UnaryOperator::Not => Expr::Not(sub(self, operand, &mut agg)?),
                _ => return Err(CypherError::unsupported("unary operator")),
            },
            E::Binary {
                left,
                operator,
                right,
            } => {
                use A::BinaryOperator as B;
                let op = match operator.kind {
                    B::Or => BinOp::Or,
                    B::Xor => BinOp::Xor,
                    B::And => BinOp::And,
                    B::Equal => BinOp::Eq,
                    B::NotEqual => BinOp::Ne,
                    B::Less => BinOp::Lt,
                    B::LessEqual => BinOp::Le,
                    B::Greater => BinOp::Gt,
                    B::GreaterEqual => BinOp::Ge,
                    B::RegexMatch => BinOp::Regex,
                    B::In => BinOp::In,
                    B::StartsWith => BinOp::StartsWith,
                    B::EndsWith => BinOp::EndsWith,
                    B::Contains => BinOp::Contains,
                    B::Add | B::Concat => BinOp::Add,
                    B::Subtract => BinOp::Sub,
                    B::Multiply => BinOp::Mul,
                    B::Divide => BinOp::Div,
                    B::Remainder => BinOp::Mod,
                    B::Power => BinOp::Pow,
                    _ => return Err(CypherError::unsupported("binary operator")),
                };
                Expr::Bin(op, sub(self, left, &mut agg)?, sub(self, right, &mut agg)?)
            }
            E::Is {
                expression,
                negated,
                predicate,
            } => {
                let x = sub(self, expression, &mut agg)?;
                match predicate {
                    A::IsPredicate::Null => Expr::IsNull(x, *negated),
                    A::IsPredicate::Label(l) => {
                        let h = Expr::HasLabels(x, label_conj(l)?);
                        if *negated {
                            Expr::Not(Box::new(h))
                        } else {
                            h
                        }
                    }
                    _ => return Err(CypherError::unsupported("IS predicate")),
                }
            }
            E::Property { expression, key } => {
                Expr::Prop(sub(self, expression, &mut agg)?, key.kind.text.clone())
            }
            E::DynamicProperty { expression, key }
            | E::Index {
                expression,
                index: key,
            } => Expr::Index(sub(self, expression, &mut agg)?, sub(self, key, &mut agg)?),
            E::Slice {
                expression,
                lower,
                upper,
            } => {
                let x = sub(self, expression, &mut agg)?;
                let lo = match lower {
                    Some(l) => Some(sub(self, l, &mut agg)?),
                    None => None,
                };
                let hi = match upper {
                    Some(u) => Some(sub(self, u, &mut agg)?),
                    None => None,
                };
                Expr::Slice(x, lo, hi)
            }
            E::Function(f) => return self.function(f, e, scope, agg),
            E::Case(c) => {
                let operand = match &c.operand {
                    Some(o) => Some(sub(self, o, &mut agg)?),
                    None => None,
                };
                let mut whens = Vec::new();
                for alt in &c.alternatives {
                    let then = self.expr(&alt.then, scope, agg.as_deref_mut())?;
                    for w in &alt.when {
                        whens.push((self.expr(w, scope, agg.as_deref_mut())?, then.clone()));
                    }
                }
                let els = match &c.else_expression {
                    Some(x) => Some(sub(self, x, &mut agg)?),
                    None => None,
                };
                Expr::Case {
                    operand,
                    whens,
                    els,
                }
            }
            E::ListComprehension(lc) => {
                let list = sub(self, &lc.list, &mut agg)?;
                let mut inner = scope.clone();
                let slot = inner.push(&lc.variable.kind.text, Kind::Any);
                let pred = match &lc.predicate {
                    Some(p) => Some(Box::new(self.expr(p, &inner, None)?)),
                    None => None,
                };
                let proj = match &lc.projection {
                    Some(p) => Some(Box::new(self.expr(p, &inner, None)?)),
                    None => None,
                };
                Expr::ListComp {
                    slot,
                    list,
                    pred,
                    proj,
                }
            }
            E::QuantifiedPredicate(qp) => {
                let list = sub(self, &qp.list, &mut agg)?;
                let mut inner = scope.clone();
                let slot = inner.push(&qp.variable.kind.text, Kind::Any);
                let pred = Box::new(self.expr(&qp.predicate, &inner, None)?);
                let kind = match qp.kind.kind {
                    A::QuantifiedPredicateKind::All => QuantKind::All,
                    A::QuantifiedPredicateKind::Any => QuantKind::Any,
                    A::QuantifiedPredicateKind::None => QuantKind::None,
                    A::QuantifiedPredicateKind::Single => QuantKind::Single,
                    _ => return Err(CypherError::unsupported("quantifier")),
                };
                Expr::Quant {
                    kind,
                    slot,
                    list,
                    pred,
                }
            }
            E::Reduce(r) => {
                let init = sub(self, &r.initial, &mut agg)?;
                let list = sub(self, &r.list, &mut agg)?;
                let mut inner = scope.clone();
                let acc = inner.push(&r.accumulator.kind.text, Kind::Any);
                let slot = inner.push(&r.variable.kind.text, Kind::Any);
                let expr = Box::new(self.expr(&r.expression, &inner, None)?);
                Expr::Reduce {
                    acc,
                    init,
                    slot,
                    list,
                    expr,
                }
            }
            E::Pattern(p) => {
                let mut inner = scope.clone();
                let mut filters = Vec::new();
                let plan = self.pattern(p, &mut inner, &mut filters, false)?;
                if !filters.is_empty() {
                    return Err(CypherError::unsupported("WHERE inside a pattern predicate"));
                }
                Expr::Exists(Box::new(plan))
            }
            E::PatternComprehension(pc) => {
                let mut inner = scope.clone();
                let mut filters = Vec::new();
                let plan = self.pattern(&pc.pattern, &mut inner, &mut filters, true)?;
                let path_slot = pc
                    .binding
                    .as_ref()
                    .map(|b| inner.push(&b.kind.text, Kind::Path));
                let mut plan = plan;
                if let Some(ps) = path_slot {
                    if let Some(first) = plan.parts.first_mut() {
                        first.path_slot = Some(ps);
                    }
                    plan.out_width = inner.len();
                }
                let mut pred = match &pc.predicate {
                    Some(p) => Some(Box::new(self.expr(p, &inner, None)?)),
                    None => None,
                };
                for f in filters {
                    pred = Some(Box::new(match pred {
                        Some(p) => Expr::Bin(BinOp::And, Box::new(f), p),
                        None => f,
                    }));
                }
                let proj = Box::new(self.expr(&pc.projection, &inner, None)?);
                Expr::PatternComp {
                    pattern: Box::new(plan),
                    pred,
                    proj,
                }
            }
            E::Parenthesized(x) => *sub(self, x, &mut agg)?,
            E::Subquery(sq) => return self.subquery(sq, scope),
            E::Error(_) => {
                return Err(CypherError::new(
                    ErrorKind::Syntax { line: 1, col: 1 },
                    "invalid expression",
                ))
            }
            _ => {
                return Err(CypherError::unsupported(format!(
                    "expression `{}`",
                    self.text(e.span)
                )))
            }
        })
    }

    /// `EXISTS { … }` / `COUNT { … }` holding one MATCH (with WHERE), optionally followed by
    /// a RETURN (which does not change existence or the count).
    fn subquery(&mut self, sq: &A::SubqueryExpression, scope: &Scope) -> Result<Expr> {
        let count = match sq.kind.kind {
            A::SubqueryExpressionKind::Exists => false,
            A::SubqueryExpressionKind::Count => true,
            _ => return Err(CypherError::unsupported("COLLECT { … } subqueries")),
        };
        let A::QueryKind::Regular(reg) = &sq.query.kind else {
            return Err(CypherError::unsupported("subquery form"));
        };
        let m = match reg.head.kind.clauses.as_slice() {
            [c] | [c, _] if reg.unions.is_empty() => match &c.kind {
                A::ClauseKind::Match(m) if !m.optional => m,
                _ => return Err(CypherError::unsupported("subqueries other than one MATCH")),
            },
            _ => return Err(CypherError::unsupported("subqueries other than one MATCH")),
        };
        if let [_, last] = reg.head.kind.clauses.as_slice() {
            if !matches!(last.kind, A::ClauseKind::Return(_)) {
                return Err(CypherError::unsupported(
                    "subqueries other than MATCH … RETURN",
                ));
            }
        }
        let mut inner = scope.clone();
        let mut filters = Vec::new();
        let mut pattern = self.pattern(&m.pattern, &mut inner, &mut filters, true)?;
        let mut filter = match &m.where_clause {
            Some(w) => Some(self.expr(w, &inner, None)?),
            None => None,
        };
        for f in filters {
            filter = Some(match filter {
                Some(x) => Expr::Bin(BinOp::And, Box::new(f), Box::new(x)),
                None => f,
            });
        }
        if let Some(f) = &filter {
            add_hints(f, &mut pattern);
        }
        Ok(Expr::Subquery {
            count,
            pattern: Box::new(pattern),
            filter: filter.map(Box::new),
        })
    }

    fn function(
        &mut self,
        f: &A::FunctionInvocation,
        e: &A::Expr,
        scope: &Scope,
        agg: Option<&mut AggCtx>,
    ) -> Result<Expr> {
        let name = fn_name(&f.name);
        let distinct = f
            .quantifier
            .as_ref()
            .is_some_and(|q| matches!(q.kind, A::SetQuantifier::Distinct));
        if let Some(func) = is_aggregate(&name) {
            let Some(ctx) = agg else {
                return Err(sem(
                    "InvalidAggregation",
                    format!("aggregate `{}` is not allowed here", self.text(e.span)),
                ));
            };
            let star = matches!(f.arguments.as_slice(), [a] if matches!(a.kind, E::Wildcard));
            let (func, arg, arg2) = if star {
                if func != AggFn::Count {
                    return Err(sem("InvalidArgumentType", "only count accepts `*`"));
                }
                (AggFn::CountStar, None, None)
            } else {
                let want = if matches!(func, AggFn::PercentileCont | AggFn::PercentileDisc) {
                    2
                } else {
                    1
                };
                if f.arguments.len() != want {
                    return Err(sem(
                        "InvalidNumberOfArguments",
                        format!("`{name}` takes {want} argument(s)"),
                    ));
                }
                // Aggregates inside aggregate arguments are not allowed: lower with no context.
                let a = self.expr(&f.arguments[0], scope, None).map_err(|err| {
                    if err.code == Some("InvalidAggregation") {
                        sem(
                            "NestedAggregation",
                            format!("nested aggregate in `{}`", self.text(e.span)),
                        )
                    } else {
                        err
                    }
                })?;
                let a2 = match f.arguments.get(1) {
                    Some(x) => Some(self.expr(x, scope, None)?),
                    None => None,
                };
                (func, Some(a), a2)
            };
            ctx.aggs.push(AggSpec {
                func,
                distinct,
                arg,
                arg2,
            });
            return Ok(Expr::Var(ctx.base + ctx.aggs.len() - 1));
        }
        if distinct {
            return Err(sem(
                "InvalidAggregation",
                format!(
                    "DISTINCT is only allowed in aggregates: `{}`",
                    self.text(e.span)
                ),
            ));
        }
        let mut agg = agg;
        // exists(pattern) and exists(n.prop).
        if name == "exists" {
            if let [a] = f.arguments.as_slice() {
                return Ok(match &a.kind {
                    E::Property { .. } => Expr::IsNull(Box::new(self.expr(a, scope, agg)?), true),
                    _ => self.expr(a, scope, agg)?,
                });
            }
        }
        let mut args = Vec::new();
        for a in &f.arguments {
            args.push(self.expr(a, scope, agg.as_deref_mut())?);
        }
        // Argument kinds known at compile time (`length(n)` on a node is an error).
        if let Some(Expr::Var(slot)) = args.first() {
            let kind = scope.vars.get(*slot).map(|v| v.kind);
            let bad = matches!(
                (name.as_str(), kind),
                ("length", Some(Kind::Node | Kind::Rel))
                    | ("size", Some(Kind::Path | Kind::Node | Kind::Rel))
                    | ("type", Some(Kind::Node | Kind::Path))
                    | ("labels", Some(Kind::Rel | Kind::Path))
                    | ("nodes" | "relationships", Some(Kind::Node | Kind::Rel))
                    | ("startnode" | "endnode", Some(Kind::Node | Kind::Path))
            );
            if bad {
                return Err(sem(
                    "InvalidArgumentType",
                    format!("wrong argument type in `{}`", self.text(e.span)),
                ));
            }
        }
        if !crate::func::arity(&name, args.len())? {
            return Err(sem("UnknownFunction", format!("unknown function `{name}`")));
        }
        Ok(Expr::Call(name, args))
    }
}

fn first_word(s: &str) -> &str {
    s.split_whitespace().next().unwrap_or(s)
}

fn parse_bound(t: &str) -> Result<u32> {
    t.trim()
        .parse::<u32>()
        .map_err(|_| sem("InvalidArgumentType", format!("bad path length `{t}`")))
}

/// Node labels: `:A:B` (all of them).
fn label_conj(l: &A::LabelExpression) -> Result<Vec<String>> {
    match &l.kind {
        A::LabelExpressionKind::Name(n) => Ok(vec![n.kind.text.clone()]),
        A::LabelExpressionKind::And(xs) => {
            let mut v = Vec::new();
            for x in xs {
                v.extend(label_conj(x)?);
            }
            Ok(v)
        }
        A::LabelExpressionKind::Parenthesized(x) => label_conj(x),
        _ => Err(CypherError::unsupported(
            "label expressions other than :A:B",
        )),
    }
}

/// Relationship types: `:T|U` (any of them).
fn label_disj(l: &A::LabelExpression) -> Result<Vec<String>> {
    match &l.kind {
        A::LabelExpressionKind::Name(n) => Ok(vec![n.kind.text.clone()]),
        A::LabelExpressionKind::Or(xs) => {
            let mut v = Vec::new();
            for x in xs {
                v.extend(label_disj(x)?);
            }
            Ok(v)
        }
        A::LabelExpressionKind::Parenthesized(x) => label_disj(x),
        A::LabelExpressionKind::And(_) => Err(sem(
            "InvalidRelationshipPattern",
            "a relationship has exactly one type",
        )),
        _ => Err(CypherError::unsupported(
            "relationship type expressions other than :T|U",
        )),
    }
}

fn literal(lit: &A::Literal, negate: bool) -> Result<Value> {
    Ok(match &lit.kind {
        A::LiteralKind::Null => Value::Null,
        A::LiteralKind::Boolean(b) => Value::Bool(*b),
        A::LiteralKind::String(s) => Value::Str(s.value.clone()),
        A::LiteralKind::Integer(i) => {
            let (digits, radix) = match i.radix {
                A::IntegerRadix::Hexadecimal => {
                    (i.text.trim_start_matches("0x").trim_start_matches("0X"), 16)
                }
                A::IntegerRadix::Octal => {
                    (i.text.trim_start_matches("0o").trim_start_matches("0O"), 8)
                }
                _ => (i.text.as_str(), 10),
            };
            let digits = digits.replace('_', "");
            let text = if negate { format!("-{digits}") } else { digits };
            match i64::from_str_radix(&text, radix) {
                Ok(v) => Value::Int(v),
                Err(_) => {
                    return Err(sem(
                        "IntegerOverflow",
                        format!("integer literal `{}` is too large", i.text),
                    ))
                }
            }
        }
        A::LiteralKind::Float(f) => {
            let v: f64 = f
                .text
                .replace('_', "")
                .parse()
                .map_err(|_| sem("InvalidNumberLiteral", format!("bad number `{}`", f.text)))?;
            if v.is_infinite() {
                return Err(sem(
                    "FloatingPointOverflow",
                    format!("float literal `{}` is too large", f.text),
                ));
            }
            Value::Float(if negate { -v } else { v })
        }
        _ => return Err(CypherError::unsupported("literal")),
    })
}

/// Collects `n.id = <expr>` / `n.name = <expr>` conjuncts of a MATCH's WHERE as anchor hints
/// for the pattern's nodes (the filter still runs: hints only narrow the start set).
fn add_hints(filter: &Expr, pattern: &mut PatternPlan) {
    let in_width = pattern.in_width;
    let mut conj = Vec::new();
    fn split<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
        match e {
            Expr::Bin(BinOp::And, a, b) => {
                split(a, out);
                split(b, out);
            }
            _ => out.push(e),
        }
    }
    split(filter, &mut conj);
    for c in conj {
        let Expr::Bin(BinOp::Eq, a, b) = c else {
            continue;
        };
        for (l, r) in [(a, b), (b, a)] {
            // `toLower(n.name) = 'x'`: the store's name index is case-insensitive, so it
            // still yields a superset of the matches ("name~").
            if let Expr::Call(f, args) = &**l {
                if let ([Expr::Prop(base, key)], "tolower" | "toupper") =
                    (args.as_slice(), f.as_str())
                {
                    if let (Expr::Var(s), "name") = (&**base, key.as_str()) {
                        if *s >= in_width && r.only_uses_below(in_width) {
                            for n in pattern
                                .parts
                                .iter_mut()
                                .flat_map(|p| p.nodes.iter_mut())
                                .filter(|n| n.slot == *s)
                            {
                                n.hints.push(("name~".into(), (**r).clone()));
                            }
                        }
                    }
                }
            }
            if let Expr::Prop(base, key) = &**l {
                if let Expr::Var(s) = &**base {
                    if *s >= in_width && r.only_uses_below(in_width) {
                        for part in &mut pattern.parts {
                            for n in &mut part.nodes {
                                if n.slot == *s {
                                    n.hints.push((key.clone(), (**r).clone()));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Moves every slot of `e` up by `by` (an input-scope expression read in ORDER BY's scope).
fn shift(e: &Expr, by: usize) -> Expr {
    let mut e = e.clone();
    fn go(e: &mut Expr, by: usize) {
        match e {
            Expr::Var(s) => *s += by,
            Expr::Prop(x, _)
            | Expr::Not(x)
            | Expr::Neg(x)
            | Expr::IsNull(x, _)
            | Expr::HasLabels(x, _) => go(x, by),
            Expr::Index(a, b) | Expr::Bin(_, a, b) => {
                go(a, by);
                go(b, by);
            }
            Expr::List(xs) | Expr::Call(_, xs) => xs.iter_mut().for_each(|x| go(x, by)),
            Expr::Map(xs) => xs.iter_mut().for_each(|(_, x)| go(x, by)),
            // Other forms never equal an ORDER BY expression in practice: leave them.
            _ => {}
        }
    }
    go(&mut e, by);
    e
}

/// In an aggregating projection, the parts outside aggregates may only read grouping keys:
/// `me.age + count(*)` needs `me.age` (or `me`) projected as a key.
fn check_ambiguous(e: &Expr, keys: &[Expr], lo: usize, agg_base: usize, text: &str) -> Result<()> {
    if keys.iter().any(|k| k == e) {
        return Ok(());
    }
    let bad = || {
        sem(
            "AmbiguousAggregationExpression",
            format!("`{text}` mixes aggregates with values that are not grouping keys"),
        )
    };
    match e {
        Expr::Var(s) => {
            if *s >= agg_base || *s < lo {
                Ok(())
            } else {
                Err(bad())
            }
        }
        Expr::Lit(_) | Expr::Param(_) => Ok(()),
        Expr::Prop(x, _)
        | Expr::Not(x)
        | Expr::Neg(x)
        | Expr::IsNull(x, _)
        | Expr::HasLabels(x, _) => check_ambiguous(x, keys, lo, agg_base, text),
        Expr::Index(a, b) | Expr::Bin(_, a, b) => {
            check_ambiguous(a, keys, lo, agg_base, text)?;
            check_ambiguous(b, keys, lo, agg_base, text)
        }
        Expr::List(xs) | Expr::Call(_, xs) => xs
            .iter()
            .try_for_each(|x| check_ambiguous(x, keys, lo, agg_base, text)),
        Expr::Map(xs) => xs
            .iter()
            .try_for_each(|(_, x)| check_ambiguous(x, keys, lo, agg_base, text)),
        _ => {
            let mut ok = true;
            e.visit_slots(&mut |s| ok &= s >= agg_base || s < lo || keys.contains(&Expr::Var(s)));
            if ok {
                Ok(())
            } else {
                Err(bad())
            }
        }
    }
}
