//! Set ops: `nonzero` and `unique` (TVM's `R.nonzero`, `R.unique`), whose
//! results' sizes depend on the data.
//!
//! `nonzero(x)`: the indices of `x`'s non-zero elements, one column per
//! element in row-major order, one row per axis of `x` (an `int64` tensor
//! of shape `(ndim, count)`). The count is known only at run time, so the
//! StructInfo is a rank-2 `int64` tensor of unknown shape, as TVM infers
//! it; a frontend binds it to a fresh dim with `match_cast`.
//!
//! `unique(x, sorted, return_index, return_inverse, return_counts, axis)`:
//! the distinct elements of `x` flattened (`axis = None`, a 1-d result) or
//! its distinct slices along `axis` (`x`'s rank), sorted ascending or in
//! the order they first occur; with any `return_*`, a tuple of the unique
//! values then, in that order, the requested `int64` vectors: the index of
//! each one's first occurrence, the unique index of every element (or
//! slice), and how often each occurs. Every length but the inverse's is
//! unknown (the inverse has one entry per element or slice, which
//! inference gives when the shape is known).
//!
//! Neither op is legalized: the VM runs their kernels, as it does
//! `tensor_to_shape` (TVM calls a runtime function for `unique` too).

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{attr_bool, attr_int, normalize_axis, product, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, StructInfo};
use relax_runtime::{DataType, Diagnostic};

fn infer_nonzero(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    tensor_arg(call, 0)?;
    Ok(StructInfo::tensor_ndim(2, DataType::i64()))
}

fn infer_unique(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    let axis = attr_int(call, "axis");
    let mut fields = Vec::new();
    // The inverse's length: the axis's, or the element count.
    let inverse_len = match axis {
        Some(a) if x.ndim >= 0 => {
            let a = normalize_axis(call, a, x.ndim)?;
            fields.push(StructInfo::tensor_ndim(x.ndim, x.dtype));
            x.shape_values().map(|s| s[a].clone())
        }
        Some(_) => {
            fields.push(StructInfo::tensor_ndim(x.ndim, x.dtype));
            None
        }
        None => {
            fields.push(StructInfo::tensor_ndim(1, x.dtype));
            x.shape_values().map(product)
        }
    };
    let vector = || StructInfo::tensor_ndim(1, DataType::i64());
    if attr_bool(call, "return_index", false) {
        fields.push(vector());
    }
    if attr_bool(call, "return_inverse", false) {
        fields.push(match inverse_len {
            Some(n) => StructInfo::tensor(vec![ana.simplify(&n)], DataType::i64()),
            None => vector(),
        });
    }
    if attr_bool(call, "return_counts", false) {
        fields.push(vector());
    }
    Ok(if fields.len() == 1 {
        fields.remove(0)
    } else {
        StructInfo::tuple(fields)
    })
}

/// The set ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.nonzero",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: &[],
        infer_struct_info: infer_nonzero,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.unique",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec::new("sorted", AttrType::Bool, AttrDefault::Bool(true)),
            AttrSpec::new("return_index", AttrType::Bool, AttrDefault::Bool(false)),
            AttrSpec::new("return_inverse", AttrType::Bool, AttrDefault::Bool(false)),
            AttrSpec::new("return_counts", AttrType::Bool, AttrDefault::Bool(false)),
            AttrSpec::new("axis", AttrType::OptInt, AttrDefault::None),
        ],
        infer_struct_info: infer_unique,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
];

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn nonzero_is_rank_2_int64_of_unknown_shape() {
        let n = sym("n");
        assert_infers(
            "relax.nonzero",
            &[t(&[n.clone(), d(3)], F32)],
            &[],
            "R.Tensor(dtype=\"int64\", ndim=2)",
        );
        assert_infers(
            "relax.nonzero",
            &[tn(-1, BOOL)],
            &[],
            "R.Tensor(dtype=\"int64\", ndim=2)",
        );
        assert_fails(
            "relax.nonzero",
            &[shape(&[d(2)])],
            &[],
            "nonzero: x must be a tensor, found R.Shape([2])",
        );
    }

    #[test]
    fn unique_has_unknown_lengths_but_the_inverse() {
        let n = sym("n");
        assert_infers(
            "relax.unique",
            &[t(&[n.clone(), d(3)], F32)],
            &[],
            "R.Tensor(dtype=\"float32\", ndim=1)",
        );
        assert_infers(
            "relax.unique",
            &[t(&[n.clone(), d(3)], F32)],
            &[
                ("return_index", AttrValue::Bool(true)),
                ("return_inverse", AttrValue::Bool(true)),
                ("return_counts", AttrValue::Bool(true)),
            ],
            "R.Tuple(R.Tensor(dtype=\"float32\", ndim=1), R.Tensor(dtype=\"int64\", ndim=1), \
             R.Tensor((n * 3,), dtype=\"int64\"), R.Tensor(dtype=\"int64\", ndim=1))",
        );
        assert_infers(
            "relax.unique",
            &[t(&[n.clone(), d(3)], I64)],
            &[
                ("axis", AttrValue::Int(-1)),
                ("return_inverse", AttrValue::Bool(true)),
            ],
            "R.Tuple(R.Tensor(dtype=\"int64\", ndim=2), R.Tensor((3,), dtype=\"int64\"))",
        );
        assert_fails(
            "relax.unique",
            &[t(&[d(3)], F32)],
            &[("axis", AttrValue::Int(1))],
            "unique: axis 1 is out of range for a tensor of rank 1",
        );
    }
}
