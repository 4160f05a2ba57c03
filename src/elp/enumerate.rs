//! Enumeration of an ELP set's paths (for `--paths-out` and tests): a DFS
//! over the language from every first hop. A union of families yields each
//! node sequence once, because prefixes shared by several families travel
//! together.

use super::{ElpSet, Prefixes};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use tagger_generators::{ChannelId, NodeId, Topology};

/// Calls `emit` with every ELP as a node sequence, sources in endpoint order
/// and continuations in channel order. Stops with [`Error::Limit`] once more
/// than `max` paths have been found.
///
/// Parallel links are merged: a path is a node sequence.
///
/// # Errors
/// [`Error::Limit`] past `max` paths, or whatever `emit` returns.
pub fn for_each_path(
    topo: &Topology,
    elp: &ElpSet,
    max: u64,
    mut emit: impl FnMut(&[NodeId]) -> Result<()>,
) -> Result<u64> {
    let mut count = 0u64;
    let mut nodes: Vec<NodeId> = Vec::new();
    // Group first hops by (source, next node) so parallel links merge.
    let mut firsts: BTreeMap<(NodeId, NodeId), (ChannelId, Prefixes)> = BTreeMap::new();
    for (c, p) in elp.initial(topo) {
        match firsts.entry((topo.channel_src(c), topo.channel_dst(c))) {
            std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().1.union(p),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert((c, p));
            }
        }
    }
    for ((s, _), (c, p)) in firsts {
        nodes.clear();
        nodes.push(s);
        dfs(topo, elp, c, 1, p, &mut nodes, &mut count, max, &mut emit)?;
    }
    Ok(count)
}

#[allow(clippy::too_many_arguments)]
fn dfs(
    topo: &Topology,
    elp: &ElpSet,
    c: ChannelId,
    hop: u32,
    p: Prefixes,
    nodes: &mut Vec<NodeId>,
    count: &mut u64,
    max: u64,
    emit: &mut impl FnMut(&[NodeId]) -> Result<()>,
) -> Result<()> {
    nodes.push(topo.channel_dst(c));
    if elp.accepts(topo, c, hop, &p) {
        *count += 1;
        if *count > max {
            return Err(Error::Limit {
                what: "ELP paths",
                value: *count as u128,
                limit: max as u128,
            });
        }
        emit(nodes)?;
    }
    let mut next: BTreeMap<NodeId, (ChannelId, Prefixes)> = BTreeMap::new();
    for (c2, q) in elp.successors(topo, c, hop, &p) {
        match next.entry(topo.channel_dst(c2)) {
            std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().1.union(q),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert((c2, q));
            }
        }
    }
    for (_, (c2, q)) in next {
        dfs(topo, elp, c2, hop + 1, q, nodes, count, max, emit)?;
    }
    nodes.pop();
    Ok(())
}
