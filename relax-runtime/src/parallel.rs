//! The thread pool that parallel loops of compiled kernels run on.
//!
//! 1. Generated code outlines the body of a `Parallel` loop into a function
//!    of the [`ParallelBody`] ABI, `void body(i64 begin, i64 end, void *env)`,
//!    that runs iterations `begin..end`, and calls [`relax_parallel_for`] with
//!    the loop's extent. The call returns when every iteration has run.
//! 2. Threads claim chunks of the range through one atomic counter
//!    (dynamic scheduling, so a slow thread does not hold up the rest), in
//!    the *guided* manner of OpenMP's `schedule(guided)`: each claim takes
//!    a share of what is left (`Job::claim`), large at first, down to a
//!    floor of 1/`FINEST_SHARE` of a thread's share at the end. A loop of
//!    a few large iterations (a GEMM's row chunks) then ends on single
//!    iterations, so no thread waits long for another; a loop of many small
//!    ones still takes about a dozen claims per thread. (Cutting the range
//!    into four equal chunks per thread left a GEMM of 22 row chunks with
//!    chunks of 2 and 3, and a thread idle for most of one at the end: 8%
//!    of the 1024-cubed product.) The calling thread claims chunks too, so
//!    a call always makes progress, even from inside another parallel loop
//!    (nested parallelism never deadlocks: a thread only waits for chunks
//!    that other threads are already running).
//! 3. The pool is process-wide and started on first use with one worker
//!    fewer than the machine's cores (the caller is the last one), or
//!    `RELAX_NUM_THREADS - 1` when that variable is set.
//! 4. Waking a sleeping thread takes tens of microseconds on a busy machine,
//!    as long as a whole small kernel: a worker that finished a job spins
//!    for [`SPIN`] before it sleeps, and so does a caller waiting for the
//!    last chunk, as BLAS and OpenMP runtimes do. Kernels called in a loop
//!    (a model serving requests) then never wait for a wake-up.
//!
//! Why not rayon: the contract is one C entry point that splits a range into
//! chunks and waits for them; a queue, a condition variable and an atomic
//! chunk counter give exactly that in under 200 lines, with no dependency
//! and no second thread pool beside any the host application runs.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How long an idle worker, or a caller waiting for the last chunk, spins
/// before it sleeps.
pub const SPIN: Duration = Duration::from_micros(200);

/// Spins until `ready()` or [`SPIN`] has passed; whether it became ready.
fn spin_until(ready: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= SPIN {
            return ready();
        }
    }
}

/// The ABI of an outlined parallel-loop body: runs iterations
/// `begin..end` with the captured variables at `env`.
pub type ParallelBody = unsafe extern "C" fn(begin: i64, end: i64, env: *mut u8);

/// Runs `body` over `0..extent` on the pool and returns when every
/// iteration has run. The symbol generated code calls (the JIT maps it to
/// this function; AOT objects resolve it when linked with relax-runtime).
///
/// # Safety
/// `body` must be safe to call concurrently from several threads with
/// disjoint ranges inside `0..extent` and this `env`, and `env` must stay
/// valid until this call returns.
#[no_mangle]
pub unsafe extern "C" fn relax_parallel_for(extent: i64, body: ParallelBody, env: *mut u8) {
    if extent <= 0 {
        return;
    }
    let pool = pool();
    let threads = pool.workers + 1;
    if threads == 1 || extent == 1 {
        // SAFETY: the caller's contract, with the whole range on this thread.
        unsafe { body(0, extent, env) };
        return;
    }
    let job = Arc::new(Job::new(body, env, extent, threads as i64));
    let helpers = pool.workers.min(extent as usize - 1);
    {
        let mut queue = lock(pool.queue);
        for _ in 0..helpers {
            queue.push_back(job.clone());
        }
        pool.queued.fetch_add(helpers, Ordering::Release);
    }
    pool.ready.notify_all();
    job.run();
    let finished = || job.done.load(Ordering::Acquire) >= job.extent;
    if spin_until(finished) {
        return;
    }
    // The last chunk's thread takes this lock before it notifies, so the
    // notification cannot come between the check and the wait.
    let mut guard = lock(&job.sleeping);
    while !finished() {
        guard = job
            .all_done
            .wait(guard)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
    }
}

/// The number of threads parallel loops use, the caller included.
pub fn num_threads() -> usize {
    pool().workers + 1
}

/// The smallest chunk is this fraction of one thread's share of the range:
/// fine enough that the threads finish within a few percent of each other,
/// coarse enough that a loop of many cheap iterations takes about a dozen
/// claims per call, whatever its extent (each claim is a contended atomic).
const FINEST_SHARE: i64 = 32;

/// A pointer the generated code owns; it is only passed back to `body`.
struct SendPtr(*mut u8);
// SAFETY: `relax_parallel_for`'s contract makes `env` usable from any thread
// until the call returns, and no chunk runs after it returns.
unsafe impl Send for SendPtr {}
// SAFETY: as above; the pointer itself is only copied.
unsafe impl Sync for SendPtr {}

/// One call of `relax_parallel_for`.
struct Job {
    body: ParallelBody,
    env: SendPtr,
    extent: i64,
    /// The threads that may claim chunks (the caller's included).
    threads: i64,
    /// The smallest chunk (but the last one may be smaller).
    finest: i64,
    /// The first iteration nobody has claimed.
    next: AtomicI64,
    /// How many iterations have finished.
    done: AtomicI64,
    /// Held to wait for, and to announce, the last chunk.
    sleeping: Mutex<()>,
    all_done: Condvar,
}

impl Job {
    /// `extent` iterations of `body` on `env` for `threads` threads, none
    /// claimed yet.
    fn new(body: ParallelBody, env: *mut u8, extent: i64, threads: i64) -> Self {
        let floor = threads * FINEST_SHARE;
        Job {
            body,
            env: SendPtr(env),
            extent,
            threads,
            finest: (extent + floor - 1) / floor,
            next: AtomicI64::new(0),
            done: AtomicI64::new(0),
            sleeping: Mutex::new(()),
            all_done: Condvar::new(),
        }
    }

    /// The next chunk, `begin..end`, or `None` when every iteration is
    /// claimed: half of what is left divided among the threads, but at
    /// least [`Job::finest`] iterations.
    fn claim(&self) -> Option<(i64, i64)> {
        let mut begin = self.next.load(Ordering::Relaxed);
        loop {
            let left = self.extent - begin;
            if left <= 0 {
                return None;
            }
            let size = (left / (2 * self.threads)).max(self.finest).min(left);
            match self.next.compare_exchange_weak(
                begin,
                begin + size,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some((begin, begin + size)),
                Err(now) => begin = now,
            }
        }
    }

    /// Claims and runs chunks until none is left.
    fn run(&self) {
        while let Some((begin, end)) = self.claim() {
            // SAFETY: the range is inside 0..extent, disjoint from every other
            // chunk's, and the caller of relax_parallel_for is still waiting
            // (it waits for these iterations to be counted), so env is valid.
            unsafe { (self.body)(begin, end, self.env.0) };
            if self.done.fetch_add(end - begin, Ordering::AcqRel) + (end - begin) == self.extent {
                let _guard = lock(&self.sleeping);
                self.all_done.notify_all();
            }
        }
    }
}

struct Pool {
    /// Worker threads that started (the caller is not counted).
    workers: usize,
    queue: &'static Mutex<VecDeque<Arc<Job>>>,
    ready: &'static Condvar,
    /// The jobs in the queue (read without the lock by spinning workers).
    queued: &'static AtomicUsize,
}

/// What the pool's threads share: the job queue, the condition idle
/// workers sleep on, and the queue's length for workers that spin.
struct Shared {
    queue: Mutex<VecDeque<Arc<Job>>>,
    ready: Condvar,
    queued: AtomicUsize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    static SHARED: OnceLock<Shared> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::env::var("RELAX_NUM_THREADS")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let shared = SHARED.get_or_init(|| Shared {
            queue: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            queued: AtomicUsize::new(0),
        });
        // A thread that fails to start only means fewer helpers: callers
        // run the chunks nobody claims themselves.
        let workers = (0..threads - 1)
            .filter(|i| {
                std::thread::Builder::new()
                    .name(format!("relax-pool-{i}"))
                    .spawn(move || worker(&shared.queue, &shared.ready, &shared.queued))
                    .is_ok()
            })
            .count();
        Pool {
            workers,
            queue: &shared.queue,
            ready: &shared.ready,
            queued: &shared.queued,
        }
    })
}

fn worker(queue: &Mutex<VecDeque<Arc<Job>>>, ready: &Condvar, queued: &AtomicUsize) {
    loop {
        // Spin a while for the next job before sleeping.
        spin_until(|| queued.load(Ordering::Acquire) > 0);
        let job = {
            let mut queue = lock(queue);
            loop {
                if let Some(job) = queue.pop_front() {
                    queued.fetch_sub(1, Ordering::AcqRel);
                    break job;
                }
                queue = ready
                    .wait(queue)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
        };
        job.run();
    }
}

/// Locks `m`, ignoring poisoning: no code panics while holding these locks.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    unsafe extern "C" fn mark(begin: i64, end: i64, env: *mut u8) {
        let counts = unsafe { &*(env as *const Vec<AtomicU64>) };
        for i in begin..end {
            counts[i as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn every_iteration_runs_exactly_once() {
        for extent in [0i64, 1, 2, 3, 7, 64, 1000] {
            let counts: Vec<AtomicU64> = (0..extent).map(|_| AtomicU64::new(0)).collect();
            unsafe {
                relax_parallel_for(extent, mark, &counts as *const _ as *mut u8);
            }
            assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        }
    }

    /// The chunks one thread would claim, alone, from a job of `extent`
    /// iterations for `threads` threads.
    fn claims(extent: i64, threads: i64) -> Vec<i64> {
        let job = Job::new(mark, std::ptr::null_mut(), extent, threads);
        let mut sizes = vec![];
        let mut at = 0;
        while let Some((begin, end)) = job.claim() {
            assert_eq!(begin, at, "chunks are consecutive");
            sizes.push(end - begin);
            at = end;
        }
        assert_eq!(at, extent, "the chunks cover the range");
        sizes
    }

    #[test]
    fn chunks_shrink_to_single_iterations_of_a_short_loop() {
        // A GEMM's 22 row chunks on 2 threads: large claims first, single
        // iterations at the end.
        let sizes = claims(22, 2);
        assert_eq!(sizes[0], 5);
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
        assert_eq!(sizes[sizes.len() - 3..], [1, 1, 1]);
    }

    #[test]
    fn a_long_loop_takes_few_claims() {
        for extent in [1000, 4096, 1 << 20, 1 << 40] {
            for threads in [2, 8, 64] {
                let sizes = claims(extent, threads);
                let per_thread = sizes.len() as i64 / threads;
                assert!(
                    per_thread <= 16,
                    "{extent} on {threads}: {} claims",
                    sizes.len()
                );
                let last = sizes[sizes.len() - 2];
                assert!(last * threads * FINEST_SHARE <= extent + threads * FINEST_SHARE);
            }
        }
    }

    unsafe extern "C" fn nested(begin: i64, end: i64, env: *mut u8) {
        let counts = unsafe { &*(env as *const Vec<AtomicU64>) };
        for i in begin..end {
            // Each outer iteration runs an inner parallel loop over 10 cells.
            let inner: Vec<AtomicU64> = (0..10).map(|_| AtomicU64::new(0)).collect();
            unsafe { relax_parallel_for(10, mark, &inner as *const _ as *mut u8) };
            let sum: u64 = inner.iter().map(|c| c.load(Ordering::Relaxed)).sum();
            counts[i as usize].fetch_add(sum, Ordering::Relaxed);
        }
    }

    #[test]
    fn nested_parallel_loops_finish() {
        let counts: Vec<AtomicU64> = (0..33).map(|_| AtomicU64::new(0)).collect();
        unsafe { relax_parallel_for(33, nested, &counts as *const _ as *mut u8) };
        assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 10));
        assert!(num_threads() >= 1);
    }
}
