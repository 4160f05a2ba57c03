//! Switch profiles: one switch model's buffer, headroom parameters, queues,
//! rule space and default links, read from TOML (built in, or a user's
//! file) and validated before any work.
//!
//! The profile type and its TOML reader are here; each field's reader and
//! check in `fields.rs`; naming a profile (built in or a file) in
//! `spec.rs`.

use crate::error::{Error, Result};
use fields::{
    Fault, level_links, non_negative, oversubscription, positive, queue_counts, size, sonic_params,
};
use serde::{Deserialize, Serialize};
pub use spec::ProfileSpec;
use std::collections::BTreeMap;

mod fields;
mod spec;

/// The profiles shipped with the engine (`datasets/switches/builtin.toml`).
pub const BUILTIN: &str = include_str!("../../../datasets/switches/builtin.toml");

/// The profile a run uses when none is named.
pub const DEFAULT_PROFILE: &str = "spectrum2";

/// How a port's headroom is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeadroomModel {
    /// SONiC's dynamic headroom calculation (as for Mellanox Spectrum).
    Sonic,
    /// The Tagger drafts' estimate.
    Simple,
}

impl HeadroomModel {
    /// The model's name as written in profiles (`sonic`, `simple`).
    pub fn name(self) -> &'static str {
        match self {
            HeadroomModel::Sonic => "sonic",
            HeadroomModel::Simple => "simple",
        }
    }
}

impl std::str::FromStr for HeadroomModel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "sonic" => Ok(HeadroomModel::Sonic),
            "simple" => Ok(HeadroomModel::Simple),
            _ => Err(Error::Choice {
                what: "headroom model",
                value: s.to_string(),
                expected: "sonic or simple",
            }),
        }
    }
}

/// The parameters of the `sonic` headroom model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SonicParams {
    /// The ASIC's buffer cell size in bytes.
    pub cell_bytes: u64,
    /// Pipeline latency in bytes (the xon).
    pub pipeline_latency_bytes: u64,
    /// MAC and PHY delay in bytes.
    pub mac_phy_delay_bytes: u64,
    /// Bytes a peer may still send after a pause, for speeds without a pause-quanta entry.
    pub peer_response_bytes: u64,
    /// Share of small packets in the worst case, percent.
    pub small_packet_percent: f64,
    /// Gearbox delay in nanoseconds (0 without one).
    pub gearbox_delay_ns: f64,
}

/// One switch model, validated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Profile {
    /// The profile's name (the TOML table's).
    pub name: String,
    /// What switch it models.
    pub description: String,
    /// Where its figures come from.
    pub source: String,
    /// How a port's headroom is computed.
    pub headroom: HeadroomModel,
    /// Present exactly when `headroom` is `sonic`.
    pub sonic: Option<SonicParams>,
    /// Buffer available to lossless traffic, in bytes.
    pub lossless_buffer_bytes: u64,
    /// Whether xoff comes from a shared headroom pool (over-subscribed by `oversubscription`).
    pub shared_headroom_pool: bool,
    /// How far the shared headroom pool is over-subscribed (1: not at all).
    pub oversubscription: f64,
    /// Queues per port.
    pub queues_per_port: u32,
    /// Of those, queues that can be lossless.
    pub lossless_queues: u32,
    /// Traffic classes the switch classifies packets into (8 on most
    /// ASICs), one of them kept for lossy traffic: a plan may use the
    /// others at each switch ([`Profile::lossless_tcs`]).
    pub traffic_classes: u32,
    /// ACL (TCAM) entries for rules, if known.
    pub acl_entries: Option<u64>,
    /// Default switch-to-switch port speed, Gb/s.
    pub port_speed_gbps: f64,
    /// Default switch-to-switch cable length, metres.
    pub cable_m: f64,
    /// Host port speed, Gb/s.
    pub host_speed_gbps: f64,
    /// Host cable length, metres.
    pub host_cable_m: f64,
    /// Port MTU in bytes.
    pub port_mtu: u64,
    /// Largest lossless packet in bytes.
    pub lossless_mtu: u64,
    /// Switch-to-switch links between two levels with their own speed or
    /// cable (e.g. ToR-to-aggregation 10 m), from the profile's `levels`
    /// table; the defaults above apply to the others.
    pub levels: Vec<LevelLinks>,
}

/// Links between levels `lo` and `hi` (`lo <= hi`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LevelLinks {
    /// The lower level.
    pub lo: u32,
    /// The higher level.
    pub hi: u32,
    /// Their links' speed, Gb/s (`None`: the profile's default).
    pub speed_gbps: Option<f64>,
    /// Their links' cable length, metres (`None`: the profile's default).
    pub cable_m: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLevelLinks {
    speed_gbps: Option<toml::Value>,
    cable_m: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    description: String,
    source: String,
    headroom: toml::Value,
    cell_bytes: Option<toml::Value>,
    lossless_buffer_bytes: toml::Value,
    pipeline_latency_bytes: Option<toml::Value>,
    mac_phy_delay_bytes: Option<toml::Value>,
    peer_response_bytes: Option<toml::Value>,
    small_packet_percent: Option<toml::Value>,
    gearbox_delay_ns: Option<toml::Value>,
    shared_headroom_pool: bool,
    oversubscription: Option<toml::Value>,
    queues_per_port: toml::Value,
    lossless_queues: toml::Value,
    traffic_classes: Option<toml::Value>,
    acl_entries: Option<toml::Value>,
    port_speed_gbps: toml::Value,
    cable_m: toml::Value,
    host_speed_gbps: Option<toml::Value>,
    host_cable_m: Option<toml::Value>,
    port_mtu: toml::Value,
    lossless_mtu: toml::Value,
    levels: Option<BTreeMap<String, RawLevelLinks>>,
}

/// Pause quanta a peer may still send after a pause, by port speed (IEEE
/// 802.3 annex 31B, as SONiC tabulates them).
pub fn pause_quanta(speed_gbps: f64) -> Option<u64> {
    [
        (10.0, 67),
        (25.0, 80),
        (40.0, 118),
        (50.0, 147),
        (100.0, 394),
        (200.0, 453),
        (400.0, 905),
    ]
    .iter()
    .find(|(s, _)| *s == speed_gbps)
    .map(|&(_, q)| q)
}

impl Default for Profile {
    /// The built-in [`DEFAULT_PROFILE`].
    fn default() -> Self {
        Profile::builtin()
            .remove(DEFAULT_PROFILE)
            .expect("the default profile is built in")
    }
}

impl Profile {
    /// Traffic classes a plan may use for lossless traffic at one switch:
    /// all but the one kept for lossy traffic.
    pub fn lossless_tcs(&self) -> u32 {
        self.traffic_classes - 1
    }

    /// Every profile of a TOML document, by name, validated.
    ///
    /// # Errors
    /// [`Error::Profile`] naming `origin`, the profile and the field.
    pub fn parse_all(text: &str, origin: &str) -> Result<BTreeMap<String, Profile>> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let bad = |profile: &str, field: &str, reason: String| Error::Profile {
            origin: origin.to_string(),
            profile: profile.to_string(),
            field: field.to_string(),
            reason,
        };
        let tables: BTreeMap<String, toml::Value> = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            bad(
                "",
                &line.map_or("document".into(), |l| format!("line {l}")),
                e.message().to_string(),
            )
        })?;
        if tables.is_empty() {
            return Err(bad("", "document", "no [profile] table".into()));
        }
        let mut out = BTreeMap::new();
        for (name, v) in tables {
            let raw: RawProfile = v.try_into().map_err(|e: toml::de::Error| {
                let msg = e.message().to_string();
                let field = msg
                    .split('`')
                    .nth(1)
                    .unwrap_or("table")
                    .trim_end_matches('`')
                    .to_string();
                bad(&name, &field, msg)
            })?;
            let p = Profile::validate(&name, raw).map_err(|(f, r)| bad(&name, f, r))?;
            out.insert(name, p);
        }
        Ok(out)
    }

    fn validate(name: &str, r: RawProfile) -> std::result::Result<Profile, Fault> {
        let headroom: HeadroomModel = match &r.headroom {
            toml::Value::String(s) => s.parse().map_err(|e: Error| ("headroom", e.to_string()))?,
            other => {
                return Err((
                    "headroom",
                    format!("{other}: expected \"sonic\" or \"simple\""),
                ));
            }
        };
        let sonic = sonic_params(&r, headroom)?;
        let (queues_per_port, lossless_queues, traffic_classes) = queue_counts(&r)?;
        let oversubscription = oversubscription(&r)?;
        let port_speed_gbps = positive("port_speed_gbps", &r.port_speed_gbps)?;
        let host_speed_gbps = r
            .host_speed_gbps
            .as_ref()
            .map_or(Ok(port_speed_gbps), |v| positive("host_speed_gbps", v))?;
        let cable_m = non_negative("cable_m", &r.cable_m)?;
        let levels = level_links(&r)?;
        let p = Profile {
            name: name.to_string(),
            description: r.description,
            source: r.source,
            headroom,
            sonic,
            lossless_buffer_bytes: size("lossless_buffer_bytes", &r.lossless_buffer_bytes)?,
            shared_headroom_pool: r.shared_headroom_pool,
            oversubscription,
            queues_per_port,
            lossless_queues,
            traffic_classes,
            acl_entries: r
                .acl_entries
                .as_ref()
                .map(|v| size("acl_entries", v))
                .transpose()?,
            port_speed_gbps,
            cable_m,
            host_speed_gbps,
            host_cable_m: r
                .host_cable_m
                .as_ref()
                .map_or(Ok(cable_m), |v| non_negative("host_cable_m", v))?,
            port_mtu: size("port_mtu", &r.port_mtu)?,
            lossless_mtu: size("lossless_mtu", &r.lossless_mtu)?,
            levels,
        };
        if p.lossless_mtu == 0 || p.lossless_mtu > p.port_mtu {
            return Err((
                "lossless_mtu",
                format!(
                    "{} must be from 1 to port_mtu ({})",
                    p.lossless_mtu, p.port_mtu
                ),
            ));
        }
        p.check_speeds()?;
        Ok(p)
    }

    /// Whether the profile can size a port at `speed_gbps`: a sonic profile
    /// needs a pause-quanta entry for the speed or a peer response time.
    pub fn sizes(&self, speed_gbps: f64) -> bool {
        self.sonic
            .is_none_or(|s| pause_quanta(speed_gbps).is_some() || s.peer_response_bytes > 0)
    }

    /// Every speed the profile itself names can be sized ([`Profile::sizes`]).
    fn check_speeds(&self) -> std::result::Result<(), (&'static str, String)> {
        use tagger_generators::{MAX_CABLE_M, MAX_SPEED_GBPS};
        let level_cables = self.levels.iter().filter_map(|l| l.cable_m);
        for (field, c) in [
            ("cable_m", self.cable_m),
            ("host_cable_m", self.host_cable_m),
        ]
        .into_iter()
        .chain(level_cables.map(|c| ("levels", c)))
        {
            if !(0.0..=MAX_CABLE_M).contains(&c) {
                return Err((
                    field,
                    format!("{c} is out of range (a number from 0 to {MAX_CABLE_M} m)"),
                ));
            }
        }
        let level_speeds = self.levels.iter().filter_map(|l| l.speed_gbps);
        for (field, s) in [
            ("port_speed_gbps", self.port_speed_gbps),
            ("host_speed_gbps", self.host_speed_gbps),
        ]
        .into_iter()
        .chain(level_speeds.map(|s| ("levels", s)))
        {
            if !(s > 0.0 && s <= MAX_SPEED_GBPS) {
                return Err((
                    field,
                    format!("{s} is out of range (a number > 0 and at most {MAX_SPEED_GBPS} Gb/s)"),
                ));
            }
        }
        let level_speeds = self.levels.iter().filter_map(|l| l.speed_gbps);
        for (field, speed) in [
            ("port_speed_gbps", self.port_speed_gbps),
            ("host_speed_gbps", self.host_speed_gbps),
        ]
        .into_iter()
        .chain(level_speeds.map(|s| ("levels", s)))
        {
            if !self.sizes(speed) {
                return Err((
                    field,
                    format!(
                        "{speed} Gb/s has no pause-quanta entry (10/25/40/50/100/200/400) and peer_response_bytes is 0: give one"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Resolves a profile spec: a built-in name, `file:PATH` (its only
    /// profile) or `file:PATH#NAME` ([`ProfileSpec`]).
    ///
    /// # Errors
    /// [`Error::Profile`] for an unknown name or a bad file, [`Error::Io`]
    /// when the file cannot be read.
    pub fn resolve(spec: &str) -> Result<Profile> {
        spec.parse::<ProfileSpec>()?.resolve()
    }

    /// Speed and cable of switch-to-switch link `l` of `topo`: the
    /// topology file's own figures first, then the profile's class for the
    /// link's two levels, then the profile's defaults.
    pub fn link(&self, topo: &tagger_generators::Topology, l: u32) -> (f64, f64) {
        let props = topo.link_props(l);
        let [a, b] = topo.links()[l as usize];
        let class = match (topo.level(a), topo.level(b)) {
            (Some(x), Some(y)) => self
                .levels
                .iter()
                .find(|c| (c.lo, c.hi) == (x.min(y), x.max(y))),
            _ => None,
        };
        (
            props
                .speed_gbps
                .or(class.and_then(|c| c.speed_gbps))
                .unwrap_or(self.port_speed_gbps),
            props
                .cable_m
                .or(class.and_then(|c| c.cable_m))
                .unwrap_or(self.cable_m),
        )
    }

    /// The profile as a TOML document of its own (one `[name]` table),
    /// which [`Profile::parse_all`] reads back to the same profile: an
    /// export records the profile its buffers were sized with this way, so
    /// that its read-back sizes them again without the user's file.
    pub fn to_toml(&self) -> String {
        use toml::Value as V;
        let mut t = toml::Table::new();
        let mut put = |k: &str, v: V| {
            t.insert(k.to_string(), v);
        };
        let int = |x: u64| V::Integer(x as i64);
        put("description", V::String(self.description.clone()));
        put("source", V::String(self.source.clone()));
        put("headroom", V::String(self.headroom.name().to_string()));
        if let Some(s) = &self.sonic {
            put("cell_bytes", int(s.cell_bytes));
            put("pipeline_latency_bytes", int(s.pipeline_latency_bytes));
            put("mac_phy_delay_bytes", int(s.mac_phy_delay_bytes));
            put("peer_response_bytes", int(s.peer_response_bytes));
            put("small_packet_percent", V::Float(s.small_packet_percent));
            put("gearbox_delay_ns", V::Float(s.gearbox_delay_ns));
        }
        put("lossless_buffer_bytes", int(self.lossless_buffer_bytes));
        put(
            "shared_headroom_pool",
            V::Boolean(self.shared_headroom_pool),
        );
        put("oversubscription", V::Float(self.oversubscription));
        put("queues_per_port", int(u64::from(self.queues_per_port)));
        put("lossless_queues", int(u64::from(self.lossless_queues)));
        put("traffic_classes", int(u64::from(self.traffic_classes)));
        if let Some(a) = self.acl_entries {
            put("acl_entries", int(a));
        }
        put("port_speed_gbps", V::Float(self.port_speed_gbps));
        put("cable_m", V::Float(self.cable_m));
        put("host_speed_gbps", V::Float(self.host_speed_gbps));
        put("host_cable_m", V::Float(self.host_cable_m));
        put("port_mtu", int(self.port_mtu));
        put("lossless_mtu", int(self.lossless_mtu));
        if !self.levels.is_empty() {
            let mut levels = toml::Table::new();
            for l in &self.levels {
                let mut x = toml::Table::new();
                if let Some(s) = l.speed_gbps {
                    x.insert("speed_gbps".into(), V::Float(s));
                }
                if let Some(c) = l.cable_m {
                    x.insert("cable_m".into(), V::Float(c));
                }
                levels.insert(format!("{}-{}", l.lo, l.hi), V::Table(x));
            }
            put("levels", V::Table(levels));
        }
        let mut doc = toml::Table::new();
        doc.insert(self.name.clone(), V::Table(t));
        toml::to_string(&doc).expect("a profile serialises")
    }

    /// The built-in profiles.
    pub fn builtin() -> BTreeMap<String, Profile> {
        Profile::parse_all(BUILTIN, "built-in").expect("the built-in profiles are valid (tested)")
    }

    /// This profile with other links: `cable_m` and `speed_gbps` replace
    /// the switch-to-switch defaults, `headroom` the model (a sonic model
    /// needs the profile's sonic parameters).
    ///
    /// # Errors
    /// [`Error::Profile`] for a negative or non-finite value, or a sonic
    /// model on a profile without its parameters.
    pub fn with_links(
        &self,
        cable_m: Option<f64>,
        speed_gbps: Option<f64>,
        headroom: Option<HeadroomModel>,
    ) -> Result<Profile> {
        let bad = |field: &str, reason: String| Error::Profile {
            origin: "override".into(),
            profile: self.name.clone(),
            field: field.to_string(),
            reason,
        };
        let mut p = self.clone();
        if let Some(c) = cable_m {
            if !(c >= 0.0 && c.is_finite()) {
                return Err(bad("cable_m", format!("{c} must be a number >= 0")));
            }
            p.cable_m = c;
        }
        if let Some(s) = speed_gbps {
            if !(s > 0.0 && s.is_finite()) {
                return Err(bad("speed_gbps", format!("{s} must be a number > 0")));
            }
            p.port_speed_gbps = s;
        }
        // Out-of-range values (a 1e17 m cable) are refused by
        // check_speeds below, naming the field.
        if let Some(h) = headroom {
            if h == HeadroomModel::Sonic && p.sonic.is_none() {
                return Err(bad(
                    "headroom",
                    "sonic needs cell_bytes, pipeline_latency_bytes, mac_phy_delay_bytes, peer_response_bytes and small_packet_percent, which this profile does not give".into(),
                ));
            }
            p.headroom = h;
        }
        p.check_speeds().map_err(|(f, r)| bad(f, r))?;
        Ok(p)
    }
}
