//! Tensor creation: `zeros`, `ones` (shape argument, `dtype` attribute) and
//! `full` (shape and a rank-0 fill value; `dtype` defaults to the value's),
//! and `arange(start, end, step)`, whose three arguments are `PrimValue`s
//! (TVM's `R.arange`), so a symbolic `end` gives a symbolic length: the
//! result has `ceil((end - start) / step)` elements, computed exactly for
//! integers (`(end - start + step - 1) // step` for a positive step) and
//! required to be known for floats.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{arg_name, arg_sinfo, attr_dtype, error, shape_arg, tensor, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, PrimExpr, StructInfo};
use relax_runtime::{DataType, Diagnostic};

fn infer_fill(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let dtype = attr_dtype(call, "dtype");
    Ok(match shape_arg(call, 0)? {
        Ok(dims) => tensor(Some(dims), 0, dtype, ana),
        Err(ndim) => StructInfo::tensor_ndim(ndim, dtype),
    })
}

fn infer_full(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let v = tensor_arg(call, 1)?;
    if v.ndim > 0 {
        return Err(error(
            call,
            "op-rank",
            format!(
                "{} must be a scalar (rank 0), found rank {}",
                arg_name(call, 1),
                v.ndim
            ),
        ));
    }
    let dtype = attr_dtype(call, "dtype");
    let dtype = if dtype.is_void() { v.dtype } else { dtype };
    Ok(match shape_arg(call, 0)? {
        Ok(dims) => tensor(Some(dims), 0, dtype, ana),
        Err(ndim) => StructInfo::tensor_ndim(ndim, dtype),
    })
}

/// `eye_like(x, k)`: `x`'s 2-d shape in `dtype` (`x`'s when `void`), ones
/// on diagonal `k` (an integer PrimValue; `j - i == k`), zeros elsewhere.
fn infer_eye_like(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    if !x.is_unknown_ndim() && x.ndim != 2 {
        return Err(error(
            call,
            "op-rank",
            format!(
                "{} must have rank 2, found rank {}",
                arg_name(call, 0),
                x.ndim
            ),
        ));
    }
    let k = prim_arg(call, 1)?;
    if !k.dtype().is_integer() {
        return Err(error(
            call,
            "op-dtype-not-int",
            format!("k must be an integer, found {}", k.dtype()),
        ));
    }
    let dtype = attr_dtype(call, "dtype");
    let dtype = if dtype.is_void() { x.dtype } else { dtype };
    Ok(tensor(x.shape_values().map(<[_]>::to_vec), 2, dtype, ana))
}

/// The value of `PrimValue` argument `i` (its StructInfo's value).
pub(crate) fn prim_arg(call: &Call, i: usize) -> Result<PrimExpr, Diagnostic> {
    let s = arg_sinfo(call, i)?;
    s.as_prim().and_then(|p| p.value.clone()).ok_or_else(|| {
        error(
            call,
            "op-arg-not-prim-value",
            format!("{} must be a PrimValue, found {s}", arg_name(call, i)),
        )
    })
}

/// The number of elements of `arange(start, end, step)`, if it can be
/// stated: exactly for integers, by evaluation for known floats.
pub(crate) fn arange_len(
    start: &PrimExpr,
    end: &PrimExpr,
    step: &PrimExpr,
    ana: &Analyzer,
) -> Result<PrimExpr, String> {
    let all_int = [start, end, step].iter().all(|e| e.dtype().is_integer());
    if all_int {
        return match step.as_int() {
            Some(0) => Err("step must not be 0".into()),
            Some(k) if k > 0 => {
                Ok(ana.simplify(&(end.clone() - start.clone() + (k - 1)).floordiv(k).max(0)))
            }
            Some(k) => {
                Ok(ana.simplify(&(start.clone() - end.clone() + (-k - 1)).floordiv(-k).max(0)))
            }
            None => Err("an integer step must be a known value".into()),
        };
    }
    let known = |e: &PrimExpr| match ana.simplify(e).kind() {
        crate::ir::PrimExprKind::IntImm(v) => Some(*v as f64),
        crate::ir::PrimExprKind::FloatImm(v) => Some(*v),
        _ => None,
    };
    match (known(start), known(end), known(step)) {
        (_, _, Some(s)) if s == 0.0 || !s.is_finite() => {
            Err("step must be finite and not 0".into())
        }
        (Some(a), Some(b), Some(s)) => Ok(PrimExpr::int(((b - a) / s).ceil().max(0.0) as i64)),
        _ => Err("a float start, end or step must be a known value".into()),
    }
}

fn infer_arange(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let start = prim_arg(call, 0)?;
    let end = prim_arg(call, 1)?;
    let step = prim_arg(call, 2)?;
    let dtype = attr_dtype(call, "dtype");
    let any_float = [&start, &end, &step].iter().any(|e| e.dtype().is_float());
    if dtype.is_void() && any_float {
        return Err(error(
            call,
            "op-arange",
            "a float arange needs its `dtype` attribute",
        ));
    }
    let dtype = if dtype.is_void() {
        DataType::i64()
    } else {
        dtype
    };
    let len = arange_len(&start, &end, &step, ana).map_err(|m| error(call, "op-arange", m))?;
    Ok(tensor(Some(vec![len]), 1, dtype, ana))
}

const DTYPE_REQUIRED: AttrSpec = AttrSpec::new("dtype", AttrType::DataType, AttrDefault::Required);

/// The creation ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.zeros",
        args: &["shape"],
        arity: Arity::Exact(1),
        attrs: &[DTYPE_REQUIRED],
        infer_struct_info: infer_fill,
        purity: true,
        pattern: OpPatternKind::ElemWise,
    },
    OpInfo {
        name: "relax.ones",
        args: &["shape"],
        arity: Arity::Exact(1),
        attrs: &[DTYPE_REQUIRED],
        infer_struct_info: infer_fill,
        purity: true,
        pattern: OpPatternKind::ElemWise,
    },
    OpInfo {
        name: "relax.full",
        args: &["shape", "fill_value"],
        arity: Arity::Exact(2),
        attrs: &[AttrSpec::new(
            "dtype",
            AttrType::DataType,
            AttrDefault::DataType("void"),
        )],
        infer_struct_info: infer_full,
        purity: true,
        pattern: OpPatternKind::ElemWise,
    },
    OpInfo {
        name: "relax.eye_like",
        args: &["x", "k"],
        arity: Arity::Exact(2),
        attrs: &[AttrSpec::new(
            "dtype",
            AttrType::DataType,
            AttrDefault::DataType("void"),
        )],
        infer_struct_info: infer_eye_like,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.arange",
        args: &["start", "end", "step"],
        arity: Arity::Exact(3),
        attrs: &[AttrSpec::new(
            "dtype",
            AttrType::DataType,
            AttrDefault::DataType("void"),
        )],
        infer_struct_info: infer_arange,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
];

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn eye_like_has_the_input_shape() {
        let n = sym("n");
        let k = |v: i64| crate::ir::Expr::prim_value(d(v));
        assert_infers(
            "relax.eye_like",
            &[t(&[n.clone(), d(4)], F32), k(1)],
            &[],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
        assert_infers(
            "relax.eye_like",
            &[t(&[d(3), d(4)], F32), k(-1)],
            &[("dtype", AttrValue::DataType(I64))],
            "R.Tensor((3, 4), dtype=\"int64\")",
        );
        assert_fails(
            "relax.eye_like",
            &[t(&[d(3)], F32), k(0)],
            &[],
            "eye_like: x must have rank 2, found rank 1",
        );
    }

    #[test]
    fn arange_has_a_symbolic_length() {
        let n = sym("n");
        let p = |e: crate::ir::PrimExpr| crate::ir::Expr::prim_value(e);
        assert_infers(
            "relax.arange",
            &[p(d(0)), p(n.clone()), p(d(1))],
            &[],
            "R.Tensor((n,), dtype=\"int64\")",
        );
        assert_infers(
            "relax.arange",
            &[p(d(1)), p(d(10)), p(d(3))],
            &[("dtype", AttrValue::from("float32"))],
            "R.Tensor((3,), dtype=\"float32\")",
        );
        assert_infers(
            "relax.arange",
            &[p(d(10)), p(d(1)), p(d(-3))],
            &[],
            "R.Tensor((3,), dtype=\"int64\")",
        );
        let f = |v: f64| p(crate::ir::PrimExpr::float(F32, v));
        assert_infers(
            "relax.arange",
            &[f(0.0), f(1.0), f(0.25)],
            &[("dtype", AttrValue::from("float32"))],
            "R.Tensor((4,), dtype=\"float32\")",
        );
        assert_fails(
            "relax.arange",
            &[f(0.0), f(1.0), f(0.25)],
            &[],
            "arange: a float arange needs its `dtype` attribute",
        );
        assert_fails(
            "relax.arange",
            &[p(d(0)), p(d(4)), p(d(0))],
            &[],
            "arange: step must not be 0",
        );
        assert_fails(
            "relax.arange",
            &[t(&[], I64), p(d(4)), p(d(1))],
            &[],
            "arange: start must be a PrimValue, found R.Tensor((), dtype=\"int64\")",
        );
    }

    #[test]
    fn creation() {
        let n = sym("n");
        assert_infers(
            "relax.zeros",
            &[shape(&[n.clone(), d(3)])],
            &[("dtype", AttrValue::from("float32"))],
            "R.Tensor((n, 3), dtype=\"float32\")",
        );
        assert_infers(
            "relax.ones",
            &[shape(&[d(2)])],
            &[("dtype", AttrValue::from("i64"))],
            "R.Tensor((2,), dtype=\"int64\")",
        );
        assert_infers(
            "relax.full",
            &[shape(&[d(2)]), t(&[], F32)],
            &[],
            "R.Tensor((2,), dtype=\"float32\")",
        );
        assert_infers(
            "relax.full",
            &[shape(&[d(2)]), t(&[], F32)],
            &[("dtype", AttrValue::from("float16"))],
            "R.Tensor((2,), dtype=\"float16\")",
        );
        assert_fails(
            "relax.full",
            &[shape(&[d(2)]), t(&[d(2)], F32)],
            &[],
            "full: fill_value must be a scalar (rank 0), found rank 1",
        );
        assert_fails(
            "relax.zeros",
            &[shape(&[d(2)])],
            &[],
            "zeros: missing required attribute `dtype`",
        );
        assert_fails(
            "relax.zeros",
            &[t(&[d(2)], I64)],
            &[("dtype", AttrValue::from("float32"))],
            "zeros: shape must be a shape, found R.Tensor((2,), dtype=\"int64\")",
        );
        assert_fails(
            "relax.zeros",
            &[shape(&[d(2)])],
            &[("dtype", AttrValue::from("floaty"))],
            "zeros: attribute `dtype` must be a dtype, found the string \"floaty\"",
        );
    }
}
