//! Timing: samples of at least two milliseconds, each after an untimed
//! call, taken for every peer in turn (interleaved rounds), so that a burst
//! of load from the machine's other users slows all peers of a round alike
//! instead of one peer's whole run.

use std::time::{Duration, Instant};

/// How long one sample lasts at least: shorter calls repeat inside it.
const SAMPLE: Duration = Duration::from_millis(2);

/// Seconds per call of `f`, over one sample. An untimed call comes first,
/// so every timed call follows a call of the same function, as in a loop
/// that serves requests: a sample of one slow call would otherwise also
/// time waking its thread pool and its cores after the previous peer's
/// sample (5 to 8% of a 1024-cubed product after ndarray's single-threaded
/// one, and as much for candle's).
fn sample(f: &mut dyn FnMut(), reps: u32) -> f64 {
    f();
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    t.elapsed().as_secs_f64() / f64::from(reps)
}

/// How many calls of `f` fill a sample (after a warm-up call).
fn reps_for(f: &mut dyn FnMut()) -> u32 {
    f();
    let t = Instant::now();
    f();
    let once = t.elapsed().max(Duration::from_nanos(50));
    (SAMPLE.as_secs_f64() / once.as_secs_f64())
        .ceil()
        .clamp(1.0, 1e6) as u32
}

/// The median seconds per call of each peer over `rounds` interleaved
/// rounds (one sample of every peer per round).
pub fn interleaved(rounds: usize, peers: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let reps: Vec<u32> = peers.iter_mut().map(|f| reps_for(*f)).collect();
    let mut times = vec![Vec::with_capacity(rounds); peers.len()];
    for _ in 0..rounds {
        for (i, f) in peers.iter_mut().enumerate() {
            times[i].push(sample(*f, reps[i]));
        }
    }
    times.into_iter().map(median).collect()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}
