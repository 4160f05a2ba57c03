//! What verification can find wrong, one variant per check.

use crate::rules::Entry;
use std::fmt;
use tagger_generators::{ChannelId, LinkId, NodeId};

/// One way a rule set fails verification. Its `Display` is the message
/// `tagger verify` prints; [`Violation::kind`] names the check.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// A header field disagrees with the topology or the entries: `field`
    /// is `topology`, `initial_tag`, `classes` or `priorities`.
    Header {
        /// The header field.
        field: &'static str,
        /// What disagrees.
        reason: String,
    },
    /// An entry that is malformed on its own (its node or links are not in
    /// the topology or do not fit together, a priority is 0, or a host
    /// port's entry matches a tag hosts do not send).
    Entry {
        /// The entry.
        entry: Entry,
        /// What is wrong with it.
        reason: String,
    },
    /// Rule consistency: one key `(node, in_link, tag, out_link)` with two
    /// next tags.
    Key {
        /// The switch.
        node: NodeId,
        /// The link the packet came in on (`None`: from a host).
        in_link: Option<LinkId>,
        /// The tag it carries.
        tag: u32,
        /// The link it leaves on.
        out_link: LinkId,
        /// The two next tags, the first one met first.
        next_tags: [u32; 2],
    },
    /// One packet state `(node, in_link, tag)` put in two queues.
    Queue {
        /// The switch.
        node: NodeId,
        /// The link the packets arrive on (`None`: from a host).
        in_link: Option<LinkId>,
        /// The tag they carry.
        tag: u32,
        /// The two queues (priorities), the first one met first.
        queues: [u32; 2],
    },
    /// An entry lowers the priority.
    Decrease {
        /// The entry.
        entry: Entry,
    },
    /// More priorities than the switches have lossless queues.
    Priorities {
        /// Priorities the rules use.
        used: u32,
        /// Lossless queues per port.
        queues: u32,
    },
    /// A tag larger than the header field can carry.
    Tags {
        /// The largest tag the rules use.
        used: u32,
        /// Tags the field carries.
        max: u32,
    },
    /// A switch needs more traffic classes for its lossless packets than it
    /// has (a stock switch sorts them into queues by port maps alone).
    Classes {
        /// The switch.
        node: NodeId,
        /// Traffic classes it needs.
        needs: u32,
        /// Traffic classes it has for lossless traffic.
        has: u32,
    },
    /// A priority's dependency graph has a cycle: its channels in order,
    /// each with its (source, destination) nodes.
    Cycle {
        /// The priority.
        priority: u32,
        /// The cycle's channels in order, each with its source and
        /// destination node.
        channels: Vec<(ChannelId, NodeId, NodeId)>,
    },
    /// An ELP step finds no lossless entry: a packet at `node` from
    /// `in_link` (`None`: from a host) with `tag`, bound for `out_link`.
    Replay {
        /// The switch.
        node: NodeId,
        /// The link the packet came in on (`None`: from a host).
        in_link: Option<LinkId>,
        /// The tag it carries.
        tag: u32,
        /// The link its path continues on.
        out_link: LinkId,
    },
}

impl Violation {
    /// The check that found it: `header`, `entry`, `key`, `queue`,
    /// `decrease`, `priorities`, `tags`, `classes`, `cycle` or `replay`.
    pub fn kind(&self) -> &'static str {
        match self {
            Violation::Header { .. } => "header",
            Violation::Entry { .. } => "entry",
            Violation::Key { .. } => "key",
            Violation::Queue { .. } => "queue",
            Violation::Decrease { .. } => "decrease",
            Violation::Priorities { .. } => "priorities",
            Violation::Tags { .. } => "tags",
            Violation::Classes { .. } => "classes",
            Violation::Cycle { .. } => "cycle",
            Violation::Replay { .. } => "replay",
        }
    }
}

/// An entry as its JSON fields, for messages.
pub(super) fn show(e: &Entry) -> String {
    format!(
        "entry {{node {}, in_link {}, tag {}, out_link {}, next_tag {}, priority {}, next_priority {}}}",
        e.node,
        e.in_link.map_or("null".to_string(), |l| l.to_string()),
        e.tag,
        e.out_link,
        e.next_tag,
        e.priority,
        e.next_priority
    )
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Header { reason, .. } => f.write_str(reason),
            Violation::Entry { entry, reason } => write!(f, "{}: {reason}", show(entry)),
            Violation::Key {
                node,
                in_link,
                tag,
                out_link,
                next_tags: [a, b],
            } => write!(
                f,
                "node {node}, in_link {}, tag {tag}, out_link {out_link} has two actions: next_tag {a} and {b}",
                in_link.map_or("null".to_string(), |l| l.to_string())
            ),
            Violation::Queue {
                node,
                in_link,
                tag,
                queues: [a, b],
            } => write!(
                f,
                "packets at node {node} from link {} with tag {tag} are put in queues {a} and {b}",
                in_link.map_or("a host".to_string(), |l| l.to_string())
            ),
            Violation::Decrease { entry } => write!(
                f,
                "{} lowers the priority from {} to {}",
                show(entry),
                entry.priority,
                entry.next_priority
            ),
            Violation::Priorities { used, queues } => write!(
                f,
                "the rules use {used} lossless priorities; the switches have {queues} lossless queues per port"
            ),
            Violation::Tags { used, max } => write!(
                f,
                "the rules use tag {used}; the packet header carries {max} tags (DSCP)"
            ),
            Violation::Classes { node, needs, has } => write!(
                f,
                "switch {node} needs {needs} traffic classes for lossless packets; it has {has}"
            ),
            Violation::Cycle { priority, channels } => {
                let shown: Vec<String> = channels
                    .iter()
                    .map(|(_, a, b)| format!("({a}->{b})"))
                    .collect();
                write!(
                    f,
                    "priority {priority} has a cyclic buffer dependency: {}",
                    shown.join(" -> ")
                )
            }
            Violation::Replay {
                node,
                in_link: None,
                tag,
                out_link,
            } => write!(
                f,
                "a packet from a host at node {node} to link {out_link} (tag {tag}) has no lossless entry"
            ),
            Violation::Replay {
                node,
                in_link: Some(l),
                tag,
                out_link,
            } => write!(
                f,
                "an ELP at node {node} from link {l} (tag {tag}) to link {out_link} has no lossless entry"
            ),
        }
    }
}
