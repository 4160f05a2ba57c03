//! The SONiC export's unit tests: one file past 600 lines on purpose,
//! since the export, its read-back and the fixtures they share are tested
//! together.

use super::*;
use serde_json::json;

use crate::rules::RuleSet;
use crate::testing::{plan, plan_on};

fn written(ex: &Export) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ex).unwrap();
    dir
}

fn round_trip(t: &Topology, r: &RuleSet, opts: &Options) -> (Export, RuleSet) {
    let ex = export(t, r, opts).unwrap();
    let dir = written(&ex);
    (ex, read(t, dir.path()).unwrap())
}

/// Edits every switch file of an export in place.
fn edit(dir: &std::path::Path, ex: &Export, f: impl Fn(&mut Value)) {
    for s in &ex.switches {
        let p = dir.join(format!("{}.json", s.node));
        let mut db: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        f(&mut db);
        std::fs::write(&p, serde_json::to_string(&db).unwrap()).unwrap();
    }
}

const PLANS: [(&str, &str, &str); 10] = [
    ("fattree:k=8", "kbounce:1", "clos"),
    ("fattree:k=4", "shortest", "greedy"),
    ("fattree:k=6", "kbounce:2", "greedy"),
    ("jellyfish:n=30,ports=8,r=5,seed=2", "shortest", "greedy"),
    ("bcube:n=3,k=1", "dor", "greedy"),
    ("hyperx:l=2,s=4,t=1", "shortest", "search"),
    ("leafspine:leaves=4,spines=2,hosts=1", "kbounce:1", "clos"),
    ("fattree:k=4", "shortest", "brute"),
    ("fattree:k=4", "kbounce:1", "greedy-ttl"),
    ("leafspine:leaves=3,spines=2,hosts=1", "kbounce:1", "exact"),
];

/// Every family and algorithm (a greedy-ttl plan's hop-count tags become
/// DSCP values like any other tags): the maps alone give back every entry and
/// the header, and the rebuilt rules verify (ELP replayed); the neutral
/// table does too.
#[test]
fn exports_read_back_exactly_and_verify() {
    for (topo, elp, algo) in PLANS {
        let (t, e, r) = plan(topo, elp, algo);
        let (ex, back) = round_trip(&t, &r, &Options::default());
        assert_eq!(back.entries, r.entries, "{topo} {elp} {algo}");
        assert_eq!(
            (back.topology.as_str(), back.priorities, back.initial_tag),
            (r.topology.as_str(), r.priorities, r.initial_tag)
        );
        let rep = crate::verify::verify(&t, &back, Some(&e));
        assert!(rep.ok(), "{topo}: {rep}");
        let (most, over_n) = traffic_classes(&t, &r).unwrap();
        assert_eq!(json!(most), ex.summary["sonic_tcs_max"]);
        assert_eq!(json!(over_n), ex.summary["sonic_switches_over_tcs"]);
        // Greedy plans with many tags overflow some switches' TCs: those go
        // through ACL rules, and still read back exactly.
        let over = ex.summary["sonic_switches_over_tcs"].as_u64().unwrap();
        if algo == "greedy" && topo != "fattree:k=4" && topo != "bcube:n=3,k=1" {
            assert!(over > 0, "{topo}: no switch over its TCs");
            assert!(
                ex.switches
                    .iter()
                    .any(|s| s.acl_rules > 0 && s.tcs <= FREE_TCS)
            );
            let acl = ex.switches.iter().find(|s| s.acl_rules > 0).unwrap();
            assert_eq!(
                acl.config["ACL_TABLE_TYPE"]["TAGGER_REWRITE"]["MATCHES"],
                json!(["IN_PORTS", "OUT_PORTS", "DSCP"])
            );
        }
        if algo == "clos" {
            assert_eq!(over, 0);
        }
        // The neutral table: same entries, from its classes.
        let tb = table(&t, &r).unwrap();
        let dir = written(&tb);
        let back = read(&t, dir.path()).unwrap();
        assert_eq!(back.entries, r.entries, "table {topo} {elp} {algo}");
        assert_eq!(tb.summary["classes_max"], json!(most));
    }
}

/// SONiC's YANG patterns and ranges (sonic-port-qos-map, the map tables,
/// sonic-buffer-pg): pfc_enable `([0-7](,[0-7])*)?`, DSCP 0-63, TC, queue
/// and priority group 0-7, BUFFER_PG keys `port|pg`, buffer sizes
/// numbers; and every reference resolves.
#[test]
fn exports_keep_sonic_field_patterns() {
    for (topo, elp, algo) in PLANS {
        let (t, _, r) = plan(topo, elp, algo);
        let ex = export(&t, &r, &Options::default()).unwrap();
        for s in &ex.switches {
            let c = &s.config;
            for (port, b) in c["PORT_QOS_MAP"].as_object().unwrap() {
                assert!(c["PORT"][port].is_object(), "{port}");
                let pfc = b["pfc_enable"].as_str().unwrap();
                assert!(
                    pfc.is_empty()
                        || pfc
                            .split(',')
                            .all(|x| x.len() == 1
                                && ('0'..='7').contains(&x.chars().next().unwrap())),
                    "{pfc}"
                );
                for (k, table) in [
                    ("dscp_to_tc_map", "DSCP_TO_TC_MAP"),
                    ("tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP"),
                    ("tc_to_queue_map", "TC_TO_QUEUE_MAP"),
                    ("tc_to_dscp_map", "TC_TO_DSCP_MAP"),
                ] {
                    if let Some(name) = b[k].as_str() {
                        assert!(c[table][name].is_object(), "{table}|{name}");
                    }
                }
            }
            for (table, kmax, vmax) in [
                ("DSCP_TO_TC_MAP", 63, 7),
                ("TC_TO_QUEUE_MAP", 7, 7),
                ("TC_TO_PRIORITY_GROUP_MAP", 7, 7),
                ("TC_TO_DSCP_MAP", 7, 63),
            ] {
                for (_, m) in c[table].as_object().into_iter().flatten() {
                    for (k, v) in m.as_object().unwrap() {
                        assert!(k.parse::<u32>().unwrap() <= kmax, "{table} {k}");
                        assert!(
                            v.as_str().unwrap().parse::<u32>().unwrap() <= vmax,
                            "{table} {v}"
                        );
                    }
                }
            }
            for table in ["BUFFER_PG", "BUFFER_QUEUE"] {
                for (k, v) in c[table].as_object().into_iter().flatten() {
                    let (port, n) = k.split_once('|').unwrap();
                    assert!(c["PORT"][port].is_object(), "{k}");
                    assert!(n.parse::<u32>().unwrap() <= 7, "{k}");
                    let prof = v["profile"].as_str().unwrap();
                    let p = &c["BUFFER_PROFILE"][prof];
                    assert!(p["size"].as_str().unwrap().parse::<u64>().is_ok(), "{prof}");
                }
            }
        }
    }
}

/// The Clos plan needs at most four traffic classes per switch: two
/// priorities, from above and from below.
#[test]
fn clos_fits_four_traffic_classes() {
    let (t, _, r) = plan("fattree:k=8", "kbounce:1", "clos");
    let ex = export(&t, &r, &Options::default()).unwrap();
    assert_eq!(
        ex.summary["sonic_tcs_max"],
        json!(ex.switches.iter().map(|s| s.tcs).max().unwrap())
    );
    assert!(
        ex.switches.iter().all(|s| s.tcs <= 4),
        "{:?}",
        ex.switches.iter().map(|s| s.tcs).collect::<Vec<_>>()
    );
    assert!(ex.switches.iter().any(|s| s.tcs == 4));
}

/// Buffers are the capacity model's: on the default profile (Spectrum-2,
/// 100 Gb/s, 300 m switch-to-switch cables, 5 m host cables) each port's
/// lossless group gets the headroom for its own link, a host port SONiC's
/// own test vector (100 Gb/s over 5 m: xoff 82,944, xon 18,432); a shared
/// headroom pool reserves xon only.
#[test]
fn buffers_come_from_the_capacity_model() {
    let (t, _, r) = plan("fattree:k=4", "kbounce:1", "clos");
    let p = crate::capacity::Profile::default();
    let ex = export(&t, &r, &Options::default()).unwrap();
    let tor = ex
        .switches
        .iter()
        .find(|s| t.node(s.node).hosts > 0)
        .unwrap();
    let c = &tor.config;
    let up = &c["BUFFER_PG"]["Ethernet0|3"]["profile"];
    let h = crate::capacity::port_headroom(&p, 100.0, 300.0);
    assert_eq!(up, &json!("TAGGER_PG_LOSSLESS_100000_300m"));
    assert_eq!(
        c["BUFFER_PROFILE"][up.as_str().unwrap()],
        json!({"pool": INGRESS_POOL, "xoff": h.xoff.to_string(), "xon": h.xon.to_string(), "size": h.size().to_string(), "dynamic_th": "0"})
    );
    let host = &c["BUFFER_PG"][format!("Ethernet{}|3", 4 * t.degree(tor.node))]["profile"];
    assert_eq!(host, &json!("TAGGER_PG_LOSSLESS_100000_5m"));
    assert_eq!(
        c["BUFFER_PROFILE"][host.as_str().unwrap()],
        json!({"pool": INGRESS_POOL, "xoff": "82944", "xon": "18432", "size": "101376", "dynamic_th": "0"})
    );
    // The bounce priority arrives from the aggregation layer.
    assert_eq!(c["BUFFER_PG"]["Ethernet0|4"]["profile"], *up);
    let host = &c["BUFFER_PG"][format!("Ethernet{}|3", 4 * t.degree(tor.node))]["profile"];
    let hh = crate::capacity::port_headroom(&p, p.host_speed_gbps, p.host_cable_m);
    assert_eq!(
        c["BUFFER_PROFILE"][host.as_str().unwrap()]["xoff"],
        json!(hh.xoff.to_string())
    );
    assert_eq!(c["CABLE_LENGTH"]["AZURE"]["Ethernet0"], json!("300m"));
    assert_eq!(c["PORT"]["Ethernet0"]["speed"], json!("100000"));
    // Leaving lossless queues are buffered as lossless.
    assert!(c["BUFFER_QUEUE"]["Ethernet0|3"].is_object());
    let mut shared = Options::default();
    shared.profile.shared_headroom_pool = true;
    let ex = export(&t, &r, &shared).unwrap();
    let c = &ex.switches[0].config;
    let (_, prof) = c["BUFFER_PROFILE"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, v)| v["pool"] == json!(INGRESS_POOL))
        .unwrap();
    assert_eq!(prof["size"], prof["xon"]);
}

/// A configured mapping is used and read back; a plan needing more tags or
/// queues than it has is refused, naming the tag or priority; a bad mapping
/// names the list and index.
#[test]
fn mappings_are_configurable_and_checked() {
    let (t, e, r) = plan("fattree:k=4", "kbounce:1", "clos");
    let m = Mapping::new(vec![26, 46], vec![4, 3]).unwrap();
    let opts = Options {
        mapping: m.clone(),
        ..Default::default()
    };
    let (ex, back) = round_trip(&t, &r, &opts);
    assert_eq!(back.entries, r.entries);
    assert!(crate::verify::verify(&t, &back, Some(&e)).ok());
    let c = &ex.switches[0].config;
    let d2t = c["DSCP_TO_TC_MAP"].as_object().unwrap();
    assert!(d2t.values().all(|m| {
        m.as_object()
            .unwrap()
            .keys()
            .all(|k| k == "26" || k == "46")
    }));
    assert_eq!(ex.summary["mapping"]["queue_of_priority"], json!([4, 3]));
    let short = Options {
        mapping: Mapping::new(vec![26], vec![4, 3]).unwrap(),
        ..Default::default()
    };
    let err = export(&t, &r, &short).unwrap_err().to_string();
    assert!(err.contains("tag 2 has no DSCP value"), "{err}");
    let short = Options {
        mapping: Mapping::new(vec![26, 46], vec![3]).unwrap(),
        ..Default::default()
    };
    let err = export(&t, &r, &short).unwrap_err().to_string();
    assert!(err.contains("lossless priority 2 has no queue"), "{err}");
    for (d, q, want) in [
        (vec![3, 64], vec![3], "dscp[1] = 64: must be in 1..=63"),
        (
            vec![3, 3],
            vec![3],
            "dscp[1] = 3: the value is listed twice",
        ),
        (
            vec![3],
            vec![0],
            "queues[0] = 0: must be in 1..=7 (0 is the lossy class)",
        ),
        (vec![3], vec![], "queues: the list is empty"),
    ] {
        let err = Mapping::new(d, q).unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
    assert_eq!(Mapping::parse_list("3, 4,2"), Ok(vec![3, 4, 2]));
    assert!(Mapping::parse_list("3,x").unwrap_err().contains("'x'"));
}

/// Port names from the topology file name the ports in every table, and
/// the read-back resolves them.
#[test]
fn topology_port_names_are_used() {
    let t = crate::TopologySpec::parse("leafspine:leaves=2,spines=2,hosts=1")
        .unwrap()
        .build()
        .unwrap();
    let names: Vec<Vec<String>> = (0..t.node_count() as u32)
        .map(|v| {
            let ports = t.degree(v) + t.node(v).hosts as usize;
            (0..ports).map(|i| format!("Eth1/{}", i + 1)).collect()
        })
        .collect();
    let t = t.with_port_names(names).unwrap();
    let (t, e, r) = plan_on(t, "kbounce:1", "clos");
    let (ex, back) = round_trip(&t, &r, &Options::default());
    assert_eq!(back.entries, r.entries);
    assert!(crate::verify::verify(&t, &back, Some(&e)).ok());
    let c = &ex.switches[0].config;
    assert!(c["PORT_QOS_MAP"]["Eth1/1"].is_object());
    assert!(c["PORT_QOS_MAP"].get("Ethernet0").is_none());
    assert!(
        c["BUFFER_PG"]
            .as_object()
            .unwrap()
            .keys()
            .all(|k| k.starts_with("Eth1/"))
    );
    let tb = table(&t, &r).unwrap();
    assert_eq!(tb.switches[0].config["ports"][0]["name"], json!("Eth1/1"));
}

/// A hand edit that keeps bounced packets in the first lossless queue (DSCP
/// and queue of tag 2 turned into tag 1's) reopens the cycle the plan
/// broke: verification of the read-back rules fails.
#[test]
fn an_edit_that_merges_priorities_fails_verification() {
    let (t, e, r) = plan("fattree:k=4", "kbounce:1", "clos");
    let m = Mapping::default();
    let ex = export(&t, &r, &Options::default()).unwrap();
    let dir = written(&ex);
    let (d1, d2) = (m.dscp_of(1).unwrap(), m.dscp_of(2).unwrap());
    let (q1, q2) = (m.queue_of(1).unwrap(), m.queue_of(2).unwrap());
    edit(dir.path(), &ex, |db| {
        for (table, from, to) in [
            ("TC_TO_DSCP_MAP", d2, d1),
            ("TC_TO_QUEUE_MAP", q2, q1),
            ("TC_TO_PRIORITY_GROUP_MAP", q2, q1),
        ] {
            for (_, m) in db[table].as_object_mut().into_iter().flatten() {
                for (_, v) in m.as_object_mut().unwrap() {
                    if v == &json!(from.to_string()) {
                        *v = json!(to.to_string());
                    }
                }
            }
        }
    });
    let back = read(&t, dir.path()).unwrap();
    let rep = crate::verify::verify(&t, &back, Some(&e));
    assert!(!rep.ok());
    assert!(
        rep.to_string().contains("cyclic buffer dependency") || rep.to_string().contains("header"),
        "{rep}"
    );
    // A reference to a map that is not there is named.
    let p = dir.path().join(format!("{}.json", ex.switches[0].node));
    let text = std::fs::read_to_string(&p).unwrap().replace(
        "\"tc_to_pg_map\":\"TAGGER_TC_TO_PG_0\"",
        "\"tc_to_pg_map\":\"TAGGER_TC_TO_PG_9\"",
    );
    std::fs::write(&p, text).unwrap();
    let e = read(&t, dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("TC_TO_PRIORITY_GROUP_MAP|TAGGER_TC_TO_PG_9 is referenced but not defined"),
        "{e}"
    );
}

/// What makes a decoded priority lossless on the switch is checked too: an
/// export whose port drops a priority from pfc_enable, loses a BUFFER_PG,
/// or sizes its headroom to nothing is refused, naming the port.
#[test]
fn lossless_settings_are_checked_on_read() {
    let (t, _, r) = plan("fattree:k=4", "kbounce:1", "clos");
    let ex = export(&t, &r, &Options::default()).unwrap();
    type Mutation = fn(&mut Value);
    let cases: [(Mutation, &str); 4] = [
        (
            |db| db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = json!("3"),
            "Ethernet0: lossless priority group 4 (DSCP 4) is not in pfc_enable",
        ),
        (
            |db| {
                db["BUFFER_PG"]
                    .as_object_mut()
                    .unwrap()
                    .remove("Ethernet4|3");
            },
            "Ethernet4: lossless priority group 3 has no BUFFER_PG",
        ),
        (
            |db| {
                for (_, p) in db["BUFFER_PROFILE"].as_object_mut().unwrap() {
                    p["xoff"] = json!("0");
                }
            },
            "reserves no xoff headroom",
        ),
        (
            |db| db["PORT_QOS_MAP"]["Ethernet4"]["tc_to_queue_map"] = json!("NOPE"),
            "TC_TO_QUEUE_MAP|NOPE is referenced but not defined",
        ),
    ];
    for (mutate, want) in cases {
        let dir = written(&ex);
        edit(dir.path(), &ex, mutate);
        let err = read(&t, dir.path()).unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
    // An older format is named, not misread.
    let dir = written(&ex);
    let p = dir.path().join("summary.json");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace(FORMAT, "tagger-sonic/1");
    std::fs::write(&p, text).unwrap();
    let err = read(&t, dir.path()).unwrap_err().to_string();
    assert!(err.contains("older tagger"), "{err}");
}

/// A neutral table whose classes and entries disagree is refused.
#[test]
fn a_table_edit_is_caught() {
    let (t, _, r) = plan("fattree:k=4", "kbounce:1", "clos");
    let tb = table(&t, &r).unwrap();
    let dir = written(&tb);
    edit(dir.path(), &tb, |db| {
        db["entries"][0]["next_tag"] = json!(7);
    });
    let err = read(&t, dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("the classes and the entries disagree"),
        "{err}"
    );
}

/// Host ports deliver each class in the queue of the priority it arrived
/// with, keep its DSCP, and have PFC and a lossless queue buffer there.
#[test]
fn host_ports_deliver_in_the_arriving_priority() {
    let (t, _, r) = plan("fattree:k=4", "kbounce:1", "clos");
    let ex = export(&t, &r, &Options::default()).unwrap();
    let m = Mapping::default();
    for s in ex.switches.iter().filter(|s| t.node(s.node).hosts > 0) {
        let c = &s.config;
        let host = format!("Ethernet{}", 4 * t.degree(s.node));
        let b = &c["PORT_QOS_MAP"][&host];
        assert!(b.get("tc_to_dscp_map").is_none());
        let tq = &c["TC_TO_QUEUE_MAP"][b["tc_to_queue_map"].as_str().unwrap()];
        let pg = &c["TC_TO_PRIORITY_GROUP_MAP"][b["tc_to_pg_map"].as_str().unwrap()];
        assert_eq!(tq, pg, "{host}: queue of each class = its arriving group");
        // Both priorities arrive at a ToR (the bounce comes down at 2).
        let both = format!("{},{}", m.queue_of(1).unwrap(), m.queue_of(2).unwrap());
        assert_eq!(b["pfc_enable"], json!(both));
        assert!(c["BUFFER_QUEUE"][format!("{host}|{}", m.queue_of(2).unwrap())].is_object());
    }
}

/// docs/model.md's worked example (the two bounced flows that close a
/// cycle at one priority): each algorithm's plan exports, reads back
/// exactly and verifies against the example's paths, and the priority step
/// shows in the maps: some switch sends packets on in the second lossless
/// queue.
#[test]
fn the_worked_example_exports_and_verifies() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/topologies");
    let t = tagger_generators::file::read_json_file(std::path::Path::new(&format!(
        "{dir}/design-example.json"
    )))
    .unwrap();
    let elp = format!("file:{dir}/design-example.paths");
    for algo in ["greedy", "search", "exact", "brute"] {
        let (t, e, r) = plan_on(t.clone(), &elp, algo);
        let (ex, back) = round_trip(&t, &r, &Options::default());
        assert_eq!(back.entries, r.entries, "{algo}");
        assert!(crate::verify::verify(&t, &back, Some(&e)).ok(), "{algo}");
        if algo != "brute" {
            assert_eq!(r.priorities, 2, "{algo}");
            // Some switch sends a packet on in the second lossless queue.
            let q2 = json!(Mapping::default().queue_of(2).unwrap().to_string());
            assert!(
                ex.switches.iter().any(|s| s.config["TC_TO_QUEUE_MAP"]
                    .as_object()
                    .unwrap()
                    .values()
                    .any(|m| m.as_object().unwrap().values().any(|q| *q == q2))),
                "{algo}"
            );
        }
    }
}

/// An export of a plan whose switches run out of traffic classes, so its
/// rewrites are ACL rules: its topology, ELP, export and one switch file's
/// name that has ACL rules.
fn acl_export() -> (Topology, crate::elp::ElpSet, Export, u32) {
    let (t, e, r) = plan("fattree:k=6", "kbounce:2", "greedy");
    let ex = export(&t, &r, &Options::default()).unwrap();
    let node = ex
        .switches
        .iter()
        .find(|s| s.config["ACL_RULE"].is_object())
        .expect("a greedy kbounce:2 plan needs ACL rules somewhere")
        .node;
    (t, e, ex, node)
}

/// Edits the switch file of `node` in an export directory.
fn edit_one(dir: &std::path::Path, node: u32, f: impl FnOnce(&mut Value)) {
    let p = dir.join(format!("{node}.json"));
    let mut db: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(&mut db);
    std::fs::write(&p, serde_json::to_string(&db).unwrap()).unwrap();
}

/// ACL rules count only as a switch applies them: through a defined table,
/// at egress, of a declared type that allows their matches and actions,
/// bound to their out ports, in PRIORITY order; a drop over a lossless
/// rewrite, an ambiguous tie and a PRIORITY that is no number are refused,
/// each naming the rule. A drop below a rewrite changes nothing.
#[test]
fn acl_rules_count_as_a_switch_applies_them() {
    let (t, e, ex, node) = acl_export();
    let first_rule = |db: &Value| -> (String, Value) {
        let (k, v) = db["ACL_RULE"].as_object().unwrap().iter().next().unwrap();
        (k.clone(), v.clone())
    };
    type Mutation = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(Mutation, &str)> = vec![
        (
            Box::new(|db| {
                db.as_object_mut().unwrap().remove("ACL_TABLE");
            }),
            "is not defined: the switch would not apply this rule",
        ),
        (
            Box::new(|db| {
                let rules = db["ACL_RULE"].as_object().unwrap().clone();
                db["ACL_RULE"] = Value::Object(
                    rules
                        .into_iter()
                        .map(|(k, v)| (k.replace("TAGGER_REWRITE|", "ELSEWHERE|"), v))
                        .collect(),
                );
            }),
            "ACL_TABLE|ELSEWHERE is not defined",
        ),
        (
            Box::new(|db| db["ACL_TABLE"]["TAGGER_REWRITE"]["ports"] = json!([])),
            "is not bound to port",
        ),
        (
            Box::new(|db| db["ACL_TABLE"]["TAGGER_REWRITE"]["ports"] = json!(["Host"])),
            "is not bound to port",
        ),
        (
            Box::new(|db| db["ACL_TABLE"]["TAGGER_REWRITE"]["stage"] = json!("ingress")),
            "is at stage ingress",
        ),
        (
            Box::new(|db| db["ACL_TABLE"]["TAGGER_REWRITE"]["type"] = json!("L3")),
            "table type L3 is not declared",
        ),
        (
            Box::new(|db| {
                db["ACL_TABLE_TYPE"]["TAGGER_REWRITE"]["ACTIONS"] =
                    json!(["PACKET_ACTION", "SET_DSCP"]);
            }),
            "field SET_QUEUE is not one the table type TAGGER_REWRITE allows",
        ),
        (
            Box::new(|db| {
                db["ACL_TABLE_TYPE"]["TAGGER_REWRITE"]["BIND_POINTS"] = json!(["VLAN"]);
            }),
            "does not bind to ports",
        ),
        (
            Box::new(move |db| {
                let (_, mut r) = first_rule(db);
                r["PACKET_ACTION"] = json!("DROP");
                r["PRIORITY"] = json!("65000");
                db["ACL_RULE"]["TAGGER_REWRITE|DROPPER"] = r;
            }),
            "overrides",
        ),
        (
            Box::new(move |db| {
                let (k, _) = first_rule(db);
                db["ACL_RULE"][&k]["PRIORITY"] = json!("NaN");
            }),
            "is not an integer from 1 to 65535",
        ),
        (
            Box::new(move |db| {
                let (_, mut r) = first_rule(db);
                r["SET_DSCP"] =
                    json!((super::dir::number(&r["SET_DSCP"]).unwrap() + 1).to_string());
                db["ACL_RULE"]["TAGGER_REWRITE|TWIN"] = r;
            }),
            "the order is the ASIC's",
        ),
        (
            Box::new(move |db| {
                let (k, _) = first_rule(db);
                db["ACL_RULE"][&k]["SRC_IP"] = json!("10.0.0.1/32");
            }),
            "field SRC_IP is not one",
        ),
    ];
    for (mutate, want) in cases {
        let dir = written(&ex);
        edit_one(dir.path(), node, mutate);
        let err = read(&t, dir.path()).unwrap_err().to_string();
        assert!(err.contains(want), "{want}: {err}");
    }
    // A drop below every rewrite never acts: read back and verified as
    // before.
    let dir = written(&ex);
    edit_one(dir.path(), node, |db| {
        let (_, mut r) = first_rule(db);
        r["PACKET_ACTION"] = json!("DROP");
        r["PRIORITY"] = json!("1");
        db["ACL_RULE"]["TAGGER_REWRITE|FLOOR"] = r;
    });
    let back = read(&t, dir.path()).unwrap();
    assert!(crate::verify::verify(&t, &back, Some(&e)).ok());
}

/// The smaller gaps: a lossless queue without BUFFER_QUEUE, a pfc_enable
/// SONiC's pattern refuses, and summary.json fields of the wrong type are
/// refused, naming what is wrong.
#[test]
fn buffers_patterns_and_summary_types_are_checked() {
    let (t, _, r) = plan("fattree:k=4", "kbounce:1", "clos");
    let ex = export(&t, &r, &Options::default()).unwrap();
    type Mutation = fn(&mut Value);
    let cases: [(Mutation, &str); 4] = [
        (
            |db| {
                let q = db["BUFFER_QUEUE"].as_object_mut().unwrap();
                let k = q
                    .keys()
                    .find(|k| k.starts_with("Ethernet0|"))
                    .unwrap()
                    .clone();
                q.remove(&k);
            },
            "has no BUFFER_QUEUE",
        ),
        (
            |db| db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = json!("3,4,9"),
            "does not match SONiC's pattern",
        ),
        (
            |db| db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = json!("3, 4"),
            "does not match SONiC's pattern",
        ),
        (
            |db| db["BUFFER_QUEUE"]["Ethernet0|3"]["profile"] = json!("GONE"),
            "BUFFER_PROFILE|GONE, which is not defined",
        ),
    ];
    for (mutate, want) in cases {
        let dir = written(&ex);
        edit(dir.path(), &ex, mutate);
        let err = read(&t, dir.path()).unwrap_err().to_string();
        assert!(err.contains(want), "{want}: {err}");
    }
    for (key, value, want) in [
        (
            "classes",
            json!("x"),
            "classes = \"x\" is not a list of tags",
        ),
        ("classes", json!(["x"]), "classes: \"x\" is not a tag"),
        ("topology", json!(4), "topology = 4 is not a string"),
        ("switches", json!({}), "switches = {} is not a list"),
    ] {
        for exported in [&ex, &table(&t, &r).unwrap()] {
            let dir = written(exported);
            let p = dir.path().join("summary.json");
            let mut s: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            s[key] = value.clone();
            std::fs::write(&p, s.to_string()).unwrap();
            let err = read(&t, dir.path()).unwrap_err().to_string();
            assert!(err.contains(want), "{want}: {err}");
        }
    }
}

/// A neutral table's ports must be the topology's: each link port under
/// its name with its link and peer, host ports after, none twice.
#[test]
fn table_ports_must_match_the_topology() {
    let (t, _, r) = plan("fattree:k=4", "kbounce:1", "clos");
    let tb = table(&t, &r).unwrap();
    type Mutation = fn(&mut Value);
    let cases: [(Mutation, &str); 4] = [
        (
            |db| db["ports"][0]["name"] = json!("Ethernet99"),
            "the topology names that port",
        ),
        (
            |db| {
                let p = db["ports"][0]["peer"].as_u64().unwrap();
                db["ports"][0]["peer"] = json!(p + 1);
            },
            "but in the topology it is link",
        ),
        (
            |db| {
                let (a, b) = (db["ports"][0].clone(), db["ports"][1].clone());
                db["ports"][0] = b;
                db["ports"][1] = a;
            },
            "the topology names that port",
        ),
        (|db| db["ports"] = json!("all"), "is not a list"),
    ];
    for (mutate, want) in cases {
        let dir = written(&tb);
        edit(dir.path(), &tb, mutate);
        let err = read(&t, dir.path()).unwrap_err().to_string();
        assert!(err.contains(want), "{want}: {err}");
    }
}

/// A caller can tell an export's refusals apart by kind: the target, the
/// mapping, a plan the maps cannot encode, and a directory that does not
/// read back.
#[test]
fn export_errors_have_kinds_a_caller_can_match() {
    use crate::error::ExportKind;
    let kind = |e: Error| match e {
        Error::Export { kind, .. } => kind,
        other => panic!("not an export error: {other}"),
    };
    assert_eq!(
        kind("cisco:x".parse::<Target>().unwrap_err()),
        ExportKind::Target
    );
    assert_eq!(
        "json:out".parse::<Target>().unwrap(),
        Target {
            format: Format::Json,
            dir: "out".into()
        }
    );
    assert_eq!(
        kind(Mapping::new(vec![3, 3], vec![3]).unwrap_err()),
        ExportKind::Mapping
    );
    let (t, _, r) = plan("fattree:k=4", "kbounce:1", "clos");
    let short = Options {
        mapping: Mapping::new(vec![26], vec![4, 3]).unwrap(),
        ..Default::default()
    };
    assert_eq!(
        kind(export(&t, &r, &short).unwrap_err()),
        ExportKind::Mapping
    );
    // An entry sending a packet back out of the link it came in on.
    let mut u_turn = r.clone();
    let e = u_turn
        .entries
        .iter_mut()
        .find(|e| e.in_link.is_some())
        .unwrap();
    e.out_link = e.in_link.unwrap();
    assert_eq!(
        kind(build(&t, &u_turn, Format::Sonic, &Options::default()).unwrap_err()),
        ExportKind::Plan
    );
    let ex = export(&t, &r, &Options::default()).unwrap();
    let dir = written(&ex);
    std::fs::write(dir.path().join("0.json"), "{ not json").unwrap();
    assert_eq!(
        kind(read(&t, dir.path()).unwrap_err()),
        ExportKind::ReadBack
    );
}

/// The rules stage's traffic-class figures (nodes classified in parallel,
/// no maps written) are the export's own, on every family and algorithm
/// and on a plan past the free traffic classes.
#[test]
fn traffic_class_figures_match_the_export() {
    let (t, _, r) = plan("jellyfish:n=30,ports=8,r=5,seed=2", "shortest", "brute");
    let mut plans: Vec<(Topology, RuleSet)> = vec![(t, r)];
    for (topo, elp, algo) in PLANS {
        let (t, _, r) = plan(topo, elp, algo);
        plans.push((t, r));
    }
    let mut over = 0;
    for (t, r) in &plans {
        let ex = export(t, r, &Options::default()).unwrap();
        let (max, over_tcs) = traffic_classes(t, r).unwrap();
        assert_eq!(max as u64, ex.summary["sonic_tcs_max"].as_u64().unwrap());
        assert_eq!(
            over_tcs as u64,
            ex.summary["sonic_switches_over_tcs"].as_u64().unwrap()
        );
        over += over_tcs;
    }
    assert!(over > 0, "some plan needs ACL rules");
}
