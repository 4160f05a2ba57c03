use super::*;

/// The node at the other end of link `l` from `v`.
pub(crate) fn w_of(topo: &Topology, v: u32, l: u32) -> u32 {
    let [a, b] = topo.links()[l as usize];
    if a == v { b } else { a }
}

/// One edit of one SONiC switch file: a field an export writes, or one of
/// the edits a careful operator (or a wrong translator) might make.
pub(crate) fn mutate(db: &mut Value, pick: &mut impl FnMut(usize) -> usize) {
    let ports: Vec<String> = db["PORT_QOS_MAP"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    let port = ports[pick(ports.len())].clone();
    // A private copy of `port`'s map `key`, edited by `f`.
    let own = |db: &mut Value, key: &str, table: &str, f: &dyn Fn(&mut Value)| {
        let Some(name) = db["PORT_QOS_MAP"][&port][key].as_str().map(str::to_string) else {
            return;
        };
        let mut m = db[table][&name].clone();
        f(&mut m);
        let mine = format!("EDIT_{}_{key}", port.replace('/', "_"));
        db[table][&mine] = m;
        db["PORT_QOS_MAP"][&port][key] = json!(mine);
    };
    match pick(21) {
        // A U-turn kept: what arrives at the port with some DSCP leaves
        // back on it with that DSCP, in its group's queue.
        0 => {
            let d2t = db["PORT_QOS_MAP"][&port]["dscp_to_tc_map"]
                .as_str()
                .map(str::to_string);
            let Some(d2t) = d2t else { return };
            let pairs: Vec<(String, String)> = db["DSCP_TO_TC_MAP"][&d2t]
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("0").to_string()))
                        .collect()
                })
                .unwrap_or_default();
            if pairs.is_empty() {
                return;
            }
            let (d, tc) = pairs[pick(pairs.len())].clone();
            let g = db["TC_TO_PRIORITY_GROUP_MAP"]
                .as_object()
                .and_then(|o| o.values().next())
                .map(|m| m[&tc].clone())
                .unwrap_or(json!("0"));
            own(db, "tc_to_queue_map", "TC_TO_QUEUE_MAP", &|m| {
                m[&tc] = g.clone()
            });
            own(db, "tc_to_dscp_map", "TC_TO_DSCP_MAP", &|m| {
                m[&tc] = json!(d.clone())
            });
        }
        // Best effort leaves as a tag.
        1 => {
            let d = ["3", "4", "5"][pick(3)];
            own(db, "tc_to_dscp_map", "TC_TO_DSCP_MAP", &|m| {
                m["0"] = json!(d)
            });
        }
        // A DSCP that is no tag (or one hosts do not send) taken lossless.
        2 => {
            let (d, tc) = (["10", "4", "0"][pick(3)], ["1", "2", "3"][pick(3)]);
            own(db, "dscp_to_tc_map", "DSCP_TO_TC_MAP", &|m| {
                m[d] = json!(tc)
            });
        }
        // A port's classes sent out in the lossy queue or queue 7.
        3 => {
            let q = ["0", "7"][pick(2)];
            own(db, "tc_to_queue_map", "TC_TO_QUEUE_MAP", &|m| {
                for (k, v) in m.as_object_mut().unwrap() {
                    if k != "0" {
                        *v = json!(q);
                    }
                }
            });
        }
        // The buffers.
        4 => {
            let profiles: Vec<String> = db["BUFFER_PROFILE"]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            if profiles.is_empty() {
                return;
            }
            let p = profiles[pick(profiles.len())].clone();
            let (k, x) = [
                ("xoff", "1"),
                ("xon", "0"),
                ("size", "1000"),
                ("pool", "ingress_lossy_pool"),
                ("pool", "egress_lossy_pool"),
                ("pool", "no_such_pool"),
                ("xoff", "99999999"),
            ][pick(7)];
            db["BUFFER_PROFILE"][&p][k] = json!(x);
        }
        5 => db["PORT"][&port]["speed"] = json!(["400000", "10000", "x"][pick(3)]),
        6 => db["CABLE_LENGTH"]["AZURE"][&port] = json!(["40000m", "1m", "3"][pick(3)]),
        // An ACL table bound to the ports.
        7 => {
            db["ACL_TABLE"] = json!({"MINE": {"type": "L3", "stage": "egress", "ports": [port]}});
            db["ACL_RULE"] = json!({"MINE|R1": {"PRIORITY": "1", "PACKET_ACTION": "DROP"}});
        }
        8 => {
            db["PORT_QOS_MAP"][&port]["pfc_enable"] =
                json!(["", "3", "4", "3,4,9", "3,5", "0,3,4", "3,4,5"][pick(7)]);
        }
        9 => {
            let key = [
                "dscp_to_tc_map",
                "tc_to_queue_map",
                "tc_to_pg_map",
                "tc_to_dscp_map",
            ][pick(4)];
            db["PORT_QOS_MAP"][&port][key] = json!("MISSING");
        }
        // Delete an entry of some table.
        10 => {
            let tables = [
                "PORT_QOS_MAP",
                "BUFFER_PG",
                "BUFFER_QUEUE",
                "BUFFER_PROFILE",
                "DSCP_TO_TC_MAP",
            ];
            let t = tables[pick(tables.len())];
            let keys: Vec<String> = db[t]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            if !keys.is_empty() {
                let k = keys[pick(keys.len())].clone();
                db[t].as_object_mut().unwrap().remove(&k);
            }
        }
        // Priority group and queue 0 made lossless (in pfc_enable, with
        // buffers), at one port or at every port.
        12 => {
            let every = pick(2) == 0;
            db["BUFFER_PROFILE"]["EDIT_BIG"] = json!({"pool": "ingress_lossless_pool", "xoff": "99999999", "xon": "99999999", "size": "199999998", "dynamic_th": "0"});
            db["BUFFER_PROFILE"]["EDIT_EGRESS"] =
                json!({"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"});
            for p in &ports {
                if !every && *p != port {
                    continue;
                }
                let old = db["PORT_QOS_MAP"][p]["pfc_enable"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                db["PORT_QOS_MAP"][p]["pfc_enable"] = json!(if old.is_empty() {
                    "0".to_string()
                } else {
                    format!("0,{old}")
                });
                db["BUFFER_PG"][format!("{p}|0")] = json!({"profile": "EDIT_BIG"});
                db["BUFFER_QUEUE"][format!("{p}|0")] = json!({"profile": "EDIT_EGRESS"});
            }
        }
        // A class sent to a queue past the profile's (6 per port here).
        13 => {
            let q = ["5", "6", "7"][pick(3)];
            let tc = ["1", "2"][pick(2)];
            own(db, "tc_to_queue_map", "TC_TO_QUEUE_MAP", &|m| {
                m[tc] = json!(q)
            });
        }
        // PFC priority maps bound (identity, or moving priority 3), or an
        // 802.1p map.
        14 => {
            let mut m = json!({"0": "0", "1": "1", "2": "2", "3": "3", "4": "4", "5": "5", "6": "6", "7": "7"});
            if pick(2) == 0 {
                m["3"] = json!("5");
            }
            let (key, table) = [
                ("pfc_to_pg_map", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"),
                ("pfc_to_queue_map", "PFC_PRIORITY_TO_QUEUE_MAP"),
                ("dot1p_to_tc_map", "DOT1P_TO_TC_MAP"),
            ][pick(3)];
            db[table]["EDIT_MAP"] = m;
            db["PORT_QOS_MAP"][&port][key] = json!("EDIT_MAP");
        }
        // A second CABLE_LENGTH key for the port, agreeing or not.
        15 => {
            let now = db["CABLE_LENGTH"]["AZURE"][&port].clone();
            db["CABLE_LENGTH"]["OTHER"][&port] = if pick(2) == 0 { now } else { json!("2000m") };
        }
        // The port's MTU: larger than the buffers were sized for, below
        // the lossless packets, or not a number.
        16 => db["PORT"][&port]["mtu"] = json!(["9216", "1000", "1500", "x"][pick(4)]),
        // A second BUFFER_PG or BUFFER_QUEUE key over a group or queue
        // already covered, or a lossless-pool range over lossy groups.
        17 => {
            let (t, k, prof) = [
                ("BUFFER_PG", "3-3", "EDIT_LOSSY"),
                ("BUFFER_PG", "0-4", "EDIT_LOSSLESS"),
                ("BUFFER_QUEUE", "3-4", "EDIT_LOSSY"),
                ("BUFFER_PG", "4-3", "EDIT_LOSSY"),
            ][pick(4)];
            db["BUFFER_PROFILE"]["EDIT_LOSSY"] =
                json!({"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "3"});
            db["BUFFER_PROFILE"]["EDIT_LOSSLESS"] = json!({"pool": "ingress_lossless_pool", "xoff": "999999", "xon": "99999", "size": "1099998", "dynamic_th": "0"});
            db[t][format!("{port}|{k}")] = json!({ "profile": prof });
        }
        // A WRED profile on the port's queues: marking or dropping.
        18 => {
            let ecn = ["ecn_all", "ecn_none", "ecn_green", "ecn_yellow_red"][pick(4)];
            db["WRED_PROFILE"]["EDIT_W"] = json!({"wred_green_enable": "true", "wred_yellow_enable": "true", "ecn": ecn, "green_drop_probability": "100"});
            let q = ["3", "4", "3-4", "0"][pick(4)];
            db["QUEUE"][format!("{port}|{q}")] = json!({"wred_profile": "EDIT_W"});
        }
        // The lossless pool redefined, and tables the read-back does not
        // run.
        19 => {
            let size = ["1024", "999999999"][pick(2)];
            db["BUFFER_POOL"]["ingress_lossless_pool"] =
                json!({"type": "ingress", "mode": "dynamic", "size": size});
        }
        20 => {
            let t = [
                "BUFFER_PORT_INGRESS_PROFILE_LIST",
                "PFC_WD",
                "SCHEDULER",
                "DEVICE_METADATA",
            ][pick(4)];
            db[t] = json!({ port.clone(): {"profile_list": "x", "action": "drop"} });
        }
        // A map's value.
        _ => {
            let tables = [
                "DSCP_TO_TC_MAP",
                "TC_TO_PRIORITY_GROUP_MAP",
                "TC_TO_QUEUE_MAP",
                "TC_TO_DSCP_MAP",
            ];
            let t = tables[pick(tables.len())];
            let names: Vec<String> = db[t]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            if names.is_empty() {
                return;
            }
            let n = names[pick(names.len())].clone();
            let inner: Vec<String> = db[t][&n]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            if !inner.is_empty() {
                let k = inner[pick(inner.len())].clone();
                let max = if t == "TC_TO_DSCP_MAP" { 64 } else { 8 };
                db[t][&n][&k] = json!(pick(max).to_string());
            }
        }
    }
}

/// One edit of one neutral table.
pub(crate) fn mutate_table(t: &mut Value, pick: &mut impl FnMut(usize) -> usize) {
    let n = |t: &Value, k: &str| t[k].as_array().map_or(0, Vec::len);
    match pick(7) {
        0 if n(t, "classes") > 0 => {
            let i = pick(n(t, "classes"));
            let p = t["classes"][i]["priority"].as_u64().unwrap_or(1);
            t["classes"][i]["priority"] = json!(if p > 1 { p - 1 } else { p + 1 });
        }
        // Every class folded to priority 1, ingress rows too.
        1 => {
            for c in t["classes"].as_array_mut().into_iter().flatten() {
                c["priority"] = json!(1);
            }
            for r in t["ingress"].as_array_mut().into_iter().flatten() {
                r["priority"] = json!(1);
            }
        }
        2 if n(t, "ingress") > 0 => {
            let i = pick(n(t, "ingress"));
            t["ingress"].as_array_mut().unwrap().remove(i);
        }
        3 if n(t, "classes") > 0 => {
            let i = pick(n(t, "classes"));
            let e = n(&t["classes"][i], "egress");
            if e > 0 {
                let j = pick(e);
                let tag = t["classes"][i]["egress"][j]["tag"].as_u64().unwrap_or(1);
                t["classes"][i]["egress"][j]["tag"] = json!(tag % 3 + 1);
            }
        }
        4 => t["entries"] = json!([]),
        5 if n(t, "entries") > 0 => {
            let i = pick(n(t, "entries"));
            t["entries"][i]["next_tag"] = json!(pick(3) + 1);
        }
        _ if n(t, "classes") > 0 => {
            // A U-turn kept at one port: a class sends its own arrivals
            // back at their priority.
            let i = pick(n(t, "ingress").max(1));
            let r = t["ingress"][i].clone();
            if let (Some(c), Some(p)) = (r["class"].as_u64(), r["priority"].as_u64()) {
                for cl in t["classes"].as_array_mut().unwrap() {
                    if cl["class"].as_u64() == Some(c) {
                        let port = r["port"].clone();
                        if let Some(eg) = cl["egress"].as_array_mut() {
                            eg.retain(|e| e["port"] != port);
                            eg.push(json!({"port": port, "tag": r["tag"], "priority": p}));
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// One edit of an export directory as a whole: a listed switch dropped
/// from `summary.json` (its file stays, and is still loaded), a stray
/// switch file under a number no switch has, or a listed file deleted.
pub(crate) fn mutate_dir(dir: &std::path::Path, pick: &mut impl FnMut(usize) -> usize) -> String {
    let path = dir.join("summary.json");
    let mut summary: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let list = summary["switches"].as_array_mut().unwrap();
    let i = pick(list.len());
    let v = list[i]["node"].as_u64().unwrap();
    match pick(4) {
        0 => {
            list.remove(i);
            std::fs::write(&path, summary.to_string()).unwrap();
            format!("summary.json: switch {v} unlisted")
        }
        3 => {
            let j = pick(list.len());
            let other = list[j]["file"].clone();
            list[i]["file"] = other;
            std::fs::write(&path, summary.to_string()).unwrap();
            format!("summary.json: switch {v}'s file named as switch {j}'s")
        }
        1 => {
            let stray = format!("{}.json", 100_000 + pick(100));
            std::fs::copy(dir.join(format!("{v}.json")), dir.join(&stray)).unwrap();
            format!("{stray}: a copy of {v}.json")
        }
        _ => {
            std::fs::remove_file(dir.join(format!("{v}.json"))).unwrap();
            format!("{v}.json deleted")
        }
    }
}
