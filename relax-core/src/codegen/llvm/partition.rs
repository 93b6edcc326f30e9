//! How a build's kernels are split among code generation threads.
//!
//! LLVM's optimization pipeline and instruction selection take most of a
//! model's compile time, and each kernel's code depends only on its own
//! PrimFunc, so the kernels can be compiled in parallel: each thread gets
//! its own LLVM context and module (contexts are not thread-safe), and the
//! results are joined afterwards (one JIT library over several engines, or
//! several object files).
//!
//! 1. The number of threads is the runtime's (`RELAX_NUM_THREADS`, else the
//!    machine's cores: [`threads`]), never more than there are kernels.
//! 2. A kernel's [`cost`] estimates how much LLVM will work on it: one per
//!    statement and expression node, the body of an `Unrolled` (or
//!    `Vectorized`, which [`super::vectorize`] emits lane-wise) loop of
//!    constant extent counted once per iteration, as LLVM sees it after
//!    unrolling.
//! 3. [`partition`] assigns kernels largest first to the least loaded
//!    part (longest-processing-time scheduling), ties to the lower index,
//!    then lists each part's kernels in their original order. It depends
//!    only on the kernels and the thread count, so the same input gives the
//!    same modules, hence the same code, on every build.
//! 4. There are [`PARTS_PER_THREAD`] parts per thread (with more than one
//!    thread), largest first; [`in_parallel`] hands them out to the
//!    threads as each finishes its last, so an estimate that is off evens
//!    out, and a build's progress can be reported part by part.

use super::types::internal;
use crate::ir::prim_expr::PrimExpr;
use crate::tir::stmt::{ForKind, Stmt};
use crate::tir::PrimFunc;
use relax_runtime::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The number of code generation threads for `kernels` kernels.
pub(super) fn threads(kernels: usize) -> usize {
    let configured = std::env::var("RELAX_NUM_THREADS")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    configured.min(kernels).max(1)
}

/// The parts per code generation thread (see the module docs).
pub(super) const PARTS_PER_THREAD: usize = 4;

/// `funcs` split into parts for [`threads`] threads: [`partition`] by
/// [`cost`] into [`PARTS_PER_THREAD`] parts per thread, the most costly
/// part first (ties in index order).
pub(super) fn groups(funcs: &[(String, PrimFunc)]) -> Vec<Vec<usize>> {
    let costs: Vec<u64> = funcs.iter().map(|(_, f)| cost(f)).collect();
    parts(&costs, threads(funcs.len()))
}

/// Kernels of `costs` split into parts for `threads` threads, the most
/// costly part first. See [`groups`].
fn parts(costs: &[u64], threads: usize) -> Vec<Vec<usize>> {
    let parts = if threads > 1 {
        threads * PARTS_PER_THREAD
    } else {
        1
    };
    let mut groups = partition(costs, parts);
    let load = |g: &Vec<usize>| g.iter().map(|&i| costs[i].max(1)).sum::<u64>();
    // Stable: equal loads keep their order.
    groups.sort_by_key(|g| std::cmp::Reverse(load(g)));
    groups
}

/// The estimated code generation cost of `func`. See the module docs.
pub(super) fn cost(func: &PrimFunc) -> u64 {
    stmt_cost(&func.body)
}

/// Unrolling beyond this many copies is not estimated further (LLVM gives
/// up on full unrolling of very large bodies).
const MAX_COPIES: u64 = 1024;

fn stmt_cost(stmt: &Stmt) -> u64 {
    match stmt {
        Stmt::For {
            min,
            extent,
            kind,
            body,
            ..
        } => {
            let copies = match kind {
                ForKind::Unrolled | ForKind::Vectorized => extent
                    .as_int()
                    .map_or(1, |e| e.clamp(1, MAX_COPIES as i64) as u64),
                ForKind::Serial | ForKind::Parallel => 1,
            };
            1 + expr_cost(min) + expr_cost(extent) + copies.saturating_mul(stmt_cost(body))
        }
        Stmt::Block(b) => 1 + b.init.as_ref().map_or(0, |i| stmt_cost(i)) + stmt_cost(&b.body),
        Stmt::BufferStore { value, indices, .. } => {
            1 + expr_cost(value) + indices.iter().map(expr_cost).sum::<u64>()
        }
        Stmt::Allocate { body, .. } => 1 + stmt_cost(body),
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case,
        } => {
            1 + expr_cost(cond)
                + stmt_cost(then_case)
                + else_case.as_ref().map_or(0, |e| stmt_cost(e))
        }
        Stmt::LetStmt { value, body, .. } => 1 + expr_cost(value) + stmt_cost(body),
        Stmt::Evaluate(e) => 1 + expr_cost(e),
        Stmt::Seq(v) => v.iter().map(stmt_cost).sum(),
    }
}

/// An expression's size: its printed length is proportional to its nodes
/// and cheap next to LLVM's work on it.
fn expr_cost(e: &PrimExpr) -> u64 {
    1 + e.to_string().len() as u64 / 8
}

/// Kernels `0..costs.len()` (by their costs) split into `threads` groups,
/// each in increasing index order; empty groups are dropped. See the
/// module docs.
pub(super) fn partition(costs: &[u64], threads: usize) -> Vec<Vec<usize>> {
    let threads = threads.max(1).min(costs.len().max(1));
    let mut order: Vec<usize> = (0..costs.len()).collect();
    // Largest first; equal costs keep their index order (stable sort).
    order.sort_by(|&a, &b| costs[b].cmp(&costs[a]));
    let mut load = vec![0u64; threads];
    let mut groups = vec![Vec::new(); threads];
    for i in order {
        let t = (0..threads)
            .min_by_key(|&t| (load[t], t))
            .expect("at least one thread");
        load[t] = load[t].saturating_add(costs[i].max(1));
        groups[t].push(i);
    }
    for g in &mut groups {
        g.sort_unstable();
    }
    groups.retain(|g| !g.is_empty());
    groups
}

/// The stack of a code generation thread: LLVM and the emitter recurse
/// over deep loop nests, as on a main thread's 8 MiB.
const CODEGEN_STACK: usize = 8 << 20;

/// `build` run on each group of `groups`, on [`threads`] threads that
/// each take the next group not yet taken (on the calling thread when
/// there is one); the results in group order, or the first group's error
/// (after which no further group starts).
pub(super) fn in_parallel<T: Send>(
    groups: &[Vec<usize>],
    build: impl Fn(&[usize]) -> Result<T, Error> + Sync,
) -> Result<Vec<T>, Error> {
    let threads = threads(groups.len());
    if threads <= 1 {
        return groups.iter().map(|g| build(g)).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<T, Error>>>> =
        groups.iter().map(|_| Mutex::new(None)).collect();
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(group) = groups.get(i) else { break };
        let result = build(group);
        let failed = result.is_err();
        *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
        if failed {
            next.store(groups.len(), Ordering::Relaxed);
            break;
        }
    };
    let work = &work;
    let started: Vec<Result<(), Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                std::thread::Builder::new()
                    .name("relax-codegen".into())
                    .stack_size(CODEGEN_STACK)
                    .spawn_scoped(scope, work)
            })
            .collect();
        // Join every thread before returning, whichever failed.
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .map_err(|_| internal("a code generation thread panicked")),
                Err(e) => Err(internal(format!(
                    "cannot start a code generation thread: {e}"
                ))),
            })
            .collect()
    });
    let mut out = Vec::with_capacity(groups.len());
    let mut missing = false;
    for slot in results {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(t)) => out.push(t),
            Some(Err(e)) => return Err(e),
            // Not built: a group failed (returned above), a thread
            // panicked, or none could start.
            None => missing = true,
        }
    }
    if missing {
        started.into_iter().collect::<Result<Vec<()>, Error>>()?;
        return Err(internal("a code generation part was not built"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_lands_in_exactly_one_group_in_order() {
        let costs = [5, 1, 9, 3, 3, 7, 2];
        let groups = partition(&costs, 3);
        assert_eq!(groups.len(), 3);
        let mut all: Vec<usize> = groups.iter().flatten().copied().collect();
        for g in &groups {
            assert!(g.windows(2).all(|w| w[0] < w[1]), "{g:?} is not in order");
        }
        all.sort_unstable();
        assert_eq!(all, (0..costs.len()).collect::<Vec<_>>());
    }

    #[test]
    fn groups_are_balanced_largest_first() {
        // LPT: 9 → t0, 7 → t1, 5 → t2, 3 → t2 (5), 3 → t1 (7)... loads
        // end within the largest single cost of each other.
        let costs = [5, 1, 9, 3, 3, 7, 2];
        let groups = partition(&costs, 3);
        let loads: Vec<u64> = groups
            .iter()
            .map(|g| g.iter().map(|&i| costs[i]).sum())
            .collect();
        let (lo, hi) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
        assert!(hi - lo <= 9, "{loads:?}");
        assert_eq!(loads.iter().sum::<u64>(), 30);
    }

    #[test]
    fn the_partition_is_deterministic_and_respects_the_thread_count() {
        let costs: Vec<u64> = (0..40).map(|i| (i * 37 % 11) as u64).collect();
        assert_eq!(partition(&costs, 2), partition(&costs, 2));
        assert_eq!(partition(&costs, 1), vec![(0..40).collect::<Vec<_>>()]);
        assert_eq!(partition(&costs, 4).len(), 4);
        // More threads than kernels: one kernel each, the largest first.
        assert_eq!(partition(&[3, 4], 8), vec![vec![1], vec![0]]);
        assert!(partition(&[], 4).is_empty());
    }

    #[test]
    fn parts_run_on_the_threads_and_come_back_in_order() {
        let groups: Vec<Vec<usize>> = (0..11).map(|i| vec![i, i + 100]).collect();
        let seen = Mutex::new(Vec::new());
        let out = in_parallel(&groups, |g| {
            seen.lock().unwrap().push(g[0]);
            Ok(g[0] * 2 + g[1])
        })
        .unwrap();
        assert_eq!(out, (0..11).map(|i| 3 * i + 100).collect::<Vec<_>>());
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..11).collect::<Vec<_>>(), "each part once");
    }

    #[test]
    fn a_failing_part_is_the_error_and_stops_the_rest() {
        let groups: Vec<Vec<usize>> = (0..40).map(|i| vec![i]).collect();
        let err = in_parallel(&groups, |g| {
            if g[0] == 3 {
                Err(internal("part 3 failed"))
            } else {
                Ok(g[0])
            }
        })
        .unwrap_err();
        assert!(err.to_string().contains("part 3 failed"), "{err}");
    }

    #[test]
    fn parts_are_several_per_thread_largest_first() {
        let costs: Vec<u64> = (0..30).map(|i| (i * 7 % 13) as u64 + 1).collect();
        let groups = parts(&costs, 2);
        assert_eq!(groups.len(), 2 * PARTS_PER_THREAD);
        let loads: Vec<u64> = groups
            .iter()
            .map(|g| g.iter().map(|&i| costs[i]).sum())
            .collect();
        assert!(loads.windows(2).all(|w| w[0] >= w[1]), "{loads:?}");
        let mut all: Vec<usize> = groups.into_iter().flatten().collect();
        all.sort_unstable();
        assert_eq!(all, (0..30).collect::<Vec<_>>());
        // One thread: one part, all kernels in order.
        assert_eq!(parts(&costs, 1), vec![(0..30).collect::<Vec<_>>()]);
    }

    #[test]
    fn unrolled_loops_count_once_per_iteration() {
        use crate::ir::prim_expr::TirVar;
        use crate::tir::{Buffer, PrimFuncParam};
        use relax_runtime::DataType;
        let a = Buffer::new("A", vec![PrimExpr::int(64)], DataType::f32());
        let b = Buffer::new("B", vec![PrimExpr::int(64)], DataType::f32());
        let i = TirVar::new("i");
        let func = |kind| {
            let body = Stmt::BufferStore {
                buffer: b.clone(),
                value: PrimExpr::load(&a, vec![PrimExpr::var(&i)]),
                indices: vec![PrimExpr::var(&i)],
            };
            let params = vec![
                PrimFuncParam::Buffer(a.clone()),
                PrimFuncParam::Buffer(b.clone()),
            ];
            PrimFunc::new(
                params,
                Stmt::For {
                    loop_var: i.clone(),
                    min: PrimExpr::int(0),
                    extent: PrimExpr::int(64),
                    kind,
                    body: Box::new(body),
                    annotations: crate::ir::Attrs::new(),
                },
            )
        };
        let serial = cost(&func(ForKind::Serial));
        let unrolled = cost(&func(ForKind::Unrolled));
        assert!(unrolled > 16 * serial, "{unrolled} vs {serial}");
    }
}
