//! A chunk of the walk's frontier and its continuations, expanded on one
//! thread.

use super::NONE;
use crate::elp::Prefixes;
use crate::error::Result;
use tagger_generators::ChannelId;

/// Continuations of a chunk of the frontier. Greedy's first pass fills
/// `chans` and `ends` only: items `ends[i-1]..ends[i]` are the channels its
/// `i`-th state continues on. [`Chunk::expand_merged`] then fills `chans`,
/// `prefs` and `next_tag` with one merged item per reached state.
#[derive(Default)]
pub(super) struct Chunk {
    pub(super) chans: Vec<ChannelId>,
    pub(super) prefs: Vec<Prefixes>,
    pub(super) ends: Vec<usize>,
    /// Heap bytes behind the items' prefix records.
    pub(super) heap: u64,
    /// After [`Chunk::expand_merged`]: the tag of each item.
    pub(super) next_tag: Vec<u32>,
    /// After [`Chunk::expand_merged`]: the previous item with the same
    /// channel.
    pub(super) same_channel: Vec<u32>,
    /// One state's continuations, in [`Chunk::expand_merged`].
    pub(super) tmp_chans: Vec<ChannelId>,
    pub(super) tmp_prefs: Vec<Prefixes>,
}

thread_local! {
    /// Per channel, the last merged item of the current chunk on it (`NONE`
    /// between chunks): a thread's scratch for [`Chunk::expand_merged`].
    static LAST_ON_CHANNEL: std::cell::RefCell<Vec<u32>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl Chunk {
    /// Adds continuation `(c2, q)` with next tag `t2`, merging it into an
    /// earlier one reaching the same state. `kept` items are merged so far;
    /// `last` is the thread's [`LAST_ON_CHANNEL`].
    pub(super) fn push_merged(
        &mut self,
        last: &mut [u32],
        kept: &mut usize,
        c2: ChannelId,
        t2: u32,
        q: Prefixes,
    ) {
        let mut j = last[c2 as usize];
        while j != NONE && self.next_tag[j as usize] != t2 {
            j = self.same_channel[j as usize];
        }
        if j != NONE {
            self.prefs[j as usize].union(q);
            return;
        }
        self.same_channel.push(last[c2 as usize]);
        last[c2 as usize] = *kept as u32;
        self.next_tag.push(t2);
        if *kept < self.chans.len() {
            self.chans[*kept] = c2;
            self.prefs[*kept] = q;
        } else {
            self.chans.push(c2);
            self.prefs.push(q);
        }
        *kept += 1;
    }

    /// Runs `with_scratch` on the thread's [`LAST_ON_CHANNEL`] sized for
    /// `channels`, then clears the entries of the merged items.
    pub(super) fn with_last<R>(
        &mut self,
        channels: usize,
        with_scratch: impl FnOnce(&mut Self, &mut [u32]) -> R,
    ) -> R {
        LAST_ON_CHANNEL.with_borrow_mut(|last| {
            if last.len() < channels {
                last.resize(channels, NONE);
            }
            self.next_tag.clear();
            self.same_channel.clear();
            let r = with_scratch(self, last);
            for c2 in &self.chans {
                last[*c2 as usize] = NONE;
            }
            r
        })
    }

    /// Expands each state of `fr` with `expand(state, prefixes, chans,
    /// prefs)`, which appends the state's continuations to the (empty)
    /// buffers, finds the next tag of each with `next_tag(state, channel)`,
    /// and keeps one merged item per reached state, in order of first
    /// reach. Stops at the first error.
    pub(super) fn expand_merged(
        &mut self,
        fr: &mut [(u32, Prefixes)],
        channels: usize,
        mut expand: impl FnMut(u32, &Prefixes, &mut Vec<ChannelId>, &mut Vec<Prefixes>),
        mut next_tag: impl FnMut(u32, ChannelId) -> Result<u32>,
    ) -> Result<()> {
        self.chans.clear();
        self.prefs.clear();
        self.ends.clear();
        let (mut chans, mut prefs) = (
            std::mem::take(&mut self.tmp_chans),
            std::mem::take(&mut self.tmp_prefs),
        );
        let r = self.with_last(channels, |me, last| {
            let mut kept = 0;
            for (s, p) in fr {
                chans.clear();
                prefs.clear();
                // Freed once expanded: see [`Walker::expand`].
                let p = std::mem::take(p);
                expand(*s, &p, &mut chans, &mut prefs);
                for (&c2, q) in chans.iter().zip(prefs.drain(..)) {
                    let t2 = next_tag(*s, c2)?;
                    me.push_merged(last, &mut kept, c2, t2, q);
                }
            }
            Ok(())
        });
        self.tmp_chans = chans;
        self.tmp_prefs = prefs;
        self.heap = self.prefs.iter().map(Prefixes::heap_bytes).sum();
        r
    }

    /// Fills `chans` and `ends` with the channels each state of `fr`
    /// continues on, which `successors(state, prefixes, out)` appends.
    pub(super) fn list_successors(
        &mut self,
        fr: &[(u32, Prefixes)],
        mut successors: impl FnMut(u32, &Prefixes, &mut Vec<ChannelId>),
    ) {
        self.chans.clear();
        self.ends.clear();
        for (s, p) in fr {
            successors(*s, p, &mut self.chans);
            self.ends.push(self.chans.len());
        }
    }

    pub(super) fn lists(&self) -> impl Iterator<Item = &[ChannelId]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(a, &b)| &self.chans[a..b])
    }
}
