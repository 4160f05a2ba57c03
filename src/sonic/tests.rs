//! The export's unit tests: what it writes. The read-back's judgement of
//! hand-edited exports is in `readback_tests.rs`.

use super::*;
use serde_json::json;

use crate::rules::RuleSet;
use crate::testing::{plan_fitted, plan_on_within};

pub(super) fn written(ex: &Export) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ex).unwrap();
    dir
}

pub(super) fn round_trip(t: &Topology, r: &RuleSet, opts: &Options) -> (Export, ReadBack) {
    let ex = export(t, r, opts).unwrap();
    let dir = written(&ex);
    (ex, read(t, dir.path()).unwrap())
}

/// The profile `BUFFER_PG` gives priority group `g` of `port` (a key
/// `port|g` or a range `port|lo-hi` holding it), or null.
pub(super) fn pg_of(c: &Value, port: &str, g: u32) -> Value {
    keyed_profile(c, "BUFFER_PG", port, g)
}

/// The profile `BUFFER_QUEUE` gives queue `q` of `port`, or null.
pub(super) fn queue_of(c: &Value, port: &str, q: u32) -> Value {
    keyed_profile(c, "BUFFER_QUEUE", port, q)
}

fn keyed_profile(c: &Value, table: &str, port: &str, g: u32) -> Value {
    for (k, e) in c[table].as_object().into_iter().flatten() {
        let Some(r) = k.strip_prefix(port).and_then(|r| r.strip_prefix('|')) else {
            continue;
        };
        let (lo, hi) = r.split_once('-').unwrap_or((r, r));
        if (lo.parse::<u32>().unwrap()..=hi.parse().unwrap()).contains(&g) {
            return e["profile"].clone();
        }
    }
    Value::Null
}

/// Options whose profile has a lossless queue per priority a plan here
/// uses (Spectrum-2 keeps two lossless).
pub(super) fn roomy() -> Options {
    let mut o = Options::default();
    o.profile.lossless_queues = 7;
    o
}

/// Every entry of `plan` is in `back` with the same action: the decoded
/// function does what the plan says on its keys (and may do more: the
/// classes' choices on other packets).
pub(super) fn contains_plan(back: &RuleSet, plan: &RuleSet) {
    for e in &plan.entries {
        assert!(
            back.entries.binary_search(e).is_ok(),
            "the read-back lacks {e:?}"
        );
    }
    let key = |e: &crate::rules::Entry| (e.node, e.in_link, e.tag, e.out_link);
    for w in back.entries.windows(2) {
        assert_ne!(key(&w[0]), key(&w[1]), "one key, two actions");
    }
}

const PLANS: [(&str, &str, &str); 9] = [
    ("fattree:k=8", "kbounce:1", "clos"),
    ("fattree:k=4", "shortest", "greedy"),
    ("fattree:k=6", "kbounce:2", "greedy"),
    ("jellyfish:n=30,ports=8,r=5,seed=2", "shortest", "greedy"),
    ("bcube:n=3,k=1", "dor", "greedy"),
    ("hyperx:l=2,s=4,t=1", "shortest", "search"),
    ("leafspine:leaves=4,spines=2,hosts=1", "kbounce:1", "clos"),
    ("fattree:k=4", "shortest", "brute"),
    ("leafspine:leaves=3,spines=2,hosts=1", "kbounce:1", "exact"),
];

/// Every family and algorithm, planned within a switch's seven traffic
/// classes: the maps decode to every entry of the plan (and the classes'
/// choices for every other packet), the whole fabric passes the read-back's
/// standard, and the rebuilt rules verify with the ELP replayed; the
/// neutral table does too. No SONiC export has an ACL table.
#[test]
fn exports_read_back_and_verify() {
    for (topo, elp, algo) in PLANS {
        let (t, e, r) = plan_fitted(topo, elp, algo);
        let (ex, back) = round_trip(&t, &r, &roomy());
        contains_plan(&back.rules, &r);
        assert_eq!(
            (
                back.rules.topology.as_str(),
                back.rules.priorities,
                back.rules.initial_tag
            ),
            (r.topology.as_str(), r.priorities, r.initial_tag)
        );
        let rep = crate::verify::verify(&t, &back.rules, Some(&e));
        assert!(rep.ok(), "{topo} {elp} {algo}: {rep}");
        let most = ex.switches.iter().map(|s| s.tcs).max().unwrap();
        assert!(most <= 7, "{topo} {algo}: {most}");
        assert_eq!(ex.summary["tcs_max"], json!(most));
        assert_eq!(traffic_classes(&t, &r, 7).unwrap(), (most, 0));
        for s in &ex.switches {
            for table in ["ACL_TABLE", "ACL_RULE", "ACL_TABLE_TYPE"] {
                assert!(s.config[table].is_null(), "{topo}: {table}");
            }
        }
        // The neutral table: the same classes.
        let tb = table(&t, &r, Some(elp)).unwrap();
        let dir = written(&tb);
        let nb = read(&t, dir.path()).unwrap();
        contains_plan(&nb.rules, &r);
        assert_eq!(nb.rules.entries, back.rules.entries, "{topo} {algo}");
        assert_eq!(nb.elp.as_deref(), Some(elp));
        assert_eq!(tb.summary["classes_max"], json!(most));
    }
}

/// SONiC's YANG patterns and ranges (sonic-port-qos-map, the map tables,
/// sonic-buffer-pg): pfc_enable `([0-7](,[0-7])*)?`, DSCP 0-63, TC 0-15,
/// queue and priority group 0-7, BUFFER_PG keys `port|pg`, buffer sizes
/// numbers; and every reference resolves. (tests/sonic_yang.rs validates
/// exports against SONiC's own models.)
#[test]
fn exports_keep_sonic_field_patterns() {
    for (topo, elp, algo) in PLANS {
        let (t, _, r) = plan_fitted(topo, elp, algo);
        let ex = export(&t, &r, &roomy()).unwrap();
        for s in &ex.switches {
            let c = &s.config;
            for (port, b) in c["PORT_QOS_MAP"].as_object().unwrap() {
                if port == "global" {
                    continue;
                }
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
                ("DSCP_TO_TC_MAP", 63, 15),
                ("TC_TO_QUEUE_MAP", 15, 7),
                ("TC_TO_PRIORITY_GROUP_MAP", 15, 7),
                ("TC_TO_DSCP_MAP", 15, 63),
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
                    // sonic-buffer-pg's pattern: `[0-7]((-)[0-7])?`.
                    let (lo, hi) = n.split_once('-').unwrap_or((n, n));
                    let (lo, hi) = (lo.parse::<u32>().unwrap(), hi.parse::<u32>().unwrap());
                    assert!(lo <= hi && hi <= 7, "{k}");
                    let prof = v["profile"].as_str().unwrap();
                    let p = &c["BUFFER_PROFILE"][prof];
                    assert!(p["size"].as_str().unwrap().parse::<u64>().is_ok(), "{prof}");
                }
            }
        }
    }
}

/// A Clos bounce plan needs few traffic classes: two per arriving priority
/// (from above and from below) and the hosts'; fat-tree k=8 `kbounce:2`,
/// three priorities, fits in six.
#[test]
fn clos_plans_need_few_traffic_classes() {
    let (t, _, r) = plan_fitted("fattree:k=8", "kbounce:1", "clos");
    let ex = export(&t, &r, &Options::default()).unwrap();
    let most = ex.switches.iter().map(|s| s.tcs).max().unwrap();
    assert!(most <= 4, "{most}");
    let (t, _, r) = plan_fitted("fattree:k=8", "kbounce:2", "clos");
    let ex = export(&t, &r, &roomy()).unwrap();
    let most = ex.switches.iter().map(|s| s.tcs).max().unwrap();
    assert!(most <= 6, "{most}");
}

/// A plan needing more traffic classes than the profile has is refused
/// (#45): the message names the switches and what each needs, and points at
/// `--max-tcs`; the neutral table, which has no such limit, takes it. A
/// profile with more traffic classes takes it too.
#[test]
fn a_plan_over_the_traffic_classes_is_refused() {
    let t = crate::testing::topo("jellyfish:n=60,ports=16,r=10,seed=1");
    let (t, _, r) = plan_on_within(t, "shortest", "greedy", None);
    let (most, over) = traffic_classes(&t, &r, 7).unwrap();
    assert!(over > 0 && most > 7, "{most} {over}");
    let err = export(&t, &r, &roomy()).unwrap_err().to_string();
    assert!(
        err.contains("needs more traffic classes")
            && err.contains(&format!("needs {most}"))
            && err.contains("--max-tcs"),
        "{err}"
    );
    let tb = table(&t, &r, None).unwrap();
    assert_eq!(tb.summary["classes_max"], json!(most));
    let mut big = roomy();
    big.profile.traffic_classes = 16;
    if most <= 15 {
        assert!(export(&t, &r, &big).is_ok());
    }
}

/// A switch whose lossless queues or headroom do not fit the profile is
/// refused unless the export is told to write it anyway, and then its fit
/// is in summary.json (#52 item 8).
#[test]
fn exports_check_the_fit() {
    let (t, _, r) = plan_fitted("fattree:k=4", "kbounce:2", "clos");
    assert_eq!(r.priorities, 3);
    let err = export(&t, &r, &Options::default()).unwrap_err().to_string();
    assert!(
        err.contains("do not fit spectrum2") && err.contains("3 lossless queues"),
        "{err}"
    );
    let loose = Options {
        require_fit: false,
        ..Default::default()
    };
    let ex = export(&t, &r, &loose).unwrap();
    assert!(!ex.misfits().is_empty());
    assert!(ex.summary["switches_not_fitting"].as_u64().unwrap() > 0);
    assert_eq!(ex.summary["switches"][0]["fits"], json!(false));
    // Far too long cables: every switch over its buffer.
    let (t, _, r) = plan_fitted("fattree:k=4", "kbounce:1", "clos");
    let mut far = Options::default();
    far.profile.cable_m = 100_000.0;
    let err = export(&t, &r, &far).unwrap_err().to_string();
    assert!(err.contains("headroom"), "{err}");
}

/// Buffers are the capacity model's: on the default profile (Spectrum-2,
/// 100 Gb/s, 300 m switch-to-switch cables, 5 m host cables) each port's
/// lossless group gets the headroom for its own link, a host port SONiC's
/// own test vector (100 Gb/s over 5 m: xoff 82,944, xon 18,432); a shared
/// headroom pool reserves xon only.
#[test]
fn buffers_come_from_the_capacity_model() {
    let (t, _, r) = plan_fitted("fattree:k=4", "kbounce:1", "clos");
    let p = crate::capacity::Profile::default();
    let ex = export(&t, &r, &Options::default()).unwrap();
    let tor = ex
        .switches
        .iter()
        .find(|s| t.node(s.node).hosts > 0)
        .unwrap();
    let c = &tor.config;
    let up = &pg_of(c, "Ethernet0", 3);
    let h = crate::capacity::port_headroom(&p, 100.0, 300.0);
    assert_eq!(up, &json!("TAGGER_PG_LOSSLESS_100000_300m"));
    assert_eq!(
        c["BUFFER_PROFILE"][up.as_str().unwrap()],
        json!({"pool": INGRESS_POOL, "xoff": h.xoff.to_string(), "xon": h.xon.to_string(), "size": h.size().to_string(), "dynamic_th": "0"})
    );
    let host = &pg_of(c, &format!("Ethernet{}", 4 * t.degree(tor.node)), 3);
    assert_eq!(host, &json!("TAGGER_PG_LOSSLESS_100000_5m"));
    assert_eq!(
        c["BUFFER_PROFILE"][host.as_str().unwrap()],
        json!({"pool": INGRESS_POOL, "xoff": "82944", "xon": "18432", "size": "101376", "dynamic_th": "0"})
    );
    // The bounce priority arrives from the aggregation layer.
    assert_eq!(pg_of(c, "Ethernet0", 4), *up);
    assert_eq!(c["CABLE_LENGTH"]["AZURE"]["Ethernet0"], json!("300m"));
    assert_eq!(c["PORT"]["Ethernet0"]["speed"], json!("100000"));
    // Leaving lossless queues are buffered as lossless.
    assert!(queue_of(c, "Ethernet0", 3).is_string());
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
    // A cable of 2.5 m is written as 3 m, and sized for 3 m.
    let mut odd = Options::default();
    odd.profile.cable_m = 2.5;
    let ex = export(&t, &r, &odd).unwrap();
    let c = &ex.switches[0].config;
    assert_eq!(c["CABLE_LENGTH"]["AZURE"]["Ethernet0"], json!("3m"));
    let h3 = crate::capacity::port_headroom(&odd.profile, 100.0, 3.0);
    assert_eq!(
        c["BUFFER_PROFILE"]["TAGGER_PG_LOSSLESS_100000_3m"]["xoff"],
        json!(h3.xoff.to_string())
    );
}

/// A configured mapping is used and read back; a plan needing more tags or
/// queues than it has is refused, naming the tag or priority; a bad mapping
/// names the list and index.
#[test]
fn mappings_are_configurable_and_checked() {
    let (t, e, r) = plan_fitted("fattree:k=4", "kbounce:1", "clos");
    let m = Mapping::new(vec![26, 46], vec![4, 3]).unwrap();
    let opts = Options {
        mapping: m.clone(),
        ..Default::default()
    };
    let (ex, back) = round_trip(&t, &r, &opts);
    contains_plan(&back.rules, &r);
    assert!(crate::verify::verify(&t, &back.rules, Some(&e)).ok());
    let c = &ex.switches[0].config;
    let d2t = c["DSCP_TO_TC_MAP"].as_object().unwrap();
    // Every DSCP value but the tags' is one lossy class (the stock base
    // keeps none of its own: --keep-dscp none).
    assert!(
        d2t.iter()
            .filter(|(k, _)| k.starts_with("TAGGER_"))
            .all(|(_, m)| {
                let others: std::collections::BTreeSet<String> = m
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(k, _)| *k != "26" && *k != "46")
                    .map(|(_, v)| v.to_string())
                    .collect();
                others.len() == 1
            })
    );
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
    assert_eq!(
        Mapping::parse_list("3,x"),
        Err(MappingError::NotANumber { item: "x".into() })
    );
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
    let (t, e, r) = plan_on_within(t, "kbounce:1", "clos", Some(7));
    let (ex, back) = round_trip(&t, &r, &Options::default());
    contains_plan(&back.rules, &r);
    assert!(crate::verify::verify(&t, &back.rules, Some(&e)).ok());
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
    let tb = table(&t, &r, None).unwrap();
    assert_eq!(tb.switches[0].config["ports"][0]["name"], json!("Eth1/1"));
}

/// Host ports deliver each class in the queue of the priority it arrived
/// with, keep its DSCP, and have PFC and a lossless queue buffer there.
#[test]
fn host_ports_deliver_in_the_arriving_priority() {
    let (t, _, r) = plan_fitted("fattree:k=4", "kbounce:1", "clos");
    let ex = export(&t, &r, &Options::default()).unwrap();
    let m = Mapping::default();
    for s in ex.switches.iter().filter(|s| t.node(s.node).hosts > 0) {
        let c = &s.config;
        let host = format!("Ethernet{}", 4 * t.degree(s.node));
        let b = &c["PORT_QOS_MAP"][&host];
        assert!(b.get("tc_to_dscp_map").is_none());
        let tq = &c["TC_TO_QUEUE_MAP"][b["tc_to_queue_map"].as_str().unwrap()];
        let pg = &c["TC_TO_PRIORITY_GROUP_MAP"][b["tc_to_pg_map"].as_str().unwrap()];
        // The lossless classes' (those in a paused group).
        let pfc = b["pfc_enable"].as_str().unwrap();
        for (tc, g) in pg.as_object().unwrap() {
            if pfc.split(',').any(|x| Some(x) == g.as_str()) {
                assert_eq!(
                    &tq[tc], g,
                    "{host}: queue of class {tc} = its arriving group"
                );
            }
        }
        // Both priorities arrive at a ToR (the bounce comes down at 2).
        let both = format!("{},{}", m.queue_of(1).unwrap(), m.queue_of(2).unwrap());
        assert_eq!(b["pfc_enable"], json!(both));
        assert!(queue_of(c, &host, m.queue_of(2).unwrap()).is_string());
    }
}

/// docs/model.md's worked example (the two bounced flows that close a
/// cycle at one priority): each algorithm's plan exports, reads back and
/// verifies against the example's paths, and the priority step shows in
/// the maps: some switch sends packets on in the second lossless queue.
#[test]
fn the_worked_example_exports_and_verifies() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/topologies");
    let t = tagger_generators::file::read_json_file(std::path::Path::new(&format!(
        "{dir}/design-example.json"
    )))
    .unwrap();
    let elp = format!("file:{dir}/design-example.paths");
    for algo in ["greedy", "search", "exact", "brute"] {
        let (t, e, r) = plan_on_within(t.clone(), &elp, algo, Some(7));
        let (ex, back) = round_trip(&t, &r, &roomy());
        contains_plan(&back.rules, &r);
        assert!(
            crate::verify::verify(&t, &back.rules, Some(&e)).ok(),
            "{algo}"
        );
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

/// A caller can tell an export's refusals apart by kind: the target, the
/// mapping, a plan the switches cannot hold, and a directory that does not
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
    assert!(matches!(
        Mapping::new(vec![3, 3], vec![3]).unwrap_err(),
        Error::Mapping {
            origin: None,
            cause: MappingError::Twice {
                list: "dscp",
                index: 1,
                value: 3
            }
        }
    ));
    let (t, _, r) = plan_fitted("fattree:k=4", "kbounce:1", "clos");
    let short = Options {
        mapping: Mapping::new(vec![26], vec![4, 3]).unwrap(),
        ..Default::default()
    };
    assert!(matches!(
        export(&t, &r, &short).unwrap_err(),
        Error::Mapping {
            cause: MappingError::NoDscp { tag: 2, len: 1 },
            ..
        }
    ));
    let mut narrow = Options::default();
    narrow.profile.traffic_classes = 2;
    assert_eq!(
        kind(build(&t, &r, Format::Sonic, &narrow).unwrap_err()),
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

/// A plan entry that sends a packet back out of the link it came in on (a
/// U-turn, which a path file can ask for) exports: the port maps express
/// it like any other rewrite, and the read-back decodes it.
#[test]
fn plan_u_turns_export() {
    let (t, _, r) = plan_fitted("leafspine:leaves=2,spines=2,hosts=1", "shortest", "greedy");
    let mut u = r.clone();
    let e = *u.entries.iter().find(|e| e.in_link.is_some()).unwrap();
    u.entries.push(crate::rules::Entry {
        out_link: e.in_link.unwrap(),
        ..e
    });
    u.entries.sort_unstable();
    assert!(crate::verify::verify(&t, &u, None).ok());
    let (_, back) = round_trip(&t, &u, &Options::default());
    contains_plan(&back.rules, &u);
}
