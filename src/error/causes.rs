//! The causes [`super::Error`] carries that are pure data: what is wrong
//! with an ELP spec, why an ELP family does not apply to a topology, and
//! why a tag or queue mapping is refused. They live here, below every
//! stage, so that the error type names nothing above it; the stages
//! re-export them (`elp::SpecError`, `elp::Mismatch`,
//! `sonic::MappingError`).

use tagger_generators::params::ParamsError;

/// The largest bounce count. `kbounce:K` needs K + 1 lossless priorities
/// under bounce tagging, and PFC has 8 priority classes, so K = 7 is the
/// most any switch could run; a small cap also keeps each state's prefix
/// record (`KbSources`) at 32 bytes.
pub const MAX_BOUNCES: u32 = 7;
/// The largest explicit path count one spec may ask for.
pub const MAX_RANDOM_PATHS: u32 = 50_000_000;

/// Why an ELP spec does not parse: the part and parameter at fault, typed
/// (reported as [`super::Error::ElpSyntax`] with the spec).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// Nothing given.
    #[error("empty ELP spec (try shortest, kbounce:1, dor, random:1000, file:PATH)")]
    Empty,
    /// A family's parameter list that is not `key=value,...`.
    #[error("{family}: {cause}")]
    Params {
        /// The family.
        family: String,
        /// Why the list does not parse.
        #[source]
        cause: ParamsError,
    },
    /// A parameter given to `shortest` or `dor`.
    #[error("{family} takes no parameters, got '{got}'")]
    NoParameters {
        /// The family.
        family: String,
        /// The first parameter, as given.
        got: String,
    },
    /// `kbounce` without its one parameter, or with more.
    #[error("kbounce needs exactly one parameter, e.g. kbounce:1")]
    KBounceArity,
    /// `kbounce:K` past [`MAX_BOUNCES`].
    #[error("kbounce: K = {k} exceeds {MAX_BOUNCES}")]
    TooManyBounces {
        /// The K given.
        k: u64,
    },
    /// A numeric parameter that is not a count.
    #[error("{family}: {key} = {value} is {why}")]
    NotACount {
        /// The family.
        family: String,
        /// The parameter, as messages name it.
        key: String,
        /// The value given.
        value: String,
        /// What it is instead (negative, too large, not a number).
        why: &'static str,
    },
    /// A parameter the family does not take.
    #[error("{family}: unknown parameter '{key}'")]
    UnknownParameter {
        /// The family.
        family: String,
        /// The parameter (or the bare value).
        key: String,
    },
    /// `random` without its path count.
    #[error("random needs a path count, e.g. random:1000")]
    RandomCountMissing,
    /// `random:N` out of range.
    #[error("random: N = {n} must be in 1..={MAX_RANDOM_PATHS}")]
    RandomCount {
        /// The N given.
        n: u64,
    },
    /// `random`'s `maxlen` out of range.
    #[error("random: maxlen = {maxlen} must be in 1..=65536")]
    RandomMaxlen {
        /// The value given.
        maxlen: u64,
    },
    /// `ksp` without K.
    #[error("ksp needs K, e.g. ksp:8")]
    KspKMissing,
    /// `ksp:K` out of range.
    #[error("ksp: K = {k} must be in 1..=1024")]
    KspK {
        /// The K given.
        k: u64,
    },
    /// `ksp`'s `pairs=0`.
    #[error("ksp: pairs = 0 must be at least 1")]
    KspNoPairs,
    /// `file:` or `lfts:` without a path.
    #[error("{family}: needs a path, e.g. {family}:{example}")]
    PathMissing {
        /// The family.
        family: String,
        /// A file name such a family reads.
        example: &'static str,
    },
    /// A family name that is not one.
    #[error(
        "unknown family '{name}' (expected shortest, kbounce:K, dor, ksp:K, random:N, file:PATH)"
    )]
    UnknownFamily {
        /// The name given.
        name: String,
    },
    /// A family given twice where it may not be.
    #[error("family '{name}' given twice")]
    Twice {
        /// The family.
        name: String,
    },
}

/// Why an ELP family does not apply to a topology.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    /// ELPs join endpoints, and the topology has fewer than two.
    #[error(
        "topology {topology} has {endpoints} endpoints; ELPs need at least 2 (switches with hosts, or servers)"
    )]
    TooFewEndpoints {
        /// The topology's name.
        topology: String,
        /// Its endpoints.
        endpoints: usize,
    },
    /// `kbounce` on a topology without a level on every node.
    #[error("kbounce needs a tiered topology with a level on every node; {topology} has none")]
    NotTiered {
        /// The topology's name.
        topology: String,
    },
    /// `kbounce` on a tiered topology with a link inside a level or
    /// across several.
    #[error(
        "kbounce needs every link to join adjacent levels; link {link} joins node {a} (level {level_a}) and node {b} (level {level_b})"
    )]
    NotAdjacent {
        /// The link.
        link: usize,
        /// One end.
        a: u32,
        /// Its level.
        level_a: u32,
        /// The other end.
        b: u32,
        /// Its level.
        level_b: u32,
    },
    /// `dor` off HyperX and BCube.
    #[error("dor needs a HyperX or BCube topology; {topology} is {family}")]
    NotDirect {
        /// The topology's name.
        topology: String,
        /// Its family.
        family: String,
    },
    /// `random` on a topology whose endpoints are not all connected.
    #[error("the topology is not connected between endpoints")]
    Disconnected,
    /// `random` found no walk for a pair within its length limit.
    #[error(
        "random: no walk from node {from} to node {to} within maxlen = {maxlen} links after {tries} tries"
    )]
    NoWalk {
        /// The pair's source.
        from: u32,
        /// Its destination.
        to: u32,
        /// The walks' length limit.
        maxlen: u32,
        /// Walks tried.
        tries: u32,
    },
}

/// Why a tag -> DSCP or priority -> queue mapping is refused
/// ([`super::Error::Mapping`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MappingError {
    /// A list with no value.
    #[error("{list}: the list is empty")]
    Empty {
        /// The list (`dscp`, `queues`).
        list: &'static str,
    },
    /// A value out of its range.
    #[error("{list}[{index}] = {value}: must be in 1..={max} (0 is the lossy class)")]
    OutOfRange {
        /// The list.
        list: &'static str,
        /// The value's index.
        index: usize,
        /// The value.
        value: u32,
        /// The largest allowed (63 for DSCP, 7 for queues).
        max: u32,
    },
    /// A value given twice.
    #[error("{list}[{index}] = {value}: the value is listed twice")]
    Twice {
        /// The list.
        list: &'static str,
        /// The second occurrence's index.
        index: usize,
        /// The value.
        value: u32,
    },
    /// An item of a comma-separated list that is not a number.
    #[error("'{item}' is not a number (expected e.g. 3,4,2)")]
    NotANumber {
        /// The item as given.
        item: String,
    },
    /// A recorded mapping without one of its lists.
    #[error("mapping.{key} is missing")]
    Missing {
        /// The list's key.
        key: &'static str,
    },
    /// A recorded mapping's value that is not a number.
    #[error("mapping.{key}: {value} is not a number")]
    NotAnInteger {
        /// The list's key.
        key: &'static str,
        /// The value as recorded.
        value: String,
    },
    /// A tag past the DSCP list.
    #[error("tag {tag} has no DSCP value: the mapping has {len} (tags 1..={len})")]
    NoDscp {
        /// The tag.
        tag: u32,
        /// DSCP values the mapping has.
        len: usize,
    },
    /// A queue the switch profile's ports do not have.
    #[error(
        "queues[{index}] = {value}: {profile} has {queues} queues per port (0 to {}, 0 the lossy one)", queues.saturating_sub(1)
    )]
    NoSuchQueue {
        /// The value's index.
        index: usize,
        /// The queue.
        value: u32,
        /// The profile's name.
        profile: String,
        /// Its queues per port.
        queues: u32,
    },
    /// A lossless priority past the queue list.
    #[error("lossless priority {priority} has no queue: the mapping has {len} lossless queues")]
    NoQueue {
        /// The priority.
        priority: u32,
        /// Lossless queues the mapping has.
        len: usize,
    },
}
