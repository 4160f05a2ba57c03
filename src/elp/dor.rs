//! `dor`: dimension-order routing on HyperX and BCube.

use super::Mismatch;
use tagger_generators::{ChannelId, Family, Topology};

/// Dimension-order paths as a language over channels that needs no per-source
/// state: the dimensions corrected along a path strictly rise (HyperX) or
/// strictly fall (BCube), so the last channel alone says what may follow.
///
/// * HyperX: correct coordinates in dimension order 0..L-1, one link (any of
///   the parallel ones) per differing coordinate.
/// * BCube: correct address digits from the highest level to level 0, each
///   correction server -> level-i switch -> server.
#[derive(Debug)]
pub struct Dor {
    bcube: bool,
    /// Dimension (HyperX) or switch level (BCube) of every link.
    dim: Vec<u32>,
    pairs: u64,
    longest: u32,
}

impl Dor {
    /// Heap bytes held (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        crate::budget::bytes_of::<u32>(self.dim.len())
    }

    /// # Errors
    /// [`Mismatch::NotDirect`] when the topology is not HyperX or BCube.
    pub(crate) fn build(topo: &Topology) -> Result<Self, Mismatch> {
        match *topo.family() {
            Family::HyperX { l, s, .. } => {
                let dim = topo
                    .links()
                    .iter()
                    .map(|&[a, b]| tagger_generators::hyperx::link_dimension(a, b, s))
                    .collect();
                let n = topo.endpoints().len() as u64;
                Ok(Dor {
                    bcube: false,
                    dim,
                    pairs: n * (n - 1),
                    longest: l,
                })
            }
            Family::BCube { n, k } => {
                let servers = n.pow(k + 1);
                let per_level = n.pow(k);
                let dim = topo
                    .links()
                    .iter()
                    .map(|&[_, sw]| (sw - servers) / per_level)
                    .collect();
                let e = servers as u64;
                Ok(Dor {
                    bcube: true,
                    dim,
                    pairs: e * (e - 1),
                    longest: 2 * (k + 1),
                })
            }
            _ => Err(Mismatch::NotDirect {
                topology: topo.name().to_string(),
                family: topo.family().name().to_string(),
            }),
        }
    }

    fn dim(&self, c: ChannelId) -> u32 {
        self.dim[(c >> 1) as usize]
    }

    /// Whether a dimension-order route may start on channel `c` (any channel may).
    pub fn first_hop(&self, topo: &Topology, c: ChannelId) -> bool {
        let _ = (topo, c);
        true
    }

    /// Whether a dimension-order route may continue from `c` to `c2`.
    pub fn step(&self, topo: &Topology, c: ChannelId, c2: ChannelId) -> bool {
        if self.bcube {
            let from_server =
                topo.node(topo.channel_src(c)).kind == tagger_generators::NodeKind::Server;
            if from_server {
                c2 != Topology::reverse(c)
            } else {
                self.dim(c2) < self.dim(c)
            }
        } else {
            self.dim(c2) > self.dim(c)
        }
    }

    /// Every ordered pair of distinct endpoints has exactly one
    /// dimension-order node sequence.
    pub fn paths(&self) -> u64 {
        self.pairs
    }
    /// Hops of the longest dimension-order route.
    pub fn longest(&self) -> u32 {
        self.longest
    }
}
