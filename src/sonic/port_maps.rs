//! The size of a SONiC export's port maps, as `tagger run`'s summary
//! counts what a switch holds for the plan.

use super::Export;
use serde_json::Value;

impl Export {
    /// The port maps the plan writes (SONiC exports): how many `TAGGER_*`
    /// maps, how many entries they hold, and the most maps at one switch.
    /// All zero for the neutral table.
    pub fn port_maps(&self) -> PortMaps {
        let mut m = PortMaps::default();
        for s in &self.switches {
            let mut here = 0;
            for table in MAP_TABLES {
                let Some(maps) = s.config.get(table).and_then(Value::as_object) else {
                    continue;
                };
                for (name, map) in maps {
                    if name.starts_with("TAGGER_") {
                        here += 1;
                        m.entries += map.as_object().map_or(0, |o| o.len());
                    }
                }
            }
            m.maps += here;
            m.max_maps = m.max_maps.max(here);
        }
        m
    }
}

/// The `config_db` tables that hold the port maps a plan writes.
const MAP_TABLES: [&str; 6] = [
    "DSCP_TO_TC_MAP",
    "TC_TO_DSCP_MAP",
    "TC_TO_PRIORITY_GROUP_MAP",
    "TC_TO_QUEUE_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
];

/// The size of a SONiC export's port maps ([`Export::port_maps`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortMaps {
    /// `TAGGER_*` maps over all switches.
    pub maps: usize,
    /// Entries in those maps.
    pub entries: usize,
    /// The most maps at one switch.
    pub max_maps: usize,
}
