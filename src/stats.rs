//! Statistics of a run: rule-count distributions over nodes, PFC headroom.

use crate::rules::NodeCounts;
use serde::Serialize;

/// Total, max and nearest-rank percentiles of a per-node count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Dist {
    /// Sum over the nodes.
    pub total: u64,
    /// Largest at one node.
    pub max: u64,
    /// Median (nearest rank).
    pub p50: u64,
    /// 99th percentile (nearest rank).
    pub p99: u64,
}

impl Dist {
    /// The distribution of `values` (all zero when empty).
    pub fn of(values: impl IntoIterator<Item = u64>) -> Dist {
        let mut v: Vec<u64> = values.into_iter().collect();
        if v.is_empty() {
            return Dist::default();
        }
        v.sort_unstable();
        let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Dist {
            total: v.iter().sum(),
            max: *v.last().unwrap(),
            p50: rank(0.50),
            p99: rank(0.99),
        }
    }
}

/// Rule-count distributions over the nodes that forward traffic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RuleStats {
    /// Exact-match ACL entries per node.
    pub acl_exact: Dist,
    /// Compressed ACL entries per node.
    pub acl_compressed: Dist,
    /// Queue-mapping rules per node.
    pub queue_rules: Dist,
    /// All rules per node.
    pub rules: Dist,
}

impl RuleStats {
    /// The distributions over `counts`.
    pub fn of(counts: &[NodeCounts]) -> Self {
        RuleStats {
            acl_exact: Dist::of(counts.iter().map(|c| c.acl_exact)),
            acl_compressed: Dist::of(counts.iter().map(|c| c.acl_compressed)),
            queue_rules: Dist::of(counts.iter().map(|c| c.queue_rules)),
            rules: Dist::of(counts.iter().map(NodeCounts::rules)),
        }
    }
}

/// Default planning point: 40 Gb/s, 300 m cables, 1500-byte MTU (~22 KB).
pub fn default_headroom() -> f64 {
    crate::capacity::headroom::simple_bytes(40.0, 300.0, 1500.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let d = Dist::of([5, 1, 3, 2, 4]);
        assert_eq!((d.total, d.max, d.p50, d.p99), (15, 5, 3, 5));
        assert_eq!(Dist::of([]), Dist::default());
    }
}
