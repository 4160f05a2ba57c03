//! The way back: an exported directory decoded into the complete function
//! each switch applies ([`super::function`]), as a SONiC switch would run
//! its `config_db`, then judged.
//!
//! A SONiC switch applies a port's `PORT_QOS_MAP` binding only when every
//! map it names exists. A packet arriving with a DSCP goes to the traffic
//! class its port's `DSCP_TO_TC_MAP` gives (a value the map does not list:
//! TC 0, SAI's default class) and to the priority group
//! `TC_TO_PRIORITY_GROUP_MAP` gives that class; the group is lossless when
//! the port's `pfc_enable` holds it (the port pauses its upstream for it)
//! and a `BUFFER_PG` gives it headroom. At the egress port the class goes
//! to the queue of `TC_TO_QUEUE_MAP` and leaves with the DSCP of
//! `TC_TO_DSCP_MAP` (a class that map does not list, or a port without
//! one, keeps its DSCP); the queue stops when paused when `pfc_enable`
//! holds it and a `BUFFER_QUEUE` gives it a lossless egress buffer.
//!
//! Beyond the function, the buffers are sized again: every lossless
//! group's `BUFFER_PROFILE` must hold the xoff and xon the capacity model
//! gives for the port's `PORT` speed and `CABLE_LENGTH` under the switch
//! profile the export records, in the lossless pools, and each switch's
//! headroom and lossless queues must fit that profile.

use super::dir::{Source, excerpt, number, switch_files};
use super::function::{ReadBack, Reading, judge};
use super::{FORMAT, Mapping, TABLE_FORMAT};
use crate::capacity::Profile;
use crate::error::{Error, ExportKind, Result};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tagger_generators::{NodeId, Topology};

mod db;

use db::SwitchDb;

/// The complete function an exported directory makes the switches apply:
/// a SONiC export decoded from its port maps, PFC and buffers (see the
/// module documentation), or a neutral table from its classes. Every
/// lossless transition comes back as a rule set, ELP or not, once the
/// whole fabric passed the read-back's standard (every packet, any routing:
/// see `tagger verify --help` and docs/reliability.md).
///
/// # Errors
/// [`Error::Export`] naming the file, table and port at fault, or the
/// dependency cycle.
pub fn read(topo: &Topology, dir: &Path) -> Result<ReadBack> {
    read_from(topo, &Source::Dir(dir))
}

/// [`read`] of an export in memory, as it would read once written:
/// `label` names it in errors.
///
/// # Errors
/// As [`read`].
pub fn read_export(topo: &Topology, ex: &super::Export, label: &str) -> Result<ReadBack> {
    let files: BTreeMap<NodeId, (&Value, u64)> = ex
        .switches
        .iter()
        .map(|s| (s.node, (&s.config, 0)))
        .collect();
    read_parts(topo, label, &ex.summary, &files, None)
}

/// [`read_export`] of an export given as its `summary.json` and each
/// switch's file by node, with an id that changes whenever the file does:
/// with `cache`, a file decoded before under the same node and id is not
/// decoded again.
pub(crate) fn read_parts(
    topo: &Topology,
    label: &str,
    summary: &Value,
    files: &BTreeMap<NodeId, (&Value, u64)>,
    cache: Option<&super::dir::DecodeCache>,
) -> Result<ReadBack> {
    read_from(
        topo,
        &Source::Memory {
            label,
            summary,
            files,
            cache,
        },
    )
}

fn read_from(topo: &Topology, src: &Source<'_>) -> Result<ReadBack> {
    let summary = src.summary()?;
    let summary: &Value = &summary;
    let bad = |file: &str, reason: String| Error::Export {
        kind: ExportKind::ReadBack,
        reason: format!("{}: {reason}", src.show(file)),
    };
    match summary["format"].as_str() {
        Some(FORMAT) => {}
        Some(TABLE_FORMAT) => return super::neutral::read(topo, src, summary, &bad),
        Some("tagger-sonic/3") => {
            return Err(bad(
                "summary.json",
                "format tagger-sonic/3 was written by an older tagger (the plan's tables alone, without each switch's base and patch): export the plan again".into(),
            ));
        }
        Some(f @ ("tagger-sonic/1" | "tagger-sonic/2")) => {
            return Err(bad(
                "summary.json",
                format!(
                    "format {f} was written by an older tagger (with ACL rules stock SONiC cannot load): export the plan again"
                ),
            ));
        }
        _ => {
            return Err(bad(
                "summary.json",
                format!(
                    "format {} is neither {FORMAT} nor {TABLE_FORMAT}",
                    excerpt(&summary["format"].to_string())
                ),
            ));
        }
    }
    let mapping = Mapping::from_json(&summary["mapping"]).map_err(|cause| Error::Mapping {
        origin: Some(src.show("summary.json")),
        cause,
    })?;
    let profile = recorded_profile(summary, |r| bad("summary.json", r.into()))?;
    let pools = (
        text_at(&summary["buffer"]["ingress_pool"]).unwrap_or(super::INGRESS_POOL),
        text_at(&summary["buffer"]["egress_pool"]).unwrap_or(super::EGRESS_POOL),
    );
    let mut switches = Vec::new();
    let mut misfits = Vec::new();
    let mut counted = Vec::new();
    for found in switch_files(topo, src, summary, &bad)? {
        let (v, file, db, listed) = found?;
        let shown = src.show(&file);
        if let Source::Dir(d) = src {
            super::dir::check_patch(d, v, &db)?;
        }
        let sw = SwitchDb {
            db: &db,
            topo,
            file: shown.clone(),
            profile: &profile,
            pools,
            keys: std::cell::OnceCell::new(),
        };
        let (f, misfit) = src.decoded(v, || sw.decode(topo, v))?;
        // A switch that does not fit is an error unless the export says so
        // (written with --require-fit off): then it is reported.
        if let Some(m) = misfit {
            if listed["fits"] != Value::Bool(false) {
                return Err(bad(
                    &file,
                    format!("{m} (summary.json does not record that it does not fit)"),
                ));
            }
            misfits.push(format!("{shown}: {m}"));
        }
        let tcs = f
            .ingress
            .iter()
            .flat_map(|row| row.iter().enumerate())
            // Lossless classes of the plan's tags (another DSCP value
            // classified lossless is refused when the fabric is judged).
            .filter(|(d, i)| i.lossless.is_some() && mapping.tag_of(*d as u32).is_some())
            .map(|(_, i)| i.class)
            .collect::<BTreeSet<u32>>()
            .len();
        counted.push((file, tcs, listed["tcs"].clone()));
        switches.push(f);
    }
    let host_tags = super::dir::host_tags(summary, &bad)?;
    let most = super::dir::max_tag(summary, &bad)?;
    let tag_of = |d: u32| mapping.tag_of(d).filter(|&t| t <= most);
    let priority_of = |q: u32| mapping.priority_of(q);
    let reading = Reading {
        tag_of: &tag_of,
        priority_of: &priority_of,
        value_name: "DSCP",
    };
    let (entries, ingress) = judge(topo, &switches, &reading, &host_tags)?;
    // Counted once the fabric is judged: a DSCP value classified lossless
    // that is no tag is the fault to name, not the count it changes.
    for (file, tcs, listed) in counted {
        if number(&listed).is_some_and(|n| n as usize != tcs) {
            return Err(bad(
                &file,
                format!(
                    "summary.json says the switch uses {listed} traffic classes; its maps use {tcs}"
                ),
            ));
        }
        if tcs > profile.lossless_tcs() as usize {
            return Err(bad(
                &file,
                format!(
                    "the switch uses {tcs} traffic classes for lossless traffic; {} has {} (one kept lossy)",
                    profile.name, profile.traffic_classes
                ),
            ));
        }
    }
    let rules = super::dir::header(summary, &bad, entries, ingress)?;
    Ok(ReadBack {
        rules,
        elp: text_at(&summary["elp"]).map(str::to_string),
        profile: Some(profile),
        misfits,
    })
}

fn text_at(v: &Value) -> Option<&str> {
    v.as_str()
}

/// The switch profile `summary.json` records (its TOML), which sized the
/// buffers; `missing` makes the error for a profile not recorded (or
/// several), an invalid one is the profile's own error (naming `summary.json
/// switch_profile`).
fn recorded_profile(summary: &Value, missing: impl Fn(&str) -> Error) -> Result<Profile> {
    let text = summary["switch_profile"].as_str().ok_or_else(|| {
        missing(
            "switch_profile is missing: the export does not say what its buffers were sized for",
        )
    })?;
    let all = Profile::parse_all(text, "summary.json switch_profile")?;
    let mut it = all.into_values();
    match (it.next(), it.next()) {
        (Some(p), None) => Ok(p),
        _ => Err(missing("switch_profile must hold exactly one profile")),
    }
}
