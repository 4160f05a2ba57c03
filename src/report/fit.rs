//! "Which switches do not fit, and by how much?": the buffer left at the
//! tightest switch and the queues the busiest one needs, with a table of
//! the worst scenarios.

use super::draw::{Axes, Band, Panel, Scale, lines};
use super::{Draft, Names, Runs, is_baseline, s};
use std::collections::{BTreeMap, BTreeSet};

/// Rows of the table: the worst scenarios.
const MISFITS_SHOWN: usize = 12;

const HEADER: [&str; 13] = [
    "topology",
    "trial",
    "ELP",
    "algorithm",
    "switch",
    "cable m",
    "classes",
    "switches",
    "over buffer",
    "least buffer left MiB",
    "over queues",
    "priorities / queues",
    "over ACL",
];

fn mib(b: f64) -> f64 {
    b / f64::from(1u32 << 20)
}

/// The columns the chart reads beside [`Runs`]'.
struct Fit {
    profile: Vec<Option<String>>,
    cable: Vec<Option<f64>>,
    margin: Vec<Option<f64>>,
    p_switch: Vec<Option<f64>>,
    queues: Vec<Option<f64>>,
    over_b: Vec<Option<f64>>,
    over_q: Vec<Option<f64>>,
    over_a: Vec<Option<f64>>,
    classes: Vec<Option<f64>>,
    trial: Vec<Option<f64>>,
}

impl Fit {
    fn of(r: &Runs) -> Fit {
        let c = &r.cols;
        Fit {
            profile: c.str("switch_profile"),
            cable: c.num("cable_m"),
            margin: c.num("buffer_margin_min_bytes"),
            p_switch: c.num("priorities_per_switch_max"),
            queues: c.num("lossless_queues"),
            over_b: c.num("switches_over_buffer"),
            over_q: c.num("switches_over_queues"),
            over_a: c.num("switches_over_acl"),
            classes: c.num("classes"),
            trial: c.num("trial"),
        }
    }

    /// Switches failing some check in row `i`.
    fn failing(&self, i: usize) -> f64 {
        [&self.over_b, &self.over_q, &self.over_a]
            .iter()
            .map(|v| v[i].unwrap_or(0.0))
            .sum()
    }

    /// Row `i` of the table.
    fn row(&self, r: &Runs, i: usize) -> Vec<String> {
        let num = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0}"));
        vec![
            s(&r.topo, i),
            num(self.trial[i]),
            s(&r.elp, i),
            s(&r.algo, i),
            s(&self.profile, i),
            num(self.cable[i]),
            num(self.classes[i]),
            num(r.switches[i]),
            num(self.over_b[i]),
            self.margin[i].map_or("-".into(), |m| format!("{:.1}", mib(m))),
            num(self.over_q[i]),
            format!("{} / {}", num(self.p_switch[i]), num(self.queues[i])),
            num(self.over_a[i]),
        ]
    }
}

pub(super) fn draft(r: &Runs) -> Draft {
    let fit = Fit::of(r);
    let cables_vary = (0..r.n)
        .filter_map(|i| fit.cable[i].map(f64::to_bits))
        .collect::<BTreeSet<_>>()
        .len()
        > 1;
    let (mut buf, mut que) = (
        BTreeMap::<usize, Vec<(f64, f64)>>::new(),
        BTreeMap::<usize, Vec<(f64, f64)>>::new(),
    );
    let mut limits = Vec::new();
    // One switch model (the default sweep): colour by algorithm instead,
    // which then says whose plans do not fit.
    let one_model = r
        .ok_rows()
        .map(|i| s(&fit.profile, i))
        .collect::<BTreeSet<_>>()
        .len()
        <= 1;
    let mut names = Names::seeded_if(one_model, &r.algos);
    let mut misfit_rows: Vec<((bool, f64, f64), Vec<String>)> = Vec::new();
    for i in r.ok_rows() {
        let idx = names.idx(&if one_model {
            s(&r.algo, i)
        } else {
            s(&fit.profile, i)
        });
        let x = if cables_vary { fit.cable[i] } else { r.size[i] };
        if let (Some(x), Some(m)) = (x, fit.margin[i]) {
            buf.entry(idx).or_default().push((x, mib(m)));
        }
        if let (Some(x), Some(p), Some(q)) = (r.size[i], fit.p_switch[i], fit.queues[i]) {
            que.entry(idx).or_default().push((x, p));
            limits.push((x, q));
        }
        let failing = fit.failing(i);
        if failing > 0.0 {
            // Candidate plans before the baselines; worst first: most
            // switches failing, then the least buffer.
            let key = (
                is_baseline(&s(&r.algo, i)),
                -failing,
                fit.margin[i].unwrap_or(0.0),
            );
            misfit_rows.push((key, fit.row(r, i)));
        }
    }
    let misfits = misfit_rows.len();
    let baseline_misfits = misfit_rows.iter().filter(|m| m.0.0).count();
    misfit_rows.sort_by(|a, b| {
        a.0.0
            .cmp(&b.0.0)
            .then(a.0.1.total_cmp(&b.0.1))
            .then(a.0.2.total_cmp(&b.0.2))
    });
    // Algorithms side by side around each size, as in the first chart,
    // each over a bar at the model's lossless queues.
    let band = Band::new(
        que.values().flatten().map(|q| q.0),
        que.keys().copied().collect(),
    );
    for (idx, pts) in que.iter_mut() {
        for q in pts.iter_mut() {
            q.0 = band.at(*idx, q.0);
        }
    }
    let bars: Vec<(f64, f64, f64)> = limits
        .iter()
        .map(|&(x, q)| {
            let (lo, hi) = band.around(x);
            (lo, hi, q)
        })
        .collect();
    let mut table = vec![HEADER.map(String::from).to_vec()];
    table.extend(misfit_rows.into_iter().take(MISFITS_SHOWN).map(|r| r.1));
    limits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    limits.dedup();
    let buffer = Axes {
        x: if cables_vary {
            "switch-to-switch cable (m)"
        } else {
            "switches"
        },
        y: "buffer margin (MiB)",
        xs: if cables_vary {
            Scale::Linear
        } else {
            Scale::Log
        },
        ys: Scale::Linear,
    };
    let queues = Axes {
        x: "switches",
        y: "priorities at one switch",
        xs: Scale::Log,
        ys: Scale::Integer,
    };
    let panels = vec![
        Panel {
            hline: Some(0.0),
            ..Panel::new(
                "buffer left at the tightest switch".into(),
                buffer,
                lines(buf),
            )
        },
        Panel {
            bars,
            x_ticks: band.ticks,
            ..Panel::new(
                "lossless queues the busiest switch needs".into(),
                queues,
                lines(que),
            )
        },
    ];
    let colour = if one_model {
        r.ok_rows().next().map_or(String::new(), |i| {
            format!(
                "Every scenario uses the {} switch model: coloured by algorithm.",
                s(&fit.profile, i)
            )
        })
    } else {
        "Coloured by switch model.".to_string()
    };
    Draft {
        marks: &[("lossless queues of the model", "bar")],
        table: if misfits == 0 { Vec::new() } else { table },
        ..Draft::new(
            "Which switches do not fit, and by how much?",
            format!(
                "{colour} One circle per scenario in each panel. Left: the lossless buffer left after PFC headroom at the tightest switch; below the dashed zero line some switch does not fit. Right: the most lossless priorities at one switch, algorithms side by side in a band around the size; above the grey bar (the model's lossless queues) it does not fit. {}",
                misfit_note(misfits, baseline_misfits)
            ),
            panels,
            names,
        )
    }
}

/// What the table under the chart lists, with the misfits of the
/// baseline algorithms counted apart (they are there to compare against,
/// and most of them need more priorities than a switch has).
fn misfit_note(misfits: usize, baselines: usize) -> String {
    let whose = if baselines == 0 {
        String::new()
    } else {
        format!(
            " ({} of candidate plans, {baselines} of the baseline algorithms {}, listed after them)",
            misfits - baselines,
            super::BASELINES.join(" and ")
        )
    };
    if misfits == 0 {
        "Every switch of every scenario fits.".to_string()
    } else if misfits <= MISFITS_SHOWN {
        format!(
            "The table lists the {misfits} scenarios where some switch does not fit{whose}, with how many switches fail each check."
        )
    } else {
        format!(
            "In {misfits} scenarios some switch does not fit{whose}; the table lists the {MISFITS_SHOWN} worst (candidate plans first; most switches failing, then the least buffer left), and DuckDB lists them all: SELECT * FROM 'runs.parquet' WHERE switches_over_buffer + switches_over_queues + coalesce(switches_over_acl, 0) > 0."
        )
    }
}
