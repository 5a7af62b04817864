//! The in-memory graph: CSR adjacency in both directions, interned node and relation types,
//! string arenas for identifiers and names, and sorted permutations that serve as indexes.
//!
//! Memory per edge: 4 (target) + 2 (relation) out, 4 + 2 + 4 (source, relation, edge id) in,
//! plus 4 for an optional score — 16–20 bytes, so 200M edges take ~3.5 GB. Per node: 2 (type)
//! + 16 (two CSR offsets) + 12 (three index permutations) + string bytes.
//!
//! Each adjacency list is sorted by (relation, neighbour): typed expansion is a binary search
//! to a sub-slice, and the layout does not depend on input order.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::props::PropertyTable;
use crate::section::Section;
use crate::strings::StringArena;
use crate::vocab::Vocab;

/// Index of a node: dense, 0-based, 32 bits (CKG has 15.4M nodes).
pub type NodeId = u32;
/// Index of an edge: its position in the out-CSR.
pub type EdgeId = u32;
/// Index of a relation type.
pub type RelId = u16;
/// Index of a node type.
pub type TypeId = u16;

/// A relation type (Neo4j relationship type), e.g. `TREATS_CtD`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelationType {
    /// The name queries use (`TREATS_CtD`).
    pub name: String,
    /// The verb a person reads (`treats`).
    pub verb: String,
    /// Short form from the source (Hetionet metaedge `CtD`); equals `name` when there is none.
    pub abbrev: String,
    /// Node type of sources / targets when the schema fixes them.
    pub source_type: Option<TypeId>,
    pub target_type: Option<TypeId>,
    /// Whether the stored direction carries meaning (Hetionet's `Gr>G`).
    pub directed: bool,
}

/// Where a graph came from; shown in the UI and kept in snapshots.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphMeta {
    /// Short name (`hetionet`, `synthetic-ckg`, …).
    pub name: String,
    /// Human-readable description of the source files or server.
    pub source: String,
    /// True for generated graphs: the UI labels them so nobody mistakes them for data.
    pub synthetic: bool,
    /// Node and edge types removed by the subgraph filter, with counts.
    pub dropped: Vec<(String, u64)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Out,
    In,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeRef {
    pub id: EdgeId,
    pub source: NodeId,
    pub target: NodeId,
    pub rel: RelId,
}

#[derive(Clone, Debug)]
pub struct Graph {
    pub(crate) meta: GraphMeta,
    pub(crate) types: Vocab,
    pub(crate) type_display: Vec<String>,
    pub(crate) relations: Vec<RelationType>,
    pub(crate) rel_index: HashMap<String, RelId>,
    pub(crate) node_type: Section<TypeId>,
    pub(crate) ident: StringArena,
    pub(crate) name: StringArena,
    pub(crate) out_offsets: Section<u64>,
    pub(crate) out_targets: Section<NodeId>,
    pub(crate) out_rel: Section<RelId>,
    pub(crate) in_offsets: Section<u64>,
    pub(crate) in_sources: Section<NodeId>,
    pub(crate) in_rel: Section<RelId>,
    pub(crate) in_edge: Section<EdgeId>,
    /// Per-edge confidence; NaN where the source gave none. Empty when no edge has one.
    pub(crate) scores: Section<f32>,
    /// Node ids sorted by (identifier, type).
    pub(crate) by_ident: Section<NodeId>,
    /// Node ids sorted by case-folded name.
    pub(crate) by_name: Section<NodeId>,
    /// Node ids grouped by type; `type_offsets[t]..type_offsets[t+1]`.
    pub(crate) by_type: Section<NodeId>,
    pub(crate) type_offsets: Section<u64>,
    pub(crate) node_props: PropertyTable,
    pub(crate) edge_props: PropertyTable,
}

/// Case-insensitive order used by the name index (Unicode lowercase, no allocation).
pub fn cmp_folded(a: &str, b: &str) -> Ordering {
    a.chars()
        .flat_map(char::to_lowercase)
        .cmp(b.chars().flat_map(char::to_lowercase))
}

fn folded_starts_with(s: &str, prefix_lower: &str) -> bool {
    let mut it = s.chars().flat_map(char::to_lowercase);
    prefix_lower.chars().all(|p| it.next() == Some(p))
}

impl Graph {
    pub fn meta(&self) -> &GraphMeta {
        &self.meta
    }
    pub fn node_count(&self) -> usize {
        self.node_type.len()
    }
    pub fn edge_count(&self) -> usize {
        self.out_targets.len()
    }

    // ----- types -----
    pub fn type_count(&self) -> usize {
        self.types.len()
    }
    /// Label as used in queries (`BiologicalProcess`).
    pub fn type_label(&self, t: TypeId) -> &str {
        self.types.name(t as u32)
    }
    /// Label as a person reads it (`Biological Process`).
    pub fn type_display(&self, t: TypeId) -> &str {
        &self.type_display[t as usize]
    }
    /// Finds a type by label or display name (exact, as Neo4j labels are case-sensitive).
    pub fn type_id(&self, label: &str) -> Option<TypeId> {
        self.types.get(label).map(|t| t as TypeId).or_else(|| {
            self.type_display
                .iter()
                .position(|d| d == label)
                .map(|t| t as TypeId)
        })
    }
    pub fn nodes_of_type(&self, t: TypeId) -> &[NodeId] {
        let r = self.type_offsets[t as usize] as usize..self.type_offsets[t as usize + 1] as usize;
        &self.by_type[r]
    }

    // ----- relations -----
    pub fn relation_count(&self) -> usize {
        self.relations.len()
    }
    pub fn relation(&self, r: RelId) -> &RelationType {
        &self.relations[r as usize]
    }
    pub fn relations(&self) -> &[RelationType] {
        &self.relations
    }
    /// Finds a relation type by name (`TREATS_CtD`) or abbreviation (`CtD`).
    pub fn relation_id(&self, name: &str) -> Option<RelId> {
        self.rel_index.get(name).copied()
    }

    // ----- nodes -----
    pub fn node_type(&self, n: NodeId) -> TypeId {
        self.node_type[n as usize]
    }
    /// Source identifier without the type prefix (`DB00188`).
    pub fn ident(&self, n: NodeId) -> &str {
        self.ident.get(n as usize)
    }
    pub fn name(&self, n: NodeId) -> &str {
        self.name.get(n as usize)
    }
    /// Hetionet-style key `Type::identifier` (`Compound::DB00188`), unique per node.
    pub fn key(&self, n: NodeId) -> String {
        format!(
            "{}::{}",
            self.type_display(self.node_type(n)),
            self.ident(n)
        )
    }
    pub fn node_props(&self) -> &PropertyTable {
        &self.node_props
    }
    pub fn edge_props(&self) -> &PropertyTable {
        &self.edge_props
    }

    /// xxh3 over the out-CSR and the node identifiers, as 16 hex digits: two graphs with the
    /// same hash have the same nodes, numbering and edges (benchmarks, runs and exported edge
    /// stores record it to refuse a different graph).
    pub fn content_hash(&self) -> String {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let (off, tgt, rel) = self.out_csr();
        for x in off {
            h.update(&x.to_le_bytes());
        }
        for x in tgt {
            h.update(&x.to_le_bytes());
        }
        for x in rel {
            h.update(&x.to_le_bytes());
        }
        for n in 0..self.node_count() as NodeId {
            h.update(self.ident(n).as_bytes());
            h.update(&[0]);
        }
        format!("{:016x}", h.digest())
    }

    /// All nodes whose identifier is `ident` (one per type at most).
    pub fn find_by_ident(&self, ident: &str) -> &[NodeId] {
        let lo = self.by_ident.partition_point(|&n| self.ident(n) < ident);
        let hi = lo + self.by_ident[lo..].partition_point(|&n| self.ident(n) == ident);
        &self.by_ident[lo..hi]
    }

    /// Resolves `Type::identifier` (display or label type) or a bare identifier when it is
    /// unambiguous.
    pub fn find_by_key(&self, key: &str) -> Option<NodeId> {
        if let Some((ty, ident)) = key.split_once("::") {
            let t = self.type_id(ty)?;
            return self
                .find_by_ident(ident)
                .iter()
                .copied()
                .find(|&n| self.node_type(n) == t);
        }
        match self.find_by_ident(key) {
            [n] => Some(*n),
            _ => None,
        }
    }

    /// Nodes whose name equals `name` ignoring case.
    pub fn find_by_name(&self, name: &str) -> &[NodeId] {
        let lo = self
            .by_name
            .partition_point(|&n| cmp_folded(self.name(n), name) == Ordering::Less);
        let hi = lo
            + self.by_name[lo..]
                .partition_point(|&n| cmp_folded(self.name(n), name) == Ordering::Equal);
        &self.by_name[lo..hi]
    }

    /// Up to `limit` nodes whose name starts with `prefix` ignoring case, in name order
    /// (autocomplete).
    pub fn search_prefix(&self, prefix: &str, limit: usize) -> Vec<NodeId> {
        let lower: String = prefix.chars().flat_map(char::to_lowercase).collect();
        let lo = self
            .by_name
            .partition_point(|&n| cmp_folded(self.name(n), &lower) == Ordering::Less);
        self.by_name[lo..]
            .iter()
            .copied()
            .take_while(|&n| folded_starts_with(self.name(n), &lower))
            .take(limit)
            .collect()
    }

    // ----- adjacency -----
    pub fn out_range(&self, n: NodeId) -> Range<usize> {
        self.out_offsets[n as usize] as usize..self.out_offsets[n as usize + 1] as usize
    }
    pub fn in_range(&self, n: NodeId) -> Range<usize> {
        self.in_offsets[n as usize] as usize..self.in_offsets[n as usize + 1] as usize
    }
    pub fn out_degree(&self, n: NodeId) -> usize {
        self.out_range(n).len()
    }
    pub fn in_degree(&self, n: NodeId) -> usize {
        self.in_range(n).len()
    }
    pub fn degree(&self, n: NodeId) -> usize {
        self.out_degree(n) + self.in_degree(n)
    }
    /// Targets of `n`'s outgoing edges, and their relations (parallel slices).
    pub fn out_neighbors(&self, n: NodeId) -> (&[NodeId], &[RelId]) {
        let r = self.out_range(n);
        (&self.out_targets[r.clone()], &self.out_rel[r])
    }
    pub fn in_neighbors(&self, n: NodeId) -> (&[NodeId], &[RelId]) {
        let r = self.in_range(n);
        (&self.in_sources[r.clone()], &self.in_rel[r])
    }
    /// Sub-range of `n`'s out-list with relation `rel` (lists are sorted by relation).
    pub fn out_range_rel(&self, n: NodeId, rel: RelId) -> Range<usize> {
        let r = self.out_range(n);
        let rels = &self.out_rel[r.clone()];
        let lo = rels.partition_point(|&x| x < rel);
        let hi = rels.partition_point(|&x| x <= rel);
        r.start + lo..r.start + hi
    }
    pub fn in_range_rel(&self, n: NodeId, rel: RelId) -> Range<usize> {
        let r = self.in_range(n);
        let rels = &self.in_rel[r.clone()];
        let lo = rels.partition_point(|&x| x < rel);
        let hi = rels.partition_point(|&x| x <= rel);
        r.start + lo..r.start + hi
    }
    /// Raw CSR arrays for hot loops (offsets, neighbour, relation).
    pub fn out_csr(&self) -> (&[u64], &[NodeId], &[RelId]) {
        (&self.out_offsets, &self.out_targets, &self.out_rel)
    }
    pub fn in_csr(&self) -> (&[u64], &[NodeId], &[RelId], &[EdgeId]) {
        (
            &self.in_offsets,
            &self.in_sources,
            &self.in_rel,
            &self.in_edge,
        )
    }

    /// Edges at `n` in the given direction. For `In`, `source`/`target` keep the stored
    /// orientation (the edge points at `n`).
    pub fn edges(&self, n: NodeId, dir: Direction) -> impl Iterator<Item = EdgeRef> + '_ {
        let outs = matches!(dir, Direction::Out | Direction::Both).then(|| self.out_range(n));
        let ins = matches!(dir, Direction::In | Direction::Both).then(|| self.in_range(n));
        let out_iter = outs.into_iter().flatten().map(move |i| EdgeRef {
            id: i as EdgeId,
            source: n,
            target: self.out_targets[i],
            rel: self.out_rel[i],
        });
        let in_iter = ins.into_iter().flatten().map(move |i| EdgeRef {
            id: self.in_edge[i],
            source: self.in_sources[i],
            target: n,
            rel: self.in_rel[i],
        });
        out_iter.chain(in_iter)
    }

    /// The edge with id `e` (O(log V): finds its source by binary search on offsets).
    pub fn edge(&self, e: EdgeId) -> EdgeRef {
        let source = self.out_offsets.partition_point(|&o| o <= e as u64) - 1;
        EdgeRef {
            id: e,
            source: source as NodeId,
            target: self.out_targets[e as usize],
            rel: self.out_rel[e as usize],
        }
    }

    pub fn edge_score(&self, e: EdgeId) -> Option<f32> {
        self.scores.get(e as usize).copied().filter(|s| !s.is_nan())
    }
    pub fn has_scores(&self) -> bool {
        !self.scores.is_empty()
    }

    /// Node count per type, in type order.
    pub fn type_counts(&self) -> Vec<(TypeId, u64)> {
        (0..self.type_count())
            .map(|t| (t as TypeId, self.nodes_of_type(t as TypeId).len() as u64))
            .collect()
    }
    /// Edge count per relation type, in relation order.
    pub fn relation_counts(&self) -> Vec<(RelId, u64)> {
        let mut counts = vec![0u64; self.relations.len()];
        for &r in &self.out_rel {
            counts[r as usize] += 1;
        }
        counts
            .into_iter()
            .enumerate()
            .map(|(r, c)| (r as RelId, c))
            .collect()
    }

    /// Bytes of the graph's arrays that point into a snapshot's memory map (shared between
    /// processes that open the same file) rather than the heap; 0 for a built graph.
    pub fn mapped_bytes(&self) -> usize {
        fn m<T: bytemuck::Pod>(s: &Section<T>) -> usize {
            if s.is_mapped() {
                std::mem::size_of_val::<[T]>(s)
            } else {
                0
            }
        }
        m(&self.node_type)
            + self.ident.mapped_bytes()
            + self.name.mapped_bytes()
            + m(&self.out_offsets)
            + m(&self.out_targets)
            + m(&self.out_rel)
            + m(&self.in_offsets)
            + m(&self.in_sources)
            + m(&self.in_rel)
            + m(&self.in_edge)
            + m(&self.scores)
            + m(&self.by_ident)
            + m(&self.by_name)
            + m(&self.by_type)
            + m(&self.type_offsets)
    }

    /// Bytes held by the graph's arrays (approximate size, heap or mapped; see
    /// [`Graph::mapped_bytes`] for the mapped part).
    pub fn heap_bytes(&self) -> usize {
        self.node_type.len() * 2
            + self.ident.byte_len()
            + self.name.byte_len()
            + (self.ident.len() + self.name.len()) * 8
            + (self.out_offsets.len() + self.in_offsets.len()) * 8
            + self.out_targets.len() * 6
            + self.in_sources.len() * 10
            + self.scores.len() * 4
            + (self.by_ident.len() + self.by_name.len() + self.by_type.len()) * 4
    }
}

/// Collects nodes and edges, then lays them out as CSR in [`GraphBuilder::build`].
#[derive(Default)]
pub struct GraphBuilder {
    meta: GraphMeta,
    types: Vocab,
    type_display: Vec<String>,
    relations: Vec<RelationType>,
    rel_index: HashMap<String, RelId>,
    node_type: Vec<TypeId>,
    ident: StringArena,
    name: StringArena,
    src: Vec<NodeId>,
    dst: Vec<NodeId>,
    rel: Vec<RelId>,
    scores: Vec<f32>,
    node_props: PropertyTable,
    /// Keyed by insertion index until `build` renumbers to CSR positions.
    edge_props: PropertyTable,
}

impl GraphBuilder {
    pub fn new(meta: GraphMeta) -> Self {
        GraphBuilder {
            meta,
            ident: StringArena::new(),
            name: StringArena::new(),
            ..Default::default()
        }
    }

    pub fn reserve(&mut self, nodes: usize, edges: usize) {
        self.node_type.reserve(nodes);
        self.src.reserve(edges);
        self.dst.reserve(edges);
        self.rel.reserve(edges);
    }

    pub fn meta_mut(&mut self) -> &mut GraphMeta {
        &mut self.meta
    }

    /// Adds (or finds) a node type. `label` has no spaces; `display` is for people.
    pub fn node_type(&mut self, label: &str, display: &str) -> TypeId {
        let before = self.types.len();
        let t = self.types.intern(label);
        if self.types.len() > before {
            self.type_display.push(display.to_string());
        }
        t as TypeId
    }

    pub fn type_id(&self, label: &str) -> Option<TypeId> {
        self.types.get(label).map(|t| t as TypeId).or_else(|| {
            self.type_display
                .iter()
                .position(|d| d == label)
                .map(|t| t as TypeId)
        })
    }

    pub fn type_label(&self, t: TypeId) -> &str {
        self.types.name(t as u32)
    }

    /// Adds a relation type; returns the existing id when the name is already known.
    pub fn relation(&mut self, rel: RelationType) -> Result<RelId, String> {
        if let Some(&r) = self.rel_index.get(&rel.name) {
            return Ok(r);
        }
        if self.relations.len() >= RelId::MAX as usize {
            return Err(format!("more than {} relation types", RelId::MAX));
        }
        let id = self.relations.len() as RelId;
        self.rel_index.insert(rel.name.clone(), id);
        self.rel_index.entry(rel.abbrev.clone()).or_insert(id);
        self.relations.push(rel);
        Ok(id)
    }

    pub fn relation_id(&self, name: &str) -> Option<RelId> {
        self.rel_index.get(name).copied()
    }

    pub fn add_node(&mut self, ty: TypeId, ident: &str, name: &str) -> NodeId {
        self.node_type.push(ty);
        self.ident.push(ident);
        self.name.push(name);
        (self.node_type.len() - 1) as NodeId
    }

    pub fn node_count(&self) -> usize {
        self.node_type.len()
    }

    pub fn edge_count(&self) -> usize {
        self.src.len()
    }

    pub fn node_type_of(&self, n: NodeId) -> TypeId {
        self.node_type[n as usize]
    }

    pub fn set_node_prop(&mut self, n: NodeId, key: &str, value: crate::PropValue) {
        self.node_props.insert(n, key, value);
    }

    /// Adds an edge; returns its insertion index (the key for `set_edge_prop`).
    pub fn add_edge(
        &mut self,
        source: NodeId,
        rel: RelId,
        target: NodeId,
        score: Option<f32>,
    ) -> usize {
        let i = self.src.len();
        self.src.push(source);
        self.dst.push(target);
        self.rel.push(rel);
        if let Some(s) = score {
            if self.scores.len() < i {
                self.scores.resize(i, f32::NAN);
            }
            self.scores.push(s);
        } else if !self.scores.is_empty() {
            self.scores.push(f32::NAN);
        }
        i
    }

    pub fn set_edge_prop(&mut self, edge_index: usize, key: &str, value: crate::PropValue) {
        self.edge_props.insert(edge_index as u32, key, value);
    }

    /// Lays the collected edges out as CSR (counting sort by source, then each list sorted by
    /// (relation, neighbour)) and builds the indexes.
    pub fn build(mut self) -> Graph {
        let n = self.node_type.len();
        let m = self.src.len();
        if !self.scores.is_empty() {
            self.scores.resize(m, f32::NAN);
        }

        // order[p] = insertion index of the edge at out-CSR position p.
        let out_offsets = offsets_from_counts(n, self.src.iter().copied());
        let mut order = vec![0u32; m];
        {
            let mut next: Vec<u64> = out_offsets[..n].to_vec();
            for (i, &s) in self.src.iter().enumerate() {
                order[next[s as usize] as usize] = i as u32;
                next[s as usize] += 1;
            }
        }
        let (rel, dst) = (&self.rel, &self.dst);
        sort_segments(&out_offsets, &mut order, |&i| {
            (rel[i as usize], dst[i as usize])
        });
        let out_targets: Vec<NodeId> = order.par_iter().map(|&i| dst[i as usize]).collect();
        let out_rel: Vec<RelId> = order.par_iter().map(|&i| rel[i as usize]).collect();
        let scores: Vec<f32> = if self.scores.is_empty() {
            Vec::new()
        } else {
            order.par_iter().map(|&i| self.scores[i as usize]).collect()
        };
        let edge_props = if self.edge_props.is_empty() {
            PropertyTable::default()
        } else {
            let mut map = vec![None; m];
            for (p, &i) in order.iter().enumerate() {
                map[i as usize] = Some(p as u32);
            }
            self.edge_props.remap(&map)
        };
        drop(order);
        let src_sorted: Vec<NodeId> = {
            let mut s = vec![0u32; m];
            for v in 0..n {
                s[out_offsets[v] as usize..out_offsets[v + 1] as usize].fill(v as NodeId);
            }
            s
        };
        self.src = Vec::new();
        self.dst = Vec::new();
        self.rel = Vec::new();

        // In-CSR: in_order[q] = out-CSR position (edge id) of the edge at in-position q.
        let in_offsets = offsets_from_counts(n, out_targets.iter().copied());
        let mut in_order = vec![0u32; m];
        {
            let mut next: Vec<u64> = in_offsets[..n].to_vec();
            for (p, &t) in out_targets.iter().enumerate() {
                in_order[next[t as usize] as usize] = p as u32;
                next[t as usize] += 1;
            }
        }
        sort_segments(&in_offsets, &mut in_order, |&p| {
            (out_rel[p as usize], src_sorted[p as usize])
        });
        let in_sources: Vec<NodeId> = in_order
            .par_iter()
            .map(|&p| src_sorted[p as usize])
            .collect();
        let in_rel: Vec<RelId> = in_order.par_iter().map(|&p| out_rel[p as usize]).collect();
        drop(src_sorted);

        let mut node_props = std::mem::take(&mut self.node_props);
        node_props.seal();
        let mut g = Graph {
            meta: self.meta,
            types: self.types,
            type_display: self.type_display,
            relations: self.relations,
            rel_index: self.rel_index,
            node_type: self.node_type.into(),
            ident: self.ident,
            name: self.name,
            out_offsets: out_offsets.into(),
            out_targets: out_targets.into(),
            out_rel: out_rel.into(),
            in_offsets: in_offsets.into(),
            in_sources: in_sources.into(),
            in_rel: in_rel.into(),
            in_edge: in_order.into(),
            scores: scores.into(),
            by_ident: Section::default(),
            by_name: Section::default(),
            by_type: Section::default(),
            type_offsets: Section::default(),
            node_props,
            edge_props,
        };
        g.build_indexes();
        g
    }
}

impl Graph {
    /// (Re)builds the three node permutations; called by the builder only (snapshots store them).
    pub(crate) fn build_indexes(&mut self) {
        let n = self.node_count();
        let mut by_ident: Vec<NodeId> = (0..n as NodeId).collect();
        by_ident.par_sort_unstable_by(|&a, &b| {
            self.ident(a)
                .cmp(self.ident(b))
                .then(self.node_type(a).cmp(&self.node_type(b)))
                .then(a.cmp(&b))
        });
        let mut by_name: Vec<NodeId> = (0..n as NodeId).collect();
        by_name
            .par_sort_unstable_by(|&a, &b| cmp_folded(self.name(a), self.name(b)).then(a.cmp(&b)));
        let type_offsets =
            offsets_from_counts(self.types.len(), self.node_type.iter().map(|&t| t as u32));
        let mut by_type = vec![0u32; n];
        let mut next: Vec<u64> = type_offsets[..self.types.len()].to_vec();
        for (v, &t) in self.node_type.iter().enumerate() {
            by_type[next[t as usize] as usize] = v as NodeId;
            next[t as usize] += 1;
        }
        self.by_ident = by_ident.into();
        self.by_name = by_name.into();
        self.by_type = by_type.into();
        self.type_offsets = type_offsets.into();
    }
}

/// CSR offsets (length `n + 1`) from the owner of each item.
fn offsets_from_counts(n: usize, owners: impl Iterator<Item = u32>) -> Vec<u64> {
    let mut offsets = vec![0u64; n + 1];
    for o in owners {
        offsets[o as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    offsets
}

/// Sorts each CSR segment of `items` by `key`, in parallel over chunks of segments.
fn sort_segments<K: Ord, F: Fn(&u32) -> K + Sync>(offsets: &[u64], items: &mut [u32], key: F) {
    let n = offsets.len() - 1;
    let chunk_nodes = (n / 256).max(1);
    let mut chunks: Vec<(usize, usize, &mut [u32])> = Vec::new();
    let mut rest = items;
    let mut start = 0;
    while start < n {
        let end = (start + chunk_nodes).min(n);
        let len = (offsets[end] - offsets[start]) as usize;
        let (head, tail) = rest.split_at_mut(len);
        chunks.push((start, end, head));
        rest = tail;
        start = end;
    }
    chunks.into_par_iter().for_each(|(s, e, chunk)| {
        let base = offsets[s];
        for v in s..e {
            let seg = &mut chunk[(offsets[v] - base) as usize..(offsets[v + 1] - base) as usize];
            if seg.len() > 1 {
                seg.sort_by_key(&key);
            }
        }
    });
}
