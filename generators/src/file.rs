//! The project's JSON topology format (`tagger-topology/1`) and the edge list.

use crate::error::{Result, TopologyError};
use crate::model::{Family, LinkProps, Node, NodeKind, Topology};
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::Path;

/// Format of a topology file.
pub const FORMAT: &str = "tagger-topology/1";

#[derive(Deserialize)]
struct RawTopology {
    format: String,
    name: Option<String>,
    nodes: Vec<RawNode>,
    links: Vec<RawLink>,
}

/// A link as read: exactly two node ids (`[0, 4]`), or an object with its
/// ends and optional physical properties
/// (`{"ends": [0, 4], "speed_gbps": 100, "cable_m": 5}`), or an error that
/// says which (serde's own for a fixed-size array is "trailing
/// characters").
struct RawLink([i64; 2], LinkProps);

/// The object form of a link; unknown fields are refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLinkObject {
    ends: RawEnds,
    speed_gbps: Option<f64>,
    cable_m: Option<f64>,
}

/// A link's two ends, checked for their count.
struct RawEnds([i64; 2]);

impl<'de> Deserialize<'de> for RawEnds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let ids: Vec<i64> = Vec::deserialize(d)?;
        match ids[..] {
            [a, b] => Ok(RawEnds([a, b])),
            _ => Err(serde::de::Error::custom(format!(
                "a link is two node ids, e.g. [0, 4]; this one has {}",
                ids.len()
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for RawLink {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = RawLink;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a link: two node ids, e.g. [0, 4], or {\"ends\": [0, 4], \"speed_gbps\": 100, \"cable_m\": 5}",
                )
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<RawLink, A::Error> {
                let o =
                    RawLinkObject::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(RawLink(
                    o.ends.0,
                    LinkProps {
                        speed_gbps: o.speed_gbps,
                        cable_m: o.cable_m,
                    },
                ))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<RawLink, A::Error> {
                let mut ids = [0i64; 2];
                let mut n = 0usize;
                while let Some(x) = seq.next_element::<i64>()? {
                    if n < 2 {
                        ids[n] = x;
                    }
                    n += 1;
                }
                if n != 2 {
                    return Err(serde::de::Error::custom(format!(
                        "a link is two node ids, e.g. [0, 4]; this one has {n}"
                    )));
                }
                Ok(RawLink(ids, LinkProps::default()))
            }
        }
        d.deserialize_any(Visit)
    }
}

#[derive(Deserialize)]
struct RawNode {
    id: i64,
    kind: String,
    level: Option<i64>,
    hosts: i64,
    /// One name per port (links in link-id order, then host ports).
    #[serde(default)]
    port_names: Vec<String>,
    /// The node's name (every node has one, or none does).
    #[serde(default)]
    name: Option<String>,
}

/// Physical memory this process may use, in bytes: the machine's
/// (`MemTotal` in `/proc/meminfo`), or its cgroup's limit when lower;
/// `None` where neither can be read.
pub fn machine_memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kib| kib.saturating_mul(1024))
    });
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok());
    match (total, cgroup) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

/// The lines of a text input, numbered from 1, as [`str::lines`] gives
/// them except that a line also ends at a lone `\r` (a file saved with
/// classic Mac line endings is as many lines as it shows, not one); a
/// leading byte-order mark is dropped.
pub fn text_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text.strip_prefix('\u{feff}').unwrap_or(text);
    std::iter::from_fn(move || {
        // As str::lines: a final line break ends the last line and starts
        // no empty one.
        if rest.is_empty() {
            return None;
        }
        let t = rest;
        match t.find(['\n', '\r']) {
            Some(i) => {
                let skip = if t[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = &t[i + skip..];
                Some(&t[..i])
            }
            None => {
                rest = "";
                Some(t)
            }
        }
    })
    .enumerate()
    .map(|(i, l)| (i + 1, l))
}

/// The largest input file read: an eighth of [`machine_memory`] (a
/// parsed file takes several times its text), 1 GiB where that is
/// unknown.
pub fn max_input_bytes() -> u64 {
    machine_memory().map_or(1 << 30, |m| m / 8)
}

/// Reads a text input (a topology, rules, path, profile, spec or failure
/// file) whole, refusing what cannot be one: a directory, a device, a FIFO
/// or socket (`/dev/zero` would never end, a FIFO may block forever), and a
/// file larger than [`max_input_bytes`].
///
/// # Errors
/// An I/O error whose message says which.
pub fn read_input(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let limit = max_input_bytes();
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a device, FIFO or socket)"
        };
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("is {what}; an input must be a regular file"),
        ));
    }
    let too_big = |n: u64| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "is {n} bytes or more, over the {limit}-byte limit on inputs (an eighth of this machine's memory)"
            ),
        )
    };
    if meta.len() > limit {
        return Err(too_big(meta.len()));
    }
    // The file may grow while it is read: stop one byte past the limit.
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(too_big(text.len() as u64));
    }
    Ok(text)
}

/// Reads a topology from a `tagger-topology/1` JSON file.
///
/// # Errors
/// [`TopologyError::Io`] when unreadable; [`TopologyError::File`] naming the
/// line and column (JSON syntax, missing fields) or the element
/// (`nodes[3].hosts`, `links[7]`) at fault.
pub fn read_json_file(path: &Path) -> Result<Topology> {
    let text = read_input(path).map_err(|cause| TopologyError::Io {
        path: path.to_path_buf(),
        cause,
    })?;
    parse_json(&text, &path.display().to_string()).map_err(|e| match e {
        TopologyError::Invalid { location, reason } => TopologyError::File {
            path: path.to_path_buf(),
            location,
            reason,
        },
        other => other,
    })
}

/// Parses the JSON format from a string; `origin` names it in errors.
///
/// # Errors
/// [`TopologyError::Invalid`] with the location of the first problem.
pub fn parse_json(text: &str, origin: &str) -> Result<Topology> {
    // Editors on some systems start files with a byte-order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let raw: RawTopology = serde_json::from_str(text).map_err(|e| TopologyError::Invalid {
        location: format!("line {}, column {}", e.line(), e.column()),
        reason: strip_position(&e.to_string()),
    })?;
    let bad = |location: String, reason: String| TopologyError::Invalid { location, reason };
    if raw.format != FORMAT {
        return Err(bad(
            "format".into(),
            format!("'{}' is not '{FORMAT}'", raw.format),
        ));
    }
    let mut nodes = Vec::with_capacity(raw.nodes.len());
    for (i, n) in raw.nodes.iter().enumerate() {
        if n.id != i as i64 {
            return Err(bad(
                format!("nodes[{i}].id"),
                format!("{} should be {i} (ids are 0..N-1 in order)", n.id),
            ));
        }
        let kind = match n.kind.as_str() {
            "switch" => NodeKind::Switch,
            "server" => NodeKind::Server,
            other => {
                return Err(bad(
                    format!("nodes[{i}].kind"),
                    format!("'{other}' is neither \"switch\" nor \"server\""),
                ));
            }
        };
        let level = match n.level {
            None => None,
            Some(l) if (0..=u32::MAX as i64).contains(&l) => Some(l as u32),
            Some(l) => {
                return Err(bad(
                    format!("nodes[{i}].level"),
                    format!("{l} must be in 0..={} or null", u32::MAX),
                ));
            }
        };
        if !(0..=u32::MAX as i64).contains(&n.hosts) {
            return Err(bad(
                format!("nodes[{i}].hosts"),
                format!("{} must be in 0..={}", n.hosts, u32::MAX),
            ));
        }
        nodes.push(Node {
            kind,
            level,
            hosts: n.hosts as u32,
        });
    }
    let count = nodes.len() as i64;
    let mut links = Vec::with_capacity(raw.links.len());
    let mut props = Vec::with_capacity(raw.links.len());
    for (l, &RawLink([a, b], p)) in raw.links.iter().enumerate() {
        if let Some(s) = p.speed_gbps
            && !(s > 0.0 && s <= crate::MAX_SPEED_GBPS)
        {
            return Err(bad(
                format!("links[{l}].speed_gbps"),
                format!(
                    "{s} is out of range (a number > 0 and at most {})",
                    crate::MAX_SPEED_GBPS
                ),
            ));
        }
        if let Some(c) = p.cable_m
            && !(0.0..=crate::MAX_CABLE_M).contains(&c)
        {
            return Err(bad(
                format!("links[{l}].cable_m"),
                format!(
                    "{c} is out of range (a number from 0 to {} m)",
                    crate::MAX_CABLE_M
                ),
            ));
        }
        props.push(p);
        for x in [a, b] {
            if !(0..count).contains(&x) {
                return Err(bad(
                    format!("links[{l}] = [{a}, {b}]"),
                    format!("node {x} does not exist (nodes are 0..{count})"),
                ));
            }
        }
        links.push([a as u32, b as u32]);
    }
    let name = raw.name.unwrap_or_else(|| origin.to_string());
    let named = raw.nodes.iter().filter(|n| n.name.is_some()).count();
    if named != 0 && named != raw.nodes.len() {
        let v = raw.nodes.iter().position(|n| n.name.is_none()).unwrap_or(0);
        return Err(bad(
            format!("nodes[{v}]"),
            format!("has no name though {named} other nodes have one (all or none)"),
        ));
    }
    let (port_names, node_names): (Vec<Vec<String>>, Vec<Option<String>>) = raw
        .nodes
        .into_iter()
        .map(|n| (n.port_names, n.name))
        .unzip();
    let family = generated_family(&name, &nodes, &links).unwrap_or(Family::File);
    let t = Topology::new(name, family, nodes, links)?
        .with_link_props(props)?
        .with_port_names(port_names)?;
    if named == 0 {
        return Ok(t);
    }
    t.with_node_names(node_names.into_iter().flatten().collect())
}

/// The family a file's topology was generated as, when its name is a
/// HyperX or BCube spec and the file holds exactly what that spec builds
/// (nodes and links in the same order): dimension-order routing (`dor`)
/// needs the family's coordinates, which a file written by `tagger run
/// --topology-out` would otherwise lose. Anything else is a file.
fn generated_family(name: &str, nodes: &[Node], links: &[[crate::NodeId; 2]]) -> Option<Family> {
    let crate::TopologySpec::Generated(f) = crate::TopologySpec::parse(name).ok()? else {
        return None;
    };
    if !f.has_dimensions() {
        return None;
    }
    // Sized before it is built: a name may claim any size.
    let (n, l) = f.size()?;
    if n != nodes.len() as u64 || l != links.len() as u64 {
        return None;
    }
    let t = crate::TopologySpec::Generated(f).build().ok()?;
    (t.nodes() == nodes && t.links() == links).then(|| t.family().clone())
}

fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Renders a topology as `tagger-topology/1` JSON, one node or link per line.
pub fn to_json(t: &Topology) -> String {
    let mut s = String::with_capacity(64 + t.node_count() * 48 + t.link_count() * 16);
    let _ = write!(
        s,
        "{{\"format\": \"{FORMAT}\",\n \"name\": {},\n \"nodes\": [",
        serde_json::to_string(t.name()).expect("a string serialises")
    );
    for (i, n) in t.nodes().iter().enumerate() {
        let level = n.level.map_or("null".to_string(), |l| l.to_string());
        let sep = if i == 0 { "\n  " } else { ",\n  " };
        let _ = write!(
            s,
            "{sep}{{\"id\": {i}, \"kind\": \"{}\", \"level\": {level}, \"hosts\": {}",
            n.kind.as_str(),
            n.hosts
        );
        if let Some(name) = t.node_name(i as u32) {
            let _ = write!(
                s,
                ", \"name\": {}",
                serde_json::to_string(name).expect("a string serialises")
            );
        }
        if let Some(names) = t.port_names(i as u32) {
            let _ = write!(
                s,
                ", \"port_names\": {}",
                serde_json::to_string(names).expect("strings serialise")
            );
        }
        s.push('}');
    }
    s.push_str("],\n \"links\": [");
    for (i, [a, b]) in t.links().iter().enumerate() {
        let sep = if i == 0 { "\n  " } else { ",\n  " };
        let p = t.link_props(i as u32);
        if p == LinkProps::default() {
            let _ = write!(s, "{sep}[{a}, {b}]");
        } else {
            let _ = write!(s, "{sep}{{\"ends\": [{a}, {b}]");
            if let Some(x) = p.speed_gbps {
                let _ = write!(s, ", \"speed_gbps\": {x}");
            }
            if let Some(x) = p.cable_m {
                let _ = write!(s, ", \"cable_m\": {x}");
            }
            s.push('}');
        }
    }
    s.push_str("]}\n");
    s
}

/// Renders the edge list: one `u v` line per link, in link-id order.
pub fn to_edgelist(t: &Topology) -> String {
    let mut s = String::with_capacity(t.link_count() * 12);
    for [a, b] in t.links() {
        let _ = writeln!(s, "{a} {b}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_json(text, "t").unwrap_err().to_string()
    }

    const OK: &str = r#"{"format": "tagger-topology/1", "name": "tiny",
 "nodes": [{"id": 0, "kind": "switch", "level": 0, "hosts": 2},
           {"id": 1, "kind": "server", "level": null, "hosts": 0}],
 "links": [[0, 1], [1, 0]]}"#;

    /// Port names are kept, written back, and checked against the node's
    /// ports (links in link-id order, then host ports).
    #[test]
    fn node_names_round_trip_and_are_checked() {
        let doc = |a: &str, b: &str| {
            format!(
                r#"{{"format": "tagger-topology/1", "nodes": [
 {{"id": 0, "kind": "switch", "level": null, "hosts": 1{a}}},
 {{"id": 1, "kind": "switch", "level": null, "hosts": 1{b}}}],
 "links": [[0, 1]]}}"#
            )
        };
        let t = parse_json(&doc(r#", "name": "S-01""#, r#", "name": "leaf 2""#), "t").unwrap();
        assert_eq!(
            (t.node_name(0), t.node_name(1)),
            (Some("S-01"), Some("leaf 2"))
        );
        let again = parse_json(&to_json(&t), "t").unwrap();
        assert_eq!(again.node_name(1), Some("leaf 2"));
        assert_eq!(parse_json(OK, "t").unwrap().node_name(0), None);
        for (a, b, want) in [
            (
                r#", "name": "x""#,
                "",
                "nodes[1]: has no name though 1 other",
            ),
            (
                r#", "name": "x""#,
                r#", "name": "x""#,
                "'x' also names node 0",
            ),
            (r#", "name": """#, r#", "name": "y""#, "is not a node name"),
        ] {
            let e = parse_json(&doc(a, b), "t").unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn text_lines_end_at_any_line_break() {
        fn lines(t: &str) -> Vec<&str> {
            text_lines(t).map(|(_, l)| l).collect()
        }
        for t in [
            "a\nb\n\nc",
            "a\r\nb\r\n\r\nc\r\n",
            "a\rb\r\rc\r",
            "\u{feff}a\nb\r\rc",
        ] {
            assert_eq!(lines(t), ["a", "b", "", "c"], "{t:?}");
        }
        assert!(lines("").is_empty());
        assert_eq!(text_lines("x\ry").last(), Some((2, "y")));
    }

    #[test]
    fn port_names_round_trip_and_are_checked() {
        let doc = |names: &str| {
            format!(
                r#"{{"format": "tagger-topology/1", "nodes": [
 {{"id": 0, "kind": "switch", "level": 0, "hosts": 1, "port_names": {names}}},
 {{"id": 1, "kind": "switch", "level": 1, "hosts": 0}}],
 "links": [[0, 1], [1, 0]]}}"#
            )
        };
        let t = parse_json(&doc(r#"["Ethernet8", "Ethernet12", "Ethernet0"]"#), "t").unwrap();
        assert_eq!(
            t.port_names(0).unwrap(),
            &["Ethernet8", "Ethernet12", "Ethernet0"]
        );
        assert_eq!(t.port_names(1), None);
        let again = parse_json(&to_json(&t), "t").unwrap();
        assert_eq!(again.port_names(0), t.port_names(0));
        assert!(
            to_json(&parse_json(OK, "t").unwrap())
                .find("port_names")
                .is_none()
        );
        for (names, want) in [
            (
                r#"["a", "b"]"#,
                "nodes[0].port_names: 2 names for 3 ports (2 links, then 1 host ports)",
            ),
            (r#"["a", "b", "a"]"#, "'a' names two ports"),
            (r#"["a", "b|c", "d"]"#, "'b|c' is not a port name"),
            (r#"["a", "", "d"]"#, "'' is not a port name"),
        ] {
            let e = err(&doc(names));
            assert!(e.contains(want), "{e}");
        }
    }

    /// A HyperX or BCube written out and read back keeps its family (and
    /// so its coordinates, which `dor` needs); an edited one, or another
    /// family, is a file.
    #[test]
    fn generated_dimensions_survive_a_round_trip() {
        for spec in ["hyperx:l=2,s=3,k=2,t=1", "bcube:n=3,k=1"] {
            let t = crate::spec::build(spec).unwrap();
            let back = parse_json(&to_json(&t), "t").unwrap();
            assert_eq!(back.family(), t.family(), "{spec}");
            assert!(back.family().has_dimensions());
            // One link fewer: no longer what the spec builds.
            let text = to_json(&t);
            let edited = text.replacen("\n  [0, 1],", "\n", 1);
            if edited != text {
                let e = parse_json(&edited, "t").unwrap();
                assert_eq!(e.family(), &Family::File, "{spec}");
            }
        }
        let f = crate::spec::build("fattree:k=4").unwrap();
        assert_eq!(
            parse_json(&to_json(&f), "t").unwrap().family(),
            &Family::File
        );
    }

    #[test]
    fn reads_and_round_trips() {
        let t = parse_json(OK, "t").unwrap();
        assert_eq!(t.name(), "tiny");
        assert_eq!(t.link_count(), 2);
        assert_eq!(t.endpoints(), &[0, 1]);
        let again = parse_json(&to_json(&t), "t").unwrap();
        assert_eq!(again.nodes(), t.nodes());
        assert_eq!(again.links(), t.links());
        assert_eq!(to_edgelist(&t), "0 1\n1 0\n");
    }

    /// A link may carry its speed and cable length; they survive a round
    /// trip, and a bad or unknown field is named.
    #[test]
    fn links_carry_speed_and_cable() {
        let text = OK.replace(
            "[[0, 1], [1, 0]]",
            "[{\"ends\": [0, 1], \"speed_gbps\": 400, \"cable_m\": 2.5}, [1, 0]]",
        );
        let t = parse_json(&text, "t").unwrap();
        assert_eq!(t.links(), &[[0, 1], [1, 0]]);
        assert_eq!(
            t.link_props(0),
            LinkProps {
                speed_gbps: Some(400.0),
                cable_m: Some(2.5)
            }
        );
        assert_eq!(t.link_props(1), LinkProps::default());
        let again = parse_json(&to_json(&t), "t").unwrap();
        assert_eq!(again.link_props(0), t.link_props(0));
        assert!(to_json(&parse_json(OK, "t").unwrap()).contains("[0, 1]"));
        assert!(err(&text.replace("2.5", "-1")).contains("links[0].cable_m: -1"));
        assert!(err(&text.replace("400", "0")).contains("links[0].speed_gbps: 0"));
        assert!(err(&text.replace("\"cable_m\"", "\"colour\"")).contains("unknown field `colour`"));
        assert!(err(&text.replace("[0, 1]", "[0, 1, 2]")).contains("this one has 3"));
    }

    #[test]
    fn every_bad_input_is_named() {
        assert!(err("not json").contains("line 1, column"));
        assert!(
            err(&OK.replace("[1, 0]", "[1, 7]"))
                .contains("links[1] = [1, 7]: node 7 does not exist")
        );
        assert!(
            err(&OK.replace("[1, 0]", "[1, 1]"))
                .contains("links[1] = [1, 1]: a link must join two distinct nodes")
        );
        assert!(
            err(&OK.replace("\"hosts\": 2", "\"hosts\": -2"))
                .contains("nodes[0].hosts: -2 must be in 0..=4294967295")
        );
        let e = err(&OK.replace(", \"hosts\": 2", ""));
        assert!(
            e.contains("missing field `hosts`") && e.contains("line 2"),
            "{e}"
        );
        assert!(err(&OK.replace("\"id\": 1", "\"id\": 5")).contains("nodes[1].id: 5 should be 1"));
        assert!(err(&OK.replace("\"server\"", "\"router\"")).contains("nodes[1].kind: 'router'"));
        assert!(err(&OK.replace("tagger-topology/1", "v2")).contains("format: 'v2'"));
        assert!(err(&OK.replace("\"level\": 0", "\"level\": -1")).contains("nodes[0].level"));
    }
}
