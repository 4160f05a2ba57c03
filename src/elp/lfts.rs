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
//! A dump is refused, naming the switch and LID, where it cannot be the
//! fabric's routing: no table at all (what a failed OpenSM run leaves), no
//! table for some switch, a route that loops, has no entry, ends at a
//! switch, or ends at another HCA port than the same LID's other routes,
//! and two HCAs' LIDs routed to one HCA port. HCA LIDs are told by the
//! dump's comments where it has them, else by where their routes end (at
//! an HCA port, not a switch's port 0). An HCA port no LID is routed to is
//! reported ([`Routes::shortfall`]): its traffic is in no path.
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
/// As [`parse`].
pub fn read(topo: &Topology, path: &Path) -> Result<PathList> {
    read_routes(topo, path).map(|r| r.paths)
}

/// Reads the dump at `path` against `topo`, with what it leaves out.
///
/// # Errors
/// As [`parse`].
pub fn read_routes(topo: &Topology, path: &Path) -> Result<Routes> {
    let text = tagger_generators::file::read_input(path).map_err(|e| Error::io(path, e))?;
    parse_routes(topo, &text, path)
}

/// The routes of a dump, and the HCA ports no route reaches.
#[derive(Clone, Debug)]
pub struct Routes {
    /// One path per (source switch, destination LID), as routed.
    pub paths: PathList,
    /// HCA ports of the fabric (switch ports cabled to an HCA).
    pub hca_ports: usize,
    /// Those no HCA LID of the dump is routed to, as `switch NAME port N`
    /// (an HCA the subnet manager gave no LID, or whose LID its tables
    /// send elsewhere): traffic to them is in no path.
    pub unreached: Vec<String>,
}

impl Routes {
    /// What the dump leaves out, said plainly; `None` when every HCA port
    /// is reached.
    pub fn shortfall(&self) -> Option<String> {
        if self.unreached.is_empty() {
            return None;
        }
        const SHOWN: usize = 6;
        let mut names: Vec<&str> = self
            .unreached
            .iter()
            .take(SHOWN)
            .map(String::as_str)
            .collect();
        let more = self.unreached.len().saturating_sub(SHOWN);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        names.sort_unstable();
        Some(format!(
            "the forwarding tables route to {} of the fabric's {} HCA ports: no LID reaches {}{more}, so the paths to them are missing (an HCA without a LID, or a dump from a partial sweep)",
            self.hca_ports - self.unreached.len(),
            self.hca_ports,
            names.join(", ")
        ))
    }
}

/// One switch's table: out port per destination LID.
type Table = BTreeMap<u32, u32>;

/// What a LID's comment in the dump says it is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum LidKind {
    /// An HCA port, by its port GUID (or its name where no GUID is given).
    Hca(String),
    /// A switch (its management port 0).
    Switch,
    /// No comment: told apart by where its routes end.
    Unknown,
}

/// [`read`] of the dump's text; `origin` names it in errors.
///
/// # Errors
/// [`Error::Io`] when it cannot be read; [`Error::ElpSpec`] when the
/// topology has no switch names and port numbers (not an `ibnet:` one), or
/// the dump holds no table or none for some switch; [`Error::PathFile`]
/// naming the line at fault (a switch the topology does not have, a
/// malformed line), or the switch and LID where a route has no entry,
/// leaves on a port the topology does not cable, loops, ends at a switch
/// rather than an HCA, reaches another HCA port than the same LID's other
/// routes, or reaches an HCA port another HCA's LID reaches.
pub fn parse(topo: &Topology, text: &str, origin: &Path) -> Result<PathList> {
    parse_routes(topo, text, origin).map(|r| r.paths)
}

/// [`parse`] with what the dump leaves out.
///
/// # Errors
/// As [`parse`].
pub fn parse_routes(topo: &Topology, text: &str, origin: &Path) -> Result<Routes> {
    let n = topo.node_count();
    let spec_error = |reason: String| Error::ElpSpec {
        spec: format!("lfts:{}", origin.display()),
        reason,
    };
    if (0..n as NodeId).any(|v| topo.node_name(v).is_none() || topo.port_names(v).is_none()) {
        return Err(spec_error(format!(
            "forwarding tables are read against switch names and port numbers, which {} does not give: give the fabric as ibnet:FILE (ibnetdiscover's output)",
            topo.name()
        )));
    }
    let bad = |line: usize, reason: String| Error::PathFile {
        path: origin.to_path_buf(),
        line,
        reason,
    };
    let (tables, lids) = read_tables(topo, text, &bad)?;
    if tables.iter().all(Option::is_none) {
        return Err(spec_error(
            "holds no forwarding table (no `Unicast lids ... of switch ...` block): an empty dump is what a failed OpenSM run leaves; run it again, with bit 0x40 in -D for the dump files".into(),
        ));
    }
    if let Some(v) = (0..n as NodeId).find(|&v| tables[v as usize].is_none()) {
        return Err(spec_error(format!(
            "has no table for switch {v} ('{}'): a subnet manager dumps every switch it routes, so this dump is of another fabric or a partial sweep",
            topo.node_name(v).unwrap_or_default()
        )));
    }
    Follow {
        topo,
        tables: &tables,
        index: port_index(topo),
        bad: &bad,
    }
    .all(&lids)
}

/// Per switch, port number -> port index.
fn port_index(topo: &Topology) -> Vec<BTreeMap<u32, usize>> {
    (0..topo.node_count() as NodeId)
        .map(|v| {
            topo.port_names(v)
                .unwrap_or(&[])
                .iter()
                .enumerate()
                .filter_map(|(i, p)| Some((p.parse().ok()?, i)))
                .collect()
        })
        .collect()
}

/// The dump's table per switch, and per destination LID what its comments
/// say it is, with the line that first names it.
#[allow(clippy::type_complexity)]
fn read_tables(
    topo: &Topology,
    text: &str,
    bad: &dyn Fn(usize, String) -> Error,
) -> Result<(Vec<Option<Table>>, BTreeMap<u32, (LidKind, usize)>)> {
    let n = topo.node_count();
    let by_name: BTreeMap<&str, NodeId> = (0..n as NodeId)
        .filter_map(|v| Some((topo.node_name(v)?, v)))
        .collect();
    let mut tables: Vec<Option<Table>> = vec![None; n];
    let mut lids: BTreeMap<u32, (LidKind, usize)> = BTreeMap::new();
    let mut current: Option<NodeId> = None;
    for (line, raw) in tagger_generators::file::text_lines(text) {
        let l = raw.trim();
        let words: Vec<&str> = l.split_whitespace().collect();
        if l.is_empty() || l.starts_with('#') || words.ends_with(&["lids", "dumped"]) {
            continue;
        }
        if words.starts_with(&["Unicast", "lids"]) {
            let guid = words
                .iter()
                .skip_while(|w| **w != "guid")
                .nth(1)
                .and_then(|g| u64::from_str_radix(g.trim_start_matches("0x"), 16).ok())
                .ok_or_else(|| bad(line, format!("no switch GUID in: {l}")))?;
            let desc = l
                .find("('")
                .and_then(|a| l[a + 2..].rfind("')").map(|b| &l[a + 2..a + 2 + b]));
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
        let mut w = entry.split_whitespace();
        let (Some(lid), Some(port), None) = (w.next(), w.next(), w.next()) else {
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
        let kind = lid_kind(comment.trim());
        match lids.get_mut(&lid) {
            None => {
                lids.insert(lid, (kind, line));
            }
            Some((known, _)) if *known == LidKind::Unknown => *known = kind,
            Some((known, first)) if kind != LidKind::Unknown && kind != *known => {
                return Err(bad(
                    line,
                    format!(
                        "LID 0x{lid:04x} is {} here but {} on line {first}",
                        kind.what(),
                        known.what()
                    ),
                ));
            }
            Some(_) => {}
        }
        let table = tables[v as usize].as_mut().expect("a header opened it");
        if table.insert(lid, port).is_some() {
            return Err(bad(
                line,
                format!("LID 0x{lid:04x} listed twice for switch {v}"),
            ));
        }
    }
    Ok((tables, lids))
}

/// What a table line's comment says its LID is: `Channel Adapter portguid
/// 0x...: 'name'`, `Switch portguid ...`, or nothing known.
fn lid_kind(comment: &str) -> LidKind {
    if let Some(rest) = comment.strip_prefix("Channel Adapter") {
        let guid = rest
            .split_whitespace()
            .skip_while(|w| *w != "portguid")
            .nth(1)
            .map(|g| g.trim_end_matches(':').to_string());
        LidKind::Hca(guid.unwrap_or_else(|| rest.trim().to_string()))
    } else if comment.starts_with("Switch") {
        LidKind::Switch
    } else {
        LidKind::Unknown
    }
}

impl LidKind {
    fn what(&self) -> String {
        match self {
            LidKind::Hca(g) => format!("HCA port {g}"),
            LidKind::Switch => "a switch".into(),
            LidKind::Unknown => "unnamed".into(),
        }
    }
}

/// Where a route ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// At a switch's own port 0: the LID is that switch's.
    Switch(NodeId),
    /// Leaving a switch on a port cabled to an HCA (port index).
    Hca(NodeId, usize),
}

/// Routes followed through the tables.
struct Follow<'a> {
    topo: &'a Topology,
    tables: &'a [Option<Table>],
    index: Vec<BTreeMap<u32, usize>>,
    bad: &'a dyn Fn(usize, String) -> Error,
}

impl Follow<'_> {
    /// The route from `s` to `lid` (its nodes) and where it ends; `line`
    /// names the LID in errors.
    fn route(&self, s: NodeId, lid: u32, line: usize) -> Result<(Vec<NodeId>, End)> {
        let topo = self.topo;
        let mut path = vec![s];
        let mut at = s;
        loop {
            let fail = |what: String| {
                (self.bad)(
                    line,
                    format!("the route from switch {s} to LID 0x{lid:04x} {what}"),
                )
            };
            let table = self.tables[at as usize]
                .as_ref()
                .expect("every switch has one");
            let Some(&port) = table.get(&lid) else {
                return Err(fail(format!("has no entry at switch {at}")));
            };
            if port == 0 {
                return Ok((path, End::Switch(at)));
            }
            let Some(&p) = self.index[at as usize].get(&port) else {
                return Err(fail(format!(
                    "leaves switch {at} on port {port}, which the topology does not cable"
                )));
            };
            if p >= topo.degree(at) {
                return Ok((path, End::Hca(at, p)));
            }
            at = topo.channel_dst(topo.out_channels(at)[p]);
            if path.contains(&at) {
                return Err(fail(format!("loops at switch {at}")));
            }
            path.push(at);
        }
    }

    /// Every route from a switch with HCAs to every HCA LID: each LID's
    /// routes end at one HCA port, and no HCA port takes two HCAs' LIDs.
    /// A LID without a comment is an HCA's where its routes end at an HCA
    /// port, a switch's where they end at a switch.
    fn all(&self, lids: &BTreeMap<u32, (LidKind, usize)>) -> Result<Routes> {
        let topo = self.topo;
        let n = topo.node_count();
        let name = |v: NodeId| topo.node_name(v).unwrap_or_default();
        let port_name = |v: NodeId, p: usize| {
            topo.port_names(v)
                .and_then(|ns| ns.get(p))
                .cloned()
                .unwrap_or_default()
        };
        let sources: Vec<NodeId> = (0..n as NodeId)
            .filter(|&v| topo.node(v).hosts > 0)
            .collect();
        // Per HCA port reached: the LID and its HCA's identity.
        let mut reached: BTreeMap<(NodeId, usize), (u32, LidKind)> = BTreeMap::new();
        let mut paths = Vec::new();
        for (&lid, (kind, line)) in lids {
            if *kind == LidKind::Switch {
                continue;
            }
            let mut end: Option<(NodeId, End)> = None;
            for &s in &sources {
                let (path, e) = self.route(s, lid, *line)?;
                match (end, e) {
                    (_, End::Switch(at)) if *kind != LidKind::Unknown => {
                        return Err((self.bad)(
                            *line,
                            format!(
                                "the route from switch {s} to LID 0x{lid:04x} ({}) ends at switch {at} ('{}') itself (port 0), not at the HCA",
                                kind.what(),
                                name(at)
                            ),
                        ));
                    }
                    (Some((s0, e0)), e) if e0 != e => {
                        let show = |e: End| match e {
                            End::Switch(at) => format!("switch {at} ('{}') itself", name(at)),
                            End::Hca(at, p) => {
                                format!("switch {at} ('{}') port {}", name(at), port_name(at, p))
                            }
                        };
                        return Err((self.bad)(
                            *line,
                            format!(
                                "LID 0x{lid:04x} is routed to {} from switch {s0} but to {} from switch {s}: a LID is one destination, so one of the tables sends it astray",
                                show(e0),
                                show(e)
                            ),
                        ));
                    }
                    _ => end = Some((s, e)),
                }
                if matches!(e, End::Hca(..)) && path.len() >= 2 {
                    paths.push(path);
                }
            }
            let Some((_, End::Hca(at, p))) = end else {
                continue;
            };
            match reached.get(&(at, p)) {
                Some((other, k))
                    if *k != *kind && *k != LidKind::Unknown && *kind != LidKind::Unknown =>
                {
                    return Err((self.bad)(
                        *line,
                        format!(
                            "LID 0x{lid:04x} ({}) and LID 0x{other:04x} ({}) both leave switch {at} ('{}') on port {}: one of them is routed to the wrong HCA",
                            kind.what(),
                            k.what(),
                            name(at),
                            port_name(at, p)
                        ),
                    ));
                }
                Some(_) => {}
                None => {
                    reached.insert((at, p), (lid, kind.clone()));
                }
            }
        }
        let mut hca_ports = 0;
        let mut unreached = Vec::new();
        for v in 0..n as NodeId {
            for p in topo.degree(v)..topo.degree(v) + topo.node(v).hosts as usize {
                hca_ports += 1;
                if !reached.contains_key(&(v, p)) {
                    unreached.push(format!(
                        "switch {v} ('{}') port {}",
                        name(v),
                        port_name(v, p)
                    ));
                }
            }
        }
        Ok(Routes {
            paths: PathList::from_paths(paths),
            hca_ports,
            unreached,
        })
    }
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
        // A table for a switch the topology lacks, none at all, or none
        // for one of its switches.
        assert!(err("").contains("holds no forwarding table"));
        assert!(err("\u{feff}\n# nothing\n").contains("holds no forwarding table"));
        let two = dump(3, 4);
        let cut = two.find("Unicast lids [0-3] of switch Lid 11").unwrap();
        assert!(err(&two[..cut]).contains("has no table for switch 2 ('sw3')"));
        let plain = tagger_generators::build("fattree:k=4").unwrap();
        assert!(err_of(&plain).contains("ibnet:"));
        fn err_of(t: &Topology) -> String {
            parse(t, "", Path::new("d")).unwrap_err().to_string()
        }
    }

    /// Without comments, HCA LIDs are told by where their routes end (the
    /// same paths as with them); tabs, CR line ends and a byte-order mark
    /// read as spaces and line ends do.
    #[test]
    fn plain_dumps_read_as_commented_ones() {
        let t = tagger_generators::ibnet::parse(NET, "n").unwrap();
        let full = dump(3, 4);
        let want = parse(&t, &full, Path::new("d")).unwrap();
        let plain: String = full
            .lines()
            .map(|l| l.split('#').next().unwrap().trim_end().to_string() + "\n")
            .collect();
        assert_eq!(parse(&t, &plain, Path::new("d")).unwrap(), want);
        let odd = "\u{feff}".to_string() + &full.replace(' ', "\t").replace('\n', "\r");
        assert_eq!(parse(&t, &odd, Path::new("d")).unwrap(), want);
    }

    /// A LID routed to different HCA ports from different switches, or two
    /// HCAs' LIDs to one port, is refused naming the LID; an HCA port no
    /// LID reaches is reported, not silently left out.
    #[test]
    fn routes_reach_their_own_hca() {
        let t = tagger_generators::ibnet::parse(NET, "n").unwrap();
        let err = |d: &str| parse(&t, d, Path::new("d")).unwrap_err().to_string();
        // sw1 delivers h1's LID to its own HCA, sw2 and sw3 send it on to
        // sw2's HCA: one LID, two destinations.
        let astray = dump(1, 4);
        assert!(
            err(&astray).contains("LID 0x0001 is routed to switch 0 ('sw1') port 1 from switch 0 but to switch 1 ('sw2') port 1"),
            "{}",
            err(&astray)
        );
        // Every switch sends h1's LID to sw2's HCA, where h2's LID goes.
        let wrong = dump(1, 4).replace(
            "0x0001 001 # Channel Adapter portguid 0x0000000000100001: 'h1'\n0x0002 003",
            "0x0001 003 # Channel Adapter portguid 0x0000000000100001: 'h1'\n0x0002 003",
        );
        assert!(
            err(&wrong).contains("LID 0x0002 (HCA port 0x0000000000100002) and LID 0x0001 (HCA port 0x0000000000100001) both leave switch 1 ('sw2') on port 1"),
            "{}",
            err(&wrong)
        );
        // h3 has no LID line: its port is reported, and no path ends there.
        let none: String = dump(3, 4)
            .lines()
            .filter(|l| !l.starts_with("0x0003"))
            .map(|l| l.to_string() + "\n")
            .collect();
        let r = parse_routes(&t, &none, Path::new("d")).unwrap();
        assert_eq!(r.hca_ports, 3);
        assert_eq!(r.unreached, ["switch 2 ('sw3') port 1"]);
        assert!(
            r.shortfall()
                .unwrap()
                .contains("route to 2 of the fabric's 3 HCA ports")
        );
        assert!(r.paths.iter().all(|p| *p.last().unwrap() != 2));
        let full = parse_routes(&t, &dump(3, 4), Path::new("d")).unwrap();
        assert!(full.shortfall().is_none());
        // A LID the comments call an HCA's that ends at a switch.
        let to_switch = dump(3, 4).replace(
            "0x0003 001 # Channel Adapter",
            "0x0003 000 # Channel Adapter",
        );
        assert!(err(&to_switch).contains("ends at switch 2 ('sw3') itself (port 0)"));
    }
}
