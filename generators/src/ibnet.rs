//! InfiniBand fabrics as `ibnetdiscover` prints them, the format ibsim's
//! net files use too (`ibnet:PATH`).
//!
//! A record per node: a header line, `Switch 36 "S-0002c90300a1b2c3"` (or
//! `Hca`/`Ca 2 "H-..."`), then one line per connected port,
//! `[3] "S-..."[5]`, optionally with port GUIDs in parentheses after
//! either port number (`[1](10000a)`), a link width (`w=4`) and a `#`
//! comment; records end at a blank line. `vendid=`, `devid=`, `*guid=`
//! lines and `#` comment lines are skipped.
//!
//! Switches become the topology's nodes, in file order, named by their
//! quoted id (`S-<GUID>` in `ibnetdiscover` output, the node description
//! in an ibsim net file); switch-to-switch ports become links (parallel
//! links kept); a switch port cabled to an HCA is a host port. Every port
//! is named by its number, so that forwarding tables (`lfts:`, which name
//! ports by number) read against the topology.

use crate::error::TopologyError;
use crate::model::{Family, Node, NodeId, Topology};
use std::collections::BTreeMap;
use std::path::Path;

type Result<T> = std::result::Result<T, TopologyError>;

/// Switch or channel adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Switch,
    Hca,
}

/// One node record: its kind, quoted id, declared port count, the line of
/// its header, and per port number the peer's id, port and the line.
#[derive(Debug)]
struct Record {
    kind: Kind,
    id: String,
    ports: u32,
    line: usize,
    peers: BTreeMap<u32, (String, u32, usize)>,
}

/// Reads an `ibnetdiscover` file (or an ibsim net file) as a topology named
/// `name`.
///
/// # Errors
/// [`TopologyError::Io`] when the file cannot be read;
/// [`TopologyError::File`] naming the line at fault (an unknown record
/// type, a malformed port line, a peer that is not in the file or whose own
/// line disagrees, a port past the node's count).
pub fn read(path: &Path, name: &str) -> Result<Topology> {
    let text = crate::file::read_input(path).map_err(|cause| TopologyError::Io {
        path: path.to_path_buf(),
        cause,
    })?;
    parse(&text, name).map_err(|e| match e {
        TopologyError::Invalid { location, reason } => TopologyError::File {
            path: path.to_path_buf(),
            location,
            reason,
        },
        other => other,
    })
}

/// [`read`] of the text itself.
///
/// # Errors
/// [`TopologyError::Invalid`] naming the line at fault.
pub fn parse(text: &str, name: &str) -> Result<Topology> {
    let records = records(text)?;
    let bad = |line: usize, reason: String| TopologyError::Invalid {
        location: format!("line {line}"),
        reason,
    };
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        if index.insert(r.id.as_str(), i).is_some() {
            return Err(bad(r.line, format!("\"{}\" is described twice", r.id)));
        }
    }
    let switches: Vec<usize> = (0..records.len())
        .filter(|&i| records[i].kind == Kind::Switch)
        .collect();
    if switches.is_empty() {
        return Err(bad(1, "the fabric has no switch".into()));
    }
    let node_of: BTreeMap<usize, NodeId> = switches
        .iter()
        .enumerate()
        .map(|(v, &i)| (i, v as NodeId))
        .collect();
    let mut links: Vec<[NodeId; 2]> = Vec::new();
    // Per link, the port number at each end.
    let mut link_ports: Vec<[u32; 2]> = Vec::new();
    let mut host_ports: Vec<Vec<u32>> = vec![Vec::new(); switches.len()];
    for (i, r) in records.iter().enumerate() {
        for (&port, (peer, peer_port, line)) in &r.peers {
            let Some(&j) = index.get(peer.as_str()) else {
                return Err(bad(
                    *line,
                    format!(
                        "port {port} of \"{}\" leads to \"{peer}\", which the file does not describe",
                        r.id
                    ),
                ));
            };
            let other = &records[j];
            // Both ends must say the same cable (when the peer lists it).
            match other.peers.get(peer_port) {
                Some((back, back_port, _)) if back == &r.id && *back_port == port => {}
                Some((back, back_port, back_line)) => {
                    return Err(bad(
                        *line,
                        format!(
                            "port {port} of \"{}\" leads to \"{peer}\"[{peer_port}], but line {back_line} says that port leads to \"{back}\"[{back_port}]",
                            r.id
                        ),
                    ));
                }
                None => {
                    return Err(bad(
                        *line,
                        format!(
                            "port {port} of \"{}\" leads to \"{peer}\"[{peer_port}], which lists no cable on that port",
                            r.id
                        ),
                    ));
                }
            }
            match (r.kind, other.kind) {
                (Kind::Switch, Kind::Switch) => {
                    if i == j {
                        return Err(bad(
                            *line,
                            format!("port {port} of \"{}\" is cabled to the switch itself", r.id),
                        ));
                    }
                    // Each cable once, from the end met first.
                    if (i, port) < (j, *peer_port) {
                        links.push([node_of[&i], node_of[&j]]);
                        link_ports.push([port, *peer_port]);
                    }
                }
                (Kind::Switch, Kind::Hca) => host_ports[node_of[&i] as usize].push(port),
                (Kind::Hca, Kind::Hca) => {
                    return Err(bad(
                        *line,
                        format!(
                            "\"{}\" is cabled to \"{peer}\" with no switch between",
                            r.id
                        ),
                    ));
                }
                (Kind::Hca, Kind::Switch) => {}
            }
        }
    }
    let nodes: Vec<Node> = host_ports
        .iter()
        .map(|h| Node::switch(None, h.len() as u32))
        .collect();
    let mut port_names: Vec<Vec<String>> = vec![Vec::new(); nodes.len()];
    for (&[a, b], &[pa, pb]) in links.iter().zip(&link_ports) {
        port_names[a as usize].push(pa.to_string());
        port_names[b as usize].push(pb.to_string());
    }
    for (v, h) in host_ports.iter().enumerate() {
        port_names[v].extend(h.iter().map(u32::to_string));
    }
    let names = switches.iter().map(|&i| records[i].id.clone()).collect();
    Topology::new(name, Family::File, nodes, links)?
        .with_port_names(port_names)?
        .with_node_names(names)
}

/// The file's node records, checked line by line.
fn records(text: &str) -> Result<Vec<Record>> {
    let mut out: Vec<Record> = Vec::new();
    let mut open = false;
    for (line, raw) in crate::file::text_lines(text) {
        let bad = |reason: String| TopologyError::Invalid {
            location: format!("line {line}"),
            reason,
        };
        let l = raw.trim();
        if l.is_empty() {
            open = false;
            continue;
        }
        if l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let Some(r) = out.last_mut().filter(|_| open) else {
                return Err(bad("a port line outside a node record (a header such as `Switch 36 \"name\"` comes first)".into()));
            };
            let (port, peer, peer_port) = port_line(rest).map_err(|e| bad(format!("{e}: {l}")))?;
            if port == 0 || port > r.ports {
                return Err(bad(format!(
                    "port {port} of \"{}\" is outside its ports 1..={}",
                    r.id, r.ports
                )));
            }
            if r.peers.insert(port, (peer, peer_port, line)).is_some() {
                return Err(bad(format!("port {port} of \"{}\" is listed twice", r.id)));
            }
            continue;
        }
        let word = l.split_whitespace().next().unwrap_or("");
        let kind = match word {
            "Switch" => Kind::Switch,
            "Hca" | "Ca" => Kind::Hca,
            "Rt" => return Err(bad("routers (Rt) are not supported".into())),
            _ if l.contains('=') && !l.contains('"') => continue,
            _ => {
                return Err(bad(format!(
                    "expected a node header (Switch, Hca or Ca), a port line ([N] \"peer\"[M]) or key=value, found: {l}"
                )));
            }
        };
        let rest = l[word.len()..].trim_start();
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let ports: u32 = rest[..digits]
            .parse()
            .ok()
            .filter(|&p| (1..=255).contains(&p))
            .ok_or_else(|| {
                bad(format!(
                    "{word} needs a port count in 1..=255 before its name: {l}"
                ))
            })?;
        let (id, _) = quoted(rest[digits..].trim_start()).ok_or_else(|| {
            bad(format!(
                "{word} needs a quoted name after its port count: {l}"
            ))
        })?;
        // The name becomes the node's: checked here, where the line is
        // known, not later by the node's index.
        if id.is_empty() || id.contains(char::is_control) {
            return Err(bad(format!(
                "{word} {id:?}: a name is non-empty, with no control characters"
            )));
        }
        out.push(Record {
            kind,
            id,
            ports,
            line,
            peers: BTreeMap::new(),
        });
        open = true;
    }
    Ok(out)
}

/// `"text"rest` -> (text, rest).
fn quoted(s: &str) -> Option<(String, &str)> {
    let s = s.strip_prefix('"')?;
    let end = s.find('"')?;
    Some((s[..end].to_string(), &s[end + 1..]))
}

/// A port line after its `[`: `N](guid) "peer"[M](guid) ...`.
fn port_line(rest: &str) -> std::result::Result<(u32, String, u32), &'static str> {
    let close = rest.find(']').ok_or("no ']' after the port number")?;
    let port: u32 = rest[..close]
        .trim()
        .parse()
        .map_err(|_| "the port number is not a number")?;
    let mut after = rest[close + 1..].trim_start();
    if after.starts_with('(') {
        let c = after.find(')').ok_or("no ')' after the port GUID")?;
        after = after[c + 1..].trim_start();
    }
    let (peer, after) = quoted(after).ok_or("no quoted peer name")?;
    let after = after
        .trim_start()
        .strip_prefix('[')
        .ok_or("no [port] after the peer name")?;
    let close = after.find(']').ok_or("no ']' after the peer's port")?;
    let peer_port: u32 = after[..close]
        .trim()
        .parse()
        .map_err(|_| "the peer's port is not a number")?;
    Ok((port, peer, peer_port))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET: &str = "# two switches, two cables, three HCAs\n\
        Switch\t8 \"sw1\"\n[1]\t\"h1\"[1]\n[3]\t\"sw2\"[3]\n[5]\t\"sw2\"[5]\n\n\
        Switch 8 \"sw2\"\n[1] \"h2\"[1]\n[2] \"h3\"[2] w=4\n[3] \"sw1\"[3]\n[5] \"sw1\"[5]\n\n\
        Hca 2 \"h1\"\n[1] \"sw1\"[1]\n\nHca 2 \"h2\"\n[1] \"sw2\"[1]\n\nHca 2 \"h3\"\n[2] \"sw2\"[2]\n";

    /// Switches, parallel cables, host ports and every port's number.
    #[test]
    fn reads_switches_cables_and_ports() {
        let t = parse(NET, "ibnet:net").unwrap();
        assert_eq!(t.node_count(), 2);
        assert_eq!(t.links(), &[[0, 1], [0, 1]]);
        assert_eq!((t.node(0).hosts, t.node(1).hosts), (1, 2));
        assert_eq!(t.node_name(1), Some("sw2"));
        assert_eq!(t.port_names(0).unwrap(), ["3", "5", "1"]);
        assert_eq!(t.port_names(1).unwrap(), ["3", "5", "1", "2"]);
    }

    /// Each mistake is named with its line.
    #[test]
    fn bad_lines_are_named() {
        let err = |text: &str| parse(text, "x").unwrap_err().to_string();
        assert!(err("[1] \"a\"[1]\n").contains("line 1"));
        assert!(err("Switch 8 \"a\"\n[9] \"b\"[1]\n").contains("line 2"));
        assert!(err("Switch 8 \"a\"\n[1] \"b\"[1]\n").contains("does not describe"));
        assert!(
            err("Switch 8 \"a\"\n[1] \"b\"[2]\n\nSwitch 8 \"b\"\n[2] \"a\"[3]\n")
                .contains("line 2")
        );
        assert!(err("Switch 8 \"a\"\n[1] b[2]\n").contains("quoted peer"));
        assert!(err("Rt 8 \"r\"\n").contains("routers"));
        assert!(err("Switch x \"a\"\n").contains("port count"));
        assert!(err("Hca 2 \"h\"\n").contains("no switch"));
        // Names are checked on their own line.
        assert!(err("Switch 8 \"a\"\n\nSwitch 8 \"\"\n").contains("line 3"));
        assert!(err("Switch 8 \"a\u{7}\"\n").contains("line 1"));
    }

    /// A file saved with CR line ends (or CRLF, or a byte-order mark)
    /// reads as the same fabric.
    #[test]
    fn any_line_ends_read_alike() {
        let want = parse(NET, "n").unwrap();
        for text in [
            NET.replace('\n', "\r"),
            NET.replace('\n', "\r\n"),
            format!("\u{feff}{NET}"),
        ] {
            let t = parse(&text, "n").unwrap();
            assert_eq!(t.links(), want.links());
            assert_eq!(t.node_count(), want.node_count());
            assert_eq!(t.port_names(1), want.port_names(1));
        }
    }
}
