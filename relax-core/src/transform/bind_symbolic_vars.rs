//! `BindSymbolicVars`: replace symbolic dims of a function by expressions,
//! usually constants (TVM's `relax.transform.BindSymbolicVars` and
//! `Function.bind_symbolic_vars`).
//!
//! Each replacement names a symbolic variable by its name (`"n"`) or as
//! the `TirVar` itself, and gives a `PrimExpr`. The variable is replaced
//! everywhere in the function: parameter and result annotations, shapes
//! and prim values, `match_cast`, `call_tir`'s output StructInfo, op
//! attributes holding expressions (a `strided_slice` bound); the results
//! are simplified (`2 * m * n` with `n = 16` is `m * 32`), and every
//! binding's StructInfo is inferred again. The parameters stay (a
//! parameter whose shape became constant still has to be passed), unlike
//! `BindParams`, which removes the parameters it binds.
//!
//! Errors, as TVM reports them: a name no symbolic variable of the
//! function has, a name two different variables share, a `TirVar` the
//! function does not use, one variable given twice (by name and as a
//! variable), and a replacement that leaves a variable the parameters no
//! longer define.
//!
//! The pass applies to one function ([`BindSymbolicVars::in_function`])
//! or to every Relax function of the module; then a replacement must apply
//! to at least one of them.

use super::Pass;
use crate::arith::Analyzer;
use crate::ir::{
    AttrValue, Attrs, Binding, Call, Expr, ExprKind, Function, GlobalVar, IRModule, MatchCast,
    PrimExpr, StructInfo, TirVar, Var,
};
use crate::mutator::{ExprMutator, MutatorState};
use relax_runtime::{Diagnostic, Error};
use std::collections::{HashMap, HashSet};

/// A symbolic variable named in a replacement.
#[derive(Clone, Debug)]
pub enum SymbolicVar {
    /// By name: must name exactly one variable of the function.
    Name(String),
    /// The variable itself.
    Var(TirVar),
}

impl From<&str> for SymbolicVar {
    fn from(name: &str) -> Self {
        SymbolicVar::Name(name.to_string())
    }
}

impl From<String> for SymbolicVar {
    fn from(name: String) -> Self {
        SymbolicVar::Name(name)
    }
}

impl From<TirVar> for SymbolicVar {
    fn from(var: TirVar) -> Self {
        SymbolicVar::Var(var)
    }
}

/// The pass. See the module docs.
#[derive(Clone, Debug)]
pub struct BindSymbolicVars {
    bindings: Vec<(SymbolicVar, PrimExpr)>,
    func: Option<String>,
}

impl BindSymbolicVars {
    /// Replaces each variable by its expression, in every Relax function.
    pub fn new<K: Into<SymbolicVar>, V: Into<PrimExpr>>(
        bindings: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        BindSymbolicVars {
            bindings: bindings
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            func: None,
        }
    }

    /// Only in the function `name`.
    pub fn in_function(mut self, name: impl Into<String>) -> Self {
        self.func = Some(name.into());
        self
    }

    /// `func` with the replacements applied; `Ok(None)` when none of them
    /// names a variable of `func`.
    pub fn bind_function(&self, func: &Function) -> Result<Option<Function>, Error> {
        self.bind_with(func, &symbolic_vars(func))
    }

    /// [`BindSymbolicVars::bind_function`], given `func`'s symbolic
    /// variables.
    fn bind_with(&self, func: &Function, vars: &[TirVar]) -> Result<Option<Function>, Error> {
        let mut map: HashMap<TirVar, PrimExpr> = HashMap::new();
        for (key, value) in &self.bindings {
            let var = match key {
                SymbolicVar::Name(name) => {
                    let named: Vec<&TirVar> = vars.iter().filter(|v| v.name() == name).collect();
                    match named.as_slice() {
                        [] => continue,
                        [v] => (*v).clone(),
                        _ => {
                            return Err(error(format!(
                            "{} symbolic variables are named `{name}`: replace them as variables, not by name",
                            named.len()
                        )))
                        }
                    }
                }
                SymbolicVar::Var(v) if vars.contains(v) => v.clone(),
                SymbolicVar::Var(_) => continue,
            };
            if map.insert(var.clone(), value.clone()).is_some() {
                return Err(error(format!(
                    "the symbolic variable `{}` is replaced twice",
                    var.name()
                )));
            }
        }
        if map.is_empty() {
            return Ok(None);
        }
        let analyzer = Analyzer::new();
        let sub = |e: &PrimExpr| analyzer.simplify(&e.substitute_map(&map));
        let params: Vec<Var> = func
            .params
            .iter()
            .map(|p| {
                Var::new(
                    p.name_hint(),
                    p.struct_info().map(|s| s.map_prim_exprs(&sub)),
                )
            })
            .collect();
        // What the new signature defines must cover what it uses.
        let defined: HashSet<TirVar> = params
            .iter()
            .filter_map(|p| p.struct_info())
            .flat_map(|s| s.definable_tir_vars())
            .collect();
        for v in params
            .iter()
            .filter_map(|p| p.struct_info())
            .flat_map(|s| s.tir_vars())
        {
            if !defined.contains(&v) {
                return Err(error(format!(
                    "after the replacements the parameters use the symbolic variable `{}` without defining it",
                    v.name()
                )));
            }
        }
        let remap: HashMap<Var, Expr> = func
            .params
            .iter()
            .zip(&params)
            .map(|(old, new)| (old.clone(), Expr::var(new)))
            .collect();
        let rewritten = Function {
            params,
            ret_struct_info: func.ret_struct_info.map_prim_exprs(&sub),
            ..func.clone()
        };
        let mut m = Substitute {
            state: MutatorState::default(),
            vars: &remap,
            sub: &sub,
        };
        let e = m.visit_expr(&Expr::function(rewritten));
        let errors = m.state.builder.take_errors();
        if !errors.is_empty() {
            return Err(Error::Compile(errors));
        }
        e.as_function()
            .cloned()
            .map(Some)
            .ok_or_else(|| error("rewriting did not return a function".into()))
    }
}

fn error(message: String) -> Error {
    Error::Compile(vec![Diagnostic::new("bind-symbolic-vars", message)])
}

impl Pass for BindSymbolicVars {
    fn name(&self) -> &str {
        "BindSymbolicVars"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        if let Some(name) = &self.func {
            if module.get_relax(name).is_none() {
                return Err(error(format!("the module has no Relax function `{name}`")));
            }
        }
        // The functions bound, each with its symbolic variables.
        let selected: Vec<(&GlobalVar, &Function, Vec<TirVar>)> = module
            .functions()
            .filter(|(gv, _)| self.func.as_deref().is_none_or(|n| n == gv.name_hint()))
            .filter_map(|(gv, f)| f.as_relax().map(|f| (gv, f, symbolic_vars(f))))
            .collect();
        let mut out = module.clone();
        for (gv, func, vars) in &selected {
            if let Some(new) = self.bind_with(func, vars)? {
                out.add((*gv).clone(), new);
            }
        }
        // Every replacement must name a variable somewhere.
        for (key, _) in &self.bindings {
            let used = selected.iter().any(|(_, _, vars)| match key {
                SymbolicVar::Name(n) => vars.iter().any(|v| v.name() == n),
                SymbolicVar::Var(v) => vars.contains(v),
            });
            if !used {
                let what = match key {
                    SymbolicVar::Name(n) => format!("named `{n}`"),
                    SymbolicVar::Var(v) => format!("`{}` (as a variable)", v.name()),
                };
                return Err(error(format!("no function has a symbolic variable {what}")));
            }
        }
        Ok(out)
    }
}

/// A copy of `func` whose symbolic variables are new ones of the same
/// names (TVM's `CopyWithNewVars`, for a function derived from another:
/// two functions of a module never share a symbolic variable).
pub fn with_fresh_symbolic_vars(func: &Function) -> Result<Function, Error> {
    let vars = symbolic_vars(func);
    let fresh = BindSymbolicVars::new(vars.iter().map(|v| {
        let new = TirVar::with_dtype(v.name(), v.dtype());
        (SymbolicVar::Var(v.clone()), PrimExpr::var(&new))
    }));
    Ok(fresh
        .bind_with(func, &vars)?
        .unwrap_or_else(|| func.clone()))
}

/// The symbolic variables of `func`: those of its parameters' and result's
/// StructInfo and of its top-level `match_cast`s, each once.
fn symbolic_vars(func: &Function) -> Vec<TirVar> {
    let mut out: Vec<TirVar> = Vec::new();
    let mut add = |s: &StructInfo| {
        for v in s.tir_vars() {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    };
    for p in &func.params {
        if let Some(s) = p.struct_info() {
            add(s);
        }
    }
    add(&func.ret_struct_info);
    if let Some(seq) = func.body.as_seq() {
        for b in seq.blocks.iter().flat_map(|b| &b.bindings) {
            if let Binding::MatchCast(mc) = b {
                add(&mc.struct_info);
            }
        }
    }
    out
}

/// Replaces parameters by the new ones and every PrimExpr by `sub(expr)`.
struct Substitute<'a> {
    state: MutatorState,
    vars: &'a HashMap<Var, Expr>,
    sub: &'a dyn Fn(&PrimExpr) -> PrimExpr,
}

impl Substitute<'_> {
    fn attr(&self, v: &AttrValue) -> AttrValue {
        match v {
            AttrValue::PrimExpr(e) => AttrValue::PrimExpr((self.sub)(e)),
            AttrValue::Array(items) => {
                AttrValue::Array(items.iter().map(|i| self.attr(i)).collect())
            }
            other => other.clone(),
        }
    }
}

impl ExprMutator for Substitute<'_> {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }
    fn visit_var(&mut self, expr: &Expr, var: &Var) -> Expr {
        if let Some(e) = self.vars.get(var) {
            return e.clone();
        }
        self.var_remap()
            .get(var)
            .map_or_else(|| expr.clone(), Expr::var)
    }
    fn visit_leaf(&mut self, expr: &Expr) -> Expr {
        let new = match expr.kind() {
            ExprKind::ShapeExpr(values) => {
                Expr::shape(values.iter().map(|v| (self.sub)(v)).collect())
            }
            ExprKind::PrimValue(v) => Expr::prim_value((self.sub)(v)),
            _ => return expr.clone(),
        };
        self.normalize(new)
    }
    fn visit_call(&mut self, _expr: &Expr, call: &Call) -> Expr {
        let op = self.visit_expr(&call.op);
        let args: Vec<Expr> = call.args.iter().map(|a| self.visit_expr(a)).collect();
        let mut attrs = Attrs::new();
        for (k, v) in call.attrs.iter() {
            attrs = attrs.with(k, self.attr(v));
        }
        let sinfo_args = call
            .sinfo_args
            .iter()
            .map(|s| s.map_prim_exprs(self.sub))
            .collect();
        self.normalize(Expr::call_full(op, args, attrs, sinfo_args))
    }
    fn visit_match_cast(&mut self, binding: &MatchCast) {
        let value = self.visit_expr(&binding.value);
        let value = self.normalize_argument(value);
        let sinfo = binding.struct_info.map_prim_exprs(self.sub);
        let old = self.visit_var_def(&binding.var);
        let var = old.with_struct_info(sinfo.clone());
        self.var_remap().insert(binding.var.clone(), var.clone());
        let b = Binding::match_cast(var, value, sinfo);
        if let Err(e) = self.builder().emit_normalized(b) {
            self.builder().report(e);
        }
    }
}

#[cfg(test)]
mod tests;
