//! `ToMixedPrecision`: a `float32` module computes in `float16` or
//! `bfloat16`, accumulating in `float32` (TVM's
//! `relax.transform.ToMixedPrecision`).
//!
//! 1. Each op has a policy ([`policy`](mod@policy)): `Always` ops (`matmul`, the
//!    convolutions) get their tensor arguments cast to the mixed dtype and
//!    their `out_dtype` attribute set to the pass's `out_dtype` (`float32`
//!    by default, so products are summed in `float32`); `Follow` ops
//!    (elementwise arithmetic, activations, reshapes, pooling, …) compute in
//!    the mixed dtype when all their tensor arguments already have it (or
//!    are constants whose values fit in it), else in `float32`; `Never` ops
//!    (`softmax`, reductions, anything unlisted) see exactly the dtypes they
//!    saw before, arguments cast back where an upstream op changed them.
//! 2. Values are stored in one dtype each: an `Always` op's result inside a
//!    dataflow block is cast to the mixed dtype right after it; a value that
//!    is only ever read by `Always` ops ([`collect`]'s backward analysis),
//!    parameters included, is cast to the mixed dtype once, right after it
//!    is defined (a parameter at the start of each dataflow block that
//!    reads it). A use that needs another dtype casts locally
//!    (`R.astype`); casts are not shared between uses, as in TVM, so they
//!    fuse with their consumers.
//! 3. The edges keep their dtypes: a dataflow block's outputs (`R.output`
//!    variables), a function's parameters and results, and every use
//!    outside a call of an op (a function call, `match_cast`, an alias) see
//!    the original dtype.
//! 4. A constant is converted at compile time, once per constant and
//!    dtype, instead of getting an `R.astype` binding (TVM leaves that to
//!    `FoldConstant`).
//! 5. Only `float32` and mixed-dtype tensors are ever cast; `float64`,
//!    integer and bool tensors are left as they are. Only bindings inside
//!    dataflow blocks are rewritten.
//! 6. The mixed dtype is `float16` ([`ToMixedPrecision::default`], TVM's only
//!    choice) or `bfloat16` ([`ToMixedPrecision::with_dtype`]);
//!    [`ToMixedPrecision::out_dtype`] is `float32` or the mixed dtype;
//!    [`ToMixedPrecision::input_names`] (TVM's `fp16_input_names`) makes the
//!    named parameters take the mixed dtype themselves. Other dtypes are an
//!    error naming the parameter.

pub mod collect;
pub mod policy;

use super::Pass;
use crate::ir::{
    AttrValue, Attrs, Binding, BindingBlock, Call, Expr, ExprKind, IRModule, StructInfo,
    StructInfoKind, Var, VarBinding,
};
use crate::mutator::{ExprMutator, MutatorState};
use collect::{is_nested_tensor, Collector, Msg, Need};
use policy::{policy, Policy};
use relax_runtime::{DataType, Diagnostic, Error};
use std::collections::{HashMap, HashSet};

/// The pass. See the module docs.
#[derive(Clone, Debug)]
pub struct ToMixedPrecision {
    /// The dtype computations move to: `float16` or `bfloat16`.
    dtype: DataType,
    /// The accumulator dtype of `Always` ops.
    out_dtype: DataType,
    /// Parameters that take the mixed dtype themselves.
    input_names: Vec<String>,
}

/// `float16`, accumulating in `float32` (TVM's defaults).
impl Default for ToMixedPrecision {
    fn default() -> Self {
        Self::with_dtype(DataType::f16())
    }
}

impl ToMixedPrecision {
    /// Computing in `dtype` (`float16` or `bfloat16`; another dtype is an
    /// error when the pass runs), accumulating in `float32`.
    pub fn with_dtype(dtype: DataType) -> Self {
        ToMixedPrecision {
            dtype,
            out_dtype: DataType::f32(),
            input_names: Vec::new(),
        }
    }

    /// Accumulating `Always` ops in `out_dtype` (`float32` or the mixed
    /// dtype).
    pub fn out_dtype(mut self, out_dtype: DataType) -> Self {
        self.out_dtype = out_dtype;
        self
    }

    /// The parameters named `names` take the mixed dtype (TVM's
    /// `fp16_input_names`): the caller passes them already converted.
    pub fn input_names<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.input_names = names.into_iter().map(Into::into).collect();
        self
    }

    /// The mixed dtype.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    fn check(&self) -> Result<(), Error> {
        let bad = |param: &str, expected: String, found: DataType| {
            Err(Error::Compile(vec![Diagnostic::new(
                "pass-argument",
                format!("ToMixedPrecision: {param} must be {expected}, found {found}"),
            )]))
        };
        if self.dtype != DataType::f16() && self.dtype != DataType::bf16() {
            return bad("dtype", "float16 or bfloat16".into(), self.dtype);
        }
        if self.out_dtype != DataType::f32() && self.out_dtype != self.dtype {
            return bad(
                "out_dtype",
                format!("float32 or {}", self.dtype),
                self.out_dtype,
            );
        }
        Ok(())
    }
}

impl Pass for ToMixedPrecision {
    fn name(&self) -> &str {
        "ToMixedPrecision"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        self.check()?;
        let mut r = Rewriter {
            state: MutatorState::with_module(&module),
            needs: HashMap::new(),
            dtype: self.dtype,
            out_dtype: self.out_dtype,
            input_names: self.input_names.iter().cloned().collect(),
            params: Vec::new(),
            constants: HashMap::new(),
        };
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            r.needs = Collector::collect(&func.body);
            r.params = func.params.clone();
            let new = r.visit_expr(&Expr::function(func.clone()));
            if let Some(nf) = new.as_function() {
                out.add(gv.clone(), nf.clone());
            }
        }
        let errors = r.builder().take_errors();
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(Error::Compile(errors))
        }
    }
}

/// A dtype per tensor leaf; `void` leaves are left alone.
type DtypeMsg = Msg<DataType>;

/// The dtypes of `sinfo`'s leaves, or `to` at every tensor leaf if given.
fn dtypes_of(sinfo: Option<&StructInfo>, to: Option<DataType>) -> DtypeMsg {
    Msg::from_struct_info(sinfo, DataType::void(), &|s| match s.as_tensor() {
        Some(t) => to.unwrap_or(t.dtype),
        None => DataType::void(),
    })
}

struct Rewriter {
    state: MutatorState,
    /// The current function's decisions.
    needs: HashMap<Var, Msg<Need>>,
    dtype: DataType,
    out_dtype: DataType,
    input_names: HashSet<String>,
    /// The current function's parameters (as written).
    params: Vec<Var>,
    /// Constants converted so far: (node id, dtype) → (the original, kept
    /// alive so the id stays its own, and the converted constant).
    constants: HashMap<(usize, DataType), (Expr, Expr)>,
}

impl Rewriter {
    /// `e` with each leaf tensor that is `float32` or the mixed dtype and
    /// differs from `to` cast to `to` (TVM's `RewriteExpr`).
    fn rewrite(&mut self, e: &Expr, to: &DtypeMsg) -> Expr {
        if !self.needs_cast(e.struct_info(), to) {
            return e.clone();
        }
        match (to, e.struct_info()) {
            (Msg::Leaf(dt), Some(s)) => {
                let Some(t) = s.as_tensor() else {
                    return e.clone();
                };
                if dt.is_void()
                    || t.dtype == *dt
                    || (t.dtype != DataType::f32() && t.dtype != self.dtype)
                {
                    return e.clone();
                }
                self.cast(e, *dt)
            }
            (Msg::Tuple(tos), Some(s)) if s.as_tuple().is_some() => {
                let mut changed = false;
                let fields: Vec<Expr> = tos
                    .iter()
                    .enumerate()
                    .map(|(i, to)| {
                        let field = match e.kind() {
                            ExprKind::Tuple(fs) if i < fs.len() => fs[i].clone(),
                            _ => self.normalize(Expr::tuple_get_item(e.clone(), i)),
                        };
                        let new = self.rewrite(&field, to);
                        changed |= !new.ptr_eq(&field);
                        new
                    })
                    .collect();
                if changed {
                    Expr::tuple(fields)
                } else {
                    e.clone()
                }
            }
            _ => e.clone(),
        }
    }

    /// Whether [`Rewriter::rewrite`] changes a value of `sinfo`.
    fn needs_cast(&self, sinfo: Option<&StructInfo>, to: &DtypeMsg) -> bool {
        let Some(s) = sinfo else { return false };
        match (to, s.as_tensor(), s.as_tuple()) {
            (Msg::Leaf(dt), Some(t), _) => {
                !dt.is_void()
                    && t.dtype != *dt
                    && (t.dtype == DataType::f32() || t.dtype == self.dtype)
            }
            (Msg::Tuple(tos), _, Some(fields)) => tos
                .iter()
                .zip(fields)
                .any(|(to, f)| self.needs_cast(Some(f), to)),
            _ => false,
        }
    }

    /// `e` as `to`: a converted constant, else `R.astype(e, to)`.
    fn cast(&mut self, e: &Expr, to: DataType) -> Expr {
        if let ExprKind::Constant(t) = e.kind() {
            let key = (e.node_id(), to);
            if let Some((_, c)) = self.constants.get(&key) {
                return c.clone();
            }
            if let Ok(converted) = t.astype(to) {
                let c = Expr::constant(converted);
                self.constants.insert(key, (e.clone(), c.clone()));
                return c;
            }
        }
        Expr::call_op(
            "relax.astype",
            vec![e.clone()],
            Attrs::from_pairs([("dtype", AttrValue::DataType(to))]),
        )
    }

    /// Every tensor argument cast to `to` (TVM's `RewriteArgs`).
    fn rewrite_args(&mut self, args: &[Expr], to: DataType) -> Vec<Expr> {
        args.iter()
            .map(|a| {
                if is_nested_tensor(a.struct_info()) {
                    let msg = dtypes_of(a.struct_info(), Some(to));
                    self.rewrite(a, &msg)
                } else {
                    a.clone()
                }
            })
            .collect()
    }

    /// `e` with its variables replaced by their current (possibly
    /// mixed-dtype) versions, without casting back (TVM's `RemapArgs`).
    fn remap(&mut self, e: &Expr) -> Expr {
        match e.kind() {
            ExprKind::Var(v) => match self.var_remap().get(v) {
                Some(n) => Expr::var(n),
                None => e.clone(),
            },
            ExprKind::Tuple(fields) => {
                let new: Vec<Expr> = fields.iter().map(|f| self.remap(f)).collect();
                if new.iter().zip(fields).all(|(a, b)| a.ptr_eq(b)) {
                    e.clone()
                } else {
                    Expr::tuple(new)
                }
            }
            _ => e.clone(),
        }
    }

    /// Whether every tensor argument already has the mixed dtype or is a
    /// constant whose values fit in it (TVM's `AllFP16Castable`).
    fn all_castable(&self, args: &[Expr]) -> bool {
        args.iter().all(|a| {
            if !is_nested_tensor(a.struct_info()) {
                return true;
            }
            if a.struct_info()
                .and_then(|s| s.as_tensor())
                .is_some_and(|t| t.dtype == self.dtype)
            {
                return true;
            }
            match a.kind() {
                ExprKind::Constant(t) => self.fits(t),
                ExprKind::Tuple(fields) => self.all_castable(fields),
                _ => false,
            }
        })
    }

    /// Whether every value of `t` is within the mixed dtype's finite range
    /// (NaN and values already in range pass, as in TVM).
    fn fits(&self, t: &relax_runtime::Tensor) -> bool {
        let dt = t.dtype();
        if dt == self.dtype {
            return true;
        }
        if !(dt.is_float() || dt.is_int()) || dt.lanes() != 1 || dt.is_bool() {
            return false;
        }
        let max = if self.dtype == DataType::bf16() {
            f64::from(half::bf16::MAX.to_f32())
        } else {
            f64::from(half::f16::MAX.to_f32())
        };
        t.to_f64_vec().iter().all(|v| v.abs() <= max || v.is_nan())
    }

    /// Casts the current version of `var` to the mixed dtype where its
    /// decision says it is only read so, and remaps it (TVM's
    /// `CastIfFp16Only`).
    fn cast_if_mixed_only(&mut self, var: &Var) {
        let Some(need) = self.needs.get(var).cloned() else {
            return;
        };
        let cur = self.var_remap().get(var).cloned().unwrap_or(var.clone());
        let from = dtypes_of(cur.struct_info(), None);
        let to = combine(&from, &need, self.dtype);
        let e = Expr::var(&cur);
        let rewritten = self.rewrite(&e, &to);
        if rewritten.ptr_eq(&e) {
            return;
        }
        match self.builder().emit(rewritten) {
            Ok(v) => {
                self.var_remap().insert(var.clone(), v);
            }
            Err(err) => self.builder().report(err),
        }
    }

    /// Re-emits `binding` with `value` normalized.
    fn reemit(&mut self, binding: &VarBinding, value: Expr) {
        let value = self.normalize(value);
        self.reemit_binding(binding, value);
    }

    /// `var = op(args)` in a dataflow block (module docs, item 1).
    fn op_call(&mut self, binding: &VarBinding, call: &Call, op_name: &str) {
        let remapped: Vec<Expr> = call.args.iter().map(|a| self.remap(a)).collect();
        let changed = !remapped.iter().zip(&call.args).all(|(a, b)| a.ptr_eq(b));
        let pol = policy(op_name);
        let (args, attrs, new_dtype) = match pol {
            Policy::Always => {
                let mut attrs = call.attrs.clone();
                if let Some(info) = crate::op::lookup(op_name) {
                    if info.attr_spec("out_dtype").is_some() {
                        attrs = attrs.with("out_dtype", AttrValue::DataType(self.out_dtype));
                    }
                }
                (remapped, attrs, Some(self.dtype))
            }
            Policy::Follow => {
                let to = if self.all_castable(&remapped) {
                    self.dtype
                } else {
                    DataType::f32()
                };
                (remapped, call.attrs.clone(), Some(to))
            }
            Policy::Never => {
                if !changed {
                    return self.reemit_binding(binding, binding.value.clone());
                }
                let args = remapped
                    .iter()
                    .zip(&call.args)
                    .map(|(new, old)| {
                        let to = dtypes_of(old.struct_info(), None);
                        self.rewrite(new, &to)
                    })
                    .collect();
                (args, call.attrs.clone(), None)
            }
        };
        let Some(to) = new_dtype else {
            let value = Expr::call_full(call.op.clone(), args, attrs, call.sinfo_args.clone());
            return self.reemit(binding, value);
        };
        let args = self.rewrite_args(&args, to);
        let new_call = Expr::call_full(call.op.clone(), args, attrs, call.sinfo_args.clone());
        let mut value = self.normalize(new_call);
        if !binding.var.is_dataflow() {
            let orig = dtypes_of(binding.var.struct_info(), None);
            value = self.rewrite(&value, &orig);
        } else if pol == Policy::Always {
            let mixed = dtypes_of(value.struct_info(), Some(self.dtype));
            value = self.rewrite(&value, &mixed);
        }
        self.reemit(binding, value);
    }
}

/// The dtype each leaf is stored in: the mixed dtype where only mixed
/// reads were seen, else what it has.
fn combine(from: &DtypeMsg, need: &Msg<Need>, mixed: DataType) -> DtypeMsg {
    match (from, need) {
        (Msg::Leaf(dt), Msg::Leaf(Need::Mixed)) if !dt.is_void() => Msg::Leaf(mixed),
        (Msg::Tuple(fs), Msg::Tuple(ns)) if fs.len() == ns.len() => Msg::Tuple(
            fs.iter()
                .zip(ns)
                .map(|(f, n)| combine(f, n, mixed))
                .collect(),
        ),
        _ => from.clone(),
    }
}

impl ExprMutator for Rewriter {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    /// A parameter named in `input_names` takes the mixed dtype.
    fn visit_var_def_var(&mut self, var: &Var) -> Var {
        if !self.input_names.contains(var.name_hint()) || !self.params.contains(var) {
            return var.clone();
        }
        let Some(mut t) = var
            .struct_info()
            .and_then(|s| s.as_tensor())
            .filter(|t| t.dtype == DataType::f32())
            .cloned()
        else {
            return var.clone();
        };
        if let Some(v) = self.var_remap().get(var) {
            return v.clone();
        }
        t.dtype = self.dtype;
        let v = var.with_struct_info(StructInfo::new(StructInfoKind::Tensor(t)));
        self.var_remap().insert(var.clone(), v.clone());
        v
    }

    fn visit_var(&mut self, expr: &Expr, var: &Var) -> Expr {
        let Some(cur) = self.var_remap().get(var).cloned() else {
            return expr.clone();
        };
        if !self.builder().current_block_is_dataflow() {
            return Expr::var(&cur);
        }
        // A use outside an op call reads the original dtype.
        let orig = dtypes_of(var.struct_info(), None);
        let e = Expr::var(&cur);
        let r = self.rewrite(&e, &orig);
        self.normalize(r)
    }

    fn visit_dataflow_block(&mut self, block: &BindingBlock) {
        if let Err(e) = self.builder().begin_dataflow() {
            self.builder().report(e);
        }
        let saved: Vec<(Var, Option<Var>)> = self
            .params
            .iter()
            .map(|p| (p.clone(), self.state.var_remap.get(p).cloned()))
            .collect();
        for p in self.params.clone() {
            self.cast_if_mixed_only(&p);
        }
        block.bindings.iter().for_each(|b| self.visit_binding(b));
        // The block-local versions of the parameters end with the block.
        for (p, before) in saved {
            match before {
                Some(v) => self.var_remap().insert(p, v),
                None => self.var_remap().remove(&p),
            };
        }
        if let Err(e) = self.builder().end_dataflow() {
            self.builder().report(e);
        }
    }

    fn visit_binding(&mut self, binding: &Binding) {
        match binding {
            Binding::VarBinding(b) => self.visit_var_binding(b),
            Binding::MatchCast(b) => self.visit_match_cast(b),
        }
        // Outputs keep their dtype for the code after the block.
        if self.builder().current_block_is_dataflow() && binding.var().is_dataflow() {
            self.cast_if_mixed_only(binding.var());
        }
    }

    fn visit_var_binding(&mut self, binding: &VarBinding) {
        if !self.builder().current_block_is_dataflow() {
            let value = self.visit_expr(&binding.value);
            return self.reemit_binding(binding, value);
        }
        match binding.value.kind() {
            ExprKind::Call(call) => match call.op.kind() {
                ExprKind::Op(op) => {
                    let name = op.name().to_string();
                    self.op_call(binding, call, &name)
                }
                _ => {
                    let value = self.visit_expr(&binding.value);
                    self.reemit_binding(binding, value)
                }
            },
            ExprKind::Tuple(fields) => {
                let fields: Vec<Expr> = fields.iter().map(|f| self.remap(f)).collect();
                let mut value = self.normalize(Expr::tuple(fields));
                if !binding.var.is_dataflow() {
                    let orig = dtypes_of(binding.var.struct_info(), None);
                    value = self.rewrite(&value, &orig);
                }
                self.reemit(binding, value)
            }
            ExprKind::TupleGetItem(t, i) => {
                let t = self.remap(t);
                let mut value = self.normalize(Expr::tuple_get_item(t, *i));
                if !binding.var.is_dataflow() {
                    let orig = dtypes_of(binding.var.struct_info(), None);
                    value = self.rewrite(&value, &orig);
                }
                self.reemit(binding, value)
            }
            _ => {
                let value = self.visit_expr(&binding.value);
                self.reemit_binding(binding, value)
            }
        }
    }
}

#[cfg(test)]
mod tests;
