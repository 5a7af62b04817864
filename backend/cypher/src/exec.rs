//! Stage 4: runs a [`QueryPlan`] over a [`Store`], row batch by row batch.
//!
//! Each operator turns the rows of the previous one into its own; pattern matching is a
//! depth-first search from the anchor chosen per pattern part (see [`plan`](crate::plan)).
//! A [`Budget`] (wall time and rows produced) is checked in every inner loop, so a pathological
//! query stops with a "budget exceeded" error instead of exhausting time or memory.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use crate::error::{CypherError, ErrorKind, Result};
use crate::plan::*;
use crate::store::{Dir, NodeId, RelRef, Store};
use crate::value::{as_f64, Path, Value};

/// Limits for one query. Every limit is charged where the work or the memory is spent, and
/// running out of any of them ends the query with an [`ErrorKind::Budget`] error that names
/// the limit — never with an abort or an out-of-memory kill.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Wall-clock time for the whole query. The clock is read at least every
    /// [`CLOCK_EVERY`] inner-loop steps, and after every large value, so a query stops within
    /// a few milliseconds of its deadline.
    pub time: Duration,
    /// Rows produced by all operators together (intermediate and final).
    pub rows: u64,
    /// Bytes the query may hold at once: the rows it materialises between operators, the
    /// values its aggregates collect, DISTINCT keys, and each string or list it builds.
    pub bytes: u64,
    /// Largest single string, list or map one expression may build.
    pub value_bytes: u64,
    /// Depth an unbounded variable-length relationship (`*`, `*2..`) may reach; a query that
    /// would go deeper gets an error asking for an explicit upper bound.
    pub max_depth: u32,
}

/// Inner-loop steps between two readings of the clock.
pub const CLOCK_EVERY: u32 = 64;

impl Budget {
    /// The default limits: 10 s, 2,000,000 rows, 64 MiB held, 16 MiB per value, depth 32 for
    /// an unbounded `*`.
    pub const STANDARD: Budget = Budget {
        time: Duration::from_secs(10),
        rows: 2_000_000,
        bytes: 64 << 20,
        value_bytes: 16 << 20,
        max_depth: 32,
    };

    /// The standard limits with another time and row budget.
    pub const fn with_time_rows(time: Duration, rows: u64) -> Budget {
        Budget {
            time,
            rows,
            ..Budget::STANDARD
        }
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::STANDARD
    }
}

/// Most compiled regular expressions one query keeps (a query can build its patterns from
/// data, so the cache must not grow with the rows).
const REGEX_CACHE: usize = 64;

pub struct Ctx<'a> {
    pub store: &'a dyn Store,
    pub params: &'a HashMap<String, Value>,
    budget: Budget,
    deadline: Instant,
    rows: Cell<u64>,
    ticks: Cell<u32>,
    /// Bytes currently charged against [`Budget::bytes`].
    held: Cell<u64>,
    regexes: RefCell<HashMap<String, regex::Regex>>,
}

fn budget_err(msg: String) -> CypherError {
    CypherError::new(ErrorKind::Budget, msg)
}

fn mib(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else {
        format!("{b} bytes")
    }
}

fn type_err(msg: impl Into<String>) -> CypherError {
    CypherError::runtime("InvalidArgumentType", msg)
}

impl<'a> Ctx<'a> {
    pub fn new(store: &'a dyn Store, params: &'a HashMap<String, Value>, budget: Budget) -> Self {
        Ctx {
            store,
            params,
            budget,
            deadline: Instant::now() + budget.time,
            rows: Cell::new(0),
            ticks: Cell::new(0),
            held: Cell::new(0),
            regexes: RefCell::new(HashMap::new()),
        }
    }

    /// Called in inner loops; looks at the clock every [`CLOCK_EVERY`] calls.
    #[inline]
    pub(crate) fn tick(&self) -> Result<()> {
        let t = self.ticks.get().wrapping_add(1);
        self.ticks.set(t);
        if t.is_multiple_of(CLOCK_EVERY) {
            self.check_clock()?;
        }
        Ok(())
    }

    fn check_clock(&self) -> Result<()> {
        if Instant::now() > self.deadline {
            return Err(budget_err(format!(
                "time: the query ran longer than {} ms",
                self.budget.time.as_millis()
            )));
        }
        Ok(())
    }

    fn past_deadline(&self) -> bool {
        Instant::now() > self.deadline
    }

    fn add_rows(&self, n: u64) -> Result<()> {
        let r = self.rows.get() + n;
        self.rows.set(r);
        if r > self.budget.rows {
            return Err(budget_err(format!(
                "rows: the query produced more than {} rows",
                self.budget.rows
            )));
        }
        self.tick()
    }

    /// Charges `n` held bytes (a materialised row, a collected value, a DISTINCT key).
    fn charge(&self, n: u64) -> Result<()> {
        let h = self.held.get().saturating_add(n);
        self.held.set(h);
        if h > self.budget.bytes {
            return Err(self.bytes_err());
        }
        Ok(())
    }

    fn release(&self, n: u64) {
        self.held.set(self.held.get().saturating_sub(n));
    }

    fn bytes_err(&self) -> CypherError {
        budget_err(format!(
            "memory: the query would hold more than {} of rows and values (add a LIMIT, aggregate earlier, or return fewer columns)",
            mib(self.budget.bytes)
        ))
    }

    fn value_err(&self) -> CypherError {
        budget_err(format!(
            "value size: a string, list or map would be larger than {}",
            mib(self.budget.value_bytes)
        ))
    }

    /// Checks, before allocating, that a value of `bytes` may be built: it must fit the
    /// per-value cap and, on top of what the query holds, the byte budget.
    pub(crate) fn precheck(&self, bytes: u64) -> Result<()> {
        if bytes > self.budget.value_bytes {
            return Err(self.value_err());
        }
        if self.held.get().saturating_add(bytes) > self.budget.bytes {
            return Err(self.bytes_err());
        }
        if bytes > 1 << 16 {
            self.check_clock()?;
        }
        Ok(())
    }

    /// Checks a value an expression built (see [`Ctx::precheck`]).
    fn check_value(&self, v: &Value) -> Result<()> {
        if matches!(v, Value::Str(_) | Value::List(_) | Value::Map(_)) {
            let cap = self
                .budget
                .value_bytes
                .min(self.budget.bytes.saturating_sub(self.held.get()));
            self.precheck(v.approx_bytes(cap))?;
        }
        Ok(())
    }

    /// Charges a row that is about to be materialised; returns its size for the release.
    fn charge_row(&self, row: &[Value]) -> Result<u64> {
        let limit = self.budget.bytes;
        let n = 24 + row.iter().map(|v| v.approx_bytes(limit)).sum::<u64>();
        self.charge(n)?;
        Ok(n)
    }

    pub fn run(&self, plan: &QueryPlan) -> Result<(Vec<String>, Vec<Vec<Value>>)> {
        let mut all: Vec<Vec<Value>> = Vec::new();
        let columns = plan
            .branches
            .first()
            .map(|b| b.columns.clone())
            .unwrap_or_default();
        for b in &plan.branches {
            let mut rows = vec![Vec::new()];
            // Bytes charged for `rows`, released once the next operator has consumed them.
            let mut rows_bytes = 0u64;
            let mut i = 0;
            while i < b.ops.len() {
                let op = &b.ops[i];
                let next = b.ops.get(i + 1);
                let held_before = self.held.get();
                match (op, next) {
                    // A MATCH or UNWIND feeding a projection streams its rows into it, so an
                    // aggregate such as `count(*)` never materialises what it counts.
                    (Op::Match { .. } | Op::Unwind { .. }, Some(Op::Project(p))) => {
                        let mut proj = Projector::new(self, p)?;
                        self.feed(op, rows, &mut |r| proj.push(r))?;
                        rows = proj.finish()?;
                        i += 2;
                    }
                    _ => {
                        rows = self.op(op, rows, next)?;
                        i += 1;
                    }
                }
                let out_bytes = self.held.get().saturating_sub(held_before);
                self.release(rows_bytes);
                rows_bytes = out_bytes;
            }
            all.extend(rows);
        }
        if plan.branches.len() > 1 && !plan.union_all.first().copied().unwrap_or(false) {
            all = dedup(all);
        }
        Ok((columns, all))
    }

    /// Runs one operator over materialised rows (each output row is charged).
    fn op(&self, op: &Op, rows: Vec<Vec<Value>>, next: Option<&Op>) -> Result<Vec<Vec<Value>>> {
        match op {
            Op::Match { .. } | Op::Unwind { .. } => {
                let cap = self.row_cap(next)?;
                let mut out = Vec::new();
                let res = self.feed(op, rows, &mut |r| {
                    self.charge_row(&r)?;
                    out.push(r);
                    Ok(out.len() < cap)
                });
                if let Err(e) = res {
                    // Freeing many rows takes a while: not on the caller's time.
                    discard(out.into_iter());
                    return Err(e);
                }
                Ok(out)
            }
            Op::Project(p) => {
                let mut proj = Projector::new(self, p)?;
                for row in rows {
                    if !proj.push(row)? {
                        break;
                    }
                }
                proj.finish()
            }
        }
    }

    /// How many rows the operator before `next` needs to produce: `SKIP + LIMIT` when `next`
    /// is a plain projection (no aggregation, DISTINCT, ORDER BY or WHERE), so that
    /// `MATCH … RETURN … LIMIT 10` stops early as it would in Neo4j.
    fn row_cap(&self, next: Option<&Op>) -> Result<usize> {
        match next {
            Some(Op::Project(p)) => self.plain_cap(p),
            _ => Ok(usize::MAX),
        }
    }

    fn plain_cap(&self, p: &Projection) -> Result<usize> {
        if p.aggs.is_empty() && !p.distinct && p.order.is_empty() && p.filter.is_none() {
            if let Some(limit) = self.count_arg(&p.limit, "LIMIT")? {
                let skip = self.count_arg(&p.skip, "SKIP")?.unwrap_or(0);
                return Ok(skip.saturating_add(limit));
            }
        }
        Ok(usize::MAX)
    }

    /// Runs a MATCH or UNWIND over `rows`, handing each row it produces to `sink` (which
    /// returns `false` to stop early).
    fn feed(
        &self,
        op: &Op,
        rows: Vec<Vec<Value>>,
        sink: &mut dyn FnMut(Vec<Value>) -> Result<bool>,
    ) -> Result<()> {
        match op {
            Op::Match {
                pattern,
                optional,
                filter,
            } => {
                let mut input = rows.into_iter();
                let res = self.match_rows(pattern, *optional, filter.as_ref(), &mut input, sink);
                if res.is_err() {
                    discard(input);
                }
                res
            }
            Op::Unwind { expr, slot } => {
                for row in rows {
                    // `UNWIND range(a, b)` streams its integers instead of building the list.
                    if let Expr::Call(name, args) = expr {
                        if name == "range" {
                            let vals = args
                                .iter()
                                .map(|a| self.eval(a, &row))
                                .collect::<Result<Vec<_>>>()?;
                            if vals.iter().all(|v| matches!(v, Value::Int(_))) {
                                let (start, step, count) = crate::func::range_spec(&vals)?;
                                let mut x = start;
                                for _ in 0..count {
                                    self.add_rows(1)?;
                                    let mut r = row.clone();
                                    r.resize(*slot, Value::Null);
                                    r.push(Value::Int(x as i64));
                                    x += step;
                                    if !sink(r)? {
                                        return Ok(());
                                    }
                                }
                                continue;
                            }
                        }
                    }
                    let items = match self.eval(expr, &row)? {
                        Value::List(xs) => xs,
                        Value::Null => Vec::new(),
                        other => vec![other],
                    };
                    self.add_rows(items.len() as u64)?;
                    for x in items {
                        let mut r = row.clone();
                        r.resize(*slot, Value::Null);
                        r.push(x);
                        if !sink(r)? {
                            return Ok(());
                        }
                    }
                }
                Ok(())
            }
            Op::Project(_) => Err(CypherError::new(
                ErrorKind::Runtime,
                "internal error: a projection cannot feed rows",
            )),
        }
    }

    fn match_rows(
        &self,
        pattern: &PatternPlan,
        optional: bool,
        filter: Option<&Expr>,
        input: &mut std::vec::IntoIter<Vec<Value>>,
        sink: &mut dyn FnMut(Vec<Value>) -> Result<bool>,
    ) -> Result<()> {
        for row in input.by_ref() {
            let mut any = false;
            let mut stop = false;
            self.match_pattern(pattern, &row, &mut |r: &[Value]| {
                if let Some(f) = filter {
                    if !truthy(&self.eval(f, r)?) {
                        return Ok(true);
                    }
                }
                self.add_rows(1)?;
                any = true;
                let go = sink(r.to_vec())?;
                stop = !go;
                Ok(go)
            })?;
            if stop {
                break;
            }
            if optional && !any {
                let mut r = row;
                r.resize(pattern.out_width, Value::Null);
                self.add_rows(1)?;
                if !sink(r)? {
                    break;
                }
            }
        }
        Ok(())
    }

    fn count_arg(&self, e: &Option<Expr>, what: &str) -> Result<Option<usize>> {
        let Some(e) = e else { return Ok(None) };
        match self.eval(e, &[])? {
            Value::Int(i) if i >= 0 => Ok(Some(i as usize)),
            Value::Int(_) => Err(CypherError::semantic(
                "NegativeIntegerArgument",
                format!("{what} must not be negative"),
            )),
            Value::Float(f) if f >= 0.0 && f.fract() == 0.0 => Ok(Some(f as usize)),
            other => Err(CypherError::semantic(
                "InvalidArgumentType",
                format!("{what} must be an integer, got {}", other.type_name()),
            )),
        }
    }

    // ----------------------------------------------------------------- pattern matching

    pub fn match_pattern(
        &self,
        pat: &PatternPlan,
        row: &[Value],
        emit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<()> {
        let mut st = State {
            row: row.to_vec(),
            bound: Vec::new(),
            used: Vec::new(),
            labels: Vec::new(),
            types: Vec::new(),
            done: vec![false; pat.parts.len()],
        };
        st.row.resize(pat.out_width.max(row.len()), Value::Null);
        st.bound = (0..st.row.len())
            .map(|i| i < pat.in_width.min(row.len()))
            .collect();
        for part in &pat.parts {
            let mut ls = Vec::new();
            for n in &part.nodes {
                // None: a label the store has never seen, so nothing can match.
                let ids: Option<Vec<u32>> =
                    n.labels.iter().map(|l| self.store.label_id(l)).collect();
                ls.push(ids);
            }
            st.labels.push(ls);
            let mut ts = Vec::new();
            for r in &part.rels {
                ts.push(if r.types.is_empty() {
                    None
                } else {
                    Some(
                        r.types
                            .iter()
                            .filter_map(|t| self.store.rel_type_id(t))
                            .collect::<Vec<u32>>(),
                    )
                });
            }
            st.types.push(ts);
        }
        self.match_part(pat, 0, &mut st, emit)?;
        Ok(())
    }

    fn match_part(
        &self,
        pat: &PatternPlan,
        _pi: usize,
        st: &mut State,
        emit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<bool> {
        // Pick the remaining part with the cheapest anchor among those whose property maps
        // can be evaluated now (the first remaining part in written order always can).
        let mut best: Option<(usize, usize, usize)> = None; // (part, position, cost)
        for (pi, part) in pat.parts.iter().enumerate() {
            if st.done[pi]
                || !part
                    .deps
                    .iter()
                    .all(|&s| st.bound.get(s).copied().unwrap_or(false))
            {
                continue;
            }
            match self.anchor_cost(pi, part, st)? {
                None => return Ok(true),
                Some((pos, cost)) => {
                    if best.is_none_or(|(_, _, c)| cost < c) {
                        best = Some((pi, pos, cost));
                    }
                }
            }
        }
        let Some((pi, anchor, _)) = best else {
            return emit(&st.row);
        };
        let part = &pat.parts[pi];
        let candidates = self.anchor_candidates(pi, part, anchor, st)?;
        let mut steps = Vec::new();
        for i in anchor..part.rels.len() {
            steps.push((i, true));
        }
        for i in (0..anchor).rev() {
            steps.push((i, false));
        }
        st.done[pi] = true;
        let mut result = Ok(true);
        for c in candidates {
            if let Err(e) = self.tick() {
                result = Err(e);
                break;
            }
            match self.bind_node(pi, anchor, &part.nodes[anchor], c, st) {
                Err(e) => {
                    result = Err(e);
                    break;
                }
                Ok(None) => {}
                Ok(Some(newly)) => {
                    let go = if let Some(all) = part.shortest {
                        self.shortest(pat, pi, anchor, c, all, st, emit)
                    } else {
                        self.run_steps(pat, pi, &steps, 0, st, emit)
                    };
                    if newly {
                        st.bound[part.nodes[anchor].slot] = false;
                    }
                    match go {
                        Ok(true) => {}
                        other => {
                            result = other;
                            break;
                        }
                    }
                }
            }
        }
        st.done[pi] = false;
        result
    }

    /// The cheapest node position to start part `pi` from, with its estimated candidate
    /// count; `None` when the part cannot match at all (unknown label, bound variable that is
    /// not a node). Bound nodes cost 0, index lookups their hit count, labels their size.
    fn anchor_cost(
        &self,
        pi: usize,
        part: &PartPlan,
        st: &State,
    ) -> Result<Option<(usize, usize)>> {
        let mut best: Option<(usize, usize)> = None;
        for (i, n) in part.nodes.iter().enumerate() {
            if part.self_dep && i > 0 {
                break;
            }
            if st.bound[n.slot] {
                return Ok(match &st.row[n.slot] {
                    Value::Node(_) => Some((i, 0)),
                    _ => None,
                });
            }
            let Some(label_ids) = &st.labels[pi][i] else {
                return Ok(None);
            };
            let mut cost = label_ids
                .iter()
                .map(|&l| self.store.label_count(l))
                .min()
                .unwrap_or(self.store.node_count());
            for (k, e) in n.props.iter().chain(&n.hints) {
                if !self.evaluable(e, st) {
                    continue;
                }
                let v = self.eval(e, &st.row)?;
                if let Some(c) = self.store.index_lookup(k, &v) {
                    cost = cost.min(c.len());
                }
            }
            if best.is_none_or(|(_, c)| cost < c) {
                best = Some((i, cost));
            }
        }
        Ok(best)
    }

    fn anchor_candidates(
        &self,
        pi: usize,
        part: &PartPlan,
        pos: usize,
        st: &State,
    ) -> Result<Vec<NodeId>> {
        let n = &part.nodes[pos];
        if st.bound[n.slot] {
            return Ok(match &st.row[n.slot] {
                Value::Node(id) => vec![*id],
                _ => Vec::new(),
            });
        }
        let mut best: Option<Vec<NodeId>> = None;
        for (k, e) in n.props.iter().chain(&n.hints) {
            if !self.evaluable(e, st) {
                continue;
            }
            let v = self.eval(e, &st.row)?;
            if let Some(c) = self.store.index_lookup(k, &v) {
                if best.as_ref().is_none_or(|b| c.len() < b.len()) {
                    best = Some(c);
                }
            }
        }
        let ids = st.labels[pi][pos].as_deref().unwrap_or(&[]);
        let label_best = ids
            .iter()
            .copied()
            .min_by_key(|&l| self.store.label_count(l));
        Ok(match (best, label_best) {
            (Some(c), Some(l)) if self.store.label_count(l) < c.len() => {
                self.store.nodes_with_label(l)
            }
            (Some(c), _) => c,
            (None, Some(l)) => self.store.nodes_with_label(l),
            (None, None) => (0..self.store.node_count() as NodeId).collect(),
        })
    }

    fn evaluable(&self, e: &Expr, st: &State) -> bool {
        let mut ok = true;
        e.visit_slots(&mut |s| ok &= st.bound.get(s).copied().unwrap_or(false));
        ok
    }

    /// Checks node `n` against a node pattern and binds it. `Some(true)`: newly bound,
    /// `Some(false)`: was already bound to `n`, `None`: no match.
    fn bind_node(
        &self,
        pi: usize,
        pos: usize,
        np: &NodePat,
        n: NodeId,
        st: &mut State,
    ) -> Result<Option<bool>> {
        // A variable bound earlier must be the same node, and still satisfy this occurrence's
        // labels and properties (`MATCH (a)-->(x), (a:L {p: 1})`).
        let was_bound = st.bound[np.slot];
        if was_bound && !matches!(&st.row[np.slot], Value::Node(m) if *m == n) {
            return Ok(None);
        }
        let Some(labels) = &st.labels[pi][pos] else {
            return Ok(None);
        };
        if !labels.iter().all(|&l| self.store.has_label(n, l)) {
            return Ok(None);
        }
        for (k, e) in &np.props {
            let want = self.eval(e, &st.row)?;
            if self.store.node_prop(n, k).cypher_eq(&want) != Some(true) {
                return Ok(None);
            }
        }
        if let Some(e) = &np.props_expr {
            if !self.props_match(self.eval(e, &st.row)?, |k| self.store.node_prop(n, k))? {
                return Ok(None);
            }
        }
        if was_bound {
            return Ok(Some(false));
        }
        st.row[np.slot] = Value::Node(n);
        st.bound[np.slot] = true;
        Ok(Some(true))
    }

    fn props_match(&self, want: Value, get: impl Fn(&str) -> Value) -> Result<bool> {
        match want {
            Value::Map(m) => Ok(m.iter().all(|(k, v)| get(k).cypher_eq(v) == Some(true))),
            Value::Null => Ok(false),
            other => Err(type_err(format!(
                "property pattern must be a map, got {}",
                other.type_name()
            ))),
        }
    }

    fn rel_ok(&self, rp: &RelPat, r: &RelRef, row: &[Value]) -> Result<bool> {
        for (k, e) in &rp.props {
            let want = self.eval(e, row)?;
            if self.store.rel_prop(r, k).cypher_eq(&want) != Some(true) {
                return Ok(false);
            }
        }
        if let Some(e) = &rp.props_expr {
            return self.props_match(self.eval(e, row)?, |k| self.store.rel_prop(r, k));
        }
        Ok(true)
    }

    fn run_steps(
        &self,
        pat: &PatternPlan,
        pi: usize,
        steps: &[(usize, bool)],
        si: usize,
        st: &mut State,
        emit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<bool> {
        let part = &pat.parts[pi];
        let Some(&(ri, forward)) = steps.get(si) else {
            if let Some(ps) = part.path_slot {
                st.row[ps] = Value::Path(Box::new(build_path(part, &st.row)?));
            }
            return self.match_part(pat, pi + 1, st, emit);
        };
        let (from_pos, to_pos) = if forward { (ri, ri + 1) } else { (ri + 1, ri) };
        let Value::Node(from) = st.row[part.nodes[from_pos].slot] else {
            return Ok(true);
        };
        let rp = &part.rels[ri];
        let dir = match (rp.dir, forward) {
            (Dir::Both, _) => Dir::Both,
            (d, true) => d,
            (Dir::Out, false) => Dir::In,
            (Dir::In, false) => Dir::Out,
        };
        let types = st.types[pi][ri].clone();
        if let Some(range) = rp.range {
            let mut path = Vec::new();
            return self.varlen(
                pat,
                pi,
                steps,
                si,
                st,
                emit,
                from,
                dir,
                types.as_deref(),
                range,
                &mut path,
                to_pos,
                forward,
            );
        }
        let mut edges = Vec::new();
        self.store.expand(from, dir, types.as_deref(), &mut edges);
        for (r, other) in edges {
            self.tick()?;
            if st.used.contains(&(r.id, part.group)) {
                continue;
            }
            let rel_bound = st.bound[rp.slot];
            if rel_bound {
                match &st.row[rp.slot] {
                    Value::Rel(b) if b.id == r.id => {}
                    _ => continue,
                }
            }
            if !self.rel_ok(rp, &r, &st.row)? {
                continue;
            }
            st.row[rp.slot] = Value::Rel(r);
            st.bound[rp.slot] = true;
            st.used.push((r.id, part.group));
            let res = match self.bind_node(pi, to_pos, &part.nodes[to_pos], other, st)? {
                Some(newly) => {
                    let go = self.run_steps(pat, pi, steps, si + 1, st, emit);
                    if newly {
                        st.bound[part.nodes[to_pos].slot] = false;
                    }
                    go?
                }
                None => true,
            };
            st.used.pop();
            if !rel_bound {
                st.bound[rp.slot] = false;
            }
            if !res {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Breadth-first search for the shortest path(s) from the anchored end of a
    /// `shortestPath` part to every node the other end accepts.
    #[allow(clippy::too_many_arguments)]
    fn shortest(
        &self,
        pat: &PatternPlan,
        pi: usize,
        anchor: usize,
        src: NodeId,
        all: bool,
        st: &mut State,
        emit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<bool> {
        let part = &pat.parts[pi];
        let (Some(rp), Some(to)) = (part.rels.first(), part.nodes.get(1 - anchor)) else {
            return Ok(true);
        };
        let (min, max) = rp.range.unwrap_or((1, Some(1)));
        let dir = match (rp.dir, anchor) {
            (Dir::Both, _) => Dir::Both,
            (d, 0) => d,
            (Dir::Out, _) => Dir::In,
            (Dir::In, _) => Dir::Out,
        };
        let types = st.types[pi][0].clone();
        let target = match (st.bound[to.slot], &st.row[to.slot]) {
            (true, Value::Node(n)) => Some(*n),
            (true, _) => return Ok(true),
            _ => None,
        };
        // parents[v] = edges (and their other end) that reach v on a shortest path.
        let mut depth_of: HashMap<NodeId, u32> = HashMap::from([(src, 0)]);
        let mut parents: HashMap<NodeId, Vec<(RelRef, NodeId)>> = HashMap::new();
        let mut order = Vec::new();
        if min == 0 {
            order.push(src);
        }
        let mut frontier = vec![src];
        let mut depth = 0;
        let mut edges = Vec::new();
        while !frontier.is_empty() && max.is_none_or(|m| depth < m) {
            if target.is_some_and(|t| depth_of.contains_key(&t) && t != src) {
                break;
            }
            depth += 1;
            let mut next = Vec::new();
            for &u in &frontier {
                edges.clear();
                self.store.expand(u, dir, types.as_deref(), &mut edges);
                for &(r, v) in &edges {
                    self.tick()?;
                    if !self.rel_ok(rp, &r, &st.row)? {
                        continue;
                    }
                    match depth_of.get(&v) {
                        None => {
                            depth_of.insert(v, depth);
                            parents.insert(v, vec![(r, u)]);
                            next.push(v);
                            order.push(v);
                        }
                        Some(&d) if d == depth && all => parents.entry(v).or_default().push((r, u)),
                        _ => {}
                    }
                }
            }
            frontier = next;
        }
        for v in order {
            if target.is_some_and(|t| t != v) {
                continue;
            }
            let Some(newly) = self.bind_node(pi, 1 - anchor, to, v, st)? else {
                continue;
            };
            // Every shortest path from src to v (one unless `all`), as relationship lists.
            let mut paths: Vec<Vec<RelRef>> = Vec::new();
            let mut path_bytes = 0u64;
            let mut stack: Vec<(NodeId, Vec<RelRef>)> = vec![(v, Vec::new())];
            while let Some((n, tail)) = stack.pop() {
                self.tick()?;
                if n == src {
                    let mut p = tail;
                    p.reverse();
                    // Two nodes can be joined by exponentially many shortest paths.
                    path_bytes += 24 + (p.len() * std::mem::size_of::<RelRef>()) as u64;
                    self.precheck(path_bytes)?;
                    paths.push(p);
                    if !all {
                        break;
                    }
                    continue;
                }
                for &(r, u) in parents.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
                    let mut t = tail.clone();
                    t.push(r);
                    stack.push((u, t));
                    if !all {
                        break;
                    }
                }
            }
            let mut go = Ok(true);
            for mut p in paths {
                if anchor == 1 {
                    p.reverse();
                }
                st.row[rp.slot] = Value::List(p.into_iter().map(Value::Rel).collect());
                st.bound[rp.slot] = true;
                go = self.run_steps(pat, pi, &[], 0, st, emit);
                st.bound[rp.slot] = false;
                if !matches!(go, Ok(true)) {
                    break;
                }
            }
            if newly {
                st.bound[to.slot] = false;
            }
            if !go? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    #[allow(clippy::too_many_arguments)]
    fn varlen(
        &self,
        pat: &PatternPlan,
        pi: usize,
        steps: &[(usize, bool)],
        si: usize,
        st: &mut State,
        emit: &mut dyn FnMut(&[Value]) -> Result<bool>,
        cur: NodeId,
        dir: Dir,
        types: Option<&[u32]>,
        range: (u32, Option<u32>),
        path: &mut Vec<RelRef>,
        to_pos: usize,
        forward: bool,
    ) -> Result<bool> {
        self.tick()?;
        let part = &pat.parts[pi];
        let rp = &part.rels[steps[si].0];
        let depth = path.len() as u32;
        if depth >= range.0 {
            // An anonymous relationship outside a path variable is never read: its list is
            // not built, so rows do not carry whole walks.
            st.row[rp.slot] = if rp.named || part.path_slot.is_some() {
                let mut list: Vec<Value> = path.iter().map(|r| Value::Rel(*r)).collect();
                if !forward {
                    list.reverse();
                }
                Value::List(list)
            } else {
                Value::Null
            };
            st.bound[rp.slot] = true;
            let res = match self.bind_node(pi, to_pos, &part.nodes[to_pos], cur, st)? {
                Some(newly) => {
                    let go = self.run_steps(pat, pi, steps, si + 1, st, emit);
                    if newly {
                        st.bound[part.nodes[to_pos].slot] = false;
                    }
                    go?
                }
                None => true,
            };
            st.bound[rp.slot] = false;
            if !res {
                return Ok(false);
            }
        }
        if range.1.is_some_and(|m| depth >= m) {
            return Ok(true);
        }
        let mut edges = Vec::new();
        self.store.expand(cur, dir, types, &mut edges);
        if range.1.is_none() && depth >= self.budget.max_depth {
            // Unbounded `*`: going on is allowed only if no walk can be extended.
            for (r, _) in &edges {
                if !st.used.contains(&(r.id, part.group)) && self.rel_ok(rp, r, &st.row)? {
                    return Err(budget_err(format!(
                        "depth: an unbounded variable-length relationship went deeper than {0} hops (the maximum for `*` without an upper bound); write an explicit bound such as `*1..{0}`",
                        self.budget.max_depth
                    )));
                }
            }
        }
        for (r, other) in edges {
            // Path edges join `used`, so relationships matched later in the pattern cannot
            // reuse them either.
            if st.used.contains(&(r.id, part.group)) {
                continue;
            }
            if !self.rel_ok(rp, &r, &st.row)? {
                continue;
            }
            path.push(r);
            st.used.push((r.id, part.group));
            let go = self.varlen(
                pat, pi, steps, si, st, emit, other, dir, types, range, path, to_pos, forward,
            );
            st.used.pop();
            path.pop();
            if !go? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    // ----------------------------------------------------------------- expressions

    /// Evaluates an expression. Every value an expression *builds* (concatenations, list and
    /// map literals, function results, comprehensions, reduce steps) is checked against the
    /// per-value cap and the byte budget before it can be kept or grown further.
    pub fn eval(&self, e: &Expr, row: &[Value]) -> Result<Value> {
        let v = self.eval_inner(e, row)?;
        if matches!(
            e,
            Expr::Bin(..)
                | Expr::List(_)
                | Expr::Map(_)
                | Expr::MapProj(..)
                | Expr::Call(..)
                | Expr::ListComp { .. }
                | Expr::Reduce { .. }
                | Expr::PatternComp { .. }
        ) {
            self.check_value(&v)?;
        }
        Ok(v)
    }

    fn eval_inner(&self, e: &Expr, row: &[Value]) -> Result<Value> {
        Ok(match e {
            Expr::Lit(v) => v.clone(),
            Expr::Param(p) => match self.params.get(p) {
                Some(v) => v.clone(),
                None => {
                    return Err(CypherError::semantic(
                        "ParameterMissing",
                        format!("expected parameter `${p}`"),
                    ))
                }
            },
            Expr::Var(s) => row.get(*s).cloned().unwrap_or(Value::Null),
            Expr::Prop(base, key) => {
                let b = self.eval(base, row)?;
                self.property(&b, key)?
            }
            Expr::Index(base, idx) => {
                let b = self.eval(base, row)?;
                let i = self.eval(idx, row)?;
                match (&b, &i) {
                    (Value::Null, _) | (_, Value::Null) => Value::Null,
                    (Value::List(xs), Value::Int(i)) => {
                        let n = xs.len() as i64;
                        let j = if *i < 0 { n + i } else { *i };
                        if j < 0 || j >= n {
                            Value::Null
                        } else {
                            xs[j as usize].clone()
                        }
                    }
                    (Value::List(_), _) => {
                        return Err(CypherError::runtime(
                            "ListElementAccessByNonInteger",
                            "list index must be an integer",
                        ))
                    }
                    (Value::Map(_) | Value::Node(_) | Value::Rel(_), Value::Str(k)) => {
                        self.property(&b, k)?
                    }
                    (Value::Map(_) | Value::Node(_) | Value::Rel(_), _) => {
                        return Err(CypherError::runtime(
                            "MapElementAccessByNonString",
                            "map key must be a string",
                        ))
                    }
                    _ => {
                        return Err(CypherError::runtime(
                            "InvalidArgumentType",
                            format!("cannot index a {}", b.type_name()),
                        ))
                    }
                }
            }
            Expr::Slice(base, lo, hi) => {
                let b = self.eval(base, row)?;
                let lo = match lo {
                    Some(x) => Some(self.eval(x, row)?),
                    None => None,
                };
                let hi = match hi {
                    Some(x) => Some(self.eval(x, row)?),
                    None => None,
                };
                match b {
                    Value::Null => Value::Null,
                    Value::List(xs) => {
                        if matches!(lo, Some(Value::Null)) || matches!(hi, Some(Value::Null)) {
                            return Ok(Value::Null);
                        }
                        let n = xs.len() as i64;
                        let norm = |v: Option<Value>, d: i64| -> Result<i64> {
                            match v {
                                None => Ok(d),
                                Some(Value::Int(i)) => {
                                    Ok((if i < 0 { n + i } else { i }).clamp(0, n))
                                }
                                Some(_) => Err(type_err("slice bounds must be integers")),
                            }
                        };
                        let a = norm(lo, 0)?;
                        let z = norm(hi, n)?;
                        if a >= z {
                            Value::List(Vec::new())
                        } else {
                            Value::List(xs[a as usize..z as usize].to_vec())
                        }
                    }
                    other => return Err(type_err(format!("cannot slice a {}", other.type_name()))),
                }
            }
            Expr::List(xs) => Value::List(
                xs.iter()
                    .map(|x| self.eval(x, row))
                    .collect::<Result<_>>()?,
            ),
            Expr::Map(entries) => {
                let mut m = BTreeMap::new();
                for (k, x) in entries {
                    m.insert(k.clone(), self.eval(x, row)?);
                }
                Value::Map(m)
            }
            Expr::MapProj(base, items) => {
                let b = self.eval(base, row)?;
                if b.is_null() {
                    return Ok(Value::Null);
                }
                let mut m = BTreeMap::new();
                for it in items {
                    match it {
                        MapItem::Prop(k) => {
                            m.insert(k.clone(), self.property(&b, k)?);
                        }
                        MapItem::All => {
                            for (k, v) in self.all_props(&b)? {
                                m.insert(k, v);
                            }
                        }
                        MapItem::Var(name, s) => {
                            m.insert(name.clone(), row.get(*s).cloned().unwrap_or(Value::Null));
                        }
                        MapItem::Entry(k, x) => {
                            m.insert(k.clone(), self.eval(x, row)?);
                        }
                    }
                }
                Value::Map(m)
            }
            Expr::Not(x) => match self.eval(x, row)? {
                Value::Bool(b) => Value::Bool(!b),
                Value::Null => Value::Null,
                other => {
                    return Err(type_err(format!(
                        "NOT needs a boolean, got {}",
                        other.type_name()
                    )))
                }
            },
            Expr::Neg(x) => match self.eval(x, row)? {
                Value::Int(i) => {
                    Value::Int(i.checked_neg().ok_or_else(|| {
                        CypherError::runtime("IntegerOverflow", "integer overflow")
                    })?)
                }
                Value::Float(f) => Value::Float(-f),
                Value::Null => Value::Null,
                other => return Err(type_err(format!("cannot negate a {}", other.type_name()))),
            },
            Expr::Bin(op, a, b) => self.binary(*op, a, b, row)?,
            Expr::IsNull(x, negated) => Value::Bool(self.eval(x, row)?.is_null() != *negated),
            Expr::HasLabels(x, labels) => match self.eval(x, row)? {
                Value::Node(n) => Value::Bool(labels.iter().all(|l| {
                    self.store
                        .label_id(l)
                        .is_some_and(|id| self.store.has_label(n, id))
                })),
                Value::Rel(r) => {
                    Value::Bool(labels.iter().all(|l| self.store.rel_type_name(r.ty) == l))
                }
                Value::Null => Value::Null,
                other => {
                    return Err(type_err(format!(
                        "cannot test labels of a {}",
                        other.type_name()
                    )))
                }
            },
            Expr::Call(name, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, row)?);
                }
                // Cypher reports a wrong argument to a function as InvalidArgumentValue.
                crate::func::call(self, name, vals).map_err(|mut e| {
                    if e.code == Some("InvalidArgumentType") && name != "range" {
                        e.code = Some("InvalidArgumentValue");
                    }
                    e
                })?
            }
            Expr::Case {
                operand,
                whens,
                els,
            } => {
                let op = match operand {
                    Some(o) => Some(self.eval(o, row)?),
                    None => None,
                };
                for (w, t) in whens {
                    let wv = self.eval(w, row)?;
                    let hit = match &op {
                        Some(o) => o.cypher_eq(&wv) == Some(true),
                        None => truthy(&wv),
                    };
                    if hit {
                        return self.eval(t, row);
                    }
                }
                match els {
                    Some(e) => self.eval(e, row)?,
                    None => Value::Null,
                }
            }
            Expr::ListComp {
                slot,
                list,
                pred,
                proj,
            } => {
                let items = match self.eval(list, row)? {
                    Value::List(xs) => xs,
                    Value::Null => return Ok(Value::Null),
                    other => {
                        return Err(type_err(format!(
                            "list comprehension over a {}",
                            other.type_name()
                        )))
                    }
                };
                let mut env = row.to_vec();
                env.resize(*slot + 1, Value::Null);
                let mut out = Vec::new();
                let mut bytes = 0u64;
                for x in items {
                    self.tick()?;
                    env[*slot] = x.clone();
                    if let Some(p) = pred {
                        if !truthy(&self.eval(p, &env)?) {
                            continue;
                        }
                    }
                    let v = match proj {
                        Some(p) => self.eval(p, &env)?,
                        None => x,
                    };
                    bytes += v.approx_bytes(self.budget.value_bytes);
                    self.precheck(bytes)?;
                    out.push(v);
                }
                Value::List(out)
            }
            Expr::Quant {
                kind,
                slot,
                list,
                pred,
            } => {
                let items = match self.eval(list, row)? {
                    Value::List(xs) => xs,
                    Value::Null => return Ok(Value::Null),
                    other => {
                        return Err(type_err(format!("quantifier over a {}", other.type_name())))
                    }
                };
                let mut env = row.to_vec();
                env.resize(*slot + 1, Value::Null);
                let (mut t, mut nulls) = (0usize, 0usize);
                for x in &items {
                    self.tick()?;
                    env[*slot] = x.clone();
                    match self.eval(pred, &env)? {
                        Value::Bool(true) => t += 1,
                        Value::Bool(false) => {}
                        _ => nulls += 1,
                    }
                }
                let f = items.len() - t - nulls;
                match kind {
                    QuantKind::All => {
                        if f > 0 {
                            Value::Bool(false)
                        } else if nulls > 0 {
                            Value::Null
                        } else {
                            Value::Bool(true)
                        }
                    }
                    QuantKind::Any => {
                        if t > 0 {
                            Value::Bool(true)
                        } else if nulls > 0 {
                            Value::Null
                        } else {
                            Value::Bool(false)
                        }
                    }
                    QuantKind::None => {
                        if t > 0 {
                            Value::Bool(false)
                        } else if nulls > 0 {
                            Value::Null
                        } else {
                            Value::Bool(true)
                        }
                    }
                    QuantKind::Single => {
                        if t > 1 {
                            Value::Bool(false)
                        } else if nulls > 0 {
                            Value::Null
                        } else {
                            Value::Bool(t == 1)
                        }
                    }
                }
            }
            Expr::Reduce {
                acc,
                init,
                slot,
                list,
                expr,
            } => {
                let mut a = self.eval(init, row)?;
                let items = match self.eval(list, row)? {
                    Value::List(xs) => xs,
                    Value::Null => return Ok(Value::Null),
                    other => return Err(type_err(format!("reduce over a {}", other.type_name()))),
                };
                let mut env = row.to_vec();
                env.resize((*slot).max(*acc) + 1, Value::Null);
                for x in items {
                    self.tick()?;
                    env[*acc] = a;
                    env[*slot] = x;
                    a = self.eval(expr, &env)?;
                }
                a
            }
            Expr::Exists(p) => {
                let mut found = false;
                self.match_pattern(p, row, &mut |_| {
                    found = true;
                    Ok(false)
                })?;
                Value::Bool(found)
            }
            Expr::Subquery {
                count,
                pattern,
                filter,
            } => {
                let mut n = 0i64;
                self.match_pattern(pattern, row, &mut |r| {
                    if let Some(f) = filter {
                        if !truthy(&self.eval(f, r)?) {
                            return Ok(true);
                        }
                    }
                    n += 1;
                    self.tick()?;
                    Ok(*count)
                })?;
                if *count {
                    Value::Int(n)
                } else {
                    Value::Bool(n > 0)
                }
            }
            Expr::PatternComp {
                pattern,
                pred,
                proj,
            } => {
                let mut out = Vec::new();
                let mut bytes = 0u64;
                self.match_pattern(pattern, row, &mut |r| {
                    if let Some(p) = pred {
                        if !truthy(&self.eval(p, r)?) {
                            return Ok(true);
                        }
                    }
                    let v = self.eval(proj, r)?;
                    bytes += v.approx_bytes(self.budget.value_bytes);
                    self.precheck(bytes)?;
                    out.push(v);
                    self.add_rows(1)?;
                    Ok(true)
                })?;
                Value::List(out)
            }
        })
    }

    pub fn property(&self, b: &Value, key: &str) -> Result<Value> {
        Ok(match b {
            Value::Null => Value::Null,
            Value::Node(n) => self.store.node_prop(*n, key),
            Value::Rel(r) => self.store.rel_prop(r, key),
            Value::Map(m) => m.get(key).cloned().unwrap_or(Value::Null),
            other => {
                return Err(type_err(format!(
                    "cannot read property `{key}` of a {}",
                    other.type_name()
                )))
            }
        })
    }

    pub fn all_props(&self, b: &Value) -> Result<BTreeMap<String, Value>> {
        Ok(match b {
            Value::Node(n) => self.store.node_props(*n),
            Value::Rel(r) => self.store.rel_props(r),
            Value::Map(m) => m.clone(),
            Value::Null => BTreeMap::new(),
            other => {
                return Err(type_err(format!(
                    "a {} has no properties",
                    other.type_name()
                )))
            }
        })
    }

    fn binary(&self, op: BinOp, a: &Expr, b: &Expr, row: &[Value]) -> Result<Value> {
        // Three-valued logic, evaluated left to right.
        if matches!(op, BinOp::And | BinOp::Or | BinOp::Xor) {
            let l = to_bool3(self.eval(a, row)?)?;
            if op == BinOp::And && l == Some(false) {
                // Still type-check the right side, as Cypher does not short-circuit errors away.
                let r = to_bool3(self.eval(b, row)?)?;
                let _ = r;
                return Ok(Value::Bool(false));
            }
            if op == BinOp::Or && l == Some(true) {
                let _ = to_bool3(self.eval(b, row)?)?;
                return Ok(Value::Bool(true));
            }
            let r = to_bool3(self.eval(b, row)?)?;
            return Ok(match (op, l, r) {
                (BinOp::And, _, Some(false)) => Value::Bool(false),
                (BinOp::And, Some(true), Some(true)) => Value::Bool(true),
                (BinOp::Or, _, Some(true)) => Value::Bool(true),
                (BinOp::Or, Some(false), Some(false)) => Value::Bool(false),
                (BinOp::Xor, Some(x), Some(y)) => Value::Bool(x != y),
                _ => Value::Null,
            });
        }
        let l = self.eval(a, row)?;
        let r = self.eval(b, row)?;
        crate::func::binary(self, op, l, r)
    }

    pub(crate) fn regex(&self, pattern: &str) -> Result<regex::Regex> {
        if let Some(r) = self.regexes.borrow().get(pattern) {
            return Ok(r.clone());
        }
        let re = regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
            .size_limit(1 << 20)
            .build()
            .map_err(|e| {
                CypherError::runtime(
                    "InvalidArgumentValue",
                    format!(
                        "invalid regular expression: {}",
                        e.to_string().lines().last().unwrap_or("")
                    ),
                )
            })?;
        let mut cache = self.regexes.borrow_mut();
        if cache.len() >= REGEX_CACHE {
            cache.clear();
        }
        cache.insert(pattern.to_string(), re.clone());
        Ok(re)
    }
}

struct State {
    row: Vec<Value>,
    bound: Vec<bool>,
    /// Relationships bound in the current match with their clause group (a relationship may
    /// be used once per MATCH clause).
    used: Vec<(u64, usize)>,
    /// Per part, per node position: resolved label ids (`None`: an unknown label).
    labels: Vec<Vec<Option<Vec<u32>>>>,
    /// Per part, per relationship: resolved type ids (`None`: any type).
    types: Vec<Vec<Option<Vec<u32>>>>,
    /// Parts already matched on the current search branch.
    done: Vec<bool>,
}

fn build_path(part: &PartPlan, row: &[Value]) -> Result<Path> {
    let node = |i: usize| -> Result<NodeId> {
        match row.get(part.nodes[i].slot) {
            Some(Value::Node(n)) => Ok(*n),
            _ => Err(CypherError::runtime(
                "InvalidArgumentType",
                "path node is not bound",
            )),
        }
    };
    let mut nodes = vec![node(0)?];
    let mut rels = Vec::new();
    for (i, rp) in part.rels.iter().enumerate() {
        match row.get(rp.slot) {
            Some(Value::Rel(r)) => {
                rels.push(*r);
                nodes.push(node(i + 1)?);
            }
            Some(Value::List(list)) => {
                let mut cur = *nodes.last().unwrap_or(&0);
                for v in list {
                    if let Value::Rel(r) = v {
                        rels.push(*r);
                        cur = if r.src == cur { r.dst } else { r.src };
                        nodes.push(cur);
                    }
                }
            }
            _ => {
                return Err(CypherError::runtime(
                    "InvalidArgumentType",
                    "path relationship is not bound",
                ))
            }
        }
    }
    Ok(Path { nodes, rels })
}

pub fn truthy(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

fn to_bool3(v: Value) -> Result<Option<bool>> {
    match v {
        Value::Bool(b) => Ok(Some(b)),
        Value::Null => Ok(None),
        other => Err(type_err(format!(
            "expected a boolean, got {}",
            other.type_name()
        ))),
    }
}

fn dedup(rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    let mut seen = std::collections::HashSet::new();
    rows.into_iter()
        .filter(|r| {
            let mut k = String::new();
            for v in r {
                v.group_key(&mut k);
                k.push('|');
            }
            seen.insert(k)
        })
        .collect()
}

/// One aggregation group: a representative input row and, per aggregate, what it collected.
struct Group {
    rep: Vec<Value>,
    vals: Vec<Vec<Value>>,
    seen: Vec<std::collections::HashSet<String>>,
    counts: Vec<i64>,
    arg2: Vec<Value>,
}

/// A projection (RETURN / WITH) consuming its input one row at a time: plain items are
/// evaluated per row; aggregates keep only their groups. Everything it holds is charged to the
/// query's byte budget and released when it finishes.
struct Projector<'c, 'a, 'p> {
    ctx: &'c Ctx<'a>,
    p: &'p Projection,
    /// (output row, environment for ORDER BY / WHERE)
    outs: Vec<(Vec<Value>, Vec<Value>)>,
    index: HashMap<String, usize>,
    groups: Vec<Group>,
    /// Bytes this projector charged while running.
    held: u64,
    /// Rows a plain projection with LIMIT needs (then the input stops).
    cap: usize,
}

impl<'c, 'a, 'p> Projector<'c, 'a, 'p> {
    fn new(ctx: &'c Ctx<'a>, p: &'p Projection) -> Result<Self> {
        let cap = ctx.plain_cap(p)?;
        Ok(Projector {
            ctx,
            p,
            outs: Vec::new(),
            index: HashMap::new(),
            groups: Vec::new(),
            held: 0,
            cap,
        })
    }

    fn charge(&mut self, n: u64) -> Result<()> {
        self.held += n;
        self.ctx.charge(n)
    }

    fn new_group(&self, rep: Vec<Value>) -> Group {
        let n = self.p.aggs.len();
        Group {
            rep,
            vals: vec![Vec::new(); n],
            seen: vec![Default::default(); n],
            counts: vec![0; n],
            arg2: vec![Value::Null; n],
        }
    }

    fn needs_env(&self) -> bool {
        !self.p.order.is_empty() || self.p.filter.is_some()
    }

    /// Takes one input row; `false` when no more rows are needed.
    fn push(&mut self, mut row: Vec<Value>) -> Result<bool> {
        let ctx = self.ctx;
        let p = self.p;
        ctx.tick()?;
        if p.aggs.is_empty() {
            let mut out = Vec::with_capacity(p.items.len());
            for e in &p.items {
                out.push(ctx.eval(e, &row)?);
            }
            let env = if self.needs_env() {
                out.iter().cloned().chain(row).collect()
            } else {
                Vec::new()
            };
            let n = ctx.charge_row(&out)? + ctx.charge_row(&env)?;
            self.held += n;
            self.outs.push((out, env));
            return Ok(self.outs.len() < self.cap);
        }
        row.resize(p.in_width, Value::Null);
        let mut key = String::new();
        for (e, is_key) in p.items.iter().zip(&p.is_key) {
            if *is_key {
                ctx.eval(e, &row)?.group_key(&mut key);
                key.push('|');
            }
        }
        let gi = match self.index.get(&key) {
            Some(&g) => g,
            None => {
                let n = key.len() as u64 + 64;
                self.charge(n)?;
                let rep_bytes = ctx.charge_row(&row)?;
                self.held += rep_bytes;
                self.index.insert(key, self.groups.len());
                let g = self.new_group(row.clone());
                self.groups.push(g);
                self.groups.len() - 1
            }
        };
        for (i, a) in p.aggs.iter().enumerate() {
            let Some(arg) = &a.arg else {
                self.groups[gi].counts[i] += 1;
                continue;
            };
            let v = ctx.eval(arg, &row)?;
            if v.is_null() {
                continue;
            }
            if let Some(a2) = &a.arg2 {
                self.groups[gi].arg2[i] = ctx.eval(a2, &row)?;
            }
            if a.distinct {
                let mut k = String::new();
                v.group_key(&mut k);
                let n = k.len() as u64 + 32;
                if !self.groups[gi].seen[i].insert(k) {
                    continue;
                }
                self.charge(n)?;
            }
            if a.func == AggFn::Count && !a.distinct {
                // Counting needs no values kept.
                self.groups[gi].counts[i] += 1;
                continue;
            }
            let n = v.approx_bytes(ctx.budget.bytes);
            self.charge(n)?;
            self.groups[gi].vals[i].push(v);
        }
        Ok(true)
    }

    /// Finishes the projection: groups, DISTINCT, ORDER BY, SKIP / LIMIT, WHERE. The result
    /// rows stay charged (the next operator's input); everything else is released.
    fn finish(mut self) -> Result<Vec<Vec<Value>>> {
        let ctx = self.ctx;
        let p = self.p;
        if !p.aggs.is_empty() {
            let no_keys = !p.is_key.iter().any(|k| *k);
            if self.groups.is_empty() && no_keys {
                let g = self.new_group(vec![Value::Null; p.in_width]);
                self.groups.push(g);
            }
            let needs_env = self.needs_env();
            for g in std::mem::take(&mut self.groups) {
                ctx.tick()?;
                let mut env = g.rep;
                for (i, a) in p.aggs.iter().enumerate() {
                    let v = finish_agg(a.func, &g.vals[i], g.counts[i], &g.arg2[i])?;
                    ctx.check_value(&v)?;
                    env.push(v);
                }
                let mut out = Vec::with_capacity(p.items.len());
                for e in &p.items {
                    out.push(ctx.eval(e, &env)?);
                }
                let order_env = if needs_env {
                    out.iter().cloned().chain(env).collect()
                } else {
                    Vec::new()
                };
                let n = ctx.charge_row(&out)? + ctx.charge_row(&order_env)?;
                self.held += n;
                self.outs.push((out, order_env));
            }
        }
        let mut outs = std::mem::take(&mut self.outs);
        if p.distinct {
            let mut seen = std::collections::HashSet::new();
            let mut err = None;
            outs.retain(|(o, _)| {
                let mut k = String::new();
                for v in o {
                    v.group_key(&mut k);
                    k.push('|');
                }
                let n = k.len() as u64 + 32;
                if err.is_none() {
                    if let Err(e) = ctx.charge(n) {
                        err = Some(e);
                    }
                }
                self.held += n;
                seen.insert(k)
            });
            if let Some(e) = err {
                return Err(e);
            }
        }
        if !p.order.is_empty() {
            let mut keyed = Vec::with_capacity(outs.len());
            for (o, env) in outs {
                ctx.tick()?;
                let mut keys = Vec::with_capacity(p.order.len());
                for k in &p.order {
                    keys.push(ctx.eval(&k.expr, &env)?);
                }
                keyed.push((keys, (o, env)));
            }
            // The sort cannot be interrupted, so once the deadline passes every comparison
            // answers at once and the query stops right after it.
            let mut compared = 0u32;
            let mut late = false;
            keyed.sort_by(|(a, _), (b, _)| {
                if late {
                    return std::cmp::Ordering::Equal;
                }
                compared = compared.wrapping_add(1);
                if compared.is_multiple_of(4096) && ctx.past_deadline() {
                    late = true;
                    return std::cmp::Ordering::Equal;
                }
                for (i, k) in p.order.iter().enumerate() {
                    let o = a[i].order_cmp(&b[i]);
                    let o = if k.descending { o.reverse() } else { o };
                    if o != std::cmp::Ordering::Equal {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            });
            if late {
                discard(keyed.into_iter());
                return Err(budget_err(format!(
                    "time: the query ran longer than {} ms (while sorting)",
                    ctx.budget.time.as_millis()
                )));
            }
            outs = keyed.into_iter().map(|(_, o)| o).collect();
        }
        let skip = ctx.count_arg(&p.skip, "SKIP")?.unwrap_or(0);
        let limit = ctx.count_arg(&p.limit, "LIMIT")?;
        let mut result = Vec::new();
        for (o, env) in outs
            .into_iter()
            .skip(skip)
            .take(limit.unwrap_or(usize::MAX))
        {
            if let Some(f) = &p.filter {
                if !truthy(&ctx.eval(f, &env)?) {
                    continue;
                }
            }
            result.push(o);
        }
        ctx.release(self.held);
        self.held = 0;
        for r in &result {
            ctx.charge_row(r)?;
        }
        ctx.add_rows(result.len() as u64)?;
        Ok(result)
    }
}

impl Drop for Projector<'_, '_, '_> {
    fn drop(&mut self) {
        // A projection abandoned by an error gives its bytes back (finish zeroes `held`).
        self.ctx.release(self.held);
    }
}

fn finish_agg(f: AggFn, vals: &[Value], count: i64, arg2: &Value) -> Result<Value> {
    Ok(match f {
        AggFn::CountStar => Value::Int(count),
        // Non-distinct counts only count; DISTINCT ones keep the distinct values.
        AggFn::Count => Value::Int(count + vals.len() as i64),
        AggFn::Collect => Value::List(vals.to_vec()),
        AggFn::Sum => {
            let mut int: Option<i64> = Some(0);
            let mut float = 0.0;
            let mut any_float = false;
            for v in vals {
                match v {
                    Value::Int(i) => {
                        int = int.and_then(|s| s.checked_add(*i));
                        float += *i as f64;
                    }
                    Value::Float(x) => {
                        any_float = true;
                        float += x;
                    }
                    other => return Err(type_err(format!("sum() of a {}", other.type_name()))),
                }
            }
            match (any_float, int) {
                (false, Some(i)) => Value::Int(i),
                (false, None) => {
                    return Err(CypherError::runtime(
                        "IntegerOverflow",
                        "integer overflow in sum()",
                    ))
                }
                _ => Value::Float(float),
            }
        }
        AggFn::Avg => {
            if vals.is_empty() {
                return Ok(Value::Null);
            }
            let mut s = 0.0;
            for v in vals {
                match v {
                    Value::Int(_) | Value::Float(_) => s += as_f64(v),
                    other => return Err(type_err(format!("avg() of a {}", other.type_name()))),
                }
            }
            Value::Float(s / vals.len() as f64)
        }
        AggFn::Min | AggFn::Max => {
            let mut best: Option<&Value> = None;
            for v in vals {
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let o = v.order_cmp(b);
                        let better = if f == AggFn::Min {
                            o.is_lt()
                        } else {
                            o.is_gt()
                        };
                        if better {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            best.cloned().unwrap_or(Value::Null)
        }
        AggFn::StDev | AggFn::StDevP => {
            let xs: Vec<f64> = vals.iter().map(as_f64).collect();
            let n = xs.len() as f64;
            let denom = if f == AggFn::StDev { n - 1.0 } else { n };
            if xs.is_empty() || denom <= 0.0 {
                return Ok(Value::Float(0.0));
            }
            let mean = xs.iter().sum::<f64>() / n;
            Value::Float((xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / denom).sqrt())
        }
        AggFn::PercentileCont | AggFn::PercentileDisc => {
            if vals.is_empty() {
                return Ok(Value::Null);
            }
            let p = as_f64(arg2);
            if !(0.0..=1.0).contains(&p) {
                return Err(CypherError::runtime(
                    "NumberOutOfRange",
                    "percentile must be between 0.0 and 1.0",
                ));
            }
            let mut xs: Vec<&Value> = vals.iter().collect();
            xs.sort_by(|a, b| a.order_cmp(b));
            if f == AggFn::PercentileDisc {
                let idx = ((p * xs.len() as f64).ceil() as usize)
                    .saturating_sub(1)
                    .min(xs.len() - 1);
                xs[idx].clone()
            } else {
                let pos = p * (xs.len() - 1) as f64;
                let lo = pos.floor() as usize;
                let hi = pos.ceil() as usize;
                let (a, b) = (as_f64(xs[lo]), as_f64(xs[hi.min(xs.len() - 1)]));
                Value::Float(a + (b - a) * (pos - lo as f64))
            }
        }
    })
}

/// Whether `name` is a scalar function we implement (for the semantic check).
/// What scalar functions see of the running query.
impl crate::func::Env for Ctx<'_> {
    fn store(&self) -> &dyn Store {
        self.store
    }
    fn all_props(&self, v: &Value) -> Result<BTreeMap<String, Value>> {
        Ctx::all_props(self, v)
    }
    fn precheck(&self, bytes: u64) -> Result<()> {
        Ctx::precheck(self, bytes)
    }
    fn regex(&self, pattern: &str) -> Result<regex::Regex> {
        Ctx::regex(self, pattern)
    }
}

/// Drops a large collection on a background thread (small ones right here).
fn discard<I: ExactSizeIterator + Send + 'static>(x: I) {
    if x.len() > 10_000 {
        let _ = std::thread::Builder::new()
            .name("cypher-free".into())
            .spawn(move || drop(x));
    }
}
