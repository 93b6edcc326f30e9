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
//!    thread (longest-processing-time scheduling), ties to the lower index,
//!    then lists each thread's kernels in their original order. It depends
//!    only on the kernels and the thread count, so the same input gives the
//!    same modules, hence the same code, on every build.

use super::types::internal;
use crate::ir::prim_expr::PrimExpr;
use crate::tir::stmt::{ForKind, Stmt};
use crate::tir::PrimFunc;
use relax_runtime::Error;

/// The number of code generation threads for `kernels` kernels.
pub(super) fn threads(kernels: usize) -> usize {
    let configured = std::env::var("RELAX_NUM_THREADS")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    configured.min(kernels).max(1)
}

/// `funcs` split into groups for [`threads`] threads: [`partition`] by
/// [`cost`].
pub(super) fn groups(funcs: &[(String, PrimFunc)]) -> Vec<Vec<usize>> {
    let costs: Vec<u64> = funcs.iter().map(|(_, f)| cost(f)).collect();
    partition(&costs, threads(funcs.len()))
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

/// `build` run on each group of `groups`, each on a thread of its own (on
/// the calling thread when there is one group); the results in group order,
/// or the first group's error.
pub(super) fn in_parallel<T: Send>(
    groups: &[Vec<usize>],
    build: impl Fn(&[usize]) -> Result<T, Error> + Sync,
) -> Result<Vec<T>, Error> {
    if groups.len() <= 1 {
        return groups.iter().map(|g| build(g)).collect();
    }
    let build = &build;
    std::thread::scope(|scope| {
        let handles: Vec<_> = groups
            .iter()
            .map(|group| {
                std::thread::Builder::new()
                    .name("relax-codegen".into())
                    .stack_size(CODEGEN_STACK)
                    .spawn_scoped(scope, move || build(group))
            })
            .collect();
        // Join every thread before returning, whichever failed.
        let results: Vec<Result<T, Error>> = handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(internal("a code generation thread panicked"))),
                Err(e) => Err(internal(format!(
                    "cannot start a code generation thread: {e}"
                ))),
            })
            .collect();
        results.into_iter().collect()
    })
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
