//! Rules about StructInfo annotations, shape expressions and prim values:
//! well-formed StructInfo (rules 30–37) and symbolic variables used only in
//! scope (rules 14, 15).

use super::Checker;
use crate::ir::{DataType, Expr, ExprKind, PrimExpr, PrimExprKind, StructInfo, StructInfoKind};
use crate::ir::{TypeCode, UNKNOWN_NDIM};

/// Where an annotation stands, for messages and for rule 15.
pub(super) struct Place {
    /// What messages call it, e.g. ``the annotation of `x` ``.
    pub what: String,
    /// Whether it is a parameter annotation, where an undefined symbolic
    /// variable breaks rule 15 rather than rule 14.
    pub in_signature: bool,
}

impl Place {
    /// An annotation outside a signature.
    pub fn new(what: impl Into<String>) -> Self {
        Place {
            what: what.into(),
            in_signature: false,
        }
    }
    /// A parameter annotation.
    pub fn signature(what: impl Into<String>) -> Self {
        Place {
            what: what.into(),
            in_signature: true,
        }
    }
}

impl Checker<'_> {
    /// Checks that `sinfo` is well formed and mentions only variables in scope.
    pub(super) fn check_struct_info(&mut self, sinfo: &StructInfo, place: &Place) {
        let subject = sinfo.to_string();
        let subject = subject.as_str();
        match sinfo.kind() {
            StructInfoKind::Object => {}
            StructInfoKind::Prim(p) => {
                self.check_prim_dtype(p.dtype, subject, place);
                if let Some(value) = &p.value {
                    if value.dtype() != p.dtype {
                        let message = format!(
                            "{}, {} has prim dtype `{}` but its value `{value}` is `{}`",
                            self.where_(),
                            place.what,
                            p.dtype,
                            value.dtype()
                        );
                        self.report_once(subject, "prim-value-dtype-mismatch", message);
                    }
                    self.use_prim_expr(value, place);
                }
            }
            StructInfoKind::Shape(s) => {
                self.check_ndim(s.ndim, subject, place);
                if let Some(values) = &s.values {
                    self.check_ndim_matches(s.ndim, values.len(), subject, place);
                    self.check_dims(values, place);
                }
            }
            StructInfoKind::Tensor(t) => {
                self.check_ndim(t.ndim, subject, place);
                self.check_dtype(t.dtype, subject, place);
                if let Some(shape) = &t.shape {
                    self.check_tensor_shape(shape, t.ndim, subject, place);
                }
            }
            StructInfoKind::Tuple(fields) => {
                for field in fields {
                    self.check_struct_info(field, place);
                }
            }
            StructInfoKind::Func(f) => {
                if f.params.is_some() == f.derive_func.is_some() {
                    let has = if f.params.is_some() {
                        "both parameters and a derive function"
                    } else {
                        "neither parameters nor a derive function"
                    };
                    let message = format!(
                        "{}, {} has a function StructInfo with {has}",
                        self.where_(),
                        place.what
                    );
                    self.report_once(subject, "invalid-func-struct-info", message);
                }
                // The parameters of a function StructInfo bind their own
                // symbolic variables, visible in its parameters and result.
                self.func_sinfo_depth += 1;
                self.push_tir_frame();
                for param in f.params.iter().flatten() {
                    for v in param.definable_tir_vars() {
                        if !self.tir_vars.contains(&v) {
                            self.define_tir_var(&v);
                        }
                    }
                }
                for param in f.params.iter().flatten() {
                    self.check_struct_info(param, place);
                }
                self.check_struct_info(&f.ret, place);
                self.pop_tir_frame();
                self.func_sinfo_depth -= 1;
            }
        }
    }

    fn check_tensor_shape(&mut self, shape: &Expr, ndim: i32, subject: &str, place: &Place) {
        match shape.kind() {
            ExprKind::ShapeExpr(values) => {
                self.check_ndim_matches(ndim, values.len(), subject, place);
                self.check_dims(values, place);
            }
            ExprKind::Var(v) => {
                self.use_var(v);
                let var_ndim = match v.struct_info().map(StructInfo::kind) {
                    Some(StructInfoKind::Shape(s)) => s.ndim,
                    // Unannotated (reported where it is defined) or `Object`:
                    // nothing is known, so nothing contradicts.
                    None | Some(StructInfoKind::Object) => UNKNOWN_NDIM,
                    Some(_) => {
                        let message = format!(
                            "{}, {} has a tensor shape `{}` that is not a shape var",
                            self.where_(),
                            place.what,
                            v.name_hint()
                        );
                        self.report_once(subject, "invalid-tensor-shape", message);
                        UNKNOWN_NDIM
                    }
                };
                if var_ndim != UNKNOWN_NDIM && ndim != var_ndim {
                    let message = format!(
                        "{}, {} has ndim {ndim} but its shape `{}` has ndim {var_ndim}",
                        self.where_(),
                        place.what,
                        v.name_hint()
                    );
                    self.report_once(subject, "ndim-mismatch", message);
                }
            }
            _ => {
                let message = format!(
                    "{}, {} has a tensor shape that is neither a shape expression nor a shape var",
                    self.where_(),
                    place.what
                );
                self.report_once(subject, "invalid-tensor-shape", message);
            }
        }
    }

    fn check_ndim(&mut self, ndim: i32, subject: &str, place: &Place) {
        if ndim < UNKNOWN_NDIM {
            let message = format!("{}, {} has ndim {ndim}", self.where_(), place.what);
            self.report_once(subject, "invalid-ndim", message);
        }
    }

    fn check_ndim_matches(&mut self, ndim: i32, len: usize, subject: &str, place: &Place) {
        if i64::from(ndim) != len as i64 {
            let message = format!(
                "{}, {} has ndim {ndim} but {len} dimensions",
                self.where_(),
                place.what
            );
            self.report_once(subject, "ndim-mismatch", message);
        }
    }

    fn check_dtype(&mut self, dtype: DataType, subject: &str, place: &Place) {
        if !dtype.is_valid_scalar() {
            let message = format!(
                "{}, {} uses dtype `{dtype}`, which Relax does not allow",
                self.where_(),
                place.what
            );
            self.report_once(subject, "invalid-dtype", message);
        }
    }

    fn check_prim_dtype(&mut self, dtype: DataType, subject: &str, place: &Place) {
        match dtype.code() {
            TypeCode::Int | TypeCode::UInt | TypeCode::Float | TypeCode::BFloat => {
                self.check_dtype(dtype, subject, place)
            }
            TypeCode::Handle => {
                let message = format!(
                    "{}, {} has prim dtype `{dtype}`, not an int, uint or float",
                    self.where_(),
                    place.what
                );
                self.report_once(subject, "invalid-prim-dtype", message);
            }
        }
    }

    /// Shape dimensions: signed integers whose variables are in scope.
    pub(super) fn check_dims(&mut self, values: &[PrimExpr], place: &Place) {
        for d in values {
            if !d.dtype().is_int() {
                let message = format!(
                    "{}, {} has dimension `{d}` of dtype `{}`, not a signed integer",
                    self.where_(),
                    place.what,
                    d.dtype()
                );
                self.report_once(&d.to_string(), "non-integer-shape-dim", message);
            }
            self.use_prim_expr(d, place);
        }
    }

    /// A `PrimValue`: a literal, or a symbolic integer in scope (rule 38).
    pub(super) fn check_prim_value(&mut self, value: &PrimExpr, place: &Place) {
        let dtype = value.dtype();
        let ok = dtype.is_valid_scalar()
            && match value.kind() {
                PrimExprKind::IntImm(_) => dtype.is_integer(),
                PrimExprKind::FloatImm(_) => dtype.is_float(),
                _ => dtype.is_integer(),
            };
        if !ok {
            let message = format!(
                "{}, {} of dtype `{dtype}` is neither an int or float literal nor an integer expression",
                self.where_(),
                place.what
            );
            self.report_once(&value.to_string(), "invalid-prim-value", message);
        }
        self.use_prim_expr(value, place);
    }

    /// Every symbolic variable of `e` must be in scope (rules 14, 15).
    pub(super) fn use_prim_expr(&mut self, e: &PrimExpr, place: &Place) {
        for v in e.free_vars() {
            if !self.tir_vars.contains(&v) {
                let (code, problem) = if place.in_signature {
                    (
                        "unbound-signature-symbolic-var",
                        "does not stand alone as a dimension of any parameter",
                    )
                } else {
                    ("undefined-symbolic-var", "is not defined")
                };
                let message = format!(
                    "{}, symbolic var `{v}` in {} {problem}",
                    self.where_(),
                    place.what
                );
                // One undefined variable is one mistake, under either rule.
                self.report_once_per(&format!("symbolic var #{}", v.id()), code, message);
            }
            self.note_tir_var(&v);
        }
    }
}
