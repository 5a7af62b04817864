//! Cypher values during execution: scalars, lists, maps and graph references (nodes and
//! relationships by id, paths as id sequences), with openCypher's equality (three-valued, null
//! propagating), comparability (`<` across types is null) and the global sort order.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::ids::{NodeId, RelRef};

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Map(BTreeMap<String, Value>),
    Node(NodeId),
    Rel(RelRef),
    Path(Box<Path>),
}

/// A path: `nodes.len() == rels.len() + 1`; rels are in walk order, each joining the nodes
/// on either side in either stored direction.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    pub nodes: Vec<NodeId>,
    pub rels: Vec<RelRef>,
}

impl Value {
    /// Approximate memory the value occupies (its inline size plus what it owns on the heap),
    /// counting at most a little past `limit`: the walk stops once the running total passes
    /// it, so checking a huge list against a budget costs no more than the budget allows.
    pub fn approx_bytes(&self, limit: u64) -> u64 {
        const INLINE: u64 = std::mem::size_of::<Value>() as u64;
        match self {
            Value::Str(s) => INLINE + s.capacity() as u64,
            Value::List(xs) => {
                let mut total = INLINE + (xs.capacity().saturating_sub(xs.len()) as u64) * INLINE;
                for x in xs {
                    total += x.approx_bytes(limit.saturating_sub(total));
                    if total > limit {
                        break;
                    }
                }
                total
            }
            Value::Map(m) => {
                // A B-tree entry: key string, value, and node overhead.
                let mut total = INLINE;
                for (k, v) in m {
                    total += 48 + k.len() as u64 + v.approx_bytes(limit.saturating_sub(total));
                    if total > limit {
                        break;
                    }
                }
                total
            }
            Value::Path(p) => {
                INLINE
                    + 48
                    + (p.nodes.len() * std::mem::size_of::<NodeId>()
                        + p.rels.len() * std::mem::size_of::<RelRef>()) as u64
            }
            _ => INLINE,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "Null",
            Value::Bool(_) => "Boolean",
            Value::Int(_) => "Integer",
            Value::Float(_) => "Float",
            Value::Str(_) => "String",
            Value::List(_) => "List",
            Value::Map(_) => "Map",
            Value::Node(_) => "Node",
            Value::Rel(_) => "Relationship",
            Value::Path(_) => "Path",
        }
    }

    /// Cypher `=`: `None` is null (unknown).
    pub fn cypher_eq(&self, other: &Value) -> Option<bool> {
        use Value::*;
        match (self, other) {
            (Null, _) | (_, Null) => None,
            (Int(a), Int(b)) => Some(a == b),
            (Int(a), Float(b)) => Some((*a as f64) == *b),
            (Float(a), Int(b)) => Some(*a == (*b as f64)),
            (Float(a), Float(b)) => Some(a == b),
            (Bool(a), Bool(b)) => Some(a == b),
            (Str(a), Str(b)) => Some(a == b),
            (Node(a), Node(b)) => Some(a == b),
            (Rel(a), Rel(b)) => Some(a.id == b.id),
            (Path(a), Path(b)) => Some(
                a.nodes == b.nodes && a.rels.iter().map(|r| r.id).eq(b.rels.iter().map(|r| r.id)),
            ),
            (List(a), List(b)) => {
                if a.len() != b.len() {
                    return Some(false);
                }
                let mut unknown = false;
                for (x, y) in a.iter().zip(b) {
                    match x.cypher_eq(y) {
                        Some(false) => return Some(false),
                        None => unknown = true,
                        Some(true) => {}
                    }
                }
                if unknown {
                    None
                } else {
                    Some(true)
                }
            }
            (Map(a), Map(b)) => {
                if a.len() != b.len() || a.keys().ne(b.keys()) {
                    return Some(false);
                }
                let mut unknown = false;
                for (x, y) in a.values().zip(b.values()) {
                    match x.cypher_eq(y) {
                        Some(false) => return Some(false),
                        None => unknown = true,
                        Some(true) => {}
                    }
                }
                if unknown {
                    None
                } else {
                    Some(true)
                }
            }
            _ => Some(false),
        }
    }

    /// Cypher `<`-style comparison: `None` when the values are not comparable (or null).
    pub fn cypher_cmp(&self, other: &Value) -> Option<Ordering> {
        use Value::*;
        match (self, other) {
            (Null, _) | (_, Null) => None,
            (Int(a), Int(b)) => Some(a.cmp(b)),
            (Int(a), Float(b)) => (*a as f64).partial_cmp(b),
            (Float(a), Int(b)) => a.partial_cmp(&(*b as f64)),
            (Float(a), Float(b)) => a.partial_cmp(b),
            (Str(a), Str(b)) => Some(a.cmp(b)),
            (Bool(a), Bool(b)) => Some(a.cmp(b)),
            (List(a), List(b)) => {
                for (x, y) in a.iter().zip(b) {
                    match x.cypher_cmp(y)? {
                        Ordering::Equal => {}
                        o => return Some(o),
                    }
                }
                Some(a.len().cmp(&b.len()))
            }
            _ => None,
        }
    }

    /// Rank of the type in ORDER BY's global order (ascending).
    fn order_rank(&self) -> u8 {
        match self {
            Value::Map(_) => 0,
            Value::Node(_) => 1,
            Value::Rel(_) => 2,
            Value::List(_) => 3,
            Value::Path(_) => 4,
            Value::Str(_) => 5,
            Value::Bool(_) => 6,
            Value::Int(_) | Value::Float(_) => 7,
            Value::Null => 9,
        }
    }

    /// Total order used by ORDER BY, DISTINCT grouping and min/max: types in a fixed order,
    /// numbers numerically (NaN after all numbers), null last.
    pub fn order_cmp(&self, other: &Value) -> Ordering {
        use Value::*;
        let (ra, rb) = (self.order_rank(), other.order_rank());
        if ra != rb {
            return ra.cmp(&rb);
        }
        match (self, other) {
            (Int(a), Int(b)) => a.cmp(b),
            (Int(_) | Float(_), Int(_) | Float(_)) => {
                let fa = as_f64(self);
                let fb = as_f64(other);
                match (fa.is_nan(), fb.is_nan()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    _ => fa
                        .partial_cmp(&fb)
                        .unwrap_or(Ordering::Equal)
                        .then_with(|| {
                            // 1 and 1.0 are equal in value; keep a stable order between them.
                            matches!(self, Float(_)).cmp(&matches!(other, Float(_)))
                        }),
                }
            }
            (Str(a), Str(b)) => a.cmp(b),
            (Bool(a), Bool(b)) => a.cmp(b),
            (Node(a), Node(b)) => a.cmp(b),
            (Rel(a), Rel(b)) => a.id.cmp(&b.id),
            (List(a), List(b)) => {
                for (x, y) in a.iter().zip(b) {
                    let o = x.order_cmp(y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Path(a), Path(b)) => a
                .nodes
                .cmp(&b.nodes)
                .then_with(|| a.rels.iter().map(|r| r.id).cmp(b.rels.iter().map(|r| r.id))),
            (Map(a), Map(b)) => {
                for ((ka, va), (kb, vb)) in a.iter().zip(b) {
                    let o = ka.cmp(kb).then_with(|| va.order_cmp(vb));
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.len().cmp(&b.len())
            }
            _ => Ordering::Equal,
        }
    }

    /// Grouping key equality (DISTINCT, aggregation keys): null equals null, 1 equals 1.0.
    pub fn group_eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Int(_) | Float(_), Int(_) | Float(_)) => {
                let (a, b) = (as_f64(self), as_f64(other));
                (a.is_nan() && b.is_nan()) || self.cypher_eq(other) == Some(true)
            }
            (List(a), List(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.group_eq(y)),
            (Map(a), Map(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((ka, va), (kb, vb))| ka == kb && va.group_eq(vb))
            }
            _ => self.cypher_eq(other) == Some(true),
        }
    }

    /// A hashable key with the same equivalence as [`Value::group_eq`].
    pub fn group_key(&self, out: &mut String) {
        match self {
            Value::Null => out.push('N'),
            Value::Bool(b) => out.push(if *b { 'T' } else { 'F' }),
            Value::Int(i) => {
                let _ = write!(out, "n{}", *i as f64);
                if (*i as f64) as i64 != *i || i64::MAX == *i {
                    let _ = write!(out, "i{i}");
                }
            }
            Value::Float(f) => {
                let _ = write!(out, "n{f}");
                if f.is_finite() && (*f as i64) as f64 == *f && *f as i64 == i64::MAX {
                    out.push('f');
                }
            }
            Value::Str(s) => {
                let _ = write!(out, "s{}:{s}", s.len());
            }
            Value::List(items) => {
                let _ = write!(out, "[{}", items.len());
                for v in items {
                    v.group_key(out);
                    out.push(',');
                }
                out.push(']');
            }
            Value::Map(m) => {
                let _ = write!(out, "{{{}", m.len());
                for (k, v) in m {
                    let _ = write!(out, "{}:{k}=", k.len());
                    v.group_key(out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::Node(n) => {
                let _ = write!(out, "v{n}");
            }
            Value::Rel(r) => {
                let _ = write!(out, "e{}", r.id);
            }
            Value::Path(p) => {
                out.push('p');
                for n in &p.nodes {
                    let _ = write!(out, "{n},");
                }
                for r in &p.rels {
                    let _ = write!(out, "{},", r.id);
                }
            }
        }
    }
}

pub fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

/// Formats a float as Cypher prints it (`1.0`, `-0.5`, `1.0E10`, `NaN`, `Infinity`).
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let s = format!("{f:?}");
    if s.contains('e') {
        s.replace('e', "E")
    } else {
        s
    }
}
