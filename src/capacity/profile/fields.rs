//! The profile fields' readers and checks: each names the field at fault.

use super::{HeadroomModel, LevelLinks, RawProfile, SonicParams};

/// A field at fault in a profile, and why.
pub(super) type Fault = (&'static str, String);

fn num(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// A size in bytes.
pub(super) fn size(f: &'static str, v: &toml::Value) -> std::result::Result<u64, Fault> {
    match v {
        // 1 TiB: past any switch's buffer, and far from overflow when
        // sizes are added up.
        toml::Value::Integer(i) if (0..=1 << 40).contains(i) => Ok(*i as u64),
        toml::Value::Integer(i) if *i >= 0 => Err((
            f,
            format!("{i} is out of range (a size in bytes, at most 2^40)"),
        )),
        other => Err((
            f,
            format!("{other} is not a size in bytes (an integer >= 0)"),
        )),
    }
}

pub(super) fn positive(f: &'static str, v: &toml::Value) -> std::result::Result<f64, Fault> {
    match num(v) {
        Some(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err((f, format!("{v} must be a number > 0"))),
    }
}

pub(super) fn non_negative(f: &'static str, v: &toml::Value) -> std::result::Result<f64, Fault> {
    match num(v) {
        Some(x) if x >= 0.0 && x.is_finite() => Ok(x),
        _ => Err((f, format!("{v} must be a number >= 0"))),
    }
}

fn count(f: &'static str, v: &toml::Value) -> std::result::Result<u32, Fault> {
    match v {
        toml::Value::Integer(i) if (1..=64).contains(i) => Ok(*i as u32),
        other => Err((f, format!("{other} must be an integer from 1 to 64"))),
    }
}

/// The sonic headroom model's parameters (none under the simple model,
/// which must not be given them).
pub(super) fn sonic_params(
    r: &RawProfile,
    headroom: HeadroomModel,
) -> std::result::Result<Option<SonicParams>, Fault> {
    let sonic_fields = [
        ("cell_bytes", &r.cell_bytes),
        ("pipeline_latency_bytes", &r.pipeline_latency_bytes),
        ("mac_phy_delay_bytes", &r.mac_phy_delay_bytes),
        ("peer_response_bytes", &r.peer_response_bytes),
        ("small_packet_percent", &r.small_packet_percent),
    ];
    let sonic = match headroom {
        HeadroomModel::Simple => {
            if let Some((f, _)) = sonic_fields.iter().find(|(_, v)| v.is_some()) {
                return Err((
                    f,
                    "is a parameter of the sonic headroom model; this profile uses simple".into(),
                ));
            }
            None
        }
        HeadroomModel::Sonic => {
            let need = |i: usize| {
                sonic_fields[i].1.as_ref().ok_or((
                    sonic_fields[i].0,
                    "missing (the sonic headroom model needs it)".to_string(),
                ))
            };
            let cell_bytes = size("cell_bytes", need(0)?)?;
            if cell_bytes == 0 {
                return Err(("cell_bytes", "must be at least 1".into()));
            }
            let spp = non_negative("small_packet_percent", need(4)?)?;
            if spp > 100.0 {
                return Err(("small_packet_percent", format!("{spp} is more than 100")));
            }
            Some(SonicParams {
                cell_bytes,
                pipeline_latency_bytes: size("pipeline_latency_bytes", need(1)?)?,
                mac_phy_delay_bytes: size("mac_phy_delay_bytes", need(2)?)?,
                peer_response_bytes: size("peer_response_bytes", need(3)?)?,
                small_packet_percent: spp,
                gearbox_delay_ns: r
                    .gearbox_delay_ns
                    .as_ref()
                    .map_or(Ok(0.0), |v| non_negative("gearbox_delay_ns", v))
                    .and_then(|g| {
                        if g <= 1e9 {
                            Ok(g)
                        } else {
                            Err((
                                "gearbox_delay_ns",
                                format!("{g} is out of range (at most 1e9 ns)"),
                            ))
                        }
                    })?,
            })
        }
    };
    Ok(sonic)
}

/// Queues per port, lossless queues and traffic classes.
pub(super) fn queue_counts(r: &RawProfile) -> std::result::Result<(u32, u32, u32), Fault> {
    let queues_per_port = count("queues_per_port", &r.queues_per_port)?;
    let lossless_queues = count("lossless_queues", &r.lossless_queues)?;
    if lossless_queues > queues_per_port {
        return Err((
            "lossless_queues",
            format!("{lossless_queues} is more than queues_per_port ({queues_per_port})"),
        ));
    }
    let traffic_classes = match &r.traffic_classes {
        None => 8,
        Some(v) => count("traffic_classes", v)?,
    };
    if !(2..=16).contains(&traffic_classes) {
        return Err((
            "traffic_classes",
            format!(
                "{traffic_classes} is out of range (2-16: one lossy class and at least one lossless; SONiC's maps allow traffic classes 0-15)"
            ),
        ));
    }
    Ok((queues_per_port, lossless_queues, traffic_classes))
}

/// The oversubscription (1 without one), from 1 to 1000.
pub(super) fn oversubscription(r: &RawProfile) -> std::result::Result<f64, Fault> {
    let oversubscription = r
        .oversubscription
        .as_ref()
        .map_or(Ok(1.0), |v| positive("oversubscription", v))?;
    if oversubscription < 1.0 {
        return Err(("oversubscription", format!("{oversubscription} is below 1")));
    }
    if oversubscription > 1000.0 {
        return Err((
            "oversubscription",
            format!("{oversubscription} is out of range (at most 1000)"),
        ));
    }
    Ok(oversubscription)
}

/// The per-level-pair link settings, sorted, each pair once.
pub(super) fn level_links(r: &RawProfile) -> std::result::Result<Vec<LevelLinks>, Fault> {
    let mut levels = Vec::new();
    for (key, l) in r.levels.iter().flatten() {
        let pair = key.split_once('-').and_then(|(a, b)| {
            Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?))
        });
        let Some((a, b)) = pair else {
            return Err((
                "levels",
                format!("'{key}' is not a level pair such as \"0-1\""),
            ));
        };
        if l.speed_gbps.is_none() && l.cable_m.is_none() {
            return Err((
                "levels",
                format!("'{key}' gives neither speed_gbps nor cable_m"),
            ));
        }
        levels.push(LevelLinks {
            lo: a.min(b),
            hi: a.max(b),
            speed_gbps: l
                .speed_gbps
                .as_ref()
                .map(|v| positive("levels", v))
                .transpose()?,
            cable_m: l
                .cable_m
                .as_ref()
                .map(|v| non_negative("levels", v))
                .transpose()?,
        });
    }
    levels.sort_by_key(|l| (l.lo, l.hi));
    if let Some(w) = levels
        .windows(2)
        .find(|w| (w[0].lo, w[0].hi) == (w[1].lo, w[1].hi))
    {
        return Err((
            "levels",
            format!("levels {}-{} given twice", w[0].lo, w[0].hi),
        ));
    }
    Ok(levels)
}
