//! Seed derivation: every random choice in a run draws from a seed derived
//! from the user's seed and a fixed label, never from thread order.

/// SplitMix64 finaliser of `seed` combined with `label`.
pub fn mix(seed: u64, label: u64) -> u64 {
    let mut z = seed
        ^ label
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
