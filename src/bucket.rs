//! Stable bucketing of a large array in parallel, for the stages that
//! split tens of millions of keys or entries by priority.

use rayon::prelude::*;

/// Chunks past which [`bucket`] splits its items: four per thread, at
/// least 2^16 items each (below that one chunk does it all).
pub(crate) fn chunk_for(items: usize) -> usize {
    items
        .div_ceil(4 * rayon::current_num_threads())
        .max(1 << 16)
}

/// Items `0..len` that `key` maps to `Some((bucket, value))`, as `value`
/// in bucket `bucket` (below `width`), each bucket in item order.
///
/// Chunks of `chunk` items count their buckets in parallel; then each
/// chunk writes its values into its own stretch of every bucket, so the
/// order is that of one sequential pass on any number of threads. `key`
/// runs twice per item.
///
/// Complexity: O(len + width * chunks), in parallel over the chunks.
///
/// # Panics
/// If `key` gives a bucket of `width` or more.
pub(crate) fn bucket<U: Copy + Send + Sync>(
    len: usize,
    width: usize,
    chunk: usize,
    key: impl Fn(usize) -> Option<(usize, U)> + Sync,
) -> Vec<Vec<U>> {
    let Some(fill) = (0..len).find_map(|i| key(i).map(|(_, x)| x)) else {
        return vec![Vec::new(); width];
    };
    let chunk = chunk.max(1);
    let starts: Vec<usize> = (0..len).step_by(chunk).collect();
    let range = |s: usize| s..(s + chunk).min(len);
    let counts: Vec<Vec<usize>> = starts
        .par_iter()
        .map(|&s| {
            let mut n = vec![0usize; width];
            for i in range(s) {
                if let Some((b, _)) = key(i) {
                    n[b] += 1;
                }
            }
            n
        })
        .collect();
    let mut out: Vec<Vec<U>> = (0..width)
        .map(|b| {
            let total = counts.iter().map(|n| n[b]).sum();
            let mut v = Vec::with_capacity(total);
            v.par_extend(rayon::iter::repeat_n(fill, total));
            v
        })
        .collect();
    // Per chunk, its stretch of each bucket.
    let mut stretches: Vec<Vec<&mut [U]>> = counts.iter().map(|_| Vec::new()).collect();
    for (b, list) in out.iter_mut().enumerate() {
        let mut rest = list.as_mut_slice();
        for (n, mine) in counts.iter().zip(&mut stretches) {
            let (here, after) = rest.split_at_mut(n[b]);
            mine.push(here);
            rest = after;
        }
    }
    starts.par_iter().zip(stretches).for_each(|(&s, mut mine)| {
        let mut at = vec![0usize; width];
        for i in range(s) {
            if let Some((b, x)) = key(i) {
                mine[b][at[b]] = x;
                at[b] += 1;
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Any chunk size gives what one sequential pass gives.
        #[test]
        fn buckets_are_a_sequential_pass(
            items in proptest::collection::vec((0usize..5, any::<u16>(), any::<bool>()), 0..300),
            chunk in 1usize..40,
        ) {
            let key = |i: usize| {
                let (b, x, keep) = items[i];
                keep.then_some((b, x))
            };
            let mut want = vec![Vec::new(); 5];
            for i in 0..items.len() {
                if let Some((b, x)) = key(i) {
                    want[b].push(x);
                }
            }
            prop_assert_eq!(bucket(items.len(), 5, chunk, key), want);
        }
    }
}
