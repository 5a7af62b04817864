//! The identifiers every stage shares: node ids, relationship references and expansion
//! directions (the lowest module: it imports nothing from the crate).

pub type NodeId = u32;

/// A relationship as the executor carries it: its id plus endpoints and type, so that no
/// lookup is needed to render or compare it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RelRef {
    pub id: u64,
    pub src: NodeId,
    pub dst: NodeId,
    pub ty: u32,
}

/// Which way to expand from a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Out,
    In,
    Both,
}
