//! Relations between StructInfos (spec §"Subtyping", §"LUB", erasure and the
//! derivation of a call's result).
//!
//! 1. [`struct_info_base_check`] answers "is every value of `derived` a value
//!    of `base`?" with four levels ([`BaseCheckResult`]): disjoint, statically
//!    different, depends on symbolic values, or yes. Symbolic dimensions are
//!    compared with the [`Analyzer`]: provably equal passes, provably different
//!    is disjoint, anything else depends on run-time values. Results of parts
//!    combine by taking the weakest (the enum is ordered from worst to best).
//! 2. [`struct_info_lca`] is the least upper bound (the spec's
//!    `unify_struct_info`): whatever both sides agree on is kept, the rest is
//!    forgotten, different kinds meet at `Object`.
//! 3. [`erase_to_well_defined`] rewrites the variables of a StructInfo: a
//!    variable is substituted, kept, or, when it is out of scope, the part
//!    that mentions it (a shape, a value list, a prim value) is dropped while
//!    the rank and dtype stay. Inside a function StructInfo the symbolic
//!    variables its parameters define are in scope.
//! 4. [`derive_call_ret_struct_info`] beta-reduces a function StructInfo at a
//!    call: it binds the callee's symbolic variables from the arguments
//!    ([`get_shape_var_mapping`]), checks every argument against the
//!    substituted parameter, and erases from the substituted result what is
//!    not defined at the call site.
//!
//! Function StructInfo comes in three forms: with parameters, opaque with a
//! `derive_func`, and (TVM's `OpaqueFunc(ret)`) opaque without one, whose
//! calls simply return `ret`. An opaque function with `empty_derive` is the
//! top of the function StructInfos: calling it tells nothing.

use crate::arith::{Analyzer, Proof};
use crate::ir::struct_info::shape_expr_ndim;
use crate::ir::{
    Call, DeriveFunc, Expr, ExprKind, FuncStructInfo, PrimExpr, PrimStructInfo, ShapeStructInfo,
    StructInfo, StructInfoKind, TensorStructInfo, TirVar, Var, UNKNOWN_NDIM,
};
use relax_runtime::Diagnostic;
use std::collections::{HashMap, HashSet};

#[cfg(test)]
mod tests;

/// The answer of [`struct_info_base_check`] (TVM's `BaseCheckResult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BaseCheckResult {
    /// Disjoint: no value can have both (different kinds, dtypes, ranks).
    FailL0,
    /// Statically different but possibly related (needs a cast).
    FailL1,
    /// Depends on symbolic values that cannot be decided statically.
    FailL2,
    /// Every value of `derived` is a value of `base`.
    Pass,
}

impl BaseCheckResult {
    /// The result of checking two parts that must both hold: the weaker one.
    pub fn and(self, other: Self) -> Self {
        self.min(other)
    }

    fn from_proof(p: Proof) -> Self {
        match p {
            Proof::Proven => BaseCheckResult::Pass,
            Proof::Disproven => BaseCheckResult::FailL0,
            Proof::Unknown => BaseCheckResult::FailL2,
        }
    }
}

/// Whether `base` is a base of `derived`, tri-state under symbolic shapes.
///
/// `Object` is the base of everything. An `Object` given where a more
/// specific kind is expected is `FailL1` (a cast could make it fit, as in
/// TVM); any other kind mismatch is `FailL0`.
pub fn struct_info_base_check(
    base: &StructInfo,
    derived: &StructInfo,
    analyzer: &Analyzer,
) -> BaseCheckResult {
    BaseChecker { analyzer }.check(base, derived)
}

/// `struct_info_base_check(..) == Pass`.
pub fn is_base_of(base: &StructInfo, derived: &StructInfo, analyzer: &Analyzer) -> bool {
    struct_info_base_check(base, derived, analyzer) == BaseCheckResult::Pass
}

/// The dimensions of a tensor's shape expression: those of a `ShapeExpr`, or
/// the values of a shape variable whose StructInfo knows them.
pub fn shape_dims(shape: &Expr) -> Option<&[PrimExpr]> {
    match shape.kind() {
        ExprKind::ShapeExpr(values) => Some(values),
        ExprKind::Var(v) => v.struct_info()?.as_shape()?.values.as_deref(),
        _ => shape.struct_info()?.as_shape()?.values.as_deref(),
    }
}

/// The three forms of a function StructInfo (see the module docs).
enum FuncForm<'a> {
    Params(&'a [StructInfo]),
    Derive(&'a DeriveFunc),
    RetOnly,
}

fn func_form(f: &FuncStructInfo) -> FuncForm<'_> {
    match (&f.params, &f.derive_func) {
        (Some(params), _) => FuncForm::Params(params),
        (None, Some(d)) => FuncForm::Derive(d),
        (None, None) => FuncForm::RetOnly,
    }
}

fn ndim_check(base: i32, derived: i32) -> BaseCheckResult {
    if base == UNKNOWN_NDIM || base == derived {
        BaseCheckResult::Pass
    } else if derived == UNKNOWN_NDIM {
        BaseCheckResult::FailL1
    } else {
        BaseCheckResult::FailL0
    }
}

struct BaseChecker<'a> {
    analyzer: &'a Analyzer,
}

impl BaseChecker<'_> {
    fn check(&self, base: &StructInfo, derived: &StructInfo) -> BaseCheckResult {
        use StructInfoKind as K;
        if base == derived {
            return BaseCheckResult::Pass;
        }
        match (base.kind(), derived.kind()) {
            (K::Object, _) => BaseCheckResult::Pass,
            (_, K::Object) => BaseCheckResult::FailL1,
            (K::Prim(b), K::Prim(d)) => self.prim(b, d),
            (K::Shape(b), K::Shape(d)) => self.shape(b, d),
            (K::Tensor(b), K::Tensor(d)) => self.tensor(b, d),
            (K::Tuple(b), K::Tuple(d)) => self.fields(b, d),
            (K::Func(b), K::Func(d)) => self.func(b, d),
            _ => BaseCheckResult::FailL0,
        }
    }

    fn dim(&self, base: &PrimExpr, derived: &PrimExpr) -> BaseCheckResult {
        BaseCheckResult::from_proof(self.analyzer.compare_equal(base, derived))
    }

    fn dims(&self, base: &[PrimExpr], derived: &[PrimExpr]) -> BaseCheckResult {
        if base.len() != derived.len() {
            return BaseCheckResult::FailL0;
        }
        let mut result = BaseCheckResult::Pass;
        for (b, d) in base.iter().zip(derived) {
            result = result.and(self.dim(b, d));
            if result == BaseCheckResult::FailL0 {
                break;
            }
        }
        result
    }

    fn prim(&self, base: &PrimStructInfo, derived: &PrimStructInfo) -> BaseCheckResult {
        if base.dtype != derived.dtype {
            return BaseCheckResult::FailL0;
        }
        match (&base.value, &derived.value) {
            (None, _) => BaseCheckResult::Pass,
            (Some(_), None) => BaseCheckResult::FailL2,
            (Some(b), Some(d)) => self.dim(b, d),
        }
    }

    fn shape(&self, base: &ShapeStructInfo, derived: &ShapeStructInfo) -> BaseCheckResult {
        let ndim = ndim_check(base.ndim, derived.ndim);
        if ndim != BaseCheckResult::Pass {
            return ndim;
        }
        match (&base.values, &derived.values) {
            (None, _) => BaseCheckResult::Pass,
            (Some(_), None) => BaseCheckResult::FailL2,
            (Some(b), Some(d)) => self.dims(b, d),
        }
    }

    fn tensor(&self, base: &TensorStructInfo, derived: &TensorStructInfo) -> BaseCheckResult {
        let dtype = if base.is_unknown_dtype() || base.dtype == derived.dtype {
            BaseCheckResult::Pass
        } else if derived.is_unknown_dtype() {
            BaseCheckResult::FailL1
        } else {
            BaseCheckResult::FailL0
        };
        let head = dtype.and(ndim_check(base.ndim, derived.ndim));
        if head != BaseCheckResult::Pass {
            return head;
        }
        match (&base.shape, &derived.shape) {
            (None, _) => BaseCheckResult::Pass,
            (Some(_), None) => BaseCheckResult::FailL2,
            (Some(b), Some(d)) => self.shape_expr(b, d),
        }
    }

    /// Two tensor shapes: the same shape variable, or dimension by dimension
    /// when both are known; otherwise only the run time can tell.
    fn shape_expr(&self, base: &Expr, derived: &Expr) -> BaseCheckResult {
        if let (Some(b), Some(d)) = (base.as_var(), derived.as_var()) {
            if b == d {
                return BaseCheckResult::Pass;
            }
        }
        match (shape_dims(base), shape_dims(derived)) {
            (Some(b), Some(d)) => self.dims(b, d),
            _ => BaseCheckResult::FailL2,
        }
    }

    fn fields(&self, base: &[StructInfo], derived: &[StructInfo]) -> BaseCheckResult {
        if base.len() != derived.len() {
            return BaseCheckResult::FailL0;
        }
        let mut result = BaseCheckResult::Pass;
        for (b, d) in base.iter().zip(derived) {
            result = result.and(self.check(b, d));
            if result == BaseCheckResult::FailL0 {
                break;
            }
        }
        result
    }

    fn func(&self, base: &FuncStructInfo, derived: &FuncStructInfo) -> BaseCheckResult {
        // A pure function may stand where an impure one is expected, never the
        // other way round.
        if base.purity && !derived.purity {
            return BaseCheckResult::FailL0;
        }
        match (func_form(base), func_form(derived)) {
            // Calling an `empty_derive` function tells nothing, so any function fits.
            (FuncForm::Derive(DeriveFunc::Empty), _) => BaseCheckResult::Pass,
            (FuncForm::Derive(b), FuncForm::Derive(d)) if b == d => BaseCheckResult::Pass,
            (FuncForm::Derive(_), _) => BaseCheckResult::FailL2,
            (FuncForm::RetOnly, FuncForm::Derive(_)) => BaseCheckResult::FailL2,
            (FuncForm::RetOnly, _) => self.check(&base.ret, &derived.ret),
            (FuncForm::Params(_), FuncForm::Derive(_) | FuncForm::RetOnly) => {
                BaseCheckResult::FailL2
            }
            (FuncForm::Params(bp), FuncForm::Params(dp)) => {
                if bp.len() != dp.len() {
                    return BaseCheckResult::FailL0;
                }
                // The two signatures may name their symbolic variables
                // differently: rename the base's to the derived's first.
                let renaming = alpha_renaming(bp, dp);
                let rename = |s: &StructInfo| renaming.apply(s, self.analyzer);
                let mut params = BaseCheckResult::Pass;
                for (b, d) in bp.iter().zip(dp) {
                    // Parameters are contravariant.
                    params = params.and(self.check(d, &rename(b)));
                }
                // A parameter that only a cast would make fit is not a static
                // error of the function as a whole (TVM does the same).
                if params == BaseCheckResult::FailL1 {
                    params = BaseCheckResult::FailL2;
                }
                params.and(self.check(&rename(&base.ret), &derived.ret))
            }
        }
    }
}

/// A renaming of the symbolic variables that `from` defines to the ones that
/// `to` defines at the same places, when that is a one-to-one map of
/// variables to variables (alpha-equivalence of two signatures); empty
/// otherwise.
fn alpha_renaming(from: &[StructInfo], to: &[StructInfo]) -> ShapeVarMapping {
    let mut mapping = ShapeVarMapping::default();
    for (f, t) in from.iter().zip(to) {
        get_shape_var_mapping(f, t, &mut mapping);
    }
    mapping.vars.clear();
    let mut targets = HashSet::new();
    let one_to_one = mapping
        .shape_vars
        .values()
        .all(|e| e.as_var().is_some_and(|v| targets.insert(v.clone())));
    if !one_to_one {
        mapping.shape_vars.clear();
    }
    mapping
}

/// The least common ancestor (for the two branches of `If`).
pub fn struct_info_lca(a: &StructInfo, b: &StructInfo, analyzer: &Analyzer) -> StructInfo {
    use StructInfoKind as K;
    if a == b {
        return a.clone();
    }
    match (a.kind(), b.kind()) {
        (K::Prim(x), K::Prim(y)) if x.dtype == y.dtype => {
            let value = match (&x.value, &y.value) {
                (Some(u), Some(v)) if analyzer.can_prove_equal(u, v) => Some(u.clone()),
                _ => None,
            };
            StructInfo::new(K::Prim(PrimStructInfo {
                dtype: x.dtype,
                value,
            }))
        }
        (K::Shape(x), K::Shape(y)) => {
            if x.ndim == y.ndim {
                if let (Some(u), Some(v)) = (&x.values, &y.values) {
                    if dims_provably_equal(u, v, analyzer) {
                        return a.clone();
                    }
                }
            }
            let ndim = if x.ndim == y.ndim {
                x.ndim
            } else {
                UNKNOWN_NDIM
            };
            StructInfo::shape_ndim(ndim)
        }
        (K::Tensor(x), K::Tensor(y)) => {
            let dtype = if x.dtype == y.dtype {
                x.dtype
            } else {
                relax_runtime::DataType::void()
            };
            let ndim = if x.ndim == y.ndim {
                x.ndim
            } else {
                UNKNOWN_NDIM
            };
            let shape = match (&x.shape, &y.shape) {
                (Some(u), Some(v)) if x.ndim == y.ndim && shapes_provably_equal(u, v, analyzer) => {
                    Some(u.clone())
                }
                _ => None,
            };
            StructInfo::new(K::Tensor(TensorStructInfo { shape, dtype, ndim }))
        }
        (K::Tuple(x), K::Tuple(y)) if x.len() == y.len() => StructInfo::tuple(
            x.iter()
                .zip(y)
                .map(|(u, v)| struct_info_lca(u, v, analyzer))
                .collect(),
        ),
        (K::Func(x), K::Func(y)) => func_lca(x, y, analyzer),
        _ => StructInfo::object(),
    }
}

fn dims_provably_equal(a: &[PrimExpr], b: &[PrimExpr], analyzer: &Analyzer) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| analyzer.can_prove_equal(x, y))
}

/// Whether two tensor shape expressions provably denote the same shape.
pub fn shapes_provably_equal(a: &Expr, b: &Expr, analyzer: &Analyzer) -> bool {
    if let (Some(u), Some(v)) = (a.as_var(), b.as_var()) {
        if u == v {
            return true;
        }
    }
    match (shape_dims(a), shape_dims(b)) {
        (Some(u), Some(v)) => dims_provably_equal(u, v, analyzer),
        _ => false,
    }
}

/// The LUB of two function StructInfos. Parameters are contravariant, so
/// they are kept only when both sides agree on them; otherwise the result is
/// the opaque `empty_derive` function, the top of the function StructInfos.
fn func_lca(x: &FuncStructInfo, y: &FuncStructInfo, analyzer: &Analyzer) -> StructInfo {
    let purity = x.purity && y.purity;
    let func = |params, ret, derive_func| {
        StructInfo::new(StructInfoKind::Func(FuncStructInfo {
            params,
            ret,
            purity,
            derive_func,
        }))
    };
    match (func_form(x), func_form(y)) {
        (FuncForm::Params(px), FuncForm::Params(py)) if px.len() == py.len() => {
            let renaming = alpha_renaming(py, px);
            let same_params = px.iter().zip(py).all(|(p, q)| {
                let q = renaming.apply(q, analyzer);
                is_base_of(p, &q, analyzer) && is_base_of(&q, p, analyzer)
            });
            if same_params {
                let ret = struct_info_lca(&x.ret, &renaming.apply(&y.ret, analyzer), analyzer);
                func(Some(px.to_vec()), ret, None)
            } else {
                func(None, StructInfo::object(), Some(DeriveFunc::Empty))
            }
        }
        (FuncForm::Derive(dx), FuncForm::Derive(dy)) if dx == dy => {
            func(None, x.ret.clone(), Some(dx.clone()))
        }
        (FuncForm::RetOnly, FuncForm::RetOnly) => {
            func(None, struct_info_lca(&x.ret, &y.ret, analyzer), None)
        }
        _ => func(None, StructInfo::object(), Some(DeriveFunc::Empty)),
    }
}

/// Drops what refers to variables out of scope. Symbolic variables in
/// `shape_var_map` and Relax variables in `var_map` are substituted; a
/// symbolic variable for which `is_defined` holds is kept; others are erased.
///
/// As in TVM, a Relax variable (a tensor's shape given as a shape variable)
/// that `var_map` does not map is erased: map it to itself to keep it. Erasing
/// drops the tensor's shape, the shape's values or the prim's value, and keeps
/// rank and dtype. Substituted dimensions are simplified.
pub fn erase_to_well_defined(
    sinfo: &StructInfo,
    shape_var_map: &HashMap<TirVar, PrimExpr>,
    var_map: &HashMap<Var, Expr>,
    is_defined: &dyn Fn(&TirVar) -> bool,
) -> StructInfo {
    let shape_var = |v: &TirVar| {
        shape_var_map
            .get(v)
            .cloned()
            .or_else(|| is_defined(v).then(|| PrimExpr::var(v)))
    };
    let var = |v: &Var| var_map.get(v).cloned();
    erase_to_well_defined_with(sinfo, &shape_var, &var, &Analyzer::new())
}

/// [`erase_to_well_defined`] with functions deciding each variable's fate:
/// `Some(e)` replaces the variable by `e` (return the variable itself to keep
/// it), `None` erases what mentions it. `analyzer` simplifies substituted
/// dimensions.
pub fn erase_to_well_defined_with(
    sinfo: &StructInfo,
    shape_var: &dyn Fn(&TirVar) -> Option<PrimExpr>,
    var: &dyn Fn(&Var) -> Option<Expr>,
    analyzer: &Analyzer,
) -> StructInfo {
    Eraser {
        shape_var,
        var,
        analyzer,
    }
    .struct_info(sinfo)
}

struct Eraser<'a> {
    shape_var: &'a dyn Fn(&TirVar) -> Option<PrimExpr>,
    var: &'a dyn Fn(&Var) -> Option<Expr>,
    analyzer: &'a Analyzer,
}

impl Eraser<'_> {
    /// The rewritten expression, or `None` if it mentions an erased variable.
    fn prim_expr(&self, e: &PrimExpr) -> Option<PrimExpr> {
        let mut map = HashMap::new();
        for v in e.free_vars() {
            let replacement = (self.shape_var)(&v)?;
            if replacement.as_var() != Some(&v) {
                map.insert(v, replacement);
            }
        }
        if map.is_empty() {
            Some(e.clone())
        } else {
            Some(self.analyzer.simplify(&e.substitute_map(&map)))
        }
    }

    fn dims(&self, dims: &[PrimExpr]) -> Option<Vec<PrimExpr>> {
        dims.iter().map(|d| self.prim_expr(d)).collect()
    }

    fn shape_expr(&self, shape: &Expr) -> Option<Expr> {
        match shape.kind() {
            ExprKind::ShapeExpr(values) => {
                let new = self.dims(values)?;
                Some(if new == *values {
                    shape.clone()
                } else {
                    Expr::shape(new)
                })
            }
            ExprKind::Var(v) => {
                let new = (self.var)(v)?;
                Some(if new.as_var() == Some(v) {
                    shape.clone()
                } else {
                    new
                })
            }
            // A tensor's shape is a `ShapeExpr` or a `Var`; anything else
            // cannot be kept meaningfully.
            _ => None,
        }
    }

    fn struct_info(&self, sinfo: &StructInfo) -> StructInfo {
        use StructInfoKind as K;
        match sinfo.kind() {
            K::Object => sinfo.clone(),
            K::Prim(p) => match &p.value {
                None => sinfo.clone(),
                Some(v) => StructInfo::new(K::Prim(PrimStructInfo {
                    dtype: p.dtype,
                    value: self.prim_expr(v),
                })),
            },
            K::Shape(s) => match &s.values {
                None => sinfo.clone(),
                Some(values) => match self.dims(values) {
                    Some(values) => StructInfo::new(K::Shape(ShapeStructInfo {
                        ndim: s.ndim,
                        values: Some(values),
                    })),
                    None => StructInfo::shape_ndim(s.ndim),
                },
            },
            K::Tensor(t) => {
                let shape = t.shape.as_ref().and_then(|e| self.shape_expr(e));
                let ndim = match &shape {
                    Some(e) if t.ndim == UNKNOWN_NDIM => shape_expr_ndim(e),
                    _ => t.ndim,
                };
                StructInfo::new(K::Tensor(TensorStructInfo {
                    shape,
                    dtype: t.dtype,
                    ndim,
                }))
            }
            K::Tuple(fields) => {
                StructInfo::tuple(fields.iter().map(|f| self.struct_info(f)).collect())
            }
            K::Func(f) => {
                // The symbolic variables a signature's parameters define are
                // in scope in that signature, unless the caller rewrites them.
                let local: HashSet<TirVar> = f
                    .params
                    .iter()
                    .flatten()
                    .flat_map(|p| p.definable_tir_vars())
                    .collect();
                let shape_var = |v: &TirVar| {
                    (self.shape_var)(v).or_else(|| local.contains(v).then(|| PrimExpr::var(v)))
                };
                let inner = Eraser {
                    shape_var: &shape_var,
                    var: self.var,
                    analyzer: self.analyzer,
                };
                StructInfo::new(K::Func(FuncStructInfo {
                    params: f
                        .params
                        .as_ref()
                        .map(|ps| ps.iter().map(|p| inner.struct_info(p)).collect()),
                    ret: inner.struct_info(&f.ret),
                    purity: f.purity,
                    derive_func: f.derive_func.clone(),
                }))
            }
        }
    }
}

/// Symbolic variables and shape variables of a signature bound to what an
/// argument has at the same place (TVM's `get_shape_var_mapping`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShapeVarMapping {
    /// Symbolic variables to the dimension or prim value they stand for.
    pub shape_vars: HashMap<TirVar, PrimExpr>,
    /// Shape variables (a tensor's shape given as a `Var`) to the argument's
    /// shape expression.
    pub vars: HashMap<Var, Expr>,
}

impl ShapeVarMapping {
    /// An empty mapping.
    pub fn new() -> Self {
        Self::default()
    }
    /// `sinfo` with the mapped variables replaced and every other variable
    /// kept; replaced dimensions are simplified with `analyzer`.
    pub fn apply(&self, sinfo: &StructInfo, analyzer: &Analyzer) -> StructInfo {
        if self.shape_vars.is_empty() && self.vars.is_empty() {
            return sinfo.clone();
        }
        let shape_var = |v: &TirVar| {
            Some(
                self.shape_vars
                    .get(v)
                    .cloned()
                    .unwrap_or_else(|| PrimExpr::var(v)),
            )
        };
        let var = |v: &Var| Some(self.vars.get(v).cloned().unwrap_or_else(|| Expr::var(v)));
        erase_to_well_defined_with(sinfo, &shape_var, &var, analyzer)
    }
}

/// Extends `mapping` with the variables that stand alone in a binding
/// position of `pattern` (a parameter's StructInfo), bound to what `value`
/// (the argument's) has at the same place. The first binding of a variable
/// wins; whether later occurrences agree is for the base check to decide.
/// Function StructInfo binds nothing (its parameters bind their own).
pub fn get_shape_var_mapping(
    pattern: &StructInfo,
    value: &StructInfo,
    mapping: &mut ShapeVarMapping,
) {
    use StructInfoKind as K;
    match (pattern.kind(), value.kind()) {
        (K::Prim(p), K::Prim(v)) => {
            if let (Some(p), Some(v)) = (&p.value, &v.value) {
                bind_dim(p, v, mapping);
            }
        }
        (K::Shape(p), K::Shape(v)) => {
            if let (Some(p), Some(v)) = (&p.values, &v.values) {
                bind_dims(p, v, mapping);
            }
        }
        (K::Tensor(p), K::Tensor(v)) => {
            let (Some(p_shape), Some(v_shape)) = (&p.shape, &v.shape) else {
                return;
            };
            if let Some(var) = p_shape.as_var() {
                mapping
                    .vars
                    .entry(var.clone())
                    .or_insert_with(|| v_shape.clone());
            }
            if let (Some(p), Some(v)) = (shape_dims(p_shape), shape_dims(v_shape)) {
                bind_dims(p, v, mapping);
            }
        }
        (K::Tuple(p), K::Tuple(v)) if p.len() == v.len() => {
            for (p, v) in p.iter().zip(v) {
                get_shape_var_mapping(p, v, mapping);
            }
        }
        _ => {}
    }
}

fn bind_dims(pattern: &[PrimExpr], value: &[PrimExpr], mapping: &mut ShapeVarMapping) {
    if pattern.len() == value.len() {
        for (p, v) in pattern.iter().zip(value) {
            bind_dim(p, v, mapping);
        }
    }
}

fn bind_dim(pattern: &PrimExpr, value: &PrimExpr, mapping: &mut ShapeVarMapping) {
    if let Some(var) = pattern.as_var() {
        mapping
            .shape_vars
            .entry(var.clone())
            .or_insert_with(|| value.clone());
    }
}

/// The result of a call of an opaque `default_derive` function: `Object`
/// without `sinfo_args`, the single one, or a tuple of several.
pub fn default_derive(sinfo_args: &[StructInfo]) -> StructInfo {
    match sinfo_args {
        [] => StructInfo::object(),
        [one] => one.clone(),
        many => StructInfo::tuple(many.to_vec()),
    }
}

/// An analyzer that knows what `base` knows, and that every symbolic variable
/// appearing in a shape dimension of `sinfos` is non-negative (dimensions
/// are).
pub fn shape_analyzer<'a>(
    base: &Analyzer,
    sinfos: impl IntoIterator<Item = &'a StructInfo>,
) -> Analyzer {
    let mut analyzer = base.clone();
    let mut vars = Vec::new();
    for s in sinfos {
        collect_dim_vars(s, &mut vars);
    }
    for v in &vars {
        analyzer.mark_non_negative(v);
    }
    analyzer
}

fn collect_dim_vars(sinfo: &StructInfo, out: &mut Vec<TirVar>) {
    use StructInfoKind as K;
    match sinfo.kind() {
        K::Object | K::Prim(_) => {}
        K::Shape(s) => s.values.iter().flatten().for_each(|d| d.collect_vars(out)),
        K::Tensor(t) => {
            if let Some(dims) = t.shape.as_ref().and_then(shape_dims) {
                dims.iter().for_each(|d| d.collect_vars(out));
            }
        }
        K::Tuple(fields) => fields.iter().for_each(|f| collect_dim_vars(f, out)),
        K::Func(f) => {
            f.params
                .iter()
                .flatten()
                .for_each(|p| collect_dim_vars(p, out));
            collect_dim_vars(&f.ret, out);
        }
    }
}

/// The result StructInfo of calling a function of StructInfo `func` with the
/// arguments of `call` (which carry their StructInfo): binds the callee's
/// symbolic parameters from the arguments, checks each argument, substitutes
/// into `ret` and erases what is not defined at the call site.
///
/// An argument that provably does not fit (`FailL0`, `FailL1`) is an error
/// (`call-arg-mismatch`); one that fits depending on symbolic values is
/// accepted, to be checked at run time. A wrong number of arguments is
/// `call-arity-mismatch`. An opaque callee derives its result from
/// `call.sinfo_args` (`default_derive`), gives `Object` (`empty_derive`), or
/// returns its `ret` (no derive rule).
pub fn derive_call_ret_struct_info(
    func: &FuncStructInfo,
    call: &Call,
    analyzer: &Analyzer,
) -> Result<StructInfo, Diagnostic> {
    let params = match (&func.params, &func.derive_func) {
        (Some(params), _) => params,
        (None, Some(DeriveFunc::Default)) => return Ok(default_derive(&call.sinfo_args)),
        (None, Some(DeriveFunc::Empty)) => return Ok(StructInfo::object()),
        (None, None) => return Ok(func.ret.clone()),
    };
    if params.len() != call.args.len() {
        return Err(Diagnostic::new(
            "call-arity-mismatch",
            format!(
                "the callee takes {} argument{}, the call passes {}",
                params.len(),
                if params.len() == 1 { "" } else { "s" },
                call.args.len()
            ),
        ));
    }
    let args = call
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            a.struct_info().cloned().ok_or_else(|| {
                Diagnostic::new(
                    "missing-struct-info",
                    format!("argument {i} of the call has no struct info"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let analyzer = shape_analyzer(analyzer, args.iter().chain(params.iter()));

    let mut mapping = ShapeVarMapping::new();
    for (p, a) in params.iter().zip(&args) {
        get_shape_var_mapping(p, a, &mut mapping);
    }
    for (i, (p, a)) in params.iter().zip(&args).enumerate() {
        let expected = mapping.apply(p, &analyzer);
        let result = struct_info_base_check(&expected, a, &analyzer);
        if matches!(result, BaseCheckResult::FailL0 | BaseCheckResult::FailL1) {
            let mut d = Diagnostic::new(
                "call-arg-mismatch",
                format!("argument {i} of the call: expected {p}, found {a}"),
            );
            let bound: Vec<String> = p
                .tir_vars()
                .iter()
                .filter_map(|v| mapping.shape_vars.get(v).map(|e| format!("{v} = {e}")))
                .collect();
            if !bound.is_empty() {
                d = d.with_note(format!("the call binds the callee's {}", bound.join(", ")));
            }
            return Err(d);
        }
    }

    // Symbolic variables free in the arguments are in scope at the call site;
    // the callee's own variables are only meaningful through the mapping.
    let defined: HashSet<TirVar> = args.iter().flat_map(|a| a.tir_vars()).collect();
    let shape_var = |v: &TirVar| {
        mapping
            .shape_vars
            .get(v)
            .cloned()
            .or_else(|| defined.contains(v).then(|| PrimExpr::var(v)))
    };
    let var = |v: &Var| mapping.vars.get(v).cloned();
    Ok(erase_to_well_defined_with(
        &func.ret, &shape_var, &var, &analyzer,
    ))
}
