//! The Redis key scheme and the adjacency record codec.
//!
//! Keys (the paper's Appendix D.2 scheme; the braces are Redis Cluster hash tags, so a node's
//! adjacency key and the keys of the edges it is the source of hash to one slot, one shard):
//! - `rel:{<source id>}:<source type>:<relation type>:<target id>:<target type>` — one per
//!   (source, relation, target); value: JSON list of the attributes of each parallel edge,
//!   e.g. `[{"edge":17,"score":0.8}]` (plus any extra edge properties under `props`).
//! - `adj:{<node id>}:<node type>` — one per node (empty for a node without edges, so that a
//!   re-export overwrites every node's list and a missing key is detectably a broken export); value: [`ADJ_MAGIC`] then one
//!   [`RECORD_BYTES`]-byte little-endian record per incident edge, in CSR order (see
//!   [`encode_adjacency`]). Neighbour lookups read only these: one `GET` per node.
//! - [`META_KEY`] — JSON [`Meta`]: the graph's content hash, counts and the relation and type
//!   tables. Written last by an export and deleted first, so its presence means the export
//!   finished.
//!
//! Records carry internal node, edge and relation numbers, valid for the graph whose content
//! hash is in the meta key; the string keys carry the source identifiers, so the store stays
//! readable with `redis-cli` and usable by tools that know nothing of the numbering.

use serde::{Deserialize, Serialize};

use crate::Incident;

pub const META_KEY: &str = "serenqa:edges:meta";
pub const META_FORMAT: &str = "serenqa-edges/1";
/// Version tag at the start of every adjacency value.
pub const ADJ_MAGIC: &[u8; 4] = b"SQA1";
/// other u32 | edge u32 | score f32 (NaN = none) | other degree u32 | relation u16 | flags u16.
pub const RECORD_BYTES: usize = 20;
const FORWARD: u16 = 1;

/// What an export wrote, stored under [`META_KEY`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub format: String,
    pub graph_hash: String,
    pub nodes: u64,
    pub edges: u64,
    /// Relation names by relation id.
    pub relations: Vec<String>,
    /// Type labels by type id.
    pub types: Vec<String>,
    /// Whether the per-edge `rel:` keys were written (an adjacency-only export skips them).
    pub edge_keys: bool,
    pub exported_unix: u64,
}

/// `adj:{<id>}:<Type>`.
pub fn adj_key(ident: &str, type_label: &str) -> String {
    format!("adj:{{{ident}}}:{type_label}")
}

/// `rel:{<source id>}:<Source type>:<REL>:<target id>:<Target type>`.
pub fn rel_key(src: &str, src_type: &str, rel: &str, tgt: &str, tgt_type: &str) -> String {
    format!("rel:{{{src}}}:{src_type}:{rel}:{tgt}:{tgt_type}")
}

/// The Redis Cluster hash slot of a key (CRC16/XMODEM of the hash tag, mod 16384): tests use it
/// to show that a node's keys share a slot.
pub fn hash_slot(key: &str) -> u16 {
    let b = key.as_bytes();
    let tagged = b.iter().position(|&c| c == b'{').and_then(|open| {
        let rest = &b[open + 1..];
        rest.iter()
            .position(|&c| c == b'}')
            .filter(|&close| close > 0)
            .map(|close| &rest[..close])
    });
    crc16_xmodem(tagged.unwrap_or(b)) % 16384
}

fn crc16_xmodem(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Packs incident edges into an adjacency value.
pub fn encode_adjacency(items: &[Incident]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ADJ_MAGIC.len() + items.len() * RECORD_BYTES);
    out.extend_from_slice(ADJ_MAGIC);
    for it in items {
        out.extend_from_slice(&it.other.to_le_bytes());
        out.extend_from_slice(&it.edge.to_le_bytes());
        out.extend_from_slice(&it.score.unwrap_or(f32::NAN).to_le_bytes());
        out.extend_from_slice(&it.other_degree.to_le_bytes());
        out.extend_from_slice(&it.rel.to_le_bytes());
        out.extend_from_slice(&(if it.forward { FORWARD } else { 0 }).to_le_bytes());
    }
    out
}

/// Unpacks an adjacency value; a clear error for anything that is not one.
pub fn decode_adjacency(bytes: &[u8]) -> Result<Vec<Incident>, String> {
    let body = bytes
        .strip_prefix(ADJ_MAGIC.as_slice())
        .ok_or_else(|| "not a serenqa adjacency value (bad magic)".to_string())?;
    if body.len() % RECORD_BYTES != 0 {
        return Err(format!("truncated adjacency value ({} bytes after the magic, not a multiple of {RECORD_BYTES})", body.len()));
    }
    let u32_at = |r: &[u8], i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
    let u16_at = |r: &[u8], i: usize| u16::from_le_bytes([r[i], r[i + 1]]);
    Ok(body
        .chunks_exact(RECORD_BYTES)
        .map(|r| {
            let score = f32::from_bits(u32_at(r, 8));
            Incident {
                other: u32_at(r, 0),
                edge: u32_at(r, 4),
                score: (!score.is_nan()).then_some(score),
                other_degree: u32_at(r, 12),
                rel: u16_at(r, 16),
                forward: u16_at(r, 18) & FORWARD != 0,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacency_round_trips() {
        let items = vec![
            Incident {
                edge: 7,
                rel: 3,
                other: 42,
                forward: true,
                score: Some(0.25),
                other_degree: 9,
            },
            Incident {
                edge: u32::MAX,
                rel: u16::MAX,
                other: 0,
                forward: false,
                score: None,
                other_degree: 0,
            },
        ];
        let bytes = encode_adjacency(&items);
        assert_eq!(bytes.len(), 4 + 2 * RECORD_BYTES);
        assert_eq!(decode_adjacency(&bytes).expect("decodes"), items);
        assert_eq!(
            decode_adjacency(&encode_adjacency(&[])).expect("empty decodes"),
            vec![]
        );
    }

    #[test]
    fn corrupt_values_are_errors() {
        assert!(decode_adjacency(b"nope").unwrap_err().contains("magic"));
        let mut bytes = encode_adjacency(&[Incident {
            edge: 1,
            rel: 1,
            other: 1,
            forward: true,
            score: None,
            other_degree: 1,
        }]);
        bytes.pop();
        assert!(decode_adjacency(&bytes).unwrap_err().contains("truncated"));
    }

    #[test]
    fn keys_follow_the_scheme_and_share_a_slot() {
        let a = adj_key("DB00945", "Compound");
        let r = rel_key("DB00945", "Compound", "TREATS_CtD", "DOID:1234", "Disease");
        assert_eq!(a, "adj:{DB00945}:Compound");
        assert_eq!(r, "rel:{DB00945}:Compound:TREATS_CtD:DOID:1234:Disease");
        assert_eq!(hash_slot(&a), hash_slot(&r));
        // Known values from the Redis Cluster specification.
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
        assert_eq!(
            hash_slot("{user1000}.following"),
            hash_slot("{user1000}.followers")
        );
        assert_eq!(hash_slot("foo{}{bar}"), crc16_xmodem(b"foo{}{bar}") % 16384);
    }
}
