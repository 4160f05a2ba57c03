//! The SONiC `config_db` writer.

use super::{EGRESS_POOL, FORMAT, INGRESS_POOL, Mapping, Options, port_names};
use crate::capacity::{PortHeadroom, port_headroom};
use crate::error::{Error, ExportKind, Result};
use crate::rules::RuleSet;
use crate::tagging::traffic::{Classification, NodeClasses, classify};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tagger_generators::{LinkId, NodeId, Topology};

/// Buffer profile of the lossless queues (SONiC's egress lossless default:
/// no reserve, the pool's dynamic threshold 7).
const EGRESS_PROFILE: &str = "TAGGER_EGRESS_LOSSLESS";

/// One switch's export.
#[derive(Clone, Debug)]
pub struct Switch {
    /// The switch.
    pub node: NodeId,
    /// Its `config_db` object (or neutral table).
    pub config: Value,
    /// Traffic classes its lossless traffic uses (besides the lossy one).
    pub tcs: usize,
    /// What the switch reserves and holds (SONiC exports; `None` for the
    /// neutral table, which sizes no buffers).
    pub fit: Option<SwitchFit>,
}

/// How one exported switch fits its profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchFit {
    /// The most lossless priorities (PFC priorities) at one of its ports.
    pub lossless_queues: u32,
    /// Headroom its lossless priority groups reserve, in bytes (with a
    /// shared headroom pool: every xon plus the pool's share of the xoffs).
    pub headroom_bytes: u64,
    /// Whether both fit: queues within the profile's lossless queues,
    /// headroom within its lossless buffer.
    pub fits: bool,
}

/// A plan's export.
#[derive(Clone, Debug)]
pub struct Export {
    /// One per switch with lossless traffic, in node order.
    pub switches: Vec<Switch>,
    /// `summary.json`: the rule set's header, the mapping and buffer settings, per-switch counts.
    pub summary: Value,
}

impl Export {
    /// Switches that do not fit their profile (SONiC exports).
    pub fn misfits(&self) -> Vec<(NodeId, SwitchFit)> {
        self.switches
            .iter()
            .filter_map(|s| s.fit.filter(|f| !f.fits).map(|f| (s.node, f)))
            .collect()
    }
}

/// Exports `rules` (verified for `topo`) as one `config_db` object per
/// node with lossless traffic: per-port QoS maps, PFC and buffers, which
/// is all a stock SONiC switch offers for rewriting a tag hop by hop (its
/// ACL tables have no action that sets DSCP or queue).
///
/// Each switch's traffic classes are the plan's ([`classify`]): TC k + 1
/// is class k; TC 0, queue 0 and DSCP 0 are the lossy class. A class's
/// function covers every packet classified into it, the ELP's and any
/// other, and the classes keep it deadlock-free under any routing.
///
/// ```
/// use tagger::sonic::{Options, export, read, write};
/// let t = tagger::TopologySpec::parse("fattree:k=4")?.build()?;
/// let elp = tagger::elp::ElpSet::build(&t, &tagger::elp::ElpSpec::parse("kbounce:1")?)?;
/// let tagging = tagger::tagging::tag(&t, &elp, "clos".parse()?, Default::default())?;
/// let rules = tagger::rules::RuleSet::from_tagging(&t, &tagging);
/// let ex = export(&t, &rules, &Options::default())?;
/// assert!(ex.switches.iter().all(|s| s.tcs <= 7)); // a stock switch's
/// let dir = std::env::temp_dir().join("tagger-doc-export");
/// write(&dir, &ex)?;
/// // The maps decode to every entry of the plan, and more: what the
/// // switches do with every other packet.
/// let back = read(&t, &dir)?;
/// assert!(rules.entries.iter().all(|e| back.rules.entries.binary_search(e).is_ok()));
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), tagger::Error>(())
/// ```
///
/// # Errors
/// [`Error::Export`] when a priority has no queue or a tag no DSCP value
/// in `opts.mapping`, when a switch needs more traffic classes than the
/// profile gives (naming the switches and what each needs), or, with
/// `opts.require_fit`, when a switch's lossless queues or headroom do not
/// fit the profile.
pub fn export(topo: &Topology, rules: &RuleSet, opts: &Options) -> Result<Export> {
    check_mapping(rules, &opts.mapping, &opts.profile)?;
    export_classified(topo, rules, opts, &classify(topo, &rules.keys(topo)?)?)
}

/// [`export`] with the plan's traffic classes given (an update's states
/// are classified together, [`crate::tagging::traffic::classify_all`]).
pub(crate) fn export_classified(
    topo: &Topology,
    rules: &RuleSet,
    opts: &Options,
    classes: &Classification,
) -> Result<Export> {
    check_mapping(rules, &opts.mapping, &opts.profile)?;
    refuse_over(classes, opts)?;
    let switches: Vec<Switch> = classes
        .nodes
        .iter()
        .map(|nc| switch_config(topo, nc, opts))
        .collect();
    let ex = Export {
        summary: summary(rules, opts, &switches),
        switches,
    };
    if opts.require_fit {
        let mis = ex.misfits();
        if let Some(&(v, f)) = mis.first() {
            let p = &opts.profile;
            return Err(Error::Export {
                kind: ExportKind::Plan,
                reason: format!(
                    "{} switch(es) do not fit {} (switch {v}: {} lossless queues at a port of {} allowed, headroom {} of a {} lossless buffer): nothing exported; --require-fit off exports them anyway, marked",
                    mis.len(),
                    p.name,
                    f.lossless_queues,
                    p.lossless_queues,
                    crate::budget::human(f.headroom_bytes),
                    crate::budget::human(p.lossless_buffer_bytes),
                ),
            });
        }
    }
    Ok(ex)
}

/// Refuses a plan that needs more traffic classes at some switch than the
/// profile has for lossless traffic.
fn refuse_over(classes: &Classification, opts: &Options) -> Result<()> {
    let limit = opts.profile.lossless_tcs() as usize;
    let mut over = classes.over(limit);
    if over.is_empty() {
        return Ok(());
    }
    over.sort_by_key(|&(v, n)| (std::cmp::Reverse(n), v));
    let shown: Vec<String> = over
        .iter()
        .take(8)
        .map(|(v, n)| format!("switch {v} needs {n}"))
        .collect();
    Err(Error::Export {
        kind: ExportKind::Plan,
        reason: format!(
            "the plan needs more traffic classes than {} has for lossless traffic ({} of its {}, one kept lossy) at {} switch(es): {}{}. A stock SONiC switch rewrites tags with its port maps only; plan within the classes (tagger run's --max-tcs, on by default) or export the neutral table (--format json)",
            opts.profile.name,
            limit,
            opts.profile.traffic_classes,
            over.len(),
            shown.join(", "),
            if over.len() > shown.len() {
                ", ..."
            } else {
                ""
            }
        ),
    })
}

fn check_mapping(rules: &RuleSet, m: &Mapping, profile: &crate::capacity::Profile) -> Result<()> {
    m.check_queues(profile).map_err(|cause| Error::Mapping {
        origin: None,
        cause,
    })?;
    for e in &rules.entries {
        m.queue_of(e.priority)?;
        m.queue_of(e.next_priority)?;
        m.dscp_of(e.tag)?;
        m.dscp_of(e.next_tag)?;
    }
    Ok(())
}

/// `summary.json`: the rule set's header, the mapping, the switch profile
/// the buffers were sized with (whole, so the read-back can size them
/// again), and per switch its file, classes and fit.
fn summary(rules: &RuleSet, opts: &Options, switches: &[Switch]) -> Value {
    let p = &opts.profile;
    let fits = |s: &Switch| s.fit.is_none_or(|f| f.fits);
    json!({
        "format": FORMAT,
        "topology": rules.topology,
        "algo": rules.algo,
        "elp": opts.elp,
        "priorities": rules.priorities,
        "tags": max_tag(rules),
        "initial_tag": rules.initial_tag,
        "classes": rules.classes,
        "mapping": opts.mapping.to_json(),
        "buffer": {
            "profile": p.name,
            "headroom_model": p.headroom.name(),
            "shared_headroom_pool": p.shared_headroom_pool,
            "ingress_pool": INGRESS_POOL,
            "egress_pool": EGRESS_POOL,
        },
        "switch_profile": p.to_toml(),
        "traffic_classes": p.traffic_classes,
        "tcs_max": switches.iter().map(|s| s.tcs).max().unwrap_or(0),
        "switches_not_fitting": switches.iter().filter(|s| !fits(s)).count(),
        "switches": switches.iter().map(|s| {
            let f = s.fit.expect("a SONiC switch has a fit");
            json!({
                "node": s.node,
                "file": format!("{}.json", s.node),
                "tcs": s.tcs,
                "lossless_queues": f.lossless_queues,
                "headroom_bytes": f.headroom_bytes,
                "fits": f.fits,
            })
        }).collect::<Vec<_>>(),
    })
}

/// The largest tag the plan uses (a packet with a larger one is none of
/// the plan's).
pub(crate) fn max_tag(rules: &RuleSet) -> u32 {
    rules
        .entries
        .iter()
        .map(|e| e.tag.max(e.next_tag))
        .chain(rules.host_tags())
        .max()
        .unwrap_or(0)
}

/// Cable lengths as SONiC's `CABLE_LENGTH` writes them: whole metres,
/// rounded up (the buffers are sized for the exact length).
fn cable_text(m: f64) -> String {
    format!("{}m", m.ceil() as u64)
}

/// Identical maps are written once and shared by name.
#[derive(Default)]
struct Named {
    tables: BTreeMap<&'static str, Map<String, Value>>,
}

impl Named {
    fn name(&mut self, table: &'static str, prefix: &str, m: Map<String, Value>) -> String {
        let t = self.tables.entry(table).or_default();
        let m = Value::Object(m);
        if let Some((k, _)) = t.iter().find(|(_, x)| **x == m) {
            return k.clone();
        }
        let name = format!("TAGGER_{prefix}_{}", t.len());
        t.insert(name.clone(), m);
        name
    }
}

/// One switch's `config_db` object, and its fit. The mapping was checked
/// against every entry, so lookups cannot fail.
fn switch_config(topo: &Topology, nc: &NodeClasses, opts: &Options) -> Switch {
    let v = nc.node;
    let links = topo.out_channels(v).len();
    // An endpoint without declared hosts that still sends gets one host
    // port (`Host`).
    let declared = topo.node(v).hosts as usize;
    let from_hosts = nc.ingress.iter().any(|x| x.0.is_none());
    let hosts = if from_hosts {
        declared.max(1)
    } else {
        declared
    };
    let names = port_names(topo, v, links + hosts);
    let mut named = Named::default();
    let mut pg = Map::new();
    pg.insert("0".into(), json!("0"));
    for (k, c) in nc.classes.iter().enumerate() {
        pg.insert(tc(k as u32), json!(queue_of(opts, c.priority).to_string()));
    }
    let pg_name = named.name("TC_TO_PRIORITY_GROUP_MAP", "TC_TO_PG", pg);
    let mut b = Builder {
        topo,
        nc,
        opts,
        named,
        pg_name,
        port_qos: Map::new(),
        ports: Map::new(),
        cable: Map::new(),
        buffer_pg: Map::new(),
        buffer_queue: Map::new(),
        profiles: Map::new(),
        most_queues: 0,
        xoff_sum: 0,
        xon_sum: 0,
    };
    for (i, name) in names.iter().enumerate() {
        b.port(i, name);
    }
    b.finish()
}

/// Traffic class `k + 1` as the maps write it (0 is the lossy class).
fn tc(k: u32) -> String {
    (k + 1).to_string()
}

/// The queue of lossless priority `p` (the mapping was checked).
fn queue_of(opts: &Options, p: u32) -> u32 {
    opts.mapping.queue_of(p).expect("checked")
}

/// The DSCP value of tag `t` (the mapping was checked).
fn dscp_of(opts: &Options, t: u32) -> u32 {
    opts.mapping.dscp_of(t).expect("checked")
}

/// A switch's `config_db` tables as its ports are added.
struct Builder<'a> {
    topo: &'a Topology,
    nc: &'a NodeClasses,
    opts: &'a Options,
    named: Named,
    pg_name: String,
    port_qos: Map<String, Value>,
    ports: Map<String, Value>,
    cable: Map<String, Value>,
    buffer_pg: Map<String, Value>,
    buffer_queue: Map<String, Value>,
    profiles: Map<String, Value>,
    most_queues: u32,
    xoff_sum: u64,
    xon_sum: u64,
}

impl Builder<'_> {
    /// Port `i` (a link port, or past the links a host port) named `name`:
    /// its maps, PFC, buffers, cable and speed.
    fn port(&mut self, i: usize, name: &str) {
        let (topo, nc, opts) = (self.topo, self.nc, self.opts);
        let v = nc.node;
        let outs = topo.out_channels(v);
        let link = (i < outs.len()).then(|| outs[i] >> 1);
        // What arrives on this port: from the link's other end, or from
        // hosts.
        let from = (i < outs.len()).then(|| outs[i] ^ 1);
        let mut d2t = Map::new();
        let mut arriving: BTreeSet<u32> = BTreeSet::new();
        for &(f, tag, k) in &nc.ingress {
            if f == from {
                d2t.insert(dscp_of(opts, tag).to_string(), json!(tc(k)));
                arriving.insert(queue_of(opts, nc.classes[k as usize].priority));
            }
        }
        let (tq, td, leaving) = self.leaving(i, link);
        let pfc: BTreeSet<u32> = arriving.union(&leaving).copied().collect();
        self.most_queues = self.most_queues.max(pfc.len() as u32);
        let pfc: Vec<String> = pfc.iter().map(u32::to_string).collect();
        let named = &mut self.named;
        let mut bind = Map::new();
        bind.insert(
            "dscp_to_tc_map".into(),
            json!(named.name("DSCP_TO_TC_MAP", "DSCP_TO_TC", d2t)),
        );
        bind.insert("tc_to_pg_map".into(), json!(self.pg_name.clone()));
        bind.insert(
            "tc_to_queue_map".into(),
            json!(named.name("TC_TO_QUEUE_MAP", "TC_TO_QUEUE", tq)),
        );
        // Host ports keep the DSCP the packet arrived with.
        if link.is_some() {
            bind.insert(
                "tc_to_dscp_map".into(),
                json!(named.name("TC_TO_DSCP_MAP", "TC_TO_DSCP", td)),
            );
        }
        bind.insert("pfc_enable".into(), json!(pfc.join(",")));
        bind.insert("pfcwd_sw_enable".into(), json!(pfc.join(",")));
        self.port_qos.insert(name.to_string(), Value::Object(bind));
        self.buffers(name, link, &arriving, &leaving);
    }

    /// Leaving port `i`: each class's queue and DSCP; a packet delivered to
    /// a host keeps its tag and leaves in the queue of the priority it
    /// arrived with (hosts only sink traffic, so no cycle runs through
    /// them). With the queues that leave lossless.
    fn leaving(
        &self,
        i: usize,
        link: Option<LinkId>,
    ) -> (Map<String, Value>, Map<String, Value>, BTreeSet<u32>) {
        let (nc, opts) = (self.nc, self.opts);
        let mut tq = Map::new();
        let mut td = Map::new();
        tq.insert("0".into(), json!("0"));
        td.insert("0".into(), json!("0"));
        let mut leaving: BTreeSet<u32> = BTreeSet::new();
        for (k, c) in nc.classes.iter().enumerate() {
            let (queue_n, dscp_n) = match link {
                None => (queue_of(opts, c.priority), 0),
                Some(_) => match c.egress[i] {
                    Some((next_tag, next_prio)) => {
                        (queue_of(opts, next_prio), dscp_of(opts, next_tag))
                    }
                    None => (0, 0),
                },
            };
            if queue_n != 0 {
                leaving.insert(queue_n);
            }
            tq.insert(tc(k as u32), json!(queue_n.to_string()));
            td.insert(tc(k as u32), json!(dscp_n.to_string()));
        }
        (tq, td, leaving)
    }

    /// The port's buffers (headroom for each arriving lossless priority
    /// group, an egress profile for each lossless queue), cable and speed.
    fn buffers(
        &mut self,
        name: &str,
        link: Option<LinkId>,
        arriving: &BTreeSet<u32>,
        leaving: &BTreeSet<u32>,
    ) {
        let (topo, p, v) = (self.topo, &self.opts.profile, self.nc.node);
        let (speed, cable_m) = match link {
            Some(l) => p.link(topo, l),
            None => (p.host_speed_gbps, p.host_cable_m),
        };
        // SONiC writes port speeds in Mb/s.
        let speed_mbps = (speed * 1000.0).round() as u64;
        // Headroom for each arriving lossless priority group, sized for
        // this port's speed and cable by the capacity model (once per
        // speed and cable: ports share a profile).
        // Sized for the length CABLE_LENGTH gives (whole metres, rounded
        // up), which is what the switch, and the read-back, size from.
        if !arriving.is_empty() {
            let h = port_headroom(p, speed, cable_m.ceil());
            let prof = format!("TAGGER_PG_LOSSLESS_{speed_mbps}_{}", cable_text(cable_m));
            self.profiles
                .entry(prof.clone())
                .or_insert_with(|| lossless_profile(h, p.shared_headroom_pool));
            for pg in arriving {
                self.buffer_pg
                    .insert(format!("{name}|{pg}"), json!({ "profile": prof }));
                self.xoff_sum += h.xoff;
                self.xon_sum += h.xon;
            }
        }
        for queue in leaving {
            self.buffer_queue.insert(
                format!("{name}|{queue}"),
                json!({ "profile": EGRESS_PROFILE }),
            );
        }
        self.cable
            .insert(name.to_string(), json!(cable_text(cable_m)));
        let mut port = Map::new();
        port.insert(
            "description".into(),
            json!(match link {
                Some(l) => {
                    let [a, b] = topo.links()[l as usize];
                    format!("link {l} to node {}", if a == v { b } else { a })
                }
                None => "host port".to_string(),
            }),
        );
        port.insert("speed".into(), json!(speed_mbps.to_string()));
        port.insert("mtu".into(), json!(p.port_mtu.to_string()));
        self.ports.insert(name.to_string(), Value::Object(port));
    }

    /// The switch's `config_db` object and its fit.
    fn finish(mut self) -> Switch {
        let p = &self.opts.profile;
        if !self.buffer_queue.is_empty() {
            self.profiles.insert(
                EGRESS_PROFILE.into(),
                json!({"pool": EGRESS_POOL, "size": "0", "dynamic_th": "7"}),
            );
        }
        let mut db = Map::new();
        db.insert("PORT".into(), Value::Object(self.ports));
        for (t, m) in self.named.tables {
            db.insert(t.into(), Value::Object(m));
        }
        db.insert("PORT_QOS_MAP".into(), Value::Object(self.port_qos));
        db.insert("CABLE_LENGTH".into(), json!({ "AZURE": self.cable }));
        if !self.profiles.is_empty() {
            db.insert("BUFFER_PROFILE".into(), Value::Object(self.profiles));
        }
        if !self.buffer_pg.is_empty() {
            db.insert("BUFFER_PG".into(), Value::Object(self.buffer_pg));
        }
        if !self.buffer_queue.is_empty() {
            db.insert("BUFFER_QUEUE".into(), Value::Object(self.buffer_queue));
        }
        let headroom_bytes = crate::capacity::reserve(p, self.xoff_sum, self.xon_sum);
        let most_queues = self.most_queues;
        Switch {
            node: self.nc.node,
            config: Value::Object(db),
            tcs: self.nc.classes.len(),
            fit: Some(SwitchFit {
                lossless_queues: most_queues,
                headroom_bytes,
                fits: most_queues <= p.lossless_queues && headroom_bytes <= p.lossless_buffer_bytes,
            }),
        }
    }
}

/// A lossless priority group's profile: xoff absorbs what is in flight
/// after a pause, xon what arrives before traffic resumes. With a shared
/// headroom pool the group reserves only its xon and the xoff is drawn
/// from the pool.
fn lossless_profile(h: PortHeadroom, shared: bool) -> Value {
    let size = if shared { h.xon } else { h.size() };
    json!({
        "pool": INGRESS_POOL,
        "xoff": h.xoff.to_string(),
        "xon": h.xon.to_string(),
        "size": size.to_string(),
        "dynamic_th": "0",
    })
}

/// Writes `DIR/<node>.json` per switch and `DIR/summary.json`: into a
/// temporary sibling directory that then replaces `DIR` whole, so a reader
/// never sees a half-written export or files of an earlier one. `DIR` must
/// be new, empty or an earlier export ([`replaceable`]).
///
/// # Errors
/// [`Error::OutputDir`] for a directory that is not an export; I/O errors
/// naming the file.
pub fn write(dir: &Path, ex: &Export) -> Result<()> {
    let mut staging = crate::output::Staging::default();
    staging.dir(dir, replaceable, |tmp| write_files(tmp, ex));
    staging.commit()
}

/// Writes the export's files into the (empty) directory `dir`: one
/// `<node>.json` per switch and `summary.json`.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_files(dir: &Path, ex: &Export) -> Result<()> {
    for s in &ex.switches {
        let text = serde_json::to_string_pretty(&s.config).expect("JSON values serialise");
        crate::output::write_staged(&dir.join(format!("{}.json", s.node)), &(text + "\n"))?;
    }
    let text = serde_json::to_string_pretty(&ex.summary).expect("JSON values serialise");
    crate::output::write_staged(&dir.join("summary.json"), &(text + "\n"))
}

/// Whether an export may replace the directory `dir`: it does not exist,
/// is empty, or holds an earlier export (its `summary.json` names a SONiC
/// or neutral-table format). Anything else is refused, so an export never
/// mixes with or deletes files it did not write, and never replaces an
/// update's steps.
///
/// # Errors
/// [`Error::OutputDir`] saying why.
pub fn replaceable(dir: &Path) -> Result<()> {
    replaceable_as(dir, &["tagger-sonic/", "tagger-switch-table/"], "an export")
}

/// [`replaceable`] for an update's steps (`--steps-out`,
/// `--export-steps`): new, empty, or earlier steps; never an export, which
/// is the configuration the switches run and every step is applied to.
///
/// # Errors
/// [`Error::OutputDir`] saying why.
pub fn replaceable_steps(dir: &Path) -> Result<()> {
    replaceable_as(
        dir,
        &["tagger-update-steps/", "tagger-update-export/"],
        "update steps",
    )
}

/// Whether output `what` may replace `dir`: it does not exist, is empty,
/// or holds an earlier output of its kind (`summary.json`'s format starts
/// with one of `kinds`) and nothing an output does not write.
fn replaceable_as(dir: &Path, kinds: &[&str], what: &str) -> Result<()> {
    let refuse = |reason: String| {
        Err(Error::OutputDir {
            path: dir.to_path_buf(),
            reason,
        })
    };
    let meta = match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return refuse("exists and is not a directory".into());
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    if entries.next().is_none() {
        return Ok(());
    }
    // An earlier output: its summary.json names a tagger format and says
    // what it holds (switches or steps), and every entry is one an output
    // writes, so nothing of the user's is deleted with it.
    let summary = dir.join("summary.json");
    let format = (std::fs::metadata(&summary).is_ok_and(|m| m.is_file() && m.len() < 1 << 20))
        .then(|| std::fs::read_to_string(&summary).ok())
        .flatten()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .filter(|v| v["switches"].is_array() || !v["steps"].is_null())
        .and_then(|v| v["format"].as_str().map(str::to_string))
        .filter(|f| f.starts_with("tagger-"));
    let Some(format) = format else {
        return refuse(format!(
            "holds files that are not a tagger export or update steps (no summary.json of one): {what} replaces its directory whole, so give a new or empty directory"
        ));
    };
    if !kinds.iter().any(|k| format.starts_with(k)) {
        let held = if format.starts_with("tagger-update-") {
            "an update's steps"
        } else {
            "an export: the configuration switches run, which update steps are applied to"
        };
        return refuse(format!(
            "holds {held} ({format}), which {what} does not replace: give another directory"
        ));
    }
    if let Some(foreign) = foreign_entry(dir, 0)? {
        return Err(Error::OutputDir {
            path: dir.to_path_buf(),
            reason: format!(
                "is an earlier one but also holds {}, which no export writes: {what} replaces its directory whole, so move it out or give another directory",
                foreign.display()
            ),
        });
    }
    Ok(())
}

/// The first entry of an export directory (or, at `depth` 1, of one of
/// its step directories) that no export writes: `summary.json`,
/// `<node>.json`, `topology.json`, `union-topology.json`, `step-*.json`
/// and `step-*` directories.
fn foreign_entry(dir: &Path, depth: u32) -> Result<Option<std::path::PathBuf>> {
    let mut names: Vec<(std::ffi::OsString, bool)> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .map(|e| {
            let e = e.map_err(|x| Error::io(dir, x))?;
            let is_dir = e.file_type().map_err(|x| Error::io(dir, x))?.is_dir();
            Ok((e.file_name(), is_dir))
        })
        .collect::<Result<_>>()?;
    names.sort();
    for (name, is_dir) in names {
        let path = dir.join(&name);
        let ok = match (name.to_str(), is_dir) {
            (Some(n), false) => {
                n == "summary.json"
                    || n == "topology.json"
                    || n == "union-topology.json"
                    || (n.starts_with("step-") && n.ends_with(".json"))
                    || n.strip_suffix(".json")
                        .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            }
            (Some(n), true) if depth == 0 && n.starts_with("step-") => {
                if let Some(f) = foreign_entry(&path, 1)? {
                    return Ok(Some(f));
                }
                true
            }
            _ => false,
        };
        if !ok {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// Traffic classes of `rules` per switch as a SONiC export would use them:
/// (the most at one switch, switches over the profile's lossless ones).
///
/// # Errors
/// As [`export`]'s classification.
pub fn traffic_classes(topo: &Topology, rules: &RuleSet, limit: u32) -> Result<(usize, usize)> {
    let c = classify(topo, &rules.keys(topo)?)?;
    Ok((c.max(), c.over(limit as usize).len()))
}
