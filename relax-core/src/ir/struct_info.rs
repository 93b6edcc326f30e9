//! `StructInfo`: what is statically known about a Relax value.
//!
//! The kinds are the spec's: `Object` (the top), `Prim`, `Shape`, `Tensor`,
//! `Tuple` and `Func`.
//!
//! 1. A `StructInfo` is immutable and shared through `Arc`.
//! 2. "Unknown" is encoded as in TVM: `ndim == -1` ([`UNKNOWN_NDIM`]) for an
//!    unknown rank, dtype `void` for an unknown dtype, `None` for an unknown
//!    shape or value list.
//! 3. A tensor's `shape`, when known, is an expression: a `ShapeExpr` of
//!    PrimExprs or a `Var` whose StructInfo is a `Shape`. Invariant: if it is a
//!    `ShapeExpr`, `ndim` equals its length.
//! 4. Symbolic dimensions are [`TirVar`]s; a var appearing *alone* as a
//!    dimension in a parameter annotation or a `match_cast` binds it.
//!
//! The relations between StructInfos (base-of, least common ancestor, erasure)
//! live in [`crate::analysis::struct_info_analysis`].

use super::expr::{Expr, ExprKind};
use super::prim_expr::{PrimExpr, TirVar};
use relax_runtime::DataType;
use std::sync::Arc;

/// `ndim` of a tensor or shape whose rank is unknown.
pub const UNKNOWN_NDIM: i32 = -1;

/// A tensor: optional shape, dtype (`void` if unknown), rank (`-1` if unknown).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorStructInfo {
    /// A `ShapeExpr`, a `Var` of Shape StructInfo, or `None` if unknown.
    pub shape: Option<Expr>,
    /// The element type; `void` when unknown.
    pub dtype: DataType,
    /// The rank; [`UNKNOWN_NDIM`] when unknown.
    pub ndim: i32,
}

impl TensorStructInfo {
    /// The dimensions, when the shape is a `ShapeExpr`.
    pub fn shape_values(&self) -> Option<&[PrimExpr]> {
        match self.shape.as_ref()?.kind() {
            ExprKind::ShapeExpr(values) => Some(values),
            _ => None,
        }
    }
    /// Whether the dtype is unknown.
    pub fn is_unknown_dtype(&self) -> bool {
        self.dtype.is_void()
    }
    /// Whether the rank is unknown.
    pub fn is_unknown_ndim(&self) -> bool {
        self.ndim == UNKNOWN_NDIM
    }
}

/// A shape value: optional dimension list and rank.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeStructInfo {
    /// The dimensions, if known. Invariant: `ndim == values.len()` then.
    pub values: Option<Vec<PrimExpr>>,
    /// The rank; [`UNKNOWN_NDIM`] when unknown.
    pub ndim: i32,
}

/// A scalar value (a `PrimValue`), optionally with a known symbolic value.
#[derive(Clone, Debug, PartialEq)]
pub struct PrimStructInfo {
    /// The scalar type.
    pub dtype: DataType,
    /// The value, if known (`R.Prim(value=n)`).
    pub value: Option<PrimExpr>,
}

/// How the result of calling an opaque function is derived (the spec's `derive_func`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DeriveFunc {
    /// `default_derive`: Object if the call has no `sinfo_args`, the single one
    /// if it has one, a tuple of them otherwise.
    Default,
    /// `empty_derive`: always Object.
    Empty,
}

/// A function: parameters and result, or an opaque function with a derive rule.
#[derive(Clone, Debug, PartialEq)]
pub struct FuncStructInfo {
    /// The parameters; `None` for an opaque function (then `derive_func` is set).
    pub params: Option<Vec<StructInfo>>,
    /// The result.
    pub ret: StructInfo,
    /// Whether calling it has no side effects.
    pub purity: bool,
    /// For opaque functions: how a call's result StructInfo is derived.
    pub derive_func: Option<DeriveFunc>,
}

/// The kinds of [`StructInfo`].
#[derive(Clone, Debug, PartialEq)]
pub enum StructInfoKind {
    /// Any value: the top of the lattice.
    Object,
    /// A scalar.
    Prim(PrimStructInfo),
    /// A shape.
    Shape(ShapeStructInfo),
    /// A tensor.
    Tensor(TensorStructInfo),
    /// A tuple of values.
    Tuple(Vec<StructInfo>),
    /// A function or closure.
    Func(FuncStructInfo),
}

/// Static structure of a value. See the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct StructInfo(Arc<StructInfoKind>);

impl StructInfo {
    /// Wraps a kind.
    pub fn new(kind: StructInfoKind) -> Self {
        StructInfo(Arc::new(kind))
    }
    /// The kind.
    pub fn kind(&self) -> &StructInfoKind {
        &self.0
    }

    /// `R.Object`
    pub fn object() -> Self {
        Self::new(StructInfoKind::Object)
    }
    /// `R.Prim(dtype)`
    pub fn prim(dtype: DataType) -> Self {
        Self::new(StructInfoKind::Prim(PrimStructInfo { dtype, value: None }))
    }
    /// `R.Prim(value=v)`: the dtype is the value's.
    pub fn prim_value(value: PrimExpr) -> Self {
        Self::new(StructInfoKind::Prim(PrimStructInfo {
            dtype: value.dtype(),
            value: Some(value),
        }))
    }
    /// `R.Shape([d0, d1, …])`
    pub fn shape(values: Vec<PrimExpr>) -> Self {
        let ndim = values.len() as i32;
        Self::new(StructInfoKind::Shape(ShapeStructInfo {
            values: Some(values),
            ndim,
        }))
    }
    /// `R.Shape(ndim=n)`; `-1` for unknown rank.
    pub fn shape_ndim(ndim: i32) -> Self {
        Self::new(StructInfoKind::Shape(ShapeStructInfo {
            values: None,
            ndim,
        }))
    }
    /// `R.Tensor((d0, d1, …), dtype)`
    pub fn tensor(shape: Vec<PrimExpr>, dtype: DataType) -> Self {
        let ndim = shape.len() as i32;
        Self::new(StructInfoKind::Tensor(TensorStructInfo {
            shape: Some(Expr::shape(shape)),
            dtype,
            ndim,
        }))
    }
    /// `R.Tensor(shape_var, dtype)`: the shape is a Relax expression, a
    /// `ShapeExpr` or a `Var` of Shape StructInfo.
    pub fn tensor_with_shape_expr(shape: Expr, dtype: DataType) -> Self {
        let ndim = shape_expr_ndim(&shape);
        Self::new(StructInfoKind::Tensor(TensorStructInfo {
            shape: Some(shape),
            dtype,
            ndim,
        }))
    }
    /// `R.Tensor(ndim=n, dtype=…)`; `-1` for unknown rank.
    pub fn tensor_ndim(ndim: i32, dtype: DataType) -> Self {
        Self::new(StructInfoKind::Tensor(TensorStructInfo {
            shape: None,
            dtype,
            ndim,
        }))
    }
    /// `R.Tuple(fields…)`
    pub fn tuple(fields: Vec<StructInfo>) -> Self {
        Self::new(StructInfoKind::Tuple(fields))
    }
    /// `R.Callable(params, ret, purity)`
    pub fn func(params: Vec<StructInfo>, ret: StructInfo, purity: bool) -> Self {
        Self::new(StructInfoKind::Func(FuncStructInfo {
            params: Some(params),
            ret,
            purity,
            derive_func: None,
        }))
    }
    /// An opaque function (a packed function) whose calls derive their result
    /// with `derive`; impure.
    pub fn opaque_func(derive: DeriveFunc, ret: StructInfo) -> Self {
        Self::new(StructInfoKind::Func(FuncStructInfo {
            params: None,
            ret,
            purity: false,
            derive_func: Some(derive),
        }))
    }

    /// The tensor parts, if this is a tensor.
    pub fn as_tensor(&self) -> Option<&TensorStructInfo> {
        match self.kind() {
            StructInfoKind::Tensor(t) => Some(t),
            _ => None,
        }
    }
    /// The shape parts, if this is a shape.
    pub fn as_shape(&self) -> Option<&ShapeStructInfo> {
        match self.kind() {
            StructInfoKind::Shape(s) => Some(s),
            _ => None,
        }
    }
    /// The prim parts, if this is a prim.
    pub fn as_prim(&self) -> Option<&PrimStructInfo> {
        match self.kind() {
            StructInfoKind::Prim(p) => Some(p),
            _ => None,
        }
    }
    /// The fields, if this is a tuple.
    pub fn as_tuple(&self) -> Option<&[StructInfo]> {
        match self.kind() {
            StructInfoKind::Tuple(f) => Some(f),
            _ => None,
        }
    }
    /// The function parts, if this is a function.
    pub fn as_func(&self) -> Option<&FuncStructInfo> {
        match self.kind() {
            StructInfoKind::Func(f) => Some(f),
            _ => None,
        }
    }
    /// Whether this is `Object`.
    pub fn is_object(&self) -> bool {
        matches!(self.kind(), StructInfoKind::Object)
    }

    /// Every symbolic variable mentioned, in order of first appearance.
    pub fn tir_vars(&self) -> Vec<TirVar> {
        let mut out = Vec::new();
        self.visit_prim_exprs(&mut |e| e.collect_vars(&mut out), false);
        out
    }

    /// The symbolic variables this StructInfo can *define*: those standing
    /// alone as a dimension or a prim value (spec: "binding position").
    /// `2 * n` defines nothing; `(n, n * 2)` defines `n`. Function StructInfo
    /// defines nothing (its parameters bind their own vars).
    pub fn definable_tir_vars(&self) -> Vec<TirVar> {
        let mut out: Vec<TirVar> = Vec::new();
        self.visit_prim_exprs(
            &mut |e| {
                if let Some(v) = e.as_var() {
                    if !out.contains(v) {
                        out.push(v.clone())
                    }
                }
            },
            true,
        );
        out
    }

    /// Calls `f` on every top-level PrimExpr (dimensions and prim values),
    /// left to right. With `skip_funcs`, function StructInfo is not entered.
    pub fn visit_prim_exprs(&self, f: &mut dyn FnMut(&PrimExpr), skip_funcs: bool) {
        match self.kind() {
            StructInfoKind::Object => {}
            StructInfoKind::Prim(p) => {
                if let Some(v) = &p.value {
                    f(v)
                }
            }
            StructInfoKind::Shape(s) => s.values.iter().flatten().for_each(&mut *f),
            StructInfoKind::Tensor(t) => {
                if let Some(values) = t.shape_values() {
                    values.iter().for_each(&mut *f)
                }
            }
            StructInfoKind::Tuple(fields) => fields
                .iter()
                .for_each(|s| s.visit_prim_exprs(f, skip_funcs)),
            StructInfoKind::Func(func) => {
                if !skip_funcs {
                    func.params
                        .iter()
                        .flatten()
                        .for_each(|s| s.visit_prim_exprs(f, skip_funcs));
                    func.ret.visit_prim_exprs(f, skip_funcs);
                }
            }
        }
    }

    /// This StructInfo with every PrimExpr replaced by `f(expr)` (including
    /// inside function StructInfo).
    pub fn map_prim_exprs(&self, f: &dyn Fn(&PrimExpr) -> PrimExpr) -> StructInfo {
        match self.kind() {
            StructInfoKind::Object => self.clone(),
            StructInfoKind::Prim(p) => Self::new(StructInfoKind::Prim(PrimStructInfo {
                dtype: p.dtype,
                value: p.value.as_ref().map(f),
            })),
            StructInfoKind::Shape(s) => Self::new(StructInfoKind::Shape(ShapeStructInfo {
                values: s.values.as_ref().map(|vs| vs.iter().map(f).collect()),
                ndim: s.ndim,
            })),
            StructInfoKind::Tensor(t) => match t.shape_values() {
                Some(values) => Self::tensor(values.iter().map(f).collect(), t.dtype),
                None => self.clone(),
            },
            StructInfoKind::Tuple(fields) => {
                Self::tuple(fields.iter().map(|s| s.map_prim_exprs(f)).collect())
            }
            StructInfoKind::Func(func) => Self::new(StructInfoKind::Func(FuncStructInfo {
                params: func
                    .params
                    .as_ref()
                    .map(|ps| ps.iter().map(|p| p.map_prim_exprs(f)).collect()),
                ret: func.ret.map_prim_exprs(f),
                purity: func.purity,
                derive_func: func.derive_func.clone(),
            })),
        }
    }
}

/// The rank of a tensor's shape expression: its length for a `ShapeExpr`, the
/// `ndim` of a Shape-typed var, else unknown.
pub fn shape_expr_ndim(shape: &Expr) -> i32 {
    match shape.kind() {
        ExprKind::ShapeExpr(values) => values.len() as i32,
        _ => match shape
            .struct_info()
            .and_then(|s| s.as_shape().map(|s| s.ndim))
        {
            Some(n) => n,
            None => UNKNOWN_NDIM,
        },
    }
}

/// Dims as a TVMScript/DSL tuple: `(n, 784)`, `(5,)`, `()`.
pub fn fmt_dims(values: &[PrimExpr]) -> String {
    match values {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            values
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl std::fmt::Display for StructInfo {
    /// TVMScript: `R.Tensor((n, 784), dtype="float32")`, `R.Shape([n, m])`,
    /// `R.Prim("int64")`, `R.Tuple(…)`, `R.Callable((…), ret, purity)`, `R.Object`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind() {
            StructInfoKind::Object => f.write_str("R.Object"),
            StructInfoKind::Prim(p) => match &p.value {
                Some(v) => write!(f, "R.Prim(value={v})"),
                None => write!(f, "R.Prim(\"{}\")", p.dtype),
            },
            StructInfoKind::Shape(s) => match &s.values {
                Some(vs) => write!(
                    f,
                    "R.Shape([{}])",
                    vs.iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None if s.ndim == UNKNOWN_NDIM => f.write_str("R.Shape"),
                None => write!(f, "R.Shape(ndim={})", s.ndim),
            },
            StructInfoKind::Tensor(t) => {
                let mut args = Vec::new();
                match (&t.shape, t.shape_values()) {
                    (_, Some(vs)) => args.push(fmt_dims(vs)),
                    (Some(e), None) => args.push(match e.kind() {
                        ExprKind::Var(v) => v.name_hint().to_string(),
                        _ => "<shape>".to_string(),
                    }),
                    (None, None) => {}
                }
                if !t.dtype.is_void() {
                    args.push(format!("dtype=\"{}\"", t.dtype));
                }
                if t.shape.is_none() && t.ndim != UNKNOWN_NDIM {
                    args.push(format!("ndim={}", t.ndim));
                }
                if args.is_empty() {
                    f.write_str("R.Tensor")
                } else {
                    write!(f, "R.Tensor({})", args.join(", "))
                }
            }
            StructInfoKind::Tuple(fields) if fields.is_empty() => f.write_str("R.Tuple"),
            StructInfoKind::Tuple(fields) => write!(
                f,
                "R.Tuple({})",
                fields
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            StructInfoKind::Func(func) => match &func.params {
                Some(ps) => {
                    let params = match ps.as_slice() {
                        [p] => format!("({p},)"),
                        _ => format!(
                            "({})",
                            ps.iter()
                                .map(|s| s.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    };
                    let purity = if func.purity { "True" } else { "False" };
                    write!(f, "R.Callable({params}, {}, {purity})", func.ret)
                }
                None => {
                    let derive = match func.derive_func {
                        Some(DeriveFunc::Empty) => "empty_derive",
                        _ => "default_derive",
                    };
                    write!(f, "R.Callable(derive_func=\"{derive}\", ret={})", func.ret)
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_as_tvmscript() {
        let n = TirVar::new("n");
        let t = StructInfo::tensor(vec![PrimExpr::var(&n), PrimExpr::int(784)], DataType::f32());
        assert_eq!(t.to_string(), "R.Tensor((n, 784), dtype=\"float32\")");
        assert_eq!(
            StructInfo::tensor(vec![PrimExpr::int(5)], DataType::void()).to_string(),
            "R.Tensor((5,))"
        );
        assert_eq!(
            StructInfo::tensor_ndim(2, DataType::f32()).to_string(),
            "R.Tensor(dtype=\"float32\", ndim=2)"
        );
        assert_eq!(
            StructInfo::tensor_ndim(UNKNOWN_NDIM, DataType::void()).to_string(),
            "R.Tensor"
        );
        assert_eq!(
            StructInfo::shape(vec![PrimExpr::var(&n) * 2]).to_string(),
            "R.Shape([n * 2])"
        );
        assert_eq!(
            StructInfo::prim(DataType::i64()).to_string(),
            "R.Prim(\"int64\")"
        );
        assert_eq!(
            StructInfo::tuple(vec![t.clone(), StructInfo::object()]).to_string(),
            "R.Tuple(R.Tensor((n, 784), dtype=\"float32\"), R.Object)"
        );
        assert_eq!(StructInfo::func(vec![t.clone()], t, true).to_string(),
            "R.Callable((R.Tensor((n, 784), dtype=\"float32\"),), R.Tensor((n, 784), dtype=\"float32\"), True)");
    }

    #[test]
    fn definable_vars_stand_alone() {
        let n = TirVar::new("n");
        let m = TirVar::new("m");
        let s = StructInfo::tensor(
            vec![PrimExpr::var(&n) * 2, PrimExpr::var(&m), PrimExpr::var(&n)],
            DataType::f32(),
        );
        assert_eq!(s.definable_tir_vars(), vec![m.clone(), n.clone()]);
        assert_eq!(s.tir_vars(), vec![n, m]);
    }
}
