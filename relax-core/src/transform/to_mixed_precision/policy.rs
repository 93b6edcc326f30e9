//! Each op's mixed-precision policy (TVM's `TMixedPrecisionPolicy` op
//! attribute), kept beside the pass instead of in the op registry's
//! entries.
//!
//! 1. [`Policy::Always`]: the op computes in the mixed dtype, its
//!    arguments cast to it, and accumulates in the pass's `out_dtype` (set
//!    through the op's `out_dtype` attribute): `matmul`, `outer`, the
//!    convolutions and their transposes, attention.
//! 2. [`Policy::Follow`]: the op computes in the mixed dtype when every
//!    argument already has it (or is a constant that fits in it), else in
//!    `float32`: elementwise arithmetic, comparisons, activations, layout
//!    and shape manipulation, pooling, resizing, normalization layers.
//! 3. [`Policy::Never`]: every other op, and any op not named here, keeps
//!    the dtypes it had (`softmax`, reductions, `call_tir`, …), as an op
//!    without the attribute does in TVM.
//!
//! The lists are TVM's, by registry name; names not (yet) registered here
//! are harmless.

/// How an op takes part in mixed precision. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Always in the mixed dtype, accumulating in `out_dtype`.
    Always,
    /// In the mixed dtype when its arguments are.
    Follow,
    /// In its original dtypes.
    Never,
}

/// Ops that always compute in the mixed dtype.
const ALWAYS: &[&str] = &[
    "matmul",
    "outer",
    "nn.conv1d",
    "nn.conv2d",
    "nn.conv3d",
    "nn.conv1d_transpose",
    "nn.conv2d_transpose",
    "nn.conv3d_transpose",
    "nn.attention",
    "nn.attention_bias",
    "nn.attention_var_len",
];

/// Ops that follow their arguments' dtype.
const FOLLOW: &[&str] = &[
    // Unary arithmetic and checks.
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "bitwise_not",
    "ceil",
    "cos",
    "cosh",
    "erf",
    "exp",
    "floor",
    "log",
    "logical_not",
    "negative",
    "round",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "trunc",
    "isfinite",
    "isinf",
    "isnan",
    // Activations.
    "nn.gelu",
    "nn.gelu_tanh",
    "nn.relu",
    "nn.selu",
    "nn.silu",
    // Binary arithmetic, comparisons, logic and bits.
    "add",
    "atan2",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "divide",
    "floor_divide",
    "floor_mod",
    "left_shift",
    "log_add_exp",
    "logical_and",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "power",
    "right_shift",
    "subtract",
    "equal",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "ewise_fma",
    // Creation and dtype.
    "full",
    "full_like",
    "ones",
    "zeros",
    "eye",
    "arange",
    "hamming_window",
    "astype",
    // Indexing and manipulation.
    "strided_slice",
    "dynamic_strided_slice",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flatten",
    "layout_transform",
    "permute_dims",
    "reshape",
    "split",
    "squeeze",
    "stack",
    "meshgrid",
    // Normalization, dropout, pooling, images.
    "nn.layer_norm",
    "nn.group_norm",
    "nn.instance_norm",
    "nn.rms_norm",
    "nn.dropout",
    "nn.batch_flatten",
    "nn.max_pool1d",
    "nn.max_pool2d",
    "nn.max_pool3d",
    "nn.avg_pool1d",
    "nn.avg_pool2d",
    "nn.avg_pool3d",
    "nn.adaptive_avg_pool1d",
    "nn.adaptive_avg_pool2d",
    "nn.adaptive_avg_pool3d",
    "image.resize2d",
    "image.resize3d",
    "image.grid_sample",
    "image.affine_grid",
    "vision.roi_align",
    "vision.roi_pool",
];

/// The policy of the op named `name` (`relax.add`).
pub fn policy(name: &str) -> Policy {
    let short = name.strip_prefix("relax.").unwrap_or(name);
    if ALWAYS.contains(&short) {
        Policy::Always
    } else if FOLLOW.contains(&short) {
        Policy::Follow
    } else {
        Policy::Never
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_by_registry_name() {
        assert_eq!(policy("relax.matmul"), Policy::Always);
        assert_eq!(policy("relax.nn.conv2d"), Policy::Always);
        assert_eq!(policy("relax.add"), Policy::Follow);
        assert_eq!(policy("relax.nn.relu"), Policy::Follow);
        assert_eq!(policy("relax.reshape"), Policy::Follow);
        assert_eq!(policy("relax.nn.softmax"), Policy::Never);
        assert_eq!(policy("relax.sum"), Policy::Never);
        assert_eq!(policy("relax.call_tir"), Policy::Never);
        assert_eq!(policy("relax.no_such_op"), Policy::Never);
    }

    /// Every `Always` op that is registered has the `out_dtype` attribute
    /// the pass sets, but attention: TVM gives it none either, its result
    /// has the query's dtype, and its kernels compute in `float32` for a
    /// half-precision query.
    #[test]
    fn registered_always_ops_have_out_dtype() {
        for name in ALWAYS.iter().filter(|n| !n.starts_with("nn.attention")) {
            if let Some(info) = crate::op::lookup(&format!("relax.{name}")) {
                assert!(info.attr_spec("out_dtype").is_some(), "{name}");
            }
        }
    }
}
