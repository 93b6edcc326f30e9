//! `BlockBuilder::call_te` / `emit_te`: a TE computation over Relax values,
//! added to the module as a PrimFunc and called through `call_tir`
//! (TVM's `bb.call_te` / `bb.emit_te`).
//!
//! 1. Each argument becomes placeholders: a tensor one, a tuple one per
//!    field (recursively; a tuple held in a variable is projected with bound
//!    `TupleGetItem`s). A tensor needs a known dtype and rank; its dims are
//!    its StructInfo's, in the caller's symbolic variables, or fresh
//!    variables when only the rank is known.
//! 2. The closure builds the output stages from the placeholders; they are
//!    lowered ([`create_prim_func`]) and the PrimFunc is added to the
//!    builder's module under a unique name derived from the hint.
//! 3. The result is `R.call_tir(gv, (args…), out_sinfo, tir_vars)`: the
//!    output StructInfo is the stages' shapes (simplified) in the caller's
//!    variables, one tensor for one output and a tuple for several;
//!    `tir_vars` (a shape of the caller's variables) is present when the
//!    PrimFunc has scalar parameters. A shape or scalar that depends on a
//!    dim the caller does not know is an error.

use super::{create_prim_func, placeholder, Tensor};
use crate::arith::Analyzer;
use crate::block_builder::BlockBuilder;
use crate::ir::{Attrs, Expr, ExprKind, PrimExpr, StructInfo, TirVar, Var};
use relax_runtime::{Diagnostic, Error};
use std::collections::HashSet;

fn err(message: impl Into<String>) -> Error {
    Error::Compile(vec![Diagnostic::new("call-te", message)])
}

/// The flattened arguments of a `call_te`.
#[derive(Default)]
struct Args {
    exprs: Vec<Expr>,
    tensors: Vec<Tensor>,
    names: HashSet<String>,
    /// Variables made up for dims the caller does not know.
    private: HashSet<TirVar>,
}

impl BlockBuilder {
    /// Builds the PrimFunc of `te_func` over `args` and returns the
    /// `call_tir` of it. See [`crate::tir::te::call_te`].
    pub fn call_te(
        &mut self,
        name_hint: &str,
        args: &[Expr],
        te_func: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>, Error>,
    ) -> Result<Expr, Error> {
        self.call_te_with_attrs(name_hint, args, Attrs::new(), te_func)
    }

    /// [`BlockBuilder::call_te`] giving the PrimFunc the attributes `attrs`.
    pub fn call_te_with_attrs(
        &mut self,
        name_hint: &str,
        args: &[Expr],
        attrs: Attrs,
        te_func: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>, Error>,
    ) -> Result<Expr, Error> {
        let mut flat = Args::default();
        for (i, a) in args.iter().enumerate() {
            let a = self.normalize_argument(a.clone())?;
            let name = match a.kind() {
                ExprKind::Var(v) => v.name_hint().to_string(),
                _ => format!("A{i}"),
            };
            self.flatten_te_arg(&a, &name, &mut flat)?;
        }
        let outputs = te_func(&flat.tensors)?;
        let lowered = create_prim_func(&flat.tensors, &outputs)
            .map_err(|m| err(format!("{name_hint}: {m}")))?;
        let depends_on_private =
            |e: &PrimExpr| e.free_vars().iter().any(|v| flat.private.contains(v));
        if let Some(v) = lowered
            .scalar_args
            .iter()
            .find(|v| flat.private.contains(v))
        {
            return Err(err(format!(
                "{name_hint}: the computation needs the value of `{}`, a dim no argument's StructInfo gives",
                v.name()
            )));
        }
        let mut analyzer = Analyzer::new();
        for t in &outputs {
            for v in t.shape().iter().flat_map(|d| d.free_vars()) {
                analyzer.mark_non_negative(&v);
            }
        }
        let mut out_sinfo = Vec::with_capacity(outputs.len());
        for t in &outputs {
            if let Some(d) = t.shape().iter().find(|d| depends_on_private(d)) {
                return Err(err(format!(
                    "{name_hint}: the output dim `{d}` of `{}` depends on a dim no argument's StructInfo gives",
                    t.name()
                )));
            }
            let dims = t.shape().iter().map(|d| analyzer.simplify(d)).collect();
            out_sinfo.push(StructInfo::tensor(dims, t.dtype()));
        }
        let mut func = lowered.func;
        func.attrs = attrs;
        let gv = self.add_func(func, name_hint);
        let mut call_args = vec![Expr::global_var(gv), Expr::tuple(flat.exprs)];
        if !lowered.scalar_args.is_empty() {
            call_args.push(Expr::shape(
                lowered.scalar_args.iter().map(TirVar::to_expr).collect(),
            ));
        }
        let call = Expr::call_full(
            Expr::op("relax.call_tir"),
            call_args,
            Attrs::new(),
            out_sinfo,
        );
        self.normalize(call)
    }

    /// [`BlockBuilder::call_te`], bound to a fresh variable.
    pub fn emit_te(
        &mut self,
        name_hint: &str,
        args: &[Expr],
        te_func: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>, Error>,
    ) -> Result<Var, Error> {
        let call = self.call_te(name_hint, args, te_func)?;
        self.emit(call)
    }

    fn flatten_te_arg(&mut self, arg: &Expr, name: &str, flat: &mut Args) -> Result<(), Error> {
        let sinfo = arg
            .struct_info()
            .cloned()
            .ok_or_else(|| err(format!("argument `{name}` has no StructInfo")))?;
        if let Some(fields) = sinfo.as_tuple() {
            for i in 0..fields.len() {
                let field = match arg.kind() {
                    ExprKind::Tuple(fs) => fs[i].clone(),
                    _ => Expr::var(&self.emit(Expr::tuple_get_item(arg.clone(), i))?),
                };
                self.flatten_te_arg(&field, &format!("{name}_{i}"), flat)?;
            }
            return Ok(());
        }
        let t = sinfo.as_tensor().ok_or_else(|| {
            err(format!(
                "argument `{name}` must be a tensor or a tuple of tensors, found {sinfo}"
            ))
        })?;
        if t.is_unknown_dtype() || t.is_unknown_ndim() {
            return Err(err(format!(
                "argument `{name}` needs a known dtype and rank, found {sinfo}"
            )));
        }
        let shape = match t.shape_values() {
            Some(v) => v.to_vec(),
            None => (0..t.ndim)
                .map(|i| {
                    let v = TirVar::new(format!("{name}_d{i}"));
                    flat.private.insert(v.clone());
                    v.to_expr()
                })
                .collect(),
        };
        let mut unique = name.to_string();
        let mut k = 1;
        while !flat.names.insert(unique.clone()) {
            unique = format!("{name}_{k}");
            k += 1;
        }
        flat.tensors.push(placeholder(&unique, shape, t.dtype));
        flat.exprs.push(arg.clone());
        Ok(())
    }
}
