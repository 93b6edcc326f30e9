//! `FuseTIR`: merges the `call_tir`s of each primitive function made by
//! `FuseOps` into one PrimFunc (TVM's `relax.transform.FuseTIR`).
//!
//! 1. **Which functions.** A Relax function with a `"Primitive"` attribute whose
//!    body is one dataflow block of `call_tir` or `call_tir_inplace`
//!    bindings (each calling a PrimFunc of buffer parameters, its scalar
//!    parameters given by `R.prim_value` arguments, in order, then by the
//!    call's `tir_vars`; a call of several outputs,
//!    such as a legalized `split`, is bound to a tuple, read only by its
//!    fields `lv[i]`) and whose result is a variable or a tuple of
//!    variables. A tuple (a parameter, or a literal `(x, (x, y))` bound in
//!    the block) is read through its fields; a tuple parameter stands for
//!    its tensors, depth first, and the fields no call reads are dropped,
//!    as TVM drops them. Others are left as they are.
//! 2. **The fused PrimFunc**, named as the primitive function: one buffer
//!    parameter per Relax tensor parameter, then one per constant a
//!    `call_tir` of the group takes (a weight the ONNX importer embedded:
//!    the call site passes it, as TVM's `FuseTIR` lifts constants), then one
//!    per result, shaped by their StructInfo (in symbolic variables of its
//!    own). A shape parameter (FuseOps' symbolic variables that no tensor
//!    defines) gives one scalar per value: in `FuseTIR::default()`, as in
//!    TVM, where the parameter was, among the tensor parameters (the call
//!    site passes each value as an `R.prim_value` there); in the build's
//!    FuseTIR (item 3's option on), after the results (the call site
//!    passes the shape as `tir_vars`). Each `call_tir`'s
//!    PrimFunc body is copied in binding order with its buffers replaced by
//!    the fused function's (its symbolic variables unified with the dims of
//!    the buffers it is given, [`Substitute`]; its loop and block
//!    variables fresh, so a PrimFunc called twice defines distinct ones); a
//!    value that is neither a parameter nor a result becomes an
//!    intermediate buffer, allocated by the fused function's root block, as
//!    are the buffers the copied root blocks allocated (per call, in
//!    `FuseTIR::default()` as in TVM, the callee's own allocations, then the
//!    intermediates it computes; the other way round in the build's, whose
//!    inlining goes in that order). The fused PrimFunc
//!    carries `tirx.noalias`, as TVM's. In `FuseTIR::default()`, a block
//!    that accesses one buffer through several regions (a PrimFunc given
//!    one tensor for two parameters) keeps the first only, in its reads and
//!    in its writes, as TVM's FuseTIR merges them; the build's keeps every
//!    region, which the schedule primitives and buffer compaction read.
//! 3. **Inlining, an option** ([`FuseTIR::inline_producers`]; off in
//!    `FuseTIR::default()`, which is TVM's pass and keeps every intermediate
//!    a buffer; on in the build pipeline, `backend::fuse_tir()`). It is a
//!    schedule decision (TVM's dlight makes it with `compute_inline`), to
//!    move into a `DefaultSchedule` rule in a follow-up. Each intermediate
//!    computed by an injective nest is inlined into its readers ([`compute_inline`]): an elementwise chain
//!    becomes one loop nest, and a matmul's epilogue (`add`, `relu`) one
//!    pass over its output. A transpose or reshape feeding a matmul is
//!    inlined as an index change (the MLP's `x · wᵀ` reads `w` directly,
//!    `DefaultSchedule`'s dot-product case); other intermediates read by a
//!    reduction stay scratch buffers of the fused kernel. An inlining that
//!    would make the kernel's expressions larger than [`INLINE_LIMIT`]
//!    nodes (counting a shared subexpression at every use, as code
//!    generation emits it) is not done: the intermediate stays a buffer.
//!    A producer read several times per element is copied at each read,
//!    so a chain of such stages (a QDQ model's quantize → dequantize →
//!    quantize, where `quantize` reads its quotient several times) would
//!    otherwise grow exponentially with its length.
//!    The fused function's indices are then simplified under its loops'
//!    ranges ([`crate::tir::simplify`]): an inlined reshape's
//!    `(b * seq + j) // seq` becomes `b`.
//!
//!    **In place**, as TVM's FuseTIR: the value of an in-place call is the
//!    argument it wrote, so it lives in that argument's buffer (its
//!    *home*, followed through chains of in-place calls): an intermediate
//!    of the group, a result, or a parameter. A result whose home is a
//!    parameter gets no result buffer: the fused PrimFunc writes it into
//!    that parameter. A function that writes a parameter in place without
//!    returning it, returns two results of one home, or writes a constant
//!    in place, is left alone.
//! 4. **The call site.** Every call of the primitive function becomes one
//!    `R.call_tir` of the fused PrimFunc (a tuple argument's tensors each
//!    bound first, `lv = x[0]`; a shape argument's values as in item 2),
//!    its arguments followed by the
//!    lifted constants (several `out_sinfo` for a tuple result), or an
//!    `R.call_tir_inplace` whose `inplace_indices` name, per result, the
//!    parameter it was written into (-1 for a result buffer); the
//!    primitive function is removed.
//! 5. **Cleanup.** The pass begins, as TVM's does (its first step,
//!    `ExpandTupleArguments`, ends so), with [`CanonicalizeBindings`]
//!    over the module: a trivial binding `gv = lv` after a fused call is
//!    folded, so the call is bound to `gv` itself. It ends, as TVM's does,
//!    with [`DeadCodeElimination`]: the PrimFuncs the fused functions called,
//!    which nothing calls any more, leave the module (as do unused pure
//!    bindings and functions no public function reaches). Running FuseTIR
//!    alone gives TVM's module: the fused PrimFuncs and the rewritten
//!    callers only.
//!
//! The fused PrimFunc computes what the chain of calls computed, on every
//! target: `fuse_tir/tests.rs` compares both on the loop-level interpreter
//! and through LLVM.

use super::fuse_ops::PRIMITIVE;
use super::legalize::NOALIAS;
use super::{CanonicalizeBindings, DeadCodeElimination, Pass};
use crate::ir::expr::{Binding, BindingBlock, ExprKind, GlobalVar, Var};
use crate::ir::{
    AttrValue, Attrs, BaseFunc, Expr, Function, IRModule, PrimExpr, StructInfo, TirVar,
};
use crate::tir::compute_inline::compute_inline;
use crate::tir::{Block, Buffer, PrimFunc, PrimFuncParam, Stmt, Substitute};
use relax_runtime::Error;
use std::collections::HashMap;

/// PrimFunc fusion. See the module docs.
///
/// `FuseTIR::default()` is TVM's pass: the blocks are concatenated and every
/// intermediate stays a buffer. The build pipeline turns on
/// [`FuseTIR::inline_producers`] (item 3 of the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct FuseTIR {
    inline_producers: bool,
}

impl FuseTIR {
    /// Whether each intermediate computed by an injective nest is inlined
    /// into its readers, and the indices then simplified (item 3 of the
    /// module docs). Off in TVM; on in `backend::pipeline`, for speed.
    /// On, the fused PrimFunc also takes a group's shape values after its
    /// results (passed as `tir_vars`), allocates a call's intermediates
    /// before its callee's own buffers, and keeps every access region of a
    /// block (item 2).
    pub fn inline_producers(mut self, on: bool) -> Self {
        self.inline_producers = on;
        self
    }
}

impl Pass for FuseTIR {
    fn name(&self) -> &str {
        "FuseTIR"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        // TVM's FuseTIR begins with ExpandTupleArguments, which ends with
        // CanonicalizeBindings over the whole module (the tuple arguments
        // themselves are flattened in `fuse_function` here).
        let module = CanonicalizeBindings.run(module)?;
        let mut fused: HashMap<String, Fused> = HashMap::new();
        for (gv, f) in module.functions() {
            let BaseFunc::Relax(func) = f else { continue };
            if func.attrs.get(PRIMITIVE).is_none() {
                continue;
            }
            if let Some(f) = fuse_function(&module, func, self.inline_producers) {
                fused.insert(
                    gv.name_hint().to_string(),
                    Fused {
                        gv: GlobalVar::new(gv.name_hint()),
                        ..f
                    },
                );
            }
        }
        let cleanup = DeadCodeElimination::default();
        if fused.is_empty() {
            return cleanup.run(module);
        }
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let BaseFunc::Relax(func) = f else { continue };
            if fused.contains_key(gv.name_hint()) {
                out.remove(gv);
                continue;
            }
            if let Some(new) = rewrite_calls(func, &fused) {
                out.add(gv.clone(), new);
            }
        }
        for f in fused.into_values() {
            out.add(f.gv, f.func);
        }
        cleanup.run(out)
    }
}

/// A primitive function fused into one PrimFunc, and the constants its
/// calls pass after their arguments.
struct Fused {
    gv: GlobalVar,
    func: PrimFunc,
    constants: Vec<Expr>,
    /// Per result, the parameter it is written into in place, or -1 for
    /// a result buffer; empty when every result is one (`call_tir`).
    inplace_indices: Vec<i64>,
    /// Per tensor of the primitive function's parameters, depth first
    /// through tuples: whether it is a parameter of the fused PrimFunc (a
    /// tuple's field no call reads is not, as in TVM).
    kept: Vec<bool>,
    /// Whether a shape argument's values are passed as `R.prim_value`s
    /// in its place (TVM's layout) rather than as the call's `tir_vars`.
    shapes_as_values: bool,
}

/// An input of the fused PrimFunc: a tensor of a parameter, or a value
/// of a shape parameter.
enum Input {
    Tensor(Var),
    Scalar(TirVar),
}

/// The buffer standing for a Relax tensor value in the fused function.
fn buffer_for(var: &Var, tir: &HashMap<TirVar, PrimExpr>) -> Option<Buffer> {
    buffer_of(var.name_hint(), var.struct_info()?, tir)
}

/// A buffer `name` for a tensor of StructInfo `sinfo`.
fn buffer_of(name: &str, sinfo: &StructInfo, tir: &HashMap<TirVar, PrimExpr>) -> Option<Buffer> {
    let t = sinfo.as_tensor()?;
    if t.is_unknown_dtype() {
        return None;
    }
    let shape = t
        .shape_values()?
        .iter()
        .map(|d| d.substitute_map(tir))
        .collect();
    Some(Buffer::new(name, shape, t.dtype))
}

/// The fused PrimFunc of a primitive function (module docs, points 1–3).
fn fuse_function(module: &IRModule, func: &Function, inline_producers: bool) -> Option<Fused> {
    let seq = func.body.as_seq()?;
    let [block] = seq.blocks.as_slice() else {
        return None;
    };
    let (fields, aliases) = tuple_fields(&func.params, &block.bindings)?;
    let resolve = |v: &Var| aliases.get(v).unwrap_or(v).clone();
    let outputs: Vec<Var> = match seq.body.kind() {
        ExprKind::Var(v) => match fields.get(v) {
            Some(fs) => fs.clone(),
            None => vec![resolve(v)],
        },
        ExprKind::Tuple(items) => items
            .iter()
            .map(|f| f.as_var().filter(|v| !fields.contains_key(*v)).map(resolve))
            .collect::<Option<_>>()?,
        _ => return None,
    };
    // The fused function's own symbolic variables.
    let mut tir: HashMap<TirVar, PrimExpr> = HashMap::new();
    for p in &func.params {
        for t in p
            .struct_info()
            .map(StructInfo::tir_vars)
            .unwrap_or_default()
        {
            tir.entry(t.clone())
                .or_insert_with(|| TirVar::with_dtype(t.name(), t.dtype()).to_expr());
        }
    }
    let homes = inplace_homes(&block.bindings)?;
    let mut buffers: HashMap<Var, Buffer> = HashMap::new();
    let mut params = Vec::new();
    // TVM's layout (`FuseTIR::default()`): a shape parameter's scalars
    // stay where the parameter was, among the inputs, and the call site
    // passes them as `R.prim_value`s. The build's (`inline_producers`):
    // after the results, passed as the call's `tir_vars`.
    let tvm_layout = !inline_producers;
    // The inputs, in order (the positions of the fused call's arguments):
    // a tensor, or `None` for a scalar of a shape parameter in TVM's layout.
    let mut tensor_params: Vec<Option<&Var>> = Vec::new();
    // A shape parameter (FuseOps' `R.Shape([b, s])` of symbolic variables
    // no tensor defines) gives scalar parameters.
    let mut scalars = Vec::new();
    // Each parameter's tensors (a tuple's, depth first: the call site
    // passes them so, `flatten_tuple_arg`), or its scalars.
    let mut slots: Vec<Input> = Vec::new();
    for p in &func.params {
        if let Some(shape) = p.struct_info().and_then(StructInfo::as_shape) {
            for v in shape.values.as_ref()? {
                let v = v.substitute_map(&tir);
                slots.push(Input::Scalar(v.as_var()?.clone()));
            }
            continue;
        }
        let mut leaves = Vec::new();
        tuple_leaves(p, &fields, &mut leaves);
        slots.extend(leaves.into_iter().map(Input::Tensor));
    }
    // The tensors the calls read, and the results.
    let mut used: Vec<Var> = outputs.clone();
    for b in &block.bindings {
        if let Some(ExprKind::Tuple(args)) = b
            .value()
            .as_call()
            .and_then(|c| c.args.get(1))
            .map(Expr::kind)
        {
            used.extend(args.iter().filter_map(Expr::as_var).map(resolve));
        }
    }
    let mut kept_params: Vec<bool> = Vec::new();
    for slot in &slots {
        match slot {
            Input::Tensor(leaf) => {
                let kept = func.params.contains(leaf) || used.contains(leaf);
                kept_params.push(kept);
                if !kept {
                    continue;
                }
                let b = buffer_for(leaf, &tir)?;
                buffers.insert(leaf.clone(), b.clone());
                params.push(PrimFuncParam::Buffer(b));
                tensor_params.push(Some(leaf));
            }
            Input::Scalar(v) if tvm_layout => {
                params.push(PrimFuncParam::Scalar(v.clone()));
                tensor_params.push(None);
            }
            Input::Scalar(v) => scalars.push(PrimFuncParam::Scalar(v.clone())),
        }
    }
    // A result written in place into a parameter is that parameter (the
    // fused call is a `call_tir_inplace`); any other has a result buffer,
    // which the call computing it (or the value it was written into in
    // place) writes.
    let mut results = Vec::new();
    let mut inplace_indices = Vec::with_capacity(outputs.len());
    let mut homes_of_results: Vec<&Var> = Vec::new();
    for o in &outputs {
        let home = homes.get(o).unwrap_or(o);
        if homes_of_results.contains(&home) {
            return None; // two results in one buffer
        }
        homes_of_results.push(home);
        if let Some(i) = tensor_params.iter().position(|p| *p == Some(home)) {
            if home == o {
                return None; // a parameter returned as is
            }
            inplace_indices.push(i as i64);
            continue;
        }
        let b = buffer_for(home, &tir)?;
        buffers.insert(home.clone(), b.clone());
        results.push(PrimFuncParam::Buffer(b));
        inplace_indices.push(-1);
    }
    // A parameter written in place must be a result: the fused call may
    // write only the arguments it names.
    if homes
        .values()
        .any(|h| tensor_params.contains(&Some(h)) && !homes_of_results.contains(&h))
    {
        return None;
    }
    if inplace_indices.iter().all(|&i| i == -1) {
        inplace_indices.clear();
    }
    // Constants the calls take, each one parameter (the same constant
    // passed twice is one).
    let mut constants: Vec<(Expr, Buffer)> = Vec::new();
    let mut intermediates: Vec<Buffer> = Vec::new();
    let mut stmts = Vec::new();
    for binding in &block.bindings {
        let (var, value) = (binding.var(), binding.value());
        if matches!(
            value.kind(),
            ExprKind::TupleGetItem(..) | ExprKind::Tuple(_)
        ) {
            continue; // a tuple or its field: `tuple_fields` followed it
        }
        let in_place = match value.call_op_name() {
            Some("relax.call_tir") => false,
            Some("relax.call_tir_inplace") => true,
            _ => return None,
        };
        if !matches!(binding, Binding::VarBinding(_)) {
            return None;
        }
        let call = value.as_call()?;
        let (callee, args, tir_vars) = match call.args.as_slice() {
            [callee, args] => (callee, args, None),
            [callee, args, tir_vars] => match tir_vars.kind() {
                ExprKind::ShapeExpr(values) => (callee, args, Some(values)),
                _ => return None,
            },
            _ => return None,
        };
        let ExprKind::GlobalVar(callee) = callee.kind() else {
            return None;
        };
        let BaseFunc::Prim(component) = module.get(callee.name_hint())? else {
            return None;
        };
        let ExprKind::Tuple(args) = args.kind() else {
            return None;
        };
        // An in-place call writes its argument's buffer (`inplace_homes`
        // checked it is a variable); another writes its own.
        let out_vars = match fields.get(var) {
            Some(fs) if !in_place => fs.clone(),
            Some(_) => return None,
            None => vec![var.clone()],
        };
        let mut out = Vec::with_capacity(out_vars.len());
        // The intermediates this call computes.
        let mut computed = Vec::new();
        for var in &out_vars {
            match homes.get(var) {
                Some(home) => {
                    let b = buffers.get(home)?.clone();
                    buffers.insert(var.clone(), b);
                }
                None if in_place => return None,
                None => out.push(match buffers.get(var) {
                    Some(b) => b.clone(),
                    None => {
                        let b = buffer_for(var, &tir)?;
                        buffers.insert(var.clone(), b.clone());
                        computed.push(b.clone());
                        b
                    }
                }),
            }
        }
        // The buffers given to the component's buffer parameters, and the
        // values of its scalar ones: a `R.prim_value` argument's, then the
        // call's `tir_vars`.
        let mut given = Vec::with_capacity(args.len() + 1);
        let mut values: Vec<PrimExpr> = Vec::new();
        for a in args {
            let b = match a.kind() {
                ExprKind::PrimValue(v) => {
                    values.push(v.clone());
                    continue;
                }
                ExprKind::Constant(_) => match constants.iter().find(|(c, _)| c.ptr_eq(a)) {
                    Some((_, b)) => b.clone(),
                    None => {
                        let name = format!("param_{}", constants.len());
                        let b = buffer_of(&name, a.struct_info()?, &tir)?;
                        constants.push((a.clone(), b.clone()));
                        b
                    }
                },
                _ => buffers.get(&resolve(a.as_var()?))?.clone(),
            };
            given.push(b);
        }
        given.extend(out);
        // The component's scalar parameters take those values, in order,
        // in the fused function's variables.
        let formals: Vec<&Buffer> = component
            .params
            .iter()
            .filter_map(|p| match p {
                PrimFuncParam::Buffer(b) => Some(b),
                PrimFuncParam::Scalar(_) => None,
            })
            .collect();
        let scalar_params: Vec<&TirVar> = component
            .params
            .iter()
            .filter_map(|p| match p {
                PrimFuncParam::Scalar(v) => Some(v),
                PrimFuncParam::Buffer(_) => None,
            })
            .collect();
        values.extend(tir_vars.into_iter().flatten().cloned());
        if formals.len() != given.len() || scalar_params.len() != values.len() {
            return None;
        }
        // Each copy defines its own loop and block variables (the same
        // PrimFunc may be called twice), as TVM's FuseTIR renews them.
        let mut sub = Substitute {
            renew_defs: true,
            ..Substitute::default()
        };
        for (v, value) in scalar_params.iter().zip(&values) {
            sub.vars.insert((*v).clone(), value.substitute_map(&tir));
        }
        for (formal, actual) in formals.into_iter().zip(&given) {
            if formal.shape().len() != actual.shape().len() || formal.dtype() != actual.dtype() {
                return None;
            }
            for (f, a) in formal.shape().iter().zip(actual.shape()) {
                if let Some(v) = f.as_var() {
                    sub.vars.entry(v.clone()).or_insert_with(|| a.clone());
                }
            }
            sub.buffers.insert(formal.id(), actual.clone());
        }
        // The component's root block: its allocations move to the fused
        // function's root block, as TVM orders them before the
        // intermediates the call computes (after them in the build, whose
        // inlining goes in that order).
        let allocated = match sub.stmt(&component.body) {
            Stmt::Block(root) if root.iter_vars.is_empty() && root.init.is_none() => {
                stmts.push(*root.body);
                root.alloc_buffers
            }
            other => {
                stmts.push(other);
                Vec::new()
            }
        };
        let (first, then) = match tvm_layout {
            true => (allocated, computed),
            false => (computed, allocated),
        };
        intermediates.extend(first);
        intermediates.extend(then);
    }
    let mut body = Stmt::Seq(stmts);
    if tvm_layout {
        body = first_region_per_buffer(&body);
    }
    let mut kept = Vec::new();
    for b in intermediates {
        if !inline_producers {
            kept.push(b);
            continue;
        }
        match compute_inline(&body, &b) {
            Some(inlined) if within_limit(&inlined) => body = inlined,
            _ => kept.push(b),
        }
    }
    let root = Block {
        name: "root".into(),
        iter_vars: vec![],
        iter_values: vec![],
        reads: vec![],
        writes: vec![],
        init: None,
        body: Box::new(body),
        alloc_buffers: kept,
        annotations: Attrs::new(),
    };
    params.extend(
        constants
            .iter()
            .map(|(_, b)| PrimFuncParam::Buffer(b.clone())),
    );
    params.extend(results);
    params.extend(scalars);
    let func = PrimFunc {
        params,
        body: Stmt::Block(Box::new(root)),
        attrs: Attrs::from_pairs([(NOALIAS, true)]),
    };
    // Inlined reshapes and transposes leave divisions by symbolic dims
    // that the loops' ranges resolve.
    let func = match inline_producers {
        true => crate::tir::simplify::simplify(&func),
        false => func,
    };
    Some(Fused {
        gv: GlobalVar::new(""),
        func,
        constants: constants.into_iter().map(|(c, _)| c).collect(),
        inplace_indices,
        kept: kept_params,
        shapes_as_values: tvm_layout,
    })
}

/// `s` with each block's reads, and its writes, keeping only the first
/// region of each buffer, as TVM's FuseTIR merges them once the calls'
/// buffers are replaced (a PrimFunc reading two parameters given the same
/// tensor reads one buffer; TVM keeps the first of its regions).
fn first_region_per_buffer(s: &Stmt) -> Stmt {
    let s = s
        .try_map_children(|c| Ok::<_, std::convert::Infallible>(first_region_per_buffer(c)))
        .unwrap_or_else(|never| match never {});
    match s {
        Stmt::Block(mut b) => {
            for regions in [&mut b.reads, &mut b.writes] {
                let mut seen = std::collections::HashSet::new();
                regions.retain(|r| seen.insert(r.buffer.id()));
            }
            Stmt::Block(b)
        }
        other => other,
    }
}

/// The tuples of a primitive function: for each tuple parameter, each
/// variable bound to a tuple (`(x, (x, y))`) and each variable bound to a
/// `call_tir` of several outputs, a variable per field, by which the
/// field's buffer is found (a nested tuple's field variable has fields
/// of its own); and each variable bound to a field (`lv[i]`), with the
/// field's variable. `None` for any other use of a tuple.
#[allow(clippy::type_complexity)]
fn tuple_fields(
    params: &[Var],
    bindings: &[Binding],
) -> Option<(HashMap<Var, Vec<Var>>, HashMap<Var, Var>)> {
    let mut fields: HashMap<Var, Vec<Var>> = HashMap::new();
    let mut aliases: HashMap<Var, Var> = HashMap::new();
    for p in params {
        if p.struct_info().and_then(StructInfo::as_tuple).is_some() {
            field_vars(p, &mut fields);
        }
    }
    for b in bindings {
        let var = b.var();
        match b.value().kind() {
            ExprKind::TupleGetItem(tuple, index) => {
                let tuple = tuple.as_var()?;
                let tuple = aliases.get(tuple).unwrap_or(tuple);
                let field = fields.get(tuple)?.get(*index)?.clone();
                aliases.insert(var.clone(), field);
            }
            ExprKind::Tuple(items) => {
                let vars = tuple_item_vars(var.name_hint(), items, &aliases, &mut fields)?;
                fields.insert(var.clone(), vars);
            }
            _ if var.struct_info().and_then(StructInfo::as_tuple).is_some() => {
                field_vars(var, &mut fields);
            }
            _ => {}
        }
    }
    Some((fields, aliases))
}

/// A variable per field of `var`, a tuple, recursively for nested ones.
fn field_vars(var: &Var, fields: &mut HashMap<Var, Vec<Var>>) {
    let Some(sinfo) = var.struct_info().and_then(StructInfo::as_tuple) else {
        return;
    };
    let vars: Vec<Var> = sinfo
        .iter()
        .enumerate()
        .map(|(i, s)| Var::new_dataflow(format!("{}_{i}", var.name_hint()), Some(s.clone())))
        .collect();
    for v in &vars {
        field_vars(v, fields);
    }
    fields.insert(var.clone(), vars);
}

/// The field variables of a tuple literal: a variable (or what it is an
/// alias of), or a nested literal, which gets a variable of its own.
fn tuple_item_vars(
    name: &str,
    items: &[Expr],
    aliases: &HashMap<Var, Var>,
    fields: &mut HashMap<Var, Vec<Var>>,
) -> Option<Vec<Var>> {
    let mut vars = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        vars.push(match item.kind() {
            ExprKind::Var(v) => aliases.get(v).unwrap_or(v).clone(),
            ExprKind::Tuple(nested) => {
                let name = format!("{name}_{i}");
                let inner = tuple_item_vars(&name, nested, aliases, fields)?;
                let v = Var::new_dataflow(name, item.struct_info().cloned());
                fields.insert(v.clone(), inner);
                v
            }
            _ => return None,
        });
    }
    Some(vars)
}

/// The tensors of `var`, depth first: itself, or its fields' tensors.
fn tuple_leaves(var: &Var, fields: &HashMap<Var, Vec<Var>>, out: &mut Vec<Var>) {
    match fields.get(var) {
        Some(fs) => fs.iter().for_each(|f| tuple_leaves(f, fields, out)),
        None => out.push(var.clone()),
    }
}

/// Where each in-place result lives (TVM's FuseTIR): the value of
/// `R.call_tir_inplace(f, (…, a, …), inplace_indices=[i])` is `a`, written
/// in place, so it maps to `a`'s own home (a parameter, or the variable of
/// the `call_tir` that first computed it). `None` when an in-place call
/// has several outputs or writes into a constant.
fn inplace_homes(bindings: &[Binding]) -> Option<HashMap<Var, Var>> {
    let mut homes: HashMap<Var, Var> = HashMap::new();
    for b in bindings {
        let value = b.value();
        if value.call_op_name() != Some("relax.call_tir_inplace") {
            continue;
        }
        let call = value.as_call()?;
        let [i] = crate::op::infer::attr_ints(call, "inplace_indices")?[..] else {
            return None;
        };
        let ExprKind::Tuple(args) = call.args.get(1)?.kind() else {
            return None;
        };
        let arg = args.get(usize::try_from(i).ok()?)?.as_var()?;
        let home = homes.get(arg).unwrap_or(arg).clone();
        homes.insert(b.var().clone(), home);
    }
    Some(homes)
}

/// How many expression nodes a fused kernel may have after inlining (see
/// the module docs, item 3). The fused kernels of real models have a few
/// hundred to a few thousand.
pub const INLINE_LIMIT: usize = 50_000;

/// Whether `s` has at most [`INLINE_LIMIT`] expression nodes.
fn within_limit(s: &Stmt) -> bool {
    let mut budget = INLINE_LIMIT;
    stmt_within(s, &mut budget)
}

/// Whether `s`'s expressions, counted as trees, have at most `budget`
/// nodes; it stops counting once the budget is spent, so the walk is
/// bounded even when sharing makes the tree exponentially large.
fn stmt_within(s: &Stmt, budget: &mut usize) -> bool {
    let mut e = |x: &PrimExpr| expr_within(x, budget);
    match s {
        Stmt::For {
            min, extent, body, ..
        } => e(min) && e(extent) && stmt_within(body, budget),
        Stmt::Block(b) => {
            b.iter_values.iter().all(&mut e)
                && b.init.as_deref().is_none_or(|i| stmt_within(i, budget))
                && stmt_within(&b.body, budget)
        }
        Stmt::BufferStore { value, indices, .. } => e(value) && indices.iter().all(e),
        Stmt::Allocate { body, .. } => stmt_within(body, budget),
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case,
        } => {
            e(cond)
                && stmt_within(then_case, budget)
                && else_case.as_deref().is_none_or(|x| stmt_within(x, budget))
        }
        Stmt::LetStmt { value, body, .. } => e(value) && stmt_within(body, budget),
        Stmt::Evaluate(x) => e(x),
        Stmt::Seq(ss) => ss.iter().all(|x| stmt_within(x, budget)),
    }
}

fn expr_within(e: &PrimExpr, budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    e.children().into_iter().all(|c| expr_within(c, budget))
}

/// `func` with every call of a fused primitive function replaced by a
/// `call_tir` of its PrimFunc; `None` when it has none.
fn rewrite_calls(func: &Function, fused: &HashMap<String, Fused>) -> Option<Function> {
    let seq = func.body.as_seq()?;
    let mut changed = false;
    let mut blocks = Vec::with_capacity(seq.blocks.len());
    for block in &seq.blocks {
        let mut bindings = Vec::with_capacity(block.bindings.len());
        for b in &block.bindings {
            let replaced = b
                .value()
                .as_call()
                .filter(|_| matches!(b, Binding::VarBinding(_)))
                .and_then(|c| match c.op.kind() {
                    ExprKind::GlobalVar(gv) => fused.get(gv.name_hint()).map(|f| (c, f)),
                    _ => None,
                })
                .and_then(|(c, f)| {
                    // A shape argument passes its values, each a
                    // `R.prim_value` in its place (TVM's layout) or the
                    // call's `tir_vars`; a tuple argument its tensors,
                    // each bound first.
                    let mut shapes = Vec::new();
                    let mut args = Vec::with_capacity(c.args.len());
                    let mut kept = f.kept.iter().copied();
                    for a in &c.args {
                        match a.struct_info().and_then(StructInfo::as_shape) {
                            Some(shape) if f.shapes_as_values => {
                                let values = shape.values.as_ref()?;
                                args.extend(values.iter().cloned().map(Expr::prim_value));
                            }
                            Some(_) => shapes.push(a.clone()),
                            None => {
                                let flat =
                                    flatten_tuple_arg(a.clone(), block.is_dataflow, &mut kept);
                                bindings.extend(flat.bindings);
                                args.extend(flat.args);
                            }
                        }
                    }
                    args.extend(f.constants.iter().cloned());
                    let tir_vars = match shapes.as_slice() {
                        [] => None,
                        [one] => Some(one.clone()),
                        _ => return None,
                    };
                    call_tir(b.var(), &args, tir_vars, f)
                });
            match replaced {
                Some(value) => {
                    changed = true;
                    bindings.push(Binding::var_binding(b.var().clone(), value));
                }
                None => bindings.push(b.clone()),
            }
        }
        blocks.push(if block.is_dataflow {
            BindingBlock::dataflow(bindings)
        } else {
            BindingBlock::new(bindings)
        });
    }
    if !changed {
        return None;
    }
    let mut func = func.clone();
    let body = Expr::seq(blocks, seq.body.clone());
    func.body = match func.body.struct_info() {
        Some(s) => body.into_with_struct_info(s.clone()),
        None => body,
    };
    Some(func)
}

/// A call argument's tensors, depth first, and the bindings that take
/// them out of a tuple.
#[derive(Default)]
struct FlatArg {
    bindings: Vec<Binding>,
    args: Vec<Expr>,
}

/// `arg`'s tensors, depth first, those `kept` says: a tuple's fields
/// bound to variables of their own (`lv = x[0]`), as TVM's FuseTIR binds
/// them, and a field (or nested tuple) with no tensor kept not bound.
fn flatten_tuple_arg(arg: Expr, dataflow: bool, kept: &mut impl Iterator<Item = bool>) -> FlatArg {
    let Some(fields) = arg.struct_info().and_then(StructInfo::as_tuple) else {
        return match kept.next() {
            Some(false) => FlatArg::default(),
            _ => FlatArg {
                bindings: vec![],
                args: vec![arg],
            },
        };
    };
    let mut flat = FlatArg::default();
    for (i, sinfo) in fields.iter().enumerate() {
        let var = match dataflow {
            true => Var::new_dataflow("lv", Some(sinfo.clone())),
            false => Var::new("lv", Some(sinfo.clone())),
        };
        let inner = flatten_tuple_arg(Expr::var(&var), dataflow, kept);
        if inner.args.is_empty() {
            continue;
        }
        let item = Expr::tuple_get_item(arg.clone(), i).with_struct_info(sinfo.clone());
        flat.bindings.push(Binding::var_binding(var, item));
        flat.bindings.extend(inner.bindings);
        flat.args.extend(inner.args);
    }
    flat
}

/// `R.call_tir(fused, (args…), out_sinfo=…)` for a binding of `var`, or
/// `R.call_tir_inplace(…, inplace_indices=…)` when a result is written
/// into an argument.
fn call_tir(var: &Var, args: &[Expr], tir_vars: Option<Expr>, fused: &Fused) -> Option<Expr> {
    let (gv, pf) = (&fused.gv, &fused.func);
    let sinfo = var.struct_info()?.clone();
    let outs = match sinfo.as_tuple() {
        Some(fields) => fields.to_vec(),
        None => vec![sinfo.clone()],
    };
    let arg_sinfo: Vec<StructInfo> = args
        .iter()
        .map(|a| a.struct_info().cloned())
        .collect::<Option<_>>()?;
    let tuple = Expr::tuple(args.to_vec()).with_struct_info(StructInfo::tuple(arg_sinfo));
    let callee = Expr::global_var(gv.clone()).with_struct_info(pf.struct_info());
    let mut call_args = vec![callee, tuple];
    call_args.extend(tir_vars);
    let (op, attrs) = match fused.inplace_indices.as_slice() {
        [] => ("relax.call_tir", Attrs::new()),
        indices => (
            "relax.call_tir_inplace",
            Attrs::from_pairs([(
                "inplace_indices",
                AttrValue::Array(indices.iter().map(|&i| AttrValue::Int(i)).collect()),
            )]),
        ),
    };
    Some(Expr::call_full(Expr::op(op), call_args, attrs, outs).with_struct_info(sinfo))
}

#[cfg(test)]
mod tests;
