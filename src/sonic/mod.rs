//! Installable output: a verified plan as per-switch SONiC `config_db`
//! JSON ([`export`]), or as a neutral per-switch table for other targets
//! ([`table`]), and the way back ([`read`]: the complete function an
//! exported directory makes each switch apply to every packet, judged as a
//! whole and rebuilt as a rule set for [`crate::verify`]).
//!
//! A stock SONiC switch rewrites a tag hop by hop with its per-port QoS
//! maps only: its ACL tables have no action that sets DSCP or queue
//! (SONiC's YANG `ACL_RULE` has no such leaf, and its ACL orchestration
//! refuses any table-type action outside its own list). So the rule `(in
//! port, tag, out port) -> next tag` is classified at ingress and rewritten
//! at egress: per port, `DSCP_TO_TC_MAP` sends each arriving lossless tag (a
//! DSCP value) to its traffic class (TC); `TC_TO_PRIORITY_GROUP_MAP` puts
//! the TC in the priority group of the priority it arrived with (PFC pauses
//! the upstream on that priority); on each egress port `TC_TO_QUEUE_MAP`
//! puts it in the queue of the priority it leaves with and `TC_TO_DSCP_MAP`
//! rewrites its DSCP to the next tag. Everything else stays in the
//! switch's lossy classes (its base's, [`Base`], as `--keep-dscp` keeps
//! them; a tag met where it is not lossless leaves by a link as DSCP 0).
//! The plan is written into each switch's base and exported with the
//! patch from it. The classes are the plan's
//! ([`crate::tagging::traffic`]): a plan needing more than a switch has
//! for lossless traffic (seven of eight on most ASICs) is refused; the
//! planning algorithms keep within them (`--max-tcs`).
//!
//! Buffers come from the capacity model ([`crate::capacity`]): each port's
//! `pfc_enable` priority groups get a `BUFFER_PG` whose `BUFFER_PROFILE`
//! holds that port's xoff and xon for its speed and cable (under the
//! traditional buffer model the keys and profile name buffermgrd writes);
//! leaving lossless queues get a `BUFFER_QUEUE`.
//!
//! Tags map to DSCP values and lossless priorities to queues through a
//! [`Mapping`]; the default is tag t -> DSCP t + 2 and priority p ->
//! queue [`DEFAULT_QUEUES`]`[p - 1]` (3 and 4 first, SONiC's default
//! lossless queues, then 2, 5, 6, 1, 7). A plan needing more tags or
//! queues than the mapping has is refused.

mod base;
#[cfg(test)]
mod base_tests;
mod dir;
mod export;
mod function;
mod merge;
mod neutral;
mod port_maps;
mod read;
#[cfg(test)]
mod readback_tests;
mod stock;
#[cfg(test)]
mod tests;

pub use base::{Base, BufferModel, KeepDscp};
pub(crate) use dir::DecodeCache;
pub use export::{
    Export, Switch, SwitchFit, export, replaceable, replaceable_steps, traffic_classes, write,
    write_files,
};
pub(crate) use export::{SharedExport, SwitchCache};
pub(crate) use export::{idle_switches, switch_entry};
pub use function::ReadBack;
pub use neutral::{TABLE_FORMAT, table};
pub use port_maps::PortMaps;
pub(crate) use read::read_parts;
pub use read::{read, read_export};

use crate::capacity::Profile;
pub use crate::error::MappingError;
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
        Format::Json => table(topo, rules, opts.elp.as_deref()),
    }
}

/// Memory an export of `rules` builds before anything is written, in bytes
/// (either format; a deliberate over-estimate): 48 KiB per switch port,
/// host ports included (a SONiC switch's base, the configuration made of
/// it and the patch between them, as JSON values: its `PORT`, `QUEUE`,
/// buffer and cable entries and a 64-value `DSCP_TO_TC_MAP` per port;
/// fat-tree k=16 `kbounce:1` peaked 200 MB above the plan alone, 33 KB a
/// port), and 512 bytes per rule entry. Charged to the memory budget before [`build`], so that a
/// topology with billions of host ports is refused, not allocated.
pub fn estimate_bytes(topo: &Topology, rules: &RuleSet) -> u64 {
    let ports: u64 = (0..topo.node_count() as NodeId)
        .filter(|&v| {
            matches!(
                topo.node(v).kind,
                tagger_generators::model::NodeKind::Switch
            )
        })
        .map(|v| topo.degree(v) as u64 + u64::from(topo.node(v).hosts))
        .sum();
    ports
        .saturating_mul(48 << 10)
        .saturating_add((rules.entries.len() as u64).saturating_mul(512))
}

/// The traffic classes of several plans that switches run side by side
/// (an update's states, in order), chosen together and beside the
/// dependencies `running` of the configuration in place
/// ([`crate::tagging::traffic::classify_all_from`]): switches configured
/// from different states, or still running the old configuration, never
/// close a cycle together. `first_within`: see `classify_all_from`.
/// [`build_classified`] exports each.
///
/// # Errors
/// [`Error::SelfCheck`] when the states' dependencies and `running`
/// together have a cycle (they cannot all run at once: the caller drains,
/// or seeds with less).
pub fn classify_states(
    topo: &Topology,
    running: &[(
        u32,
        tagger_generators::ChannelId,
        tagger_generators::ChannelId,
    )],
    first_within: Option<
        &[(
            u32,
            tagger_generators::ChannelId,
            tagger_generators::ChannelId,
        )],
    >,
    states: &[RuleSet],
) -> Result<Vec<crate::tagging::traffic::Classification>> {
    let keys: Vec<Vec<crate::tagging::Key>> =
        states.iter().map(|r| r.keys(topo)).collect::<Result<_>>()?;
    let refs: Vec<&[crate::tagging::Key]> = keys.iter().map(Vec::as_slice).collect();
    crate::tagging::traffic::classify_all_from(topo, running, first_within, &refs)
}

/// [`build`] of `rules` with its traffic classes given (from
/// [`classify_states`]).
///
/// # Errors
/// As [`build`].
pub fn build_classified(
    topo: &Topology,
    rules: &RuleSet,
    classes: &crate::tagging::traffic::Classification,
    format: Format,
    opts: &Options,
) -> Result<Export> {
    match format {
        Format::Sonic => export::export_classified(topo, rules, opts, classes),
        Format::Json => neutral::table_classified(topo, rules, opts.elp.as_deref(), classes),
    }
}

/// [`build_classified`] for exports of one topology with one `opts`,
/// state after state, building only the SONiC switches whose configuration
/// inputs differ from those `cache` holds (the neutral table is built
/// whole).
///
/// # Errors
/// As [`build_classified`].
pub(crate) fn build_cached(
    topo: &Topology,
    rules: &RuleSet,
    classes: &crate::tagging::traffic::Classification,
    format: Format,
    opts: &Options,
    cache: &mut SwitchCache,
) -> Result<SharedExport> {
    match format {
        Format::Sonic => export::export_cached(topo, rules, opts, classes, cache),
        Format::Json => build_classified(topo, rules, classes, format, opts).map(Into::into),
    }
}

/// Default queue (and priority group) of lossless priority `p`:
/// `DEFAULT_QUEUES[p - 1]`.
pub const DEFAULT_QUEUES: [u32; 7] = [3, 4, 2, 5, 6, 1, 7];
/// Format of a SONiC export's `summary.json`.
pub const FORMAT: &str = "tagger-sonic/4";
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
    /// [`Error::Mapping`] naming the list (`dscp` or `queues`), the index
    /// and the value at fault.
    pub fn new(dscp: Vec<u32>, queues: Vec<u32>) -> Result<Self> {
        Mapping::checked(dscp, queues, ["dscp", "queues"]).map_err(|cause| Error::Mapping {
            origin: None,
            cause,
        })
    }

    /// [`Mapping::new`] with the lists named `names` in errors.
    fn checked(
        dscp: Vec<u32>,
        queues: Vec<u32>,
        names: [&'static str; 2],
    ) -> std::result::Result<Self, MappingError> {
        for (list, values, max) in [(names[0], &dscp, 63), (names[1], &queues, 7)] {
            if values.is_empty() {
                return Err(MappingError::Empty { list });
            }
            for (index, &value) in values.iter().enumerate() {
                if !(1..=max).contains(&value) {
                    return Err(MappingError::OutOfRange {
                        list,
                        index,
                        value,
                        max,
                    });
                }
                if values[..index].contains(&value) {
                    return Err(MappingError::Twice { list, index, value });
                }
            }
        }
        Ok(Mapping { dscp, queues })
    }

    /// The default mapping for a switch with `profile`'s queues: tag t ->
    /// DSCP t + 2, priority p -> the p-th of [`DEFAULT_QUEUES`] the switch
    /// has (a switch with 4 queues per port: 3, 2, 1).
    pub fn for_profile(profile: &Profile) -> Self {
        Mapping {
            queues: DEFAULT_QUEUES
                .iter()
                .copied()
                .filter(|&q| q < profile.queues_per_port)
                .collect(),
            ..Mapping::default()
        }
    }

    /// Every queue is one `profile`'s switch has (queues `0..queues_per_port`).
    ///
    /// # Errors
    /// [`MappingError::NoSuchQueue`] naming the first queue it lacks.
    pub fn check_queues(&self, profile: &Profile) -> std::result::Result<(), MappingError> {
        match self
            .queues
            .iter()
            .position(|&q| q >= profile.queues_per_port)
        {
            None => Ok(()),
            Some(index) => Err(MappingError::NoSuchQueue {
                index,
                value: self.queues[index],
                profile: profile.name.clone(),
                queues: profile.queues_per_port,
            }),
        }
    }

    /// Parses a comma-separated list of numbers (`3,4,2`).
    ///
    /// # Errors
    /// [`MappingError::NotANumber`] naming the item that is not a number.
    pub fn parse_list(s: &str) -> std::result::Result<Vec<u32>, MappingError> {
        s.split(',')
            .map(|x| {
                x.trim()
                    .parse::<u32>()
                    .map_err(|_| MappingError::NotANumber {
                        item: x.trim().to_string(),
                    })
            })
            .collect()
    }

    /// The DSCP value of tag `t`.
    ///
    /// # Errors
    /// [`Error::Mapping`] when the mapping has no value for it.
    pub fn dscp_of(&self, tag: u32) -> Result<u32> {
        self.dscp
            .get(tag.wrapping_sub(1) as usize)
            .copied()
            .ok_or(Error::Mapping {
                origin: None,
                cause: MappingError::NoDscp {
                    tag,
                    len: self.dscp.len(),
                },
            })
    }

    /// The tag whose DSCP value is `d`.
    pub fn tag_of(&self, d: u32) -> Option<u32> {
        self.dscp.iter().position(|&x| x == d).map(|i| i as u32 + 1)
    }

    /// The queue of lossless priority `p`.
    ///
    /// # Errors
    /// [`Error::Mapping`] when the mapping has no queue for it.
    pub fn queue_of(&self, p: u32) -> Result<u32> {
        self.queues
            .get(p.wrapping_sub(1) as usize)
            .copied()
            .ok_or(Error::Mapping {
                origin: None,
                cause: MappingError::NoQueue {
                    priority: p,
                    len: self.queues.len(),
                },
            })
    }

    /// The lossless priority whose queue is `q`.
    pub fn priority_of(&self, q: u32) -> Option<u32> {
        self.queues
            .iter()
            .position(|&x| x == q)
            .map(|i| i as u32 + 1)
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({"dscp_of_tag": self.dscp, "queue_of_priority": self.queues})
    }

    pub(crate) fn from_json(v: &Value) -> std::result::Result<Self, MappingError> {
        let list = |key: &'static str| -> std::result::Result<Vec<u32>, MappingError> {
            v[key]
                .as_array()
                .ok_or(MappingError::Missing { key })?
                .iter()
                .map(|x| {
                    x.as_u64()
                        .and_then(|x| u32::try_from(x).ok())
                        .ok_or_else(|| MappingError::NotAnInteger {
                            key,
                            value: x.to_string(),
                        })
                })
                .collect()
        };
        Mapping::checked(
            list("dscp_of_tag")?,
            list("queue_of_priority")?,
            ["mapping.dscp_of_tag", "mapping.queue_of_priority"],
        )
    }
}

/// What an export is configured with: the mapping, the switch model whose
/// traffic classes, queues and headroom it must fit, and what it records
/// for the read-back.
#[derive(Clone, Debug)]
pub struct Options {
    /// Tag to DSCP and priority to queue.
    pub mapping: Mapping,
    /// The switch model whose headroom sizes the buffers.
    pub profile: Profile,
    /// Refuse the export when a switch's lossless queues or headroom do
    /// not fit the profile (true, the default); false writes it anyway,
    /// each switch's fit recorded in `summary.json`. A switch needing more
    /// traffic classes than the profile has is refused either way: it
    /// cannot be loaded.
    pub require_fit: bool,
    /// The ELP spec the plan was made for, recorded so that `tagger verify
    /// --exported` replays it by default.
    pub elp: Option<String>,
    /// Each switch's configuration before the install (SONiC exports).
    pub base: Base,
    /// Which DSCP values keep their base's lossy class (`None`: all with
    /// the switches' own bases, none with the stock base).
    pub keep: Option<KeepDscp>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mapping: Mapping::default(),
            profile: Profile::default(),
            require_fit: true,
            elp: None,
            base: Base::Stock,
            keep: None,
        }
    }
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
