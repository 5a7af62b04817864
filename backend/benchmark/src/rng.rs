//! The benchmark's seeded streams: the workspace's SplitMix64 ([`serenqa_shared::rng`]) with a
//! benchmark-specific seed offset and named sub-streams, so every benchmark file stays
//! byte-identical across dependency upgrades.

use serenqa_shared::rng::SplitMix64;

#[derive(Clone, Debug)]
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(SplitMix64::new(seed ^ 0x5EE0_DA5E_u64.rotate_left(17)))
    }

    /// An independent stream for a named purpose, so adding draws in one stage does not shift
    /// the draws of another.
    pub fn derive(seed: u64, purpose: &str) -> Self {
        Rng::new(seed ^ xxhash_rust::xxh3::xxh3_64(purpose.as_bytes()))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is below 2⁻³² for the sizes used here.
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        self.0.below(n)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.0.unit()
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        if xs.is_empty() {
            None
        } else {
            Some(&xs[self.below(xs.len())])
        }
    }
}
