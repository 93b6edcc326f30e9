//! Reductions over axes computed at run time (the `axes` input of the
//! `Reduce*` ops, from opset 13 or 18, when it is not a constant).
//!
//! The registry's reductions take their axes as attributes, and which axes
//! are reduced decides the output's dims. So a reduction over run-time axes
//! is written out, with every shape either static or bound at run time:
//!
//! 1. A bool scalar per axis `k` of `x` (rank `r`, known) says whether the
//!    axes name it (`axes == k` or `axes == k - r`, for any element).
//! 2. The "full" result has `x`'s shape: for each axis in turn, where its
//!    flag is set, the values are replaced by their reduction along it,
//!    broadcast back. After every axis, each reduced axis holds one value
//!    repeated; `mean` divides the sum by the product of the reduced dims.
//! 3. The output's dims (`1` or `d_k` with `keepdims`; without it, the dims
//!    of the axes not reduced, gathered in order with an exclusive
//!    `cumsum` and a `scatter_elements`) are computed as a tensor and bound
//!    to fresh dims (`tensor_to_shape`, `match_cast`); a strided slice and
//!    a reshape give the result.
//!
//! An axis that may have length 0 (a known 0, or a symbolic dim) is first
//! extended by one element holding the reduction's identity (`0` for a
//! sum, `1` for a product, the dtype's lowest or highest value for a
//! maximum or minimum), so that a reduction over an empty axis gives the
//! identity, one element long, as ONNX wants; an axis that is not reduced
//! loses the extra element again in step 3's slice.
//!
//! The axes must be distinct, as ONNX requires; their count is the axes
//! input's length, which must be known.

use super::Ctx;
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

/// Whether input `i` is a non-empty axes tensor computed at run time.
pub fn is_runtime_axes(cx: &Ctx, i: usize) -> Result<bool, Error> {
    if !cx.is_computed(i)? {
        return Ok(false);
    }
    let len = cx
        .raw_input(i)?
        .and_then(|e| {
            e.struct_info()
                .and_then(|s| s.as_tensor())
                .and_then(|t| t.shape_values())
                .map(<[PrimExpr]>::to_vec)
        })
        .and_then(|d| d.first().and_then(PrimExpr::as_int));
    Ok(len.is_some_and(|n| n > 0))
}

/// A reduction of `x` over the run-time axes in input `i`.
pub struct RuntimeAxes {
    /// One bool scalar per axis of `x`: whether it is reduced.
    flags: Vec<Expr>,
    /// `x`'s dims.
    dims: Vec<PrimExpr>,
    /// How many axes are reduced (the axes input's length).
    count: usize,
}

impl RuntimeAxes {
    /// The flags of `x`'s axes named by input `i`.
    pub fn new(cx: &mut Ctx, x: &Expr, i: usize) -> Result<Self, Error> {
        let (dims, _) = cx.tensor(x)?;
        let r = dims.len() as f64;
        let axes = cx.input(i)?;
        let (ad, _) = cx.tensor(&axes)?;
        let count = ad
            .first()
            .and_then(PrimExpr::as_int)
            .ok_or_else(|| cx.error("the axes input must have a known length"))?
            as usize;
        let axes = cx.astype(axes, DataType::i64())?;
        let n = cx.scalar(r, DataType::i64())?;
        let axes = cx.wrap_negative(axes, n)?;
        let mut flags = Vec::new();
        for k in 0..dims.len() {
            let kk = cx.scalar(k as f64, DataType::i64())?;
            let hit = cx.op2("relax.equal", axes.clone(), kk)?;
            let hit = cx.astype(hit, DataType::i64())?;
            let any = cx.call(
                "relax.max",
                vec![hit],
                Attrs::from_pairs([
                    ("axis", AttrValue::None),
                    ("keepdims", AttrValue::Bool(false)),
                ]),
            )?;
            let one = cx.scalar(1.0, DataType::i64())?;
            flags.push(cx.op2("relax.equal", any, one)?);
        }
        Ok(RuntimeAxes { flags, dims, count })
    }

    /// `x` with one element holding `op`'s identity appended along every
    /// axis that may have length 0 (see the module doc); `x` itself when
    /// every dim is a known positive integer.
    pub fn pad_identity(&self, cx: &mut Ctx, x: Expr, op: &str) -> Result<Expr, Error> {
        let (_, dtype) = cx.tensor(&x)?;
        let value = identity(op, dtype).ok_or_else(|| {
            cx.error(format!(
                "`{op}` over {dtype} has no identity to reduce an empty axis to"
            ))
        })?;
        let mut y = x;
        for k in 0..self.dims.len() {
            if self.dims[k].as_int().is_some_and(|d| d > 0) {
                continue;
            }
            let (mut dims, _) = cx.tensor(&y)?;
            dims[k] = PrimExpr::int(1);
            let fill = cx.scalar(value, DataType::f64())?;
            let fill = cx.astype(fill, dtype)?;
            let fill = cx.call(
                "relax.full",
                vec![Expr::shape(dims), fill],
                Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]),
            )?;
            y = cx.call(
                "relax.concat",
                vec![Expr::tuple(vec![y, fill])],
                Attrs::from_pairs([("axis", AttrValue::Int(k as i64))]),
            )?;
        }
        Ok(y)
    }

    /// `op` (`relax.sum`, `relax.max`, `relax.min`, `relax.prod`) over the
    /// flagged axes, broadcast back to `x`'s shape.
    pub fn full(&self, cx: &mut Ctx, x: Expr, op: &str) -> Result<Expr, Error> {
        let (dims, _) = cx.tensor(&x)?;
        let mut full = x;
        for (k, flag) in self.flags.iter().enumerate() {
            let attrs = Attrs::from_pairs([
                ("axis", super::ints([k as i64])),
                ("keepdims", AttrValue::Bool(true)),
            ]);
            let red = cx.call(op, vec![full.clone()], attrs)?;
            let back = cx.call(
                "relax.broadcast_to",
                vec![red, Expr::shape(dims.clone())],
                Attrs::new(),
            )?;
            full = cx.call("relax.where", vec![flag.clone(), back, full], Attrs::new())?;
        }
        Ok(full)
    }

    /// The number of reduced elements, a scalar of `dtype`.
    pub fn reduced_count(&self, cx: &mut Ctx, dtype: DataType) -> Result<Expr, Error> {
        let mut n = cx.scalar(1.0, dtype)?;
        for (k, flag) in self.flags.iter().enumerate() {
            let d = cx.dim_tensor(self.dims[k].clone())?;
            let d = cx.astype(d, dtype)?;
            let one = cx.scalar(1.0, dtype)?;
            let f = cx.call("relax.where", vec![flag.clone(), d, one], Attrs::new())?;
            n = cx.op2("relax.multiply", n, f)?;
        }
        Ok(n)
    }

    /// The output from the full result: one element along each reduced
    /// axis, which is kept as a 1 with `keepdims` and dropped without.
    pub fn finish(&self, cx: &mut Ctx, full: Expr, keepdims: bool) -> Result<Expr, Error> {
        let r = self.dims.len();
        let flags = self.flag_vector(cx)?;
        let dims = cx.dims_tensor(self.dims.clone())?;
        let one = cx.scalar(1.0, DataType::i64())?;
        let out_dims = cx.call(
            "relax.where",
            vec![flags.clone(), one, dims.clone()],
            Attrs::new(),
        )?;
        let out = cx.bind_data_dims(out_dims)?;
        let slice = Attrs::from_pairs([
            ("axes", super::ints(0..r as i64)),
            ("begin", super::ints(vec![0; r])),
            (
                "end",
                AttrValue::Array(out.iter().cloned().map(AttrValue::PrimExpr).collect()),
            ),
            ("strides", super::ints(vec![1; r])),
        ]);
        let y = cx.call("relax.strided_slice", vec![full], slice)?;
        if keepdims {
            return Ok(y);
        }
        let target = self.kept_dims(cx)?;
        cx.call("relax.reshape", vec![y, Expr::shape(target)], Attrs::new())
    }

    /// The flags as one bool vector.
    fn flag_vector(&self, cx: &mut Ctx) -> Result<Expr, Error> {
        let mut flags = Vec::new();
        for flag in &self.flags {
            let col = Expr::shape(vec![PrimExpr::int(1)]);
            flags.push(cx.call("relax.reshape", vec![flag.clone(), col], Attrs::new())?);
        }
        cx.call(
            "relax.concat",
            vec![Expr::tuple(flags)],
            Attrs::from_pairs([("axis", AttrValue::Int(0))]),
        )
    }

    /// The dims of `x`'s axes that are not reduced, in order, bound at
    /// run time: the output's dims without `keepdims`, and `Squeeze`'s.
    pub fn kept_dims(&self, cx: &mut Ctx) -> Result<Vec<PrimExpr>, Error> {
        let r = self.dims.len();
        let left = r.saturating_sub(self.count);
        if left == 0 {
            return Ok(vec![]);
        }
        let flags = self.flag_vector(cx)?;
        let dims = cx.dims_tensor(self.dims.clone())?;
        // The kept dims in order: each kept axis goes to the number of kept
        // axes before it (an exclusive cumsum), each reduced one to a spare
        // last slot, then the slot is cut off.
        let kept = cx.op1("relax.logical_not", flags)?;
        let count = cx.astype(kept.clone(), DataType::i64())?;
        let pos = cx.call(
            "relax.cumsum",
            vec![count],
            Attrs::from_pairs([
                ("axis", AttrValue::Int(0)),
                ("exclusive", AttrValue::Bool(true)),
            ]),
        )?;
        let spare = cx.scalar(left as f64, DataType::i64())?;
        let idx = cx.call("relax.where", vec![kept, pos, spare], Attrs::new())?;
        let slots = Expr::constant(
            relax_runtime::Tensor::from_vec(&[left as i64 + 1], vec![0i64; left + 1])
                .map_err(|e| cx.error(e))?,
        );
        let placed = cx.call(
            "relax.scatter_elements",
            vec![slots, idx, dims],
            Attrs::from_pairs([("axis", AttrValue::Int(0))]),
        )?;
        let target = cx.call(
            "relax.strided_slice",
            vec![placed],
            Attrs::from_pairs([
                ("axes", super::ints([0])),
                ("begin", super::ints([0])),
                ("end", super::ints([left as i64])),
            ]),
        )?;
        cx.bind_data_dims(target)
    }
}

/// The identity of the reduction `op` over `dtype`, as an `f64` (cast to
/// `dtype` when used): the value an empty reduction gives.
pub fn identity(op: &str, dtype: DataType) -> Option<f64> {
    let lowest = || {
        if dtype.is_float() {
            f64::NEG_INFINITY
        } else if dtype.is_int() {
            -(2f64.powi(dtype.bits() as i32 - 1))
        } else {
            0.0
        }
    };
    let highest = || {
        if dtype.is_float() {
            f64::INFINITY
        } else if dtype.is_int() {
            2f64.powi(dtype.bits() as i32 - 1) - 1.0
        } else {
            2f64.powi(dtype.bits() as i32) - 1.0
        }
    };
    match op {
        "relax.sum" | "relax.mean" => Some(0.0),
        "relax.prod" => Some(1.0),
        "relax.max" => Some(lowest()),
        "relax.min" => Some(highest()),
        _ => None,
    }
}
