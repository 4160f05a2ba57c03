//! InfiniBand input end to end: a fabric as ibsim's net file and as
//! `ibnetdiscover` printed it, routed by OpenSM's DFSSSP (its real
//! `opensm-lfts.dump`, datasets/ib/), planned on exactly those routes.

mod common;

use common::{tagger, text};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/ib");

/// Both descriptions of the fabric read the same routes (16 switches, one
/// HCA each: 240 switch-to-switch routes), and the plan on them is
/// verified, proven minimal at 2 priorities where DFSSSP used 3 lanes.
#[test]
fn opensm_routes_plan_within_fewer_classes_than_its_lanes() {
    for fabric in ["jellyfish16.net", "jellyfish16.ibnetdiscover"] {
        let o = tagger(&[
            "run",
            &format!("ibnet:{DIR}/{fabric}"),
            "--elp",
            &format!("lfts:{DIR}/jellyfish16.dfsssp.lfts.dump"),
            "--algo",
            "exact:timeout=60",
            "--json",
        ]);
        assert!(o.status.success(), "{fabric}: {}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["verified"], true, "{fabric}");
        assert_eq!(v["paths"], 240, "{fabric}: {v}");
        assert_eq!(v["priorities"], 2, "{fabric}");
        assert_eq!(v["priorities_lower_bound"], 2, "{fabric}");
    }
}

/// A dump read against a topology without switch names is refused with
/// what to give instead; a fabric line at fault is named.
#[test]
fn ib_input_errors_name_the_fix_or_the_line() {
    let o = tagger(&[
        "run",
        "jellyfish:n=16,ports=5,r=4,seed=1",
        "--elp",
        &format!("lfts:{DIR}/jellyfish16.dfsssp.lfts.dump"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("ibnet:"), "{}", text(&o));
    let d = tempfile::tempdir().unwrap();
    let bad = d.path().join("bad.net");
    std::fs::write(
        &bad,
        "Switch 4 \"a\"\n[1] \"b\"[1]\n\nSwitch 4 \"b\"\n[1] \"a\"[2]\n",
    )
    .unwrap();
    let o = tagger(&["topo", &format!("ibnet:{}", bad.display())]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("line 2"), "{}", text(&o));
}
