//! Path counts, longest ELP and pair coverage of an [`ElpSet`], by dynamic
//! programming over each family's representation.

use super::{ElpCounts, ElpSet};
use crate::bits::Bits;
use tagger_generators::Topology;

/// Path counts, longest ELP and pairs covered of `set` on `topo`, computed per family without enumerating paths.
pub fn counts(set: &ElpSet, topo: &Topology) -> ElpCounts {
    let e = topo.endpoints().len() as u64;
    let parts = set.shortest.is_some() as usize
        + set.kbounce.is_some() as usize
        + set.dor.is_some() as usize
        + set.explicit.is_some() as usize;
    let mut c = ElpCounts {
        paths: 0,
        paths_exact: parts == 1,
        longest: 0,
        pairs_covered: 0,
        pairs_total: e * (e - 1),
    };
    let add = |c: &mut ElpCounts, n: u128, sat: bool| {
        c.paths = c.paths.saturating_add(n);
        if sat {
            c.paths_exact = false;
        }
    };
    // Pair coverage: shortest covers every connected pair and dor every pair,
    // so only kbounce and explicit paths need a pair set.
    let mut full_cover = None;
    if let Some(sp) = &set.shortest {
        add(&mut c, sp.paths, sp.saturated);
        c.longest = c.longest.max(sp.longest);
        full_cover = Some(sp.pairs_covered);
    }
    if let Some(d) = &set.dor {
        add(&mut c, d.paths() as u128, false);
        c.longest = c.longest.max(d.longest());
        full_cover = Some(d.paths());
    }
    let mut pairs: Option<Vec<Bits>> = None;
    if let Some(kb) = &set.kbounce {
        let (n, sat, longest, p) = kb.count(topo);
        add(&mut c, n, sat);
        c.longest = c.longest.max(longest);
        pairs = Some(p);
    }
    if let Some(ex) = &set.explicit {
        add(&mut c, ex.len() as u128, false);
        let pairs = pairs.get_or_insert_with(|| vec![Bits::new(e as usize); e as usize]);
        for p in ex.iter() {
            c.longest = c.longest.max(p.len() as u32 - 1);
            let (s, d) = (
                topo.endpoint_index(p[0]),
                topo.endpoint_index(*p.last().unwrap()),
            );
            pairs[s as usize].set(d as usize);
        }
    }
    c.pairs_covered = match (full_cover, pairs) {
        (Some(n), _) => n,
        (None, Some(p)) => p.iter().map(|b| b.count() as u64).sum(),
        (None, None) => 0,
    };
    c
}
