//! Storage of one large array: either an owned vector (what builders produce) or a slice of a
//! read-only memory map of a snapshot file (what [`crate::snapshot::SnapshotReader`] gives
//! for the big arrays), so processes that open the same snapshot share one page-cache copy.
//!
//! A [`Section`] reads like a `Vec<T>` through `Deref<Target = [T]>`. Mutable access
//! (`DerefMut`, used by tests and builders only) first copies a mapped section into an owned
//! vector, so the file's pages are never written: the map is read-only and private to nothing.
//!
//! Safety of the mapped case, established once in [`Section::mapped`]: the byte range lies
//! inside the map, its start is aligned for `T`, its length is a whole number of `T`s, and `T`
//! is `Pod` (every bit pattern is a value). The `Arc<Mmap>` keeps the mapping alive as long as
//! any section points into it. The remaining hazard is the one of every file map: the file
//! being truncated or rewritten in place underneath. Snapshots are only ever written to a
//! temporary file that is renamed into place, so a mapped inode is never modified by serenqa.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::Mmap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An array that is owned or memory-mapped; see the module docs.
pub enum Section<T: Pod> {
    Owned(Vec<T>),
    Mapped {
        map: Arc<Mmap>,
        /// Byte offset of the first element in the map (aligned for `T`).
        offset: usize,
        /// Number of elements.
        len: usize,
    },
}

impl<T: Pod> Section<T> {
    /// A view of `byte_len` bytes at `offset` of `map` as `[T]`, or `None` when the range is
    /// outside the map, not aligned for `T`, or not a whole number of `T`s (the caller then
    /// copies the bytes instead).
    pub fn mapped(map: Arc<Mmap>, offset: usize, byte_len: usize) -> Option<Self> {
        let size = std::mem::size_of::<T>();
        let end = offset.checked_add(byte_len)?;
        let bytes = map.get(offset..end)?;
        // `try_cast_slice` checks alignment and length for us; the result is not kept.
        bytemuck::try_cast_slice::<u8, T>(bytes).ok()?;
        let len = byte_len.checked_div(size).unwrap_or(0);
        Some(Section::Mapped { map, offset, len })
    }

    /// Whether the data lives in a file map (shared with other processes) rather than the heap.
    pub fn is_mapped(&self) -> bool {
        matches!(self, Section::Mapped { .. })
    }

    /// The owned vector, copying a mapped section.
    pub fn into_vec(self) -> Vec<T> {
        match self {
            Section::Owned(v) => v,
            mapped => mapped.to_vec(),
        }
    }

    /// Mutable access to an owned vector, copying a mapped section first.
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        if let Section::Mapped { .. } = self {
            *self = Section::Owned(self.to_vec());
        }
        match self {
            Section::Owned(v) => v,
            // Unreachable: replaced just above.
            Section::Mapped { .. } => unreachable!("mapped section was just copied"),
        }
    }
}

impl<T: Pod> Deref for Section<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            Section::Owned(v) => v,
            Section::Mapped { map, offset, len } => {
                // SAFETY: `Section::mapped` checked that `offset .. offset + len * size_of::<T>()`
                // lies inside `map` and that `map.as_ptr() + offset` is aligned for `T`; `T` is
                // `Pod`, so any bytes are a valid `T`; the map is read-only and kept alive by the
                // `Arc` for the lifetime of `&self`.
                unsafe { std::slice::from_raw_parts(map.as_ptr().add(*offset).cast::<T>(), *len) }
            }
        }
    }
}

impl<T: Pod> DerefMut for Section<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.to_mut()
    }
}

impl<T: Pod> AsRef<[T]> for Section<T> {
    fn as_ref(&self) -> &[T] {
        self
    }
}

impl<T: Pod> Default for Section<T> {
    fn default() -> Self {
        Section::Owned(Vec::new())
    }
}

impl<T: Pod> From<Vec<T>> for Section<T> {
    fn from(v: Vec<T>) -> Self {
        Section::Owned(v)
    }
}

impl<T: Pod> FromIterator<T> for Section<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Section::Owned(iter.into_iter().collect())
    }
}

impl<T: Pod> Clone for Section<T> {
    /// Cloning a mapped section shares the map (no copy).
    fn clone(&self) -> Self {
        match self {
            Section::Owned(v) => Section::Owned(v.clone()),
            Section::Mapped { map, offset, len } => Section::Mapped {
                map: Arc::clone(map),
                offset: *offset,
                len: *len,
            },
        }
    }
}

impl<T: Pod + fmt::Debug> fmt::Debug for Section<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_mapped() { "mapped" } else { "owned" };
        write!(f, "Section<{kind}>")?;
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Pod + PartialEq> PartialEq for Section<T> {
    /// Equal contents, wherever they are stored.
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Pod + Eq> Eq for Section<T> {}

impl<T: Pod + PartialEq> PartialEq<Vec<T>> for Section<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        **self == **other
    }
}

impl<T: Pod + Serialize> Serialize for Section<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de, T: Pod + Deserialize<'de>> Deserialize<'de> for Section<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(d).map(Section::Owned)
    }
}

impl<'a, T: Pod> IntoIterator for &'a Section<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_reads_and_mutates_like_a_vec() {
        let mut s: Section<u32> = vec![1, 2, 3].into();
        assert_eq!(&*s, &[1, 2, 3]);
        s[1] = 5;
        assert_eq!(s, vec![1, 5, 3]);
        assert!(!s.is_mapped());
        assert_eq!(s.clone().into_vec(), vec![1, 5, 3]);
        assert_eq!(serde_json::to_string(&s).unwrap(), "[1,5,3]");
        let back: Section<u32> = serde_json::from_str("[1,5,3]").unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn mapped_checks_range_and_alignment_and_copies_on_write() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bin");
        let words: Vec<u32> = (0..16).collect();
        std::fs::write(&p, bytemuck::cast_slice::<u32, u8>(&words)).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        // SAFETY (test): the file is private to this test and not modified while mapped.
        let map = Arc::new(unsafe { Mmap::map(&f) }.unwrap());
        let s = Section::<u32>::mapped(Arc::clone(&map), 8, 16).unwrap();
        assert!(s.is_mapped());
        assert_eq!(&*s, &[2, 3, 4, 5]);
        assert!(
            Section::<u32>::mapped(Arc::clone(&map), 2, 8).is_none(),
            "misaligned"
        );
        assert!(
            Section::<u32>::mapped(Arc::clone(&map), 0, 6).is_none(),
            "partial element"
        );
        assert!(
            Section::<u32>::mapped(Arc::clone(&map), 60, 8).is_none(),
            "past the end"
        );
        let mut c = s.clone();
        assert!(c.is_mapped());
        c[0] = 99;
        assert!(!c.is_mapped());
        assert_eq!(&*c, &[99, 3, 4, 5]);
        assert_eq!(&*s, &[2, 3, 4, 5], "the map is never written");
    }
}
