//! `tagger export` and `tagger topo`: what was written where.

use crate::sonic::{Export, Format};
use std::path::Path;

/// What an export wrote to `dir`: switches and traffic classes (SONiC,
/// buffers sized for `profile`, and the switches that do not fit it when
/// the export was told to write them anyway), or classes (neutral table).
pub fn export(ex: &Export, format: Format, profile: &str, dir: &Path) -> String {
    let s = &ex.summary;
    match format {
        Format::Sonic => {
            let mis = ex.misfits();
            format!(
                "exported {} to {} (SONiC config_db, port maps only, buffers for {}): at most {} of the {} traffic classes a switch has for lossless traffic{}",
                super::count(ex.switches.len(), "switch"),
                dir.display(),
                profile,
                s["tcs_max"],
                s["traffic_classes"].as_u64().unwrap_or(8).saturating_sub(1),
                if mis.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} switch(es) do NOT fit {profile} (e.g. switch {}: {} lossless queues at a port, {} of headroom), written because --require-fit is off",
                        mis.len(),
                        mis[0].0,
                        mis[0].1.lossless_queues,
                        crate::budget::human(mis[0].1.headroom_bytes)
                    )
                }
            )
        }
        Format::Json => format!(
            "exported {} to {} (neutral table): at most {} classes per switch",
            super::count(ex.switches.len(), "switch"),
            dir.display(),
            s["classes_max"],
        ),
    }
}

/// `tagger topo`'s report: the topology's summary, the seconds to build
/// and to summarise it (`secs`), and the file written, if any.
pub fn topo(summary: &crate::topo::Summary, secs: (f64, f64), out: Option<&Path>) -> String {
    let mut l = format!(
        "{summary}\nseconds    build {:.3}, summary {:.3}",
        secs.0, secs.1
    );
    if let Some(path) = out {
        l.push_str(&format!("\nwrote      {}", path.display()));
    }
    l
}
