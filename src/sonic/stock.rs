//! A stock SONiC switch's `config_db`: what a fresh switch of the
//! profile's ASIC holds before anything of a plan is loaded.
//!
//! It follows sonic-buildimage 086b03bd:
//! `files/build_templates/qos_config.j2` (the `AZURE` maps, schedulers,
//! WRED and per-port `PORT_QOS_MAP` / `QUEUE`) and the T1 buffer templates
//! (`buffers_config.j2` with `buffers_defaults_t1.j2`): Broadcom Tomahawk's
//! for profiles with the simple headroom model (traditional buffer model,
//! buffermgrd's `pg_lossless_<speed>_<cable>_profile` on `|3-4`), Mellanox
//! Spectrum's for the sonic headroom model (dynamic buffer model, `|3-4`
//! computed: profile `NULL`). Pool sizes and the lossless profiles'
//! headroom come from the switch profile (standing in for the SKU's
//! `pg_profile_lookup.ini`), so a stock base fits its profile.

use crate::capacity::Profile;
use serde_json::{Map, Value, json};
use tagger_generators::{NodeId, Topology};

/// One port as a stock base renders it.
pub(super) struct StockPort {
    /// Its name.
    pub name: String,
    /// `PORT.speed` (Mb/s).
    pub speed_mbps: u64,
    /// `CABLE_LENGTH` (`40m`).
    pub cable: String,
    /// `PORT.description`: what the port connects to.
    pub description: String,
    /// buffermgrd's headroom for the port's speed and cable, as the
    /// lossless profile would hold it.
    pub lossless: Value,
}

/// The stock `config_db` of switch `v` with `ports` (see the module
/// documentation): what a fresh SONiC switch with the profile's ASIC holds
/// before anything of the plan is loaded.
pub(super) fn stock(topo: &Topology, v: NodeId, profile: &Profile, ports: &[StockPort]) -> Value {
    let mellanox = profile.headroom == crate::capacity::HeadroomModel::Sonic;
    let host = topo
        .node_name(v)
        .map_or_else(|| format!("switch{v}"), str::to_string);
    let mut db = Map::new();
    db.insert(
        "DEVICE_METADATA".into(),
        json!({"localhost": {
            "hostname": host,
            "hwsku": if mellanox { "ACS-MSN2700" } else { "Arista-7060CX-32S-C32" },
            "platform": if mellanox { "x86_64-mlnx_msn2700-r0" } else { "x86_64-arista_7060_cx32s" },
            "mac": format!("02:00:00:{:02x}:{:02x}:{:02x}", (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff),
            "type": "LeafRouter",
            "buffer_model": if mellanox { "dynamic" } else { "traditional" },
        }}),
    );
    stock_ports(&mut db, profile, ports, mellanox);
    stock_buffers(&mut db, profile, ports, mellanox);
    stock_maps(&mut db, profile);
    Value::Object(db)
}

/// `PORT`, `CABLE_LENGTH`, `PORT_QOS_MAP` and `QUEUE` of the ports, as
/// qos_config.j2 binds an active port.
fn stock_ports(
    db: &mut Map<String, Value>,
    profile: &Profile,
    ports: &[StockPort],
    mellanox: bool,
) {
    let mut port = Map::new();
    let mut cable = Map::new();
    let mut qos = Map::new();
    let mut queue = Map::new();
    qos.insert("global".into(), json!({"dscp_to_tc_map": "AZURE"}));
    for (i, p) in ports.iter().enumerate() {
        let lanes: Vec<String> = (0..4).map(|j| (4 * i + j).to_string()).collect();
        port.insert(
            p.name.clone(),
            json!({
                "alias": format!("etp{}", i + 1),
                "description": p.description,
                "lanes": lanes.join(","),
                "speed": p.speed_mbps.to_string(),
                "mtu": profile.port_mtu.to_string(),
                "admin_status": "up",
            }),
        );
        cable.insert(p.name.clone(), json!(p.cable));
        let mut b = json!({
            "dscp_to_tc_map": "AZURE",
            "tc_to_queue_map": "AZURE",
            "tc_to_pg_map": "AZURE",
            "pfc_to_queue_map": "AZURE",
            "pfc_enable": "3,4",
            "pfcwd_sw_enable": "3,4",
        });
        if mellanox {
            b["pfc_to_pg_map"] = json!("AZURE");
        }
        qos.insert(p.name.clone(), b);
        for q in (0..7).filter(|&q| q < profile.queues_per_port) {
            let mut e =
                json!({"scheduler": if q == 3 || q == 4 { "scheduler.1" } else { "scheduler.0" }});
            if q == 3 || q == 4 {
                e["wred_profile"] = json!("AZURE_LOSSLESS");
            }
            queue.insert(format!("{}|{q}", p.name), e);
        }
    }
    db.insert("PORT".into(), Value::Object(port));
    db.insert("CABLE_LENGTH".into(), json!({ "AZURE": cable }));
    db.insert("PORT_QOS_MAP".into(), Value::Object(qos));
    db.insert("QUEUE".into(), Value::Object(queue));
}

/// The T1 buffer templates' pools, profiles, `BUFFER_PG` and
/// `BUFFER_QUEUE` (Mellanox: dynamic model, `|3-4` `NULL`, profile
/// lists; Tomahawk: traditional, buffermgrd's `|3-4` profile).
fn stock_buffers(
    db: &mut Map<String, Value>,
    profile: &Profile,
    ports: &[StockPort],
    mellanox: bool,
) {
    let queues = profile.queues_per_port;
    let mut pg = Map::new();
    let mut bq = Map::new();
    let mut profiles = Map::new();
    let mut plist_in = Map::new();
    let mut plist_out = Map::new();
    for p in ports {
        pg.insert(
            format!("{}|0", p.name),
            json!({"profile": "ingress_lossy_profile"}),
        );
        let lossless = if mellanox {
            "NULL".to_string()
        } else {
            let name = format!("pg_lossless_{}_{}_profile", p.speed_mbps, p.cable);
            profiles.insert(name.clone(), p.lossless.clone());
            name
        };
        pg.insert(format!("{}|3-4", p.name), json!({ "profile": lossless }));
        let lossy_q = if mellanox {
            "q_lossy_profile"
        } else {
            "egress_lossy_profile"
        };
        // The template's ranges, within the queues the switch has.
        for (lo, hi, prof) in [
            (0, 2, lossy_q),
            (3, 4, "egress_lossless_profile"),
            (5, 6, lossy_q),
        ] {
            let hi = hi.min(queues.saturating_sub(1));
            if lo > hi {
                continue;
            }
            let key = if lo == hi {
                format!("{}|{lo}", p.name)
            } else {
                format!("{}|{lo}-{hi}", p.name)
            };
            bq.insert(key, json!({ "profile": prof }));
        }
        if mellanox {
            plist_in.insert(
                p.name.clone(),
                json!({"profile_list": "ingress_lossless_profile,ingress_lossy_profile"}),
            );
            plist_out.insert(
                p.name.clone(),
                json!({"profile_list": "egress_lossless_profile,egress_lossy_profile"}),
            );
        }
    }
    let pool = profile.lossless_buffer_bytes.to_string();
    if mellanox {
        db.insert(
            "BUFFER_POOL".into(),
            json!({
                "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": pool},
                "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic", "size": pool},
                "egress_lossless_pool": {"type": "egress", "mode": "dynamic", "size": pool},
                "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": pool},
            }),
        );
        for (k, v) in [
            (
                "ingress_lossless_profile",
                json!({"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"}),
            ),
            (
                "ingress_lossy_profile",
                json!({"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "3"}),
            ),
            (
                "egress_lossless_profile",
                json!({"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"}),
            ),
            (
                "egress_lossy_profile",
                json!({"pool": "egress_lossy_pool", "size": "9216", "dynamic_th": "7"}),
            ),
            (
                "q_lossy_profile",
                json!({"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"}),
            ),
        ] {
            profiles.insert(k.into(), v);
        }
        db.insert(
            "BUFFER_PORT_INGRESS_PROFILE_LIST".into(),
            Value::Object(plist_in),
        );
        db.insert(
            "BUFFER_PORT_EGRESS_PROFILE_LIST".into(),
            Value::Object(plist_out),
        );
        db.insert(
            "DEFAULT_LOSSLESS_BUFFER_PARAMETER".into(),
            json!({"AZURE": {"default_dynamic_th": "0"}}),
        );
        db.insert(
            "LOSSLESS_TRAFFIC_PATTERN".into(),
            json!({"AZURE": {"mtu": "1024", "small_packet_percentage": "100"}}),
        );
        db.insert(
            "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP".into(),
            json!({"AZURE": {"3": "3", "4": "4"}}),
        );
    } else {
        db.insert(
            "BUFFER_POOL".into(),
            json!({
                "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": pool},
                "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": pool},
                "egress_lossless_pool": {"type": "egress", "mode": "static", "size": pool},
            }),
        );
        for (k, v) in [
            (
                "ingress_lossy_profile",
                json!({"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"}),
            ),
            (
                "egress_lossless_profile",
                json!({"pool": "egress_lossless_pool", "size": "1518", "static_th": pool}),
            ),
            (
                "egress_lossy_profile",
                json!({"pool": "egress_lossy_pool", "size": "1518", "dynamic_th": "3"}),
            ),
        ] {
            profiles.insert(k.into(), v);
        }
    }
    db.insert("BUFFER_PROFILE".into(), Value::Object(profiles));
    db.insert("BUFFER_PG".into(), Value::Object(pg));
    db.insert("BUFFER_QUEUE".into(), Value::Object(bq));
}

/// qos_config.j2's default branch: the `AZURE` maps (within the
/// profile's traffic classes and queues), schedulers and WRED.
fn stock_maps(db: &mut Map<String, Value>, profile: &Profile) {
    let (tcs, queues) = (profile.traffic_classes, profile.queues_per_port);
    let clamp = |x: u32, n: u32| if x < n { x } else { 0 };
    let mut d2t = Map::new();
    for d in 0..64u32 {
        let tc = match d {
            3 => 3,
            4 => 4,
            5 => 2,
            8 => 0,
            46 => 5,
            48 => 6,
            _ => 1,
        };
        d2t.insert(d.to_string(), json!(clamp(tc, tcs).to_string()));
    }
    let ident = |n: u32, of: u32| -> Value {
        Value::Object(
            (0..n)
                .map(|t| (t.to_string(), json!(clamp(t, of).to_string())))
                .collect(),
        )
    };
    let t2g: Map<String, Value> = (0..tcs.min(8))
        .map(|t| {
            let g = if t == 3 || t == 4 || t == 7 { t } else { 0 };
            (t.to_string(), json!(g.to_string()))
        })
        .collect();
    db.insert("DSCP_TO_TC_MAP".into(), json!({ "AZURE": d2t }));
    db.insert(
        "TC_TO_QUEUE_MAP".into(),
        json!({ "AZURE": ident(tcs.min(8), queues) }),
    );
    db.insert("TC_TO_PRIORITY_GROUP_MAP".into(), json!({ "AZURE": t2g }));
    db.insert(
        "MAP_PFC_PRIORITY_TO_QUEUE".into(),
        json!({ "AZURE": ident(8, queues) }),
    );
    db.insert(
        "SCHEDULER".into(),
        json!({"scheduler.0": {"type": "DWRR", "weight": "14"}, "scheduler.1": {"type": "DWRR", "weight": "15"}}),
    );
    db.insert(
        "WRED_PROFILE".into(),
        json!({"AZURE_LOSSLESS": {
            "wred_green_enable": "true", "wred_yellow_enable": "true", "wred_red_enable": "true",
            "ecn": "ecn_all",
            "green_max_threshold": "2097152", "yellow_max_threshold": "2097152", "red_max_threshold": "2097152",
            "green_min_threshold": "1048576", "yellow_min_threshold": "1048576", "red_min_threshold": "1048576",
            "green_drop_probability": "5", "yellow_drop_probability": "5", "red_drop_probability": "5",
        }}),
    );
}
