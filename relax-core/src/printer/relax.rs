//! Printing Relax functions, binding blocks, bindings and expressions.
//!
//! The printer writes lines into one buffer at an indentation level. An
//! expression is formatted to a string; when it cannot be written inline in
//! Python (a nested function, an `If` or a `SeqExpr` in a position the normal
//! form does not allow) its statements are written first, at the current
//! indentation, and the expression becomes the name they define. Since a
//! statement's own line is written only after its value has been formatted,
//! those statements always come before it.

use super::metadata::Constants;
use super::names::{sanitize, Names};
use super::prim::{py_tuple, quote};
use crate::ir::attrs::Attrs;
use crate::ir::expr::{Binding, BindingBlock, Call, Expr, ExprKind, If, SeqExpr, Var};
use crate::ir::function::{attr, Function};
use crate::ir::prim_expr::TirVar;
use crate::ir::struct_info::StructInfo;
use std::collections::{BTreeSet, HashSet};

/// Printing state for one text (a module, a function or an expression).
pub(crate) struct Printer {
    out: String,
    /// The current indentation, in steps of four spaces.
    pub(crate) indent: usize,
    /// Names of the variables of the function being printed.
    pub(crate) names: Names,
    /// Where constants go.
    pub(crate) consts: Constants,
    /// Whether the text uses the `T` namespace (so it needs the `tir` import).
    pub(crate) uses_tir: bool,
    /// Whether a function signature is being printed (dims print as strings).
    pub(crate) in_signature: bool,
    /// Symbolic vars declared (`n = T.int64()`) by the enclosing functions.
    declared: HashSet<TirVar>,
    /// When printing a module: the names of the `int64` symbolic vars of
    /// PrimFunc signatures, declared once before the class as
    /// `n = TypeVar("n")` (TVM 0.27's form; TVM rejects a PrimFunc whose
    /// signature uses a var its body declares).
    pub(crate) type_vars: Option<BTreeSet<String>>,
    /// Whether the function being printed names a global (`cls.f`), so it
    /// starts with `cls = Module`.
    uses_cls: bool,
}

impl Printer {
    /// A printer with an empty buffer.
    pub(crate) fn new(consts: Constants) -> Self {
        Printer {
            out: String::new(),
            indent: 0,
            names: Names::default(),
            consts,
            uses_tir: false,
            in_signature: false,
            declared: HashSet::new(),
            type_vars: None,
            uses_cls: false,
        }
    }

    /// Forgets the names and declarations of the previous top-level function:
    /// each function is a scope of its own.
    pub(crate) fn reset_scope(&mut self) {
        self.names = Names::default();
        self.declared.clear();
    }

    /// Writes one line at the current indentation (an empty line stays empty).
    pub(crate) fn line(&mut self, text: &str) {
        if !text.is_empty() {
            for _ in 0..self.indent {
                self.out.push_str("    ");
            }
            self.out.push_str(text);
        }
        self.out.push('\n');
    }

    /// The text written so far, without the final newline.
    pub(crate) fn take_text(&mut self) -> String {
        let mut text = std::mem::take(&mut self.out);
        if text.ends_with('\n') {
            text.pop();
        }
        text
    }

    /// The name of a Relax variable.
    pub(crate) fn var_name(&mut self, v: &Var) -> String {
        self.names.get(v.id(), v.name_hint())
    }

    /// `name` or `name: <sinfo>` for the left-hand side of a binding.
    fn binding_lhs(&mut self, v: &Var) -> String {
        let name = self.var_name(v);
        match v.struct_info() {
            Some(s) => format!("{name}: {}", self.sinfo(s)),
            None => name,
        }
    }

    /// A function as a `def`. `top_level` functions (module members, or a
    /// function printed alone) say `private=True` when they have no global
    /// symbol and leave out a global symbol equal to `name`.
    pub(crate) fn function(&mut self, name: &str, f: &Function, top_level: bool) {
        let mut options = Vec::new();
        if !f.is_pure {
            options.push("pure=False");
        }
        if top_level && f.global_symbol().is_none() {
            options.push("private=True");
        }
        if options.is_empty() {
            self.line("@R.function");
        } else {
            self.line(&format!("@R.function({})", options.join(", ")));
        }

        let outer_signature = std::mem::replace(&mut self.in_signature, true);
        let mut params = Vec::new();
        for p in &f.params {
            params.push(self.binding_lhs(p));
        }
        let ret = self.sinfo(&f.ret_struct_info);
        self.in_signature = outer_signature;
        self.line(&format!(
            "def {}({}) -> {ret}:",
            sanitize(name),
            params.join(", ")
        ));

        self.indent += 1;
        let attrs = if top_level && f.global_symbol() == Some(name) {
            f.attrs.without(attr::GLOBAL_SYMBOL)
        } else {
            f.attrs.clone()
        };
        if !attrs.is_empty() {
            let dict = self.attr_dict(&attrs);
            self.line(&format!("R.func_attr({dict})"));
        }
        let outer_declared = self.declared.clone();
        let outer_cls = std::mem::replace(&mut self.uses_cls, false);
        let cls_at = self.out.len();
        self.declare_tir_vars(f);
        let ret = match f.body.as_seq() {
            Some(seq) => {
                self.seq_statements(seq);
                self.expr(&seq.body)
            }
            None => self.expr(&f.body),
        };
        self.line(&format!("return {ret}"));
        if self.uses_cls && outer_cls {
            // A nested function: the enclosing one already has `cls`.
        } else if self.uses_cls {
            let line = format!("{}cls = Module\n", "    ".repeat(self.indent));
            self.out.insert_str(cls_at, &line);
        }
        // A module member starts the next one afresh; a nested function's
        // use of `cls` is also its enclosing function's.
        self.uses_cls = !top_level && (self.uses_cls || outer_cls);
        self.declared = outer_declared;
        self.indent -= 1;
    }

    /// `{"key": value, …}`
    pub(crate) fn attr_dict(&mut self, attrs: &Attrs) -> String {
        let items: Vec<String> = attrs
            .iter()
            .map(|(k, v)| format!("{}: {}", quote(k), self.attr_value(v)))
            .collect();
        format!("{{{}}}", items.join(", "))
    }

    /// One `n = T.int64()` line per symbolic var of `f` not declared by an
    /// enclosing function: first those its signature defines, then the others
    /// in order of first appearance.
    fn declare_tir_vars(&mut self, f: &Function) {
        let mut vars = Vec::new();
        for p in &f.params {
            if let Some(s) = p.struct_info() {
                for v in s.definable_tir_vars() {
                    if !vars.contains(&v) {
                        vars.push(v);
                    }
                }
            }
        }
        collect::function(f, &mut vars);
        for v in vars {
            if self.declared.insert(v.clone()) {
                self.uses_tir = true;
                let name = self.tir_var_name(&v);
                self.line(&format!("{name} = T.{}()", v.dtype()));
            }
        }
    }

    /// The blocks of a sequence, as statements.
    fn seq_statements(&mut self, seq: &SeqExpr) {
        for block in &seq.blocks {
            self.block(block);
        }
    }

    fn block(&mut self, block: &BindingBlock) {
        if !block.is_dataflow {
            for b in &block.bindings {
                self.binding(b);
            }
            return;
        }
        self.line("with R.dataflow():");
        self.indent += 1;
        for b in &block.bindings {
            self.binding(b);
        }
        let outputs: Vec<String> = block
            .bindings
            .iter()
            .map(Binding::var)
            .filter(|v| !v.is_dataflow())
            .map(|v| self.var_name(v))
            .collect();
        self.line(&format!("R.output({})", outputs.join(", ")));
        self.indent -= 1;
    }

    fn binding(&mut self, b: &Binding) {
        match b {
            Binding::VarBinding(vb) => match vb.value.kind() {
                ExprKind::Function(f) => {
                    let name = self.var_name(&vb.var);
                    self.function(&name, f, false);
                }
                ExprKind::If(i) => {
                    let cond = self.expr(&i.cond);
                    let lhs = self.binding_lhs(&vb.var);
                    self.if_statement(&cond, i, &lhs);
                }
                _ => {
                    let value = self.expr(&vb.value);
                    let lhs = self.binding_lhs(&vb.var);
                    self.line(&format!("{lhs} = {value}"));
                }
            },
            Binding::MatchCast(mc) => {
                let value = self.expr(&mc.value);
                let pattern = self.sinfo(&mc.struct_info);
                let lhs = self.binding_lhs(&mc.var);
                self.line(&format!("{lhs} = R.match_cast({value}, {pattern})"));
            }
        }
    }

    /// `if cond:` / `else:` with each branch ending in `lhs = <branch result>`.
    fn if_statement(&mut self, cond: &str, i: &If, lhs: &str) {
        self.line(&format!("if {cond}:"));
        self.indent += 1;
        self.branch(&i.true_branch, lhs);
        self.indent -= 1;
        self.line("else:");
        self.indent += 1;
        self.branch(&i.false_branch, lhs);
        self.indent -= 1;
    }

    fn branch(&mut self, e: &Expr, lhs: &str) {
        let value = match e.as_seq() {
            Some(seq) => {
                self.seq_statements(seq);
                self.expr(&seq.body)
            }
            None => self.expr(e),
        };
        self.line(&format!("{lhs} = {value}"));
    }

    /// An expression, written inline.
    pub(crate) fn expr(&mut self, e: &Expr) -> String {
        match e.kind() {
            ExprKind::Constant(t) => self.consts.reference(e.node_id(), t),
            ExprKind::Var(v) => self.var_name(v),
            ExprKind::GlobalVar(g) => {
                self.uses_cls = true;
                format!("cls.{}", sanitize(g.name_hint()))
            }
            ExprKind::Tuple(fields) => {
                let fields: Vec<String> = fields.iter().map(|f| self.expr(f)).collect();
                py_tuple(&fields)
            }
            ExprKind::SeqExpr(seq) => {
                // Not in normal form here: its bindings become statements
                // before the current one.
                self.seq_statements(seq);
                self.expr(&seq.body)
            }
            ExprKind::PrimValue(v) => format!("R.prim_value({})", self.prim(v)),
            ExprKind::StringImm(s) => format!("R.str({})", quote(s)),
            ExprKind::DataTypeImm(d) => format!("R.dtype({})", quote(&d.to_string())),
            ExprKind::Function(f) => {
                let name = self.names.fresh("f");
                self.function(&name, f, false);
                name
            }
            ExprKind::If(i) => {
                let cond = self.expr(&i.cond);
                let name = self.names.fresh("if_result");
                self.if_statement(&cond, i, &name);
                name
            }
            ExprKind::ExternFunc(s) => format!("R.ExternFunc({})", quote(s)),
            ExprKind::Call(c) => self.call(c),
            ExprKind::ShapeExpr(values) => {
                let values: Vec<String> = values.iter().map(|v| self.prim(v)).collect();
                format!("R.shape([{}])", values.join(", "))
            }
            ExprKind::TupleGetItem(t, i) => format!("{}[{i}]", self.expr(t)),
            ExprKind::Op(op) => format!("R.{}", op_path(op.name())),
        }
    }

    /// `key=value` for each attribute.
    fn keyword_attrs(&mut self, attrs: &Attrs, parts: &mut Vec<String>) {
        for (k, v) in attrs.iter() {
            let v = self.attr_value(v);
            parts.push(format!("{k}={v}"));
        }
    }

    fn sinfo_list(&mut self, sinfos: &[StructInfo]) -> Vec<String> {
        sinfos.iter().map(|s| self.sinfo(s)).collect()
    }

    /// The callee of a destination-passing call: a quoted symbol for an
    /// extern function, else the expression.
    fn dps_callee(&mut self, e: &Expr) -> String {
        match e.kind() {
            ExprKind::ExternFunc(s) => quote(s),
            _ => self.expr(e),
        }
    }

    fn call(&mut self, c: &Call) -> String {
        let mut parts = Vec::new();
        let callee = match c.op.kind() {
            ExprKind::Op(op) if is_dps_call(op.name()) && !c.args.is_empty() => {
                parts.push(self.dps_callee(&c.args[0]));
                // call_tir's third argument holds the extra symbolic
                // arguments of the PrimFunc; it prints after `out_sinfo`.
                let has_tir_vars = op.name() != "relax.call_dps_packed";
                let mut tir_vars = None;
                for (i, a) in c.args.iter().enumerate().skip(1) {
                    let a = self.expr(a);
                    if i == 2 && has_tir_vars {
                        tir_vars = Some(a);
                    } else {
                        parts.push(a);
                    }
                }
                let sinfos = self.sinfo_list(&c.sinfo_args);
                match sinfos.as_slice() {
                    [] => {}
                    // TVM 0.27's keyword (it was `out_sinfo=` before).
                    [one] => parts.push(format!("out_ty={one}")),
                    _ => parts.push(format!("out_ty=[{}]", sinfos.join(", "))),
                }
                // As TVM prints them: `inplace_indices` after `out_ty`.
                self.keyword_attrs(&c.attrs, &mut parts);
                if let Some(t) = tir_vars {
                    parts.push(format!("tir_vars={t}"));
                }
                return format!("R.{}({})", op_path(op.name()), parts.join(", "));
            }
            ExprKind::ExternFunc(symbol) => {
                parts.push(quote(symbol));
                for a in &c.args {
                    parts.push(self.expr(a));
                }
                self.keyword_attrs(&c.attrs, &mut parts);
                // TVM 0.27's keyword (it was `sinfo_args=` before).
                let sinfos = self.sinfo_list(&c.sinfo_args);
                if !sinfos.is_empty() {
                    parts.push(format!("ty_args={}", py_tuple(&sinfos)));
                }
                return format!("R.call_packed({})", parts.join(", "));
            }
            // TVM's forms: the format as a keyword after the values.
            ExprKind::Op(op)
                if (op.name() == "relax.print" && !c.args.is_empty())
                    || (op.name() == "relax.assert_op" && c.args.len() >= 2) =>
            {
                let at = usize::from(op.name() == "relax.assert_op");
                for (i, a) in c.args.iter().enumerate() {
                    if i != at {
                        parts.push(self.expr(a));
                    }
                }
                parts.push(format!("format={}", self.expr(&c.args[at])));
                return format!("R.{}({})", op_path(op.name()), parts.join(", "));
            }
            ExprKind::Op(op) => format!("R.{}", op_path(op.name())),
            ExprKind::GlobalVar(_) | ExprKind::Var(_) => self.expr(&c.op),
            _ => format!("({})", self.expr(&c.op)),
        };
        for a in &c.args {
            parts.push(self.expr(a));
        }
        self.keyword_attrs(&c.attrs, &mut parts);
        if !c.sinfo_args.is_empty() {
            // The ops of TVM 0.27 that take StructInfo arguments take
            // `ty_args=`; any other call with them (this project's
            // extension) `sinfo_args=`.
            let key = match c.op.kind() {
                ExprKind::Op(op)
                    if matches!(op.name(), "relax.call_pure_packed" | "relax.invoke_closure") =>
                {
                    "ty_args"
                }
                _ => "sinfo_args",
            };
            let sinfos = self.sinfo_list(&c.sinfo_args);
            parts.push(format!("{key}={}", py_tuple(&sinfos)));
        }
        format!("{callee}({})", parts.join(", "))
    }
}

/// Whether calls of the op take `(callee, (args…), out_sinfo=…)`.
fn is_dps_call(name: &str) -> bool {
    matches!(
        name,
        "relax.call_tir"
            | "relax.call_tir_inplace"
            | "relax.call_tir_with_grad"
            | "relax.call_dps_packed"
    )
}

/// The TVMScript path of an op: `relax.nn.relu` is `nn.relu` under `R`.
fn op_path(name: &str) -> &str {
    name.strip_prefix("relax.").unwrap_or(name)
}

/// The symbolic variables a function's text mentions, in order of first
/// appearance, for the declarations at the top of its body.
mod collect {
    use crate::ir::attrs::AttrValue;
    use crate::ir::expr::{Binding, Expr, ExprKind, SeqExpr};
    use crate::ir::function::Function;
    use crate::ir::prim_expr::{PrimExpr, TirVar};
    use crate::ir::struct_info::StructInfo;

    /// Signature then body. The vars a nested function's signature defines
    /// are its own and are left out.
    pub(super) fn function(f: &Function, out: &mut Vec<TirVar>) {
        for p in &f.params {
            if let Some(s) = p.struct_info() {
                sinfo(s, out);
            }
        }
        sinfo(&f.ret_struct_info, out);
        expr(&f.body, out);
    }

    fn prim(e: &PrimExpr, out: &mut Vec<TirVar>) {
        e.collect_vars(out)
    }

    fn sinfo(s: &StructInfo, out: &mut Vec<TirVar>) {
        s.visit_prim_exprs(&mut |e| prim(e, out), false)
    }

    fn attr(v: &AttrValue, out: &mut Vec<TirVar>) {
        match v {
            AttrValue::PrimExpr(e) => prim(e, out),
            AttrValue::Array(items) => items.iter().for_each(|i| attr(i, out)),
            _ => {}
        }
    }

    fn seq(s: &SeqExpr, out: &mut Vec<TirVar>) {
        for block in &s.blocks {
            for b in &block.bindings {
                expr(b.value(), out);
                if let Binding::MatchCast(mc) = b {
                    sinfo(&mc.struct_info, out);
                }
                if let Some(s) = b.var().struct_info() {
                    sinfo(s, out);
                }
            }
        }
        expr(&s.body, out);
    }

    fn expr(e: &Expr, out: &mut Vec<TirVar>) {
        match e.kind() {
            ExprKind::Constant(_)
            | ExprKind::Var(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::StringImm(_)
            | ExprKind::DataTypeImm(_)
            | ExprKind::ExternFunc(_)
            | ExprKind::Op(_) => {}
            ExprKind::Tuple(fields) => fields.iter().for_each(|f| expr(f, out)),
            ExprKind::SeqExpr(s) => seq(s, out),
            ExprKind::PrimValue(v) => prim(v, out),
            ExprKind::Function(f) => {
                let own: Vec<TirVar> = f
                    .params
                    .iter()
                    .filter_map(|p| p.struct_info())
                    .flat_map(|s| s.definable_tir_vars())
                    .collect();
                let mut inner = Vec::new();
                function(f, &mut inner);
                for v in inner {
                    if !own.contains(&v) && !out.contains(&v) {
                        out.push(v);
                    }
                }
            }
            ExprKind::If(i) => {
                expr(&i.cond, out);
                expr(&i.true_branch, out);
                expr(&i.false_branch, out);
            }
            ExprKind::Call(c) => {
                expr(&c.op, out);
                c.args.iter().for_each(|a| expr(a, out));
                c.attrs.iter().for_each(|(_, v)| attr(v, out));
                c.sinfo_args.iter().for_each(|s| sinfo(s, out));
            }
            ExprKind::ShapeExpr(values) => values.iter().for_each(|v| prim(v, out)),
            ExprKind::TupleGetItem(t, _) => expr(t, out),
        }
    }
}
