//! The one seeded generator of the workspace: SplitMix64 (Steele, Lea and Flood 2014), our own
//! so that every seeded output — benchmark files, layouts, bootstrap intervals, synthetic
//! graphs, offline samples — stays bit-identical across dependency upgrades. No I/O; builds
//! for wasm32.
//!
//! The pieces are exposed separately because callers use them in three ways: as a stream
//! ([`SplitMix64`]), as a stateless hash of one value ([`splitmix64`]), and as the bare output
//! mix ([`mix64`]). The float mapping [`unit_f64`] is the one every caller uses (53 high bits).

/// The golden-ratio increment SplitMix64 adds to its state per draw.
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function (a bijective 64-bit mix).
#[inline]
#[must_use]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One SplitMix64 step from state `x`, as a stateless hash: the first draw of
/// `SplitMix64::new(x)`.
#[inline]
#[must_use]
pub const fn splitmix64(x: u64) -> u64 {
    mix64(x.wrapping_add(GOLDEN_GAMMA))
}

/// Uniform in [0, 1) from the 53 high bits of `x`.
#[inline]
#[must_use]
pub fn unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// The SplitMix64 stream from a seed (the state is the seed itself; the first draw is
/// [`splitmix64`]`(seed)`).
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    #[must_use]
    pub const fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN_GAMMA);
        mix64(self.0)
    }

    /// Uniform in [0, 1) ([`unit_f64`] of the next draw).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        unit_f64(self.next_u64())
    }

    /// In `0..n` by modulo (`n` > 0; 0 when `n` is 0); the bias is below 2⁻³² for `n` < 2³².
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// In `0..n` by the multiply-shift reduction (`n` > 0): a different mapping from
    /// [`below`](Self::below), kept for the streams that were drawn this way.
    #[inline]
    pub fn below_mul_shift(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Fisher–Yates shuffle, drawing `j` in `0..=i` with [`below`](Self::below).
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i + 1);
            xs.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // SplitMix64 from seed 0 (the reference implementation's first outputs).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn unit_is_in_range() {
        let mut r = SplitMix64::new(7);
        assert!((0..1000).map(|_| r.unit()).all(|u| (0.0..1.0).contains(&u)));
        assert!(unit_f64(u64::MAX) < 1.0);
    }
}
