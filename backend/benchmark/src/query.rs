//! Structured graph queries (the `graph_query` of a record) and their direct evaluation.
//!
//! A [`Query`] is a small pattern: nodes that are either a class (a node type, a variable) or
//! one named entity, and typed edges between them. Node 0 is the question node; its bindings
//! are the answers. Semantics follow one Cypher `MATCH` of comma-joined path patterns:
//! variables may bind to any node of their type (homomorphism), but one graph edge serves at
//! most one query edge (Cypher's relationship uniqueness), and the question node never binds
//! to a named entity of the query (the rendered Cypher says so in a `WHERE`).
//!
//! Evaluation runs over a [`View`]: the graph with an optional [`EdgeMask`] of removed edges,
//! so G = Gc − R is never copied.

use serde::{Deserialize, Serialize};
use serenqa_graph::{EdgeId, Graph, NodeId, RelId, TypeId};

/// One query node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum QNode {
    /// A variable ranging over nodes of a type.
    Class(TypeId),
    /// One named entity.
    Entity(NodeId),
}

/// One query edge in the stored orientation of its relation: `start` is the source side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QEdge {
    pub start: usize,
    pub end: usize,
    pub rel: RelId,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    pub nodes: Vec<QNode>,
    pub edges: Vec<QEdge>,
}

/// Removed edges R as a bitset over edge ids (1 bit per edge: 256 KB for Hetionet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeMask {
    bits: Vec<u64>,
    count: usize,
}

impl EdgeMask {
    pub fn new(edge_count: usize) -> Self {
        EdgeMask {
            bits: vec![0; edge_count.div_ceil(64)],
            count: 0,
        }
    }
    pub fn insert(&mut self, e: EdgeId) -> bool {
        let (w, b) = (e as usize / 64, e % 64);
        let fresh = self.bits[w] & (1 << b) == 0;
        self.bits[w] |= 1 << b;
        self.count += fresh as usize;
        fresh
    }
    pub fn remove(&mut self, e: EdgeId) {
        let (w, b) = (e as usize / 64, e % 64);
        if self.bits[w] & (1 << b) != 0 {
            self.bits[w] &= !(1 << b);
            self.count -= 1;
        }
    }
    #[inline]
    pub fn contains(&self, e: EdgeId) -> bool {
        self.bits
            .get(e as usize / 64)
            .is_some_and(|w| w & (1 << (e % 64)) != 0)
    }
    pub fn len(&self) -> usize {
        self.count
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Removed edge ids in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = EdgeId> + '_ {
        self.bits.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits & (1u64 << b) != 0)
                .map(move |b| (w * 64 + b) as EdgeId)
        })
    }
}

/// The graph seen through a mask of removed edges.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub graph: &'a Graph,
    pub removed: Option<&'a EdgeMask>,
}

impl<'a> View<'a> {
    pub fn full(graph: &'a Graph) -> Self {
        View {
            graph,
            removed: None,
        }
    }
    pub fn without(graph: &'a Graph, removed: &'a EdgeMask) -> Self {
        View {
            graph,
            removed: Some(removed),
        }
    }
    #[inline]
    fn hidden(&self, e: EdgeId) -> bool {
        self.removed.is_some_and(|m| m.contains(e))
    }

    /// Edges of relation `rel` at `u` with `u` on the given side, as (edge id, other end).
    /// A symmetric relation (see [`symmetric`]) is matched in both stored orientations.
    pub fn incident(
        &self,
        u: NodeId,
        rel: RelId,
        u_is_start: bool,
        out: &mut Vec<(EdgeId, NodeId)>,
    ) {
        out.clear();
        let g = self.graph;
        let sym = symmetric(g, rel);
        if u_is_start || sym {
            let (_, targets, _) = g.out_csr();
            for i in g.out_range_rel(u, rel) {
                let e = i as EdgeId;
                if !self.hidden(e) {
                    out.push((e, targets[i]));
                }
            }
        }
        if !u_is_start || sym {
            let (_, sources, _, ids) = g.in_csr();
            for i in g.in_range_rel(u, rel) {
                // A self-loop was already listed from the out side.
                if (sym && sources[i] == u) || self.hidden(ids[i]) {
                    continue;
                }
                out.push((ids[i], sources[i]));
            }
        }
    }

    /// Whether an edge of `rel` joins `a` and `b` in the query orientation (either way when
    /// symmetric) and is not removed.
    pub fn connected(&self, a: NodeId, rel: RelId, b: NodeId) -> bool {
        let mut buf = Vec::new();
        self.incident(a, rel, true, &mut buf);
        buf.iter().any(|&(_, o)| o == b)
    }
}

/// A relation is matched without direction when its stored direction carries no meaning and
/// both ends have the same type (Hetionet stores `RESEMBLES_DrD` once per pair).
pub fn symmetric(g: &Graph, rel: RelId) -> bool {
    let r = g.relation(rel);
    !r.directed && (r.source_type.is_none() || r.source_type == r.target_type)
}

/// The evaluation ran past its work budget (edge visits); the caller treats the query as
/// too broad.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("query evaluation exceeded its budget of {0} edge visits")]
pub struct OverBudget(pub u64);

/// Per-query-edge sets of graph edges used by the witnesses of one answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witnesses {
    pub count: usize,
    /// `edges[k]`: sorted distinct graph edges matched by query edge k in some witness.
    pub edges: Vec<Vec<EdgeId>>,
}

struct Evaluator<'q, 'a> {
    view: View<'a>,
    q: &'q Query,
    /// Query edges in an order where each has an endpoint bound by the edges before it.
    order: Vec<usize>,
    budget: u64,
    work: u64,
    buf: Vec<Vec<(EdgeId, NodeId)>>,
}

impl<'q, 'a> Evaluator<'q, 'a> {
    fn new(view: View<'a>, q: &'q Query, budget: u64) -> Self {
        let mut bound = vec![false; q.nodes.len()];
        if !bound.is_empty() {
            bound[0] = true;
        }
        let mut order = Vec::with_capacity(q.edges.len());
        let mut left: Vec<usize> = (0..q.edges.len()).collect();
        while !left.is_empty() {
            let Some(pos) = left
                .iter()
                .position(|&k| bound[q.edges[k].start] || bound[q.edges[k].end])
            else {
                break; // a disconnected part; `valid` rejects such queries
            };
            let k = left.remove(pos);
            bound[q.edges[k].start] = true;
            bound[q.edges[k].end] = true;
            order.push(k);
        }
        let depth = order.len();
        Evaluator {
            view,
            q,
            order,
            budget,
            work: 0,
            buf: vec![Vec::new(); depth],
        }
    }

    fn charge(&mut self, n: usize) -> Result<(), OverBudget> {
        self.work += n as u64 + 1;
        if self.work > self.budget {
            Err(OverBudget(self.budget))
        } else {
            Ok(())
        }
    }

    fn fits(&self, node: usize, n: NodeId) -> bool {
        match self.q.nodes[node] {
            QNode::Class(t) => self.view.graph.node_type(n) == t,
            QNode::Entity(e) => e == n,
        }
    }

    /// Candidate sets for the query nodes (sorted), propagated from the entities towards the
    /// question node only (semi-joins from the leaves up): exact for node 0 of an acyclic
    /// query, a superset otherwise; the witness search decides. Propagating away from node
    /// 0 or into entities would only prune what the search prunes anyway, at a high cost
    /// for hub entities.
    fn domains(&mut self) -> Result<Vec<Option<Vec<NodeId>>>, OverBudget> {
        let q = self.q;
        let mut dom: Vec<Option<Vec<NodeId>>> = q
            .nodes
            .iter()
            .map(|n| {
                if let QNode::Entity(e) = n {
                    Some(vec![*e])
                } else {
                    None
                }
            })
            .collect();
        // Hop distance from node 0.
        let mut depth = vec![usize::MAX; q.nodes.len()];
        if !depth.is_empty() {
            depth[0] = 0;
        }
        for _ in 0..q.nodes.len() {
            for e in &q.edges {
                let (a, b) = (depth[e.start], depth[e.end]);
                if a != usize::MAX && b > a + 1 {
                    depth[e.end] = a + 1;
                }
                if b != usize::MAX && a > b + 1 {
                    depth[e.start] = b + 1;
                }
            }
        }
        // Edge sides (edge, from, to, from_is_start) pointing at node 0, deepest first.
        let mut sides: Vec<(usize, usize, usize, bool)> = Vec::new();
        for (k, e) in q.edges.iter().enumerate() {
            for (from, to, from_is_start) in [(e.start, e.end, true), (e.end, e.start, false)] {
                if matches!(q.nodes[to], QNode::Class(_)) && depth[to] <= depth[from] {
                    sides.push((k, from, to, from_is_start));
                }
            }
        }
        sides.sort_by_key(|&(k, from, _, _)| (std::cmp::Reverse(depth[from]), k));
        let mut buf = Vec::new();
        // version[n] bumps when dom[n] changes; a side is re-propagated only when its source
        // domain changed since it was last used.
        let mut version = vec![1u32; q.nodes.len()];
        let mut used = vec![0u32; sides.len()];
        for _round in 0..=q.nodes.len() + 1 {
            let mut changed = false;
            for (si, &(k, from, to, from_is_start)) in sides.iter().enumerate() {
                if dom[from].is_none() || used[si] == version[from] {
                    continue;
                }
                used[si] = version[from];
                let rel = q.edges[k].rel;
                let Some(src) = dom[from].clone() else {
                    continue;
                };
                let mut next = Vec::new();
                for &u in &src {
                    self.view.incident(u, rel, from_is_start, &mut buf);
                    self.charge(buf.len())?;
                    next.extend(buf.iter().map(|&(_, o)| o).filter(|&o| self.fits(to, o)));
                }
                next.sort_unstable();
                next.dedup();
                let new = match &dom[to] {
                    None => next,
                    Some(old) => old
                        .iter()
                        .copied()
                        .filter(|x| next.binary_search(x).is_ok())
                        .collect(),
                };
                if dom[to].as_ref() != Some(&new) {
                    dom[to] = Some(new);
                    version[to] += 1;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        Ok(dom)
    }

    /// Depth-first search for witnesses with node 0 bound to `x`. `visit` gets the node
    /// bindings and the edge matched by each query edge, and returns false to stop.
    fn search(
        &mut self,
        dom: &[Option<Vec<NodeId>>],
        x: NodeId,
        visit: &mut dyn FnMut(&[NodeId], &[EdgeId]) -> bool,
    ) -> Result<(), OverBudget> {
        let mut nodes = vec![NodeId::MAX; self.q.nodes.len()];
        nodes[0] = x;
        let mut edges = vec![EdgeId::MAX; self.q.edges.len()];
        self.step(0, dom, &mut nodes, &mut edges, visit).map(|_| ())
    }

    fn step(
        &mut self,
        depth: usize,
        dom: &[Option<Vec<NodeId>>],
        nodes: &mut [NodeId],
        edges: &mut [EdgeId],
        visit: &mut dyn FnMut(&[NodeId], &[EdgeId]) -> bool,
    ) -> Result<bool, OverBudget> {
        if depth == self.order.len() {
            return Ok(visit(nodes, edges));
        }
        let k = self.order[depth];
        let qe = self.q.edges[k];
        let (from, to, from_is_start) = if nodes[qe.start] != NodeId::MAX {
            (qe.start, qe.end, true)
        } else {
            (qe.end, qe.start, false)
        };
        let mut buf = std::mem::take(&mut self.buf[depth]);
        self.view
            .incident(nodes[from], qe.rel, from_is_start, &mut buf);
        let charged = self.charge(buf.len());
        let mut go_on = true;
        if charged.is_ok() {
            for &(e, o) in &buf {
                if edges.contains(&e) {
                    continue; // relationship uniqueness
                }
                let bound_before = nodes[to];
                if bound_before != NodeId::MAX {
                    if bound_before != o {
                        continue;
                    }
                } else {
                    let ok = self.fits(to, o)
                        && dom[to].as_ref().is_none_or(|d| d.binary_search(&o).is_ok());
                    if !ok {
                        continue;
                    }
                    nodes[to] = o;
                }
                edges[k] = e;
                let r = self.step(depth + 1, dom, nodes, edges, visit);
                edges[k] = EdgeId::MAX;
                if bound_before == NodeId::MAX {
                    nodes[to] = NodeId::MAX;
                }
                match r {
                    Ok(true) => {}
                    Ok(false) => {
                        go_on = false;
                        break;
                    }
                    Err(err) => {
                        self.buf[depth] = buf;
                        return Err(err);
                    }
                }
            }
        }
        self.buf[depth] = buf;
        charged.map(|_| go_on)
    }
}

impl Query {
    /// Entities named by the query.
    pub fn entities(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes.iter().filter_map(|n| {
            if let QNode::Entity(e) = n {
                Some(*e)
            } else {
                None
            }
        })
    }

    /// Structural validity: node 0 is a class, every edge joins existing distinct nodes, the
    /// pattern is connected and names at least one entity.
    pub fn validate(&self, g: &Graph) -> Result<(), String> {
        if !matches!(self.nodes.first(), Some(QNode::Class(_))) {
            return Err("the question node (node 0) must be a class".into());
        }
        if self.entities().next().is_none() {
            return Err("the query names no entity".into());
        }
        for e in &self.edges {
            if e.start >= self.nodes.len() || e.end >= self.nodes.len() || e.start == e.end {
                return Err(format!(
                    "edge {}→{} does not join two query nodes",
                    e.start, e.end
                ));
            }
            if e.rel as usize >= g.relation_count() {
                return Err(format!("unknown relation id {}", e.rel));
            }
        }
        let ev = Evaluator::new(View::full(g), self, 0);
        if ev.order.len() != self.edges.len() {
            return Err("the query pattern is not connected".into());
        }
        Ok(())
    }

    /// The answer set on `view`: sorted node ids bound to node 0 by at least one witness,
    /// excluding the query's own entities.
    pub fn answers(&self, view: View<'_>, budget: u64) -> Result<Vec<NodeId>, OverBudget> {
        self.answers_upto(view, budget, usize::MAX)
    }

    /// Like [`Query::answers`], but stops early once more than `limit` answers are certain
    /// (then returns at least `limit + 1` of them); used to reject broad samples cheaply.
    pub fn answers_upto(
        &self,
        view: View<'_>,
        budget: u64,
        limit: usize,
    ) -> Result<Vec<NodeId>, OverBudget> {
        let mut ev = Evaluator::new(view, self, budget);
        let dom = ev.domains()?;
        let named: Vec<NodeId> = self.entities().collect();
        let acyclic = self.edges.len() < self.nodes.len();
        let d0 = dom[0].as_deref().unwrap_or(&[]);
        if acyclic && limit != usize::MAX && d0.len() > limit + named.len() {
            // For a tree, every candidate of node 0 has a witness.
            return Ok(d0.iter().copied().filter(|x| !named.contains(x)).collect());
        }
        let mut out = Vec::new();
        for &x in d0 {
            if named.contains(&x) {
                continue;
            }
            let mut found = false;
            ev.search(&dom, x, &mut |_, _| {
                found = true;
                false
            })?;
            if found {
                out.push(x);
            }
        }
        Ok(out)
    }

    /// Whether `x` is an answer on `view`.
    pub fn has_answer(&self, view: View<'_>, x: NodeId, budget: u64) -> Result<bool, OverBudget> {
        if self.entities().any(|e| e == x) {
            return Ok(false);
        }
        let mut ev = Evaluator::new(view, self, budget);
        let dom = ev.domains()?;
        if dom[0].as_ref().is_none_or(|d| d.binary_search(&x).is_err()) {
            return Ok(false);
        }
        let mut found = false;
        ev.search(&dom, x, &mut |_, _| {
            found = true;
            false
        })?;
        Ok(found)
    }

    /// Every witness of answer `x` on `view` (up to `max_witnesses`, else `None`): the graph
    /// edges each query edge used. Removing all edges of any one query edge's set kills `x`.
    pub fn witnesses(
        &self,
        view: View<'_>,
        x: NodeId,
        max_witnesses: usize,
        budget: u64,
    ) -> Result<Option<Witnesses>, OverBudget> {
        let mut ev = Evaluator::new(view, self, budget);
        let dom = ev.domains()?;
        let mut w = Witnesses {
            count: 0,
            edges: vec![Vec::new(); self.edges.len()],
        };
        let mut overflow = false;
        ev.search(&dom, x, &mut |_, es| {
            w.count += 1;
            for (k, &e) in es.iter().enumerate() {
                w.edges[k].push(e);
            }
            if w.count > max_witnesses {
                overflow = true;
                return false;
            }
            true
        })?;
        if overflow {
            return Ok(None);
        }
        for s in &mut w.edges {
            s.sort_unstable();
            s.dedup();
        }
        Ok(Some(w))
    }

    /// Query edges incident to the question node (the places where an answer can be cut).
    pub fn question_edges(&self) -> Vec<usize> {
        (0..self.edges.len())
            .filter(|&k| self.edges[k].start == 0 || self.edges[k].end == 0)
            .collect()
    }
}
