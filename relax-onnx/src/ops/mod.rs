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
//! | `elementwise.rs` | arithmetic (with pre-opset-7 broadcasting), `Mod`, comparisons, logical (`And`, `Or`, `Xor`, `Not`) and bitwise ops (`Bitwise*`, `BitShift`), unary math (`Erf`, trigonometric and hyperbolic functions, `Floor`, `Ceil`, `Round`, `Sign`, `IsNaN`, `IsInf`, …), activations (`HardSwish`, `Gelu`, `Mish`, `Celu`, `Shrink`, `ThresholdedRelu`, …), `Clip`, `Cast`, `CastLike`, `Where`, variadic `Sum`/`Max`/`Min`/`Mean` |
//! | `nn.rs` | `Conv` and `ConvTranspose` (1-d and 2-d), `MaxPool`, `AveragePool`, global pools, `BatchNormalization`, `InstanceNormalization`, `LRN`, `Gemm`, `MatMul`, `Resize`, `Upsample`, `Softmax`/`LogSoftmax`, `Dropout` |
//! | `shape.rs` | `Reshape`, `Flatten`, `Transpose`, `Concat`, `Split`, `Squeeze`, `Unsqueeze`, `Slice`, `Pad`, `Gather`, `Tile`, `Expand`, `Constant`, `ConstantOfShape`, `Shape`, `Size`, `Identity` |
//! | `volume.rs` | 3-d `Conv`, `MaxPool` and `AveragePool` as 2-d ops over the depth taps |
//! | `reduce.rs` | `Reduce{Sum,Mean,Max,Min,Prod}`, `ArgMax`, `ArgMin` |

mod elementwise;
mod nn;
mod reduce;
mod shape;
mod volume;

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
    ("LRN", nn::lrn),
    ("Gemm", nn::gemm),
    ("MatMul", nn::matmul),
    ("Resize", nn::resize),
    ("Upsample", nn::resize),
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
    ("Shape", shape::shape_of),
    ("Size", shape::size),
    ("Identity", shape::identity),
    ("ReduceSum", reduce::reduce_sum),
    ("ReduceMean", reduce::reduce_mean),
    ("ReduceMax", reduce::reduce_max),
    ("ReduceMin", reduce::reduce_min),
    ("ReduceProd", reduce::reduce_prod),
    ("ArgMax", reduce::arg_max),
    ("ArgMin", reduce::arg_min),
];

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

    /// Input `i`, which must be given.
    pub fn input(&self, i: usize) -> Result<Expr, Error> {
        self.opt_input(i)?
            .ok_or_else(|| self.error(format!("input {i} is required")))
    }

    /// Input `i`, if given.
    pub fn opt_input(&self, i: usize) -> Result<Option<Expr>, Error> {
        let Some(name) = self.node.input_name(i) else {
            return Ok(None);
        };
        self.values
            .get(name)
            .cloned()
            .map(Some)
            .ok_or_else(|| self.error(format!("input `{name}` is not computed before this node")))
    }

    /// Every given input, in order.
    pub fn inputs(&self) -> Result<Vec<Expr>, Error> {
        (0..self.node.num_inputs())
            .filter_map(|i| self.opt_input(i).transpose())
            .collect()
    }

    /// Input `i` as a constant tensor, if given; an input that is not a
    /// constant is an error (it decides a shape or an axis).
    pub fn const_input(&self, i: usize) -> Result<Option<Tensor>, Error> {
        let Some(e) = self.opt_input(i)? else {
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
