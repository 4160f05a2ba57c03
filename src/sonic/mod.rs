//! Installable output: a verified plan as per-switch SONiC `config_db`
//! JSON ([`export`]), or as a neutral per-switch table for other targets
//! ([`table`]), and the way back ([`read`]: the rule set an exported
//! directory encodes, rebuilt from what a switch would be configured with,
//! for [`crate::verify`]).
//!
//! The encoding needs no ACL when a switch has the traffic classes: the
//! rule `(in port, tag, out port) -> next tag` is classified at ingress and
//! rewritten at egress. A traffic class (TC) stands for one arriving
//! priority together with what happens on each out port (the next tag and
//! priority, or nothing: lossy). Per port, `DSCP_TO_TC_MAP` sends each
//! arriving lossless tag (a DSCP value) to its TC; `TC_TO_PRIORITY_GROUP_MAP`
//! puts the TC in the priority group of the priority it arrived with (PFC
//! pauses the upstream on that priority); on each egress port
//! `TC_TO_QUEUE_MAP` puts it in the queue of the priority it leaves with
//! and `TC_TO_DSCP_MAP` rewrites its DSCP to the next tag. TC 0, queue 0
//! and DSCP 0 are the lossy class. (port, tag) pairs whose rewrites agree
//! share a TC ([`classify`](self)), so a Clos bounce plan needs at most four
//! (two priorities, from above and from below); a switch needing more than
//! [`FREE_TCS`] is classified by priority alone and its rewrites become ACL
//! rules.
//!
//! Buffers come from the capacity model ([`crate::capacity`]): each port's
//! arriving lossless priority groups get a `BUFFER_PG` whose
//! `BUFFER_PROFILE` holds that port's xoff and xon for its speed and cable;
//! leaving lossless queues get a `BUFFER_QUEUE`.
//!
//! Tags map to DSCP values and lossless priorities to queues through a
//! [`Mapping`]; the default is tag t -> DSCP t + 2 and priority p ->
//! queue [`DEFAULT_QUEUES`]`[p - 1]` (3 and 4 first, SONiC's default
//! lossless queues, then 2, 5, 6, 1, 7). A plan needing more tags or
//! queues than the mapping has is refused.

mod classify;
mod dir;
mod export;
mod neutral;
mod read;
#[cfg(test)]
mod tests;

pub use export::{Export, Switch, export, replaceable, traffic_classes, write, write_files};
pub use neutral::{TABLE_FORMAT, table};
pub use read::read;

use crate::capacity::Profile;
use crate::error::{Error, ExportKind, Result};
use crate::rules::RuleSet;
use serde_json::{Value, json};
use tagger_generators::{NodeId, Topology};

/// An export's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Per-switch SONiC `config_db` JSON ([`export`]).
    Sonic,
    /// The neutral per-switch table ([`table`]).
    Json,
}

/// Where a run's export goes: `sonic:DIR` or `json:DIR`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The format.
    pub format: Format,
    /// The directory written.
    pub dir: std::path::PathBuf,
}

impl std::str::FromStr for Target {
    type Err = Error;

    /// `sonic:DIR` or `json:DIR`, DIR not empty.
    fn from_str(s: &str) -> Result<Self> {
        let format = match s.split_once(':') {
            Some(("sonic", d)) if !d.is_empty() => Format::Sonic,
            Some(("json", d)) if !d.is_empty() => Format::Json,
            _ => {
                return Err(Error::Export {
                    kind: ExportKind::Target,
                    reason: format!(
                        "'{}': expected sonic:DIR or json:DIR",
                        crate::error::excerpt(s, 80)
                    ),
                });
            }
        };
        let dir = s.split_once(':').map_or("", |(_, d)| d);
        Ok(Target {
            format,
            dir: dir.into(),
        })
    }
}

/// The export of `rules` in `format`, in memory: everything that can refuse
/// the plan happens here, before [`write()`] touches a file.
///
/// # Errors
/// As [`export`] or [`table`].
pub fn build(topo: &Topology, rules: &RuleSet, format: Format, opts: &Options) -> Result<Export> {
    match format {
        Format::Sonic => export(topo, rules, opts),
        Format::Json => table(topo, rules),
    }
}

/// Default queue (and priority group) of lossless priority `p`:
/// `DEFAULT_QUEUES[p - 1]`.
pub const DEFAULT_QUEUES: [u32; 7] = [3, 4, 2, 5, 6, 1, 7];
/// Traffic classes a switch has besides the lossy TC 0.
pub const FREE_TCS: usize = 7;
/// Format of a SONiC export's `summary.json`.
pub const FORMAT: &str = "tagger-sonic/2";
/// Ingress buffer pool the lossless priority groups draw on (SONiC's name;
/// the platform's buffer template defines and sizes it).
pub const INGRESS_POOL: &str = "ingress_lossless_pool";
/// Egress buffer pool of the lossless queues (as [`INGRESS_POOL`]).
pub const EGRESS_POOL: &str = "egress_lossless_pool";

/// How tags and lossless priorities map onto a switch's DSCP values and
/// queues (a queue number is also the priority group and the PFC priority).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// DSCP value of tag `t` at index `t - 1`.
    pub dscp: Vec<u32>,
    /// Queue of lossless priority `p` at index `p - 1`.
    pub queues: Vec<u32>,
}

impl Default for Mapping {
    /// Tag t -> DSCP t + 2 (tags 1..=61), priority p -> [`DEFAULT_QUEUES`].
    fn default() -> Self {
        Mapping {
            dscp: (3..=63).collect(),
            queues: DEFAULT_QUEUES.to_vec(),
        }
    }
}

impl Mapping {
    /// A mapping, checked: DSCP values distinct and in 1..=63, queues
    /// distinct and in 1..=7 (0 is the lossy class's).
    ///
    /// # Errors
    /// [`Error::Export`] naming the list (`dscp` or `queues`), the index
    /// and the value at fault.
    pub fn new(dscp: Vec<u32>, queues: Vec<u32>) -> Result<Self> {
        Mapping::checked(dscp, queues).map_err(|reason| Error::Export {
            kind: ExportKind::Mapping,
            reason,
        })
    }

    /// [`Mapping::new`] with the reason alone, for callers that say where
    /// the lists came from.
    fn checked(dscp: Vec<u32>, queues: Vec<u32>) -> std::result::Result<Self, String> {
        for (what, list, max) in [("dscp", &dscp, 63), ("queues", &queues, 7)] {
            if list.is_empty() {
                return Err(format!("{what}: the list is empty"));
            }
            for (i, &x) in list.iter().enumerate() {
                if !(1..=max).contains(&x) {
                    return Err(format!(
                        "{what}[{i}] = {x}: must be in 1..={max} (0 is the lossy class)"
                    ));
                }
                if list[..i].contains(&x) {
                    return Err(format!("{what}[{i}] = {x}: the value is listed twice"));
                }
            }
        }
        Ok(Mapping { dscp, queues })
    }

    /// Parses a comma-separated list of numbers (`3,4,2`).
    ///
    /// # Errors
    /// The item that is not a number.
    pub fn parse_list(s: &str) -> std::result::Result<Vec<u32>, String> {
        s.split(',')
            .map(|x| {
                x.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("'{}' is not a number (expected e.g. 3,4,2)", x.trim()))
            })
            .collect()
    }

    /// The DSCP value of tag `t`.
    ///
    /// # Errors
    /// [`Error::Export`] when the mapping has no value for it.
    pub fn dscp_of(&self, tag: u32) -> Result<u32> {
        self.dscp
            .get(tag.wrapping_sub(1) as usize)
            .copied()
            .ok_or_else(|| Error::Export {
                kind: ExportKind::Mapping,
                reason: format!(
                    "tag {tag} has no DSCP value: the mapping has {} (tags 1..={})",
                    self.dscp.len(),
                    self.dscp.len()
                ),
            })
    }

    /// The tag whose DSCP value is `d`.
    pub fn tag_of(&self, d: u32) -> Option<u32> {
        self.dscp.iter().position(|&x| x == d).map(|i| i as u32 + 1)
    }

    /// The queue of lossless priority `p`.
    ///
    /// # Errors
    /// [`Error::Export`] when the mapping has no queue for it.
    pub fn queue_of(&self, p: u32) -> Result<u32> {
        self.queues
            .get(p.wrapping_sub(1) as usize)
            .copied()
            .ok_or_else(|| Error::Export {
                kind: ExportKind::Mapping,
                reason: format!(
                    "lossless priority {p} has no queue: the mapping has {} lossless queues",
                    self.queues.len()
                ),
            })
    }

    /// The lossless priority whose queue is `q`.
    pub fn priority_of(&self, q: u32) -> Option<u32> {
        self.queues
            .iter()
            .position(|&x| x == q)
            .map(|i| i as u32 + 1)
    }

    fn to_json(&self) -> Value {
        json!({"dscp_of_tag": self.dscp, "queue_of_priority": self.queues})
    }

    fn from_json(v: &Value) -> std::result::Result<Self, String> {
        let list = |k: &str| -> std::result::Result<Vec<u32>, String> {
            v[k].as_array()
                .ok_or(format!("mapping.{k} is missing"))?
                .iter()
                .map(|x| {
                    x.as_u64()
                        .map(|x| x as u32)
                        .ok_or(format!("mapping.{k}: {x} is not a number"))
                })
                .collect()
        };
        Mapping::checked(list("dscp_of_tag")?, list("queue_of_priority")?)
            .map_err(|r| format!("mapping: {r}"))
    }
}

/// What an export is configured with: the mapping, and the switch model
/// whose headroom sizes the lossless buffers.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Tag to DSCP and priority to queue.
    pub mapping: Mapping,
    /// The switch model whose headroom sizes the buffers.
    pub profile: Profile,
}

/// Node `v`'s port names: the topology file's, or `Ethernet0, Ethernet4,
/// ...` in link-id order and then host ports. `ports` may exceed the
/// topology's count by one host port (an endpoint without declared hosts
/// that sends): it is named `Host`.
pub(crate) fn port_names(topo: &Topology, v: NodeId, ports: usize) -> Vec<String> {
    match topo.port_names(v) {
        Some(names) => {
            let mut n = names.to_vec();
            n.truncate(ports);
            while n.len() < ports {
                n.push("Host".to_string());
            }
            n
        }
        None => (0..ports).map(|i| format!("Ethernet{}", 4 * i)).collect(),
    }
}
