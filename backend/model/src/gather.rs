//! The gather kernel of the whole-graph passes: what they gather (f64, or f32 for the
//! mixed-precision solver), the prefetching sum over a run of list entries, and the huge-page
//! buffers they gather from. Shared by [`crate::marginals`] and [`crate::segmented`].

/// An element of a vector the passes gather from: f64, or f32 for [`crate::marginals::Solver::MixedLanczos`]'s
/// passes (half the bytes gathered; sums stay f64).
pub(crate) trait Elem: Copy + Send + Sync + Into<f64> + 'static {
    fn from_f64(x: f64) -> Self;
}

impl Elem for f64 {
    #[inline(always)]
    fn from_f64(x: f64) -> f64 {
        x
    }
}

impl Elem for f32 {
    #[inline(always)]
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
}

/// How many list entries ahead a pass prefetches the gathered value (across list ends: the
/// lists of consecutive nodes are contiguous). Measured at 1/3 CKG scale: ~8% less time per
/// pass on average over four alternating pairs of runs (not tuned).
const PF_DIST: usize = 64;

/// A hint to load the cache line of `p`; a no-op off x86_64.
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint: it never faults, whatever the address; SSE is part of
        // the x86_64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Σ z[i] over nbrs[a..b] with four independent sums (one running sum would serialise on the
/// add latency; f64 sums whatever the element type), prefetching the z entry [`PF_DIST`] list entries ahead (the
/// gathers are latency-bound: the out-of-order window alone cannot see that far).
#[inline(always)]
pub(crate) fn sum4_pf<T: Elem>(z: &[T], nbrs: &[u32], a: usize, b: usize) -> f64 {
    let lim = nbrs.len();
    let base = z.as_ptr();
    let mut acc = [0.0f64; 4];
    let mut k = a;
    while k + 4 <= b {
        for t in 0..4 {
            let p = k + t + PF_DIST;
            if p < lim {
                prefetch(base.wrapping_add(nbrs[p] as usize));
            }
        }
        acc[0] += z[nbrs[k] as usize].into();
        acc[1] += z[nbrs[k + 1] as usize].into();
        acc[2] += z[nbrs[k + 2] as usize].into();
        acc[3] += z[nbrs[k + 3] as usize].into();
        k += 4;
    }
    while k < b {
        let p = k + PF_DIST;
        if p < lim {
            prefetch(base.wrapping_add(nbrs[p] as usize));
        }
        acc[0] += z[nbrs[k] as usize].into();
        k += 1;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// A zeroed f64 vector on its own anonymous mapping, advised for transparent huge pages
/// (`MADV_HUGEPAGE`): the vectors the passes gather from in random order. With 4 KiB pages
/// each gather into a 123 MB vector also misses the TLB (30 000 pages; the walk itself may
/// miss the cache, and in a VM it is two-dimensional); 2 MiB pages cover the vector with 62
/// entries. Falls back to a plain `Vec` if the mapping fails.
pub(crate) struct GatherBuf<T: Elem = f64> {
    map: Option<memmap2::MmapMut>,
    vec: Vec<T>,
    len: usize,
}

impl<T: Elem> GatherBuf<T> {
    pub(crate) fn zeroed(len: usize) -> GatherBuf<T> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        let map = (bytes >= 1 << 21)
            .then(|| memmap2::MmapOptions::new().len(bytes).map_anon().ok())
            .flatten();
        if let Some(m) = &map {
            // Advice only: without it the vector still works on small pages.
            let _ = m.advise(memmap2::Advice::HugePage);
        }
        let vec = if map.is_some() {
            Vec::new()
        } else {
            vec![T::from_f64(0.0); len]
        };
        GatherBuf { map, vec, len }
    }
}

impl<T: Elem> std::ops::Deref for GatherBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.map {
            // SAFETY: T is f32 or f64 (the only `Elem`s); the mapping is page-aligned (so
            // aligned for T), at least `len` elements long, zero-initialised (all-zero bytes are
            // 0.0), and borrowed for the slice's lifetime.
            Some(m) => unsafe { std::slice::from_raw_parts(m.as_ptr().cast::<T>(), self.len) },
            None => &self.vec,
        }
    }
}

impl<T: Elem> std::ops::DerefMut for GatherBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.map {
            // SAFETY: as in `deref`, and the mapping is borrowed mutably for the slice's lifetime.
            Some(m) => unsafe {
                std::slice::from_raw_parts_mut(m.as_mut_ptr().cast::<T>(), self.len)
            },
            None => &mut self.vec,
        }
    }
}
