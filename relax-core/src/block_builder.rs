//! `BlockBuilder`: build Relax functions binding by binding, in normal form.
//!
//! This is TVM's BlockBuilder. It keeps a module under construction and a
//! stack of open function scopes; each scope collects binding blocks.
//!
//! 1. `emit` *normalizes* its expression first: nested non-leaf arguments are
//!    bound to fresh variables (A-normal form), `If` branches become
//!    `SeqExpr`s, and every expression gets its StructInfo eagerly (through
//!    [`crate::analysis::derive`] and the op registry). Then the value is
//!    bound to a fresh variable whose StructInfo is the value's.
//! 2. Inside a dataflow block, `emit` makes a `DataflowVar` and `emit_output`
//!    a `Var` that escapes the block. Outside one, bindings go to an ordinary
//!    binding block that is opened implicitly.
//! 3. `emit_match_cast` brings the symbolic variables its pattern defines into
//!    scope.
//! 4. Blocks are consolidated as the spec requires: empty blocks are dropped
//!    and adjacent blocks of the same kind merge.
//! 5. Fresh variables are named `lv`, `lv1`, … inside dataflow blocks and
//!    `gv`, `gv1`, … for outputs, unique within a function, as TVM names them.
//!
//! Two styles are offered. The imperative one mirrors TVM's C++ API
//! (`begin_function` / `begin_dataflow` / `end_dataflow` /
//! `emit_func_output`); the closure one mirrors Python's `with` blocks
//! (`function(name, params, |bb| …)`, `dataflow(|bb| …)`).

use crate::analysis::derive::{derive_struct_info, DeriveContext};
use crate::analysis::struct_info_analysis::erase_to_well_defined;
use crate::arith::Analyzer;
use crate::ir::{
    Attrs, BaseFunc, Binding, BindingBlock, Expr, ExprKind, Function, GlobalVar, IRModule,
    StructInfo, TirVar, Var, VarMap,
};
use relax_runtime::{Diagnostic, Error};
use std::collections::{HashMap, HashSet};

/// An open block: its kind and the bindings so far.
struct BlockFrame {
    is_dataflow: bool,
    bindings: Vec<Binding>,
}

/// A binding scope: a function body or an `If` branch.
#[derive(Default)]
struct Scope {
    blocks: Vec<BindingBlock>,
    current: Option<BlockFrame>,
}

impl Scope {
    /// Closes the open block, merging it into the previous one of the same
    /// kind and dropping it if empty.
    fn close_block(&mut self) {
        let Some(frame) = self.current.take() else {
            return;
        };
        if frame.bindings.is_empty() {
            return;
        }
        match self.blocks.last_mut() {
            Some(last) if last.is_dataflow == frame.is_dataflow => {
                last.bindings.extend(frame.bindings)
            }
            _ => self.blocks.push(BindingBlock {
                bindings: frame.bindings,
                is_dataflow: frame.is_dataflow,
            }),
        }
    }
}

/// A function being built.
struct FunctionFrame {
    name: String,
    params: Vec<Var>,
    attrs: Attrs,
    is_pure: bool,
    private: bool,
    scopes: Vec<Scope>,
    /// Next numeric suffix per name hint.
    names: HashMap<String, usize>,
    /// Every name defined in the function so far.
    used: HashSet<String>,
    /// Symbolic variables defined so far (by the parameters or match_casts).
    tir_vars: HashSet<TirVar>,
}

/// Builds an IRModule function by function. See the module docs.
#[derive(Default)]
pub struct BlockBuilder {
    module: IRModule,
    frames: Vec<FunctionFrame>,
    bindings: VarMap<Expr>,
    module_names: HashMap<String, usize>,
    /// Errors reported by users of the builder that keep going (mutators).
    errors: Vec<Diagnostic>,
}

fn err(code: &'static str, message: impl Into<String>) -> Error {
    Error::Compile(vec![Diagnostic::new(code, message)])
}

impl BlockBuilder {
    /// A builder with an empty module.
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder that adds to `module`.
    pub fn with_module(module: IRModule) -> Self {
        BlockBuilder {
            module,
            ..Self::default()
        }
    }

    // ----- functions ---------------------------------------------------

    /// Opens the function `name` with `params` (Vars carrying their
    /// annotations). Public by default; see [`BlockBuilder::set_private`].
    pub fn begin_function(&mut self, name: &str, params: Vec<Var>) {
        let mut tir_vars = HashSet::new();
        for p in &params {
            if let Some(s) = p.struct_info() {
                tir_vars.extend(s.definable_tir_vars());
            }
        }
        let used = params.iter().map(|p| p.name_hint().to_string()).collect();
        self.frames.push(FunctionFrame {
            name: name.to_string(),
            params,
            attrs: Attrs::new(),
            is_pure: true,
            private: false,
            scopes: vec![Scope::default()],
            names: HashMap::new(),
            used,
            tir_vars,
        });
    }

    /// Makes the open function private (no `global_symbol`).
    pub fn set_private(&mut self, private: bool) -> Result<(), Error> {
        self.frame_mut()?.private = private;
        Ok(())
    }

    /// Marks the open function impure (`@R.function(pure=False)`).
    pub fn set_pure(&mut self, pure: bool) -> Result<(), Error> {
        self.frame_mut()?.is_pure = pure;
        Ok(())
    }

    /// Sets an attribute of the open function (`R.func_attr`).
    pub fn set_func_attr(
        &mut self,
        key: &str,
        value: impl Into<crate::ir::AttrValue>,
    ) -> Result<(), Error> {
        let f = self.frame_mut()?;
        f.attrs = f.attrs.with(key, value);
        Ok(())
    }

    /// Closes the open function with `output` as its result and adds it to
    /// the module. The result StructInfo is the output's, erased of what is
    /// not defined by the parameters.
    pub fn emit_func_output(&mut self, output: impl Into<Expr>) -> Result<GlobalVar, Error> {
        if self.frames.is_empty() {
            return Err(err(
                "builder-no-function",
                "emit_func_output without an open function",
            ));
        }
        if self
            .frame()?
            .scopes
            .last()
            .and_then(|s| s.current.as_ref())
            .is_some_and(|b| b.is_dataflow)
        {
            return Err(err(
                "builder-open-dataflow",
                "emit_func_output inside a dataflow block: end the block first",
            ));
        }
        let output = self.normalize_argument(output.into())?;
        let mut frame = self
            .frames
            .pop()
            .expect("checked above that a function is open");
        let mut scope = frame
            .scopes
            .pop()
            .expect("a function frame always has its body scope");
        scope.close_block();
        let body = self.make_function_body(scope.blocks, output, &frame.params)?;
        let param_vars: HashSet<TirVar> = frame
            .params
            .iter()
            .filter_map(|p| p.struct_info())
            .flat_map(|s| s.definable_tir_vars())
            .collect();
        let body_sinfo = body
            .struct_info()
            .cloned()
            .unwrap_or_else(StructInfo::object);
        let ret = erase_to_well_defined(&body_sinfo, &HashMap::new(), &HashMap::new(), &|v| {
            param_vars.contains(v)
        });
        let mut func = Function {
            params: frame.params,
            body,
            ret_struct_info: ret,
            is_pure: frame.is_pure,
            attrs: frame.attrs,
        };
        if !frame.private {
            func = func.with_global_symbol(&frame.name);
        }
        let gv = GlobalVar::new(&frame.name);
        self.module.add(gv.clone(), func);
        Ok(gv)
    }

    /// Builds a whole function: opens it, runs `body`, and closes it with
    /// the expression `body` returns.
    pub fn function(
        &mut self,
        name: &str,
        params: Vec<Var>,
        body: impl FnOnce(&mut BlockBuilder) -> Result<Expr, Error>,
    ) -> Result<GlobalVar, Error> {
        self.begin_function(name, params);
        match body(self) {
            Ok(out) => {
                self.end_open_block()?;
                self.emit_func_output(out)
            }
            Err(e) => {
                self.frames.pop();
                Err(e)
            }
        }
    }

    /// Opens the body scope of a function value (a closure, or a function a
    /// mutator rebuilds) whose parameters are `params`; it is not added to
    /// the module. Close it with [`BlockBuilder::end_scope`].
    pub fn begin_scope(&mut self, params: &[Var]) {
        self.begin_function("", params.to_vec());
        self.frames.last_mut().expect("just pushed").private = true;
    }

    /// Closes the scope opened by [`BlockBuilder::begin_scope`] with `output`
    /// as its result and returns the body as a `SeqExpr`.
    pub fn end_scope(&mut self, output: Expr) -> Result<Expr, Error> {
        let output = self.normalize_argument(output);
        let mut frame = self
            .frames
            .pop()
            .ok_or_else(|| err("builder-no-function", "end_scope without begin_scope"))?;
        let mut scope = frame
            .scopes
            .pop()
            .expect("a function frame always has its body scope");
        scope.close_block();
        self.make_function_body(scope.blocks, output?, &frame.params)
    }

    /// Opens a nested scope (an `If` branch) in the open function.
    pub fn begin_inner_scope(&mut self) -> Result<(), Error> {
        self.frame_mut()?.scopes.push(Scope::default());
        Ok(())
    }

    /// Closes the scope opened by [`BlockBuilder::begin_inner_scope`] with
    /// `output` as its result and returns it as a `SeqExpr`.
    pub fn end_inner_scope(&mut self, output: Expr) -> Result<Expr, Error> {
        let output = self.normalize_argument(output);
        let frame = self.frame_mut()?;
        if frame.scopes.len() < 2 {
            return Err(err(
                "builder-no-scope",
                "end_inner_scope without begin_inner_scope",
            ));
        }
        let mut scope = frame.scopes.pop().expect("checked above");
        scope.close_block();
        self.make_seq(scope.blocks, output?)
    }

    /// Closes the open block of the innermost scope (of either kind).
    pub fn end_block(&mut self) -> Result<(), Error> {
        self.end_open_block()
    }

    // ----- blocks -------------------------------------------------------

    /// Opens a dataflow block.
    pub fn begin_dataflow(&mut self) -> Result<(), Error> {
        let scope = self.scope_mut()?;
        if scope.current.as_ref().is_some_and(|b| b.is_dataflow) {
            return Err(err(
                "builder-nested-dataflow",
                "a dataflow block is already open",
            ));
        }
        scope.close_block();
        scope.current = Some(BlockFrame {
            is_dataflow: true,
            bindings: vec![],
        });
        Ok(())
    }

    /// Closes the open dataflow block.
    pub fn end_dataflow(&mut self) -> Result<(), Error> {
        let scope = self.scope_mut()?;
        if !scope.current.as_ref().is_some_and(|b| b.is_dataflow) {
            return Err(err(
                "builder-no-dataflow",
                "end_dataflow without an open dataflow block",
            ));
        }
        scope.close_block();
        Ok(())
    }

    /// Runs `body` inside a dataflow block.
    pub fn dataflow<T>(
        &mut self,
        body: impl FnOnce(&mut BlockBuilder) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.begin_dataflow()?;
        let out = body(self)?;
        self.end_dataflow()?;
        Ok(out)
    }

    /// Whether the innermost open block is a dataflow block.
    pub fn current_block_is_dataflow(&self) -> bool {
        self.frames
            .last()
            .and_then(|f| f.scopes.last())
            .and_then(|s| s.current.as_ref())
            .is_some_and(|b| b.is_dataflow)
    }

    fn end_open_block(&mut self) -> Result<(), Error> {
        self.scope_mut()?.close_block();
        Ok(())
    }

    // ----- emitting -----------------------------------------------------

    /// Normalizes `expr` and binds it to a fresh variable (a `DataflowVar`
    /// inside a dataflow block). Returns the variable.
    pub fn emit(&mut self, expr: impl Into<Expr>) -> Result<Var, Error> {
        let is_df = self.current_block_is_dataflow();
        self.emit_named(expr, if is_df { "lv" } else { "gv" })
    }

    /// [`BlockBuilder::emit`] with a name hint.
    pub fn emit_named(&mut self, expr: impl Into<Expr>, name_hint: &str) -> Result<Var, Error> {
        let value = self.normalize(expr.into())?;
        let is_df = self.current_block_is_dataflow();
        let var = self.fresh_var(name_hint, value.struct_info().cloned(), is_df)?;
        self.push_binding(Binding::var_binding(var.clone(), value))?;
        Ok(var)
    }

    /// Inside a dataflow block: binds `expr` to a `Var` that is visible
    /// after the block.
    pub fn emit_output(&mut self, expr: impl Into<Expr>) -> Result<Var, Error> {
        self.emit_output_named(expr, "gv")
    }

    /// [`BlockBuilder::emit_output`] with a name hint.
    pub fn emit_output_named(
        &mut self,
        expr: impl Into<Expr>,
        name_hint: &str,
    ) -> Result<Var, Error> {
        if !self.current_block_is_dataflow() {
            return Err(err(
                "builder-output-outside-dataflow",
                "emit_output is only meaningful inside a dataflow block",
            ));
        }
        let value = self.normalize(expr.into())?;
        let var = self.fresh_var(name_hint, value.struct_info().cloned(), false)?;
        self.push_binding(Binding::var_binding(var.clone(), value))?;
        Ok(var)
    }

    /// Emits `var = match_cast(value, struct_info)`; the symbolic variables
    /// standing alone in `struct_info` come into scope.
    pub fn emit_match_cast(
        &mut self,
        value: impl Into<Expr>,
        struct_info: StructInfo,
    ) -> Result<Var, Error> {
        let value = self.normalize_argument(value.into())?;
        let is_df = self.current_block_is_dataflow();
        let var = self.fresh_var(
            if is_df { "lv" } else { "gv" },
            Some(struct_info.clone()),
            is_df,
        )?;
        self.frame_mut()?
            .tir_vars
            .extend(struct_info.definable_tir_vars());
        self.push_binding(Binding::match_cast(var.clone(), value, struct_info))?;
        Ok(var)
    }

    /// Emits an already-normalized binding as it is.
    pub fn emit_normalized(&mut self, binding: Binding) -> Result<(), Error> {
        let frame = self.frame_mut()?;
        frame.used.insert(binding.var().name_hint().to_string());
        if let Binding::MatchCast(m) = &binding {
            frame.tir_vars.extend(m.struct_info.definable_tir_vars());
        }
        self.push_binding(binding)
    }

    /// The value bound to `var` by this builder (or its input module's
    /// functions, once visited), if any.
    pub fn lookup_binding(&self, var: &Var) -> Option<&Expr> {
        self.bindings.get(var)
    }

    fn push_binding(&mut self, binding: Binding) -> Result<(), Error> {
        self.bindings
            .insert(binding.var().clone(), binding.value().clone());
        let scope = self.scope_mut()?;
        if scope.current.is_none() {
            scope.current = Some(BlockFrame {
                is_dataflow: false,
                bindings: vec![],
            });
        }
        scope
            .current
            .as_mut()
            .expect("opened above")
            .bindings
            .push(binding);
        Ok(())
    }

    fn fresh_var(
        &mut self,
        hint: &str,
        sinfo: Option<StructInfo>,
        dataflow: bool,
    ) -> Result<Var, Error> {
        let name = self.unique_name(hint)?;
        Ok(if dataflow {
            Var::new_dataflow(name, sinfo)
        } else {
            Var::new(name, sinfo)
        })
    }

    /// `hint`, or `hint` with the smallest numeric suffix not yet used in the
    /// open function (`lv`, `lv1`, `lv2`, …).
    pub fn unique_name(&mut self, hint: &str) -> Result<String, Error> {
        let frame = self.frame_mut()?;
        loop {
            let n = frame.names.entry(hint.to_string()).or_insert(0);
            let name = if *n == 0 {
                hint.to_string()
            } else {
                format!("{hint}{n}")
            };
            *n += 1;
            if frame.used.insert(name.clone()) {
                return Ok(name);
            }
        }
    }

    // ----- normalization --------------------------------------------------

    /// Normalizes `expr` (see the module docs): binds nested non-leaf
    /// arguments to fresh variables in the current block and fills in every
    /// StructInfo. The result is a leaf or a non-leaf over leaves.
    pub fn normalize(&mut self, expr: Expr) -> Result<Expr, Error> {
        let rebuilt = match expr.kind() {
            ExprKind::Call(call) => {
                let op = self.normalize_argument(call.op.clone())?;
                let args = call
                    .args
                    .iter()
                    .map(|a| self.normalize_argument(a.clone()))
                    .collect::<Result<Vec<_>, _>>()?;
                Expr::call_full(op, args, call.attrs.clone(), call.sinfo_args.clone())
            }
            ExprKind::Tuple(fields) => Expr::tuple(
                fields
                    .iter()
                    .map(|f| self.normalize_argument(f.clone()))
                    .collect::<Result<_, _>>()?,
            ),
            ExprKind::TupleGetItem(t, i) => {
                Expr::tuple_get_item(self.normalize_argument(t.clone())?, *i)
            }
            ExprKind::If(i) => {
                let cond = self.normalize_argument(i.cond.clone())?;
                let t = self.normalize_scoped(i.true_branch.clone())?;
                let f = self.normalize_scoped(i.false_branch.clone())?;
                Expr::if_(cond, t, f)
            }
            ExprKind::SeqExpr(seq) => {
                // A SeqExpr as a value is flattened into the current block.
                for block in &seq.blocks {
                    for b in &block.bindings {
                        self.emit_renormalized(b)?;
                    }
                }
                return self.normalize(seq.body.clone());
            }
            ExprKind::Function(f) => {
                let body = self.normalize_scoped(f.body.clone())?;
                Expr::function(Function { body, ..f.clone() })
            }
            _ => expr.clone(),
        };
        self.infer(rebuilt)
    }

    /// Emits `binding` again with its value normalized (bindings of a
    /// SeqExpr being flattened or rebuilt in a new scope).
    fn emit_renormalized(&mut self, binding: &Binding) -> Result<(), Error> {
        let value = self.normalize(binding.value().clone())?;
        self.emit_normalized(binding.with_value(value))
    }

    /// Normalizes `expr` and, if it is not a leaf, binds it to a fresh
    /// variable and returns that variable.
    pub fn normalize_argument(&mut self, expr: Expr) -> Result<Expr, Error> {
        let e = self.normalize(expr)?;
        if e.is_leaf() {
            return Ok(e);
        }
        if self.frames.is_empty() {
            return Err(err(
                "builder-no-function",
                "a nested expression can only be bound inside a function",
            ));
        }
        Ok(Expr::var(&self.emit(e)?))
    }

    /// Normalizes `expr` in a scope of its own and returns it as a SeqExpr
    /// (for function bodies and `If` branches).
    fn normalize_scoped(&mut self, expr: Expr) -> Result<Expr, Error> {
        if self.frames.is_empty() {
            // Outside any function (normalizing a free expression): give the
            // scope a throwaway frame so nested bindings have a home.
            self.begin_function("", vec![]);
            let out = self.normalize_scoped(expr);
            self.frames.pop();
            return out;
        }
        self.frame_mut()?.scopes.push(Scope::default());
        let body = match expr.kind() {
            ExprKind::SeqExpr(seq) => {
                let mut r = Ok(());
                for block in &seq.blocks {
                    if block.is_dataflow {
                        r = r.and_then(|_| self.begin_dataflow());
                    } else {
                        r = r.and_then(|_| self.end_open_block());
                    }
                    for b in &block.bindings {
                        r = r.and_then(|_| self.emit_renormalized(b));
                    }
                    r = r.and_then(|_| self.end_open_block());
                }
                r.and_then(|_| self.normalize_argument(seq.body.clone()))
            }
            _ => self.normalize_argument(expr),
        };
        let mut scope = self.frame_mut()?.scopes.pop().expect("pushed above");
        let body = body?;
        scope.close_block();
        self.make_seq(scope.blocks, body)
    }

    /// A function body: a `SeqExpr` whose StructInfo keeps the symbolic
    /// variables the parameters define, even where a `MatchCast` in the
    /// body mentions them again (that cast is a check, not a definition).
    fn make_function_body(
        &self,
        blocks: Vec<BindingBlock>,
        body: Expr,
        params: &[Var],
    ) -> Result<Expr, Error> {
        let seq = self.make_seq(blocks, body)?;
        let defined: HashSet<TirVar> = params
            .iter()
            .filter_map(|p| p.struct_info())
            .flat_map(|s| s.definable_tir_vars())
            .collect();
        if defined.is_empty() {
            return Ok(seq);
        }
        let (ExprKind::SeqExpr(s), Some(body)) =
            (seq.kind(), seq.as_seq().and_then(|s| s.body.struct_info()))
        else {
            return Ok(seq);
        };
        let sinfo = crate::analysis::derive::seq_expr_struct_info(
            s,
            body,
            &|v| defined.contains(v),
            &Analyzer::new(),
        );
        Ok(seq.with_struct_info(sinfo))
    }

    fn make_seq(&self, blocks: Vec<BindingBlock>, body: Expr) -> Result<Expr, Error> {
        self.infer(Expr::seq(blocks, body))
    }

    /// Fills in the StructInfo of `expr` (whose parts carry theirs).
    fn infer(&self, expr: Expr) -> Result<Expr, Error> {
        // An operator is not a value: it has no StructInfo of its own.
        if matches!(expr.kind(), ExprKind::Op(_)) {
            return Ok(expr);
        }
        if let ExprKind::GlobalVar(gv) = expr.kind() {
            if expr.struct_info().is_none() && self.module.contains(gv) {
                return Ok(self.module.global_var_expr(gv));
            }
        }
        if expr.struct_info().is_some() && expr.is_leaf() {
            return Ok(expr);
        }
        let mut analyzer = Analyzer::new();
        if let Some(f) = self.frames.last() {
            for v in &f.tir_vars {
                analyzer.mark_non_negative(v);
            }
        }
        let ctx = DeriveContext {
            module: Some(&self.module),
            analyzer,
        };
        let sinfo = derive_struct_info(&expr, &ctx).map_err(|d| Error::Compile(vec![d]))?;
        Ok(expr.with_struct_info(sinfo))
    }

    /// `R.call_tir(gv, args, out)`, normalized (not bound: see
    /// [`BlockBuilder::emit`]).
    pub fn call_tir(
        &mut self,
        gv: GlobalVar,
        args: Vec<Expr>,
        out: StructInfo,
    ) -> Result<Expr, Error> {
        let call = Expr::call_full(
            Expr::op("relax.call_tir"),
            vec![Expr::global_var(gv), Expr::tuple(args)],
            Attrs::new(),
            vec![out],
        );
        self.normalize(call)
    }

    // ----- the module ---------------------------------------------------

    /// Adds `func` under a name derived from `name_hint` (unique in the
    /// module) and returns its global var.
    pub fn add_func(&mut self, func: impl Into<BaseFunc>, name_hint: &str) -> GlobalVar {
        let mut name = name_hint.to_string();
        while self.module.global_var(&name).is_some() {
            let n = self.module_names.entry(name_hint.to_string()).or_insert(0);
            *n += 1;
            name = format!("{name_hint}{n}");
        }
        let gv = GlobalVar::new(&name);
        self.module.add(gv.clone(), func);
        gv
    }

    /// Replaces the function `gv`.
    pub fn update_func(&mut self, gv: &GlobalVar, func: impl Into<BaseFunc>) {
        self.module.add(gv.clone(), func);
    }

    /// The module built so far.
    pub fn get(&self) -> IRModule {
        self.module.clone()
    }

    /// Consumes the builder and returns its module. Errors if a function is
    /// still open.
    pub fn finalize(self) -> Result<IRModule, Error> {
        if let Some(f) = self.frames.last() {
            return Err(err(
                "builder-open-function",
                format!("function {} was never closed with emit_func_output", f.name),
            ));
        }
        Ok(self.module)
    }

    /// Records an error and lets the caller go on (mutators rebuild the rest
    /// of the program so that every error is found, not only the first).
    pub fn report(&mut self, error: Error) {
        match error {
            Error::Compile(ds) => self.errors.extend(ds),
            other => self
                .errors
                .push(Diagnostic::new("builder-error", other.to_string())),
        }
    }

    /// Takes the errors recorded by [`BlockBuilder::report`].
    pub fn take_errors(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.errors)
    }

    // ----- frames -------------------------------------------------------

    fn frame(&self) -> Result<&FunctionFrame, Error> {
        self.frames.last().ok_or_else(|| {
            err(
                "builder-no-function",
                "no function is open: call begin_function first",
            )
        })
    }

    fn frame_mut(&mut self) -> Result<&mut FunctionFrame, Error> {
        self.frames.last_mut().ok_or_else(|| {
            err(
                "builder-no-function",
                "no function is open: call begin_function first",
            )
        })
    }

    fn scope_mut(&mut self) -> Result<&mut Scope, Error> {
        Ok(self
            .frame_mut()?
            .scopes
            .last_mut()
            .expect("a function frame always has a scope"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Attrs, PrimExpr};
    use relax_runtime::DataType;

    fn tensor(dims: &[i64]) -> StructInfo {
        StructInfo::tensor(
            dims.iter().map(|&d| PrimExpr::int(d)).collect(),
            DataType::f32(),
        )
    }

    fn call(op: &str, args: Vec<Expr>) -> Expr {
        crate::op::lookup(op)
            .unwrap()
            .call(args, &Attrs::new())
            .unwrap()
    }

    #[test]
    fn nested_calls_are_bound_to_fresh_vars() {
        let x = Var::new("x", Some(tensor(&[3, 4])));
        let y = Var::new("y", Some(tensor(&[3, 4])));
        let mut bb = BlockBuilder::new();
        bb.function("main", vec![x.clone(), y.clone()], |bb| {
            bb.dataflow(|bb| {
                let nested = call(
                    "relax.add",
                    vec![
                        call("relax.multiply", vec![x.to_expr(), y.to_expr()]),
                        y.to_expr(),
                    ],
                );
                let lv = bb.emit(nested)?;
                assert!(lv.is_dataflow());
                Ok(bb.emit_output(lv)?.to_expr())
            })
        })
        .unwrap();
        let m = bb.finalize().unwrap();
        let f = m.get_relax("main").unwrap();
        let seq = f.body.as_seq().unwrap();
        assert_eq!(seq.blocks.len(), 1);
        let block = &seq.blocks[0];
        assert!(block.is_dataflow);
        let names: Vec<_> = block
            .bindings
            .iter()
            .map(|b| b.var().name_hint().to_string())
            .collect();
        assert_eq!(names, ["lv", "lv1", "gv"]);
        assert!(block.bindings[0].value().call_op_name() == Some("relax.multiply"));
        assert!(block.bindings[1]
            .value()
            .as_call()
            .unwrap()
            .args
            .iter()
            .all(Expr::is_leaf));
        assert!(!block.bindings[2].var().is_dataflow());
        assert_eq!(f.global_symbol(), Some("main"));
    }

    #[test]
    fn blocks_are_consolidated_and_empty_ones_dropped() {
        let x = Var::new("x", Some(tensor(&[2])));
        let mut bb = BlockBuilder::new();
        bb.begin_function("f", vec![x.clone()]);
        bb.begin_dataflow().unwrap();
        bb.end_dataflow().unwrap();
        let a = bb.emit(call("relax.exp", vec![x.to_expr()])).unwrap();
        let b = bb.emit(call("relax.exp", vec![a.to_expr()])).unwrap();
        assert!(!a.is_dataflow());
        bb.set_private(true).unwrap();
        bb.emit_func_output(b).unwrap();
        let m = bb.get();
        let f = m.get_relax("f").unwrap();
        let seq = f.body.as_seq().unwrap();
        assert_eq!(
            seq.blocks.len(),
            1,
            "the empty dataflow block is dropped, the two bindings share a block"
        );
        assert!(!seq.blocks[0].is_dataflow);
        assert_eq!(f.global_symbol(), None);
    }

    /// The seed's MLP (MLC chapter 7.4) with the weights as constants.
    #[test]
    fn seed_mlp_prints_as_the_seed_listing() {
        use relax_runtime::Tensor;
        let weight = |r: i64, c: i64| {
            let data: Vec<f32> = (0..r * c).map(|i| (i % 7) as f32 * 0.1).collect();
            Expr::constant(Tensor::from_vec(&[r, c], data).unwrap())
        };
        let bias =
            |n: i64| Expr::constant(Tensor::from_vec(&[n], vec![0.5f32; n as usize]).unwrap());
        let (w0, b0, w1, b1) = (weight(128, 784), bias(128), weight(10, 128), bias(10));
        let x = Var::new("x", Some(tensor(&[1, 784])));
        let mut bb = BlockBuilder::new();
        bb.function("main", vec![x.clone()], |bb| {
            bb.dataflow(|bb| {
                let lv0 = bb.emit(call(
                    "relax.matmul",
                    vec![x.to_expr(), call("relax.permute_dims", vec![w0])],
                ))?;
                let lv1 = bb.emit(call("relax.add", vec![lv0.to_expr(), b0]))?;
                let lv2 = bb.emit(call("relax.nn.relu", vec![lv1.to_expr()]))?;
                let lv3 = bb.emit(call(
                    "relax.matmul",
                    vec![lv2.to_expr(), call("relax.permute_dims", vec![w1])],
                ))?;
                let lv4 = bb.emit(call("relax.add", vec![lv3.to_expr(), b1]))?;
                Ok(bb.emit_output(lv4)?.to_expr())
            })
        })
        .unwrap();
        let module = bb.finalize().unwrap();
        assert!(
            crate::analysis::well_formed(&module).is_ok(),
            "{:?}",
            crate::analysis::well_formed(&module)
        );
        let text = module.to_string();
        let code = text.split("\nmetadata = ").next().unwrap();
        let expected = r#"@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((784, 128), dtype="float32") = R.permute_dims(metadata["relax.expr.Constant"][0], axes=None)
            lv1: R.Tensor((1, 128), dtype="float32") = R.matmul(x, lv, out_dtype=None)
            lv2: R.Tensor((1, 128), dtype="float32") = R.add(lv1, metadata["relax.expr.Constant"][1])
            lv3: R.Tensor((1, 128), dtype="float32") = R.nn.relu(lv2)
            lv4: R.Tensor((128, 10), dtype="float32") = R.permute_dims(metadata["relax.expr.Constant"][2], axes=None)
            lv5: R.Tensor((1, 10), dtype="float32") = R.matmul(lv3, lv4, out_dtype=None)
            lv6: R.Tensor((1, 10), dtype="float32") = R.add(lv5, metadata["relax.expr.Constant"][3])
            gv: R.Tensor((1, 10), dtype="float32") = lv6
            R.output(gv)
        return gv
"#;
        let body = code
            .split_once("@I.ir_module")
            .map(|(_, b)| format!("@I.ir_module{b}"))
            .unwrap();
        assert_eq!(body.trim_end(), expected.trim_end());
        assert!(
            text.contains("metadata = {"),
            "the weights are printed as metadata"
        );
    }

    #[test]
    fn add_func_names_uniquely_and_update_func_replaces() {
        let x = Var::new("x", Some(tensor(&[2])));
        let mut bb = BlockBuilder::new();
        let gv = bb
            .function("f", vec![x.clone()], |_| Ok(x.to_expr()))
            .unwrap();
        let f = bb.get().get_relax("f").unwrap().clone();
        let gv1 = bb.add_func(f.clone(), "f");
        let gv2 = bb.add_func(f.clone(), "f");
        assert_eq!(
            (gv.name_hint(), gv1.name_hint(), gv2.name_hint()),
            ("f", "f1", "f2")
        );
        let y = Var::new("y", Some(tensor(&[2])));
        let g = Function::new(
            vec![y.clone()],
            Expr::seq(vec![], y.to_expr()),
            tensor(&[2]),
        );
        bb.update_func(&gv1, g.clone());
        let m = bb.finalize().unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m.get_relax("f1"), Some(&g));
    }

    #[test]
    fn the_ir_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<IRModule>();
        assert_send_sync::<Expr>();
        assert_send_sync::<StructInfo>();
        assert_send_sync::<crate::ir::PrimExpr>();
        assert_send_sync::<Function>();
        assert_send_sync::<crate::ir::Tensor>();
        // A module can live in a static and be read from several threads.
        static MODULE: once_cell::sync::Lazy<IRModule> = once_cell::sync::Lazy::new(|| {
            let x = Var::new("x", Some(tensor(&[2])));
            let mut bb = BlockBuilder::new();
            bb.function("id", vec![x.clone()], |_| Ok(x.to_expr()))
                .unwrap();
            bb.finalize().unwrap()
        });
        let texts: Vec<String> = (0..4)
            .map(|_| std::thread::spawn(|| MODULE.to_string()))
            .map(|h| h.join().unwrap())
            .collect();
        assert!(texts.windows(2).all(|w| w[0] == w[1]));
    }

    #[test]
    fn misuse_is_an_error_not_a_panic() {
        let mut bb = BlockBuilder::new();
        assert!(bb.emit(Expr::prim_value(PrimExpr::int(1))).is_err());
        assert!(bb.end_dataflow().is_err());
        bb.begin_function("f", vec![]);
        assert!(bb.emit_output(Expr::prim_value(PrimExpr::int(1))).is_err());
        bb.begin_dataflow().unwrap();
        assert!(bb.begin_dataflow().is_err());
        assert!(bb
            .emit_func_output(Expr::prim_value(PrimExpr::int(1)))
            .is_err());
        assert!(bb.finalize().is_err());
    }

    #[test]
    fn match_cast_brings_symbolic_vars_into_scope() {
        let x = Var::new("x", Some(StructInfo::tensor_ndim(2, DataType::f32())));
        let m = TirVar::new("m");
        let mut bb = BlockBuilder::new();
        bb.function("f", vec![x.clone()], |bb| {
            let pattern =
                StructInfo::tensor(vec![PrimExpr::var(&m), PrimExpr::int(4)], DataType::f32());
            let y = bb.emit_match_cast(x.to_expr(), pattern.clone())?;
            assert_eq!(y.struct_info(), Some(&pattern));
            Ok(y.to_expr())
        })
        .unwrap();
        let module = bb.get();
        let f = module.get_relax("f").unwrap();
        // `m` is not defined by the parameters, so the result StructInfo
        // keeps only the rank and dtype.
        assert_eq!(
            f.ret_struct_info.to_string(),
            "R.Tensor(dtype=\"float32\", ndim=2)"
        );
    }
}
