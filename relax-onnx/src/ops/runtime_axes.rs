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
//! The axes must be distinct, as ONNX requires; their count is the axes
//! input's length, which must be known.

use super::shape_value::ShapeValue;
use super::Ctx;
use relax_core::ir::{AttrValue, Attrs, Expr, ExprKind, PrimExpr};
use relax_runtime::{DataType, Error};

/// Whether input `i` is a non-empty axes tensor computed at run time.
pub fn is_runtime_axes(cx: &Ctx, i: usize) -> Result<bool, Error> {
    let Some(e) = cx.raw_input(i)? else {
        return Ok(false);
    };
    if matches!(e.kind(), ExprKind::Constant(_)) || ShapeValue::of(&e).is_some() {
        return Ok(false);
    }
    let len = e
        .struct_info()
        .and_then(|s| s.as_tensor())
        .and_then(|t| t.shape_values())
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

fn i64_attrs() -> Attrs {
    Attrs::from_pairs([("dtype", AttrValue::DataType(DataType::i64()))])
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
        let axes = cx.call("relax.astype", vec![axes], i64_attrs())?;
        let zero = cx.scalar(0.0, DataType::i64())?;
        let n = cx.scalar(r, DataType::i64())?;
        let negative = cx.op2("relax.less", axes.clone(), zero)?;
        let wrapped = cx.op2("relax.add", axes.clone(), n)?;
        let axes = cx.call("relax.where", vec![negative, wrapped, axes], Attrs::new())?;
        let mut flags = Vec::new();
        for k in 0..dims.len() {
            let kk = cx.scalar(k as f64, DataType::i64())?;
            let hit = cx.op2("relax.equal", axes.clone(), kk)?;
            let hit = cx.call("relax.astype", vec![hit], i64_attrs())?;
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

    /// `op` (`relax.sum`, `relax.max`, `relax.min`, `relax.prod`) over the
    /// flagged axes, broadcast back to `x`'s shape.
    pub fn full(&self, cx: &mut Ctx, x: Expr, op: &str) -> Result<Expr, Error> {
        let mut full = x;
        for (k, flag) in self.flags.iter().enumerate() {
            let attrs = Attrs::from_pairs([
                ("axis", super::ints([k as i64])),
                ("keepdims", AttrValue::Bool(true)),
            ]);
            let red = cx.call(op, vec![full.clone()], attrs)?;
            let back = cx.call(
                "relax.broadcast_to",
                vec![red, Expr::shape(self.dims.clone())],
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
            let d = self.dim(cx, k)?;
            let d = cx.call(
                "relax.astype",
                vec![d],
                Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]),
            )?;
            let one = cx.scalar(1.0, dtype)?;
            let f = cx.call("relax.where", vec![flag.clone(), d, one], Attrs::new())?;
            n = cx.op2("relax.multiply", n, f)?;
        }
        Ok(n)
    }

    /// Dim `k` of `x` as an `int64` scalar tensor.
    fn dim(&self, cx: &mut Ctx, k: usize) -> Result<Expr, Error> {
        let e = ShapeValue::scalar(self.dims[k].clone())
            .to_expr()
            .map_err(|e| cx.error(e))?;
        super::as_tensor(cx.bb, e).map_err(|e| cx.error(e))
    }

    /// The output from the full result: one element along each reduced
    /// axis, which is kept as a 1 with `keepdims` and dropped without.
    pub fn finish(&self, cx: &mut Ctx, full: Expr, keepdims: bool) -> Result<Expr, Error> {
        let r = self.dims.len();
        let mut kept = Vec::new();
        let mut dim_tensors = Vec::new();
        for (k, flag) in self.flags.iter().enumerate() {
            let d = self.dim(cx, k)?;
            let one = cx.scalar(1.0, DataType::i64())?;
            let o = cx.call(
                "relax.where",
                vec![flag.clone(), one, d.clone()],
                Attrs::new(),
            )?;
            let col = vec![PrimExpr::int(1)];
            kept.push(cx.call(
                "relax.reshape",
                vec![o, Expr::shape(col.clone())],
                Attrs::new(),
            )?);
            dim_tensors.push(cx.call("relax.reshape", vec![d, Expr::shape(col)], Attrs::new())?);
        }
        let cat = |cx: &mut Ctx, parts: Vec<Expr>| {
            cx.call(
                "relax.concat",
                vec![Expr::tuple(parts)],
                Attrs::from_pairs([("axis", AttrValue::Int(0))]),
            )
        };
        let out_dims = cat(cx, kept)?;
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
        let left = r.saturating_sub(self.count);
        if left == 0 {
            return cx.call("relax.reshape", vec![y, Expr::shape(vec![])], Attrs::new());
        }
        // The kept dims in order: each kept axis goes to the number of kept
        // axes before it (an exclusive cumsum), each reduced one to a spare
        // last slot, then the slot is cut off.
        let mut not = Vec::new();
        for flag in &self.flags {
            let n = cx.op1("relax.logical_not", flag.clone())?;
            let n = cx.call("relax.astype", vec![n], i64_attrs())?;
            not.push(cx.call(
                "relax.reshape",
                vec![n, Expr::shape(vec![PrimExpr::int(1)])],
                Attrs::new(),
            )?);
        }
        let not = cat(cx, not)?;
        let pos = cx.call(
            "relax.cumsum",
            vec![not.clone()],
            Attrs::from_pairs([
                ("axis", AttrValue::Int(0)),
                ("exclusive", AttrValue::Bool(true)),
            ]),
        )?;
        let spare = cx.scalar(left as f64, DataType::i64())?;
        let zero = cx.scalar(0.0, DataType::i64())?;
        let is_kept = cx.op2("relax.not_equal", not, zero)?;
        let idx = cx.call("relax.where", vec![is_kept, pos, spare], Attrs::new())?;
        let dims = cat(cx, dim_tensors)?;
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
        let target = cx.bind_data_dims(target)?;
        cx.call("relax.reshape", vec![y, Expr::shape(target)], Attrs::new())
    }
}
