//! ELPs from a subnet manager's forwarding tables (`lfts:PATH`): OpenSM's
//! `opensm-lfts.dump`, read against the fabric it routes (an `ibnet:`
//! topology, whose switches carry their names and port numbers).
//!
//! The dump holds, per switch, a block headed `Unicast lids [0-N] of
//! switch Lid L guid 0x... ('name'):` and one line per destination LID,
//! `0x0005 003 # Channel Adapter portguid 0x...: 'name'` (LID, out port,
//! what the LID is). A switch is found by its GUID (`S-<GUID>`, as
//! `ibnetdiscover` names it) or its node description (as an ibsim net file
//! names it). Every route from a switch with HCAs to every HCA port's LID
//! is followed through the tables until it leaves on a port cabled to an
//! HCA: one path per (source switch, destination LID), as the subnet
//! manager routes (routes ending at their own switch have no link and
//! give none). Parallel cables are named by port, but an ELP path is a
//! node sequence: where two switches share several cables, the path
//! stands for all of them.
//!
//! Complexity: O(S x D x L) for S source switches, D destination LIDs and
//! routes of L links.

use super::PathList;
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::Path;
use tagger_generators::{NodeId, Topology};

/// Reads the dump at `path` against `topo`.
///
/// # Errors
/// [`Error::Io`] when it cannot be read; [`Error::ElpSpec`] when the
/// topology has no switch names and port numbers (not an `ibnet:` one);
/// [`Error::PathFile`] naming the
/// line at fault (a switch the topology does not have, a malformed line),
/// or the switch and LID where a route has no entry, leaves on a port the
/// topology does not cable, or loops.
pub fn read(topo: &Topology, path: &Path) -> Result<PathList> {
    let text = tagger_generators::file::read_input(path).map_err(|e| Error::io(path, e))?;
    parse(topo, &text, path)
}

/// One switch's table: out port per destination LID.
type Table = BTreeMap<u32, u32>;

/// [`read`] of the dump's text; `origin` names it in errors.
///
/// # Errors
/// As [`read`].
pub fn parse(topo: &Topology, text: &str, origin: &Path) -> Result<PathList> {
    let n = topo.node_count();
    if (0..n as NodeId).any(|v| topo.node_name(v).is_none() || topo.port_names(v).is_none()) {
        return Err(Error::ElpSpec {
            spec: format!("lfts:{}", origin.display()),
            reason: format!(
                "forwarding tables are read against switch names and port numbers, which {} does not give: give the fabric as ibnet:FILE (ibnetdiscover's output)",
                topo.name()
            ),
        });
    }
    let bad = |line: usize, reason: String| Error::PathFile {
        path: origin.to_path_buf(),
        line,
        reason,
    };
    let (tables, hca_lids) = read_tables(topo, text, &bad)?;
    follow(topo, &tables, &hca_lids, &bad)
}

/// The dump's table per switch, and the destination LIDs of HCA ports with
/// the line naming each.
#[allow(clippy::type_complexity)]
fn read_tables(
    topo: &Topology,
    text: &str,
    bad: &dyn Fn(usize, String) -> Error,
) -> Result<(Vec<Option<Table>>, BTreeMap<u32, usize>)> {
    let n = topo.node_count();
    let by_name: BTreeMap<&str, NodeId> = (0..n as NodeId)
        .filter_map(|v| Some((topo.node_name(v)?, v)))
        .collect();
    let mut tables: Vec<Option<Table>> = vec![None; n];
    // Destination LIDs of HCA ports, with the line naming each.
    let mut hca_lids: BTreeMap<u32, usize> = BTreeMap::new();
    let mut current: Option<NodeId> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') || l.ends_with("lids dumped") {
            continue;
        }
        if let Some(rest) = l.strip_prefix("Unicast lids") {
            let guid = rest
                .split_whitespace()
                .skip_while(|w| *w != "guid")
                .nth(1)
                .and_then(|g| u64::from_str_radix(g.trim_start_matches("0x"), 16).ok())
                .ok_or_else(|| bad(line, format!("no switch GUID in: {l}")))?;
            let desc = rest
                .find("('")
                .and_then(|a| rest[a + 2..].rfind("')").map(|b| &rest[a + 2..a + 2 + b]));
            let by_guid = format!("S-{guid:016x}");
            let v = by_name
                .get(by_guid.as_str())
                .or_else(|| desc.and_then(|d| by_name.get(d)))
                .copied()
                .ok_or_else(|| {
                    bad(
                        line,
                        format!(
                            "switch guid 0x{guid:016x} ('{}') is not in the topology (its switches are named {by_guid}-style or by node description)",
                            desc.unwrap_or("")
                        ),
                    )
                })?;
            if tables[v as usize].is_some() {
                return Err(bad(line, format!("switch {v} has two tables")));
            }
            tables[v as usize] = Some(Table::new());
            current = Some(v);
            continue;
        }
        let Some(v) = current else {
            return Err(bad(
                line,
                format!("expected a `Unicast lids ... of switch ...` header, found: {l}"),
            ));
        };
        let (entry, comment) = l.split_once('#').unwrap_or((l, ""));
        let mut words = entry.split_whitespace();
        let (Some(lid), Some(port), None) = (words.next(), words.next(), words.next()) else {
            return Err(bad(
                line,
                format!("expected `0xLID PORT # ...`, found: {l}"),
            ));
        };
        let lid = u32::from_str_radix(lid.trim_start_matches("0x"), 16)
            .map_err(|_| bad(line, format!("'{lid}' is not a hexadecimal LID")))?;
        let port: u32 = port
            .parse()
            .map_err(|_| bad(line, format!("'{port}' is not a port number")))?;
        if comment.trim_start().starts_with("Channel Adapter") {
            hca_lids.entry(lid).or_insert(line);
        }
        let table = tables[v as usize].as_mut().expect("a header opened it");
        if table.insert(lid, port).is_some() {
            return Err(bad(
                line,
                format!("LID 0x{lid:04x} listed twice for switch {v}"),
            ));
        }
    }
    Ok((tables, hca_lids))
}

/// Every route from a switch with hosts to every HCA LID, followed through
/// the tables to the port that leaves the fabric.
fn follow(
    topo: &Topology,
    tables: &[Option<Table>],
    hca_lids: &BTreeMap<u32, usize>,
    bad: &dyn Fn(usize, String) -> Error,
) -> Result<PathList> {
    let n = topo.node_count();
    // Port number -> port index, per switch.
    let index: Vec<BTreeMap<u32, usize>> = (0..n as NodeId)
        .map(|v| {
            topo.port_names(v)
                .unwrap_or(&[])
                .iter()
                .enumerate()
                .filter_map(|(i, p)| Some((p.parse().ok()?, i)))
                .collect()
        })
        .collect();
    let mut paths = Vec::new();
    for s in (0..n as NodeId).filter(|&v| topo.node(v).hosts > 0) {
        for (&lid, &line) in hca_lids {
            let mut path = vec![s];
            let mut at = s;
            loop {
                let fail = |what: String| {
                    bad(
                        line,
                        format!("the route from switch {s} to LID 0x{lid:04x} {what}"),
                    )
                };
                let Some(table) = &tables[at as usize] else {
                    return Err(fail(format!("reaches switch {at}, which has no table")));
                };
                let Some(&port) = table.get(&lid) else {
                    return Err(fail(format!("has no entry at switch {at}")));
                };
                let Some(&p) = index[at as usize].get(&port) else {
                    return Err(fail(format!(
                        "leaves switch {at} on port {port}, which the topology does not cable"
                    )));
                };
                if p >= topo.degree(at) {
                    break;
                }
                at = topo.channel_dst(topo.out_channels(at)[p]);
                if path.contains(&at) {
                    return Err(fail(format!("loops at switch {at}")));
                }
                path.push(at);
            }
            if path.len() >= 2 {
                paths.push(path);
            }
        }
    }
    Ok(PathList::from_paths(paths))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET: &str = "Switch 8 \"sw1\"\n[1] \"h1\"[1]\n[3] \"sw2\"[3]\n\n\
        Switch 8 \"sw2\"\n[1] \"h2\"[1]\n[3] \"sw1\"[3]\n[4] \"sw3\"[4]\n\n\
        Switch 8 \"sw3\"\n[1] \"h3\"[1]\n[4] \"sw2\"[4]\n\n\
        Hca 1 \"h1\"\n[1] \"sw1\"[1]\n\nHca 1 \"h2\"\n[1] \"sw2\"[1]\n\nHca 1 \"h3\"\n[1] \"sw3\"[1]\n";

    /// Tables where h1's LID leaves sw2 on `sw2_h1` and sw3 on `sw3_h1`.
    fn dump(sw2_h1: u32, sw3_h1: u32) -> String {
        let ca = |lid: u32, name: &str| {
            format!(
                "0x{lid:04x} {{}} # Channel Adapter portguid 0x00000000001{lid:05x}: '{name}'\n"
            )
        };
        let block = |guid: u32, name: &str, ports: [u32; 3]| {
            let mut s =
                format!("Unicast lids [0-3] of switch Lid {guid} guid 0x{guid:016x} ('{name}'):\n");
            for (lid, (h, p)) in [("h1", ports[0]), ("h2", ports[1]), ("h3", ports[2])]
                .into_iter()
                .enumerate()
            {
                s += &ca(lid as u32 + 1, h).replace("{}", &format!("{p:03}"));
            }
            s + "3 lids dumped\n"
        };
        block(9, "sw1", [1, 3, 3])
            + &block(10, "sw2", [sw2_h1, 1, 4])
            + &block(11, "sw3", [sw3_h1, 4, 1])
    }

    /// Routes are followed to the switch whose port leads to the HCA; one
    /// path per (source switch, destination), none within a switch.
    #[test]
    fn routes_follow_the_tables() {
        let t = tagger_generators::ibnet::parse(NET, "n").unwrap();
        let p = parse(&t, &dump(3, 4), Path::new("d")).unwrap();
        let got: Vec<Vec<NodeId>> = p.iter().map(<[NodeId]>::to_vec).collect();
        assert_eq!(
            got,
            [
                vec![0, 1],
                vec![0, 1, 2],
                vec![1, 0],
                vec![1, 2],
                vec![2, 1],
                vec![2, 1, 0]
            ]
        );
    }

    /// A table naming an uncabled port, or a loop, is named with the LID's
    /// line; a topology without names is refused.
    #[test]
    fn bad_tables_are_named() {
        let t = tagger_generators::ibnet::parse(NET, "n").unwrap();
        let err = |d: &str| parse(&t, d, Path::new("d")).unwrap_err().to_string();
        assert!(err(&dump(3, 7)).contains("port 7, which the topology does not cable"));
        assert!(err(&dump(4, 4)).contains("loops at switch"));
        assert!(err("0x0001 001\n").contains("line 1"));
        let plain = tagger_generators::build("fattree:k=4").unwrap();
        assert!(err_of(&plain).contains("ibnet:"));
        fn err_of(t: &Topology) -> String {
            parse(t, "", Path::new("d")).unwrap_err().to_string()
        }
    }
}
