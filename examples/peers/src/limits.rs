//! The machine's limits, measured in the same run as the peers: the FMA
//! peak of all the kernel threads together and the time of a plain copy of
//! a row's bytes. Each row's *limit* is the roofline of its work: the
//! larger of its flops at the FMA peak and that copy.

use std::hint::black_box;
use std::time::Instant;

/// What a row's computation costs at least: multiply-add flops (two per
/// FMA) and bytes that must cross the memory bus (inputs and outputs).
pub struct Work {
    pub flops: f64,
    pub bytes: f64,
}

/// The FMA peak (flops per second) and how it was measured.
pub struct Limits {
    pub flops: f64,
    pub how: String,
    threads: usize,
}

impl Limits {
    /// The least time `work` can take on this machine: its flops at the FMA
    /// peak, or a plain copy of its bytes (half read, half written, split
    /// over the kernel threads), whichever is longer. The copy is of the
    /// row's own size, so a row whose data fits in a cache is held to that
    /// cache's bandwidth. It is `copied` when the row timed a [`Copy`] in
    /// its own rounds (the memory bandwidth of a shared machine moves from
    /// minute to minute), else timed now.
    pub fn time(&self, work: &Work, copied: Option<f64>) -> f64 {
        let copy = copied.unwrap_or_else(|| copy_time(work.bytes, self.threads));
        (work.flops / self.flops).max(copy)
    }
}

/// A plain copy of half a row's bytes into another buffer, to be timed in
/// the row's interleaved rounds beside the peers: large copies split over
/// the kernel threads, small ones (where starting threads would dominate)
/// on one.
pub struct Copy {
    src: Vec<f32>,
    dst: Vec<f32>,
    threads: usize,
}

impl Copy {
    /// The copy of `work`'s bytes, over the threads relax-rs' kernels use.
    pub fn new(work: &Work) -> Copy {
        let n = ((work.bytes / 8.0) as usize).max(1);
        let threads = if n >= 1 << 18 { threads() } else { 1 };
        Copy {
            src: vec![1.0; n],
            dst: vec![0.0; n],
            threads,
        }
    }

    pub fn run(&mut self) {
        let chunk = self.src.len().div_ceil(self.threads);
        if self.threads == 1 {
            self.dst.copy_from_slice(black_box(&self.src));
            black_box(&mut self.dst);
            return;
        }
        std::thread::scope(|s| {
            for (d, c) in self.dst.chunks_mut(chunk).zip(self.src.chunks(chunk)) {
                s.spawn(move || d.copy_from_slice(black_box(c)));
            }
        });
    }
}

/// The threads relax-rs' kernels use: `RELAX_NUM_THREADS`, else the
/// available parallelism.
fn threads() -> usize {
    std::env::var("RELAX_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The best of `samples` runs of `f` (sharing the machine only ever slows
/// a run down).
fn best(samples: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..samples)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Seconds to copy `bytes / 2` bytes into another buffer (`bytes` cross
/// the bus), the halves of the buffers copied by `threads` threads.
fn copy_time(bytes: f64, threads: usize) -> f64 {
    let n = ((bytes / 8.0) as usize).max(threads);
    let src = vec![1.0f32; n];
    let mut dst = vec![0.0f32; n];
    let chunk = n.div_ceil(threads);
    let mut copy = || {
        std::thread::scope(|s| {
            for (d, c) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
                s.spawn(move || d.copy_from_slice(black_box(c)));
            }
        });
    };
    // Thread start-up is a few microseconds: for small rows, time many
    // copies by one thread instead and take the better of the two.
    let parallel = best(9, &mut copy);
    let reps = 64;
    let serial = best(9, || {
        for _ in 0..reps {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
        }
    }) / f64::from(reps);
    parallel.min(serial)
}

/// The FMA peak of all the kernel threads together: independent FMA
/// chains on registers, the widest vectors the CPU has, on every thread at
/// once (best of 7).
pub fn measure() -> Limits {
    let threads = threads();
    let (per_call, how) = fma_kernel();
    // Every thread runs the FMA chains at once; the slowest sets the time.
    let secs = best(7, || {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| black_box(per_call.run()));
            }
        });
    });
    Limits {
        flops: per_call.flops() * threads as f64 / secs,
        how: format!("{how} on {threads} thread(s)"),
        threads,
    }
}

/// The int8 dot-product peak of all the kernel threads together, in
/// operations per second (a multiply and an add per byte pair, as a GEMM's
/// flops count them), and how it was measured: independent chains of
/// `vpdpbusd` on registers (each 64 byte products on a 512-bit vector),
/// where the CPU has AVX512-VNNI; `None` elsewhere.
pub fn int8_peak() -> Option<(f64, String)> {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vnni") {
            let threads = threads();
            let secs = best(7, || {
                std::thread::scope(|s| {
                    for _ in 0..threads {
                        // SAFETY: the features were detected above.
                        s.spawn(|| black_box(unsafe { x86::vnni(ITERS) }));
                    }
                });
            });
            let ops = ITERS as f64 * CHAINS as f64 * 64.0 * 2.0 * threads as f64;
            return Some((
                ops / secs,
                format!("AVX512-VNNI vpdpbusd peak on {threads} thread(s)"),
            ));
        }
    }
    None
}

/// One thread's FMA chains: independent accumulators, enough to cover the
/// FMA latency on two ports.
#[derive(Clone, Copy)]
enum Fma {
    #[cfg(target_arch = "x86_64")]
    Avx512,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    Scalar,
}

const ITERS: u64 = 1 << 22;
const CHAINS: usize = 12;

impl Fma {
    fn lanes(self) -> f64 {
        match self {
            #[cfg(target_arch = "x86_64")]
            Fma::Avx512 => 16.0,
            #[cfg(target_arch = "x86_64")]
            Fma::Avx2 => 8.0,
            Fma::Scalar => 1.0,
        }
    }

    fn flops(self) -> f64 {
        ITERS as f64 * CHAINS as f64 * self.lanes() * 2.0
    }

    fn run(self) -> f32 {
        match self {
            // SAFETY: `fma_kernel` chose these after detecting the features.
            #[cfg(target_arch = "x86_64")]
            Fma::Avx512 => unsafe { x86::avx512(ITERS) },
            #[cfg(target_arch = "x86_64")]
            Fma::Avx2 => unsafe { x86::avx2(ITERS) },
            Fma::Scalar => scalar(ITERS),
        }
    }
}

fn fma_kernel() -> (Fma, &'static str) {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            return (Fma::Avx512, "AVX-512 FMA peak");
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            return (Fma::Avx2, "AVX2 FMA peak");
        }
    }
    (Fma::Scalar, "scalar FMA peak")
}

fn scalar(iters: u64) -> f32 {
    let mut acc = [1.0f32; CHAINS];
    let (a, b) = (black_box(0.999_999f32), black_box(1e-7f32));
    for _ in 0..iters {
        for x in acc.iter_mut() {
            *x = x.mul_add(a, b);
        }
    }
    acc.iter().sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::CHAINS;
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx512f")]
    pub unsafe fn avx512(iters: u64) -> f32 {
        let a = _mm512_set1_ps(0.999_999);
        let b = _mm512_set1_ps(1e-7);
        let mut acc = [_mm512_set1_ps(1.0); CHAINS];
        for _ in 0..iters {
            for x in acc.iter_mut() {
                *x = _mm512_fmadd_ps(*x, a, b);
            }
        }
        acc.iter().map(|&x| _mm512_reduce_add_ps(x)).sum()
    }

    /// `CHAINS` independent `vpdpbusd` accumulators, `iters` steps each.
    #[target_feature(enable = "avx512f,avx512vnni")]
    pub unsafe fn vnni(iters: u64) -> i32 {
        let a = _mm512_set1_epi32(std::hint::black_box(0x0101_0101));
        let b = _mm512_set1_epi32(std::hint::black_box(0x01ff_0101));
        let mut acc = [_mm512_setzero_si512(); CHAINS];
        for _ in 0..iters {
            for x in acc.iter_mut() {
                *x = _mm512_dpbusd_epi32(*x, a, b);
            }
        }
        acc.iter()
            .map(|&x| _mm512_reduce_add_epi32(x))
            .fold(0, i32::wrapping_add)
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn avx2(iters: u64) -> f32 {
        let a = _mm256_set1_ps(0.999_999);
        let b = _mm256_set1_ps(1e-7);
        let mut acc = [_mm256_set1_ps(1.0); CHAINS];
        for _ in 0..iters {
            for x in acc.iter_mut() {
                *x = _mm256_fmadd_ps(*x, a, b);
            }
        }
        let mut out = [0.0f32; 8];
        let sum = acc
            .iter()
            .fold(_mm256_setzero_ps(), |s, &x| _mm256_add_ps(s, x));
        _mm256_storeu_ps(out.as_mut_ptr(), sum);
        out.iter().sum()
    }
}
