//! What a node is (switch or forwarding server, level, hosts) and which
//! family a topology belongs to.

/// Whether a node is a switch or a server that forwards (BCube).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    /// A switch: forwards traffic; hosts may hang off it.
    Switch,
    /// A server that forwards (BCube): an endpoint itself.
    Server,
}

impl NodeKind {
    /// `switch` or `server`, as the file format writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Switch => "switch",
            NodeKind::Server => "server",
        }
    }
}

/// One node: its kind, its level in a tiered (Clos) network and how many hosts
/// hang off its host ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    /// Switch or server.
    pub kind: NodeKind,
    /// Its tier in a tiered topology (0 at the edge), if any.
    pub level: Option<u32>,
    /// Hosts attached to it.
    pub hosts: u32,
}

impl Node {
    /// A switch at `level` with `hosts` hosts.
    pub fn switch(level: Option<u32>, hosts: u32) -> Self {
        Node {
            kind: NodeKind::Switch,
            level,
            hosts,
        }
    }
    /// A server (an endpoint, no hosts).
    pub fn server() -> Self {
        Node {
            kind: NodeKind::Server,
            level: None,
            hosts: 0,
        }
    }
    /// Traffic starts and ends here (docs/model.md "Terms").
    pub fn is_endpoint(&self) -> bool {
        self.kind == NodeKind::Server || self.hosts > 0
    }
}

/// The family a topology was generated from, with its parameters, so later
/// stages (dimension-order routing) can use the structure without guessing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Family {
    /// A k-ary fat-tree (Al-Fares et al.).
    FatTree {
        /// Ports per switch (even).
        k: u32,
    },
    /// A two-tier leaf-spine.
    LeafSpine {
        /// Leaf switches.
        leaves: u32,
        /// Spine switches.
        spines: u32,
        /// Hosts per leaf.
        hosts: u32,
        /// Parallel links per leaf-spine pair.
        links: u32,
    },
    /// BCube(n, k) (Guo et al.).
    BCube {
        /// Ports per switch.
        n: u32,
        /// The highest switch level (levels 0 to k).
        k: u32,
    },
    /// HyperX (Ahn et al.): an L-dimensional flattened butterfly.
    HyperX {
        /// Dimensions.
        l: u32,
        /// Switches per dimension.
        s: u32,
        /// Parallel links per switch pair.
        k: u32,
        /// Hosts per switch.
        t: u32,
    },
    /// Jellyfish (Singla et al.): a random regular graph of switches.
    Jellyfish {
        /// Switches.
        n: u32,
        /// Ports per switch.
        ports: u32,
        /// Ports used for switches (the rest carry hosts).
        r: u32,
        /// Seed of the construction.
        seed: u64,
    },
    /// Read from a file.
    File,
}

impl Family {
    /// True when the generator puts a level on every node and joins only
    /// adjacent levels: what `kbounce` and the Clos scheme need. Known from
    /// the family alone, so a sweep spec is checked before any topology is
    /// built (files are checked once read).
    pub fn is_tiered(&self) -> bool {
        matches!(self, Family::FatTree { .. } | Family::LeafSpine { .. })
    }

    /// Nodes and links the generator will build, known before it runs, so
    /// that a memory budget can refuse a topology before it exists (`None`
    /// for files). Saturates instead of overflowing.
    pub fn size(&self) -> Option<(u64, u64)> {
        let sat = |x: u128| u64::try_from(x).unwrap_or(u64::MAX);
        Some(match *self {
            Family::FatTree { k } => {
                let k = k as u128;
                (sat(5 * k * k / 4), sat(k * k * k / 2))
            }
            Family::LeafSpine {
                leaves,
                spines,
                links,
                ..
            } => (
                leaves as u64 + spines as u64,
                sat(leaves as u128 * spines as u128 * links as u128),
            ),
            Family::BCube { n, k } => {
                let servers = (n as u128).checked_pow(k + 1).unwrap_or(u128::MAX);
                let switches = servers / n as u128 * (k as u128 + 1);
                (
                    sat(servers.saturating_add(switches)),
                    sat(servers.saturating_mul(k as u128 + 1)),
                )
            }
            Family::HyperX { l, s, k, .. } => {
                let sw = (s as u128).checked_pow(l).unwrap_or(u128::MAX);
                (
                    sat(sw),
                    sat(sw.saturating_mul(l as u128 * (s as u128 - 1) * k as u128) / 2),
                )
            }
            Family::Jellyfish { n, r, .. } => (n as u64, n as u64 * r as u64 / 2),
            Family::File => return None,
        })
    }

    /// True for the families with dimension-order routing (`dor`).
    pub fn has_dimensions(&self) -> bool {
        matches!(self, Family::HyperX { .. } | Family::BCube { .. })
    }

    /// The spec string that generates this family (`fattree:k=8`); `file`
    /// for topologies read from a file.
    pub fn canonical(&self) -> String {
        match self {
            Family::FatTree { k } => format!("fattree:k={k}"),
            Family::LeafSpine {
                leaves,
                spines,
                hosts,
                links,
            } => format!("leafspine:leaves={leaves},spines={spines},hosts={hosts},links={links}"),
            Family::BCube { n, k } => format!("bcube:n={n},k={k}"),
            Family::HyperX { l, s, k, t } => format!("hyperx:l={l},s={s},k={k},t={t}"),
            Family::Jellyfish { n, ports, r, seed } => {
                format!("jellyfish:n={n},ports={ports},r={r},seed={seed}")
            }
            Family::File => "file".into(),
        }
    }

    /// The family's name as a spec writes it (`fattree`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Family::FatTree { .. } => "fattree",
            Family::LeafSpine { .. } => "leafspine",
            Family::BCube { .. } => "bcube",
            Family::HyperX { .. } => "hyperx",
            Family::Jellyfish { .. } => "jellyfish",
            Family::File => "file",
        }
    }
}
