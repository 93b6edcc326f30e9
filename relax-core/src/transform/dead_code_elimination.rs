//! `DeadCodeElimination`: removes what no entry function can observe (TVM's
//! `relax.transform.DeadCodeElimination`).
//!
//! 1. In every Relax function, bindings whose variable is never used and
//!    whose value has no side effect are removed, repeatedly, until none is
//!    left ([`remove_all_unused`]): a dead binding may be the only use of
//!    another.
//! 2. Then module-level functions (Relax functions and PrimFuncs) that no
//!    entry function reaches through the remaining code are removed. A
//!    function is reached when a `GlobalVar` naming it appears in a reached
//!    Relax function: called, passed to `call_tir`, or used as a value.
//!    Removing bindings first matters: a helper called only from a dead
//!    binding goes too.
//! 3. The entry functions are, by default, the public ones (those with a
//!    `global_symbol`, Relax or PrimFunc alike), or the names given to
//!    [`DeadCodeElimination::with_entry_functions`].

use crate::ir::function::attr;
use crate::ir::{BaseFunc, Expr, GlobalVar, IRModule};
use crate::mutator::remove_all_unused;
use crate::transform::Pass;
use crate::visitor::ExprVisitor;
use relax_runtime::{Diagnostic, Error};
use std::collections::BTreeSet;

/// Removes unused pure bindings and unreachable functions. See the module
/// docs.
#[derive(Clone, Debug, Default)]
pub struct DeadCodeElimination {
    /// The entries, by name; `None` for the public functions.
    entry_functions: Option<Vec<String>>,
}

impl DeadCodeElimination {
    /// The pass with `names` as the entry functions instead of the public
    /// ones (a name the module does not define is an error when it runs).
    pub fn with_entry_functions<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        DeadCodeElimination {
            entry_functions: Some(names.into_iter().map(Into::into).collect()),
        }
    }

    /// The entry functions of `module`.
    fn entries(&self, module: &IRModule) -> Result<Vec<GlobalVar>, Error> {
        let Some(names) = &self.entry_functions else {
            return Ok(module
                .functions()
                .filter(|(_, f)| is_public(f))
                .map(|(gv, _)| gv.clone())
                .collect());
        };
        let mut missing = Vec::new();
        let mut out = Vec::new();
        for name in names {
            match module.global_var(name) {
                Some(gv) => out.push(gv),
                None => missing.push(Diagnostic::new(
                    "unknown-entry-function",
                    format!(
                        "DeadCodeElimination: the entry function `{name}` is not in the module"
                    ),
                )),
            }
        }
        if missing.is_empty() {
            Ok(out)
        } else {
            Err(Error::Compile(missing))
        }
    }
}

/// Whether a module-level function has external linkage (an external
/// function always has, as in TVM).
fn is_public(f: &BaseFunc) -> bool {
    let attrs = match f {
        BaseFunc::Relax(f) => &f.attrs,
        BaseFunc::Prim(f) => &f.attrs,
        BaseFunc::Extern(_) => return true,
    };
    attrs.get(attr::GLOBAL_SYMBOL).is_some()
}

/// Collects the global functions an expression refers to.
struct References<'a>(&'a mut Vec<GlobalVar>);

impl ExprVisitor for References<'_> {
    fn visit_global_var(&mut self, _: &Expr, gv: &GlobalVar) {
        self.0.push(gv.clone());
    }
}

impl Pass for DeadCodeElimination {
    fn name(&self) -> &str {
        "DeadCodeElimination"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let entries = self.entries(&module)?;
        let mut cleaned = module.clone();
        for (gv, f) in module.functions() {
            if let BaseFunc::Relax(func) = f {
                cleaned.add(gv.clone(), remove_all_unused(func));
            }
        }
        // Reachability from the entries, over the cleaned bodies.
        let mut reached: BTreeSet<GlobalVar> = BTreeSet::new();
        let mut work = entries;
        while let Some(gv) = work.pop() {
            if !reached.insert(gv.clone()) {
                continue;
            }
            if let Some(BaseFunc::Relax(func)) = cleaned.get(gv.name_hint()) {
                let mut refs = Vec::new();
                References(&mut refs).visit_expr(&Expr::function(func.clone()));
                work.extend(refs.into_iter().filter(|r| cleaned.contains(r)));
            }
        }
        Ok(IRModule::from_functions(
            cleaned
                .functions()
                .filter(|(gv, _)| reached.contains(*gv))
                .map(|(gv, f)| (gv.clone(), f.clone())),
        )
        .with_attrs(module.attrs().clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::structural_equal_report;

    fn parse(text: &str) -> IRModule {
        text.parse()
            .unwrap_or_else(|e| panic!("the test module does not parse: {e}"))
    }

    fn check(pass: DeadCodeElimination, before: &str, expected: &str) {
        let after = pass.run(parse(before)).unwrap();
        let expected = parse(expected);
        if let Err(m) = structural_equal_report(&after, &expected) {
            panic!("{m}\n--- after:\n{after}\n--- expected:\n{expected}");
        }
    }

    const BEFORE: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def used(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @T.prim_func(private=True)
    def unused(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @T.prim_func
    def exported(A: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @R.function(private=True)
    def only_from_dead_code(a: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return a

    @R.function(private=True)
    def helper(a: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            unused_too = R.multiply(a, a)
            b = R.add(a, a)
            R.output(b)
        return b

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.used, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
            dead = cls.only_from_dead_code(x)
            dead_too = R.add(dead, x)
            b = cls.helper(a)
            R.output(b)
        return b
"#;

    #[test]
    fn removes_dead_bindings_then_unreachable_functions() {
        let expected = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def used(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @T.prim_func
    def exported(A: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @R.function(private=True)
    def helper(a: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            b = R.add(a, a)
            R.output(b)
        return b

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.used, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
            b = cls.helper(a)
            R.output(b)
        return b
"#;
        check(DeadCodeElimination::default(), BEFORE, expected);
    }

    #[test]
    fn entry_functions_replace_the_public_ones() {
        let expected = r#"
@I.ir_module
class Module:
    @R.function(private=True)
    def helper(a: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            b = R.add(a, a)
            R.output(b)
        return b
"#;
        check(
            DeadCodeElimination::with_entry_functions(["helper"]),
            BEFORE,
            expected,
        );
        let err = DeadCodeElimination::with_entry_functions(["nope"])
            .run(parse(BEFORE))
            .unwrap_err();
        assert!(err.to_string().contains("`nope`"), "{err}");
    }

    #[test]
    fn impure_bindings_stay_and_pure_ones_in_ordinary_blocks_go() {
        let before = r#"
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        unused = R.add(x, x)
        effect = R.call_packed("log", x, sinfo_args=R.Tensor((4,), dtype="float32"))
        y = R.multiply(x, x)
        return y
"#;
        let expected = r#"
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        effect = R.call_packed("log", x, sinfo_args=R.Tensor((4,), dtype="float32"))
        y = R.multiply(x, x)
        return y
"#;
        check(DeadCodeElimination::default(), before, expected);
    }

    #[test]
    fn a_module_without_dead_code_is_unchanged() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y = R.add(x, x)
            R.output(y)
        return y
"#;
        check(DeadCodeElimination::default(), text, text);
    }
}
