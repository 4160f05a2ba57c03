//! `tagger report`: the page parses, every chart holds one mark per data
//! point, nothing is fetched from elsewhere, and failures are listed.

use arrow_array::Array;
use arrow_array::cast::AsArray;
use quick_xml::events::Event;
use tagger::sweep::{self, Options, Sweep};

const SPEC: &str = r#"
name = "report-test"
seed = 1
cable_m = [100, 1000]

[[group]]
name = "ft"
topology = "fattree"
params = { k = [4, 6] }
elp = ["kbounce:1", "kbounce:2"] # kbounce:2 is past clos:1: failed rows
algo = "clos:1"

[[group]]
name = "jf"
topology = "jellyfish"
params = { n = 24, ports = 6, r = 4 }
elp = "shortest"
failures = ["links:1,trials=3", "links:3,trials=3"]
routing = ["converged", "local"]
"#;

/// Per chart: (data-points attribute, circles inside, title).
fn figures(html: &str) -> Vec<(usize, usize, String)> {
    let mut r = quick_xml::Reader::from_str(html);
    r.config_mut().check_end_names = true;
    let mut out: Vec<(usize, usize, String)> = Vec::new();
    let mut in_fig = false;
    let mut in_caption = false;
    loop {
        match r.read_event().expect("the page is well-formed") {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) => {
                let name = e.name().as_ref().to_vec();
                for a in e.attributes() {
                    let a = a.unwrap();
                    let key = a.key.as_ref().to_vec();
                    let v = a.unescape_value().unwrap().to_string();
                    assert!(
                        key != b"src" && (key != b"href" || v.starts_with('#')),
                        "external reference {v}"
                    );
                    if v.contains("http") {
                        assert!(
                            key == b"xmlns" && v == "http://www.w3.org/2000/svg",
                            "external reference {v}"
                        );
                    }
                    if name == b"figure" && key == b"data-points" {
                        out.push((v.parse().unwrap(), 0, String::new()));
                        in_fig = true;
                    }
                }
                if in_fig && name == b"circle" {
                    out.last_mut().unwrap().1 += 1;
                }
                if in_fig && name == b"b" {
                    in_caption = true;
                }
            }
            Event::Text(t) if in_caption => {
                out.last_mut().unwrap().2 += &t.decode().unwrap();
                in_caption = false;
            }
            Event::End(e) if e.name().as_ref() == b"figure" => in_fig = false,
            _ => {}
        }
    }
    out
}

#[test]
fn report_charts_every_point_and_stands_alone() {
    let dir = tempfile::tempdir().unwrap();
    let sw = Sweep::parse(SPEC, "report-test.toml", 100).unwrap();
    let done = sweep::execute(
        dir.path(),
        &sw,
        &Options {
            jobs: 2,
            resume: false,
            shard: None,
        },
        |_| {},
    )
    .unwrap();
    assert!(done.failed > 0);
    let html = tagger::report::html(dir.path()).unwrap();
    let figs = figures(&html);
    let titles: Vec<&str> = figs.iter().map(|f| f.2.as_str()).collect();
    assert_eq!(
        titles,
        [
            "Which algorithm needs the fewest lossless priorities?",
            "Which switches do not fit, and by how much?",
            "How many rules does each switch hold?",
            "Where does the time go as networks grow?",
            "How long does each algorithm take to tag?",
            "Does plain PFC deadlock after failures?",
            "How much traffic does Tagger keep lossless after failures?",
        ]
    );
    for (points, circles, title) in &figs {
        assert_eq!(points, circles, "{title}");
        assert!(*points > 0, "{title}");
    }
    // The priorities chart has one point per successful scenario, and the
    // fit chart two (its buffer and its queue panel).
    let ok = done.rows.iter().filter(|r| r.error.is_none()).count();
    assert_eq!(figs[0].0, ok);
    assert_eq!(figs[1].0, 2 * ok);
    // Its table lists exactly the scenarios where some switch does not fit.
    let batches = tagger::output::parquet::read_batches(&dir.path().join("runs.parquet")).unwrap();
    let mut misfits = 0;
    for b in &batches {
        let col = |name: &str| {
            b.column_by_name(name)
                .unwrap()
                .as_primitive::<arrow_array::types::UInt64Type>()
                .clone()
        };
        let (ob, oq) = (col("switches_over_buffer"), col("switches_over_queues"));
        misfits += (0..b.num_rows())
            .filter(|&i| ob.is_valid(i) && ob.value(i) + oq.value(i) > 0)
            .count();
    }
    assert!(misfits > 0, "the spec's 1000 m cables should not fit");
    let fit = html.split("<figure").nth(2).unwrap();
    assert_eq!(
        fit.matches("<tr>").count(),
        misfits.min(12) + 1,
        "header and one row each, at most 12"
    );
    // The failure charts: the lossless share has one point per scenario
    // that ran failures; the CBD rate one per distinct (failure count,
    // rate) of a topology and routing (plans of one topology share their
    // trials), here seeded Jellyfish differing per scenario.
    let with_failures = done.rows.iter().filter(|r| r.failures.is_some()).count();
    assert_eq!(with_failures, 8);
    assert_eq!(figs[6].0, with_failures);
    assert!((4..=with_failures).contains(&figs[5].0));
    // The priorities chart: a panel per family and ELP (fat-tree's
    // kbounce:2 rows all failed, so it has none), and its legend names
    // algorithms without their effort options (`clos:1` is clos).
    let prio = html.split("<figure").nth(1).unwrap();
    for panel in ["fattree, kbounce:1", "jellyfish, shortest"] {
        assert!(prio.contains(&format!("title=\"{panel}\"")), "{panel}");
    }
    assert!(!prio.contains("title=\"fattree, kbounce:2\""));
    assert!(prio.contains("></span>clos</li>"), "clos in the legend");
    assert!(!prio.contains("clos:1</li>"));
    // An empty runs table (a shard that got no scenario) gives a page
    // without charts, not a panic.
    let empty = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(empty.path().join("runs.parquet")).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batches[0].schema(), None).unwrap();
    w.write(&batches[0].slice(0, 0)).unwrap();
    w.close().unwrap();
    assert!(figures(&tagger::report::html(empty.path()).unwrap()).is_empty());
    // Failed scenarios are listed with their errors; the spec is quoted.
    assert!(html.contains("<h2>Failed scenarios</h2>"));
    assert!(html.contains("not within kbounce:1"));
    assert!(html.contains("report-test"));
    assert!(html.contains("routing = [&quot;converged&quot;, &quot;local&quot;]"));
}

#[test]
fn growth_exponent_is_the_loglog_slope() {
    let pts: Vec<(f64, f64)> = (1..20)
        .map(|i| (i as f64, 3.0 * (i as f64).powf(1.5)))
        .collect();
    let k = tagger::report::loglog_slope(&pts).unwrap();
    assert!((k - 1.5).abs() < 1e-9, "{k}");
    assert_eq!(tagger::report::loglog_slope(&[(1.0, 1.0)]), None);
}
