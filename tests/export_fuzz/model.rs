use super::*;

/// A number written as a JSON number or a string.
pub(crate) fn num(v: &Value) -> Option<u32> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .and_then(|x| u32::try_from(x).ok())
}

/// A broken promise: the directory is not installable as a plan.
#[derive(Debug)]
pub(crate) struct Broken(pub(crate) String);

pub(crate) fn broken<T>(why: String) -> Result<T, Broken> {
    Err(Broken(why))
}

/// How a packet arrives at a port: its class and, when lossless there, its
/// priority group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arrive {
    pub(crate) class: u32,
    pub(crate) group: Option<u32>,
}

/// What a class does at a port: the queue, the header value it leaves with
/// (`None`: as it came), whether the queue stops when paused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Leave {
    pub(crate) queue: u32,
    pub(crate) value: Option<u32>,
    pub(crate) paused: bool,
}

/// One switch as the model runs it.
pub(crate) struct Model {
    /// Port name -> link (`None`: a host port).
    pub(crate) ports: BTreeMap<String, Option<u32>>,
    /// Per port, per header value 0..64.
    pub(crate) arrive: BTreeMap<String, Vec<Arrive>>,
    /// Per class, per port.
    pub(crate) leave: BTreeMap<u32, BTreeMap<String, Leave>>,
}

/// What `summary.json` says, as the model reads it.
pub(crate) struct Summary {
    pub(crate) tag_of: Box<dyn Fn(u32) -> Option<u32>>,
    pub(crate) priority_of: Box<dyn Fn(u32) -> Option<u32>>,
    pub(crate) host_values: Vec<u32>,
    pub(crate) host_tags: Vec<u32>,
    pub(crate) priorities: u32,
}

/// SONiC's headroom formula (Mellanox, sonic-swss buffer_headroom_mellanox.lua)
/// or the Tagger drafts' estimate, from the profile's TOML alone.
pub(crate) fn headroom(
    p: &toml::Table,
    speed_gbps: f64,
    cable_m: f64,
    port_mtu: u32,
) -> (u64, u64) {
    let f = |k: &str| -> f64 {
        match p.get(k) {
            Some(toml::Value::Integer(i)) => *i as f64,
            Some(toml::Value::Float(x)) => *x,
            _ => 0.0,
        }
    };
    let ceil_1024 = |x: f64| ((x / 1024.0).ceil() * 1024.0) as u64;
    if p.get("headroom").and_then(|v| v.as_str()) == Some("sonic") {
        let cell = f("cell_bytes");
        let wcf = if cell > 128.0 {
            cell / 64.0
        } else {
            2.0 * cell / (1.0 + cell)
        };
        let spp = f("small_packet_percent");
        let occ = (100.0 - spp + spp * wcf) / 100.0;
        let quanta = [
            (10.0, 67.0),
            (25.0, 80.0),
            (40.0, 118.0),
            (50.0, 147.0),
            (100.0, 394.0),
            (200.0, 453.0),
            (400.0, 905.0),
        ];
        let peer = quanta
            .iter()
            .find(|(s, _)| *s == speed_gbps)
            .map_or(f("peer_response_bytes"), |(_, q)| q * 512.0 / 8.0);
        let bps = speed_gbps * 1e9;
        let cable = 2.0 * cable_m * bps / 198e6 / 8.0;
        let gearbox = bps * f("gearbox_delay_ns") * 1e-9 / 8.0;
        let prop = f64::from(port_mtu) + cable + 2.0 * gearbox + f("mac_phy_delay_bytes") + peer;
        (
            ceil_1024(f("lossless_mtu") + prop * occ),
            ceil_1024(f("pipeline_latency_bytes")),
        )
    } else {
        let bytes_per_s = speed_gbps * 1e9 / 8.0;
        let x =
            2.0 * (f("lossless_mtu") + 64.0 + bytes_per_s * cable_m * 5e-9) + 60.0 * 512.0 / 8.0;
        (x.ceil() as u64, 0)
    }
}

/// Per port, its keys' ranges `(lo, hi, key)`.
type Ranges = BTreeMap<String, Vec<(u32, u32, String)>>;

/// A SONiC switch file decoded, its buffers and fit checked against the
/// recorded profile.
pub(crate) fn sonic_switch(v: u32, db: &Value, profile: &toml::Table) -> Result<Model, Broken> {
    for t in ["ACL_TABLE", "ACL_RULE", "ACL_TABLE_TYPE"] {
        if !db[t].is_null() {
            return broken(format!("node {v}: {t}"));
        }
    }
    // Tables that act on classification, queues or buffers the model does
    // not run (the scheduler's weights and the PFC watchdog do neither).
    let runs = [
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
        "SCHEDULER",
        "PFC_WD",
        // Pool-level profile lists set no group or queue lossless; the
        // dynamic model's defaults size only `NULL` groups.
        "BUFFER_PORT_INGRESS_PROFILE_LIST",
        "BUFFER_PORT_EGRESS_PROFILE_LIST",
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
        "LOSSLESS_TRAFFIC_PATTERN",
    ];
    for t in db.as_object().unwrap().keys() {
        let acts = ["BUFFER", "QUEUE", "WRED", "_MAP", "SCHEDULER", "PFC", "QOS"]
            .iter()
            .any(|w| t.contains(w));
        if acts && !runs.contains(&t.as_str()) {
            return broken(format!("node {v}: table {t}"));
        }
    }
    // `port|n` and `port|lo-hi` keys: ranges that do not overlap.
    let mut keyed: BTreeMap<&str, Ranges> = BTreeMap::new();
    for table in ["BUFFER_PG", "BUFFER_QUEUE", "QUEUE"] {
        let by_port = keyed.entry(table).or_default();
        for k in db[table].as_object().into_iter().flatten().map(|(k, _)| k) {
            let Some((port, range)) = k.split_once('|') else {
                return broken(format!("node {v}: {table} key {k}"));
            };
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            match (lo.parse::<u32>(), hi.parse::<u32>()) {
                (Ok(lo), Ok(hi)) if lo <= hi && hi <= 15 => {
                    by_port
                        .entry(port.to_string())
                        .or_default()
                        .push((lo, hi, k.clone()));
                }
                _ => return broken(format!("node {v}: {table} key {k}")),
            }
        }
        for list in by_port.values() {
            for (i, a) in list.iter().enumerate() {
                if list[i + 1..].iter().any(|b| a.0 <= b.1 && b.0 <= a.1) {
                    return broken(format!("node {v}: {table} keys overlap at {}", a.2));
                }
            }
        }
    }
    let key_of = |table: &str, port: &str, n: u32| -> Option<String> {
        keyed[table]
            .get(port)?
            .iter()
            .find(|(lo, hi, _)| (*lo..=*hi).contains(&n))
            .map(|x| x.2.clone())
    };
    let mut ports = BTreeMap::new();
    for (name, p) in db["PORT"].as_object().into_iter().flatten() {
        let d = p["description"].as_str().unwrap_or("");
        if d == "host port" {
            ports.insert(name.clone(), None);
        } else if let Some(rest) = d.strip_prefix("link ") {
            ports.insert(name.clone(), rest.split(' ').next().unwrap().parse().ok());
        }
    }
    let load =
        |table: &str, name: &Value, keys: u32, vals: u32| -> Result<BTreeMap<u32, u32>, Broken> {
            let Some(m) = name.as_str().and_then(|n| db[table][n].as_object()) else {
                return broken(format!("node {v}: {table} {name} does not load"));
            };
            m.iter()
                .map(|(k, x)| match (k.parse::<u32>().ok(), num(x)) {
                    (Some(k), Some(x)) if k <= keys && x <= vals => Ok((k, x)),
                    _ => broken(format!("node {v}: {table} {name}: {k} -> {x}")),
                })
                .collect()
        };
    let int = |k: &str| -> u64 { profile.get(k).and_then(|x| x.as_integer()).unwrap_or(0) as u64 };
    let flt = |k: &str| -> f64 {
        match profile.get(k) {
            Some(toml::Value::Integer(i)) => *i as f64,
            Some(toml::Value::Float(x)) => *x,
            _ => f64::NAN,
        }
    };
    let shared = profile
        .get("shared_headroom_pool")
        .and_then(|x| x.as_bool())
        .unwrap_or(false);
    let oversub = profile
        .get("oversubscription")
        .and_then(|x| x.as_float())
        .unwrap_or(1.0);
    let mut arrive = BTreeMap::new();
    let mut egress_maps = BTreeMap::new();
    let (mut xoff_sum, mut xon_sum, mut most) = (0u64, 0u64, 0usize);
    let mut pfcs = BTreeMap::new();
    for (name, link) in &ports {
        let b = &db["PORT_QOS_MAP"][name.as_str()];
        if b.is_null() {
            if link.is_some() {
                return broken(format!("node {v}: link port {name} without a binding"));
            }
            // A host port with no maps bound: SONiC puts everything it
            // takes in TC 0, and with no pfc_enable nothing leaves it
            // paused. Still a host port, so the paths from it are judged.
            arrive.insert(
                name.clone(),
                vec![
                    Arrive {
                        class: 0,
                        group: None
                    };
                    64
                ],
            );
            egress_maps.insert(name.clone(), ((0..16).map(|tc| (tc, 0)).collect(), None));
            pfcs.insert(name.clone(), BTreeSet::new());
            continue;
        }
        for k in ["dscp_to_tc_map", "tc_to_pg_map", "tc_to_queue_map"] {
            if b[k].is_null() {
                return broken(format!("node {v}: {name} binds no {k}"));
            }
        }
        // What SONiC binds and the model understands; an 802.1p map would
        // classify tagged packets by their PCP bits.
        for k in b.as_object().unwrap().keys() {
            if ![
                "dscp_to_tc_map",
                "tc_to_pg_map",
                "tc_to_queue_map",
                "tc_to_dscp_map",
                "pfc_enable",
                "pfcwd_sw_enable",
                "pfc_to_pg_map",
                "pfc_to_queue_map",
                "scheduler",
            ]
            .contains(&k.as_str())
            {
                return broken(format!("node {v}: {name} binds {k}"));
            }
        }
        // The switch's own traffic classes and queues.
        let classes = int("traffic_classes").max(2) as u32;
        let queues = int("queues_per_port").max(1) as u32;
        let d2t = load("DSCP_TO_TC_MAP", &b["dscp_to_tc_map"], 63, classes - 1)?;
        let t2g = load("TC_TO_PRIORITY_GROUP_MAP", &b["tc_to_pg_map"], 15, 7)?;
        let t2q = load("TC_TO_QUEUE_MAP", &b["tc_to_queue_map"], 15, queues - 1)?;
        let t2d = if b["tc_to_dscp_map"].is_null() {
            None
        } else {
            Some(load("TC_TO_DSCP_MAP", &b["tc_to_dscp_map"], 15, 63)?)
        };
        let text = match &b["pfc_enable"] {
            Value::Null => "",
            Value::String(t) => t.as_str(),
            _ => return broken(format!("node {v}: {name} pfc_enable")),
        };
        let mut pfc = BTreeSet::new();
        if !text.is_empty() {
            for x in text.split(',') {
                match x.as_bytes() {
                    [d @ b'0'..=b'7'] => {
                        pfc.insert(u32::from(d - b'0'));
                    }
                    _ => return broken(format!("node {v}: {name} pfc_enable {text}")),
                }
            }
        }
        // A PFC priority in pfc_enable pauses the group and the queue of
        // its own number; a bound map may only say so.
        for (k, table) in [
            ("pfc_to_pg_map", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"),
            ("pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE"),
        ] {
            if !b[k].is_null() {
                let m = load(table, &b[k], 7, 7)?;
                if pfc.iter().any(|p| m.get(p) != Some(p)) {
                    return broken(format!("node {v}: {name} {k} moves a priority"));
                }
            }
        }
        // The headroom this port needs per lossless group: the speed and
        // cable its configuration declares, which must be the link's (the
        // profile's figures: these plans' topologies give none).
        let metres = |x: &Value| {
            x.as_str()
                .and_then(|t| t.strip_suffix('m'))
                .and_then(|t| t.parse::<f64>().ok())
        };
        let (real_speed, real_cable) = match link {
            Some(_) => (flt("port_speed_gbps"), flt("cable_m")),
            None => (flt("host_speed_gbps"), flt("host_cable_m")),
        };
        let declared: Vec<Option<f64>> = db["CABLE_LENGTH"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(_, m)| m.get(name.as_str()).map(metres))
            .collect();
        let speed = num(&db["PORT"][name.as_str()]["speed"])
            .filter(|&s| s > 0 && f64::from(s) == (real_speed * 1000.0).round());
        // The port's MTU (SONiC's 9100 where none is given): at least the
        // lossless packets', and what the headroom is sized for.
        let mtu = match &db["PORT"][name.as_str()]["mtu"] {
            Value::Null => Some(9100),
            x => num(x).filter(|&m| m > 0 && u64::from(m) >= int("lossless_mtu")),
        };
        let cable = match declared.first() {
            Some(&Some(c)) if declared.iter().all(|d| *d == Some(c)) && c >= real_cable.ceil() => {
                Some(c)
            }
            _ => None,
        };
        let mut row = Vec::with_capacity(64);
        let mut groups = BTreeSet::new();
        for d in 0..64u32 {
            let tc = d2t.get(&d).copied().unwrap_or(0);
            let Some(&g) = t2g.get(&tc) else {
                return broken(format!("node {v}: {name}: TC {tc} has no group"));
            };
            // Every group as configured, group 0 too.
            let lossless = pfc.contains(&g);
            if lossless {
                let buf = key_of("BUFFER_PG", name, g)
                    .and_then(|k| db["BUFFER_PG"][&k]["profile"].as_str().map(str::to_string))
                    .map(|p| &db["BUFFER_PROFILE"][&p]);
                let (Some(prof), Some(s), Some(c), Some(mtu)) =
                    (buf.filter(|p| p.is_object()), speed, cable, mtu)
                else {
                    return broken(format!("node {v}: {name} group {g} unbuffered"));
                };
                let (xoff, xon) = headroom(profile, f64::from(s) / 1000.0, c, mtu);
                let size_need = if shared { xon } else { xoff + xon };
                let got = |k: &str| num(&prof[k]).map(u64::from);
                if prof["pool"] != json!("ingress_lossless_pool")
                    || got("xoff").is_none_or(|x| x < xoff)
                    || got("xon").is_none_or(|x| x < xon)
                    || got("size").is_none_or(|x| x < size_need)
                {
                    return broken(format!("node {v}: {name} group {g} headroom"));
                }
                groups.insert(g);
            }
            row.push(Arrive {
                class: tc,
                group: lossless.then_some(g),
            });
        }
        // Every lossless-pool group of the port pauses (is in pfc_enable),
        // and reserves its configured headroom, reached or not.
        most = most.max(pfc.len());
        for (lo, hi, k) in keyed["BUFFER_PG"].get(name).into_iter().flatten() {
            let prof = db["BUFFER_PG"][k]["profile"].as_str().unwrap_or("");
            let f = &db["BUFFER_PROFILE"][prof];
            // A group without headroom in the pool (Broadcom's lossy
            // groups share it) holds nothing back.
            if f["pool"] != json!("ingress_lossless_pool") || num(&f["xoff"]).unwrap_or(0) == 0 {
                continue;
            }
            if (*lo..=*hi).any(|g| !pfc.contains(&g)) {
                return broken(format!("node {v}: {k} lossless but not paused"));
            }
            let n = u64::from(hi - lo + 1);
            xoff_sum += num(&f["xoff"]).map_or(0, u64::from) * n;
            xon_sum += num(&f["xon"]).map_or(0, u64::from) * n;
        }
        let _ = &groups;
        arrive.insert(name.clone(), row);
        egress_maps.insert(name.clone(), (t2q, t2d));
        pfcs.insert(name.clone(), pfc);
    }
    let used: BTreeSet<u32> = arrive.values().flatten().map(|a| a.class).collect();
    let mut leave: BTreeMap<u32, BTreeMap<String, Leave>> = BTreeMap::new();
    for &tc in &used {
        for (name, (t2q, t2d)) in &egress_maps {
            let Some(&q) = t2q.get(&tc) else {
                return broken(format!("node {v}: {name}: TC {tc} has no queue"));
            };
            let paused = pfcs[name].contains(&q);
            if paused {
                let pool = key_of("BUFFER_QUEUE", name, q)
                    .and_then(|k| {
                        db["BUFFER_QUEUE"][&k]["profile"]
                            .as_str()
                            .map(str::to_string)
                    })
                    .map(|p| &db["BUFFER_PROFILE"][&p]["pool"]);
                if pool != Some(&json!("egress_lossless_pool")) {
                    return broken(format!("node {v}: {name} queue {q} unbuffered"));
                }
                // A WRED profile on a lossless queue marks, never drops.
                if let Some(w) = key_of("QUEUE", name, q)
                    .and_then(|k| db["QUEUE"][&k]["wred_profile"].as_str().map(str::to_string))
                {
                    let wp = &db["WRED_PROFILE"][&w];
                    let ecn = wp["ecn"].as_str().unwrap_or("ecn_none");
                    let drops = ["green", "yellow", "red"].iter().any(|c| {
                        wp[format!("wred_{c}_enable")] == json!("true")
                            && !(ecn == "ecn_all" || ecn.contains(c))
                    });
                    if !wp.is_object() || drops {
                        return broken(format!("node {v}: {name} queue {q} WRED"));
                    }
                }
            }
            leave.entry(tc).or_default().insert(
                name.clone(),
                Leave {
                    queue: q,
                    value: t2d.as_ref().and_then(|m| m.get(&tc).copied()),
                    paused,
                },
            );
        }
    }
    // The fit to the recorded profile.
    let reserved = if shared {
        xon_sum + (xoff_sum as f64 / oversub).ceil() as u64
    } else {
        xoff_sum + xon_sum
    };
    let pool = &db["BUFFER_POOL"]["ingress_lossless_pool"];
    if pool.is_object()
        && (pool["type"].as_str().is_some_and(|t| t != "ingress")
            || num(&pool["size"]).is_some_and(|sz| u64::from(sz) < reserved))
    {
        return broken(format!("node {v}: lossless pool"));
    }
    if most as u64 > int("lossless_queues") || reserved > int("lossless_buffer_bytes") {
        return broken(format!("node {v}: does not fit"));
    }
    let tcs = used.iter().filter(|&&k| k != 0).count() as u64;
    if tcs + 1 > int("traffic_classes").max(8) {
        return broken(format!("node {v}: {tcs} traffic classes"));
    }
    let ports = ports
        .into_iter()
        .filter(|(n, _)| arrive.contains_key(n))
        .collect();
    Ok(Model {
        ports,
        arrive,
        leave,
    })
}

/// A neutral table decoded; its entries must be what its classes do.
pub(crate) fn table_switch(v: u32, t: &Value) -> Result<Model, Broken> {
    if num(&t["node"]) != Some(v) {
        return broken(format!("node {v}: the table says node {}", t["node"]));
    }
    let mut ports = BTreeMap::new();
    for p in t["ports"].as_array().into_iter().flatten() {
        ports.insert(
            p["name"].as_str().unwrap_or("").to_string(),
            num(&p["link"]),
        );
    }
    let lossy = Leave {
        queue: 0,
        value: Some(0),
        paused: false,
    };
    let mut leave: BTreeMap<u32, BTreeMap<String, Leave>> = BTreeMap::new();
    leave.insert(0, ports.keys().map(|n| (n.clone(), lossy)).collect());
    let mut prio_of = BTreeMap::new();
    for c in t["classes"].as_array().into_iter().flatten() {
        let (Some(k), Some(p)) = (num(&c["class"]), num(&c["priority"])) else {
            return broken(format!("node {v}: class {c}"));
        };
        if k == 0 || p == 0 || leave.contains_key(&k) {
            return broken(format!("node {v}: class {c}"));
        }
        let mut row: BTreeMap<String, Leave> = ports
            .iter()
            .map(|(n, l)| {
                let x = match l {
                    Some(_) => lossy,
                    None => Leave {
                        queue: p,
                        value: None,
                        paused: true,
                    },
                };
                (n.clone(), x)
            })
            .collect();
        for e in c["egress"].as_array().into_iter().flatten() {
            let name = e["port"].as_str().unwrap_or("");
            match (ports.get(name), num(&e["tag"]), num(&e["priority"])) {
                (Some(Some(_)), Some(tag), Some(q)) if tag > 0 && q > 0 && tag < 64 => {
                    row.insert(
                        name.to_string(),
                        Leave {
                            queue: q,
                            value: Some(tag),
                            paused: true,
                        },
                    );
                }
                _ => return broken(format!("node {v}: class {k} egress {e}")),
            }
        }
        prio_of.insert(k, p);
        leave.insert(k, row);
    }
    let none = Arrive {
        class: 0,
        group: None,
    };
    let mut arrive: BTreeMap<String, Vec<Arrive>> =
        ports.keys().map(|n| (n.clone(), vec![none; 64])).collect();
    for r in t["ingress"].as_array().into_iter().flatten() {
        let name = r["port"].as_str().unwrap_or("");
        let (Some(row), Some(tag), Some(p), Some(k)) = (
            arrive.get_mut(name),
            num(&r["tag"]),
            num(&r["priority"]),
            num(&r["class"]),
        ) else {
            return broken(format!("node {v}: ingress {r}"));
        };
        if tag == 0 || tag >= 64 || prio_of.get(&k) != Some(&p) || row[tag as usize] != none {
            return broken(format!("node {v}: ingress {r}"));
        }
        row[tag as usize] = Arrive {
            class: k,
            group: Some(p),
        };
    }
    // The entries: what the classes do, on the listed ports.
    for e in t["entries"].as_array().into_iter().flatten() {
        let names = |k: &str| -> Vec<String> {
            e[k].as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        };
        let (Some(tag), Some(t2), Some(p), Some(p2)) = (
            num(&e["tag"]),
            num(&e["next_tag"]),
            num(&e["priority"]),
            num(&e["next_priority"]),
        ) else {
            return broken(format!("node {v}: entry {e}"));
        };
        for i in names("in_ports") {
            for o in names("out_ports") {
                let a = arrive.get(&i).and_then(|r| r.get(tag as usize)).copied();
                let l = a.and_then(|a| leave[&a.class].get(&o).copied());
                let ok = matches!((a, l), (Some(a), Some(l))
                    if a.group == Some(p) && l.paused && l.queue == p2 && l.value == Some(t2)
                        && ports.get(&o).is_some_and(Option::is_some));
                if !ok {
                    return broken(format!("node {v}: entry {e} is not what its classes do"));
                }
            }
        }
    }
    Ok(Model {
        ports,
        arrive,
        leave,
    })
}
