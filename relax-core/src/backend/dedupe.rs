//! Kernels compiled once per distinct PrimFunc.
//!
//! A model repeats layers of one shape (ResNet-50's bottleneck blocks, a
//! transformer's identical encoder layers), and fusion gives each call its
//! own PrimFunc, so a build's kernels are often structurally equal copies
//! of a few distinct ones. Code generation takes most of a build's time, so
//! each distinct kernel is compiled once and its copies call the same code.
//!
//! 1. Two kernels are the same when their PrimFuncs are structurally equal
//!    (`structural_equal_map_free_vars`: equal modulo the names of the
//!    variables and buffers they bind) after dropping the attributes that
//!    only name them (`global_symbol`). Other attributes (the operator
//!    pattern a schedule reads) must agree.
//! 2. [`representatives`] gives each kernel the index of the first kernel
//!    equal to it (itself when it is the first), found through
//!    `structural_hash_map_free_vars` buckets, so the work is linear in the
//!    kernels' size.

use crate::ir::structural_equal::{structural_equal_map_free_vars, structural_hash_map_free_vars};
use crate::tir::PrimFunc;
use std::collections::HashMap;

/// `func` without the attributes that only name it.
fn unnamed(func: &PrimFunc) -> PrimFunc {
    let mut f = func.clone();
    f.attrs = f.attrs.without("global_symbol");
    f
}

/// For each of `funcs`, the index of the first one structurally equal to
/// it. See the module docs.
pub fn representatives(funcs: &[&PrimFunc]) -> Vec<usize> {
    let unnamed: Vec<PrimFunc> = funcs.iter().map(|f| unnamed(f)).collect();
    let mut buckets: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut out = Vec::with_capacity(funcs.len());
    for (i, f) in unnamed.iter().enumerate() {
        let bucket = buckets.entry(structural_hash_map_free_vars(f)).or_default();
        let found = bucket
            .iter()
            .copied()
            .find(|&j| structural_equal_map_free_vars(&unnamed[j], f));
        match found {
            Some(j) => out.push(j),
            None => {
                bucket.push(i);
                out.push(i);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::prim_expr::{PrimExpr, TirVar};
    use crate::tir::{Buffer, ForKind, PrimFuncParam, Stmt};
    use relax_runtime::DataType;

    /// `B[i] = A[i] * c` over `n` elements, its buffers and loop variable
    /// named after `tag`.
    fn scale(tag: &str, n: i64, c: f64) -> PrimFunc {
        let a = Buffer::new(format!("A{tag}"), vec![PrimExpr::int(n)], DataType::f32());
        let b = Buffer::new(format!("B{tag}"), vec![PrimExpr::int(n)], DataType::f32());
        let i = TirVar::new(format!("i{tag}"));
        let body = Stmt::BufferStore {
            buffer: b.clone(),
            value: PrimExpr::load(&a, vec![PrimExpr::var(&i)])
                * PrimExpr::float(DataType::f32(), c),
            indices: vec![PrimExpr::var(&i)],
        };
        PrimFunc::new(
            vec![PrimFuncParam::Buffer(a), PrimFuncParam::Buffer(b)],
            Stmt::For {
                loop_var: i,
                min: PrimExpr::int(0),
                extent: PrimExpr::int(n),
                kind: ForKind::Serial,
                body: Box::new(body),
                annotations: crate::ir::Attrs::new(),
            },
        )
    }

    #[test]
    fn equal_kernels_share_the_first_ones_index() {
        let named = |f: PrimFunc, name: &str| {
            let mut f = f;
            f.attrs = f.attrs.with("global_symbol", name);
            f
        };
        let funcs = [
            named(scale("x", 7, 2.0), "fused_a"),
            scale("y", 7, 3.0),
            named(scale("z", 7, 2.0), "fused_b"),
            scale("w", 9, 2.0),
            scale("v", 7, 3.0),
        ];
        let refs: Vec<&PrimFunc> = funcs.iter().collect();
        assert_eq!(representatives(&refs), vec![0, 1, 0, 3, 1]);
    }

    #[test]
    fn other_attributes_must_agree() {
        let mut a = scale("x", 7, 2.0);
        let mut b = scale("y", 7, 2.0);
        a.attrs = a.attrs.with("op_pattern", 0i64);
        b.attrs = b.attrs.with("op_pattern", 4i64);
        assert_eq!(representatives(&[&a, &b]), vec![0, 1]);
    }
}
