//! What the executor reads: the [`Store`] trait, implemented by serenqa's CSR [`Graph`] (the
//! fast path, with id/name indexes and typed adjacency sub-ranges) and by [`MemGraph`], a small
//! mutable property graph with any number of labels per node and properties on relationships
//! (the openCypher TCK's graphs, fuzzing, unit tests).

use std::collections::{BTreeMap, HashMap};

use serenqa_graph::{Graph, PropValue};

use crate::value::Value;

pub use crate::ids::{Dir, NodeId, RelRef};

/// Read access to a property graph. Node ids are dense `0..node_count()`.
pub trait Store: Sync {
    fn node_count(&self) -> usize;
    fn label_id(&self, name: &str) -> Option<u32>;
    fn label_name(&self, id: u32) -> &str;
    fn rel_type_id(&self, name: &str) -> Option<u32>;
    fn rel_type_name(&self, id: u32) -> &str;
    fn node_labels(&self, n: NodeId) -> Vec<u32>;
    fn has_label(&self, n: NodeId, label: u32) -> bool;
    /// Nodes carrying `label`.
    fn nodes_with_label(&self, label: u32) -> Vec<NodeId>;
    /// How many nodes carry `label` (planning: pick the most selective anchor).
    fn label_count(&self, label: u32) -> usize;
    fn node_prop(&self, n: NodeId, key: &str) -> Value;
    fn node_props(&self, n: NodeId) -> BTreeMap<String, Value>;
    fn rel_prop(&self, r: &RelRef, key: &str) -> Value;
    fn rel_props(&self, r: &RelRef) -> BTreeMap<String, Value>;
    /// Appends relationships at `n` in direction `dir` (restricted to `types` when given) as
    /// (relationship, node at the other end). A self-loop is reported once for `Both`.
    fn expand(&self, n: NodeId, dir: Dir, types: Option<&[u32]>, out: &mut Vec<(RelRef, NodeId)>);
    /// Candidates for `n.key = value` from an index, a superset of the exact matches;
    /// `None` when the store has no index for `key`. `name~` asks for names equal ignoring
    /// case (from `toLower(n.name) = …`).
    fn index_lookup(&self, key: &str, value: &Value) -> Option<Vec<NodeId>>;
}

pub fn prop_to_value(p: &PropValue) -> Value {
    match p {
        PropValue::Str(s) => Value::Str(s.clone()),
        PropValue::Int(i) => Value::Int(*i),
        PropValue::Float(f) => Value::Float(*f),
        PropValue::Bool(b) => Value::Bool(*b),
        PropValue::List(items) => Value::List(items.iter().map(prop_to_value).collect()),
    }
}

impl Store for Graph {
    fn node_count(&self) -> usize {
        Graph::node_count(self)
    }
    fn label_id(&self, name: &str) -> Option<u32> {
        self.type_id(name).map(u32::from)
    }
    fn label_name(&self, id: u32) -> &str {
        if (id as usize) < self.type_count() {
            self.type_label(id as u16)
        } else {
            ""
        }
    }
    fn rel_type_id(&self, name: &str) -> Option<u32> {
        // Only full names: Neo4j knows `TREATS_CtD`, not the abbreviation `CtD`.
        self.relation_id(name)
            .filter(|&r| self.relation(r).name == name)
            .map(u32::from)
    }
    fn rel_type_name(&self, id: u32) -> &str {
        if (id as usize) < self.relation_count() {
            &self.relation(id as u16).name
        } else {
            ""
        }
    }
    fn node_labels(&self, n: NodeId) -> Vec<u32> {
        vec![u32::from(self.node_type(n))]
    }
    fn has_label(&self, n: NodeId, label: u32) -> bool {
        u32::from(self.node_type(n)) == label
    }
    fn nodes_with_label(&self, label: u32) -> Vec<NodeId> {
        if (label as usize) < self.type_count() {
            self.nodes_of_type(label as u16).to_vec()
        } else {
            Vec::new()
        }
    }
    fn label_count(&self, label: u32) -> usize {
        if (label as usize) < self.type_count() {
            self.nodes_of_type(label as u16).len()
        } else {
            0
        }
    }
    fn node_prop(&self, n: NodeId, key: &str) -> Value {
        match key {
            "id" => Value::Str(self.ident(n).to_string()),
            "name" => Value::Str(self.name(n).to_string()),
            _ => self
                .node_props()
                .get(n, key)
                .map(prop_to_value)
                .unwrap_or(Value::Null),
        }
    }
    fn node_props(&self, n: NodeId) -> BTreeMap<String, Value> {
        let mut m: BTreeMap<String, Value> = Graph::node_props(self)
            .of(n)
            .map(|(k, v)| (k.to_string(), prop_to_value(v)))
            .collect();
        m.insert("id".into(), Value::Str(self.ident(n).to_string()));
        m.insert("name".into(), Value::Str(self.name(n).to_string()));
        m
    }
    fn rel_prop(&self, r: &RelRef, key: &str) -> Value {
        let e = r.id as u32;
        if key == "score" {
            if let Some(s) = self.edge_score(e) {
                return Value::Float(f64::from(s));
            }
        }
        self.edge_props()
            .get(e, key)
            .map(prop_to_value)
            .unwrap_or(Value::Null)
    }
    fn rel_props(&self, r: &RelRef) -> BTreeMap<String, Value> {
        let e = r.id as u32;
        let mut m: BTreeMap<String, Value> = self
            .edge_props()
            .of(e)
            .map(|(k, v)| (k.to_string(), prop_to_value(v)))
            .collect();
        if let Some(s) = self.edge_score(e) {
            m.insert("score".into(), Value::Float(f64::from(s)));
        }
        m
    }
    fn expand(&self, n: NodeId, dir: Dir, types: Option<&[u32]>, out: &mut Vec<(RelRef, NodeId)>) {
        let (_, out_t, out_r) = self.out_csr();
        let (_, in_s, in_r, in_e) = self.in_csr();
        let push_out = |range: std::ops::Range<usize>, out: &mut Vec<(RelRef, NodeId)>| {
            for i in range {
                let t = out_t[i];
                out.push((
                    RelRef {
                        id: i as u64,
                        src: n,
                        dst: t,
                        ty: u32::from(out_r[i]),
                    },
                    t,
                ));
            }
        };
        let push_in =
            |range: std::ops::Range<usize>, out: &mut Vec<(RelRef, NodeId)>, skip_loops: bool| {
                for i in range {
                    let s = in_s[i];
                    if skip_loops && s == n {
                        continue;
                    }
                    out.push((
                        RelRef {
                            id: u64::from(in_e[i]),
                            src: s,
                            dst: n,
                            ty: u32::from(in_r[i]),
                        },
                        s,
                    ));
                }
            };
        let both = dir == Dir::Both;
        match types {
            None => {
                if dir != Dir::In {
                    push_out(self.out_range(n), out);
                }
                if dir != Dir::Out {
                    push_in(self.in_range(n), out, both);
                }
            }
            Some(ts) => {
                for &t in ts {
                    let Ok(rel) = u16::try_from(t) else { continue };
                    if dir != Dir::In {
                        push_out(self.out_range_rel(n, rel), out);
                    }
                    if dir != Dir::Out {
                        push_in(self.in_range_rel(n, rel), out, both);
                    }
                }
            }
        }
    }
    fn index_lookup(&self, key: &str, value: &Value) -> Option<Vec<NodeId>> {
        match (key, value) {
            ("id", Value::Str(s)) => Some(self.find_by_ident(s).to_vec()),
            ("name" | "name~", Value::Str(s)) => Some(self.find_by_name(s).to_vec()),
            ("id" | "name" | "name~", _) => Some(Vec::new()),
            _ => None,
        }
    }
}

/// A small mutable property graph: several labels per node, typed relationships with
/// properties. Built node by node (the TCK fixture loader, fuzzing); reads go through [`Store`].
#[derive(Clone, Debug, Default)]
pub struct MemGraph {
    labels: Vec<String>,
    label_index: HashMap<String, u32>,
    types: Vec<String>,
    type_index: HashMap<String, u32>,
    node_labels: Vec<Vec<u32>>,
    node_props: Vec<BTreeMap<String, Value>>,
    rels: Vec<(NodeId, NodeId, u32, BTreeMap<String, Value>)>,
    out: Vec<Vec<u64>>,
    inc: Vec<Vec<u64>>,
}

impl MemGraph {
    pub fn new() -> Self {
        Self::default()
    }

    fn intern(names: &mut Vec<String>, index: &mut HashMap<String, u32>, name: &str) -> u32 {
        if let Some(&i) = index.get(name) {
            return i;
        }
        let i = names.len() as u32;
        names.push(name.to_string());
        index.insert(name.to_string(), i);
        i
    }

    /// Adds a node; null-valued properties are not stored (as in Neo4j).
    pub fn add_node(&mut self, labels: &[&str], props: BTreeMap<String, Value>) -> NodeId {
        let mut ls: Vec<u32> = labels
            .iter()
            .map(|l| Self::intern(&mut self.labels, &mut self.label_index, l))
            .collect();
        ls.sort_unstable();
        ls.dedup();
        self.node_labels.push(ls);
        self.node_props
            .push(props.into_iter().filter(|(_, v)| !v.is_null()).collect());
        self.out.push(Vec::new());
        self.inc.push(Vec::new());
        (self.node_labels.len() - 1) as NodeId
    }

    /// Adds a relationship `src -[:ty]-> dst`; `None` when an endpoint does not exist.
    pub fn add_rel(
        &mut self,
        src: NodeId,
        ty: &str,
        dst: NodeId,
        props: BTreeMap<String, Value>,
    ) -> Option<u64> {
        if src as usize >= self.node_labels.len() || dst as usize >= self.node_labels.len() {
            return None;
        }
        let t = Self::intern(&mut self.types, &mut self.type_index, ty);
        let id = self.rels.len() as u64;
        self.rels.push((
            src,
            dst,
            t,
            props.into_iter().filter(|(_, v)| !v.is_null()).collect(),
        ));
        self.out[src as usize].push(id);
        self.inc[dst as usize].push(id);
        Some(id)
    }

    pub fn rel_count(&self) -> usize {
        self.rels.len()
    }

    /// The relationship with id `id`.
    pub fn rel(&self, id: u64) -> Option<RelRef> {
        self.rels.get(id as usize).map(|(s, d, t, _)| RelRef {
            id,
            src: *s,
            dst: *d,
            ty: *t,
        })
    }

    pub fn all_rels(&self) -> impl Iterator<Item = RelRef> + '_ {
        self.rels
            .iter()
            .enumerate()
            .map(|(i, (s, d, t, _))| RelRef {
                id: i as u64,
                src: *s,
                dst: *d,
                ty: *t,
            })
    }

    /// Labels in use (have at least one node).
    pub fn used_labels(&self) -> Vec<&str> {
        let mut used: Vec<u32> = self.node_labels.iter().flatten().copied().collect();
        used.sort_unstable();
        used.dedup();
        used.into_iter()
            .map(|l| self.labels[l as usize].as_str())
            .collect()
    }
}

impl Store for MemGraph {
    fn node_count(&self) -> usize {
        self.node_labels.len()
    }
    fn label_id(&self, name: &str) -> Option<u32> {
        self.label_index.get(name).copied()
    }
    fn label_name(&self, id: u32) -> &str {
        self.labels
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or("")
    }
    fn rel_type_id(&self, name: &str) -> Option<u32> {
        self.type_index.get(name).copied()
    }
    fn rel_type_name(&self, id: u32) -> &str {
        self.types
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or("")
    }
    fn node_labels(&self, n: NodeId) -> Vec<u32> {
        self.node_labels
            .get(n as usize)
            .cloned()
            .unwrap_or_default()
    }
    fn has_label(&self, n: NodeId, label: u32) -> bool {
        self.node_labels
            .get(n as usize)
            .is_some_and(|ls| ls.contains(&label))
    }
    fn nodes_with_label(&self, label: u32) -> Vec<NodeId> {
        (0..self.node_labels.len() as NodeId)
            .filter(|&n| self.has_label(n, label))
            .collect()
    }
    fn label_count(&self, label: u32) -> usize {
        self.node_labels
            .iter()
            .filter(|ls| ls.contains(&label))
            .count()
    }
    fn node_prop(&self, n: NodeId, key: &str) -> Value {
        self.node_props
            .get(n as usize)
            .and_then(|p| p.get(key))
            .cloned()
            .unwrap_or(Value::Null)
    }
    fn node_props(&self, n: NodeId) -> BTreeMap<String, Value> {
        self.node_props.get(n as usize).cloned().unwrap_or_default()
    }
    fn rel_prop(&self, r: &RelRef, key: &str) -> Value {
        self.rels
            .get(r.id as usize)
            .and_then(|x| x.3.get(key))
            .cloned()
            .unwrap_or(Value::Null)
    }
    fn rel_props(&self, r: &RelRef) -> BTreeMap<String, Value> {
        self.rels
            .get(r.id as usize)
            .map(|x| x.3.clone())
            .unwrap_or_default()
    }
    fn expand(&self, n: NodeId, dir: Dir, types: Option<&[u32]>, out: &mut Vec<(RelRef, NodeId)>) {
        let ok = |t: u32| types.is_none_or(|ts| ts.contains(&t));
        if dir != Dir::In {
            for &id in self.out.get(n as usize).map(Vec::as_slice).unwrap_or(&[]) {
                let (s, d, t, _) = &self.rels[id as usize];
                if ok(*t) {
                    out.push((
                        RelRef {
                            id,
                            src: *s,
                            dst: *d,
                            ty: *t,
                        },
                        *d,
                    ));
                }
            }
        }
        if dir != Dir::Out {
            for &id in self.inc.get(n as usize).map(Vec::as_slice).unwrap_or(&[]) {
                let (s, d, t, _) = &self.rels[id as usize];
                if dir == Dir::Both && s == d {
                    continue;
                }
                if ok(*t) {
                    out.push((
                        RelRef {
                            id,
                            src: *s,
                            dst: *d,
                            ty: *t,
                        },
                        *s,
                    ));
                }
            }
        }
    }
    fn index_lookup(&self, _key: &str, _value: &Value) -> Option<Vec<NodeId>> {
        None
    }
}
