//! The thread pool that parallel loops of compiled kernels run on.
//!
//! 1. Generated code outlines the body of a `Parallel` loop into a function
//!    of the [`ParallelBody`] ABI, `void body(i64 begin, i64 end, void *env)`,
//!    that runs iterations `begin..end`, and calls [`relax_parallel_for`] with
//!    the loop's extent. The call returns when every iteration has run.
//! 2. The range is cut into a few chunks per thread (dynamic scheduling, so a
//!    slow thread does not hold up the rest). Threads claim chunks through
//!    one atomic counter; the calling thread claims chunks too, so a call
//!    always makes progress, even from inside another parallel loop (nested
//!    parallelism never deadlocks: a thread only waits for chunks that other
//!    threads are already running).
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
    let chunks = extent.min(threads as i64 * CHUNKS_PER_THREAD);
    let job = Arc::new(Job {
        body,
        env: SendPtr(env),
        extent,
        chunks,
        next: AtomicI64::new(0),
        done: AtomicI64::new(0),
        sleeping: Mutex::new(()),
        all_done: Condvar::new(),
    });
    let helpers = pool.workers.min(chunks as usize - 1);
    {
        let mut queue = lock(pool.queue);
        for _ in 0..helpers {
            queue.push_back(job.clone());
        }
        pool.queued.fetch_add(helpers, Ordering::Release);
    }
    pool.ready.notify_all();
    job.run();
    let finished = || job.done.load(Ordering::Acquire) >= job.chunks;
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

/// How many chunks each thread gets on average: enough to even out uneven
/// iterations, few enough that claiming a chunk costs nothing.
const CHUNKS_PER_THREAD: i64 = 4;

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
    chunks: i64,
    /// The next chunk to claim.
    next: AtomicI64,
    /// How many chunks have finished.
    done: AtomicI64,
    /// Held to wait for, and to announce, the last chunk.
    sleeping: Mutex<()>,
    all_done: Condvar,
}

impl Job {
    /// Claims and runs chunks until none is left.
    fn run(&self) {
        loop {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= self.chunks {
                return;
            }
            // Chunk c covers [c * extent / chunks, (c + 1) * extent / chunks):
            // sizes differ by at most one. i128 keeps the product exact.
            let bound = |c: i64| (c as i128 * self.extent as i128 / self.chunks as i128) as i64;
            // SAFETY: the range is inside 0..extent, disjoint from every other
            // chunk's, and the caller of relax_parallel_for is still waiting
            // (it waits for this chunk to be counted), so env is valid.
            unsafe { (self.body)(bound(c), bound(c + 1), self.env.0) };
            if self.done.fetch_add(1, Ordering::AcqRel) + 1 == self.chunks {
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
