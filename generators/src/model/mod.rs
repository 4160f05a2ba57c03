//! The topology model shared by every stage: an immutable multigraph of nodes
//! with dense link and channel ids and CSR adjacency.
//!
//! Ids are `u32` throughout: a channel id is `2 * link + direction`, so the
//! reverse channel is `c ^ 1` and the link is `c >> 1`, with no lookup.
//!
//! The topology type, its builder and its CSR invariants are here; nodes
//! and families in `node.rs`; the tests that hold the invariants in
//! `tests.rs`.

use crate::error::{Result, TopologyError};
pub use node::{Family, Node, NodeKind};

mod node;

/// A node: `0..N`.
pub type NodeId = u32;
/// A link: `0..L`, its index in the link list.
pub type LinkId = u32;
/// A channel (one direction of a link): `2l` runs `links[l][0] -> links[l][1]`, `2l + 1` the reverse.
pub type ChannelId = u32;

/// Hard caps that keep every id in `u32` and the model well inside memory.
pub const MAX_NODES: u64 = 1 << 24;
/// Most links a topology may have.
pub const MAX_LINKS: u64 = 1 << 27;

/// An immutable network topology.
///
/// Nodes are `0..N`, links `0..L` (parallel links allowed, self-loops not),
/// channels `0..2L` with channel `2l` running `links[l][0] -> links[l][1]` and
/// `2l + 1` the reverse. The ports of a node are its incident links in link-id
/// order; `out_channels(v)[p]` is the channel leaving `v` through port `p`.
#[derive(Clone, Debug)]
pub struct Topology {
    name: String,
    family: Family,
    nodes: Vec<Node>,
    links: Vec<[NodeId; 2]>,
    adj_off: Vec<u32>,
    adj: Vec<ChannelId>,
    endpoints: Vec<NodeId>,
    endpoint_index: Vec<u32>,
    /// Per link, its optional speed and cable length (empty: none given).
    link_props: Vec<LinkProps>,
    /// Per node, the names of its ports (empty: none given; an empty
    /// inner list: that node's were not given).
    port_names: Vec<Vec<String>>,
    /// Per node, its name (empty: none given).
    node_names: Vec<String>,
}

/// The longest cable a link may have, in metres (100 km: past any lossless
/// data-center or metro link; headroom grows with it, and a bound keeps
/// every buffer figure far from overflow).
pub const MAX_CABLE_M: f64 = 100_000.0;

/// The fastest port a link may have, in Gb/s (100 Tb/s).
pub const MAX_SPEED_GBPS: f64 = 100_000.0;

/// What a topology file may say about one link's physical layer; the
/// capacity model falls back to the switch profile for what it does not.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkProps {
    /// Link speed in Gb/s.
    pub speed_gbps: Option<f64>,
    /// Cable length in metres.
    pub cable_m: Option<f64>,
}

/// Marks "not an endpoint" in [`Topology::endpoint_index`].
pub const NOT_ENDPOINT: u32 = u32::MAX;

impl Topology {
    /// Builds a topology after checking every link names existing, distinct
    /// nodes.
    ///
    /// # Errors
    /// [`TopologyError::Invalid`] naming the first bad link, or
    /// [`TopologyError::TooLarge`] when the counts exceed the caps.
    pub fn new(
        name: impl Into<String>,
        family: Family,
        nodes: Vec<Node>,
        links: Vec<[NodeId; 2]>,
    ) -> Result<Self> {
        let fam = family.name();
        if nodes.len() as u64 > MAX_NODES {
            return Err(TopologyError::TooLarge {
                family: fam,
                what: "nodes",
                value: nodes.len() as u128,
                limit: MAX_NODES as u128,
            });
        }
        if links.len() as u64 > MAX_LINKS {
            return Err(TopologyError::TooLarge {
                family: fam,
                what: "links",
                value: links.len() as u128,
                limit: MAX_LINKS as u128,
            });
        }
        let n = nodes.len();
        let mut deg = vec![0u32; n + 1];
        for (l, &[a, b]) in links.iter().enumerate() {
            for x in [a, b] {
                if x as usize >= n {
                    return Err(TopologyError::Invalid {
                        location: format!("links[{l}] = [{a}, {b}]"),
                        reason: format!("node {x} does not exist (nodes are 0..{n})"),
                    });
                }
            }
            if a == b {
                return Err(TopologyError::Invalid {
                    location: format!("links[{l}] = [{a}, {b}]"),
                    reason: "a link must join two distinct nodes (self-loop)".into(),
                });
            }
            deg[a as usize] += 1;
            deg[b as usize] += 1;
        }
        let mut adj_off = Vec::with_capacity(n + 1);
        let mut acc = 0u32;
        for &d in &deg[..n] {
            adj_off.push(acc);
            acc += d;
        }
        adj_off.push(acc);
        let mut fill = adj_off.clone();
        let mut adj = vec![0; acc as usize];
        for (l, &[a, b]) in links.iter().enumerate() {
            let l = l as u32;
            adj[fill[a as usize] as usize] = 2 * l;
            fill[a as usize] += 1;
            adj[fill[b as usize] as usize] = 2 * l + 1;
            fill[b as usize] += 1;
        }
        let mut endpoints = Vec::new();
        let mut endpoint_index = vec![NOT_ENDPOINT; n];
        for (v, node) in nodes.iter().enumerate() {
            if node.is_endpoint() {
                endpoint_index[v] = endpoints.len() as u32;
                endpoints.push(v as NodeId);
            }
        }
        Ok(Topology {
            name: name.into(),
            family,
            nodes,
            links,
            adj_off,
            adj,
            endpoints,
            endpoint_index,
            link_props: Vec::new(),
            port_names: Vec::new(),
            node_names: Vec::new(),
        })
    }

    /// This topology with per-link properties (one per link, or none).
    ///
    /// # Errors
    /// [`TopologyError::Invalid`] when the count differs from the links'.
    pub fn with_link_props(mut self, props: Vec<LinkProps>) -> Result<Self> {
        if !props.is_empty() && props.len() != self.links.len() {
            return Err(TopologyError::Invalid {
                location: "links".into(),
                reason: format!(
                    "{} link properties for {} links",
                    props.len(),
                    self.links.len()
                ),
            });
        }
        self.link_props = if props.iter().all(|p| *p == LinkProps::default()) {
            Vec::new()
        } else {
            props
        };
        Ok(self)
    }

    /// Link `l`'s properties (none given: both `None`).
    pub fn link_props(&self, l: LinkId) -> LinkProps {
        self.link_props.get(l as usize).copied().unwrap_or_default()
    }

    /// Whether any link carries properties.
    pub fn has_link_props(&self) -> bool {
        !self.link_props.is_empty()
    }

    /// This topology with port names: per node none (an empty list) or one
    /// per port, its links in link-id order and then its host ports, as a
    /// switch configuration names them (e.g. `Ethernet0`).
    ///
    /// # Errors
    /// [`TopologyError::Invalid`] naming the node when a list has the wrong
    /// length, a name is empty, repeats, or holds `|`, `,` or whitespace
    /// (switch configurations use them as separators).
    pub fn with_port_names(mut self, names: Vec<Vec<String>>) -> Result<Self> {
        if !names.is_empty() && names.len() != self.nodes.len() {
            return Err(TopologyError::Invalid {
                location: "nodes".into(),
                reason: format!(
                    "port names for {} nodes of {}",
                    names.len(),
                    self.nodes.len()
                ),
            });
        }
        for (v, list) in names.iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            let bad = |reason: String| TopologyError::Invalid {
                location: format!("nodes[{v}].port_names"),
                reason,
            };
            let ports = self.degree(v as NodeId) + self.nodes[v].hosts as usize;
            if list.len() != ports {
                return Err(bad(format!(
                    "{} names for {ports} ports ({} links, then {} host ports)",
                    list.len(),
                    self.degree(v as NodeId),
                    self.nodes[v].hosts
                )));
            }
            let mut seen = std::collections::BTreeSet::new();
            for n in list {
                if n.is_empty() || n.contains(['|', ',']) || n.contains(char::is_whitespace) {
                    return Err(bad(format!(
                        "'{n}' is not a port name (non-empty, without '|', ',' or spaces)"
                    )));
                }
                if !seen.insert(n.as_str()) {
                    return Err(bad(format!("'{n}' names two ports")));
                }
            }
        }
        self.port_names = if names.iter().all(Vec::is_empty) {
            Vec::new()
        } else {
            names
        };
        Ok(self)
    }

    /// This topology with a name per node (as a fabric names its switches:
    /// an InfiniBand node description or GUID, a host name).
    ///
    /// # Errors
    /// [`TopologyError::Invalid`] naming the node when the list has the
    /// wrong length, a name is empty or holds a control character, or two
    /// nodes share one.
    pub fn with_node_names(mut self, names: Vec<String>) -> Result<Self> {
        if names.len() != self.nodes.len() {
            return Err(TopologyError::Invalid {
                location: "nodes".into(),
                reason: format!("names for {} nodes of {}", names.len(), self.nodes.len()),
            });
        }
        let mut seen = std::collections::BTreeMap::new();
        for (v, n) in names.iter().enumerate() {
            let bad = |reason: String| TopologyError::Invalid {
                location: format!("nodes[{v}].name"),
                reason,
            };
            if n.is_empty() || n.contains(char::is_control) {
                return Err(bad(format!(
                    "{n:?} is not a node name (non-empty, no control characters)"
                )));
            }
            if let Some(u) = seen.insert(n.as_str(), v) {
                return Err(bad(format!("'{n}' also names node {u}")));
            }
        }
        self.node_names = names;
        Ok(self)
    }

    /// Whether the topology names its nodes (all of them, or none).
    pub fn has_node_names(&self) -> bool {
        !self.node_names.is_empty()
    }

    /// Node `v`'s name, when the topology gave names.
    pub fn node_name(&self, v: NodeId) -> Option<&str> {
        self.node_names.get(v as usize).map(String::as_str)
    }

    /// Node `v`'s port names, when the topology file gave them: its links
    /// in link-id order, then its host ports.
    pub fn port_names(&self, v: NodeId) -> Option<&[String]> {
        self.port_names
            .get(v as usize)
            .filter(|l| !l.is_empty())
            .map(Vec::as_slice)
    }

    /// The topology's name (its spec, or the file's `name`).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The family it was generated from.
    pub fn family(&self) -> &Family {
        &self.family
    }
    /// Nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
    /// Links.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }
    /// Channels (twice the links).
    pub fn channel_count(&self) -> usize {
        2 * self.links.len()
    }
    /// Every node, by id.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    /// Node `v`.
    pub fn node(&self, v: NodeId) -> &Node {
        &self.nodes[v as usize]
    }
    /// Every link's two ends, by link id.
    pub fn links(&self) -> &[[NodeId; 2]] {
        &self.links
    }
    /// Node `v`'s level, if it has one.
    pub fn level(&self, v: NodeId) -> Option<u32> {
        self.nodes[v as usize].level
    }
    /// Links at node `v`.
    pub fn degree(&self, v: NodeId) -> usize {
        (self.adj_off[v as usize + 1] - self.adj_off[v as usize]) as usize
    }
    /// Channels leaving `v`, one per port, in port order.
    pub fn out_channels(&self, v: NodeId) -> &[ChannelId] {
        &self.adj[self.adj_off[v as usize] as usize..self.adj_off[v as usize + 1] as usize]
    }
    /// Neighbours of `v` in port order (repeated for parallel links).
    pub fn neighbors(&self, v: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.out_channels(v).iter().map(|&c| self.channel_dst(c))
    }
    /// The channel that crosses `link` leaving `from`.
    ///
    /// # Panics
    /// If `from` is not an end of `link`.
    pub fn channel_from(&self, link: LinkId, from: NodeId) -> ChannelId {
        let [a, b] = self.links[link as usize];
        if a == from {
            2 * link
        } else {
            assert_eq!(b, from, "node {from} is not on link {link}");
            2 * link + 1
        }
    }
    /// The node channel `c` leaves.
    pub fn channel_src(&self, c: ChannelId) -> NodeId {
        self.links[(c >> 1) as usize][(c & 1) as usize]
    }
    /// The node channel `c` enters.
    pub fn channel_dst(&self, c: ChannelId) -> NodeId {
        self.links[(c >> 1) as usize][1 - (c & 1) as usize]
    }
    /// The channel running the other way on the same link.
    pub fn reverse(c: ChannelId) -> ChannelId {
        c ^ 1
    }
    /// The endpoints (nodes traffic starts and ends at: switches with hosts, and servers), in id order.
    pub fn endpoints(&self) -> &[NodeId] {
        &self.endpoints
    }
    /// The index of `v` in [`Topology::endpoints`], or [`NOT_ENDPOINT`].
    pub fn endpoint_index(&self, v: NodeId) -> u32 {
        self.endpoint_index[v as usize]
    }
    /// Whether `v` is an endpoint.
    pub fn is_endpoint(&self, v: NodeId) -> bool {
        self.endpoint_index[v as usize] != NOT_ENDPOINT
    }
    /// Hosts over all nodes.
    pub fn total_hosts(&self) -> u64 {
        self.nodes.iter().map(|n| n.hosts as u64).sum()
    }
    /// Nodes of `kind`.
    pub fn count_kind(&self, kind: NodeKind) -> usize {
        self.nodes.iter().filter(|n| n.kind == kind).count()
    }
    /// True when every node has a level.
    pub fn has_levels(&self) -> bool {
        !self.nodes.is_empty() && self.nodes.iter().all(|n| n.level.is_some())
    }
    /// Coordinates of a node where the family defines them: the HyperX
    /// lattice position, or the BCube server address (digit 0 first). BCube
    /// switches of level `i` report the address of their lowest server with
    /// digit `i` replaced by `n` (a wildcard).
    pub fn coords(&self, v: NodeId) -> Option<Vec<u32>> {
        match self.family {
            Family::HyperX { l, s, .. } => Some(digits(v, s, l)),
            Family::BCube { n, k } => {
                let servers = n.pow(k + 1);
                if v < servers {
                    Some(digits(v, n, k + 1))
                } else {
                    let per_level = n.pow(k);
                    let i = (v - servers) / per_level;
                    let j = (v - servers) % per_level;
                    let mut d = digits(j, n, k);
                    d.insert(i as usize, n);
                    Some(d)
                }
            }
            _ => None,
        }
    }
    /// True when `v` is connected to every other node.
    pub fn is_connected(&self) -> bool {
        let n = self.node_count();
        if n <= 1 {
            return true;
        }
        let mut seen = vec![false; n];
        let mut stack = vec![0u32];
        seen[0] = true;
        let mut count = 1;
        while let Some(v) = stack.pop() {
            for w in self.neighbors(v) {
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    count += 1;
                    stack.push(w);
                }
            }
        }
        count == n
    }
    /// Hop distances from `src` to every node (`u32::MAX` when unreachable);
    /// `queue` ends holding the reached nodes in the order they were met.
    pub fn bfs(&self, src: NodeId, dist: &mut Vec<u32>, queue: &mut Vec<NodeId>) {
        self.bfs_live(src, |_| true, dist, queue);
    }

    /// [`Topology::bfs`] over the links `live` keeps (a network with
    /// failed links: a failed switch is its links failing).
    pub fn bfs_live(
        &self,
        src: NodeId,
        live: impl Fn(LinkId) -> bool,
        dist: &mut Vec<u32>,
        queue: &mut Vec<NodeId>,
    ) {
        dist.clear();
        dist.resize(self.node_count(), u32::MAX);
        queue.clear();
        dist[src as usize] = 0;
        queue.push(src);
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head];
            head += 1;
            let dv = dist[v as usize];
            for &c in self.out_channels(v) {
                if !live(c >> 1) {
                    continue;
                }
                let w = self.channel_dst(c);
                if dist[w as usize] == u32::MAX {
                    dist[w as usize] = dv + 1;
                    queue.push(w);
                }
            }
        }
    }
}

/// Base-`base` digits of `x`, least significant first, exactly `count` of them.
pub fn digits(mut x: u32, base: u32, count: u32) -> Vec<u32> {
    let mut d = Vec::with_capacity(count as usize);
    for _ in 0..count {
        d.push(x % base);
        x /= base;
    }
    d
}

#[cfg(test)]
mod tests;
