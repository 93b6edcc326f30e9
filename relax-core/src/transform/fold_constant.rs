//! `FoldConstant`: evaluates op calls on constants at compile time (TVM's
//! `relax.transform.FoldConstant`).
//!
//! 1. Inside dataflow blocks, a call of a registered, pure op whose
//!    arguments are all constants (tensor constants, or tuples of them) and
//!    whose attributes are all known (no symbolic value) is evaluated with
//!    the op's reference kernel ([`relax_runtime::kernels`]) and replaced by
//!    the resulting `Constant` (a tuple of constants for an op returning
//!    several tensors). The kernels are the same ones
//!    `Target::interpreter()` runs, so folding never changes a result.
//! 2. A use of a variable bound to a constant (by folding or in the source)
//!    is replaced by the constant, so chains fold in one pass
//!    (`a = add(c0, c1); b = multiply(a, c2)` folds both). The bindings
//!    themselves stay; `DeadCodeElimination` removes the ones that became
//!    unused.
//! 3. A `call_tir` whose arguments are all constants, whose outputs have
//!    static shapes and known dtypes, and whose `tir_vars` (if any) are
//!    literals, is folded by running the PrimFunc on the loop-level
//!    interpreter ([`crate::tir::interp`]), the oracle of compiled kernels.
//! 4. A call whose evaluation fails (an index out of range, an unsupported
//!    dtype) is left as it is: the error belongs to run time, where it is
//!    reported with the call's context. Calls outside dataflow blocks, calls
//!    of Relax functions and host calls are never folded.

use crate::ir::{
    AttrValue, Attrs, BindingBlock, Call, Expr, ExprKind, IRModule, PrimExpr, StructInfo, Tensor,
    Var, VarBinding,
};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use crate::transform::Pass;
use relax_runtime::executable::KernelAttr;
use relax_runtime::kernels::KernelAttrs;
use relax_runtime::{Error, Value};
use std::collections::HashMap;

/// Folds op calls on constants. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct FoldConstant;

impl Pass for FoldConstant {
    fn name(&self) -> &str {
        "FoldConstant"
    }
    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut folder = Folder {
            module: module.clone(),
            state: MutatorState::with_module(&module),
            in_dataflow: false,
            constants: HashMap::new(),
        };
        mutate_module(&mut folder, &module)
    }
}

struct Folder {
    /// The module being folded (for the PrimFuncs of `call_tir`).
    module: IRModule,
    state: MutatorState,
    /// Whether the bindings visited are in a dataflow block.
    in_dataflow: bool,
    /// Variables bound to constants, with their (normalized) constant.
    constants: HashMap<Var, Expr>,
}

impl ExprMutator for Folder {
    fn state(&mut self) -> &mut crate::mutator::MutatorState {
        &mut self.state
    }

    fn visit_var(&mut self, expr: &Expr, var: &Var) -> Expr {
        match self.constants.get(var) {
            Some(c) => c.clone(),
            None => self
                .var_remap()
                .get(var)
                .map_or_else(|| expr.clone(), Expr::var),
        }
    }

    fn visit_dataflow_block(&mut self, block: &BindingBlock) {
        let outer = std::mem::replace(&mut self.in_dataflow, true);
        if let Err(e) = self.builder().begin_dataflow() {
            self.builder().report(e);
        }
        block.bindings.iter().for_each(|b| self.visit_binding(b));
        if let Err(e) = self.builder().end_dataflow() {
            self.builder().report(e);
        }
        self.in_dataflow = outer;
    }

    fn visit_call(&mut self, expr: &Expr, _call: &Call) -> Expr {
        let rebuilt = self.visit_expr_post_order(expr);
        if !self.in_dataflow {
            return rebuilt;
        }
        let module = &self.module;
        match rebuilt.as_call().and_then(|c| evaluate(module, c)) {
            Some(folded) => self.normalize(folded),
            None => rebuilt,
        }
    }

    fn visit_var_binding(&mut self, binding: &VarBinding) {
        let value = self.visit_expr(&binding.value);
        let value = if value.ptr_eq(&binding.value) {
            value
        } else {
            self.normalize(value)
        };
        if matches!(value.kind(), ExprKind::Constant(_)) {
            self.constants.insert(binding.var.clone(), value.clone());
        }
        self.reemit_binding(binding, value);
    }
}

/// The value of `call` if it can be folded (see the module docs).
fn evaluate(module: &IRModule, call: &Call) -> Option<Expr> {
    let ExprKind::Op(op) = call.op.kind() else {
        return None;
    };
    if op.name() == "relax.call_tir" {
        return evaluate_call_tir(module, call);
    }
    evaluate_op_call(call)
}

/// The value of a call of a registered, pure op whose arguments are
/// constants (tensors, tuples of them, shapes of known dims) and whose
/// attributes are known, computed with the op's reference kernel; `None`
/// when it cannot be (the ONNX importer folds shape arithmetic with it).
pub fn evaluate_op_call(call: &Call) -> Option<Expr> {
    let ExprKind::Op(op) = call.op.kind() else {
        return None;
    };
    let info = crate::op::lookup(op.name())?;
    if !info.purity {
        return None;
    }
    let kernel = relax_runtime::kernels::lookup(op.name())?;
    let args = call
        .args
        .iter()
        .map(constant_value)
        .collect::<Option<Vec<_>>>()?;
    let attrs = constant_attrs(&call.attrs)?;
    let result = kernel(&args, &attrs).ok()?;
    constant_expr(result)
}

/// The value of a `call_tir` on constants, run on the loop-level
/// interpreter.
fn evaluate_call_tir(module: &IRModule, call: &Call) -> Option<Expr> {
    let ExprKind::GlobalVar(gv) = call.args.first()?.kind() else {
        return None;
    };
    let func = module.get(gv.name_hint())?.as_prim()?;
    let inputs = constant_tuple(call.args.get(1)?)?;
    let scalars = match call.args.get(2) {
        None => vec![],
        Some(e) => match e.kind() {
            ExprKind::ShapeExpr(dims) => {
                dims.iter().map(PrimExpr::as_int).collect::<Option<_>>()?
            }
            _ => return None,
        },
    };
    let declared: Vec<StructInfo> = match call.sinfo_args.as_slice() {
        [one] => one
            .as_tuple()
            .map_or_else(|| vec![one.clone()], <[_]>::to_vec),
        many => many.to_vec(),
    };
    let mut outputs = declared
        .iter()
        .map(|s| {
            let t = s.as_tensor()?;
            let dims = t
                .shape_values()?
                .iter()
                .map(PrimExpr::as_int)
                .collect::<Option<Vec<_>>>()?;
            if t.dtype.is_void() {
                return None;
            }
            Tensor::zeros(t.dtype, &dims).ok()
        })
        .collect::<Option<Vec<_>>>()?;
    let refs: Vec<&Tensor> = inputs.iter().collect();
    crate::tir::interp::run(func, &refs, &mut outputs, &scalars).ok()?;
    Some(match outputs.len() {
        1 => Expr::constant(outputs.pop()?),
        _ => Expr::tuple(outputs.into_iter().map(Expr::constant).collect()),
    })
}

/// The tensors of a tuple of constants.
fn constant_tuple(e: &Expr) -> Option<Vec<Tensor>> {
    match e.kind() {
        ExprKind::Tuple(fields) => fields
            .iter()
            .map(|f| match f.kind() {
                ExprKind::Constant(t) => Some(t.clone()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// An argument's value, if it is a constant or a tuple of constants.
fn constant_value(e: &Expr) -> Option<Value> {
    match e.kind() {
        ExprKind::Constant(t) => Some(Value::Tensor(t.clone())),
        ExprKind::Tuple(fields) => Some(Value::tuple(
            fields.iter().map(constant_value).collect::<Option<_>>()?,
        )),
        ExprKind::ShapeExpr(dims) => Some(Value::Shape(
            dims.iter()
                .map(PrimExpr::as_int)
                .collect::<Option<Vec<_>>>()?
                .into(),
        )),
        _ => None,
    }
}

/// A kernel's result as an expression: a tensor becomes a `Constant`, a
/// tuple of tensors a tuple of them; other values are not folded.
fn constant_expr(v: Value) -> Option<Expr> {
    match v {
        Value::Tensor(t) => Some(Expr::constant(t)),
        Value::Tuple(_) => Some(Expr::tuple(
            v.as_tuple()?
                .iter()
                .cloned()
                .map(constant_expr)
                .collect::<Option<_>>()?,
        )),
        _ => None,
    }
}

/// The call's attributes as a kernel reads them, if none is symbolic.
fn constant_attrs(attrs: &Attrs) -> Option<KernelAttrs> {
    Some(KernelAttrs(
        attrs
            .iter()
            .map(|(k, v)| Some((k.to_string(), constant_attr(v)?)))
            .collect::<Option<_>>()?,
    ))
}

fn constant_attr(v: &AttrValue) -> Option<KernelAttr> {
    Some(match v {
        AttrValue::None => KernelAttr::None,
        AttrValue::Bool(b) => KernelAttr::Bool(*b),
        AttrValue::Int(i) => KernelAttr::Int(*i),
        AttrValue::Float(f) => KernelAttr::Float(*f),
        AttrValue::Str(s) => KernelAttr::Str(s.clone()),
        AttrValue::DataType(d) => KernelAttr::DataType(*d),
        AttrValue::PrimExpr(e) => KernelAttr::Int(e.as_int()?),
        AttrValue::Array(items) => {
            KernelAttr::Array(items.iter().map(constant_attr).collect::<Option<_>>()?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::structural_equal_report;

    fn parse(text: &str) -> IRModule {
        text.parse()
            .unwrap_or_else(|e| panic!("the test module does not parse: {e}"))
    }

    fn check(before: &str, expected: &str) {
        let after = FoldConstant.run(parse(before)).unwrap();
        let expected = parse(expected);
        if let Err(m) = structural_equal_report(&after, &expected) {
            panic!("{m}\n--- after:\n{after}\n--- expected:\n{expected}");
        }
    }

    #[test]
    fn chains_of_constant_calls_fold_and_uses_see_the_constant() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        with R.dataflow():
            a = R.add(R.const([1.0, 2.0], "float32"), R.const([3.0, 4.0], "float32"))
            b = R.multiply(a, R.const([2.0, 0.5], "float32"))
            c = R.add(x, b)
            R.output(c)
        return c
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        with R.dataflow():
            a = R.const([4.0, 6.0], "float32")
            b = R.const([8.0, 3.0], "float32")
            c = R.add(x, R.const([8.0, 3.0], "float32"))
            R.output(c)
        return c
"#,
        );
    }

    #[test]
    fn attributes_tuples_and_outputs_fold() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main() -> R.Tensor((1, 4), dtype="float32"):
        with R.dataflow():
            a = R.concat((R.const([1.0, 2.0], "float32"), R.const([3.0, 4.0], "float32")), axis=0)
            b = R.expand_dims(a, axis=[0])
            n = R.negative(b)
            gv = R.nn.relu(n)
            R.output(gv)
        return gv
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main() -> R.Tensor((1, 4), dtype="float32"):
        with R.dataflow():
            a = R.const([1.0, 2.0, 3.0, 4.0], "float32")
            b = R.const([[1.0, 2.0, 3.0, 4.0]], "float32")
            n = R.const([[-1.0, -2.0, -3.0, -4.0]], "float32")
            gv = R.const([[0.0, 0.0, 0.0, 0.0]], "float32")
            R.output(gv)
        return R.const([[0.0, 0.0, 0.0, 0.0]], "float32")
"#,
        );
    }

    #[test]
    fn call_tir_on_constants_runs_the_primfunc() {
        use crate::backend::testing::{add_one, with_prim_func};
        let before = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "float32")):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.add_one, (R.const([1.0, 2.0, 3.0], "float32"),), out_sinfo=R.Tensor((3,), dtype="float32"))
            b = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((3,), dtype="float32"))
            c = R.add(a, b)
            R.output(c)
        return c
"#;
        let expected = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "float32")):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        cls = Module
        with R.dataflow():
            a = R.const([2.0, 3.0, 4.0], "float32")
            b = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((3,), dtype="float32"))
            c = R.add(R.const([2.0, 3.0, 4.0], "float32"), b)
            R.output(c)
        return c
"#;
        let func = add_one();
        let before = with_prim_func(parse(before), "add_one", func.clone());
        let after = FoldConstant.run(before).unwrap();
        let expected = with_prim_func(parse(expected), "add_one", func);
        if let Err(m) = structural_equal_report(&after, &expected) {
            panic!("{m}\n--- after:\n{after}\n--- expected:\n{expected}");
        }
    }

    #[test]
    fn calls_outside_dataflow_on_variables_or_failing_are_kept() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((1,), dtype="float32"):
        a = R.add(R.const([1.0, 2.0], "float32"), R.const([3.0, 4.0], "float32"))
        with R.dataflow():
            b = R.add(x, R.const([1.0, 1.0], "float32"))
            c = R.take(R.const([1.0, 2.0], "float32"), R.const([7], "int64"), axis=0)
            R.output(b, c)
        return c
"#;
        check(text, text);
    }
}
