//! One switch's `config_db` as the read-back reads it: its tables checked,
//! its ports' maps and PFC bound, its buffers sized again, and the
//! function it applies decoded.

use crate::capacity::{Profile, port_headroom_at};
use crate::error::{Error, ExportKind, Result};
use crate::sonic::dir::{excerpt, number};
use crate::sonic::function::{In, Out, Port, SwitchFn};
use crate::sonic::port_names;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tagger_generators::{LinkId, NodeId, Topology};

/// A SONiC port's MTU where `PORT` gives none.
const SONIC_DEFAULT_MTU: u32 = 9100;

/// Per table keyed by `port|n` or `port|lo-hi` (`BUFFER_PG`,
/// `BUFFER_QUEUE`, `QUEUE`), per port: each key's range and the key.
type KeyIndex = BTreeMap<&'static str, BTreeMap<String, Vec<(u32, u32, String)>>>;

/// The tables of a switch file the read-back judges (besides the ACL
/// tables it refuses): what else a file holds is refused when it could act
/// on classification, queues or buffers, and ignored otherwise.
const JUDGED: [&str; 16] = [
    "PORT",
    "CABLE_LENGTH",
    "PORT_QOS_MAP",
    "DSCP_TO_TC_MAP",
    "TC_TO_PRIORITY_GROUP_MAP",
    "TC_TO_QUEUE_MAP",
    "TC_TO_DSCP_MAP",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE",
    "DOT1P_TO_TC_MAP",
    "BUFFER_PROFILE",
    "BUFFER_PG",
    "BUFFER_QUEUE",
    "BUFFER_POOL",
    "QUEUE",
    "WRED_PROFILE",
];

/// Tables that act on buffers or queues without deciding what is lossless
/// or how much headroom a judged group holds.
const NEUTRAL: [&str; 6] = [
    "SCHEDULER",
    "PFC_WD",
    "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST",
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
    "LOSSLESS_TRAFFIC_PATTERN",
];

/// One switch's `config_db`.
pub(super) struct SwitchDb<'a> {
    pub db: &'a Value,
    /// The topology the plan was made on: each port's real speed and cable.
    pub topo: &'a Topology,
    pub file: String,
    pub profile: &'a Profile,
    /// The lossless ingress and egress pools.
    pub pools: (&'a str, &'a str),
    /// The keyed tables by port ([`SwitchDb::index_keys`], at the start
    /// of [`SwitchDb::decode`]).
    pub keys: std::cell::OnceCell<KeyIndex>,
}

impl SwitchDb<'_> {
    fn bad(&self, reason: String) -> Error {
        Error::Export {
            kind: ExportKind::ReadBack,
            reason: format!("{}: {reason}", self.file),
        }
    }

    /// Map `name` of `table` (a reference from `PORT_QOS_MAP`), keys and
    /// values within `keys` and `values`.
    fn map(&self, table: &str, name: &Value, keys: u32, values: u32) -> Result<BTreeMap<u32, u32>> {
        let name = name
            .as_str()
            .ok_or_else(|| self.bad(format!("a {table} reference is missing")))?;
        let m = self.db[table][name].as_object().ok_or_else(|| {
            self.bad(format!(
                "{table}|{} is referenced but not defined: SONiC does not apply the port's binding",
                excerpt(name)
            ))
        })?;
        m.iter()
            .map(|(k, x)| {
                let k2 = k
                    .parse::<u32>()
                    .ok()
                    .filter(|&k| k <= keys)
                    .ok_or_else(|| {
                        self.bad(format!(
                            "{table}|{}: key {} is not a number from 0 to {keys}",
                            excerpt(name),
                            excerpt(k)
                        ))
                    })?;
                let x = number(x).filter(|&x| x <= values).ok_or_else(|| {
                    let p = self.profile;
                    let whose = match table {
                        "DSCP_TO_TC_MAP" => {
                            format!(" ({} has {} traffic classes)", p.name, p.traffic_classes)
                        }
                        "TC_TO_QUEUE_MAP" => {
                            format!(" ({} has {} queues per port)", p.name, p.queues_per_port)
                        }
                        _ => String::new(),
                    };
                    self.bad(format!(
                        "{table}|{}[{}] = {} is not a number from 0 to {values}{whose}",
                        excerpt(name),
                        excerpt(k),
                        excerpt(&x.to_string())
                    ))
                })?;
                Ok((k2, x))
            })
            .collect()
    }

    /// The priorities of a port's `pfc_enable`. SONiC's pattern for it,
    /// `([0-7](,[0-7])*)?`, is enforced: a value the switch's YANG layer
    /// would refuse enables nothing.
    fn pfc(&self, port: &str, b: &Value) -> Result<BTreeSet<u32>> {
        let text = match &b["pfc_enable"] {
            Value::Null => "",
            Value::String(t) => t.as_str(),
            other => {
                return Err(self.bad(format!(
                    "{port}: pfc_enable {} is not a string",
                    excerpt(&other.to_string())
                )));
            }
        };
        if text.is_empty() {
            return Ok(BTreeSet::new());
        }
        text.split(',')
            .map(|x| match x.as_bytes() {
                [d @ b'0'..=b'7'] => Ok(u32::from(d - b'0')),
                _ => Err(self.bad(format!(
                    "{port}: pfc_enable '{}' does not match SONiC's pattern ([0-7](,[0-7])*)?",
                    excerpt(text)
                ))),
            })
            .collect()
    }

    /// The `BUFFER_PROFILE` a `BUFFER_PG` / `BUFFER_QUEUE` entry covering
    /// `port`'s `n` names: (the entry's key, the profile's name and
    /// fields), or `None` without such an entry.
    fn buffer(&self, table: &str, port: &str, n: u32) -> Result<Option<(String, String, &Value)>> {
        let Some(key) = self.key_of(table, port, n) else {
            return Ok(None);
        };
        let e = &self.db[table][key];
        let prof = e["profile"].as_str().unwrap_or_default();
        let fields = &self.db["BUFFER_PROFILE"][prof];
        if !fields.is_object() {
            return Err(self.bad(format!(
                "{table}|{} names BUFFER_PROFILE|{}, which is not defined",
                excerpt(key),
                excerpt(prof)
            )));
        }
        Ok(Some((key.to_string(), prof.to_string(), fields)))
    }

    /// The key of `table` (one of [`KeyIndex`]'s) covering `port`'s `n`.
    fn key_of(&self, table: &str, port: &str, n: u32) -> Option<&str> {
        self.keys
            .get()
            .expect("indexed first")
            .get(table)?
            .get(port)?
            .iter()
            .find(|(lo, hi, _)| (*lo..=*hi).contains(&n))
            .map(|(_, _, k)| k.as_str())
    }

    /// The keyed tables by port, each key's range checked: a key that is
    /// not `port|n` or `port|lo-hi` (lo <= hi), or two keys of one port
    /// covering one group or queue (SONiC applies both, in no set order),
    /// is refused.
    fn index_keys(&self) -> Result<KeyIndex> {
        let mut index: KeyIndex = BTreeMap::new();
        for table in ["BUFFER_PG", "BUFFER_QUEUE", "QUEUE"] {
            let by_port = index.entry(table).or_default();
            for key in self.db[table]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                let parsed = key.split_once('|').and_then(|(port, range)| {
                    let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                    let (lo, hi) = (lo.parse::<u32>().ok()?, hi.parse::<u32>().ok()?);
                    (lo <= hi && hi <= 15).then(|| (port.to_string(), lo, hi))
                });
                let Some((port, lo, hi)) = parsed else {
                    return Err(self.bad(format!(
                        "{table}|{}: a key is PORT|N or PORT|LO-HI with LO <= HI <= 15",
                        excerpt(key)
                    )));
                };
                by_port.entry(port).or_default().push((lo, hi, key.clone()));
            }
            for (port, keys) in by_port.iter_mut() {
                keys.sort();
                if let Some(w) = keys.windows(2).find(|w| w[1].0 <= w[0].1) {
                    return Err(self.bad(format!(
                        "{table}|{} and {table}|{} both cover {} {} of {}: the switch applies both, in no set order",
                        excerpt(&w[0].2),
                        excerpt(&w[1].2),
                        if table == "BUFFER_PG" {
                            "priority group"
                        } else {
                            "queue"
                        },
                        w[1].0,
                        excerpt(port)
                    )));
                }
            }
        }
        Ok(index)
    }

    /// Tables the read-back does not judge that act on classification,
    /// queues or buffers are refused; lossless queues must not meet a
    /// WRED profile that drops; every lossless-pool `BUFFER_PG` covers
    /// only groups in its port's `pfc_enable`.
    fn check_tables(
        &self,
        ports: &[Port],
        bound: &[Bound],
        queues_at: &[BTreeSet<u32>],
    ) -> Result<()> {
        for (t, _) in self.db.as_object().into_iter().flatten() {
            let acts = ["BUFFER", "QUEUE", "WRED", "_MAP", "SCHEDULER", "PFC", "QOS"]
                .iter()
                .any(|w| t.contains(w));
            // The scheduler's weights and the PFC watchdog's storm
            // handling neither classify nor buffer a packet; a port's
            // pool-level profile lists set no group or queue lossless,
            // and the dynamic model's defaults size only `NULL` groups,
            // which the read-back refuses on the ports it judges.
            if acts && !JUDGED.contains(&t.as_str()) && !NEUTRAL.contains(&t.as_str()) {
                return Err(self.bad(format!(
                    "has a {} table, which acts on classification, queues or buffers and which the read-back does not judge; remove it, or judge it by hand",
                    excerpt(t)
                )));
            }
        }
        for (i, port) in ports.iter().enumerate() {
            // Lossy traffic in a lossless buffer: a group drawing on the
            // lossless pool that pauses nothing.
            if let Some(keys) = self
                .keys
                .get()
                .expect("indexed")
                .get("BUFFER_PG")
                .and_then(|m| m.get(&port.name))
            {
                for (lo, hi, key) in keys {
                    let prof = self.db["BUFFER_PG"][key]["profile"]
                        .as_str()
                        .unwrap_or_default();
                    // A profile without headroom (Broadcom's lossy
                    // groups share the ingress lossless pool) pauses
                    // nothing and holds no lossless buffer back.
                    let profile = &self.db["BUFFER_PROFILE"][prof];
                    if profile["pool"].as_str() != Some(self.pools.0)
                        || number(&profile["xoff"]).unwrap_or(0) == 0
                    {
                        continue;
                    }
                    if let Some(g) = (*lo..=*hi).find(|g| !bound[i].pfc.contains(g)) {
                        return Err(self.bad(format!(
                            "BUFFER_PG|{} puts priority group {g} of {} in the lossless ingress pool, but pfc_enable does not hold {g}: its traffic would take lossless buffer and never pause",
                            excerpt(key),
                            excerpt(&port.name)
                        )));
                    }
                }
            }
            for &q in &queues_at[i] {
                let Some(key) = self.key_of("QUEUE", &port.name, q) else {
                    continue;
                };
                let wred = &self.db["QUEUE"][key]["wred_profile"];
                let Some(name) = wred.as_str() else { continue };
                let w = &self.db["WRED_PROFILE"][name];
                if !w.is_object() {
                    return Err(self.bad(format!(
                        "QUEUE|{} names WRED_PROFILE|{}, which is not defined",
                        excerpt(key),
                        excerpt(name)
                    )));
                }
                let ecn = w["ecn"].as_str().unwrap_or("ecn_none");
                for color in ["green", "yellow", "red"] {
                    let on = w[format!("wred_{color}_enable")].as_str() == Some("true");
                    if on && !(ecn == "ecn_all" || ecn.contains(color)) {
                        return Err(self.bad(format!(
                            "QUEUE|{} applies WRED_PROFILE|{} to lossless queue {q}: it drops {color} packets (ecn {}) where it must mark them",
                            excerpt(key),
                            excerpt(name),
                            excerpt(ecn)
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// The headroom `port` needs per lossless priority group for its
    /// `PORT` speed and `CABLE_LENGTH`, by the recorded profile. The
    /// configuration's own speed and cable size it (they are what the
    /// switch sizes from), but neither may understate the port: the speed
    /// is the one the topology or the profile gives the link (or host
    /// port), the cable no shorter, and a port listed under several
    /// `CABLE_LENGTH` keys has one length in all of them.
    fn needed(&self, port: &Port) -> Result<crate::capacity::PortHeadroom> {
        let name = port.name.as_str();
        let speed = number(&self.db["PORT"][name]["speed"])
            .filter(|&s| s > 0)
            .ok_or_else(|| {
                self.bad(format!(
                    "PORT|{}: speed {} is not a speed in Mb/s",
                    excerpt(name),
                    excerpt(&self.db["PORT"][name]["speed"].to_string())
                ))
            })?;
        let mut lengths = self.db["CABLE_LENGTH"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(key, m)| Some((key, m.get(name)?)));
        let metres = |t: &Value| {
            t.as_str()
                .and_then(|t| t.strip_suffix('m'))
                .and_then(|t| t.parse::<f64>().ok())
                .filter(|m| m.is_finite() && *m >= 0.0)
        };
        let (key, text) = lengths.next().ok_or_else(|| {
            self.bad(format!(
                "CABLE_LENGTH has no length in metres for {}: its headroom cannot be sized",
                excerpt(name)
            ))
        })?;
        let cable = metres(text).ok_or_else(|| {
            self.bad(format!(
                "CABLE_LENGTH|{}: {} = {} is not a length in metres: its headroom cannot be sized",
                excerpt(key),
                excerpt(name),
                excerpt(&text.to_string())
            ))
        })?;
        if let Some((k2, t2)) = lengths.find(|(_, t)| metres(t) != Some(cable)) {
            return Err(self.bad(format!(
                "{} has two cable lengths: CABLE_LENGTH|{} says {}, CABLE_LENGTH|{} says {}",
                excerpt(name),
                excerpt(key),
                excerpt(&text.to_string()),
                excerpt(k2),
                excerpt(&t2.to_string())
            )));
        }
        let (real_gbps, real_m) = match port.link {
            Some(l) => self.profile.link(self.topo, l),
            None => (self.profile.host_speed_gbps, self.profile.host_cable_m),
        };
        let what = match port.link {
            Some(l) => format!("link {l}"),
            None => "a host port".to_string(),
        };
        let real_mbps = (real_gbps * 1000.0).round();
        if f64::from(speed) != real_mbps {
            return Err(self.bad(format!(
                "PORT|{}: speed {speed} Mb/s, but {what} runs at {real_mbps} Mb/s (the topology's, or the recorded profile {}'s): its headroom would be sized for another speed",
                excerpt(name),
                self.profile.name
            )));
        }
        if cable < real_m.ceil() {
            return Err(self.bad(format!(
                "CABLE_LENGTH|{}: {} = {}, but {what} has a {real_m} m cable (the topology's, or the recorded profile {}'s): headroom sized for the shorter one would drop",
                excerpt(key),
                excerpt(name),
                excerpt(&text.to_string()),
                self.profile.name
            )));
        }
        let gbps = f64::from(speed) / 1000.0;
        if !self.profile.sizes(gbps) {
            return Err(self.bad(format!(
                "PORT|{}: {gbps} Gb/s is a speed the recorded profile {} cannot size (no pause-quanta entry and no peer response time)",
                excerpt(name),
                self.profile.name
            )));
        }
        // The port's own MTU (SONiC's default where it gives none): a
        // larger one needs more headroom, one below the lossless packets'
        // size drops them.
        let mtu_value = &self.db["PORT"][name]["mtu"];
        let mtu = match mtu_value {
            Value::Null => u64::from(SONIC_DEFAULT_MTU),
            v => number(v).filter(|&m| m > 0).map(u64::from).ok_or_else(|| {
                self.bad(format!(
                    "PORT|{}: mtu {} is not a size in bytes",
                    excerpt(name),
                    excerpt(&v.to_string())
                ))
            })?,
        };
        if mtu < self.profile.lossless_mtu {
            return Err(self.bad(format!(
                "PORT|{}: mtu {mtu} is below the {} bytes of the lossless packets the recorded profile {} carries: larger ones would be dropped",
                excerpt(name),
                self.profile.lossless_mtu,
                self.profile.name
            )));
        }
        Ok(port_headroom_at(self.profile, gbps, cable, mtu))
    }

    /// Whether `port`'s priority group `g` is lossless: in `pfc_enable`
    /// with a `BUFFER_PG` whose profile, in the lossless ingress pool,
    /// holds at least the headroom the port needs. A group in `pfc_enable`
    /// without it is an error: the port would pause but drop.
    fn group(&self, p: &Port, g: u32, pfc: &BTreeSet<u32>) -> Result<bool> {
        let port = p.name.as_str();
        // Every group is read as the configuration says, group 0 too: a
        // switch pauses for whatever pfc_enable holds.
        if !pfc.contains(&g) {
            return Ok(false);
        }
        let Some((key, prof, f)) = self.buffer("BUFFER_PG", port, g)? else {
            return Err(self.bad(format!(
                "{port}: lossless priority group {g} (in pfc_enable) has no BUFFER_PG: no headroom, it would drop"
            )));
        };
        let field = |k: &str| number(&f[k]).map(u64::from);
        let pool = f["pool"].as_str().unwrap_or_default();
        if pool != self.pools.0 {
            return Err(self.bad(format!(
                "BUFFER_PG|{} uses BUFFER_PROFILE|{} in pool {}, not the lossless ingress pool {}",
                excerpt(&key),
                excerpt(&prof),
                excerpt(pool),
                self.pools.0
            )));
        }
        let need = self.needed(p)?;
        let size_need = if self.profile.shared_headroom_pool {
            need.xon
        } else {
            need.size()
        };
        for (k, want) in [("xoff", need.xoff), ("xon", need.xon), ("size", size_need)] {
            match field(k) {
                Some(x) if x >= want => {}
                got => {
                    return Err(self.bad(format!(
                        "BUFFER_PROFILE|{} (priority group {g} of {}): {k} {} is below the {want} bytes {} needs at {} Mb/s over its CABLE_LENGTH",
                        excerpt(&prof),
                        excerpt(port),
                        got.map_or_else(|| excerpt(&f[k].to_string()), |x| x.to_string()),
                        self.profile.name,
                        self.db["PORT"][port]["speed"]
                    )));
                }
            }
        }
        Ok(true)
    }

    /// Whether `port`'s queue `q` stops when paused: in `pfc_enable`, with
    /// a `BUFFER_QUEUE` whose profile is in the lossless egress pool. A
    /// queue in `pfc_enable` without it is an error.
    fn queue(&self, port: &str, q: u32, pfc: &BTreeSet<u32>) -> Result<bool> {
        // Queue 0 too: nothing is assumed lossy that the configuration
        // makes lossless.
        if !pfc.contains(&q) {
            return Ok(false);
        }
        let Some((key, prof, f)) = self.buffer("BUFFER_QUEUE", port, q)? else {
            return Err(self.bad(format!(
                "{port}: lossless queue {q} (in pfc_enable) has no BUFFER_QUEUE: no lossless egress buffer"
            )));
        };
        let pool = f["pool"].as_str().unwrap_or_default();
        if pool != self.pools.1 {
            return Err(self.bad(format!(
                "BUFFER_QUEUE|{} uses BUFFER_PROFILE|{} in pool {}, not the lossless egress pool {}",
                excerpt(&key),
                excerpt(&prof),
                excerpt(pool),
                self.pools.1
            )));
        }
        Ok(true)
    }

    /// The switch's complete function, and the reason it does not fit the
    /// profile, if it does not.
    pub fn decode(&self, topo: &Topology, v: NodeId) -> Result<(SwitchFn, Option<String>)> {
        for t in ["ACL_TABLE", "ACL_RULE", "ACL_TABLE_TYPE"] {
            if !self.db[t].is_null() {
                return Err(self.bad(format!(
                    "has an {t} table: a tagger export writes none (stock SONiC's ACL tables cannot set DSCP or queue, and a table bound to these ports may drop or redirect lossless traffic); remove it, or judge it by hand"
                )));
            }
        }
        let _ = self.keys.set(self.index_keys()?);
        let ports = self.ports(topo, v)?;
        let bound = self.bindings(&ports)?;
        let (ingress, used, _) = self.ingress(&ports, &bound)?;
        let (egress, queues_at) = self.egress(&ports, &bound, &used)?;
        self.check_tables(&ports, &bound, &queues_at)?;
        let misfit = self.misfit(&ports, &bound)?;
        let f = SwitchFn {
            node: v,
            file: self.file.clone(),
            ports,
            ingress,
            egress,
        };
        Ok((f, misfit))
    }

    /// The switch's ports, as the export names them, each bound in
    /// PORT_QOS_MAP.
    fn ports(&self, topo: &Topology, v: NodeId) -> Result<Vec<Port>> {
        let links: Vec<LinkId> = topo.out_channels(v).iter().map(|&c| c >> 1).collect();
        let qos = self.db["PORT_QOS_MAP"]
            .as_object()
            .ok_or_else(|| self.bad("no PORT_QOS_MAP".into()))?;
        // Ports are named as the export names them (the topology's names,
        // or EthernetN); a host port beyond the topology's is `Host`.
        let hosts = topo.node(v).hosts as usize;
        let names = port_names(topo, v, links.len() + hosts + 1);
        let mut ports: Vec<Port> = names[..links.len()]
            .iter()
            .zip(&links)
            .map(|(n, &l)| Port {
                name: n.clone(),
                link: Some(l),
            })
            .collect();
        for n in &names[..links.len()] {
            if !qos.contains_key(n) {
                return Err(self.bad(format!("PORT_QOS_MAP has no {}", excerpt(n))));
            }
        }
        // Host ports: every one the topology gives, once any is bound (or
        // the extra `Host` port of an endpoint without declared hosts).
        let host_names = &names[links.len()..];
        let bound: Vec<&String> = host_names.iter().filter(|n| qos.contains_key(*n)).collect();
        if !bound.is_empty() {
            let want = if hosts == 0 { 1 } else { hosts };
            if let Some(missing) = host_names[..want].iter().find(|n| !qos.contains_key(*n)) {
                return Err(self.bad(format!(
                    "host port {} has no PORT_QOS_MAP: the hosts there send without lossless treatment",
                    excerpt(missing)
                )));
            }
            ports.extend(host_names[..want].iter().map(|n| Port {
                name: n.clone(),
                link: None,
            }));
        }
        // `global` sets the DSCP map of ports without their own; every
        // port judged binds its own.
        for k in qos.keys().filter(|k| *k != "global") {
            if !ports.iter().any(|p| &p.name == k) {
                return Err(self.bad(format!(
                    "PORT_QOS_MAP|{} is not a port of node {v}",
                    excerpt(k)
                )));
            }
        }
        Ok(ports)
    }

    /// Per port: its maps and PFC. Traffic classes and queues are those
    /// the recorded profile's switch has (a map naming another is refused
    /// by the switch, and its binding does not apply); PFC priority `n`
    /// must be priority group `n` and pause queue `n` (the stock maps, and
    /// what the plan's priorities are written as), and a binding the
    /// read-back cannot judge is refused by name.
    fn bindings(&self, ports: &[Port]) -> Result<Vec<Bound>> {
        let qos = &self.db["PORT_QOS_MAP"];
        let p = self.profile;
        let (tcs, queues) = (p.traffic_classes - 1, p.queues_per_port.saturating_sub(1));
        let mut bound = Vec::with_capacity(ports.len());
        for port in ports {
            let b = &qos[&port.name];
            let need = |k: &str| -> Result<&Value> {
                if b[k].is_null() {
                    Err(self.bad(format!(
                        "PORT_QOS_MAP|{} binds no {k}: the platform's default would apply",
                        excerpt(&port.name)
                    )))
                } else {
                    Ok(&b[k])
                }
            };
            for (k, _) in b.as_object().into_iter().flatten() {
                let why = match k.as_str() {
                    "dscp_to_tc_map" | "tc_to_pg_map" | "tc_to_queue_map" | "tc_to_dscp_map"
                    | "pfc_enable" | "pfc_to_pg_map" | "pfc_to_queue_map" | "pfcwd_sw_enable"
                    | "scheduler" => continue,
                    "dot1p_to_tc_map" => {
                        "a VLAN-tagged packet may be classified by its 802.1p bits instead of its DSCP, which the plan's tags are"
                    }
                    _ => "it is no field of SONiC's PORT_QOS_MAP the read-back knows",
                };
                return Err(self.bad(format!(
                    "PORT_QOS_MAP|{} binds {}: {why}; remove it, or judge the port by hand",
                    excerpt(&port.name),
                    excerpt(k)
                )));
            }
            let pfc = self.pfc(&port.name, b)?;
            for (key, table, what) in [
                (
                    "pfc_to_pg_map",
                    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
                    "priority group",
                ),
                ("pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE", "queue"),
            ] {
                if b[key].is_null() {
                    continue;
                }
                let m = self.map(table, &b[key], 7, 7)?;
                if let Some(&x) = pfc.iter().find(|&&x| m.get(&x) != Some(&x)) {
                    return Err(self.bad(format!(
                        "{}: PFC priority {x} (in pfc_enable) maps to {what} {} in {table}|{}: a lossless priority's PFC priority, priority group and queue are one number",
                        excerpt(&port.name),
                        m.get(&x).map_or("none".to_string(), u32::to_string),
                        excerpt(b[key].as_str().unwrap_or_default())
                    )));
                }
            }
            bound.push(Bound {
                d2t: self.map("DSCP_TO_TC_MAP", need("dscp_to_tc_map")?, 63, tcs)?,
                t2g: self.map("TC_TO_PRIORITY_GROUP_MAP", need("tc_to_pg_map")?, 15, 7)?,
                t2q: self.map("TC_TO_QUEUE_MAP", need("tc_to_queue_map")?, 15, queues)?,
                t2d: if b["tc_to_dscp_map"].is_null() {
                    None
                } else {
                    Some(self.map("TC_TO_DSCP_MAP", &b["tc_to_dscp_map"], 15, 63)?)
                },
                pfc,
            });
        }
        Ok(bound)
    }

    /// Ingress: every DSCP at every port; with the traffic classes used and
    /// the lossless priority groups of each port.
    #[allow(clippy::type_complexity)]
    fn ingress(
        &self,
        ports: &[Port],
        bound: &[Bound],
    ) -> Result<(Vec<Vec<In>>, BTreeSet<u32>, Vec<BTreeSet<u32>>)> {
        let mut ingress = Vec::with_capacity(ports.len());
        let mut used: BTreeSet<u32> = BTreeSet::new();
        let mut groups_at: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); ports.len()];
        for (i, p) in ports.iter().enumerate() {
            let b = &bound[i];
            let mut row = Vec::with_capacity(64);
            for d in 0..64u32 {
                let tc = b.d2t.get(&d).copied().unwrap_or(0);
                let g = *b.t2g.get(&tc).ok_or_else(|| {
                    self.bad(format!(
                        "{}: traffic class {tc} (DSCP {d}) has no priority group in its TC_TO_PRIORITY_GROUP_MAP",
                        excerpt(&p.name)
                    ))
                })?;
                let lossless = self.group(p, g, &b.pfc)?.then_some(g);
                if let Some(g) = lossless {
                    groups_at[i].insert(g);
                }
                used.insert(tc);
                row.push(In {
                    class: tc,
                    lossless,
                });
            }
            ingress.push(row);
        }
        Ok((ingress, used, groups_at))
    }

    /// Egress: every class `used`, at every port; with the pausable queues
    /// of each port.
    #[allow(clippy::type_complexity)]
    fn egress(
        &self,
        ports: &[Port],
        bound: &[Bound],
        used: &BTreeSet<u32>,
    ) -> Result<(BTreeMap<u32, Vec<Out>>, Vec<BTreeSet<u32>>)> {
        let mut egress = BTreeMap::new();
        let mut queues_at: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); ports.len()];
        for &tc in used {
            let mut row = Vec::with_capacity(ports.len());
            for (o, p) in ports.iter().enumerate() {
                let b = &bound[o];
                let q = *b.t2q.get(&tc).ok_or_else(|| {
                    self.bad(format!(
                        "{}: traffic class {tc} has no queue in its TC_TO_QUEUE_MAP",
                        excerpt(&p.name)
                    ))
                })?;
                let pausable = self.queue(&p.name, q, &b.pfc)?;
                if pausable {
                    queues_at[o].insert(q);
                }
                row.push(Out {
                    queue: q,
                    value: b.t2d.as_ref().and_then(|m| m.get(&tc).copied()),
                    pausable,
                });
            }
            egress.insert(tc, row);
        }
        Ok((egress, queues_at))
    }

    /// Why the switch does not fit the profile, if it does not: the
    /// lossless priorities of each port (its `pfc_enable`), and the
    /// headroom every lossless-pool `BUFFER_PG` reserves (as configured,
    /// reached by traffic or not); a `BUFFER_POOL` the file defines for
    /// the lossless ingress pool must hold that headroom.
    fn misfit(&self, ports: &[Port], bound: &[Bound]) -> Result<Option<String>> {
        let p = self.profile;
        let (mut xoff, mut xon, mut most) = (0u64, 0u64, 0usize);
        for (i, port) in ports.iter().enumerate() {
            most = most.max(bound[i].pfc.len());
            let keys = self
                .keys
                .get()
                .expect("indexed")
                .get("BUFFER_PG")
                .and_then(|m| m.get(&port.name));
            for (lo, hi, key) in keys.into_iter().flatten() {
                let prof = self.db["BUFFER_PG"][key]["profile"]
                    .as_str()
                    .unwrap_or_default();
                let f = &self.db["BUFFER_PROFILE"][prof];
                if f["pool"].as_str() != Some(self.pools.0) {
                    continue;
                }
                let groups = u64::from(hi - lo + 1);
                let field = |k: &str| number(&f[k]).map_or(0, u64::from);
                xoff += field("xoff") * groups;
                xon += field("xon") * groups;
            }
        }
        let reserved = crate::capacity::reserve(p, xoff, xon);
        let pool = &self.db["BUFFER_POOL"][self.pools.0];
        let mut short_pool = None;
        if pool.is_object() {
            let size = number(&pool["size"]).map(u64::from);
            if pool["type"].as_str().is_some_and(|t| t != "ingress") {
                return Err(self.bad(format!(
                    "BUFFER_POOL|{} is of type {}, not ingress",
                    self.pools.0,
                    excerpt(&pool["type"].to_string())
                )));
            }
            // A pool short of the headroom is a switch that does not fit
            // (an export written with --require-fit off records it).
            short_pool = size.filter(|&s| s < reserved).map(|size| {
                format!(
                    "BUFFER_POOL|{}: size {size} is below the {reserved} bytes of headroom the switch's lossless priority groups reserve",
                    self.pools.0
                )
            });
        }
        let misfit = if let Some(m) = short_pool {
            Some(m)
        } else if most > p.lossless_queues as usize {
            Some(format!(
                "a port of the switch uses {most} lossless priorities; {} allows {}",
                p.name, p.lossless_queues
            ))
        } else if reserved > p.lossless_buffer_bytes {
            Some(format!(
                "its lossless priority groups need {} of headroom; {} has a {} lossless buffer",
                crate::budget::human(reserved),
                p.name,
                crate::budget::human(p.lossless_buffer_bytes)
            ))
        } else {
            None
        };
        Ok(misfit)
    }
}

/// A port's maps and PFC, as PORT_QOS_MAP binds them.
struct Bound {
    d2t: BTreeMap<u32, u32>,
    t2g: BTreeMap<u32, u32>,
    t2q: BTreeMap<u32, u32>,
    t2d: Option<BTreeMap<u32, u32>>,
    pfc: BTreeSet<u32>,
}
