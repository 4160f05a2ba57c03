//! Exports written into each switch's base (#71): the base's lossy
//! classes kept, no overlapping buffer keys, the buffer model honoured,
//! the patch reproducing the configuration judged.

use super::tests::written;
use super::*;
use crate::testing::plan_fitted;
use serde_json::json;

/// The fat-tree k=4 `kbounce:1` `clos` plan, and the stock bases of its
/// default export written as a `--base` directory of the switches' own.
fn own_bases() -> (Topology, crate::rules::RuleSet, tempfile::TempDir) {
    let (t, _, r) = plan_fitted("fattree:k=4", "kbounce:1", "clos");
    let ex = export(&t, &r, &Options::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for s in &ex.switches {
        std::fs::write(
            dir.path().join(format!("{}.json", s.node)),
            serde_json::to_string(s.base.as_ref().unwrap()).unwrap(),
        )
        .unwrap();
    }
    (t, r, dir)
}

/// Options exporting onto the bases in `dir`, keeping `keep`.
fn own_options(dir: &std::path::Path, keep: Option<KeepDscp>) -> Options {
    Options {
        base: Base::read(dir).unwrap(),
        keep,
        ..Default::default()
    }
}

/// The TC a DSCP value gets at `port` of a configuration.
fn tc_of(c: &Value, port: &str, d: u32) -> Value {
    let m = c["PORT_QOS_MAP"][port]["dscp_to_tc_map"].as_str().unwrap();
    c["DSCP_TO_TC_MAP"][m][d.to_string()].clone()
}

#[test]
fn the_bases_lossy_classes_are_kept() {
    let (t, r, bases) = own_bases();
    let own = |keep: Option<KeepDscp>| own_options(bases.path(), keep);
    // Every class of the stock base kept leaves two traffic classes: the
    // plan needs four, and the refusal says what to do.
    let e = export(&t, &r, &own(None)).unwrap_err().to_string();
    assert!(
        e.contains("--keep-dscp") && e.contains("--max-tcs 2"),
        "{e}"
    );
    let ex = export(&t, &r, &own(Some("46,48".parse().unwrap()))).unwrap();
    let dir = written(&ex);
    assert!(read(&t, dir.path()).is_ok());
    for s in &ex.switches {
        let c = &s.config;
        let tq = |port: &str, tc: &Value| {
            let m = c["PORT_QOS_MAP"][port]["tc_to_queue_map"].as_str().unwrap();
            c["TC_TO_QUEUE_MAP"][m][tc.as_str().unwrap()].clone()
        };
        for port in ["Ethernet0", "Ethernet4"] {
            // DSCP 46 -> TC 5 -> queue 5, 48 -> TC 6 -> queue 6, as in
            // the base, and never rewritten.
            assert_eq!(tc_of(c, port, 46), json!("5"));
            assert_eq!(tc_of(c, port, 48), json!("6"));
            assert_eq!(tq(port, &json!("5")), json!("5"));
            assert_eq!(tq(port, &json!("6")), json!("6"));
            let td = &c["PORT_QOS_MAP"][port]["tc_to_dscp_map"];
            let td = &c["TC_TO_DSCP_MAP"][td.as_str().unwrap()];
            assert!(td.get("5").is_none() && td.get("6").is_none(), "{td}");
        }
    }
    let m = &ex.summary["mapping"]["dscp_of_tag"];
    assert!(!m.as_array().unwrap().contains(&json!(46)), "{m}");
}

/// A base with `|3-4` and `|0-2` (and `|5-6`) ends with no two keys of a
/// port over one group or queue, and the patch applied to the base is the
/// configuration judged.
#[test]
fn buffer_keys_never_overlap_and_the_patch_makes_the_config() {
    let (t, _, r) = plan_fitted("fattree:k=4", "kbounce:1", "clos");
    for profile in ["spectrum2", "tomahawk"] {
        let opts = Options {
            profile: crate::capacity::Profile::builtin().remove(profile).unwrap(),
            ..Default::default()
        };
        let ex = export(&t, &r, &opts).unwrap();
        for s in &ex.switches {
            let base = s.base.as_ref().unwrap();
            assert!(base["BUFFER_QUEUE"]["Ethernet0|0-2"].is_object());
            for table in ["BUFFER_PG", "BUFFER_QUEUE"] {
                let mut seen = std::collections::BTreeSet::new();
                for k in s.config[table].as_object().unwrap().keys() {
                    let (port, r) = k.split_once('|').unwrap();
                    let (lo, hi) = r.split_once('-').unwrap_or((r, r));
                    for n in lo.parse::<u32>().unwrap()..=hi.parse().unwrap() {
                        assert!(seen.insert((port.to_string(), n)), "{profile} {table} {k}");
                    }
                }
            }
            let patch: json_patch::Patch =
                serde_json::from_value(s.patch.clone().unwrap()).unwrap();
            let mut b = base.clone();
            json_patch::patch(&mut b, &patch).unwrap();
            assert_eq!(b, s.config);
        }
        let dir = written(&ex);
        assert!(read(&t, dir.path()).is_ok(), "{profile}");
        // The read-back judges what the patch makes of the base.
        let p = dir.path().join("3.patch.json");
        let mut patch: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        patch.pop();
        std::fs::write(&p, serde_json::to_string(&patch).unwrap()).unwrap();
        let e = read(&t, dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("is not what 3.patch.json makes of 3.base.json"),
            "{e}"
        );
    }
}

/// Under the traditional model the lossless groups are buildmgrd's own
/// keys and profile name (it leaves them be); a base in a buffer model the
/// export does not know is refused by name.
#[test]
fn the_buffer_model_is_honoured() {
    let (t, r, bases) = own_bases();
    let tomahawk = crate::capacity::Profile::builtin()
        .remove("tomahawk")
        .unwrap();
    let opts = Options {
        profile: tomahawk.clone(),
        ..Default::default()
    };
    let ex = export(&t, &r, &opts).unwrap();
    let c = &ex.switches[0].config;
    let pfc = c["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"]
        .as_str()
        .unwrap();
    assert_eq!(pfc, "3,4");
    assert_eq!(
        c["BUFFER_PG"]["Ethernet0|3-4"]["profile"],
        json!("pg_lossless_100000_300m_profile")
    );
    for f in std::fs::read_dir(bases.path()).unwrap() {
        let p = f.unwrap().path();
        let mut db: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        db["DEVICE_METADATA"]["localhost"]["buffer_model"] = json!("shared");
        std::fs::write(&p, serde_json::to_string(&db).unwrap()).unwrap();
    }
    let own = own_options(bases.path(), Some(KeepDscp::None));
    let e = export(&t, &r, &own).unwrap_err().to_string();
    assert!(
        e.contains("buffer_model \"shared\" is not supported"),
        "{e}"
    );
}

/// A switch without a base, or a base of no switch, is refused by name.
#[test]
fn every_switch_has_one_base() {
    let (t, r, bases) = own_bases();
    std::fs::rename(bases.path().join("3.json"), bases.path().join("99.json")).unwrap();
    let mut db: Value =
        serde_json::from_str(&std::fs::read_to_string(bases.path().join("99.json")).unwrap())
            .unwrap();
    db["DEVICE_METADATA"]["localhost"]["hostname"] = json!("nowhere");
    std::fs::write(bases.path().join("99.json"), db.to_string()).unwrap();
    let own = own_options(bases.path(), Some(KeepDscp::None));
    let e = export(&t, &r, &own).unwrap_err().to_string();
    assert!(e.contains("99.json (hostname nowhere) is no switch"), "{e}");
    std::fs::remove_file(bases.path().join("99.json")).unwrap();
    let own = own_options(bases.path(), Some(KeepDscp::None));
    let e = export(&t, &r, &own).unwrap_err().to_string();
    assert!(e.contains("has no configuration of switch 3"), "{e}");
}

/// A switch an update step leaves without lossless entries holds its base
/// with nothing lossless: no PFC, no lossless buffer, every DSCP value in a
/// lossy class, a tag's untagged as it leaves by a link.
#[test]
fn an_idle_switch_holds_nothing_lossless() {
    let (t, _, r) = plan_fitted("fattree:k=4", "kbounce:1", "clos");
    let opts = Options::default();
    let ex = export(&t, &r, &opts).unwrap();
    let m = Mapping::from_json(&ex.summary["mapping"]).unwrap();
    let idle = super::idle_switches(&t, &[8], &m, 2, &opts).unwrap();
    let c = &idle[0].config;
    let tag = m.dscp_of(1).unwrap();
    for (port, b) in c["PORT_QOS_MAP"].as_object().unwrap() {
        if port == "global" {
            continue;
        }
        assert_eq!(b["pfc_enable"], json!(""), "{port}");
        let tc = tc_of(c, port, tag);
        let td = &c["TC_TO_DSCP_MAP"][b["tc_to_dscp_map"].as_str().unwrap()];
        assert_eq!(td[tc.as_str().unwrap()], json!("0"), "{port}");
    }
    for (k, e) in c["BUFFER_PG"].as_object().unwrap() {
        let p = e["profile"].as_str().unwrap();
        assert!(
            c["BUFFER_PROFILE"][p]["xoff"].is_null() && p != "NULL",
            "{k}: {p}"
        );
    }
    // Its patch from the switch's configuration removes the plan's maps.
    let before = ex.switches.iter().find(|s| s.node == 8).unwrap();
    let patch = json_patch::diff(&before.config, c);
    let mut b = before.config.clone();
    json_patch::patch(&mut b, &patch).unwrap();
    assert_eq!(&b, c);
}

/// A base binding a port the topology does not give the switch is refused
/// by name: traffic arriving there could be lossless outside the plan.
#[test]
fn a_bound_port_the_plan_does_not_know_is_refused() {
    let (t, r, bases) = own_bases();
    let p = bases.path().join("0.json");
    let mut db: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    db["PORT"]["Ethernet100"] = json!({"lanes": "400,401,402,403", "speed": "100000"});
    db["PORT_QOS_MAP"]["Ethernet100"] = db["PORT_QOS_MAP"]["Ethernet0"].clone();
    std::fs::write(&p, db.to_string()).unwrap();
    let own = own_options(bases.path(), Some(KeepDscp::None));
    let e = export(&t, &r, &own).unwrap_err().to_string();
    assert!(
        e.contains("switch 0: PORT_QOS_MAP|Ethernet100 binds a port the topology does not give"),
        "{e}"
    );
}
