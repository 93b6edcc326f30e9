//! Case 1 of the module docs, for an injective nest whose innermost index
//! is read through a constant split, `c // k` and `c % k` (a channel
//! shuffle in NHWC, `O[.., c] = Select(c // 2 + c % 2 * 58 < 58, A[..,
//! c // 2], B[.., c // 2])`, or a reshape that unflattens the last axis).
//!
//! No lane of a vector over `c` reads where its neighbour does, so that
//! loop stays scalar, with a division and a remainder per element. Split
//! as `c = c_o · k + c_i`, the `k` values of `c_i` written out, each
//! store's indices simplify under `c_o`'s range to affine ones (`A[..,
//! c_o]` for `c_i = 0`, `B[.., c_o]` for `c_i = 1`, the `Select` decided).
//! The loop over `c_o` is then a group of interleaved stores that LLVM's
//! loop vectorizer turns into wide loads and shuffles: ShuffleNet's
//! shuffle of a `(28, 28, 116)` image, 32 µs element by element, takes
//! 13 µs split.
//!
//! The split is kept only when every `// k` and `% k` of the loop's
//! variable is gone after simplification.

use super::nest::Nest;
use super::util::*;
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::affine::uses_var;
use crate::tir::{ForKind, Stmt};

impl Nest {
    /// The nest with its innermost loop split by the divisor of a `c // k`
    /// or `c % k` it reads (module docs), or `None`.
    pub(super) fn interleaved(&self, parallel: bool) -> Option<Stmt> {
        let (inner, outer) = self.spatial.split_last()?;
        let extent = inner.extent.as_int()?;
        if self.vectorizes(&inner.var) {
            return None;
        }
        let mut found = None;
        let mut exprs: Vec<&PrimExpr> = vec![&self.value];
        exprs.extend(&self.indices);
        for e in exprs {
            split_divisor(e, &inner.var, &mut found);
        }
        let k = found.filter(|&k| k >= 2 && extent % k == 0 && extent / k >= 2)?;
        let idt = inner.loop_var.dtype();
        let c_o = fresh(&inner.loop_var, "_o");
        let mut an = Analyzer::new();
        an.bind_loop(&c_o, &PrimExpr::int_of(idt, extent / k));
        for a in outer {
            an.bind_loop(&a.loop_var, &a.extent);
        }
        let vdt = inner.var.dtype();
        let mut stores = Vec::with_capacity(k as usize);
        for c_i in 0..k {
            let mut map = identity(&self.spatial);
            let c = PrimExpr::var(&c_o).cast(vdt) * PrimExpr::int_of(vdt, k)
                + PrimExpr::int_of(vdt, c_i);
            map.insert(inner.var.clone(), c);
            let Stmt::BufferStore {
                buffer,
                value,
                indices,
            } = self.store(&map, false)
            else {
                return None;
            };
            let value = an.simplify(&value);
            let indices: Vec<PrimExpr> = indices.iter().map(|i| an.simplify(i)).collect();
            let mut left = None;
            for e in std::iter::once(&value).chain(&indices) {
                split_divisor(e, &c_o, &mut left);
            }
            if left.is_some() {
                return None;
            }
            stores.push(Stmt::BufferStore {
                buffer,
                value,
                indices,
            });
        }
        let body = for_(
            &c_o,
            PrimExpr::int_of(idt, 0),
            PrimExpr::int_of(idt, extent / k),
            ForKind::Serial,
            seq(stores),
        );
        let kind = match parallel {
            true => ForKind::Parallel,
            false => ForKind::Serial,
        };
        Some(nest(outer, body, Some(kind)))
    }
}

/// The constant `k` of the first `x // k` or `x % k` in `e` whose `x`
/// reads `var`, into `found` (unless already set).
fn split_divisor(e: &PrimExpr, var: &TirVar, found: &mut Option<i64>) {
    if found.is_some() {
        return;
    }
    if let PrimExprKind::Div(x, d) | PrimExprKind::Mod(x, d) = e.kind() {
        if let Some(k) = d.as_int() {
            if uses_var(x, var) {
                *found = Some(k);
                return;
            }
        }
    }
    for c in e.children() {
        split_divisor(c, var, found);
    }
}
