//! Well-formedness: every rule a Relax program must satisfy before the rest
//! of the compiler may assume it.
//!
//! The checker is one walk over each function, in the order the program would
//! be evaluated, carrying the scopes of Relax variables and of symbolic
//! (shape) variables. It never stops at the first problem: each violation is
//! reported once as a [`Diagnostic`] whose `code` names the rule and whose
//! message names the function and the variable or expression concerned. The
//! rules merge the Relax spec's well-formedness criteria (§1.5 of the
//! reference, rules 1–24), its normal form (§1.4) and the checks TVM's
//! `well_formed.cc` enforces (§1.6). Codes, with the rules they implement:
//!
//! **Module**
//! 1. `undefined-global-var`: every referenced `GlobalVar` is a function of
//!    the module (TVM 2; unique names are guaranteed by `IRModule`'s map).
//! 2. `global-symbol-mismatch`: a Relax function's `global_symbol` equals its
//!    name in the module (spec 13, TVM 3).
//! 3. `param-shared-between-functions`: a `Var` is a parameter of at most one
//!    function (TVM 4).
//! 4. `symbolic-var-shared-between-functions`: a symbolic variable belongs to
//!    one top-level function (TVM 5). Symbolic variables inside function
//!    StructInfo (`R.Callable` annotations, a global's signature) are bound by
//!    that StructInfo and do not count.
//! 5. `call-tir-callee-not-prim-func`: the first argument of `call_tir`
//!    (`call_tir_inplace`, `call_tir_with_grad`) is a `PrimFunc` of the module.
//!
//! **Relax variable scoping** (spec §"Variable Scoping")
//! 6. `undefined-var`: a variable is used only where it is defined: after its
//!    binding, or anywhere in the function whose parameter it is (spec 3, TVM 6).
//! 7. `var-used-in-own-binding`: a binding's value mentions its own variable
//!    only when the value is a `Function` (local recursion; spec 2).
//! 8. `var-redefined`: every variable is defined exactly once, as a parameter
//!    or on the left of one binding, in the whole module (spec 2, TVM 7).
//! 9. `var-out-of-scope`: a variable bound inside a `SeqExpr` (an `If` branch,
//!    a function body) is not used after that `SeqExpr` ends (TVM 10).
//! 10. `dataflow-var-outside-dataflow-block`: a `DataflowVar` is bound only in
//!     a dataflow block (spec 1, TVM 9).
//! 11. `dataflow-var-escapes`: a `DataflowVar` is not used outside the block
//!     that binds it (spec 1, TVM 9).
//! 12. `dataflow-var-param`: function parameters are `Var`s, never
//!     `DataflowVar`s.
//! 13. `dataflow-var-captured`: a function defined in a dataflow block does not
//!     use the block's `DataflowVar`s (spec 11).
//!
//! **Symbolic variables**
//! 14. `undefined-symbolic-var`: a symbolic variable is used only where it is
//!     defined. It is defined where it stands alone as a dimension or prim
//!     value ([`StructInfo::definable_tir_vars`](crate::ir::StructInfo::definable_tir_vars)) of a parameter annotation —
//!     in scope in the whole function, return annotation included, whatever
//!     the parameter order — or of a `match_cast` pattern — in scope for the
//!     rest of the enclosing `SeqExpr`. This covers shape expressions, prim
//!     values, `sinfo_args` and every annotation (spec 4, 5, 14, 15, 16, TVM 8).
//!     Outer symbolic variables stay in scope in nested functions (closures
//!     capture them).
//! 15. `unbound-signature-symbolic-var`: every symbolic variable of a
//!     function's parameter annotations stands alone somewhere among them (spec 6).
//!
//! **Dataflow blocks**
//! 16. `if-in-dataflow-block`: no `If` in a dataflow block (spec 7c, TVM 14).
//! 17. `impure-call-in-dataflow-block`: no impure call in a dataflow block
//!     (spec §"Purity", TVM 15).
//! 18. `recursion-in-dataflow-block`: a dataflow block does not call the
//!     function it is in, nor a global function mutually recursive with it
//!     (spec 7a, 7b).
//!
//! **Purity**
//! 19. `impure-call-in-pure-function`: a pure function without
//!     `relax.force_pure` contains no impure call (nested functions are checked
//!     on their own; TVM 16).
//! 20. `force-pure-on-impure-function`: `relax.force_pure` implies `is_pure`
//!     (spec 21, TVM 17).
//!
//! **Normal form** (spec §"Normal Form")
//! 21. `body-not-seq-expr`: a function body and both branches of an `If` are
//!     `SeqExpr`s (TVM 12c).
//! 22. `misplaced-seq-expr`: a `SeqExpr` appears nowhere else (TVM 11).
//! 23. `seq-body-not-leaf`: a `SeqExpr`'s body is a leaf (TVM 12).
//! 24. `nested-non-leaf`: a binding value is a leaf or a non-leaf whose
//!     operands (call callee and arguments, tuple fields, the tuple of a
//!     `TupleGetItem`, the condition of an `If`) are leaves; a tuple of leaves
//!     is a leaf ([`Expr::is_leaf`](crate::ir::Expr::is_leaf); TVM 12a, 12d).
//! 25. `misplaced-op`: an `Op` appears only as the callee of a `Call` (spec 9).
//! 26. `empty-block`: a `SeqExpr` has no empty binding block.
//! 27. `unmerged-blocks`: no two adjacent blocks of a `SeqExpr` are of the
//!     same kind (they would be one block).
//! 28. `op-not-normalized`: calls of ops with an op-specific normal form are in
//!     it: the arguments of `call_tir`, `call_tir_inplace`,
//!     `call_tir_with_grad` and `call_dps_packed` are a tuple literal (spec 23).
//!
//! **StructInfo** (checked only with [`WellFormedOptions::check_struct_info`]:
//! 29, 39–43 and the purity rules 17 and 19, as in TVM)
//! 29. `missing-struct-info`: every expression except an `Op`, and every
//!     variable, carries StructInfo (TVM 1, 13).
//! 30. `invalid-ndim`: an `ndim` is `-1` (unknown) or non-negative.
//! 31. `ndim-mismatch`: a tensor's or shape's `ndim` equals the number of its
//!     dimensions when both are given (spec 10, 14, 15).
//! 32. `invalid-tensor-shape`: a tensor's shape is a `ShapeExpr` or a variable
//!     of Shape StructInfo (spec 14).
//! 33. `invalid-prim-dtype`: a `Prim` dtype is an Int, UInt or Float (spec 19).
//! 34. `invalid-dtype`: dtypes obey the spec's DataType rules
//!     ([`DataType::is_valid_scalar`](crate::ir::DataType::is_valid_scalar); spec 20).
//! 35. `prim-value-dtype-mismatch`: a `Prim`'s known value has its dtype (spec 22).
//! 36. `invalid-func-struct-info`: a function StructInfo has exactly one of
//!     `params` and `derive_func` (spec 17).
//! 37. `non-integer-shape-dim`: shape dimensions are signed integers (TVM's
//!     "shape expressions must be of integer type").
//! 38. `invalid-prim-value`: a `PrimValue` holds an int or float literal, or a
//!     symbolic expression of integer (or bool) type. The spec (rule 18)
//!     allows only literals; TVM allows `R.prim_value(n)` and so do we.
//! 39. `if-cond-not-bool`: an `If` condition is not provably something other
//!     than a bool scalar (a `R.Prim("bool")` or a rank-0 bool tensor).
//! 40. `struct-info-mismatch`: a binding's variable is not provably disjoint
//!     from its value's StructInfo re-derived by
//!     [`derive_struct_info`](crate::analysis::derive::derive_struct_info)
//!     ([`BaseCheckResult::FailL0`](crate::analysis::struct_info_analysis::BaseCheckResult::FailL0) is an error, the weaker failures are left
//!     to run-time checks), nor is the StructInfo stored on the value; a
//!     `GlobalVar` carries function StructInfo consistent with its function.
//! 41. `match-cast-var-mismatch`: a `match_cast` variable has exactly the
//!     pattern's StructInfo.
//! 42. `ret-struct-info-mismatch`: a function's body is not provably disjoint
//!     from its `ret_struct_info`.
//! 43. `struct-info-inference-failed`: every binding value has derivable
//!     StructInfo (TVM: "each Relax expression must be able to have its
//!     StructInfo inferred").
//!
//! **Not applicable here**
//! - Spec 8 (recursive functions need a return annotation):
//!   `Function::ret_struct_info` is not optional in this IR, so it always holds.
//! - Spec 12 (some function has a `global_symbol`): unimplemented in TVM and
//!   false of the modules passes build (all-private modules are common).
//! - Spec 24 and the VDevice parts of spec 14: this IR has no VDevice.
//! - TVM's "inline PrimFunc is disallowed": a `PrimFunc` is not an `Expr` here.
//! - TVM's op-specific `FValidate` and the general `FNormalize` of spec 23: the
//!   op registry declares neither; rule 28 covers the ops TVM normalizes.
//!
//! Purity of a call: an `ExternFunc` callee is impure; an `Op` is pure unless
//! the registry says otherwise (an unregistered op is pure); any other callee
//! is impure when its StructInfo is an opaque (derive-func) function or a
//! function whose purity is false (a `GlobalVar` without StructInfo takes its
//! function's).
//!
//! Identical diagnostics (same code and message) are reported once.

mod annotations;
mod consistency;
mod module_rules;
pub(crate) use module_rules::call_graph_reach;
mod walk;

#[cfg(test)]
mod tests;

use crate::analysis::derive::DeriveContext;
use crate::arith::Analyzer;
use crate::ir::{Function, GlobalVar, IRModule, TirVar, Var};
use relax_runtime::Diagnostic;
use std::collections::{HashMap, HashSet};

/// What [`well_formed_with_options`] checks besides the structural rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WellFormedOptions {
    /// Check StructInfo: presence on every expression, consistency with
    /// re-derived StructInfo, and the purity rules that rely on it (TVM's
    /// `check_struct_info`). On by default; turn off for IR that has not been
    /// normalized yet.
    pub check_struct_info: bool,
}

impl Default for WellFormedOptions {
    fn default() -> Self {
        WellFormedOptions {
            check_struct_info: true,
        }
    }
}

/// Checks every well-formedness rule (see the module docs) on every Relax
/// function of `module`; returns all violations.
pub fn well_formed(module: &IRModule) -> Result<(), Vec<Diagnostic>> {
    well_formed_with_options(module, WellFormedOptions::default())
}

/// [`well_formed`] with options.
pub fn well_formed_with_options(
    module: &IRModule,
    options: WellFormedOptions,
) -> Result<(), Vec<Diagnostic>> {
    let mut checker = Checker::new(Some(module), options);
    checker.check_module(module);
    checker.finish()
}

/// Checks one function on its own. Without a module, references to global
/// functions cannot be resolved: rules 1, 2, 5 and 18 are skipped and a
/// `GlobalVar` callee's purity comes from its StructInfo alone.
pub fn well_formed_function(
    func: &Function,
    options: WellFormedOptions,
) -> Result<(), Vec<Diagnostic>> {
    let mut checker = Checker::new(None, options);
    let name = func.global_symbol().unwrap_or("(anonymous)").to_string();
    checker.check_top_function(None, &name, func);
    checker.finish()
}

/// Where a variable was defined, for telling "out of scope" from "undefined"
/// and a shared parameter from a redefinition.
#[derive(Clone, Debug)]
struct VarDef {
    is_param: bool,
    /// The label of the defining function (see [`FuncCtx::label`]).
    func: String,
}

/// The function being checked (innermost last on [`Checker::funcs`]).
struct FuncCtx {
    /// How messages name it: ``function `main` `` or
    /// ``local function `f` of `main` ``.
    label: String,
    /// Whether an impure call in its body is an error (rule 19).
    requires_purity: bool,
    /// The variable a local function is bound to (rule 18: calling it from
    /// its own dataflow block is recursion).
    self_var: Option<Var>,
}

/// One lexical scope of Relax variables: a function's parameters, a
/// `SeqExpr`, a dataflow block (which holds only its `DataflowVar`s; its
/// ordinary `Var`s belong to the enclosing `SeqExpr`), or the binding of a
/// local function (its own name, for recursion).
struct Frame {
    vars: Vec<Var>,
    is_dataflow_block: bool,
}

/// The checker's state. See the module docs for the algorithm.
struct Checker<'m> {
    module: Option<&'m IRModule>,
    options: WellFormedOptions,
    derive_ctx: DeriveContext<'m>,
    diags: Vec<Diagnostic>,
    reported: HashSet<(&'static str, String)>,
    /// Keys of problems reported once per function whatever the site (see
    /// [`Checker::report_once`]).
    reported_subjects: HashSet<String>,

    /// Every variable definition met so far in the module.
    defs: HashMap<Var, VarDef>,
    /// The top-level function that first mentioned each symbolic variable.
    tir_owner: HashMap<TirVar, String>,
    /// For each Relax function of the module, the functions its calls reach.
    reach: HashMap<GlobalVar, HashSet<GlobalVar>>,

    /// The top-level function being checked, if it is in a module.
    top: Option<GlobalVar>,
    /// Its name, for `tir_owner`.
    top_name: String,
    /// Every variable the top-level function defines somewhere (to tell
    /// "used before defined" from "not defined").
    top_defs: HashSet<Var>,

    /// Variables in scope, with the function depth they were defined at.
    vars: HashMap<Var, usize>,
    frames: Vec<Frame>,
    /// Symbolic variables in scope, with their scopes.
    tir_vars: HashSet<TirVar>,
    tir_frames: Vec<Vec<TirVar>>,

    funcs: Vec<FuncCtx>,
    /// Whether the innermost block is a dataflow block (reset in nested functions).
    in_dataflow: bool,
    /// The variable whose binding is being checked.
    binding_var: Option<Var>,
    /// How deep the annotation check is inside function StructInfo, whose
    /// symbolic variables are its own (rule 4 ignores them).
    func_sinfo_depth: usize,
}

impl<'m> Checker<'m> {
    fn new(module: Option<&'m IRModule>, options: WellFormedOptions) -> Self {
        Checker {
            module,
            options,
            derive_ctx: DeriveContext {
                module,
                analyzer: Analyzer::new(),
            },
            diags: Vec::new(),
            reported: HashSet::new(),
            reported_subjects: HashSet::new(),
            defs: HashMap::new(),
            tir_owner: HashMap::new(),
            reach: HashMap::new(),
            top: None,
            top_name: String::new(),
            top_defs: HashSet::new(),
            vars: HashMap::new(),
            frames: Vec::new(),
            tir_vars: HashSet::new(),
            tir_frames: Vec::new(),
            funcs: Vec::new(),
            in_dataflow: false,
            binding_var: None,
            func_sinfo_depth: 0,
        }
    }

    fn finish(self) -> Result<(), Vec<Diagnostic>> {
        if self.diags.is_empty() {
            Ok(())
        } else {
            Err(self.diags)
        }
    }

    /// Records a violation, once per distinct code and message.
    fn report(&mut self, code: &'static str, message: String) {
        if self.reported.insert((code, message.clone())) {
            self.diags.push(Diagnostic::new(code, message));
        }
    }

    /// Records a problem of `subject` (a StructInfo, a dimension, a symbolic
    /// variable) once per function: the same ill-formed StructInfo is often
    /// copied into a binding's annotation, the StructInfo of the `SeqExpr`
    /// and the return annotation, and is one mistake.
    fn report_once(&mut self, subject: &str, code: &'static str, message: String) {
        self.report_once_per(&format!("{code}\u{0}{subject}"), code, message);
    }

    /// Records a problem once per function and `key`.
    fn report_once_per(&mut self, key: &str, code: &'static str, message: String) {
        let key = format!("{}\u{0}{key}", self.where_());
        if self.reported_subjects.insert(key) {
            self.report(code, message);
        }
    }

    /// `in function `main`` (or the innermost local function): the prefix
    /// of every message about a function's contents.
    fn where_(&self) -> String {
        match self.funcs.last() {
            Some(f) => format!("in {}", f.label),
            None => format!("in function `{}`", self.top_name),
        }
    }

    /// Checks one top-level function with fresh scopes.
    fn check_top_function(&mut self, gv: Option<&GlobalVar>, name: &str, func: &Function) {
        self.top = gv.cloned();
        self.top_name = name.to_string();
        self.top_defs = walk::defined_vars(func);
        self.vars.clear();
        self.frames.clear();
        self.tir_vars.clear();
        self.tir_frames.clear();
        self.funcs.clear();
        self.in_dataflow = false;
        self.binding_var = None;
        self.func_sinfo_depth = 0;
        self.check_function(func, format!("function `{name}`"), None);
    }

    fn push_frame(&mut self, is_dataflow_block: bool) {
        self.frames.push(Frame {
            vars: Vec::new(),
            is_dataflow_block,
        });
    }

    fn pop_frame(&mut self) {
        if let Some(frame) = self.frames.pop() {
            for v in frame.vars {
                self.vars.remove(&v);
            }
        }
    }

    /// Puts `var` in scope: a `DataflowVar` in the innermost frame (its
    /// dataflow block), an ordinary `Var` in the innermost non-block frame.
    fn bring_into_scope(&mut self, var: &Var) {
        let depth = self.funcs.len();
        let frame = if var.is_dataflow() {
            self.frames.last_mut()
        } else {
            self.frames.iter_mut().rev().find(|f| !f.is_dataflow_block)
        };
        if let Some(frame) = frame {
            frame.vars.push(var.clone());
        }
        self.vars.insert(var.clone(), depth);
    }

    fn push_tir_frame(&mut self) {
        self.tir_frames.push(Vec::new());
    }

    fn pop_tir_frame(&mut self) {
        if let Some(frame) = self.tir_frames.pop() {
            for v in frame {
                self.tir_vars.remove(&v);
            }
        }
    }

    /// Defines the symbolic variable `v` in the innermost scope (it must not
    /// be in scope already: a bare variable already in scope is a use).
    fn define_tir_var(&mut self, v: &TirVar) {
        if self.tir_vars.insert(v.clone()) {
            if let Some(frame) = self.tir_frames.last_mut() {
                frame.push(v.clone());
            }
        }
        self.note_tir_var(v);
    }

    /// Rule 4: remembers which top-level function mentions `v`.
    fn note_tir_var(&mut self, v: &TirVar) {
        if self.func_sinfo_depth > 0 {
            return;
        }
        match self.tir_owner.get(v) {
            Some(owner) if *owner != self.top_name => {
                let message = format!(
                    "symbolic var `{v}` appears in both function `{owner}` and function `{}`",
                    self.top_name
                );
                self.report("symbolic-var-shared-between-functions", message);
            }
            Some(_) => {}
            None => {
                self.tir_owner.insert(v.clone(), self.top_name.clone());
            }
        }
    }
}
