//! The converters: one function per ONNX op type, turning a node into
//! Relax op calls ([`CONVERTERS`]).
//!
//! A converter reads its node through [`Ctx`] (inputs, attributes, the
//! opset version) and returns the Relax expressions of the node's outputs,
//! in order. [`Ctx::call`] emits one op call, or evaluates it when its
//! arguments are constants. Ops the registry lacks are written with the
//! ops it has, exactly (`LeakyRelu` as a `where`, `Tile` as reshapes and a
//! broadcast, `LRN` as a convolution with ones over the channels).
//!
//! | file | op types |
//! |---|---|
//! | `det.rs` | `Det` (Gaussian elimination with partial pivoting over known `n`) |
//! | `einsum.rs` | `Einsum` (diagonals, broadcast products and sums) |
//! | `bitcast.rs` | `BitCast` (TVM's `memory.view` with a new dtype) |
//! | `blocks.rs` | `DepthToSpace`, `SpaceToDepth`, `Col2Im` |
//! | `crop.rs` | `CenterCropPad` |
//! | `deform.rs` | `DeformConv` (2-d, through `image.grid_sample`) |
//! | `elementwise.rs` | arithmetic (with pre-opset-7 broadcasting), `Mod`, comparisons, logical (`And`, `Or`, `Xor`, `Not`) and bitwise ops (`Bitwise*`, `BitShift`), unary math (`Erf`, trigonometric and hyperbolic functions, `Floor`, `Ceil`, `Round`, `Sign`, `IsNaN`, `IsInf`, …), activations (`HardSwish`, `Gelu`, `Mish`, `Celu`, `Shrink`, `ThresholdedRelu`, …), `Clip`, `Cast`, `CastLike`, `Where`, variadic `Sum`/`Max`/`Min`/`Mean` |
//! | `nn.rs` | `Conv` and `ConvTranspose` (1-d and 2-d), `MaxPool`, `AveragePool`, `LpPool`, global pools, `BatchNormalization`, `InstanceNormalization`, `LRN`, `Gemm`, `MatMul`, `Softmax`/`LogSoftmax`, `Dropout` |
//! | `resize.rs` | `Resize`, `Upsample` |
//! | `shape.rs` | `Reshape`, `Flatten`, `Transpose`, `Concat`, `Split`, `Squeeze`, `Unsqueeze`, `Slice`, `Pad`, `Gather`, `Tile`, `Expand`, `Constant`, `ConstantOfShape`, `EyeLike`, `Shape`, `Size`, `Identity` |
//! | `volume.rs` | 3-d `Conv`, `ConvTranspose`, `MaxPool` and `AveragePool` as 2-d ops over the depth taps |
//! | `attention.rs` | `Attention` (opset 23): heads, past keys and values, masks, causal and sliding windows, grouped-query heads, softcap; `relax.nn.attention` where the node is exactly that op, else the composite |
//! | `llm.rs` | `RotaryEmbedding`, `CausalConvWithState`, `LinearAttention` (unrolled over a known sequence length) |
//! | `grid.rs` | `GridSample`, `AffineGrid` |
//! | `index.rs` | `GatherElements`, `GatherND`, `ScatterElements`, `Scatter`, `ScatterND`, `CumSum`, `CumProd`, `Trilu`, `OneHot` |
//! | `math.rs` | `Hardmax`, `LpNormalization`, `MeanVarianceNormalization`, `Swish` |
//! | `loss.rs` | `NegativeLogLikelihoodLoss`, `SoftmaxCrossEntropyLoss` |
//! | `normalization.rs` | `LayerNormalization`, `RMSNormalization`, `GroupNormalization` |
//! | `ml.rs` | the `ai.onnx.ml` domain (a table of its own): `Binarizer`, `ArrayFeatureExtractor` |
//! | `quantize.rs` | `QuantizeLinear`, `DequantizeLinear` (per tensor, per axis, blocked), `DynamicQuantizeLinear`, `MatMulInteger`, `QLinearMatMul`, `ConvInteger`, `QLinearConv` |
//! | `pool_indices.rs` | `MaxUnpool`, `MaxPool`'s `Indices` output |
//! | `reduce.rs` | `Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,SumSquare}`, `ArgMax`, `ArgMin` |
//! | `runtime_axes.rs` | the `Reduce*` ops over an axes input computed at run time |
//! | `tensor_scatter.rs` | `TensorScatter` (linear and circular cache writes) |
//! | `control_flow.rs` | `If` (a Relax `If` over the converted branches) |
//! | `reverse_sequence.rs` | `ReverseSequence` (one `gather_elements` along the time axis) |
//! | `loops.rs` | `Loop` and `Scan` as recursive private Relax functions over the loop state |
//! | `rnn.rs` | `RNN`, `GRU`, `LSTM`: unrolled over a sequence length known at import time, a `Scan`-style loop over a symbolic one |
//! | `sequence.rs` | sequences as tuples of a length known at import time (`SequenceConstruct`, `SequenceAt`, `SequenceInsert`, `SequenceErase`, `SequenceLength`, `SequenceEmpty`, `SplitToSequence`, `ConcatFromSequence`, `SequenceMap`) and optionals (`Optional`, `OptionalHasElement`, `OptionalGetElement`) |
//! | `text.rs` | `TfIdfVectorizer` (integer pools) |
//! | `search.rs` | `TopK`, `NonZero`, `Compress`, `Unique`, `NonMaxSuppression` |
//! | `runtime_slice.rs` | `Slice` and `Pad` by axes, steps, pads or a value computed at run time |
//! | `shape_value.rs` | shape arithmetic on symbolic shape values (`Shape` of a dynamic axis, then `Gather`, `Concat`, …), before any converter sees the node |

mod attention;
mod bitcast;
mod blocks;
mod control_flow;
mod crop;
mod deform;
mod det;
mod einsum;
mod elementwise;
mod grid;
mod index;
mod llm;
mod loops;
mod loss;
mod math;
pub mod ml;
mod nn;
mod normalization;
mod pool_indices;
mod quantize;
mod reduce;
mod resize;
mod reverse_sequence;
mod rnn;
mod runtime_axes;
mod runtime_slice;
mod search;
mod sequence;
mod shape;
pub mod shape_value;
mod tensor_scatter;
mod text;
mod volume;

use shape_value::ShapeValue;

use crate::graph::{is_constant, scalar};
use crate::node::Node;
use relax_core::ir::{AttrValue, Attrs, Expr, ExprKind, PrimExpr};
use relax_core::BlockBuilder;
use relax_runtime::{DataType, Error, Tensor};
use std::collections::HashMap;

/// A converter: the node in `ctx` to its outputs.
pub type Converter = fn(&mut Ctx) -> Result<Vec<Expr>, Error>;

/// Every converter, by ONNX op type.
pub const CONVERTERS: &[(&str, Converter)] = &[
    ("Add", elementwise::add),
    ("Sub", elementwise::sub),
    ("Mul", elementwise::mul),
    ("Div", elementwise::div),
    ("Pow", elementwise::pow),
    ("Equal", elementwise::equal),
    ("Greater", elementwise::greater),
    ("GreaterOrEqual", elementwise::greater_or_equal),
    ("Less", elementwise::less),
    ("LessOrEqual", elementwise::less_or_equal),
    ("Sum", elementwise::sum),
    ("Max", elementwise::max),
    ("Min", elementwise::min),
    ("Mean", elementwise::mean),
    ("Relu", elementwise::relu),
    ("Sigmoid", elementwise::sigmoid),
    ("Tanh", elementwise::tanh),
    ("Exp", elementwise::exp),
    ("Log", elementwise::log),
    ("Sqrt", elementwise::sqrt),
    ("Abs", elementwise::abs),
    ("Neg", elementwise::neg),
    ("Reciprocal", elementwise::reciprocal),
    ("LeakyRelu", elementwise::leaky_relu),
    ("PRelu", elementwise::prelu),
    ("Elu", elementwise::elu),
    ("Selu", elementwise::selu),
    ("Softplus", elementwise::softplus),
    ("Softsign", elementwise::softsign),
    ("HardSigmoid", elementwise::hard_sigmoid),
    ("Clip", elementwise::clip),
    ("Cast", elementwise::cast),
    ("BitCast", bitcast::bitcast),
    ("Where", elementwise::where_),
    ("Erf", elementwise::erf),
    ("Sin", elementwise::sin),
    ("Cos", elementwise::cos),
    ("Tan", elementwise::tan),
    ("Asin", elementwise::asin),
    ("Acos", elementwise::acos),
    ("Atan", elementwise::atan),
    ("Sinh", elementwise::sinh),
    ("Cosh", elementwise::cosh),
    ("Asinh", elementwise::asinh),
    ("Acosh", elementwise::acosh),
    ("Atanh", elementwise::atanh),
    ("Floor", elementwise::floor),
    ("Ceil", elementwise::ceil),
    ("Round", elementwise::round),
    ("Sign", elementwise::sign),
    ("IsNaN", elementwise::is_nan),
    ("IsInf", elementwise::is_inf),
    ("Not", elementwise::not),
    ("And", elementwise::and),
    ("Or", elementwise::or),
    ("Xor", elementwise::xor),
    ("BitwiseNot", elementwise::bitwise_not),
    ("BitwiseAnd", elementwise::bitwise_and),
    ("BitwiseOr", elementwise::bitwise_or),
    ("BitwiseXor", elementwise::bitwise_xor),
    ("BitShift", elementwise::bit_shift),
    ("Mod", elementwise::mod_),
    ("HardSwish", elementwise::hard_swish),
    ("Gelu", elementwise::gelu),
    ("Mish", elementwise::mish),
    ("ThresholdedRelu", elementwise::thresholded_relu),
    ("Celu", elementwise::celu),
    ("Shrink", elementwise::shrink),
    ("CastLike", elementwise::cast_like),
    ("Conv", nn::conv),
    ("ConvTranspose", nn::conv_transpose),
    ("MaxPool", nn::max_pool),
    ("AveragePool", nn::average_pool),
    ("GlobalAveragePool", nn::global_average_pool),
    ("GlobalMaxPool", nn::global_max_pool),
    ("BatchNormalization", nn::batch_norm),
    ("InstanceNormalization", nn::instance_norm),
    ("LayerNormalization", normalization::layer_norm),
    ("Attention", attention::attention),
    ("RotaryEmbedding", llm::rotary_embedding),
    ("CausalConvWithState", llm::causal_conv_with_state),
    ("LinearAttention", llm::linear_attention),
    (
        "NegativeLogLikelihoodLoss",
        loss::negative_log_likelihood_loss,
    ),
    ("SoftmaxCrossEntropyLoss", loss::softmax_cross_entropy_loss),
    ("RMSNormalization", normalization::rms_norm),
    ("GroupNormalization", normalization::group_norm),
    ("LRN", nn::lrn),
    ("Gemm", nn::gemm),
    ("MatMul", nn::matmul),
    ("Resize", resize::resize),
    ("GridSample", grid::grid_sample),
    ("AffineGrid", grid::affine_grid),
    ("DepthToSpace", blocks::depth_to_space),
    ("SpaceToDepth", blocks::space_to_depth),
    ("LpPool", nn::lp_pool),
    ("CenterCropPad", crop::center_crop_pad),
    ("MaxUnpool", pool_indices::max_unpool),
    ("Col2Im", blocks::col2im),
    ("DeformConv", deform::deform_conv),
    ("Upsample", resize::resize),
    ("Softmax", nn::softmax),
    ("LogSoftmax", nn::log_softmax),
    ("Dropout", nn::dropout),
    ("Reshape", shape::reshape),
    ("Flatten", shape::flatten),
    ("Transpose", shape::transpose),
    ("Concat", shape::concat),
    ("Split", shape::split),
    ("Squeeze", shape::squeeze),
    ("Unsqueeze", shape::unsqueeze),
    ("Slice", shape::slice),
    ("Pad", shape::pad),
    ("Gather", shape::gather),
    ("Tile", shape::tile),
    ("Expand", shape::expand),
    ("Constant", shape::constant),
    ("ConstantOfShape", shape::constant_of_shape),
    ("EyeLike", shape::eye_like),
    ("Shape", shape::shape_of),
    ("Size", shape::size),
    ("Range", shape::range),
    ("GatherElements", index::gather_elements),
    ("GatherND", index::gather_nd),
    ("ScatterElements", index::scatter_elements),
    ("Scatter", index::scatter_elements),
    ("ScatterND", index::scatter_nd),
    ("CumSum", index::cum_sum),
    ("CumProd", index::cum_prod),
    ("Trilu", index::trilu),
    ("OneHot", index::one_hot),
    ("Identity", shape::identity),
    ("ReduceSum", reduce::reduce_sum),
    ("ReduceMean", reduce::reduce_mean),
    ("ReduceMax", reduce::reduce_max),
    ("ReduceMin", reduce::reduce_min),
    ("ReduceProd", reduce::reduce_prod),
    ("ReduceL1", reduce::reduce_l1),
    ("ReduceL2", reduce::reduce_l2),
    ("ReduceLogSum", reduce::reduce_log_sum),
    ("ReduceLogSumExp", reduce::reduce_log_sum_exp),
    ("ReduceSumSquare", reduce::reduce_sum_square),
    ("ArgMax", reduce::arg_max),
    ("ArgMin", reduce::arg_min),
    ("Hardmax", math::hardmax),
    ("LpNormalization", math::lp_normalization),
    (
        "MeanVarianceNormalization",
        math::mean_variance_normalization,
    ),
    ("Swish", math::swish),
    ("Einsum", einsum::einsum),
    ("QuantizeLinear", quantize::quantize_linear),
    ("DequantizeLinear", quantize::dequantize_linear),
    ("DynamicQuantizeLinear", quantize::dynamic_quantize_linear),
    ("MatMulInteger", quantize::mat_mul_integer),
    ("QLinearMatMul", quantize::q_linear_mat_mul),
    ("ConvInteger", quantize::conv_integer),
    ("QLinearConv", quantize::q_linear_conv),
    ("TensorScatter", tensor_scatter::tensor_scatter),
    ("Det", det::det),
    ("If", control_flow::if_),
    ("Loop", loops::loop_),
    ("Scan", loops::scan),
    ("RNN", rnn::rnn),
    ("ReverseSequence", reverse_sequence::reverse_sequence),
    ("GRU", rnn::gru),
    ("LSTM", rnn::lstm),
    ("SequenceConstruct", sequence::sequence_construct),
    ("SequenceEmpty", sequence::sequence_empty),
    ("SequenceAt", sequence::sequence_at),
    ("SequenceInsert", sequence::sequence_insert),
    ("SequenceErase", sequence::sequence_erase),
    ("SequenceLength", sequence::sequence_length),
    ("ConcatFromSequence", sequence::concat_from_sequence),
    ("SplitToSequence", sequence::split_to_sequence),
    ("SequenceMap", sequence::sequence_map),
    ("Optional", sequence::optional),
    ("OptionalHasElement", sequence::optional_has_element),
    ("OptionalGetElement", sequence::optional_get_element),
    ("TopK", search::top_k),
    ("NonZero", search::non_zero),
    ("Compress", search::compress),
    ("Unique", search::unique),
    ("NonMaxSuppression", search::non_max_suppression),
    ("TfIdfVectorizer", text::tf_idf_vectorizer),
];

/// Converts the node in `cx` with `convert`, unless it is shape arithmetic
/// on symbolic shape values, which [`shape_value::evaluate`] does.
pub fn run(cx: &mut Ctx, convert: Converter) -> Result<Vec<Expr>, Error> {
    if let Some(out) = shape_value::evaluate(cx)? {
        return Ok(out);
    }
    convert(cx)
}

/// `e` as a tensor: a shape value (a `ShapeExpr` or an integer
/// `PrimValue`) becomes an `int64` tensor of rank 1 or 0.
pub fn as_tensor(bb: &mut BlockBuilder, e: Expr) -> Result<Expr, Error> {
    let emit = |bb: &mut BlockBuilder, op: &str, args: Vec<Expr>| -> Result<Expr, Error> {
        let info = relax_core::op::lookup(op)
            .ok_or_else(|| crate::error(format!("`{op}` is not a registered op")))?;
        let call = info
            .call(args, &Attrs::new())
            .map_err(|d| crate::error(d.message))?;
        Ok(Expr::var(&bb.emit(call)?))
    };
    match e.kind() {
        ExprKind::ShapeExpr(_) => emit(bb, "relax.shape_to_tensor", vec![e]),
        ExprKind::PrimValue(v) if v.dtype().is_integer() => {
            let t = emit(
                bb,
                "relax.shape_to_tensor",
                vec![Expr::shape(vec![v.clone()])],
            )?;
            emit(bb, "relax.reshape", vec![t, Expr::shape(vec![])])
        }
        _ => Ok(e),
    }
}

/// The converter of an op type.
pub fn lookup(op_type: &str) -> Option<Converter> {
    CONVERTERS
        .iter()
        .find(|(name, _)| *name == op_type)
        .map(|(_, f)| *f)
}

/// One node being converted.
pub struct Ctx<'a> {
    pub bb: &'a mut BlockBuilder,
    /// The expression of every value computed so far, by ONNX name.
    pub values: &'a HashMap<String, Expr>,
    /// The default domain's opset version.
    pub opset: i64,
    pub node: &'a Node<'a>,
}

/// A list-of-integers attribute value.
pub fn ints(values: impl IntoIterator<Item = i64>) -> AttrValue {
    AttrValue::Array(values.into_iter().map(AttrValue::Int).collect())
}

/// `x[.., begin..end]` along `axis` (negative counts from the end), with
/// `begin` and `end` known integers.
pub fn slice_axis(cx: &mut Ctx, x: Expr, axis: i64, begin: i64, end: i64) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([
        ("axes", ints([axis])),
        ("begin", ints([begin])),
        ("end", ints([end])),
    ]);
    cx.call("relax.strided_slice", vec![x], attrs)
}

/// `values` normalized against rank `ndim` (negative counts from the end).
pub fn normalize_axes(cx: &Ctx, values: &[i64], ndim: usize) -> Result<Vec<usize>, Error> {
    values
        .iter()
        .map(|&a| {
            let n = ndim as i64;
            let b = if a < 0 { a + n } else { a };
            if (0..n).contains(&b) {
                Ok(b as usize)
            } else {
                Err(cx.error(format!("axis {a} is out of range for rank {ndim}")))
            }
        })
        .collect()
}

impl Ctx<'_> {
    /// An error about the node.
    pub fn error(&self, message: impl std::fmt::Display) -> Error {
        self.node.error(message)
    }

    /// Input `i` as a tensor, which must be given.
    pub fn input(&mut self, i: usize) -> Result<Expr, Error> {
        self.opt_input(i)?
            .ok_or_else(|| self.error(format!("input {i} is required")))
    }

    /// Input `i` as a tensor, if given: a symbolic shape value becomes a
    /// tensor here ([`as_tensor`]).
    pub fn opt_input(&mut self, i: usize) -> Result<Option<Expr>, Error> {
        match self.raw_input(i)? {
            None => Ok(None),
            Some(e) => as_tensor(self.bb, e).map(Some).map_err(|e| self.error(e)),
        }
    }

    /// Input `i` as the importer holds it (a tensor, or a shape value), if
    /// given.
    pub fn raw_input(&self, i: usize) -> Result<Option<Expr>, Error> {
        let Some(name) = self.node.input_name(i) else {
            return Ok(None);
        };
        self.values
            .get(name)
            .cloned()
            .map(Some)
            .ok_or_else(|| self.error(format!("input `{name}` is not computed before this node")))
    }

    /// Every given input as a tensor, in order.
    pub fn inputs(&mut self) -> Result<Vec<Expr>, Error> {
        let mut out = Vec::new();
        for i in 0..self.node.num_inputs() {
            if let Some(e) = self.opt_input(i)? {
                out.push(e);
            }
        }
        Ok(out)
    }

    /// Whether input `i` is given and not a constant: computed at run time
    /// (or a symbolic shape value).
    pub fn is_computed(&self, i: usize) -> Result<bool, Error> {
        Ok(self
            .raw_input(i)?
            .is_some_and(|e| !matches!(e.kind(), ExprKind::Constant(_))))
    }

    /// `e` converted to `dtype` (`relax.astype`), or `e` itself when it
    /// has that dtype already.
    pub fn astype(&mut self, e: Expr, dtype: DataType) -> Result<Expr, Error> {
        if self.tensor(&e).is_ok_and(|(_, d)| d == dtype) {
            return Ok(e);
        }
        let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
        self.call("relax.astype", vec![e], attrs)
    }

    /// `dims` as a 1-d `int64` tensor: a constant when they are known, else
    /// `R.shape_to_tensor` of the shape value.
    pub fn dims_tensor(&mut self, dims: Vec<PrimExpr>) -> Result<Expr, Error> {
        self.shape_value_tensor(ShapeValue::vector(dims))
    }

    /// One dim as an `int64` scalar tensor (see [`Ctx::dims_tensor`]).
    pub fn dim_tensor(&mut self, dim: PrimExpr) -> Result<Expr, Error> {
        self.shape_value_tensor(ShapeValue::scalar(dim))
    }

    fn shape_value_tensor(&mut self, v: ShapeValue) -> Result<Expr, Error> {
        let e = v.to_expr().map_err(|e| self.error(e))?;
        as_tensor(self.bb, e).map_err(|e| self.error(e))
    }

    /// `arange(0, n)` as an `int64` column `(n, 1)` or row `(1, n)`: the
    /// positions along an axis of length `n`, for masks built by
    /// comparing them.
    pub fn positions(&mut self, n: PrimExpr, column: bool) -> Result<Expr, Error> {
        let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(DataType::i64()))]);
        let zero = Expr::prim_value(PrimExpr::int(0));
        let one = Expr::prim_value(PrimExpr::int(1));
        let r = self.call(
            "relax.arange",
            vec![zero, Expr::prim_value(n.clone()), one],
            attrs,
        )?;
        let dims = if column {
            vec![n, PrimExpr::int(1)]
        } else {
            vec![PrimExpr::int(1), n]
        };
        self.call("relax.reshape", vec![r, shape(dims)], Attrs::new())
    }

    /// The integer tensor `t` with its negative elements counted from the
    /// end of `n` (an integer scalar tensor of `t`'s dtype): `where(t < 0,
    /// t + n, t)`, as ONNX reads negative axes and indices.
    pub fn wrap_negative(&mut self, t: Expr, n: Expr) -> Result<Expr, Error> {
        let (_, dtype) = self.tensor(&t)?;
        let zero = self.scalar(0.0, dtype)?;
        let negative = self.op2("relax.less", t.clone(), zero)?;
        let wrapped = self.op2("relax.add", t.clone(), n)?;
        self.call("relax.where", vec![negative, wrapped, t], Attrs::new())
    }

    /// Input `i` as dims, if given: the elements of a 1-d integer input,
    /// which may be symbolic (a shape value). An input computed from tensor
    /// data becomes a shape through `R.tensor_to_shape` and a `match_cast`
    /// to fresh symbolic variables, one per element (its length must be
    /// known).
    pub fn dims_input(&mut self, i: usize) -> Result<Option<Vec<PrimExpr>>, Error> {
        let Some(e) = self.raw_input(i)? else {
            return Ok(None);
        };
        if let Some(v) = ShapeValue::of(&e) {
            if v.scalar {
                return Err(self.error(format!("input {i} must be 1-d, not a scalar")));
            }
            return Ok(Some(v.elems));
        }
        self.bind_data_dims(e).map(Some)
    }

    /// A 1-d integer tensor computed at run time, as fresh symbolic dims
    /// (`R.tensor_to_shape`, then a `match_cast`).
    pub fn bind_data_dims(&mut self, e: Expr) -> Result<Vec<PrimExpr>, Error> {
        let (dims, dtype) = self.tensor(&e)?;
        let len = match dims.as_slice() {
            [d] => d.as_int(),
            _ => None,
        };
        let Some(len) = len.filter(|_| dtype.is_integer()) else {
            return Err(self.error(format!(
                "a shape computed at run time must be a 1-d integer tensor of known length, found {}",
                e.struct_info().map_or("nothing".into(), |s| s.to_string())
            )));
        };
        let shape = self.call("relax.tensor_to_shape", vec![e], Attrs::new())?;
        let name = self.node.proto.output.first().map_or("d", String::as_str);
        let base = relax_core::printer::dsl::identifier(name);
        let vars: Vec<PrimExpr> = (0..len)
            .map(|k| relax_core::ir::TirVar::new(format!("{base}_{k}")).to_expr())
            .collect();
        let sinfo = relax_core::ir::StructInfo::shape(vars.clone());
        self.bb
            .emit_match_cast(shape, sinfo)
            .map_err(|e| self.error(e))?;
        Ok(vars)
    }

    /// Input `i` as a constant tensor, if given; an input that is not a
    /// constant is an error (it decides a shape or an axis).
    pub fn const_input(&self, i: usize) -> Result<Option<Tensor>, Error> {
        let Some(e) = self.raw_input(i)? else {
            return Ok(None);
        };
        match e.kind() {
            ExprKind::Constant(t) => Ok(Some(t.clone())),
            _ => Err(self.error(format!(
                "input {i} (`{}`) must be a constant here (it decides a shape or an axis), \
                 and it is computed at run time",
                self.node.input_name(i).unwrap_or("")
            ))),
        }
    }

    /// Input `i` as constant integers, if given.
    pub fn ints_input(&self, i: usize) -> Result<Option<Vec<i64>>, Error> {
        let Some(t) = self.const_input(i)? else {
            return Ok(None);
        };
        if !t.dtype().is_integer() {
            return Err(self.error(format!("input {i} must hold integers, not {}", t.dtype())));
        }
        Ok(Some(t.to_f64_vec().into_iter().map(|v| v as i64).collect()))
    }

    /// A call of the op `op` (`relax.add`) on `args`, its attributes
    /// completed with their defaults: evaluated when every argument is a
    /// constant, else emitted (its StructInfo inferred).
    pub fn call(&mut self, op: &str, args: Vec<Expr>, attrs: Attrs) -> Result<Expr, Error> {
        let info = relax_core::op::lookup(op)
            .ok_or_else(|| self.error(format!("`{op}` is not a registered op")))?;
        let call = info.call(args, &attrs).map_err(|d| self.error(d.message))?;
        let foldable = call
            .as_call()
            .is_some_and(|c| c.args.iter().all(|a| is_constant(a) || is_static_shape(a)));
        if foldable {
            if let Some(c) = call
                .as_call()
                .and_then(relax_core::transform::fold_constant::evaluate_op_call)
            {
                return Ok(c);
            }
        }
        let var = self.bb.emit(call).map_err(|e| self.error(e))?;
        Ok(Expr::var(&var))
    }

    /// `op(a)` without attributes.
    pub fn op1(&mut self, op: &str, a: Expr) -> Result<Expr, Error> {
        self.call(op, vec![a], Attrs::new())
    }

    /// `op(a, b)` without attributes.
    pub fn op2(&mut self, op: &str, a: Expr, b: Expr) -> Result<Expr, Error> {
        self.call(op, vec![a, b], Attrs::new())
    }

    /// Field `i` of a tuple value.
    pub fn item(&mut self, tuple: &Expr, i: usize) -> Result<Expr, Error> {
        if let ExprKind::Tuple(fields) = tuple.kind() {
            return fields
                .get(i)
                .cloned()
                .ok_or_else(|| self.error(format!("no field {i}")));
        }
        let var = self
            .bb
            .emit(Expr::tuple_get_item(tuple.clone(), i))
            .map_err(|e| self.error(e))?;
        Ok(Expr::var(&var))
    }

    /// The dims and dtype of a tensor value (its rank must be known).
    pub fn tensor(&self, e: &Expr) -> Result<(Vec<PrimExpr>, DataType), Error> {
        let t = e
            .struct_info()
            .and_then(|s| s.as_tensor())
            .ok_or_else(|| self.error("an input is not a tensor"))?;
        let dims = t.shape_values().ok_or_else(|| {
            self.error("the shape of an input is not known (only its rank or nothing)")
        })?;
        Ok((dims.to_vec(), t.dtype))
    }

    /// The dims of a tensor value, each a known integer.
    pub fn static_dims(&self, e: &Expr) -> Result<Vec<i64>, Error> {
        let (dims, _) = self.tensor(e)?;
        dims.iter()
            .map(|d| {
                d.as_int()
                    .ok_or_else(|| self.error(format!("dim {d} must be a known integer here")))
            })
            .collect()
    }

    /// A scalar constant of `dtype`.
    pub fn scalar(&self, v: f64, dtype: DataType) -> Result<Expr, Error> {
        scalar(v, dtype)
            .ok_or_else(|| self.error(format!("a constant of dtype {dtype} is not supported")))
    }
}

/// The product of `dims`, simplified.
pub fn product(dims: &[PrimExpr]) -> PrimExpr {
    relax_core::arith::Analyzer::new().simplify(&relax_core::op::infer::product(dims))
}

/// Whether `e` is a shape of known integer dims.
fn is_static_shape(e: &Expr) -> bool {
    matches!(e.kind(), ExprKind::ShapeExpr(dims) if dims.iter().all(|d| d.as_int().is_some()))
        || matches!(e.kind(), ExprKind::PrimValue(_) | ExprKind::DataTypeImm(_))
}

/// The shape `dims` as an argument.
pub fn shape(dims: Vec<PrimExpr>) -> Expr {
    Expr::shape(dims)
}
