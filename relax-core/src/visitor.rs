//! `ExprVisitor`: read-only traversal with TVM's dispatch hierarchy.
//!
//! Every method has a default that recurses (through the `walk_*` free
//! functions, so an override can still call the default, as with
//! `syn::visit`). The hierarchy of the Relax AST design document:
//!
//! 1. `visit_expr` dispatches on the node kind to `visit_constant`,
//!    `visit_tuple`, `visit_var`, `visit_dataflow_var`, `visit_global_var`,
//!    `visit_shape_expr`, `visit_extern_func`, `visit_function`, `visit_call`,
//!    `visit_seq_expr`, `visit_if`, `visit_op`, `visit_tuple_get_item`,
//!    `visit_prim_value`, `visit_string_imm`, `visit_data_type_imm`.
//! 2. `visit_binding_block` dispatches to `visit_binding_block_` (an ordinary
//!    block) or `visit_dataflow_block`.
//! 3. `visit_binding` dispatches to `visit_var_binding` or `visit_match_cast`.
//! 4. `visit_var_def` (a definition site: a parameter or a binding's left
//!    side) dispatches to `visit_var_def_var` or
//!    `visit_var_def_dataflow_var`; `visit_var`/`visit_dataflow_var` are the
//!    use sites.
//! 5. PrimExprs (shape dims, prim values) reach `visit_prim_expr`, and the
//!    StructInfo of definitions reaches `visit_struct_info`.
//!
//! A function's body is visited after its parameters' definitions; a
//! binding's value before its variable's definition (the order of
//! evaluation).

use crate::ir::{
    Binding, BindingBlock, Call, DataType, Expr, ExprKind, Function, GlobalVar, If, MatchCast, Op,
    PrimExpr, SeqExpr, StructInfo, Tensor, Var, VarBinding,
};

/// A read-only traversal of Relax expressions. See the module docs.
pub trait ExprVisitor {
    /// Any expression: dispatches on its kind.
    fn visit_expr(&mut self, expr: &Expr) {
        walk_expr(self, expr)
    }
    /// A tensor constant.
    fn visit_constant(&mut self, _expr: &Expr, _data: &Tensor) {}
    /// A tuple: visits the fields.
    fn visit_tuple(&mut self, _expr: &Expr, fields: &[Expr]) {
        fields.iter().for_each(|f| self.visit_expr(f))
    }
    /// A use of a `Var`.
    fn visit_var(&mut self, _expr: &Expr, _var: &Var) {}
    /// A use of a `DataflowVar`.
    fn visit_dataflow_var(&mut self, _expr: &Expr, _var: &Var) {}
    /// A global function name.
    fn visit_global_var(&mut self, _expr: &Expr, _gv: &GlobalVar) {}
    /// A shape: visits the dims.
    fn visit_shape_expr(&mut self, _expr: &Expr, values: &[PrimExpr]) {
        values.iter().for_each(|v| self.visit_prim_expr(v))
    }
    /// An external function.
    fn visit_extern_func(&mut self, _expr: &Expr, _symbol: &str) {}
    /// A function: its parameters' definitions, then its body.
    fn visit_function(&mut self, _expr: &Expr, func: &Function) {
        walk_function(self, func)
    }
    /// A call: the callee, the arguments, then the `sinfo_args`.
    fn visit_call(&mut self, _expr: &Expr, call: &Call) {
        walk_call(self, call)
    }
    /// A sequence: the blocks, then the body.
    fn visit_seq_expr(&mut self, _expr: &Expr, seq: &SeqExpr) {
        walk_seq_expr(self, seq)
    }
    /// A conditional: the condition, then both branches.
    fn visit_if(&mut self, _expr: &Expr, if_: &If) {
        self.visit_expr(&if_.cond);
        self.visit_expr(&if_.true_branch);
        self.visit_expr(&if_.false_branch);
    }
    /// An operator.
    fn visit_op(&mut self, _expr: &Expr, _op: &Op) {}
    /// A tuple projection: visits the tuple.
    fn visit_tuple_get_item(&mut self, _expr: &Expr, tuple: &Expr, _index: usize) {
        self.visit_expr(tuple)
    }
    /// A boxed scalar: visits its PrimExpr.
    fn visit_prim_value(&mut self, _expr: &Expr, value: &PrimExpr) {
        self.visit_prim_expr(value)
    }
    /// A string.
    fn visit_string_imm(&mut self, _expr: &Expr, _value: &str) {}
    /// A dtype.
    fn visit_data_type_imm(&mut self, _expr: &Expr, _value: DataType) {}

    /// A binding block: dispatches on its kind.
    fn visit_binding_block(&mut self, block: &BindingBlock) {
        if block.is_dataflow {
            self.visit_dataflow_block(block)
        } else {
            self.visit_binding_block_(block)
        }
    }
    /// An ordinary binding block: each binding in order.
    fn visit_binding_block_(&mut self, block: &BindingBlock) {
        block.bindings.iter().for_each(|b| self.visit_binding(b))
    }
    /// A dataflow block: each binding in order.
    fn visit_dataflow_block(&mut self, block: &BindingBlock) {
        block.bindings.iter().for_each(|b| self.visit_binding(b))
    }
    /// A binding: dispatches on its kind.
    fn visit_binding(&mut self, binding: &Binding) {
        match binding {
            Binding::VarBinding(b) => self.visit_var_binding(b),
            Binding::MatchCast(b) => self.visit_match_cast(b),
        }
    }
    /// `var = value`: the value, then the definition.
    fn visit_var_binding(&mut self, binding: &VarBinding) {
        self.visit_expr(&binding.value);
        self.visit_var_def(&binding.var);
    }
    /// `var = match_cast(value, sinfo)`: the value, the pattern, then the definition.
    fn visit_match_cast(&mut self, binding: &MatchCast) {
        self.visit_expr(&binding.value);
        self.visit_struct_info(&binding.struct_info);
        self.visit_var_def(&binding.var);
    }
    /// A definition site: dispatches on the variable's kind.
    fn visit_var_def(&mut self, var: &Var) {
        if var.is_dataflow() {
            self.visit_var_def_dataflow_var(var)
        } else {
            self.visit_var_def_var(var)
        }
    }
    /// The definition of a `Var`.
    fn visit_var_def_var(&mut self, _var: &Var) {}
    /// The definition of a `DataflowVar`.
    fn visit_var_def_dataflow_var(&mut self, _var: &Var) {}

    /// A PrimExpr (shape dims, prim values).
    fn visit_prim_expr(&mut self, _expr: &PrimExpr) {}
    /// StructInfo at a definition or in `sinfo_args`: visits its dims.
    fn visit_struct_info(&mut self, sinfo: &StructInfo) {
        sinfo.visit_prim_exprs(&mut |e| self.visit_prim_expr(e), false)
    }
}

/// The default of [`ExprVisitor::visit_expr`]: dispatch on the kind.
pub fn walk_expr<V: ExprVisitor + ?Sized>(v: &mut V, expr: &Expr) {
    match expr.kind() {
        ExprKind::Constant(t) => v.visit_constant(expr, t),
        ExprKind::Var(var) if var.is_dataflow() => v.visit_dataflow_var(expr, var),
        ExprKind::Var(var) => v.visit_var(expr, var),
        ExprKind::GlobalVar(gv) => v.visit_global_var(expr, gv),
        ExprKind::Tuple(fields) => v.visit_tuple(expr, fields),
        ExprKind::SeqExpr(seq) => v.visit_seq_expr(expr, seq),
        ExprKind::PrimValue(p) => v.visit_prim_value(expr, p),
        ExprKind::StringImm(s) => v.visit_string_imm(expr, s),
        ExprKind::DataTypeImm(d) => v.visit_data_type_imm(expr, *d),
        ExprKind::Function(f) => v.visit_function(expr, f),
        ExprKind::If(i) => v.visit_if(expr, i),
        ExprKind::ExternFunc(s) => v.visit_extern_func(expr, s),
        ExprKind::Call(c) => v.visit_call(expr, c),
        ExprKind::ShapeExpr(values) => v.visit_shape_expr(expr, values),
        ExprKind::TupleGetItem(t, i) => v.visit_tuple_get_item(expr, t, *i),
        ExprKind::Op(op) => v.visit_op(expr, op),
    }
}

/// The default of [`ExprVisitor::visit_function`].
pub fn walk_function<V: ExprVisitor + ?Sized>(v: &mut V, func: &Function) {
    for p in &func.params {
        if let Some(s) = p.struct_info() {
            v.visit_struct_info(s);
        }
        v.visit_var_def(p);
    }
    v.visit_expr(&func.body);
}

/// The default of [`ExprVisitor::visit_call`].
pub fn walk_call<V: ExprVisitor + ?Sized>(v: &mut V, call: &Call) {
    v.visit_expr(&call.op);
    call.args.iter().for_each(|a| v.visit_expr(a));
    call.sinfo_args.iter().for_each(|s| v.visit_struct_info(s));
}

/// The default of [`ExprVisitor::visit_seq_expr`].
pub fn walk_seq_expr<V: ExprVisitor + ?Sized>(v: &mut V, seq: &SeqExpr) {
    seq.blocks.iter().for_each(|b| v.visit_binding_block(b));
    v.visit_expr(&seq.body);
}

/// Calls `f` on every expression of `expr` in post order (children first),
/// like TVM's `post_order_visit`.
pub fn post_order_visit(expr: &Expr, f: impl FnMut(&Expr)) {
    struct PostOrder<F>(F);
    impl<F: FnMut(&Expr)> ExprVisitor for PostOrder<F> {
        fn visit_expr(&mut self, expr: &Expr) {
            walk_expr(self, expr);
            (self.0)(expr)
        }
    }
    PostOrder(f).visit_expr(expr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Attrs, PrimExpr, StructInfo};
    use relax_runtime::DataType;

    /// The seed's CountVarDef: every definition, and only DataflowVar ones.
    #[derive(Default)]
    struct CountVarDef {
        all: usize,
        dataflow: usize,
    }

    impl ExprVisitor for CountVarDef {
        fn visit_var_def_var(&mut self, _: &Var) {
            self.all += 1;
        }
        fn visit_var_def_dataflow_var(&mut self, _: &Var) {
            self.all += 1;
            self.dataflow += 1;
        }
    }

    fn ewise_function() -> Function {
        let t = StructInfo::tensor(vec![PrimExpr::int(3), PrimExpr::int(4)], DataType::f32());
        let x = Var::new("x", Some(t.clone()));
        let y = Var::new("y", Some(t.clone()));
        let lv0 = Var::new_dataflow("lv0", Some(t.clone()));
        let gv0 = Var::new("gv0", Some(t.clone()));
        let mul = Expr::call_op(
            "relax.multiply",
            vec![x.to_expr(), y.to_expr()],
            Attrs::new(),
        );
        let add = Expr::call_op("relax.add", vec![lv0.to_expr(), y.to_expr()], Attrs::new());
        let block = BindingBlock::dataflow(vec![
            Binding::var_binding(lv0, mul),
            Binding::var_binding(gv0.clone(), add),
        ]);
        Function::new(vec![x, y], Expr::seq(vec![block], gv0.to_expr()), t)
    }

    #[test]
    fn count_var_def_dispatches_on_var_kind() {
        let mut c = CountVarDef::default();
        c.visit_expr(&Expr::function(ewise_function()));
        assert_eq!(
            (c.all, c.dataflow),
            (4, 1),
            "x, y, lv0, gv0 defined; only lv0 is a DataflowVar"
        );
    }

    #[test]
    fn blocks_and_bindings_dispatch_by_kind() {
        #[derive(Default)]
        struct Kinds(Vec<&'static str>);
        impl ExprVisitor for Kinds {
            fn visit_dataflow_block(&mut self, b: &BindingBlock) {
                self.0.push("dataflow");
                b.bindings.iter().for_each(|b| self.visit_binding(b));
            }
            fn visit_binding_block_(&mut self, _: &BindingBlock) {
                self.0.push("block");
            }
            fn visit_var_binding(&mut self, _: &VarBinding) {
                self.0.push("var-binding");
            }
            fn visit_match_cast(&mut self, _: &MatchCast) {
                self.0.push("match-cast");
            }
        }
        let f = ewise_function();
        let x = f.params[0].clone();
        let m = Var::new("m", x.struct_info().cloned());
        let seq = f.body.as_seq().unwrap();
        let mut blocks = seq.blocks.clone();
        blocks.push(BindingBlock::new(vec![Binding::match_cast(
            m.clone(),
            x.to_expr(),
            x.struct_info().unwrap().clone(),
        )]));
        let mut k = Kinds::default();
        k.visit_expr(&Expr::seq(blocks, m.to_expr()));
        assert_eq!(k.0, ["dataflow", "var-binding", "var-binding", "block"]);
    }

    #[test]
    fn post_order_visits_children_first() {
        let f = ewise_function();
        let mut ops = vec![];
        post_order_visit(&f.body, |e| {
            if let Some(name) = e.call_op_name() {
                ops.push(name.to_string())
            }
        });
        assert_eq!(ops, ["relax.multiply", "relax.add"]);
    }
}
