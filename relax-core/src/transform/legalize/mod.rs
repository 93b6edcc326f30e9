//! The legalizations: for each registered op, its computation as TE stages
//! (TVM's `python/tvm/relax/transform/legalize_ops/*.py`, which use TOPI).
//!
//! One file per op group, mirroring [`crate::op`]. Each group exports a
//! table of `(op name, legalization)`; [`lookup`] finds an op's entry.
//! A legalization receives a [`LegalizeCtx`]: the builder, the call (with
//! complete attributes and normalized arguments) and the call's inferred
//! StructInfo, which is known (dtype and every dim) whenever a legalization
//! runs. Output shapes follow the same formulas as the op's inference, so
//! the `call_tir` replacing a call has the call's StructInfo; the pass
//! checks it.
//!
//! The semantics reproduce the reference kernels of `relax_runtime`
//! (broadcasting, truncating integer division, NaN-propagating max/min,
//! first index of the extreme in argmax/argmin, clamped strided slices,
//! zero padding in conv2d and `-inf` padding in max_pool2d, the erf form of
//! gelu, the biased variance of layer_norm, softmax with the maximum
//! subtracted).
//!
//! `float16` and `bfloat16` need nothing of their own here: their stages
//! compute in `float32` and round where they are stored
//! ([`crate::tir::half_float`]); constants, `-inf` identities and
//! intrinsics are typed by the input's dtype and so computed in `float32`
//! too; and a half-typed sum or product (matmul, conv2d, `sum`, `mean`,
//! `cumsum`, softmax's and layer_norm's sums) accumulates in a `float32` stage and
//! rounds once (item 5 of [`crate::tir::te`]). Where a legalization is
//! several stages (softmax, mean, layer_norm), each intermediate stage
//! rounds to the half type once, where the reference kernel rounds only
//! the op's result: within a few units in the last place (the tests allow
//! 8).

pub mod attention;
pub mod binary;
pub mod create;
pub mod datatype;
pub mod image;
pub mod index;
pub mod linear_algebra;
pub mod manipulate;
pub mod nn;
pub mod qdq;
pub mod search;
pub mod sorting;
pub mod statistical;
pub mod ternary;
pub mod unary;

use crate::block_builder::BlockBuilder;
use crate::ir::{Attrs, Call, Expr, PrimExpr, StructInfo};
use crate::op::OpInfo;
use crate::tir::te::{self, Tensor};
use relax_runtime::{DataType, Diagnostic, Error};

/// The attribute recording which op a PrimFunc was legalized from (read by
/// `AnnotateTIROpPattern`), written with [`LegalizeOps::legalized_from`](crate::transform::LegalizeOps::legalized_from).
pub const LEGALIZED_FROM: &str = "legalized_from";

/// TVM's attribute on every PrimFunc LegalizeOps makes: its buffers do not
/// alias.
pub const NOALIAS: &str = "tirx.noalias";

/// A legalization: the expression replacing the call.
pub type Legalize = fn(&mut LegalizeCtx<'_>) -> Result<Expr, Error>;

/// Every group's table, in the order of [`crate::op`].
const TABLES: &[&[(&str, Legalize)]] = &[
    binary::LEGALIZE,
    unary::LEGALIZE,
    ternary::LEGALIZE,
    linear_algebra::LEGALIZE,
    manipulate::LEGALIZE,
    index::LEGALIZE,
    create::LEGALIZE,
    statistical::LEGALIZE,
    search::LEGALIZE,
    sorting::LEGALIZE,
    datatype::LEGALIZE,
    nn::LEGALIZE,
    attention::LEGALIZE,
    image::LEGALIZE,
    qdq::LEGALIZE,
];

/// The legalization of the op named `op` (`relax.add`), if it has one.
pub fn lookup(op: &str) -> Option<Legalize> {
    TABLES
        .iter()
        .flat_map(|t| t.iter())
        .find(|(n, _)| *n == op)
        .map(|(_, f)| *f)
}

/// Every op that has a legalization.
pub fn ops() -> impl Iterator<Item = &'static str> {
    TABLES.iter().flat_map(|t| t.iter()).map(|(n, _)| *n)
}

/// What a legalization works with.
pub struct LegalizeCtx<'a> {
    /// The builder (of the function being rewritten).
    pub bb: &'a mut BlockBuilder,
    /// The op.
    pub op: &'static OpInfo,
    /// The call, attributes complete.
    pub call: &'a Call,
    /// The call's StructInfo (known dtype and dims).
    pub out: &'a StructInfo,
    /// `nn.relu` propagates NaN (see [`LegalizeOps::relu_propagates_nan`](crate::transform::LegalizeOps::relu_propagates_nan)).
    pub relu_propagates_nan: bool,
    /// The PrimFuncs record their op (see [`LegalizeOps::legalized_from`](crate::transform::LegalizeOps::legalized_from)).
    pub legalized_from: bool,
}

/// A compile error of a legalization.
pub(crate) fn error(message: impl Into<String>) -> Error {
    Error::Compile(vec![Diagnostic::new("legalize", message)])
}

impl LegalizeCtx<'_> {
    /// The PrimFunc's name hint, as TVM's legalization names it: the op's
    /// name without `relax.` and `nn.`, or TOPI's name where TVM calls a
    /// TOPI function of another name (`permute_dims` is `transpose`).
    pub fn name(&self) -> &'static str {
        let short = self.op.short_name();
        match short {
            "permute_dims" => "transpose",
            _ => short.strip_prefix("nn.").unwrap_or(short),
        }
    }

    /// `call_te` over `args`, recording the op on the PrimFunc.
    pub fn te(
        &mut self,
        args: &[Expr],
        f: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>, Error>,
    ) -> Result<Expr, Error> {
        let name = self.name();
        self.te_named(name, args, f)
    }

    /// [`LegalizeCtx::te`] with the PrimFunc named `name`.
    pub fn te_named(
        &mut self,
        name: &str,
        args: &[Expr],
        f: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>, Error>,
    ) -> Result<Expr, Error> {
        let mut attrs = Attrs::from_pairs([(NOALIAS, true)]);
        if self.legalized_from {
            attrs = attrs.with(LEGALIZED_FROM, self.op.name);
        }
        self.bb.call_te_with_attrs(name, args, attrs, f)
    }

    /// `call_te` over the call's arguments `which`, with one output.
    pub fn te1(
        &mut self,
        which: &[usize],
        f: impl FnOnce(&[Tensor]) -> Result<Tensor, Error>,
    ) -> Result<Expr, Error> {
        let args: Vec<Expr> = which.iter().map(|&i| self.call.args[i].clone()).collect();
        self.te(&args, |xs| f(xs).map(|t| vec![t]))
    }

    /// `call_te` over the call's arguments `which`, with several outputs
    /// (a tuple result).
    pub fn te1_many(
        &mut self,
        which: &[usize],
        f: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>, Error>,
    ) -> Result<Expr, Error> {
        let args: Vec<Expr> = which.iter().map(|&i| self.call.args[i].clone()).collect();
        self.te(&args, f)
    }

    /// The dims and dtype of output `i` (of a tuple result; 0 for a tensor).
    pub fn out_tensor(&self, i: usize) -> Result<(Vec<PrimExpr>, DataType), Error> {
        let s = match self.out.as_tuple() {
            Some(fields) => fields
                .get(i)
                .ok_or_else(|| error(format!("{}: no output {i}", self.name())))?,
            None => self.out,
        };
        let t = s
            .as_tensor()
            .ok_or_else(|| error(format!("{}: output {i} is not a tensor", self.name())))?;
        let dims = t
            .shape_values()
            .ok_or_else(|| error(format!("{}: the output shape is unknown", self.name())))?;
        Ok((dims.to_vec(), t.dtype))
    }

    /// The dims of the call's shape argument `i`.
    pub fn shape_arg(&self, i: usize) -> Result<Vec<PrimExpr>, Error> {
        match crate::op::infer::shape_arg(self.call, i) {
            Ok(Ok(v)) => Ok(v),
            _ => Err(error(format!(
                "{}: argument {i} must be a shape with known dims",
                self.name()
            ))),
        }
    }

    /// A diagnostic from the op's own attribute checks, as an error.
    pub fn check<T>(&self, r: Result<T, Diagnostic>) -> Result<T, Error> {
        r.map_err(|d| Error::Compile(vec![d]))
    }
}

// ----- index helpers -----------------------------------------------------

/// The index into a tensor of shape `dims` for the output index `idx` of a
/// broadcast with output shape `out`: dims aligned at the right, a literal 1
/// broadcast (index 0).
pub fn broadcast_index(dims: &[PrimExpr], idx: &[PrimExpr], out: &[PrimExpr]) -> Vec<PrimExpr> {
    let off = out.len() - dims.len();
    dims.iter()
        .enumerate()
        .map(|(j, d)| {
            if d.as_int() == Some(1) && out[off + j].as_int() != Some(1) {
                PrimExpr::int(0)
            } else {
                idx[off + j].clone()
            }
        })
        .collect()
}

/// The broadcast shape of `a` and `b` by the rule of the ops' inference: a
/// dim of 1 takes the other, otherwise the dims are equal (proven by
/// inference, which runs first) and `a`'s is kept.
pub fn broadcast_shape(a: &[PrimExpr], b: &[PrimExpr]) -> Vec<PrimExpr> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|k| {
            let da = (k + a.len()).checked_sub(n).map(|x| &a[x]);
            let db = (k + b.len()).checked_sub(n).map(|x| &b[x]);
            match (da, db) {
                (Some(x), Some(y)) if x.as_int() == Some(1) => y.clone(),
                (Some(x), _) => x.clone(),
                (None, Some(y)) => y.clone(),
                (None, None) => PrimExpr::int(1),
            }
        })
        .collect()
}

/// The row-major flat offset of `idx` in `shape`.
pub fn ravel(idx: &[PrimExpr], shape: &[PrimExpr]) -> PrimExpr {
    idx.iter().zip(shape).fold(PrimExpr::int(0), |acc, (i, d)| {
        if acc.as_int() == Some(0) {
            i.clone()
        } else {
            acc * d.clone() + i.clone()
        }
    })
}

/// The index in `shape` of the row-major flat offset `flat`.
pub fn unravel(flat: PrimExpr, shape: &[PrimExpr]) -> Vec<PrimExpr> {
    let mut out = vec![PrimExpr::int(0); shape.len()];
    let mut rest = flat;
    for (k, d) in shape.iter().enumerate().rev() {
        if k == 0 {
            out[k] = rest.clone();
        } else {
            out[k] = rest.clone().floormod(d.clone());
            rest = rest.floordiv(d.clone());
        }
    }
    out
}

/// `e` clamped into `[0, extent - 1]`, so a load at it stays in bounds
/// (its value is discarded by a `Select` when `e` was outside).
pub fn clamp_index(e: PrimExpr, extent: &PrimExpr) -> PrimExpr {
    e.min(extent.clone() - 1).max(0)
}

/// `0 <= e < extent`.
pub fn in_range(e: &PrimExpr, extent: &PrimExpr) -> PrimExpr {
    e.clone().ge(0).and(e.clone().lt(extent.clone()))
}

/// `x` converted to `dtype`; to `bool` that is `x != 0`, as the kernels do.
pub fn convert(x: PrimExpr, dtype: DataType) -> PrimExpr {
    if dtype.is_bool() && !x.dtype().is_bool() {
        let z = te::zero(x.dtype());
        x.ne_(z)
    } else {
        x.cast(dtype)
    }
}

#[cfg(test)]
mod tests;
