//! A compact multimap from strings to values for the offline agents' name indexes: the
//! distinct keys sorted and concatenated in one string, each key's values in one flat array.
//! A key costs its bytes and 16 bytes, a value its size: no allocation per key, which is what
//! makes a name index of a CKG-sized graph (15M names) fit beside it.

use std::cmp::Ordering;

use rayon::prelude::*;

/// A multimap from strings to values, built once: the distinct keys sorted and concatenated,
/// each key's values in one flat array, in the order they were given.
pub(crate) struct StrTable<V> {
    text: String,
    /// Key `i` is `text[ends[i - 1]..ends[i]]` (from 0 for the first).
    ends: Vec<u64>,
    /// Key `i`'s values are `vals[offs[i]..offs[i + 1]]`.
    offs: Vec<u64>,
    vals: Vec<V>,
}

/// The (key, value) pairs of a [`StrTable`] being built, keys in one string: no allocation
/// per key while they are gathered either.
pub(crate) struct Builder<V> {
    text: String,
    /// (start of the key in `text`, its length, value).
    items: Vec<(u64, u32, V)>,
}

impl<V: Copy + Send + Sync> Builder<V> {
    pub(crate) fn new() -> Builder<V> {
        Builder {
            text: String::new(),
            items: Vec::new(),
        }
    }

    /// Adds `v` under `key` (a key past 4 GiB is cut at a char boundary; none is that long).
    pub(crate) fn push(&mut self, key: &str, v: V) {
        let mut len = key.len().min(u32::MAX as usize);
        while !key.is_char_boundary(len) {
            len -= 1;
        }
        self.items.push((self.text.len() as u64, len as u32, v));
        self.text.push_str(&key[..len]);
    }

    pub(crate) fn finish(self) -> StrTable<V> {
        let Builder { text, mut items } = self;
        let key = |&(a, l, _): &(u64, u32, V)| &text[a as usize..a as usize + l as usize];
        // Stable: a key's values keep the order they were given in.
        items.par_sort_by(|x, y| key(x).cmp(key(y)));
        let mut keys = 0usize;
        let mut bytes = 0usize;
        for (i, it) in items.iter().enumerate() {
            if i == 0 || key(&items[i - 1]) != key(it) {
                keys += 1;
                bytes += key(it).len();
            }
        }
        let mut t = StrTable {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(keys),
            offs: Vec::with_capacity(keys + 1),
            vals: Vec::with_capacity(items.len()),
        };
        t.offs.push(0);
        for (i, it) in items.iter().enumerate() {
            if i == 0 || key(&items[i - 1]) != key(it) {
                if i > 0 {
                    t.offs.push(t.vals.len() as u64);
                }
                t.text.push_str(key(it));
                t.ends.push(t.text.len() as u64);
            }
            t.vals.push(it.2);
        }
        if !items.is_empty() {
            t.offs.push(t.vals.len() as u64);
        }
        t
    }
}

impl<V: Copy> StrTable<V> {
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(crate) fn key(&self, i: usize) -> &str {
        let a = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[a..self.ends[i] as usize]
    }

    pub(crate) fn values(&self, i: usize) -> &[V] {
        &self.vals[self.offs[i] as usize..self.offs[i + 1] as usize]
    }

    /// The first key not less than `k`.
    pub(crate) fn lower_bound(&self, k: &str) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key(mid) < k {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    pub(crate) fn find(&self, k: &str) -> Option<usize> {
        let i = self.lower_bound(k);
        (i < self.len() && self.key(i) == k).then_some(i)
    }

    /// `k`'s values (empty when `k` is not a key).
    pub(crate) fn get(&self, k: &str) -> &[V] {
        self.find(k).map_or(&[], |i| self.values(i))
    }

    /// Sorts each key's values by `order` and drops repeats next to each other.
    pub(crate) fn sort_dedup(&mut self, order: impl Fn(&V, &V) -> Ordering)
    where
        V: PartialEq,
    {
        let mut w = 0usize;
        for i in 0..self.len() {
            let (a, b) = (self.offs[i] as usize, self.offs[i + 1] as usize);
            self.vals[a..b].sort_by(&order);
            self.offs[i] = w as u64;
            for j in a..b {
                if j == a || self.vals[j] != self.vals[j - 1] {
                    self.vals[w] = self.vals[j];
                    w += 1;
                }
            }
        }
        if let Some(last) = self.offs.last_mut() {
            *last = w as u64;
        }
        self.vals.truncate(w);
        self.vals.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(pairs: &[(&str, u32)]) -> StrTable<u32> {
        let mut b = Builder::new();
        for &(k, v) in pairs {
            b.push(k, v);
        }
        b.finish()
    }

    #[test]
    fn keys_sorted_values_in_given_order() {
        let t = table(&[("b", 3), ("a", 9), ("b", 1), ("ab", 2), ("b", 3)]);
        let keys: Vec<&str> = (0..t.len()).map(|i| t.key(i)).collect();
        assert_eq!(keys, ["a", "ab", "b"]);
        assert_eq!(t.get("b"), [3, 1, 3]);
        assert_eq!(t.get("a"), [9]);
        assert!(t.get("c").is_empty() && t.get("").is_empty());
        assert_eq!(t.lower_bound("aa"), 1);
        assert_eq!(t.lower_bound("zz"), 3);
    }

    #[test]
    fn sort_dedup_per_key() {
        let mut t = table(&[("x", 3), ("x", 1), ("x", 3), ("y", 2), ("y", 2), ("z", 5)]);
        t.sort_dedup(|a, b| b.cmp(a));
        assert_eq!(t.get("x"), [3, 1]);
        assert_eq!(t.get("y"), [2]);
        assert_eq!(t.get("z"), [5]);
    }

    #[test]
    fn empty_and_unicode_keys() {
        let t = table(&[]);
        assert_eq!(t.len(), 0);
        assert!(t.get("a").is_empty());
        let t = table(&[("ärzte", 1), ("", 2), ("é", 3)]);
        assert_eq!(t.get("ärzte"), [1]);
        assert_eq!(t.get(""), [2]);
        assert_eq!(t.get("é"), [3]);
    }
}
