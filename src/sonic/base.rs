//! Each switch's configuration before an install (its *base*): the
//! switch's own `config_db` as `show runningconfiguration all` prints it
//! (`--base DIR`), or a stock one rendered the way SONiC's templates render
//! a fresh switch for the switch profile.
//!
//! The stock base is rendered by the `stock` module.

use super::dir::excerpt;
use crate::capacity::Profile;
use crate::error::{Error, ExportKind, Result};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tagger_generators::{NodeId, Topology};

/// How a switch's buffer manager treats `BUFFER_PG` (`DEVICE_METADATA|
/// localhost.buffer_model`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferModel {
    /// buffermgrd (sonic-swss `cfgmgr/buffermgr.cpp`, e6b0c5b5): on every
    /// change of a port's speed, cable or `pfc_enable` it writes
    /// `<port>|<each run of pfc_enable>` with profile
    /// `pg_lossless_<speed>_<cable>_profile`, overwriting any other
    /// profile on that exact key, and creates that profile only when it
    /// does not exist.
    Traditional,
    /// buffermgrdyn: computes headroom for `BUFFER_PG` entries whose
    /// profile is `NULL` and uses a named static profile as given; writes
    /// nothing back to `config_db`.
    Dynamic,
}

impl BufferModel {
    /// The model a base's `DEVICE_METADATA` names (none: traditional).
    ///
    /// # Errors
    /// [`Error::Export`] naming a model that is neither.
    pub fn of(base: &Value, label: &str) -> Result<Self> {
        match &base["DEVICE_METADATA"]["localhost"]["buffer_model"] {
            Value::Null => Ok(BufferModel::Traditional),
            Value::String(s) if s == "traditional" => Ok(BufferModel::Traditional),
            Value::String(s) if s == "dynamic" => Ok(BufferModel::Dynamic),
            other => Err(Error::Export {
                kind: ExportKind::Base,
                reason: format!(
                    "{label}: DEVICE_METADATA|localhost buffer_model {} is not supported (traditional or dynamic): the buffer entries a plan needs depend on which daemon manages them",
                    excerpt(&other.to_string())
                ),
            }),
        }
    }

    /// The name `summary.json` records.
    pub fn name(self) -> &'static str {
        match self {
            BufferModel::Traditional => "traditional",
            BufferModel::Dynamic => "dynamic",
        }
    }
}

/// Where the switches' bases come from.
#[derive(Clone, Debug, Default)]
pub enum Base {
    /// Rendered from SONiC's templates for the profile (see the module
    /// documentation).
    #[default]
    Stock,
    /// The switches' own configurations, read from a directory: each
    /// file's name and parsed content, in name order.
    Own {
        /// The directory.
        dir: PathBuf,
        /// `(file name, config_db)`, `bgpraw` removed.
        files: Vec<(String, Value)>,
    },
}

impl Base {
    /// Reads every `*.json` of `dir`: a single-ASIC `config_db` each (as
    /// `show runningconfiguration all` prints it; its `bgpraw` is not
    /// configuration and is dropped).
    ///
    /// # Errors
    /// [`Error::Io`] naming the directory or file; [`Error::Export`] for a
    /// file that is not a JSON object of tables, a multi-ASIC dump, or a
    /// directory without one.
    pub fn read(dir: &Path) -> Result<Self> {
        let bad = |file: &str, reason: String| Error::Export {
            kind: ExportKind::Base,
            reason: format!("{}: {reason}", dir.join(file).display()),
        };
        let mut names = Vec::new();
        for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let e = e.map_err(|x| Error::io(dir, x))?;
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") {
                names.push(name);
            }
        }
        names.sort();
        if names.is_empty() {
            return Err(bad(
                "",
                "holds no *.json: give one config_db per switch (show runningconfiguration all)"
                    .into(),
            ));
        }
        let mut files = Vec::with_capacity(names.len());
        for name in names {
            let mut v = super::dir::load(&dir.join(&name)).map_err(|e| match e {
                Error::Export { reason, .. } => Error::Export {
                    kind: ExportKind::Base,
                    reason,
                },
                e => e,
            })?;
            let Some(obj) = v.as_object_mut() else {
                return Err(bad(
                    &name,
                    "is not a JSON object of config_db tables".into(),
                ));
            };
            if obj.contains_key("localhost") || obj.keys().any(|k| k.starts_with("asic")) {
                return Err(bad(
                    &name,
                    "is a multi-ASIC configuration (localhost, asicN): give one namespace's config_db per file".into(),
                ));
            }
            // Lower-case keys are not tables (`bgpraw`): sonic-cfggen
            // writes only upper-case ones.
            obj.retain(|k, _| !k.starts_with(|c: char| c.is_ascii_lowercase()));
            if let Some((t, _)) = obj.iter().find(|(_, x)| !x.is_object()) {
                return Err(bad(&name, format!("table {} is not an object", excerpt(t))));
            }
            files.push((name, v));
        }
        Ok(Base::Own {
            dir: dir.to_path_buf(),
            files,
        })
    }

    /// Each switch's base among `nodes`: its own file (matched by
    /// `DEVICE_METADATA|localhost.hostname`, the topology's name of the
    /// node or its id, else by the file's name, `<id>.json` or
    /// `<name>.json`), or the stock one from `stock(v)`.
    ///
    /// # Errors
    /// [`Error::Export`] for a switch without a file, a file that matches
    /// no switch of the topology or two, or two files for one switch.
    pub fn for_nodes(
        &self,
        topo: &Topology,
        nodes: &[NodeId],
        stock: impl Fn(NodeId) -> Value,
    ) -> Result<BTreeMap<NodeId, Value>> {
        let Base::Own { dir, files } = self else {
            return Ok(nodes.iter().map(|&v| (v, stock(v))).collect());
        };
        let bad = |reason: String| Error::Export {
            kind: ExportKind::Base,
            reason: format!("{}: {reason}", dir.display()),
        };
        let by_name: BTreeMap<String, NodeId> = (0..topo.node_count() as NodeId)
            .flat_map(|v| {
                let mut k = vec![(v.to_string(), v)];
                if let Some(n) = topo.node_name(v) {
                    k.push((n.to_string(), v));
                }
                k
            })
            .collect();
        let mut out: BTreeMap<NodeId, (String, Value)> = BTreeMap::new();
        for (file, db) in files {
            let host = db["DEVICE_METADATA"]["localhost"]["hostname"].as_str();
            let stem = file.trim_end_matches(".json");
            let v = host
                .and_then(|h| by_name.get(h))
                .or_else(|| by_name.get(stem))
                .copied()
                .ok_or_else(|| {
                    bad(format!(
                        "{file} (hostname {}) is no switch of the topology: name it <node id>.json or <node name>.json, or set its hostname to the node's name",
                        host.map_or("unset".into(), excerpt)
                    ))
                })?;
            if let Some((other, _)) = out.get(&v) {
                return Err(bad(format!(
                    "{other} and {file} are both switch {v}'s configuration"
                )));
            }
            out.insert(v, (file.clone(), db.clone()));
        }
        let mut bases = BTreeMap::new();
        for &v in nodes {
            let Some((_, db)) = out.remove(&v) else {
                return Err(bad(format!(
                    "has no configuration of switch {v}{}, which the plan configures",
                    topo.node_name(v)
                        .map_or(String::new(), |n| format!(" ({})", excerpt(n)))
                )));
            };
            bases.insert(v, db);
        }
        Ok(bases)
    }

    /// The bases of `topo`'s switches only: files matching no switch of
    /// it are left out (an update's old topology lacks the switches a
    /// growth adds, whose files the same directory holds).
    pub fn restricted_to(&self, topo: &Topology) -> Base {
        let Base::Own { dir, files } = self else {
            return Base::Stock;
        };
        let known = |name: &str| {
            name.parse::<NodeId>()
                .is_ok_and(|v| (v as usize) < topo.node_count() && v.to_string() == name)
                || (0..topo.node_count() as NodeId).any(|v| topo.node_name(v) == Some(name))
        };
        let files = files
            .iter()
            .filter(|(file, db)| {
                let host = db["DEVICE_METADATA"]["localhost"]["hostname"].as_str();
                host.is_some_and(known) || known(file.trim_end_matches(".json"))
            })
            .cloned()
            .collect();
        Base::Own {
            dir: dir.clone(),
            files,
        }
    }

    /// What `summary.json` records of the base.
    pub fn describe(&self) -> Value {
        match self {
            Base::Stock => json!("stock"),
            Base::Own { dir, .. } => json!(dir.display().to_string()),
        }
    }
}

/// Which DSCP values keep the lossy class their base gives them
/// (`--keep-dscp`); the others that are no tag join the base's default
/// class (DSCP 0's), their DSCP unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeepDscp {
    /// Every DSCP value (the default with the switches' own bases).
    All,
    /// None (the default with the stock base: its five lossy classes would
    /// leave a plan three traffic classes).
    None,
    /// These.
    Some(std::collections::BTreeSet<u32>),
}

impl std::str::FromStr for KeepDscp {
    type Err = String;

    /// `all`, `none` or a comma-separated list of DSCP values 0-63.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "all" => Ok(KeepDscp::All),
            "none" => Ok(KeepDscp::None),
            _ => s
                .split(',')
                .map(|x| {
                    x.trim()
                        .parse::<u32>()
                        .ok()
                        .filter(|&d| d < 64)
                        .ok_or_else(|| {
                            format!("'{}' is not a DSCP value (0-63), all or none", excerpt(x))
                        })
                })
                .collect::<std::result::Result<_, _>>()
                .map(KeepDscp::Some),
        }
    }
}

impl KeepDscp {
    /// Whether DSCP `d` keeps its class.
    pub fn keeps(&self, d: u32) -> bool {
        match self {
            KeepDscp::All => true,
            KeepDscp::None => false,
            KeepDscp::Some(s) => s.contains(&d),
        }
    }

    /// What `summary.json` records.
    pub fn describe(&self) -> Value {
        match self {
            KeepDscp::All => json!("all"),
            KeepDscp::None => json!("none"),
            KeepDscp::Some(s) => json!(s),
        }
    }
}

/// What one port's base says of classification and buffers.
#[derive(Clone, Debug)]
pub(super) struct PortBase {
    pub name: String,
    /// `PORT.speed`, as written (buffermgrd names profiles with it).
    pub speed: String,
    pub mtu: u64,
    /// DSCP -> TC (unmapped: 0).
    pub d2t: Vec<u32>,
    t2g: BTreeMap<u32, u32>,
    t2q: BTreeMap<u32, u32>,
    pub t2d: Option<BTreeMap<u32, u32>>,
    pfc: std::collections::BTreeSet<u32>,
    /// `PORT_QOS_MAP|port`.
    pub binding: Map<String, Value>,
    /// Priority group -> profile, from `BUFFER_PG`.
    pub pg: BTreeMap<u32, Option<String>>,
    /// Queue -> profile, from `BUFFER_QUEUE`.
    pub queue: BTreeMap<u32, Option<String>>,
    /// Queue 0's profile (a lossy queue's).
    pub lossy_queue: Option<String>,
}

impl PortBase {
    /// Whether the base makes DSCP `d` lossless here.
    pub fn lossless(&self, d: u32) -> bool {
        self.pfc.contains(&self.t2g(self.d2t[d as usize]))
    }

    /// The default class: DSCP 0's (0 if DSCP 0 is lossless).
    pub fn default_tc(&self) -> u32 {
        if self.lossless(0) { 0 } else { self.d2t[0] }
    }

    /// TC -> priority group (unmapped: 0).
    pub fn t2g(&self, tc: u32) -> u32 {
        self.t2g.get(&tc).copied().unwrap_or(0)
    }

    /// TC -> queue (unmapped: 0).
    pub fn t2q(&self, tc: u32) -> u32 {
        self.t2q.get(&tc).copied().unwrap_or(0)
    }
}

/// A switch's base, read for the export.
#[derive(Clone, Debug)]
pub(super) struct SwitchBase {
    pub db: Value,
    pub model: BufferModel,
    pub ports: Vec<PortBase>,
    /// Traffic classes the base's kept lossy classes hold (with `untag`).
    pub lossy: std::collections::BTreeSet<u32>,
    /// The lossy class of packets carrying a tag's DSCP where it is not
    /// lossless: the default class's queue and group, untagged (DSCP 0) as
    /// it leaves by a link, since a tag arriving downstream in a lossless
    /// group must have left in a paused queue. `None` when no DSCP keeps
    /// its class: every lossy class is then untagged as it leaves.
    pub untag: Option<u32>,
    /// The tags' DSCP values.
    pub tags: std::collections::BTreeSet<u32>,
    keep: KeepDscp,
    label: String,
}

impl SwitchBase {
    /// Switch `label`'s base `db`, for ports `names` (each must be in its
    /// `PORT`).
    pub fn new(db: Value, label: String, names: &[String], keep: KeepDscp) -> Result<Self> {
        let bad = |reason: String| Error::Export {
            kind: ExportKind::Base,
            reason: format!("{label}: {reason}"),
        };
        let model = BufferModel::of(&db, &label)?;
        for pool in [super::INGRESS_POOL, super::EGRESS_POOL] {
            if db["BUFFER_POOL"][pool].is_null() {
                return Err(bad(format!(
                    "BUFFER_POOL has no {pool}, which the plan's lossless buffers draw on"
                )));
            }
        }
        let map = |table: &str, name: &Value, at: &str| -> Result<BTreeMap<u32, u32>> {
            let Some(n) = name.as_str() else {
                return Ok(BTreeMap::new());
            };
            let Some(m) = db[table][n].as_object() else {
                return Err(bad(format!(
                    "{at} binds {table}|{}, which it does not define",
                    excerpt(n)
                )));
            };
            m.iter()
                .map(
                    |(k, v)| match (k.parse::<u32>().ok(), super::dir::number(v)) {
                        (Some(k), Some(v)) if k < 64 && v < 64 => Ok((k, v)),
                        _ => Err(bad(format!(
                            "{table}|{} maps {} to {}: not numbers",
                            excerpt(n),
                            excerpt(k),
                            excerpt(&v.to_string())
                        ))),
                    },
                )
                .collect()
        };
        // A bound port the plan does not know could bring lossless
        // traffic it never planned for (a stock binding pauses 3 and 4).
        if let Some(extra) = db["PORT_QOS_MAP"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
            .find(|k| *k != "global" && !names.contains(k))
        {
            return Err(bad(format!(
                "PORT_QOS_MAP|{} binds a port the topology does not give this switch: traffic arriving there could be lossless outside the plan; give the topology that port (a host port, or the link it has) or remove its binding first",
                excerpt(extra)
            )));
        }
        let mut ports = Vec::with_capacity(names.len());
        for name in names {
            let at = format!("PORT_QOS_MAP|{}", excerpt(name));
            let port = &db["PORT"][name];
            let Some(speed) = port["speed"].as_str() else {
                return Err(bad(format!(
                    "PORT|{} {}: the plan's port must be a port of the switch with its speed",
                    excerpt(name),
                    if port.is_null() {
                        "does not exist"
                    } else {
                        "has no speed"
                    }
                )));
            };
            let mtu = super::dir::number(&port["mtu"]).map_or(9100, u64::from);
            let binding = db["PORT_QOS_MAP"][name]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let b = Value::Object(binding.clone());
            let d2t_name = if b["dscp_to_tc_map"].is_null() {
                &db["PORT_QOS_MAP"]["global"]["dscp_to_tc_map"]
            } else {
                &b["dscp_to_tc_map"]
            };
            let d2t_map = map("DSCP_TO_TC_MAP", d2t_name, &at)?;
            let d2t = (0..64)
                .map(|d| d2t_map.get(&d).copied().unwrap_or(0))
                .collect();
            let t2d = if b["tc_to_dscp_map"].is_null() {
                None
            } else {
                Some(map("TC_TO_DSCP_MAP", &b["tc_to_dscp_map"], &at)?)
            };
            let pfc = b["pfc_enable"]
                .as_str()
                .unwrap_or_default()
                .split(',')
                .filter(|x| !x.is_empty())
                .map(|x| {
                    x.trim().parse::<u32>().map_err(|_| {
                        bad(format!(
                            "{at} pfc_enable {} is not a list of priorities",
                            excerpt(x)
                        ))
                    })
                })
                .collect::<Result<_>>()?;
            let pg = keyed(&db, "BUFFER_PG", name, &bad)?;
            let queue = keyed(&db, "BUFFER_QUEUE", name, &bad)?;
            let lossy_queue = queue.get(&0).cloned().flatten();
            ports.push(PortBase {
                name: name.clone(),
                speed: speed.to_string(),
                mtu,
                d2t,
                t2g: map("TC_TO_PRIORITY_GROUP_MAP", &b["tc_to_pg_map"], &at)?,
                t2q: map("TC_TO_QUEUE_MAP", &b["tc_to_queue_map"], &at)?,
                t2d,
                pfc,
                binding,
                pg,
                queue,
                lossy_queue,
            });
        }
        Ok(SwitchBase {
            db,
            model,
            ports,
            lossy: Default::default(),
            untag: None,
            tags: Default::default(),
            keep,
            label,
        })
    }

    /// Whether DSCP `d` keeps its base class.
    pub fn keeps(&self, d: u32) -> bool {
        self.keep.keeps(d)
    }

    /// Whether DSCP `d` can be a tag here: its class is not kept, or is
    /// lossless or the default one.
    pub fn takes(&self, d: u32) -> bool {
        !self.keeps(d)
            || self
                .ports
                .iter()
                .all(|p| p.lossless(d) || p.d2t[d as usize] == p.default_tc())
    }

    /// Sets the lossy classes kept once the tags' DSCP values are known.
    pub fn settle(&mut self, tags: &std::collections::BTreeSet<u32>) {
        let mut l = std::collections::BTreeSet::new();
        for p in &self.ports {
            l.insert(p.default_tc());
            for d in 0..64 {
                if self.keeps(d) && !tags.contains(&d) && !p.lossless(d) {
                    l.insert(p.d2t[d as usize]);
                }
            }
        }
        if self.keep != KeepDscp::None {
            let free = (0..16)
                .find(|t| !l.contains(t))
                .expect("at most 16 classes");
            l.insert(free);
            self.untag = Some(free);
        }
        self.lossy = l;
        self.tags = tags.clone();
    }

    /// Whether lossy class `tc` is untagged as it leaves by a link.
    pub fn untags(&self, tc: u32) -> bool {
        self.untag.is_none_or(|u| u == tc)
    }

    /// The base class whose queue and group lossy class `tc` takes at
    /// port `p` (the untag class takes the default class's).
    pub fn like(&self, p: &PortBase, tc: u32) -> u32 {
        if self.untag == Some(tc) {
            p.default_tc()
        } else {
            tc
        }
    }

    /// Queues (and priority groups) the kept lossy classes use.
    pub fn lossy_queues(&self) -> std::collections::BTreeSet<u32> {
        let mut q = std::collections::BTreeSet::new();
        for p in &self.ports {
            for &tc in &self.lossy {
                q.insert(p.t2q(self.like(p, tc)));
                q.insert(p.t2g(self.like(p, tc)));
            }
        }
        q
    }

    /// A profile in BUFFER_PROFILE, from the base or `added`.
    pub fn profile<'a>(&'a self, name: &str, added: &'a Map<String, Value>) -> Option<&'a Value> {
        added
            .get(name)
            .or_else(|| self.db["BUFFER_PROFILE"].get(name))
    }

    /// Whether profile `name` reserves headroom (a lossless group's): it
    /// has an xoff, or is `NULL` (computed by the dynamic model).
    pub fn reserves_headroom(&self, name: &str) -> bool {
        name == "NULL"
            || self.db["BUFFER_PROFILE"][name]["xoff"]
                .as_str()
                .is_some_and(|x| x != "0")
    }

    /// Whether profile `name` draws on the egress lossless pool.
    pub fn egress_lossless(&self, name: &str) -> bool {
        self.db["BUFFER_PROFILE"][name]["pool"].as_str() == Some(super::EGRESS_POOL)
    }

    /// The lossless priority group profile of a port at `speed` and
    /// `cable` needing headroom `h`: under the traditional model the one
    /// buildmgrd uses (`pg_lossless_<speed>_<cable>_profile`: the base's
    /// when it holds enough, else written); under the dynamic model a
    /// static one of tagger's.
    ///
    /// # Errors
    /// [`Error::Export`] when the base's buffermgrd profile holds less
    /// headroom than the plan needs (GCU may not change its size or xon,
    /// and buffermgrd would keep it).
    pub fn lossless_profile(
        &self,
        speed: &str,
        cable: &str,
        h: crate::capacity::PortHeadroom,
        p: &Profile,
        added: &mut Map<String, Value>,
    ) -> Result<String> {
        let mode = self.db["BUFFER_POOL"][super::INGRESS_POOL]["mode"].as_str();
        let size = if p.shared_headroom_pool {
            h.xon
        } else {
            h.size()
        };
        let mut ours = json!({
            "pool": super::INGRESS_POOL,
            "xoff": h.xoff.to_string(),
            "xon": h.xon.to_string(),
            "size": size.to_string(),
        });
        if mode == Some("static") {
            ours["static_th"] = json!(size.to_string());
        } else {
            ours["dynamic_th"] = json!("0");
        }
        match self.model {
            BufferModel::Traditional => {
                let name = format!("pg_lossless_{speed}_{cable}_profile");
                if let Some(have) = self.profile(&name, added) {
                    let n = |k: &str| super::dir::number(&have[k]).map_or(0, u64::from);
                    if n("xoff") < h.xoff || n("xon") < h.xon {
                        return Err(Error::Export {
                            kind: ExportKind::Base,
                            reason: format!(
                                "{}: BUFFER_PROFILE|{name} holds xoff {} and xon {}, the plan needs {} and {} (speed {speed}, cable {cable}); buffermgrd keeps that profile for these ports and GCU may not change its size: remove it from the switch first (buffermgrd then takes tagger's), or give the switch profile the switch's headroom",
                                self.label,
                                n("xoff"),
                                n("xon"),
                                h.xoff,
                                h.xon
                            ),
                        });
                    }
                } else {
                    added.insert(name.clone(), ours);
                }
                Ok(name)
            }
            BufferModel::Dynamic => {
                let stem = format!("TAGGER_PG_LOSSLESS_{speed}_{cable}");
                let mut name = stem.clone();
                let mut i = 1;
                while let Some(have) = self.profile(&name, added) {
                    if *have == ours {
                        return Ok(name);
                    }
                    i += 1;
                    name = format!("{stem}_{i}");
                }
                added.insert(name.clone(), ours);
                Ok(name)
            }
        }
    }

    /// The lossless queues' profile: the base's on the egress lossless
    /// pool (`egress_lossless_profile` first), else tagger's.
    pub fn egress_profile(&self, added: &mut Map<String, Value>) -> String {
        let profiles = self.db["BUFFER_PROFILE"].as_object();
        if self.egress_lossless("egress_lossless_profile") {
            return "egress_lossless_profile".into();
        }
        if let Some((k, _)) = profiles
            .into_iter()
            .flatten()
            .find(|(k, _)| self.egress_lossless(k))
        {
            return k.clone();
        }
        let static_pool =
            self.db["BUFFER_POOL"][super::EGRESS_POOL]["mode"].as_str() == Some("static");
        let th = if static_pool {
            "static_th"
        } else {
            "dynamic_th"
        };
        let val = if static_pool {
            self.db["BUFFER_POOL"][super::EGRESS_POOL]["size"].clone()
        } else {
            json!("7")
        };
        added.insert(
            "TAGGER_EGRESS_LOSSLESS".into(),
            json!({"pool": super::EGRESS_POOL, "size": "0", th: val}),
        );
        "TAGGER_EGRESS_LOSSLESS".into()
    }
}

/// `table`'s keys on `port` (`port|n`, `port|lo-hi`): each number's
/// profile.
fn keyed(
    db: &Value,
    table: &str,
    port: &str,
    bad: &dyn Fn(String) -> Error,
) -> Result<BTreeMap<u32, Option<String>>> {
    let mut out = BTreeMap::new();
    for (k, e) in db[table].as_object().into_iter().flatten() {
        let Some(r) = k.strip_prefix(port).and_then(|r| r.strip_prefix('|')) else {
            continue;
        };
        let (lo, hi) = r.split_once('-').unwrap_or((r, r));
        let (Ok(lo), Ok(hi)) = (lo.parse::<u32>(), hi.parse::<u32>()) else {
            return Err(bad(format!(
                "{table}|{} is not port|n or port|lo-hi",
                excerpt(k)
            )));
        };
        if lo > hi || hi > 15 {
            return Err(bad(format!(
                "{table}|{} is not a range of 0-15",
                excerpt(k)
            )));
        }
        let prof = e["profile"].as_str().map(str::to_string);
        for n in lo..=hi {
            out.insert(n, prof.clone());
        }
    }
    Ok(out)
}
