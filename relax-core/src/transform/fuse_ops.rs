//! `FuseOps`: groups the bindings of dataflow blocks into primitive
//! functions (TVM's `relax.transform.FuseOps`).
//!
//! 1. **What fuses.** The pass runs after `LegalizeOps` and
//!    `AnnotateTIROpPattern`: a binding `lv = R.call_tir(cls.f, (…),
//!    out_sinfo=…)`, or `R.call_tir_inplace(…)` as in TVM, has the pattern
//!    kind of its PrimFunc (`op_pattern`; a legalized `split`, bound to a
//!    tuple, is injective); a field read `lv[i]` is injective too, except
//!    of a packed-weights parameter (one after the function's
//!    `num_input`), as in TVM, so a `split` fuses with the ops reading its
//!    fields; every other binding (op calls, tuples, calls of functions) is
//!    opaque and stays alone. A `call_tir` may pass `tir_vars` (a shape of known
//!    values), as legalized ops on dims like `b * s` do. The
//!    [`GraphPartitioner`] groups each dataflow block's bindings by TVM's
//!    rules; other blocks are left alone, so nothing fuses across an impure
//!    call or out of a dataflow block.
//! 2. **What a group becomes.** A group of two or more bindings becomes a
//!    private Relax function with `R.func_attr({"Primitive": True})`, named
//!    after its PrimFuncs as TVM names it (`fused_matmul_add_relu`, with a
//!    number appended if the name is taken). Its parameters are the values
//!    the group reads from outside and the constants it passes (`param_0`,
//!    …; the call site passes the constant), in order of first use as TVM
//!    orders them (with their StructInfo, so symbolic dims come along; a
//!    tuple from outside that the group reads only through its fields is
//!    passed as those fields, `x_0`, …, as TVM passes it, each field read
//!    moving to the call site),
//!    then, when the members use
//!    symbolic variables those parameters do not define (a `(b * s, n)`
//!    tensor reshaped to `(b, s, n)`), one `R.Shape([b, s])` parameter
//!    that defines them, passed the caller's values; its body one dataflow block
//!    of the group's bindings, and its result the values used after the
//!    group: one, or a tuple of several.
//! 3. **The call site.** The group's bindings are replaced, at the position
//!    of its last binding, by one call of the new function bound to the
//!    group's output variable (for several outputs, a tuple bound to a new
//!    variable, then one `TupleGetItem` binding per output variable), so
//!    every later use still refers to the same variables.
//!
//! 4. **As TVM's `BlockBuilder::AddFunction`**: a group function
//!    structurally equal to one already in the module (two identical
//!    branches of an inception block) is that function, called again; a
//!    group none of whose values is read after it is dropped, bindings and
//!    all (TVM's "dead group").
//!
//! `FuseOps::default()` is TVM 0.27's pass (checked on TVM's own test cases
//! in `fuse_ops_matches_tvm_0_27`). Two options depart from it, for speed,
//! and the build pipeline turns them on (`backend::fuse_ops()`):
//! [`FuseOps::injective_weights`], an injective op of the block's inputs
//! only (a weight's transpose) joining the matmul or convolution reading it,
//! and [`FuseOps::injective_producers`], an injective op joining the group
//! of the op after it when that group holds a matmul, a convolution or a
//! reduction (a reshape read by a convolution's epilogue `add`).
//!
//! A module run through FuseOps alone still builds and runs: a call of a
//! primitive function is an ordinary call. `FuseTIR` then turns each
//! primitive function into one PrimFunc.

use super::annotate_tir_op_pattern::OP_PATTERN;
use super::lift_transform_params::NUM_INPUT;
use super::Pass;
use crate::analysis::graph_partitioner::{
    GraphPartitioner, PartitionOptions, DEFAULT_MAX_GROUP_SIZE,
};
use crate::analysis::indexed_forward_graph::IndexedForwardGraph;
use crate::analysis::post_dominator_tree::PostDominatorTree;
use crate::analysis::vars::free_vars;
use crate::ir::expr::{Binding, BindingBlock, ExprKind, GlobalVar, Var};
use crate::ir::{AttrValue, BaseFunc, Expr, Function, IRModule, PrimExpr, StructInfo, TirVar};
use crate::op::OpPatternKind;
use relax_runtime::Error;
use std::collections::{HashMap, HashSet};

/// The attribute marking a function made by fusion.
pub const PRIMITIVE: &str = "Primitive";

/// Operator fusion. See the module docs.
///
/// `FuseOps::default()` groups as TVM's pass does; the build pipeline
/// turns on [`FuseOps::injective_weights`] and
/// [`FuseOps::injective_producers`] (`backend::fuse_ops`).
#[derive(Clone, Copy, Debug)]
pub struct FuseOps {
    /// The largest number of bindings in one group (TVM's
    /// `fuse_opt_level`-independent `kMaxFusedOps`).
    pub max_group_size: usize,
    options: PartitionOptions,
}

impl Default for FuseOps {
    fn default() -> Self {
        FuseOps {
            max_group_size: DEFAULT_MAX_GROUP_SIZE,
            options: PartitionOptions::default(),
        }
    }
}

impl FuseOps {
    /// Whether an injective binding of the block's inputs only (a weight's
    /// `permute_dims`) joins the group of the matmul or convolution that
    /// reads it, which TVM's FuseOps never does (the partitioner's rule 3,
    /// [`GraphPartitioner::with_injective_weights`]). On in the build
    /// pipeline: FuseTIR then inlines the transpose as an index swap and the
    /// weight is read in place.
    pub fn injective_weights(mut self, on: bool) -> Self {
        self.options.injective_weights = on;
        self
    }

    /// Whether an injective binding joins the group of the binding that
    /// post-dominates it even when that group holds a matmul, a
    /// convolution or a reduction (a reshape of an activation read by a
    /// convolution's epilogue `add`), which TVM's FuseOps refuses (the
    /// partitioner's rule 6, [`PartitionOptions::injective_producers`]).
    /// On in the build pipeline: the reshape is then an index change
    /// inside the convolution's kernel, not a kernel of its own.
    pub fn injective_producers(mut self, on: bool) -> Self {
        self.options.injective_producers = on;
        self
    }
}

impl Pass for FuseOps {
    fn name(&self) -> &str {
        "FuseOps"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        Ok(outline_groups(&module, |func, block, taken| {
            fuse_block(&module, func, block, self, taken)
        }))
    }
}

/// A fusion pass's driver (shared with `FuseOpsByPattern`): every dataflow
/// block of every Relax function that is not already primitive goes
/// through `fuse` (with the function and the names taken so far), the
/// functions it outlines join the module, and a function whose blocks
/// changed is replaced.
pub(super) fn outline_groups(
    module: &IRModule,
    mut fuse: impl FnMut(
        &Function,
        &BindingBlock,
        &mut HashSet<String>,
    ) -> (BindingBlock, Vec<(GlobalVar, Function)>),
) -> IRModule {
    let mut out = module.clone();
    let mut taken: HashSet<String> = module
        .functions()
        .map(|(gv, _)| gv.name_hint().to_string())
        .collect();
    for (gv, f) in module.functions() {
        let BaseFunc::Relax(func) = f else { continue };
        if func.attrs.get(PRIMITIVE).is_some() {
            continue;
        }
        let Some(seq) = func.body.as_seq() else {
            continue;
        };
        let mut blocks = Vec::with_capacity(seq.blocks.len());
        let mut changed = false;
        for block in &seq.blocks {
            if !block.is_dataflow {
                blocks.push(block.clone());
                continue;
            }
            let (new_block, fused) = fuse(func, block, &mut taken);
            changed |= !fused.is_empty();
            for (fgv, ff) in fused {
                out.add(fgv, ff);
            }
            blocks.push(new_block);
        }
        if changed {
            let mut func = func.clone();
            let body = Expr::seq(blocks, seq.body.clone());
            func.body = match func.body.struct_info() {
                Some(s) => body.into_with_struct_info(s.clone()),
                None => body,
            };
            out.add(gv.clone(), func);
        }
    }
    out
}

/// `block` with each outlined group's bindings replaced by its call site
/// (`replaced`: binding index -> nothing for a member, the call-site
/// bindings at the group's last member).
pub(super) fn with_call_sites(
    block: &BindingBlock,
    mut replaced: HashMap<usize, Vec<Binding>>,
) -> BindingBlock {
    let mut bindings = Vec::with_capacity(block.bindings.len());
    for (i, b) in block.bindings.iter().enumerate() {
        match replaced.remove(&i) {
            Some(site) => bindings.extend(site),
            None => bindings.push(b.clone()),
        }
    }
    BindingBlock::dataflow(bindings)
}

/// The parameters of `func` after its first `num_input` (the packed
/// weights of `LiftTransformParams`); none without the attribute.
fn packed_params(func: &Function) -> HashSet<&Var> {
    match func.attrs.get(NUM_INPUT) {
        Some(AttrValue::Int(k)) => {
            let k = usize::try_from(*k).unwrap_or(0);
            func.params.iter().skip(k).collect()
        }
        _ => HashSet::new(),
    }
}

/// The pattern kind of a binding's value (see the module docs, point 1);
/// `packed`: the function's packed-weight parameters, whose fields are
/// opaque.
fn kind_of(module: &IRModule, value: &Expr, packed: &HashSet<&Var>) -> OpPatternKind {
    if let ExprKind::TupleGetItem(tuple, _) = value.kind() {
        return match tuple.as_var() {
            Some(v) if packed.contains(v) => OpPatternKind::Opaque,
            _ => OpPatternKind::Injective,
        };
    }
    let Some(call) = value.as_call() else {
        return OpPatternKind::Opaque;
    };
    // `call_tir(f, args)`, or with `tir_vars` given as a shape of known
    // values (FuseTIR passes them to the PrimFunc's scalar parameters).
    let tir_vars_ok = match call.args.get(2) {
        None => true,
        Some(e) => matches!(e.kind(), ExprKind::ShapeExpr(_)),
    };
    let is_call_tir = matches!(
        value.call_op_name(),
        Some("relax.call_tir" | "relax.call_tir_inplace")
    );
    if !is_call_tir || call.args.len() > 3 || !tir_vars_ok {
        return OpPatternKind::Opaque;
    }
    let ExprKind::GlobalVar(callee) = call.args[0].kind() else {
        return OpPatternKind::Opaque;
    };
    let Some(BaseFunc::Prim(pf)) = module.get(callee.name_hint()) else {
        return OpPatternKind::Opaque;
    };
    match pf.attrs.get(OP_PATTERN) {
        Some(AttrValue::Int(k)) => match k {
            0 => OpPatternKind::ElemWise,
            1 => OpPatternKind::Broadcast,
            2 => OpPatternKind::Injective,
            3 => OpPatternKind::CommReduce,
            4 => OpPatternKind::OutEWiseFusable,
            7 => OpPatternKind::Tuple,
            _ => OpPatternKind::Opaque,
        },
        _ => OpPatternKind::Opaque,
    }
}

/// What a binding contributes to its group's name: the PrimFunc a
/// `call_tir` calls, or the op's name without its namespace
/// (`relax.nn.relu` → `relu`).
fn callee_name(value: &Expr) -> Option<String> {
    let call = value.as_call()?;
    if let Some("relax.call_tir" | "relax.call_tir_inplace") = value.call_op_name() {
        return match call.args.first()?.kind() {
            ExprKind::GlobalVar(gv) => Some(gv.name_hint().to_string()),
            _ => None,
        };
    }
    let op = value.call_op_name()?;
    Some(op.rsplit('.').next().unwrap_or(op).to_string())
}

/// Fuses the groups of one dataflow block: the new block and the new
/// functions.
fn fuse_block(
    module: &IRModule,
    func: &Function,
    block: &BindingBlock,
    options: &FuseOps,
    taken: &mut HashSet<String>,
) -> (BindingBlock, Vec<(GlobalVar, Function)>) {
    let graph = IndexedForwardGraph::from_block(block);
    let tree = PostDominatorTree::new(&graph);
    let packed = packed_params(func);
    let kinds: Vec<OpPatternKind> = graph
        .nodes
        .iter()
        .map(|n| match &n.value {
            Some(v) => kind_of(module, v, &packed),
            None => OpPatternKind::Opaque,
        })
        .collect();
    let groups = GraphPartitioner::with_options(
        &graph,
        &tree,
        &kinds,
        options.max_group_size,
        options.options,
    )
    .groups();
    // The graph's nodes: the block's free variables first, then one per
    // binding in order.
    let first_binding = graph.len() - block.bindings.len();
    let mut members: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, &g) in groups.iter().enumerate().skip(first_binding) {
        members.entry(g).or_default().push(i);
    }
    let mut fused = Vec::new();
    // Binding index -> what replaces it: nothing (a member fused away), or
    // the call site's bindings (at the group's last member).
    let mut replaced: HashMap<usize, Vec<Binding>> = HashMap::new();
    let mut roots: Vec<usize> = members
        .iter()
        .filter(|(_, m)| m.len() > 1)
        .map(|(&r, _)| r)
        .collect();
    roots.sort_unstable();
    for root in roots {
        let group = &members[&root];
        // A group none of whose values is read after it computes nothing
        // used: TVM's FuseOps drops its bindings.
        let in_group: HashSet<usize> = group.iter().copied().collect();
        let dead = group.iter().all(|&m| {
            let node = &graph.nodes[m];
            !node.extern_ref && node.outputs.iter().all(|c| in_group.contains(c))
        });
        if dead {
            for &m in group {
                replaced.insert(m - first_binding, vec![]);
            }
            continue;
        }
        let attrs = [(PRIMITIVE, AttrValue::Bool(true))];
        let Some((gv, func, mut site)) =
            make_group(&graph, group, block, first_binding, &attrs, true, taken)
        else {
            continue;
        };
        for &m in group {
            replaced.insert(m - first_binding, vec![]);
        }
        // A function structurally equal to one already in the module is
        // that one, called again (TVM's `BlockBuilder::AddFunction`).
        let existing = fused
            .iter()
            .map(|(g, f): &(GlobalVar, Function)| (g.clone(), f))
            .chain(module.functions().filter_map(|(g, f)| match f {
                BaseFunc::Relax(f) => Some((g.clone(), f)),
                BaseFunc::Prim(_) | BaseFunc::Extern(_) => None,
            }))
            .find(|(_, f)| crate::ir::structural_equal(*f, &func))
            .map(|(g, _)| g);
        match existing {
            Some(same) => {
                taken.remove(gv.name_hint());
                // The call follows the fields it passes (`lv = x[0]`).
                if let Some(call) = site.iter().position(|b| b.value().as_call().is_some()) {
                    site[call] = call_site_calling(&site[call], same);
                }
            }
            None => fused.push((gv, func)),
        }
        replaced.insert(root - first_binding, site);
    }
    (with_call_sites(block, replaced), fused)
}

/// The function of one group (with `attrs`) and its call site; `None` when
/// the group cannot be outlined (a value it does not know how to rename, or
/// an output used before the group's last binding). With `lift_constants`
/// (FuseOps, as TVM's), each constant a member passes becomes a parameter
/// `param_<k>` that the call site gives it. Also used by `FuseOpsByPattern`.
pub(super) fn make_group(
    graph: &IndexedForwardGraph,
    group: &[usize],
    block: &BindingBlock,
    first_binding: usize,
    attrs: &[(&str, AttrValue)],
    lift_constants: bool,
    taken: &mut HashSet<String>,
) -> Option<(GlobalVar, Function, Vec<Binding>)> {
    let in_group: HashSet<usize> = group.iter().copied().collect();
    let last = *group.last()?;
    let bound: HashSet<&Var> = group.iter().map(|&m| &graph.nodes[m].var).collect();
    // A tuple from outside the group that the members read only through
    // its fields (`x[0]`) is passed as those fields, as TVM passes a
    // partially used tuple: each field read is a parameter (`x_0`), and
    // its `TupleGetItem` binding moves to the call site, before the call.
    // Tuple -> (index, member) of each field read.
    let mut field_reads: HashMap<Var, Vec<(usize, usize)>> = HashMap::new();
    let mut read_whole: HashSet<Var> = HashSet::new();
    for &m in group {
        let value = graph.nodes[m].value.as_ref()?;
        match value.kind() {
            ExprKind::TupleGetItem(t, i) => match t.as_var() {
                Some(v) if !bound.contains(v) => {
                    field_reads.entry(v.clone()).or_default().push((*i, m));
                }
                _ => {}
            },
            _ => read_whole.extend(free_vars(value)),
        }
    }
    field_reads.retain(|v, _| !read_whole.contains(v));
    let hoisted: HashSet<usize> = field_reads.values().flatten().map(|&(_, m)| m).collect();
    // Outputs: members visible after the block or read outside the group,
    // only after the call site.
    let mut outputs = Vec::new();
    for &m in group {
        let node = &graph.nodes[m];
        let outside: Vec<usize> = node
            .outputs
            .iter()
            .copied()
            .filter(|c| !in_group.contains(c))
            .collect();
        if outside.iter().any(|&c| c < last) {
            return None;
        }
        // A field read moved to the call site stays visible there.
        if !hoisted.contains(&m) && (node.extern_ref || !outside.is_empty() || m == last) {
            outputs.push(m);
        }
    }
    if outputs.is_empty() {
        return None;
    }
    // Parameters: what the members read from outside (and, lifted, the
    // constants they pass), in order of first use as TVM orders them: a
    // `call_tir`'s tensor arguments, another call's arguments (a tuple's
    // fields), a `TupleGetItem`'s tuple; then any other free variable.
    let mut outside: Vec<Var> = Vec::new();
    let mut sources: Vec<Expr> = Vec::new();
    for &m in group {
        let value = graph.nodes[m].value.as_ref()?;
        for a in tvm_arguments(value)
            .into_iter()
            .chain(free_vars(value).into_iter().map(|v| v.to_expr()))
        {
            match a.kind() {
                ExprKind::Var(v) if !bound.contains(v) && !outside.contains(v) => {
                    outside.push(v.clone());
                    sources.push(a);
                }
                ExprKind::Constant(_)
                    if lift_constants && !sources.iter().any(|s| s.ptr_eq(&a)) =>
                {
                    sources.push(a);
                }
                _ => {}
            }
        }
    }
    // The function's symbolic variables are its own (a symbolic variable
    // belongs to one function): fresh ones for those of the parameters,
    // and every one the members use must be defined by a parameter.
    let mut tir: HashMap<TirVar, PrimExpr> = HashMap::new();
    for v in &outside {
        for t in v
            .struct_info()
            .map(StructInfo::tir_vars)
            .unwrap_or_default()
        {
            tir.entry(t.clone())
                .or_insert_with(|| TirVar::with_dtype(t.name(), t.dtype()).to_expr());
        }
    }
    let definable: HashSet<TirVar> = outside
        .iter()
        .filter_map(|v| v.struct_info())
        .flat_map(StructInfo::definable_tir_vars)
        .collect();
    // Symbolic variables the members use that no parameter defines (a
    // reshape of a `(b * s, n)` input to `(b, s, n)`): one extra
    // `R.Shape([b, s])` parameter defines them, and the call site passes
    // the caller's values.
    let mut undefined: Vec<TirVar> = Vec::new();
    for &m in group {
        let var = &graph.nodes[m].var;
        let mut used = var
            .struct_info()
            .map(StructInfo::tir_vars)
            .unwrap_or_default();
        // A member's `tir_vars` (`call_tir(f, args, R.shape([b, s]))`).
        if let Some(ExprKind::ShapeExpr(dims)) = graph.nodes[m]
            .value
            .as_ref()
            .and_then(Expr::as_call)
            .and_then(|c| c.args.get(2))
            .map(Expr::kind)
        {
            used.extend(dims.iter().flat_map(PrimExpr::free_vars));
        }
        for t in used {
            if !definable.contains(&t) && !undefined.contains(&t) {
                undefined.push(t);
            }
        }
    }
    for t in &undefined {
        tir.entry(t.clone())
            .or_insert_with(|| TirVar::with_dtype(t.name(), t.dtype()).to_expr());
    }
    let sinfo_of = |v: &Var| v.struct_info().map(|s| subst_sinfo(s, &tir));
    let mut params: Vec<Var> = Vec::new();
    let mut map: HashMap<Var, Var> = HashMap::new();
    let mut lifted: Vec<(Expr, Var)> = Vec::new();
    // The call's arguments, and the field reads moved before it.
    let mut args: Vec<Expr> = Vec::new();
    let mut field_bindings: Vec<Binding> = Vec::new();
    for s in &sources {
        if let Some(reads) = s.as_var().and_then(|v| Some((v, field_reads.get(v)?))) {
            let (tuple, reads) = reads;
            let mut made: Vec<(usize, Var)> = Vec::new();
            for &(index, m) in reads {
                let read = &graph.nodes[m].var;
                let p = match made.iter().find(|(i, _)| *i == index) {
                    Some((_, p)) => p.clone(),
                    None => {
                        let p = Var::new(format!("{}_{index}", tuple.name_hint()), sinfo_of(read));
                        made.push((index, p.clone()));
                        params.push(p.clone());
                        args.push(read.to_expr());
                        field_bindings.push(block.bindings[m - first_binding].clone());
                        p
                    }
                };
                map.insert(read.clone(), p);
            }
            continue;
        }
        args.push(s.clone());
        let p = match s.as_var() {
            Some(v) => {
                let p = Var::new(v.name_hint(), sinfo_of(v));
                map.insert(v.clone(), p.clone());
                p
            }
            None => {
                let p = Var::new(format!("param_{}", lifted.len()), s.struct_info().cloned());
                lifted.push((s.clone(), p.clone()));
                p
            }
        };
        params.push(p);
    }
    if !undefined.is_empty() {
        let inner = undefined.iter().map(|t| tir[t].clone()).collect();
        params.push(Var::new("tir_vars", Some(StructInfo::shape(inner))));
    }
    // The body: the members, renamed; outputs leave the dataflow block.
    let mut body = Vec::with_capacity(group.len());
    let mut names = Vec::new();
    for &m in group {
        if hoisted.contains(&m) {
            continue;
        }
        let binding = &block.bindings[m - first_binding];
        let old = binding.var();
        let new = if outputs.contains(&m) {
            Var::new(old.name_hint(), sinfo_of(old))
        } else {
            Var::new_dataflow(old.name_hint(), sinfo_of(old))
        };
        let value = rename(binding.value(), &map, &lifted, &tir)?;
        if let Some(name) = callee_name(binding.value()) {
            names.push(name);
        }
        map.insert(old.clone(), new.clone());
        body.push(Binding::var_binding(new, value));
    }
    let out_vars: Vec<Var> = outputs
        .iter()
        .map(|&m| map[&graph.nodes[m].var].clone())
        .collect();
    // Inside the function, in its own symbolic variables; at the call
    // site, in the caller's.
    let inner_sinfo: Vec<StructInfo> = out_vars
        .iter()
        .map(|v| v.struct_info().cloned())
        .collect::<Option<_>>()?;
    let out_sinfo: Vec<StructInfo> = outputs
        .iter()
        .map(|&m| graph.nodes[m].var.struct_info().cloned())
        .collect::<Option<_>>()?;
    let (result, ret) = match out_vars.as_slice() {
        [one] => (one.to_expr(), inner_sinfo[0].clone()),
        many => {
            let sinfo = StructInfo::tuple(inner_sinfo.clone());
            let fields = many.iter().map(Var::to_expr).collect();
            (Expr::tuple(fields).with_struct_info(sinfo.clone()), sinfo)
        }
    };
    let seq =
        Expr::seq(vec![BindingBlock::dataflow(body)], result).into_with_struct_info(ret.clone());
    let mut func = Function::new(params, seq, ret);
    for (k, v) in attrs {
        func = func.with_attr(k, v.clone());
    }
    let name = unique_name(&format!("fused_{}", names.join("_")), taken);
    let gv = GlobalVar::new(&name);
    // The call site.
    let ret = match out_sinfo.as_slice() {
        [one] => one.clone(),
        many => StructInfo::tuple(many.to_vec()),
    };
    if !undefined.is_empty() {
        let values: Vec<PrimExpr> = undefined.iter().map(TirVar::to_expr).collect();
        args.push(Expr::shape(values.clone()).with_struct_info(StructInfo::shape(values)));
    }
    let callee = Expr::global_var(gv.clone()).with_struct_info(func.struct_info());
    let call = Expr::call(callee, args).with_struct_info(ret.clone());
    let site = match outputs.as_slice() {
        [only] => vec![Binding::var_binding(graph.nodes[*only].var.clone(), call)],
        many => {
            let tuple = Var::new_dataflow("lv", Some(ret));
            let mut site = vec![Binding::var_binding(tuple.clone(), call)];
            for (i, &m) in many.iter().enumerate() {
                let var = graph.nodes[m].var.clone();
                let item =
                    Expr::tuple_get_item(tuple.to_expr(), i).with_struct_info(out_sinfo[i].clone());
                site.push(Binding::var_binding(var, item));
            }
            site
        }
    };
    field_bindings.extend(site);
    Some((gv, func, field_bindings))
}

/// The call-site binding `site` (`v = f(args)`) calling `gv` instead.
fn call_site_calling(site: &Binding, gv: GlobalVar) -> Binding {
    let value = site.value();
    let Some(call) = value.as_call() else {
        return site.clone();
    };
    let mut callee = Expr::global_var(gv);
    if let Some(s) = call.op.struct_info() {
        callee = callee.with_struct_info(s.clone());
    }
    let mut new = Expr::call(callee, call.args.clone());
    if let Some(s) = value.struct_info() {
        new = new.with_struct_info(s.clone());
    }
    Binding::var_binding(site.var().clone(), new)
}

/// `base`, or `base` with the first free number appended (TVM's name
/// supply: `fused_add`, `fused_add1`, …).
pub(super) fn unique_name(base: &str, taken: &mut HashSet<String>) -> String {
    let mut name = base.to_string();
    let mut n = 1;
    while taken.contains(&name) {
        name = format!("{base}{n}");
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// `sinfo` with the symbolic variables of `tir` replaced.
fn subst_sinfo(sinfo: &StructInfo, tir: &HashMap<TirVar, PrimExpr>) -> StructInfo {
    if tir.is_empty() {
        return sinfo.clone();
    }
    sinfo.map_prim_exprs(&|e| e.substitute_map(tir))
}

/// The arguments of a binding's value in the order TVM's FuseOps makes
/// them parameters: a `call_tir`'s (or `call_tir_inplace`'s) tensor
/// arguments, another call's arguments with a tuple's fields in its place,
/// a `TupleGetItem`'s tuple.
fn tvm_arguments(value: &Expr) -> Vec<Expr> {
    let fields = |e: &Expr| match e.kind() {
        ExprKind::Tuple(f) => f.clone(),
        _ => vec![e.clone()],
    };
    match value.kind() {
        ExprKind::Call(c) => match value.call_op_name() {
            Some("relax.call_tir" | "relax.call_tir_inplace") => {
                c.args.get(1).map(fields).unwrap_or_default()
            }
            _ => c.args.iter().flat_map(fields).collect(),
        },
        ExprKind::TupleGetItem(t, _) => vec![t.clone()],
        _ => vec![],
    }
}

/// `expr` with the variables of `map`, the constants of `lifted` (the same
/// node) and the symbolic variables of `tir` replaced, for the forms a
/// `call_tir` binding takes (calls, tuples, variables and leaves); `None`
/// for others.
fn rename(
    expr: &Expr,
    map: &HashMap<Var, Var>,
    lifted: &[(Expr, Var)],
    tir: &HashMap<TirVar, PrimExpr>,
) -> Option<Expr> {
    let out = match expr.kind() {
        ExprKind::Var(v) => return Some(map.get(v).map_or_else(|| expr.clone(), Var::to_expr)),
        ExprKind::Constant(_) => {
            return Some(
                lifted
                    .iter()
                    .find(|(c, _)| c.ptr_eq(expr))
                    .map_or_else(|| expr.clone(), |(_, p)| p.to_expr()),
            )
        }
        ExprKind::GlobalVar(_)
        | ExprKind::StringImm(_)
        | ExprKind::DataTypeImm(_)
        | ExprKind::ExternFunc(_)
        | ExprKind::Op(_) => return Some(expr.clone()),
        ExprKind::PrimValue(v) => Expr::prim_value(v.substitute_map(tir)),
        ExprKind::ShapeExpr(dims) => {
            Expr::shape(dims.iter().map(|d| d.substitute_map(tir)).collect())
        }
        ExprKind::Tuple(fields) => Expr::tuple(
            fields
                .iter()
                .map(|f| rename(f, map, lifted, tir))
                .collect::<Option<_>>()?,
        ),
        ExprKind::TupleGetItem(t, i) => Expr::tuple_get_item(rename(t, map, lifted, tir)?, *i),
        ExprKind::Call(c) => Expr::call_full(
            rename(&c.op, map, lifted, tir)?,
            c.args
                .iter()
                .map(|a| rename(a, map, lifted, tir))
                .collect::<Option<_>>()?,
            c.attrs.clone(),
            c.sinfo_args.iter().map(|s| subst_sinfo(s, tir)).collect(),
        ),
        ExprKind::SeqExpr(_) | ExprKind::Function(_) | ExprKind::If(_) => return None,
    };
    Some(match expr.struct_info() {
        Some(s) => out.with_struct_info(subst_sinfo(s, tir)),
        None => out,
    })
}

#[cfg(test)]
mod tests;
