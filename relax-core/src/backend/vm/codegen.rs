//! Relax functions to VM code (TVM's `CodeGenVM`).
//!
//! 1. Every Relax function of the module becomes a [`VmFunction`];
//!    functions get their indices up front so calls can be compiled in any
//!    order.
//! 2. A function starts by checking its parameters against their
//!    annotations (two passes, see the `shape` module) and ends by checking its
//!    result against `ret_struct_info`, so a kernel only ever sees the
//!    shapes that StructInfo inference promised.
//! 3. Bindings are compiled in order; a variable lives in the register of
//!    its value (binding a variable to a variable costs nothing). Dataflow
//!    and ordinary blocks compile alike: the VM runs bindings in order.
//! 4. `If` compiles to `If`/`Goto` with both branches writing one result
//!    register.
//! 5. Op calls become kernel-table entries (the op and its attributes, with
//!    symbolic attributes compiled to [`SymExpr`](relax_runtime::executable::SymExpr)s); calls of global
//!    functions, host functions (`call_packed`, `call_pure_packed`,
//!    `call_dps_packed`) and closures get their own callees.
//! 6. `call_tir` becomes a call of a native kernel named after the PrimFunc
//!    (see `codegen/call_tir.rs` for how its signature is matched and
//!    checked); the kernels themselves come from the library `build`
//!    attaches. `call_tir_inplace` too, without allocating its in-place
//!    outputs: the kernel writes them into their arguments, moved out of
//!    their registers when this is their last read (step 7), and the VM
//!    copies an argument anything else still shares first.
//! 7. Memory planning, the compiler's half: in a dataflow block, a
//!    register is killed (`Instr::Kill`, TVM's `kill_tensor`) after the
//!    binding that uses it last, when every variable living in it is a
//!    dataflow variable of the block (outputs, parameters and ordinary
//!    variables are never killed). The VM's output pool then hands its
//!    tensor to the next output of the same dtype and shape, so
//!    intermediates whose lifetimes do not overlap share storage.

mod call_tir;

use super::shape::{is_trivial, ShapeHeap};
use crate::analysis::vars::free_vars;
use crate::ir::{
    AttrValue, BaseFunc, Binding, BindingBlock, Call, Expr, ExprKind, Function, IRModule, PrimExpr,
    PrimExprKind, StructInfo, Var, VarMap, VarSet,
};
use relax_runtime::executable::{
    Arg, Callee, Executable, Instr, KernelAttr, KernelEntry, Reg, VmFunction,
};
use relax_runtime::{Error, Value};
use std::collections::HashMap;

/// Compiles every Relax function of `module` (assumed well formed).
pub fn codegen(module: &IRModule) -> Result<Executable, Error> {
    let mut exec = Executable::default();
    let names: Vec<String> = module
        .functions()
        .filter(|(_, f)| f.as_relax().is_some())
        .map(|(gv, _)| gv.name_hint().to_string())
        .collect();
    let index: HashMap<String, u32> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i as u32))
        .collect();
    for name in &names {
        let func = module
            .get_relax(name)
            .expect("listed above as a Relax function");
        let mut c = FunctionCompiler {
            module,
            exec: &mut exec,
            functions: &index,
            name,
            regs: 0,
            vars: HashMap::new(),
            reg_vars: HashMap::new(),
            killed: Default::default(),
            last_reads: Default::default(),
            heap: ShapeHeap::default(),
            instrs: vec![],
        };
        let f = c.compile(func)?;
        exec.functions.push(f);
    }
    Ok(exec)
}

struct FunctionCompiler<'a> {
    module: &'a IRModule,
    exec: &'a mut Executable,
    functions: &'a HashMap<String, u32>,
    name: &'a str,
    regs: Reg,
    vars: HashMap<Var, Arg>,
    /// The variables living in each register.
    reg_vars: HashMap<Reg, Vec<Var>>,
    /// The registers a `Kill` was emitted for.
    killed: std::collections::HashSet<Reg>,
    /// The registers the binding being compiled reads for the last time
    /// (a `Kill` follows it): an argument `call_tir_inplace` writes in
    /// place is moved out of such a register instead of shared.
    last_reads: std::collections::HashSet<Reg>,
    heap: ShapeHeap,
    instrs: Vec<Instr>,
}

fn unsupported(what: impl Into<String>) -> Error {
    Error::Unsupported(what.into())
}

impl FunctionCompiler<'_> {
    fn compile(&mut self, func: &Function) -> Result<VmFunction, Error> {
        for p in &func.params {
            let r = self.fresh();
            self.bind_var(p, Arg::Reg(r));
        }
        // Pass 1 binds every symbolic dim the parameters define; pass 2
        // checks what pass 1 skipped (compound dims).
        for bind in [true, false] {
            for (i, p) in func.params.iter().enumerate() {
                let Some(sinfo) = p.struct_info() else {
                    continue;
                };
                let pattern = self.heap.pattern(sinfo, bind)?;
                if is_trivial(&pattern) || (!bind && !has_compound_dims(sinfo)) {
                    continue;
                }
                self.instrs.push(Instr::MatchCast {
                    value: Arg::Reg(i as Reg),
                    pattern,
                    dst: None,
                    context: format!("parameter `{}` of `{}`", p.name_hint(), self.name),
                    expected: sinfo.to_string(),
                });
            }
        }
        let result = self.expr(&func.body)?;
        let pattern = self.heap.pattern(&func.ret_struct_info, false)?;
        if !is_trivial(&pattern) {
            self.instrs.push(Instr::MatchCast {
                value: result.clone(),
                pattern,
                dst: None,
                context: format!("the result of `{}`", self.name),
                expected: func.ret_struct_info.to_string(),
            });
        }
        self.instrs.push(Instr::Ret { value: result });
        Ok(VmFunction {
            name: self.name.to_string(),
            params: func
                .params
                .iter()
                .map(|p| p.name_hint().to_string())
                .collect(),
            num_regs: self.regs,
            num_slots: self.heap.len(),
            instrs: std::mem::take(&mut self.instrs),
        })
    }

    fn fresh(&mut self) -> Reg {
        self.regs += 1;
        self.regs - 1
    }

    fn constant(&mut self, v: Value) -> Arg {
        Arg::Const(intern(&mut self.exec.constants, v))
    }

    fn reg_of(&mut self, a: Arg) -> Reg {
        match a {
            Arg::Reg(r) => r,
            other => {
                let dst = self.fresh();
                self.instrs.push(Instr::Move { src: other, dst });
                dst
            }
        }
    }

    /// A dataflow block: its bindings in order, each followed by a `Kill`
    /// of the registers whose every variable is a dataflow variable of the
    /// block past its last use (point 7 of the module docs).
    fn dataflow_block(&mut self, block: &BindingBlock) -> Result<(), Error> {
        let mut last_use: VarMap<usize> = VarMap::default();
        for (i, b) in block.bindings.iter().enumerate() {
            for v in free_vars(b.value()) {
                last_use.insert(v, i);
            }
        }
        let defined: VarSet = block.bindings.iter().map(|b| b.var().clone()).collect();
        // A dataflow variable is dead after its last use, or after its
        // binding if nothing uses it.
        let dead_after = |v: &Var, at: usize| -> Option<usize> {
            if !v.is_dataflow() || !defined.contains(v) {
                return None;
            }
            Some(last_use.get(v).copied().unwrap_or(at))
        };
        let mut dying: Vec<Vec<Var>> = vec![Vec::new(); block.bindings.len()];
        for (i, b) in block.bindings.iter().enumerate() {
            if let Some(at) = dead_after(b.var(), i) {
                dying[at.max(i)].push(b.var().clone());
            }
        }
        for (i, b) in block.bindings.iter().enumerate() {
            // The registers binding `i` reads last: those of its dying
            // variables whose every holder is dead after it.
            self.last_reads = dying[i]
                .iter()
                .filter_map(|v| match self.vars.get(v) {
                    Some(Arg::Reg(r)) => Some(*r),
                    _ => None,
                })
                .filter(|r| {
                    !self.killed.contains(r)
                        && self.reg_vars.get(r).is_some_and(|holders| {
                            holders
                                .iter()
                                .all(|w| dead_after(w, i).is_some_and(|at| at <= i))
                        })
                })
                .collect();
            let compiled = self.binding(b);
            self.last_reads.clear();
            compiled?;
            for v in &dying[i] {
                let Some(Arg::Reg(r)) = self.vars.get(v).cloned() else {
                    continue;
                };
                let holders = self.reg_vars.get(&r).map(Vec::as_slice).unwrap_or(&[]);
                let all_dead = holders
                    .iter()
                    .all(|w| dead_after(w, i).is_some_and(|at| at <= i));
                if all_dead && !self.killed.contains(&r) {
                    self.killed.insert(r);
                    self.instrs.push(Instr::Kill { reg: r });
                }
            }
        }
        Ok(())
    }

    fn binding(&mut self, b: &Binding) -> Result<(), Error> {
        match b {
            Binding::VarBinding(vb) => {
                let v = self.expr(&vb.value)?;
                self.bind_var(&vb.var, v);
            }
            Binding::MatchCast(m) => {
                let value = self.expr(&m.value)?;
                let pattern = self.heap.pattern(&m.struct_info, true)?;
                let dst = self.fresh();
                self.instrs.push(Instr::MatchCast {
                    value,
                    pattern,
                    dst: Some(dst),
                    context: format!(
                        "the match_cast of `{}` in `{}`",
                        m.var.name_hint(),
                        self.name
                    ),
                    expected: m.struct_info.to_string(),
                });
                self.bind_var(&m.var, Arg::Reg(dst));
            }
        }
        Ok(())
    }

    /// `var` now lives in `value` (a register shared with every other
    /// variable bound to it).
    fn bind_var(&mut self, var: &Var, value: Arg) {
        if let Arg::Reg(r) = value {
            self.reg_vars.entry(r).or_default().push(var.clone());
        }
        self.vars.insert(var.clone(), value);
    }

    fn expr(&mut self, e: &Expr) -> Result<Arg, Error> {
        Ok(match e.kind() {
            ExprKind::Var(v) => self
                .vars
                .get(v)
                .cloned()
                .ok_or_else(|| unsupported(format!("`{}` is used before it is defined in `{}`", v.name_hint(), self.name)))?,
            ExprKind::Constant(t) => self.constant(Value::Tensor(t.clone())),
            ExprKind::StringImm(s) => self.constant(Value::Str(s.as_str().into())),
            ExprKind::DataTypeImm(d) => self.constant(Value::DataType(*d)),
            ExprKind::GlobalVar(gv) => {
                let i = self.function_index(gv.name_hint())?;
                self.constant(Value::Func(i))
            }
            ExprKind::PrimValue(p) => self.prim_value(p)?,
            ExprKind::ShapeExpr(dims) => {
                let dims = dims.iter().map(|d| self.heap.sym(d)).collect::<Result<_, _>>()?;
                let dst = self.fresh();
                self.instrs.push(Instr::MakeShape { dims, dst });
                Arg::Reg(dst)
            }
            ExprKind::Tuple(fields) => {
                let fields = fields.iter().map(|f| self.expr(f)).collect::<Result<_, _>>()?;
                let dst = self.fresh();
                self.instrs.push(Instr::MakeTuple { fields, dst });
                Arg::Reg(dst)
            }
            ExprKind::TupleGetItem(t, i) => {
                let tuple = self.expr(t)?;
                let dst = self.fresh();
                self.instrs.push(Instr::GetItem { tuple, index: *i as u32, dst });
                Arg::Reg(dst)
            }
            ExprKind::SeqExpr(seq) => {
                for block in &seq.blocks {
                    if block.is_dataflow {
                        self.dataflow_block(block)?;
                        continue;
                    }
                    for b in &block.bindings {
                        self.binding(b)?;
                    }
                }
                self.expr(&seq.body)?
            }
            ExprKind::If(i) => {
                let cond = self.expr(&i.cond)?;
                let dst = self.fresh();
                let branch_at = self.instrs.len();
                self.instrs.push(Instr::If { cond, else_target: 0 });
                let t = self.expr(&i.true_branch)?;
                self.instrs.push(Instr::Move { src: t, dst });
                let goto_at = self.instrs.len();
                self.instrs.push(Instr::Goto { target: 0 });
                let else_target = self.instrs.len() as u32;
                let f = self.expr(&i.false_branch)?;
                self.instrs.push(Instr::Move { src: f, dst });
                let end = self.instrs.len() as u32;
                self.instrs[branch_at] = match &self.instrs[branch_at] {
                    Instr::If { cond, .. } => Instr::If { cond: cond.clone(), else_target },
                    other => other.clone(),
                };
                self.instrs[goto_at] = Instr::Goto { target: end };
                Arg::Reg(dst)
            }
            ExprKind::Call(c) => self.call(c)?,
            ExprKind::Function(_) => {
                return Err(unsupported(format!(
                    "a local function in `{}`: the VM runs module-level functions only (lift it into the module)",
                    self.name
                )))
            }
            ExprKind::ExternFunc(name) => {
                return Err(unsupported(format!("the host function `{name}` used as a value in `{}`", self.name)))
            }
            ExprKind::Op(op) => return Err(unsupported(format!("the operator `{}` used as a value", op.name()))),
        })
    }

    fn prim_value(&mut self, p: &PrimExpr) -> Result<Arg, Error> {
        match p.kind() {
            PrimExprKind::FloatImm(f) => Ok(self.constant(Value::Float(*f))),
            PrimExprKind::IntImm(v) if p.dtype().is_bool() => {
                Ok(self.constant(Value::Bool(*v != 0)))
            }
            PrimExprKind::IntImm(v) => Ok(Arg::Imm(*v)),
            _ => {
                let value = self.heap.sym(p)?;
                let dst = self.fresh();
                self.instrs.push(Instr::MakePrim {
                    value,
                    dtype: p.dtype(),
                    dst,
                });
                Ok(Arg::Reg(dst))
            }
        }
    }

    fn function_index(&self, name: &str) -> Result<u32, Error> {
        self.functions
            .get(name)
            .copied()
            .ok_or_else(|| unsupported(format!("`{name}` is not a Relax function of the module")))
    }

    fn packed_index(&mut self, name: &str) -> Result<u32, Error> {
        if relax_runtime::packed::lookup_packed(name).is_none() {
            return Err(Error::Packed {
                name: name.to_string(),
                message: format!(
                    "no host function of this name is registered (called from `{}`); register it with relax::register_packed before building",
                    self.name
                ),
            });
        }
        Ok(intern(&mut self.exec.packed, name.to_string()))
    }

    fn args(&mut self, args: &[Expr]) -> Result<Vec<Arg>, Error> {
        args.iter().map(|a| self.expr(a)).collect()
    }

    fn emit_call(&mut self, callee: Callee, args: Vec<Arg>) -> Arg {
        let dst = self.fresh();
        self.instrs.push(Instr::Call { callee, args, dst });
        Arg::Reg(dst)
    }

    fn call(&mut self, c: &Call) -> Result<Arg, Error> {
        match c.op.kind() {
            ExprKind::Op(op) => self.op_call(op.name(), c),
            // A global bound to an external function calls the host
            // function of its symbol.
            ExprKind::GlobalVar(gv) => {
                let callee = match self.module.get(gv.name_hint()) {
                    Some(BaseFunc::Extern(symbol)) => Callee::Packed(self.packed_index(symbol)?),
                    _ => Callee::Function(self.function_index(gv.name_hint())?),
                };
                let args = self.args(&c.args)?;
                Ok(self.emit_call(callee, args))
            }
            ExprKind::ExternFunc(name) => {
                let i = self.packed_index(name)?;
                let args = self.args(&c.args)?;
                Ok(self.emit_call(Callee::Packed(i), args))
            }
            ExprKind::Var(_) => {
                let f = self.expr(&c.op)?;
                let r = self.reg_of(f);
                let args = self.args(&c.args)?;
                Ok(self.emit_call(Callee::Closure(r), args))
            }
            _ => Err(unsupported(format!(
                "a call of a computed callee in `{}`",
                self.name
            ))),
        }
    }

    fn op_call(&mut self, op: &str, c: &Call) -> Result<Arg, Error> {
        let extern_name = |e: &Expr| match e.kind() {
            ExprKind::ExternFunc(n) => Some(n.clone()),
            _ => None,
        };
        match op {
            "relax.call_tir" | "relax.call_tir_inplace" => self.call_tir(c),
            // TVM's VM builtin: the function and the captured values.
            "relax.make_closure" => {
                let f = c
                    .args
                    .first()
                    .ok_or_else(|| unsupported("make_closure without a function"))?;
                let func = self.expr(f)?;
                let mut args = vec![func];
                args.extend(self.tuple_arguments(c, "make_closure")?.0);
                let i = intern(
                    &mut self.exec.packed,
                    relax_runtime::packed::MAKE_CLOSURE.to_string(),
                );
                Ok(self.emit_call(Callee::Packed(i), args))
            }
            "relax.invoke_closure" => {
                let f = c
                    .args
                    .first()
                    .ok_or_else(|| unsupported("invoke_closure without a closure"))?;
                let f = self.expr(f)?;
                let r = self.reg_of(f);
                let args = self.tuple_arguments(c, "invoke_closure")?.0;
                Ok(self.emit_call(Callee::Closure(r), args))
            }
            "relax.call_pure_packed" => {
                let name = c
                    .args
                    .first()
                    .and_then(extern_name)
                    .ok_or_else(|| unsupported("call_pure_packed without a host function"))?;
                let i = self.packed_index(&name)?;
                let args = self.args(&c.args[1..])?;
                Ok(self.emit_call(Callee::Packed(i), args))
            }
            "relax.call_dps_packed" => {
                let name = c
                    .args
                    .first()
                    .and_then(extern_name)
                    .ok_or_else(|| unsupported("call_dps_packed without a host function"))?;
                let name = self.packed_index(&name)?;
                let fields = match c.args.get(1).map(|a| a.kind()) {
                    Some(ExprKind::Tuple(f)) => f.clone(),
                    _ => {
                        return Err(unsupported(
                            "call_dps_packed: the arguments must be a tuple literal",
                        ))
                    }
                };
                let outputs = c
                    .sinfo_args
                    .iter()
                    .map(|s| self.heap.pattern(s, false))
                    .collect::<Result<_, _>>()?;
                let args = self.args(&fields)?;
                Ok(self.emit_call(Callee::DpsPacked { name, outputs }, args))
            }
            _ => {
                if relax_runtime::kernels::lookup(op).is_none() {
                    return Err(unsupported(format!("`{op}` has no reference kernel")));
                }
                let attrs = c
                    .attrs
                    .iter()
                    .map(|(k, v)| Ok((k.to_string(), self.kernel_attr(v)?)))
                    .collect::<Result<Vec<_>, Error>>()?;
                let entry = KernelEntry {
                    op: op.to_string(),
                    attrs,
                };
                let k = intern(&mut self.exec.kernels, entry);
                let args = self.args(&c.args)?;
                Ok(self.emit_call(Callee::Kernel(k), args))
            }
        }
    }

    fn kernel_attr(&self, v: &AttrValue) -> Result<KernelAttr, Error> {
        Ok(match v {
            AttrValue::None => KernelAttr::None,
            AttrValue::Bool(b) => KernelAttr::Bool(*b),
            AttrValue::Int(i) => KernelAttr::Int(*i),
            AttrValue::Float(f) => KernelAttr::Float(*f),
            AttrValue::Str(s) => KernelAttr::Str(s.clone()),
            AttrValue::DataType(d) => KernelAttr::DataType(*d),
            AttrValue::PrimExpr(e) => match e.as_int() {
                Some(i) => KernelAttr::Int(i),
                None => KernelAttr::Sym(self.heap.sym(e)?),
            },
            AttrValue::Array(items) => KernelAttr::Array(
                items
                    .iter()
                    .map(|i| self.kernel_attr(i))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }
}

/// Whether a StructInfo has a dimension that is neither a literal nor a
/// bare variable (checked in the second pass over the parameters).
fn has_compound_dims(s: &StructInfo) -> bool {
    let mut compound = false;
    s.visit_prim_exprs(
        &mut |e| compound |= e.as_int().is_none() && e.as_var().is_none(),
        true,
    );
    compound
}

/// The index of `item` in an executable table (constants, host functions,
/// kernel entries, native kernels), appending it the first time: each
/// distinct entry is stored once.
pub(super) fn intern<T: PartialEq>(table: &mut Vec<T>, item: T) -> u32 {
    let i = match table.iter().position(|t| *t == item) {
        Some(i) => i,
        None => {
            table.push(item);
            table.len() - 1
        }
    };
    i as u32
}
