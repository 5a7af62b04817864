//! Binary snapshots: a graph (and whatever later stages precompute, e.g. marginals and
//! embeddings) in one file that reloads at disk speed.
//!
//! Layout: magic `SERENQA\x01`, format version (u32), section count (u32), then a table of
//! sections (name, byte offset, byte length, xxh3-64 of the bytes), then the sections, each
//! 8-byte aligned. Arrays are stored as raw little-endian values; small metadata as JSON.
//! Every section is checksummed, so a truncated or corrupted file is rejected with a clear
//! error instead of producing a wrong graph. Writes go to a temporary file that is renamed
//! into place, so a crash never leaves a half-written snapshot under the final name.
//!
//! Reading memory-maps the file (read-only) when the system allows it: [`SnapshotReader::
//! read_section`] then returns a [`Section`] that points into the map instead of a copy, so
//! every process serving or evaluating on the same snapshot shares one page-cache copy of the
//! graph arrays and the model's embeddings and marginals. Checksums are still verified on open
//! of each section (one pass over its pages, which also brings them into the page cache); a
//! section that fails is rejected exactly as with copied reads. When the map cannot be made,
//! or a section is not aligned for its type, the section is copied as before.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::Mmap;
use serde::{de::DeserializeOwned, Serialize};

use crate::error::{GraphError, Result};
use crate::section::Section;

const MAGIC: &[u8; 8] = b"SERENQA\x01";
pub const FORMAT_VERSION: u32 = 1;

struct Entry {
    name: String,
    offset: u64,
    len: u64,
    hash: u64,
}

/// Collects sections (borrowed where possible) and writes them in one go.
#[derive(Default)]
pub struct SnapshotWriter<'a> {
    sections: Vec<(String, Cow<'a, [u8]>)>,
}

impl<'a> SnapshotWriter<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_pod<T: Pod>(&mut self, name: &str, data: &'a [T]) {
        self.sections
            .push((name.to_string(), Cow::Borrowed(bytemuck::cast_slice(data))));
    }

    pub fn add_bytes(&mut self, name: &str, data: &'a [u8]) {
        self.sections.push((name.to_string(), Cow::Borrowed(data)));
    }

    pub fn add_json<T: Serialize>(&mut self, name: &str, value: &T) -> Result<()> {
        let bytes = serde_json::to_vec(value)
            .map_err(|e| GraphError::invalid(format!("snapshot section {name}: {e}")))?;
        self.sections.push((name.to_string(), Cow::Owned(bytes)));
        Ok(())
    }

    pub fn write_to(&self, path: &Path) -> Result<()> {
        let io = |e: std::io::Error| GraphError::file(path, e.to_string());
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = tmp_path(path);
        {
            let file = File::create(&tmp).map_err(|e| GraphError::file(&tmp, e.to_string()))?;
            let mut w = BufWriter::with_capacity(1 << 22, file);
            // Header size: magic + version + count + per entry (u32 name len + name + 3×u64).
            let header: u64 = 16
                + self
                    .sections
                    .iter()
                    .map(|(n, _)| 4 + n.len() as u64 + 24)
                    .sum::<u64>();
            let mut offset = align8(header);
            let mut entries = Vec::with_capacity(self.sections.len());
            for (name, data) in &self.sections {
                let hash = xxhash_rust::xxh3::xxh3_64(data);
                entries.push(Entry {
                    name: name.clone(),
                    offset,
                    len: data.len() as u64,
                    hash,
                });
                offset = align8(offset + data.len() as u64);
            }
            w.write_all(MAGIC).map_err(io)?;
            w.write_all(&FORMAT_VERSION.to_le_bytes()).map_err(io)?;
            w.write_all(&(entries.len() as u32).to_le_bytes())
                .map_err(io)?;
            for e in &entries {
                w.write_all(&(e.name.len() as u32).to_le_bytes())
                    .map_err(io)?;
                w.write_all(e.name.as_bytes()).map_err(io)?;
                for v in [e.offset, e.len, e.hash] {
                    w.write_all(&v.to_le_bytes()).map_err(io)?;
                }
            }
            let mut pos = header;
            for (e, (_, data)) in entries.iter().zip(&self.sections) {
                w.write_all(&vec![0u8; (e.offset - pos) as usize])
                    .map_err(io)?;
                w.write_all(data).map_err(io)?;
                pos = e.offset + e.len;
            }
            w.flush().map_err(io)?;
            w.get_ref().sync_all().map_err(io)?;
        }
        std::fs::rename(&tmp, path).map_err(io)
    }
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(std::ffi::OsStr::to_os_string)
        .unwrap_or_default();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

fn align8(x: u64) -> u64 {
    (x + 7) & !7
}

/// Reads sections by name, verifying each one's checksum.
pub struct SnapshotReader {
    path: PathBuf,
    file: BufReader<File>,
    entries: Vec<Entry>,
    /// The whole file, mapped read-only; `None` when mapping failed or was not asked for.
    map: Option<Arc<Mmap>>,
}

impl SnapshotReader {
    /// Opens a snapshot and memory-maps it, so [`SnapshotReader::read_section`] can hand out
    /// shared, mapped arrays (falls back to copied reads if the file cannot be mapped).
    pub fn open(path: &Path) -> Result<Self> {
        let mut r = Self::open_unmapped(path)?;
        // SAFETY: the map is read-only. serenqa never modifies a snapshot file in place (writes
        // go to a temporary file renamed over the old name, which leaves a mapped inode
        // untouched); another program truncating the file while it is mapped would be the one
        // hazard, as for any mapped file.
        r.map = unsafe { Mmap::map(r.file.get_ref()) }.ok().map(Arc::new);
        Ok(r)
    }

    /// Opens a snapshot without mapping it: every section is copied into the heap.
    pub fn open_unmapped(path: &Path) -> Result<Self> {
        let bad =
            |msg: &str| GraphError::file(path, format!("not a valid serenqa snapshot: {msg}"));
        let file = File::open(path).map_err(|e| GraphError::file(path, e.to_string()))?;
        let file_len = file
            .metadata()
            .map_err(|e| GraphError::file(path, e.to_string()))?
            .len();
        let mut file = BufReader::with_capacity(1 << 22, file);
        let mut magic = [0u8; 8];
        file.read_exact(&mut magic)
            .map_err(|_| bad("file too short"))?;
        if &magic != MAGIC {
            return Err(bad("wrong magic bytes"));
        }
        let version = read_u32(&mut file).map_err(|_| bad("truncated header"))?;
        if version != FORMAT_VERSION {
            return Err(GraphError::file(
                path,
                format!("snapshot format {version} is not supported (this build reads {FORMAT_VERSION}); re-run `serenqa import`"),
            ));
        }
        let count = read_u32(&mut file).map_err(|_| bad("truncated header"))?;
        if count > 10_000 {
            return Err(bad("implausible section count"));
        }
        let mut entries = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let name_len = read_u32(&mut file).map_err(|_| bad("truncated header"))?;
            if name_len > 1024 {
                return Err(bad("implausible section name"));
            }
            let mut name = vec![0u8; name_len as usize];
            file.read_exact(&mut name)
                .map_err(|_| bad("truncated header"))?;
            let name = String::from_utf8(name).map_err(|_| bad("section name is not UTF-8"))?;
            let offset = read_u64(&mut file).map_err(|_| bad("truncated header"))?;
            let len = read_u64(&mut file).map_err(|_| bad("truncated header"))?;
            let hash = read_u64(&mut file).map_err(|_| bad("truncated header"))?;
            if offset.checked_add(len).is_none_or(|end| end > file_len) {
                return Err(GraphError::file(
                    path,
                    format!("snapshot is truncated (section {name} runs past the end)"),
                ));
            }
            entries.push(Entry {
                name,
                offset,
                len,
                hash,
            });
        }
        Ok(SnapshotReader {
            path: path.to_path_buf(),
            file,
            entries,
            map: None,
        })
    }

    /// Whether sections are read from a memory map (see [`SnapshotReader::read_section`]).
    pub fn is_mapped(&self) -> bool {
        self.map.is_some()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn has(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e.name == name)
    }

    pub fn section_names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }

    fn entry(&self, name: &str) -> Result<(u64, u64, u64)> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| (e.offset, e.len, e.hash))
            .ok_or_else(|| GraphError::file(&self.path, format!("snapshot has no section {name}")))
    }

    /// Reads an array section straight into a typed vector (no intermediate copy).
    pub fn read_pod<T: Pod>(&mut self, name: &str) -> Result<Vec<T>> {
        let (offset, len, hash) = self.entry(name)?;
        let size = std::mem::size_of::<T>() as u64;
        if len % size != 0 {
            return Err(GraphError::file(
                &self.path,
                format!("section {name} has a length that is not a multiple of {size}"),
            ));
        }
        let mut v: Vec<T> = vec![T::zeroed(); (len / size) as usize];
        self.read_into(name, offset, hash, bytemuck::cast_slice_mut(&mut v))?;
        Ok(v)
    }

    /// Reads an array section, pointing into the file's memory map when the snapshot is mapped
    /// and the section is aligned for `T`, copying it otherwise. The checksum is verified
    /// either way before the section is returned.
    pub fn read_section<T: Pod>(&mut self, name: &str) -> Result<Section<T>> {
        let (offset, len, hash) = self.entry(name)?;
        let size = std::mem::size_of::<T>() as u64;
        if len % size != 0 {
            return Err(GraphError::file(
                &self.path,
                format!("section {name} has a length that is not a multiple of {size}"),
            ));
        }
        let Some(map) = self.map.as_ref().filter(|_| len > 0) else {
            return self.read_pod(name).map(Section::Owned);
        };
        let (Ok(start), Ok(n)) = (usize::try_from(offset), usize::try_from(len)) else {
            return self.read_pod(name).map(Section::Owned);
        };
        let Some(section) = Section::<T>::mapped(Arc::clone(map), start, n) else {
            return self.read_pod(name).map(Section::Owned);
        };
        if xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice::<T, u8>(&section)) != hash {
            return Err(GraphError::file(
                &self.path,
                format!("section {name} is corrupted (checksum mismatch)"),
            ));
        }
        Ok(section)
    }

    pub fn read_bytes(&mut self, name: &str) -> Result<Vec<u8>> {
        let (offset, len, hash) = self.entry(name)?;
        let mut v = vec![0u8; len as usize];
        self.read_into(name, offset, hash, &mut v)?;
        Ok(v)
    }

    pub fn read_json<T: DeserializeOwned>(&mut self, name: &str) -> Result<T> {
        let bytes = self.read_bytes(name)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| GraphError::file(&self.path, format!("section {name}: {e}")))
    }

    fn read_into(&mut self, name: &str, offset: u64, hash: u64, buf: &mut [u8]) -> Result<()> {
        let io = |e: std::io::Error| {
            GraphError::file(&self.path, format!("reading section {name}: {e}"))
        };
        self.file.seek(SeekFrom::Start(offset)).map_err(io)?;
        self.file.read_exact(buf).map_err(io)?;
        if xxhash_rust::xxh3::xxh3_64(buf) != hash {
            return Err(GraphError::file(
                &self.path,
                format!("section {name} is corrupted (checksum mismatch)"),
            ));
        }
        Ok(())
    }
}

fn read_u32(r: &mut impl Read) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_u64(r: &mut impl Read) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

// ----- the graph's own sections -----

#[derive(Serialize, serde::Deserialize)]
struct GraphHeader {
    meta: crate::GraphMeta,
    types: Vec<String>,
    type_display: Vec<String>,
    relations: Vec<crate::RelationType>,
    nodes: u64,
    edges: u64,
}

impl crate::Graph {
    /// Adds the graph's sections (all prefixed `graph.`) to a snapshot being written.
    pub fn write_sections<'a>(&'a self, w: &mut SnapshotWriter<'a>) -> Result<()> {
        w.add_json(
            "graph.header",
            &GraphHeader {
                meta: self.meta.clone(),
                types: self.types.names().to_vec(),
                type_display: self.type_display.clone(),
                relations: self.relations.clone(),
                nodes: self.node_count() as u64,
                edges: self.edge_count() as u64,
            },
        )?;
        w.add_pod("graph.node_type", &self.node_type);
        w.add_bytes("graph.ident.bytes", self.ident.bytes());
        w.add_pod("graph.ident.offsets", self.ident.offsets());
        w.add_bytes("graph.name.bytes", self.name.bytes());
        w.add_pod("graph.name.offsets", self.name.offsets());
        w.add_pod("graph.out_offsets", &self.out_offsets);
        w.add_pod("graph.out_targets", &self.out_targets);
        w.add_pod("graph.out_rel", &self.out_rel);
        w.add_pod("graph.in_offsets", &self.in_offsets);
        w.add_pod("graph.in_sources", &self.in_sources);
        w.add_pod("graph.in_rel", &self.in_rel);
        w.add_pod("graph.in_edge", &self.in_edge);
        w.add_pod("graph.scores", &self.scores);
        w.add_pod("graph.by_ident", &self.by_ident);
        w.add_pod("graph.by_name", &self.by_name);
        w.add_pod("graph.by_type", &self.by_type);
        w.add_pod("graph.type_offsets", &self.type_offsets);
        w.add_json("graph.node_props", &self.node_props)?;
        w.add_json("graph.edge_props", &self.edge_props)?;
        Ok(())
    }

    /// Writes a snapshot holding just the graph.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut w = SnapshotWriter::new();
        self.write_sections(&mut w)?;
        w.write_to(path)
    }

    /// Loads a graph saved by [`Graph::save`] (or any snapshot with `graph.` sections),
    /// checking that the arrays are consistent with each other.
    pub fn load(path: &Path) -> Result<crate::Graph> {
        let mut r = SnapshotReader::open(path)?;
        Self::read_sections(&mut r)
    }

    pub fn read_sections(r: &mut SnapshotReader) -> Result<crate::Graph> {
        let h: GraphHeader = r.read_json("graph.header")?;
        let path = r.path().to_path_buf();
        let bad = |msg: String| GraphError::file(&path, format!("inconsistent snapshot: {msg}"));
        let node_type: Section<u16> = r.read_section("graph.node_type")?;
        let ident_bytes = r.read_section("graph.ident.bytes")?;
        let ident_offsets = r.read_section("graph.ident.offsets")?;
        let name_bytes = r.read_section("graph.name.bytes")?;
        let name_offsets = r.read_section("graph.name.offsets")?;
        let ident =
            crate::strings::StringArena::from_parts(ident_bytes, ident_offsets).map_err(&bad)?;
        let name =
            crate::strings::StringArena::from_parts(name_bytes, name_offsets).map_err(&bad)?;
        let mut types = crate::vocab::Vocab::new();
        for t in &h.types {
            types.intern(t);
        }
        let mut rel_index = std::collections::HashMap::new();
        for (i, rel) in h.relations.iter().enumerate() {
            rel_index.insert(rel.name.clone(), i as u16);
            rel_index.entry(rel.abbrev.clone()).or_insert(i as u16);
        }
        let g = crate::Graph {
            meta: h.meta,
            types,
            type_display: h.type_display,
            relations: h.relations,
            rel_index,
            node_type,
            ident,
            name,
            out_offsets: r.read_section("graph.out_offsets")?,
            out_targets: r.read_section("graph.out_targets")?,
            out_rel: r.read_section("graph.out_rel")?,
            in_offsets: r.read_section("graph.in_offsets")?,
            in_sources: r.read_section("graph.in_sources")?,
            in_rel: r.read_section("graph.in_rel")?,
            in_edge: r.read_section("graph.in_edge")?,
            scores: r.read_section("graph.scores")?,
            by_ident: r.read_section("graph.by_ident")?,
            by_name: r.read_section("graph.by_name")?,
            by_type: r.read_section("graph.by_type")?,
            type_offsets: r.read_section("graph.type_offsets")?,
            node_props: r.read_json("graph.node_props")?,
            edge_props: r.read_json("graph.edge_props")?,
        };
        g.validate(h.nodes, h.edges).map_err(bad)?;
        Ok(g)
    }

    /// Cheap structural checks (sizes and bounds), so a crafted file cannot cause an
    /// out-of-bounds panic later. O(V + E), vectorisable.
    fn validate(&self, nodes: u64, edges: u64) -> std::result::Result<(), String> {
        let n = self.node_type.len();
        let m = self.out_targets.len();
        if n as u64 != nodes || m as u64 != edges {
            return Err(format!(
                "header says {nodes} nodes / {edges} edges, arrays hold {n} / {m}"
            ));
        }
        if self.ident.len() != n || self.name.len() != n {
            return Err("string columns do not match the node count".into());
        }
        for (what, off) in [("out", &self.out_offsets), ("in", &self.in_offsets)] {
            if off.len() != n + 1
                || off[0] != 0
                || off[n] != m as u64
                || off.windows(2).any(|w| w[0] > w[1])
            {
                return Err(format!("{what}-offsets are malformed"));
            }
        }
        if self.out_rel.len() != m
            || self.in_sources.len() != m
            || self.in_rel.len() != m
            || self.in_edge.len() != m
        {
            return Err("edge arrays differ in length".into());
        }
        if !self.scores.is_empty() && self.scores.len() != m {
            return Err("score array has the wrong length".into());
        }
        let nr = self.relations.len() as u16;
        let nt = self.types.len() as u16;
        if self
            .out_targets
            .iter()
            .chain(&self.in_sources)
            .any(|&v| v as usize >= n)
            || self.out_rel.iter().chain(&self.in_rel).any(|&r| r >= nr)
            || self.in_edge.iter().any(|&e| e as usize >= m)
            || self.node_type.iter().any(|&t| t >= nt)
        {
            return Err("an edge or node refers past the end of its table".into());
        }
        if self.by_ident.len() != n || self.by_name.len() != n || self.by_type.len() != n {
            return Err("index permutations have the wrong length".into());
        }
        if self
            .by_ident
            .iter()
            .chain(&self.by_name)
            .chain(&self.by_type)
            .any(|&v| v as usize >= n)
        {
            return Err("an index refers to a missing node".into());
        }
        let t = self.types.len();
        if self.type_offsets.len() != t + 1
            || self.type_offsets[t] != n as u64
            || self.type_offsets.windows(2).any(|w| w[0] > w[1])
        {
            return Err("type offsets are malformed".into());
        }
        if self.type_display.len() != t {
            return Err("type names do not match".into());
        }
        Ok(())
    }
}
