//! Extra node or edge properties beyond the built-in `id`, `name` and edge score.
//!
//! Sparse columns: each key holds `(owner, value)` pairs sorted by owner, so a graph whose
//! loader keeps no extra properties pays nothing and a lookup is a binary search.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PropValue {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<PropValue>),
}

impl std::fmt::Display for PropValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PropValue::Str(s) => f.write_str(s),
            PropValue::Int(i) => write!(f, "{i}"),
            PropValue::Float(x) => write!(f, "{x}"),
            PropValue::Bool(b) => write!(f, "{b}"),
            PropValue::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PropertyTable {
    columns: BTreeMap<String, Vec<(u32, PropValue)>>,
}

impl PropertyTable {
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    pub fn insert(&mut self, owner: u32, key: &str, value: PropValue) {
        self.columns
            .entry(key.to_string())
            .or_default()
            .push((owner, value));
    }

    /// Sorts every column by owner; call once after all inserts (builders do).
    pub fn seal(&mut self) {
        for col in self.columns.values_mut() {
            col.sort_by_key(|(o, _)| *o);
            col.dedup_by_key(|(o, _)| *o);
        }
    }

    pub fn get(&self, owner: u32, key: &str) -> Option<&PropValue> {
        let col = self.columns.get(key)?;
        col.binary_search_by_key(&owner, |(o, _)| *o)
            .ok()
            .map(|i| &col[i].1)
    }

    /// One key's (owner, value) rows, sorted by owner once sealed; empty when no owner has it.
    pub fn column(&self, key: &str) -> &[(u32, PropValue)] {
        self.columns.get(key).map_or(&[], Vec::as_slice)
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.columns.keys().map(String::as_str)
    }

    /// All properties of one owner, in key order.
    pub fn of(&self, owner: u32) -> impl Iterator<Item = (&str, &PropValue)> {
        self.columns.iter().filter_map(move |(k, col)| {
            col.binary_search_by_key(&owner, |(o, _)| *o)
                .ok()
                .map(|i| (k.as_str(), &col[i].1))
        })
    }

    /// Keeps the rows of kept owners and renumbers them (`map[old] = Some(new)`).
    pub fn remap(&self, map: &[Option<u32>]) -> PropertyTable {
        let mut out = PropertyTable::default();
        for (k, col) in &self.columns {
            let kept: Vec<_> = col
                .iter()
                .filter_map(|(o, v)| {
                    map.get(*o as usize)
                        .copied()
                        .flatten()
                        .map(|n| (n, v.clone()))
                })
                .collect();
            if !kept.is_empty() {
                out.columns.insert(k.clone(), kept);
            }
        }
        out.seal();
        out
    }
}
