//! The decode speed's bound, measured on this machine when asked: a
//! token reads every weight once, so decode cannot beat the time of a
//! plain copy moving as many bytes over the memory bus (half read, half
//! written, split over the threads the kernels use), as the peers
//! benchmark (`examples/peers/src/limits.rs`) holds its bandwidth-bound
//! rows to.

use std::hint::black_box;
use std::time::Instant;

/// The best time, in seconds, over `rounds` of a copy of `bytes / 2`
/// bytes into another buffer over the kernels' threads
/// (`RELAX_NUM_THREADS`, else the available parallelism).
pub fn copy_seconds(bytes: usize, rounds: usize) -> f64 {
    let n = (bytes / 8).max(1);
    let threads = std::env::var("RELAX_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&t: &usize| t > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |t| t.get()));
    let src = vec![1.0f32; n];
    let mut dst = vec![0.0f32; n];
    let chunk = n.div_ceil(threads);
    let mut best = f64::INFINITY;
    for _ in 0..rounds.max(1) {
        let start = Instant::now();
        std::thread::scope(|s| {
            for (d, c) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
                s.spawn(move || d.copy_from_slice(black_box(c)));
            }
        });
        black_box(&mut dst);
        best = best.min(start.elapsed().as_secs_f64());
    }
    best
}

#[cfg(test)]
mod tests {
    #[test]
    fn any_size_and_round_count_gives_a_finite_time() {
        // Zero bytes and zero rounds still time one copy of one element.
        for (bytes, rounds) in [(0, 0), (3, 1), (1 << 16, 2)] {
            let t = super::copy_seconds(bytes, rounds);
            assert!(t.is_finite() && t >= 0.0, "{bytes} bytes: {t}");
        }
    }
}
