//! Rewriting with patterns (TVM's `rewrite_call`, `rewrite_bindings` and
//! `PatternMatchingRewriter`).
//!
//! 1. [`rewrite_call`]: every binding whose value the pattern matches
//!    (looking through the function's bindings) is replaced by what the
//!    callback returns for it; the rewrite repeats until nothing changes
//!    (at most [`MAX_ROUNDS`] rounds); a dataflow variable bound to another
//!    variable (a rewrite that returns an operand) is replaced by it, and
//!    bindings left unused are removed.
//!    A replacement may nest calls: it is normalized into bindings.
//!    [`rewrite_calls`] takes several rules at once (TVM's `a | b`): one
//!    scan per round tries each binding against every rule, first match
//!    wins. A scan is linear in the number of bindings: a call pattern
//!    rejects a call of another op before any matching state is made.
//! 2. [`rewrite_bindings`]: a [`PatternContext`] is matched against each
//!    dataflow block; the callback returns new values for some of the
//!    matched variables.
//! 3. A replacement whose StructInfo is not compatible with the binding it
//!    replaces (not the same or more specific) is an error naming the
//!    pattern and the binding, and the function is left as it was. New
//!    values go through the BlockBuilder's normalization, so the result is
//!    well formed (the tests check `well_formed` after every rewrite; the
//!    rewrite does not pay for a full check itself).
//! 4. [`PatternRewriter`] is a [`Pass`]: the rewrite applied to every Relax
//!    function of a module; `a | b` combines two into one pass. A callback
//!    that panics is contained by the pass manager (`PassContext`), which
//!    names the pass.

use super::bindings::Bindings;
use super::context::{GraphMatch, PatternContext};
use super::matcher::Match;
use super::pattern::Pattern;
use crate::analysis::struct_info_analysis::{struct_info_base_check, BaseCheckResult};
use crate::arith::Analyzer;
use crate::ir::expr::{BindingBlock, ExprKind, Var, VarBinding};
use crate::ir::{structural_equal, Expr, Function, IRModule, VarMap};
use crate::mutator::{remove_all_unused, ExprMutator, MutatorState};
use crate::transform::Pass;
use relax_runtime::{Diagnostic, Error};
use std::collections::HashMap;
use std::sync::Arc;

/// How many rounds a rewrite may take before it is taken as looping.
pub const MAX_ROUNDS: usize = 64;

/// Replaces the bindings `pattern` matches in `func` by `rewriter`'s result
/// until nothing changes. See the module docs.
pub fn rewrite_call(
    pattern: &Pattern,
    rewriter: impl Fn(&Expr, &Match) -> Expr,
    func: &Function,
) -> Result<Function, Error> {
    rewrite_calls(&[(pattern, &rewriter)], func)
}

/// A rewrite rule as [`rewrite_calls`] takes it: a pattern and what a match
/// becomes.
pub type Rule<'a> = (&'a Pattern, &'a dyn Fn(&Expr, &Match) -> Expr);

/// [`rewrite_call`] with several rules at once (TVM's `rewriter_a |
/// rewriter_b`): each binding is rewritten by the first rule that matches
/// it and changes it, and the rounds repeat until no rule changes
/// anything. One scan of the function per round serves every rule.
pub fn rewrite_calls(rules: &[Rule<'_>], func: &Function) -> Result<Function, Error> {
    rewrite_until_fixpoint(func, "rewrite_call", |f| {
        // Match first: a round without a match rebuilds nothing.
        let bindings = Bindings::of_function(f);
        let mut replacements: VarMap<Expr> = VarMap::default();
        for (var, value) in bindings.iter() {
            for (pattern, rewriter) in rules {
                let Some(m) = pattern.extract(value, &bindings) else {
                    continue;
                };
                let new = rewriter(value, &m);
                if !new.ptr_eq(value) && !structural_equal(&new, value) {
                    replacements.insert(var.clone(), new);
                    break;
                }
            }
        }
        if replacements.is_empty() {
            return Ok(None);
        }
        replace(f, &replacements)
    })
}

/// Replaces the values of the variables that `rewriter` returns, for every
/// match of `ctx` in a dataflow block of `func`. See the module docs.
pub fn rewrite_bindings(
    ctx: &PatternContext,
    rewriter: impl Fn(&GraphMatch, &Bindings) -> HashMap<Var, Expr>,
    func: &Function,
) -> Result<Function, Error> {
    rewrite_until_fixpoint(func, "rewrite_bindings", |f| {
        let bindings = Bindings::of_function(f);
        let mut replacements: VarMap<Expr> = VarMap::default();
        if let Some(seq) = f.body.as_seq() {
            for block in seq.blocks.iter().filter(|b| b.is_dataflow) {
                if let Some(m) = ctx.match_dataflow(block, &bindings) {
                    replacements.extend(rewriter(&m, &bindings));
                }
            }
        }
        if replacements.is_empty() {
            return Ok(None);
        }
        replace(f, &replacements)
    })
}

/// One round's replacements applied: when they are all in the function's
/// top-level blocks and none is a bare dataflow-variable alias, the other
/// bindings are kept as they are and only the new values are normalized
/// (a round costs little more than its matches); otherwise the function is
/// re-emitted through a mutator, which also renames the uses of folded
/// aliases.
fn replace(func: &Function, replacements: &VarMap<Expr>) -> Result<Option<Function>, Error> {
    let Some(seq) = func.body.as_seq() else {
        return apply(func, &mut |v, _| replacements.get(v).cloned());
    };
    let top_level: usize = seq
        .blocks
        .iter()
        .flat_map(|b| &b.bindings)
        .filter(|b| replacements.contains_key(b.var()))
        .count();
    let aliases = replacements
        .iter()
        .any(|(v, e)| v.is_dataflow() && e.as_var().is_some());
    if top_level != replacements.len() || aliases {
        return apply(func, &mut |v, _| replacements.get(v).cloned());
    }
    let mut bb = crate::block_builder::BlockBuilder::new();
    bb.begin_scope(&func.params);
    if replacements.values().all(is_flat) {
        // Nothing to bind first: the other bindings are kept as they are,
        // and the function's StructInfo cannot change (each new value is
        // compatible with its variable, which stays).
        let mut blocks = Vec::with_capacity(seq.blocks.len());
        for block in &seq.blocks {
            let mut bindings = Vec::with_capacity(block.bindings.len());
            for b in &block.bindings {
                match replacements.get(b.var()) {
                    None => bindings.push(b.clone()),
                    Some(new) => {
                        // A flat value that carries its StructInfo (an op's
                        // `call`) is normal already, as TVM's normalizer
                        // keeps it.
                        let new = match new.struct_info() {
                            Some(_) => new.clone(),
                            None => bb.normalize(new.clone())?,
                        };
                        check_compatible(b.var(), &new)?;
                        bindings.push(b.with_value(new));
                    }
                }
            }
            blocks.push(BindingBlock {
                bindings,
                is_dataflow: block.is_dataflow,
            });
        }
        let body = Expr::seq(blocks, seq.body.clone());
        let body = match func.body.struct_info() {
            Some(s) => body.into_with_struct_info(s.clone()),
            None => body,
        };
        return Ok(Some(Function {
            body,
            ..func.clone()
        }));
    }
    for block in &seq.blocks {
        if block.is_dataflow {
            bb.begin_dataflow()?;
        }
        for b in &block.bindings {
            let Some(new) = replacements.get(b.var()) else {
                bb.emit_normalized(b.clone())?;
                continue;
            };
            let new = bb.normalize(new.clone())?;
            check_compatible(b.var(), &new)?;
            bb.emit_normalized(b.with_value(new))?;
        }
        if block.is_dataflow {
            bb.end_dataflow()?;
        } else {
            bb.end_block()?;
        }
    }
    let body = bb.end_scope(seq.body.clone())?;
    Ok(Some(Function {
        body,
        ..func.clone()
    }))
}

/// Whether `e` is in normal form already: its operands are all leaves, so
/// normalizing it binds nothing.
fn is_flat(e: &Expr) -> bool {
    match e.kind() {
        ExprKind::Call(c) => c.op.is_leaf() && c.args.iter().all(Expr::is_leaf),
        ExprKind::Tuple(fields) => fields.iter().all(Expr::is_leaf),
        ExprKind::TupleGetItem(t, _) => t.is_leaf(),
        _ => e.is_leaf(),
    }
}

/// Point 3 of the module docs.
fn check_compatible(var: &Var, new: &Expr) -> Result<(), Error> {
    if let (Some(old), Some(got)) = (var.struct_info(), new.struct_info()) {
        if old != got && struct_info_base_check(old, got, &Analyzer::new()) != BaseCheckResult::Pass
        {
            return Err(Error::Compile(vec![Diagnostic::new(
                "rewrite-struct-info-mismatch",
                format!(
                    "the replacement of `{}` has StructInfo {got}, which is not compatible with the binding's {old}",
                    var.name_hint()
                ),
            )]));
        }
    }
    Ok(())
}

/// Runs `round` until it changes nothing, removing the bindings each round
/// left unused.
fn rewrite_until_fixpoint(
    func: &Function,
    what: &str,
    mut round: impl FnMut(&Function) -> Result<Option<Function>, Error>,
) -> Result<Function, Error> {
    let mut current = func.clone();
    for _ in 0..MAX_ROUNDS {
        match round(&current)? {
            Some(next) => {
                let next = if has_alias(&next) {
                    fold_trivial_bindings(&next)
                } else {
                    next
                };
                current = remove_all_unused(&next);
            }
            None => return Ok(current),
        }
    }
    Err(Error::Compile(vec![Diagnostic::new(
        "rewrite-does-not-converge",
        format!("{what}: the rewrite still changes the function after {MAX_ROUNDS} rounds"),
    )]))
}

/// One round: re-emits `func`, replacing a binding's value when `decide`
/// returns one that differs; `None` when nothing changed.
fn apply(
    func: &Function,
    decide: &mut dyn FnMut(&Var, &Expr) -> Option<Expr>,
) -> Result<Option<Function>, Error> {
    struct Rewriter<'d> {
        state: MutatorState,
        decide: &'d mut dyn FnMut(&Var, &Expr) -> Option<Expr>,
        changed: bool,
    }
    impl ExprMutator for Rewriter<'_> {
        fn state(&mut self) -> &mut MutatorState {
            &mut self.state
        }
        fn visit_var_binding(&mut self, binding: &VarBinding) {
            let replacement = (self.decide)(&binding.var, &binding.value).filter(|new| {
                !new.ptr_eq(&binding.value) && !structural_equal(new, &binding.value)
            });
            let Some(new) = replacement else {
                let value = self.visit_expr(&binding.value);
                self.reemit_binding(binding, value);
                return;
            };
            let new = self.visit_expr(&new);
            let new = self.normalize(new);
            if let (Some(old), Some(got)) = (binding.var.struct_info(), new.struct_info()) {
                if struct_info_base_check(old, got, &Analyzer::new()) != BaseCheckResult::Pass {
                    self.builder().report(Error::Compile(vec![Diagnostic::new(
                        "rewrite-struct-info-mismatch",
                        format!(
                            "the replacement of `{}` has StructInfo {got}, which is not compatible with the binding's {old}",
                            binding.var.name_hint()
                        ),
                    )]));
                }
            }
            self.changed = true;
            self.reemit_binding(binding, new);
        }
    }
    let mut r = Rewriter {
        state: MutatorState::with_module(&IRModule::new()),
        decide,
        changed: false,
    };
    let out = r.visit_expr(&Expr::function(func.clone()));
    let errors = r.builder().take_errors();
    if !errors.is_empty() {
        return Err(Error::Compile(errors));
    }
    if !r.changed {
        return Ok(None);
    }
    match out.kind() {
        ExprKind::Function(f) => Ok(Some(f.clone())),
        _ => Ok(None),
    }
}

/// Whether a top-level binding of `func` binds a dataflow variable to
/// another variable.
fn has_alias(func: &Function) -> bool {
    func.body.as_seq().is_none_or(|seq| {
        seq.blocks
            .iter()
            .flat_map(|b| &b.bindings)
            .any(|b| b.var().is_dataflow() && b.value().as_var().is_some())
    })
}

/// `func` without bindings of a dataflow variable to another variable: its
/// uses read the other variable instead.
fn fold_trivial_bindings(func: &Function) -> Function {
    struct Fold {
        state: MutatorState,
    }
    impl ExprMutator for Fold {
        fn state(&mut self) -> &mut MutatorState {
            &mut self.state
        }
        fn visit_var_binding(&mut self, binding: &VarBinding) {
            let value = self.visit_expr(&binding.value);
            if let (true, ExprKind::Var(a)) = (binding.var.is_dataflow(), value.kind()) {
                self.var_remap().insert(binding.var.clone(), a.clone());
                return;
            }
            self.reemit_binding(binding, value);
        }
    }
    let mut fold = Fold {
        state: MutatorState::with_module(&IRModule::new()),
    };
    let out = fold.visit_expr(&Expr::function(func.clone()));
    match (fold.builder().take_errors().is_empty(), out.kind()) {
        (true, ExprKind::Function(f)) => f.clone(),
        _ => func.clone(),
    }
}

/// The callback of a [`PatternRewriter`].
pub type RewriteFn = Arc<dyn Fn(&Expr, &Match) -> Expr + Send + Sync>;

/// Patterns and their rewrites as a [`Pass`] over every Relax function:
/// one rule from [`PatternRewriter::new`], several from `a | b` (TVM's
/// `OrRewriter`), applied as [`rewrite_calls`] applies them.
#[derive(Clone)]
pub struct PatternRewriter {
    name: String,
    rules: Vec<(Pattern, RewriteFn)>,
}

impl PatternRewriter {
    /// The pass `name` replacing what `pattern` matches by `rewrite`'s result.
    pub fn new(
        name: &str,
        pattern: Pattern,
        rewrite: impl Fn(&Expr, &Match) -> Expr + Send + Sync + 'static,
    ) -> Self {
        PatternRewriter {
            name: name.to_string(),
            rules: vec![(pattern, Arc::new(rewrite))],
        }
    }

    /// The rewrite applied to one function.
    pub fn rewrite_function(&self, func: &Function) -> Result<Function, Error> {
        let rules: Vec<Rule<'_>> = self
            .rules
            .iter()
            .map(|(p, f)| -> Rule<'_> { (p, f.as_ref()) })
            .collect();
        rewrite_calls(&rules, func)
    }
}

/// `a | b`: one pass trying `a`'s rules, then `b`'s, on every binding.
impl std::ops::BitOr for PatternRewriter {
    type Output = PatternRewriter;

    fn bitor(mut self, rhs: PatternRewriter) -> PatternRewriter {
        self.name = format!("{} | {}", self.name, rhs.name);
        self.rules.extend(rhs.rules);
        self
    }
}

impl Pass for PatternRewriter {
    fn name(&self) -> &str {
        &self.name
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            let new = self.rewrite_function(func).map_err(|e| match e {
                Error::Compile(ds) => Error::Compile(
                    ds.into_iter()
                        .map(|d| {
                            let message = format!(
                                "pattern rewriter `{}` in function `{}`: {}",
                                self.name,
                                gv.name_hint(),
                                d.message
                            );
                            Diagnostic::new(d.code, message)
                        })
                        .collect(),
                ),
                other => other,
            })?;
            out.add(gv.clone(), new);
        }
        Ok(out)
    }
}
