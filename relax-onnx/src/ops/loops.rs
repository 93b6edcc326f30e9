//! `Loop` and `Scan` as recursive Relax functions, the way TVM's Relax
//! importer writes loops: the loop state is the parameters of a private
//! function `loop_<output>` whose body is
//!
//! ```text
//! if cond && i < trip_count:
//!     outputs of the ONNX body on (i, cond, state…)
//!     acc_j = concat(acc_j, expand_dims(scan_j, 0))
//!     loop_<output>(i + 1, trip_count, cond', state'…, acc…, scanned…, captured…)
//! else:
//!     (state…, acc…)
//! ```
//!
//! and `main` calls it once with `i = 0` and empty accumulators. Values of
//! the enclosing graph the body reads are passed as the trailing
//! `captured` parameters (constants are used in place); `Scan`'s inputs are
//! passed whole (`scanned`) and the body takes step `i` of each with
//! `take` (step `len - 1 - i` for a reversed input).
//!
//! The body is converted twice: once on `main`'s own shapes in a
//! throwaway builder, to learn the shape of each scan output (an empty
//! accumulator needs it) and which states keep their shape, and once into
//! the function, whose parameters have fresh symbolic dims. The function
//! returns tensors of known rank; `main` binds their dims with a
//! `match_cast`: a state that keeps its shape gets its initial shape back,
//! a scan output its element shape after the number of iterations.
//!
//! Every iteration is one call frame of the VM (nested, not a tail call),
//! so a loop runs at most as many iterations as the VM's call depth limit
//! allows (`VirtualMachine::with_max_call_depth`, 1000 frames by default,
//! `main` and enclosing loops included). States must be tensors: a
//! sequence (a tuple, whose length is static) carried through a loop
//! changes length, so such a loop is unrolled at import instead
//! ([`unroll`]), which needs its trip count and conditions constant.

use super::{as_tensor, ints, normalize_axes, Ctx};
use crate::graph::{convert_subgraph, is_constant};
use crate::node::Node;
use crate::proto::GraphProto;
use relax_core::ir::{
    AttrValue, Attrs, Expr, ExprKind, GlobalVar, PrimExpr, StructInfo, StructInfoKind, TirVar, Var,
};
use relax_core::BlockBuilder;
use relax_runtime::{DataType, Error, Tensor};
use std::collections::{HashMap, HashSet};

/// Names a subgraph reads that it does not define (its inputs,
/// initializers and node outputs, in nested subgraphs too).
fn free_names(g: &GraphProto) -> HashSet<String> {
    fn walk(g: &GraphProto, used: &mut HashSet<String>, defined: &mut HashSet<String>) {
        defined.extend(g.input.iter().map(|i| i.name().to_string()));
        defined.extend(g.initializer.iter().map(|t| t.name().to_string()));
        for n in &g.node {
            used.extend(n.input.iter().filter(|s| !s.is_empty()).cloned());
            defined.extend(n.output.iter().cloned());
            for a in &n.attribute {
                if let Some(sub) = &a.g {
                    walk(sub, used, defined);
                }
                for sub in &a.graphs {
                    walk(sub, used, defined);
                }
            }
        }
        used.extend(g.output.iter().map(|o| o.name().to_string()));
    }
    let (mut used, mut defined) = (HashSet::new(), HashSet::new());
    walk(g, &mut used, &mut defined);
    used.retain(|n| !defined.contains(n));
    used
}

/// Whether a value of the enclosing graph can be used in another function
/// as it is: a constant, or a shape value without symbolic variables.
fn is_closed(e: &Expr) -> bool {
    match e.kind() {
        ExprKind::ShapeExpr(dims) => dims.iter().all(|d| d.as_int().is_some()),
        ExprKind::PrimValue(v) => v.as_int().is_some(),
        _ => is_constant(e),
    }
}

/// `s` with its symbolic dims renamed by `map` (fresh variables added for
/// the ones not in it yet, and for dims that are expressions).
fn rename(s: &StructInfo, map: &mut HashMap<TirVar, PrimExpr>) -> StructInfo {
    match s.kind() {
        StructInfoKind::Tensor(t) => match t.shape_values() {
            Some(dims) => StructInfo::tensor(
                dims.iter()
                    .map(|d| {
                        if d.as_int().is_some() {
                            return d.clone();
                        }
                        match d.as_var() {
                            Some(v) => map
                                .entry(v.clone())
                                .or_insert_with(|| TirVar::new(v.name()).to_expr())
                                .clone(),
                            None => TirVar::new("d").to_expr(),
                        }
                    })
                    .collect(),
                t.dtype,
            ),
            None => s.clone(),
        },
        StructInfoKind::Tuple(fields) => {
            StructInfo::tuple(fields.iter().map(|f| rename(f, map)).collect())
        }
        _ => s.clone(),
    }
}

/// The dims and dtype of a tensor StructInfo with a known shape.
fn dims_of(s: &StructInfo) -> Option<(Vec<PrimExpr>, DataType)> {
    let t = s.as_tensor()?;
    Some((t.shape_values()?.to_vec(), t.dtype))
}

/// A step written in Rust (a recurrent layer's cell): the body's
/// outputs `(state'…, scan…)` from [`NativeArgs`], emitted through the
/// given `Ctx`.
pub type NativeStep<'a> = &'a dyn Fn(&mut Ctx, &NativeArgs) -> Result<Vec<Expr>, Error>;

/// What a [`NativeStep`] is given.
pub struct NativeArgs {
    /// The states.
    pub states: Vec<Expr>,
    /// Each scanned input's step.
    pub steps: Vec<Expr>,
    /// The position of each step along its input (`len - 1 - i` in
    /// reverse), an `int64` scalar.
    pub positions: Vec<Expr>,
    /// The captured values, by the names the caller gave them.
    pub captured: HashMap<String, Expr>,
}

/// A loop's body.
enum Body<'g> {
    /// An ONNX subgraph, reading the enclosing graph's values by name.
    Graph(&'g GraphProto),
    /// A step written in Rust, with the values of `main` it reads.
    Native(NativeStep<'g>, Vec<(String, Expr)>),
}

/// What one loop does.
struct Plan<'g> {
    body: Body<'g>,
    /// `Loop`: the body takes `(i, cond, state…)` and gives `(cond',
    /// state'…, scan…)`. `Scan`: the body takes `(state…, step…)` and gives
    /// `(state'…, scan…)`, and the condition stays true.
    is_loop: bool,
    n_states: usize,
    n_scan: usize,
    /// `Scan`'s inputs: the axis each is scanned along, and whether in
    /// reverse.
    scanned: Vec<(usize, bool)>,
}

/// The function's parameters, in order.
struct Params {
    i: Expr,
    trip: Expr,
    cond: Expr,
    states: Vec<Expr>,
    accs: Vec<Expr>,
    scanned: Vec<Expr>,
    captured: Vec<(String, Expr)>,
}

/// The body's outputs for one iteration.
struct StepOut {
    /// `cond'` (`None` for `Scan`).
    cond: Option<Expr>,
    states: Vec<Expr>,
    scans: Vec<Expr>,
}

/// The node being converted and the opset.
#[derive(Clone, Copy)]
struct Site<'a> {
    node: &'a Node<'a>,
    opset: i64,
}

/// The body's outputs for one iteration, converted into the open function
/// of `bb`.
fn step(
    site: Site,
    bb: &mut BlockBuilder,
    plan: &Plan,
    closed: &HashMap<String, Expr>,
    p: &Params,
) -> Result<StepOut, Error> {
    let Site { node, opset } = site;
    let mut values = closed.clone();
    for (name, e) in &p.captured {
        values.insert(name.clone(), e.clone());
    }
    let mut inner = Ctx {
        bb,
        values: &values,
        opset,
        node,
    };
    let mut positions = Vec::new();
    let inputs = if plan.is_loop {
        let mut v = vec![p.i.clone(), p.cond.clone()];
        v.extend(p.states.iter().cloned());
        v
    } else {
        let mut v = p.states.clone();
        for (x, &(axis, reverse)) in p.scanned.iter().zip(&plan.scanned) {
            let index = if reverse {
                let (dims, _) = inner.tensor(x)?;
                let len = inner.dim_tensor(dims[axis].clone())?;
                let one = inner.scalar(1.0, DataType::i64())?;
                let last = inner.op2("relax.subtract", len, one)?;
                inner.op2("relax.subtract", last, p.i.clone())?
            } else {
                p.i.clone()
            };
            let attrs = Attrs::from_pairs([("axis", AttrValue::Int(axis as i64))]);
            v.push(inner.call("relax.take", vec![x.clone(), index.clone()], attrs)?);
            positions.push(index);
        }
        v
    };
    let outs = match &plan.body {
        Body::Graph(g) => {
            convert_subgraph(inner.bb, &values, g, inputs, opset).map_err(|e| node.error(e))?
        }
        Body::Native(f, _) => {
            let mut states = inputs;
            let steps = states.split_off(plan.n_states);
            let args = NativeArgs {
                states,
                steps,
                positions,
                captured: p.captured.iter().cloned().collect(),
            };
            f(&mut inner, &args)?
        }
    };
    let skip = usize::from(plan.is_loop);
    if outs.len() != skip + plan.n_states + plan.n_scan {
        return Err(node.error(format!(
            "the body has {} output(s), expected {}",
            outs.len(),
            skip + plan.n_states + plan.n_scan
        )));
    }
    let cond = if plan.is_loop {
        Some(scalar_of(&mut inner, outs[0].clone(), DataType::bool())?)
    } else {
        None
    };
    let states = outs[skip..skip + plan.n_states].to_vec();
    let scans = outs[skip + plan.n_states..].to_vec();
    Ok(StepOut {
        cond,
        states,
        scans,
    })
}

/// A one-element tensor as a scalar of `dtype`.
fn scalar_of(cx: &mut Ctx, e: Expr, dtype: DataType) -> Result<Expr, Error> {
    let (dims, _) = cx.tensor(&e)?;
    if super::product(&dims).as_int().is_some_and(|n| n != 1) {
        return Err(cx.error(format!(
            "a trip count or condition must hold one element, and it has shape {dims:?}"
        )));
    }
    let e = if dims.is_empty() {
        e
    } else {
        cx.call("relax.reshape", vec![e, super::shape(vec![])], Attrs::new())?
    };
    cx.astype(e, dtype)
}

/// Runs `plan` from `main` (the open function of `cx`): the final states
/// and the scan outputs, each `[iterations, …]`. `iterations` is the
/// number of iterations when it is known (`Scan`).
fn run(
    cx: &mut Ctx,
    plan: &Plan,
    trip: Expr,
    cond: Expr,
    states: Vec<Expr>,
    scanned: Vec<Expr>,
    iterations: Option<PrimExpr>,
) -> Result<(Vec<Expr>, Vec<Expr>), Error> {
    for (k, s) in states.iter().enumerate() {
        if cx.tensor(s).is_err() {
            return Err(cx.error(format!(
                "loop state {k} is not a tensor of known rank (a sequence carried through a \
                 loop changes length at run time, which tuples cannot)"
            )));
        }
    }
    // The enclosing graph's values the body reads.
    let mut closed = HashMap::new();
    let mut captured = Vec::new();
    let mut free: Vec<String> = match &plan.body {
        Body::Graph(g) => free_names(g).into_iter().collect(),
        Body::Native(_, named) => {
            captured.extend(named.iter().cloned());
            vec![]
        }
    };
    free.sort();
    for name in free {
        let Some(e) = cx.values.get(&name) else {
            continue;
        };
        if is_closed(e) {
            closed.insert(name, e.clone());
        } else {
            let e = as_tensor(cx.bb, e.clone()).map_err(|e| cx.error(e))?;
            captured.push((name, e));
        }
    }
    let sinfo = |e: &Expr| e.struct_info().cloned().unwrap_or_else(StructInfo::object);
    let scalar = |dtype| StructInfo::tensor(vec![], dtype);

    // 1. The body on main's shapes, in a throwaway builder.
    let (probe_states, probe_scans) = {
        let var = |name: &str, s: StructInfo| Expr::var(&Var::new(name, Some(s)));
        let p = Params {
            i: var("i", scalar(DataType::i64())),
            trip: var("trip_count", scalar(DataType::i64())),
            cond: var("cond", scalar(DataType::bool())),
            states: states.iter().map(|s| var("state", sinfo(s))).collect(),
            accs: vec![],
            scanned: scanned.iter().map(|s| var("scanned", sinfo(s))).collect(),
            captured: captured
                .iter()
                .map(|(n, e)| (n.clone(), var("captured", sinfo(e))))
                .collect(),
        };
        let mut params: Vec<Var> = Vec::new();
        for e in [&p.i, &p.trip, &p.cond]
            .into_iter()
            .chain(&p.states)
            .chain(&p.scanned)
            .chain(p.captured.iter().map(|(_, e)| e))
        {
            if let Some(v) = e.as_var() {
                params.push(v.clone());
            }
        }
        let mut probe = BlockBuilder::new();
        probe.begin_function("probe", params);
        let site = Site {
            node: cx.node,
            opset: cx.opset,
        };
        let out = step(site, &mut probe, plan, &closed, &p)?;
        (
            out.states.iter().map(sinfo).collect::<Vec<_>>(),
            out.scans.iter().map(sinfo).collect::<Vec<_>>(),
        )
    };
    // main's symbolic variables: a scan output's element shape must be
    // made of them.
    let mut main_vars: HashSet<TirVar> = HashSet::new();
    for e in states
        .iter()
        .chain(&scanned)
        .chain(captured.iter().map(|(_, e)| e))
    {
        main_vars.extend(sinfo(e).tir_vars());
    }
    let analyzer = relax_core::arith::Analyzer::new();
    let invariant: Vec<bool> = states
        .iter()
        .zip(&probe_states)
        .map(|(s, p)| match (dims_of(&sinfo(s)), dims_of(p)) {
            (Some((a, da)), Some((b, db))) => {
                da == db
                    && a.len() == b.len()
                    && a.iter()
                        .zip(&b)
                        .all(|(x, y)| analyzer.can_prove_equal(x, y))
            }
            _ => false,
        })
        .collect();
    // Each scan output's element dims in main's terms; `None` for a dim
    // computed from data in the body.
    let mut elems: Vec<(Vec<Option<PrimExpr>>, DataType)> = Vec::new();
    for (j, s) in probe_scans.iter().enumerate() {
        let Some((dims, dtype)) = dims_of(s) else {
            return Err(cx.error(format!("scan output {j} is not a tensor of known shape")));
        };
        let dims = dims
            .into_iter()
            .map(|d| {
                d.free_vars()
                    .iter()
                    .all(|v| main_vars.contains(v))
                    .then_some(d)
            })
            .collect();
        elems.push((dims, dtype));
    }
    // Whether the first step's scan output replaces the (empty)
    // accumulator instead of being appended to it: when its dims are not
    // known before the body runs.
    let replace_first: Vec<bool> = elems
        .iter()
        .map(|(dims, _)| dims.iter().any(Option::is_none))
        .collect();

    // 2. The recursive function.
    let base = relax_core::printer::dsl::identifier(
        cx.node
            .proto
            .output
            .iter()
            .find(|o| !o.is_empty())
            .map_or("body", String::as_str),
    );
    let module = cx.bb.get();
    let mut name = format!("loop_{base}");
    let mut k = 1;
    while module.global_var(&name).is_some() {
        name = format!("loop_{base}_{k}");
        k += 1;
    }
    let mut map = HashMap::new();
    let state_sinfo: Vec<StructInfo> = states.iter().map(|s| rename(&sinfo(s), &mut map)).collect();
    let scanned_sinfo: Vec<StructInfo> = scanned
        .iter()
        .map(|s| rename(&sinfo(s), &mut map))
        .collect();
    let captured_sinfo: Vec<StructInfo> = captured
        .iter()
        .map(|(_, e)| rename(&sinfo(e), &mut map))
        .collect();
    let acc_sinfo: Vec<StructInfo> = elems
        .iter()
        .map(|(dims, dtype)| {
            let mut d = vec![TirVar::new("n").to_expr()];
            let keep = invariant.iter().all(|&b| b);
            d.extend(dims.iter().map(|x| match x {
                Some(x) if x.as_int().is_some() => x.clone(),
                Some(x) if keep => x.substitute_map(&map),
                _ => TirVar::new("d").to_expr(),
            }));
            StructInfo::tensor(d, *dtype)
        })
        .collect();
    let ret = StructInfo::tuple(
        states
            .iter()
            .map(|s| {
                let (dims, dtype) = dims_of(&sinfo(s)).expect("checked above");
                StructInfo::tensor_ndim(dims.len() as i32, dtype)
            })
            .chain(
                elems
                    .iter()
                    .map(|(d, dtype)| StructInfo::tensor_ndim(d.len() as i32 + 1, *dtype)),
            )
            .collect(),
    );
    let p = {
        let var = |name: &str, s: &StructInfo| Expr::var(&Var::new(name, Some(s.clone())));
        Params {
            i: var("i", &scalar(DataType::i64())),
            trip: var("trip_count", &scalar(DataType::i64())),
            cond: var("cond", &scalar(DataType::bool())),
            states: state_sinfo.iter().map(|s| var("state", s)).collect(),
            accs: acc_sinfo.iter().map(|s| var("acc", s)).collect(),
            scanned: scanned_sinfo.iter().map(|s| var("scanned", s)).collect(),
            captured: captured
                .iter()
                .zip(&captured_sinfo)
                .map(|((n, _), s)| (n.clone(), var(&relax_core::printer::dsl::identifier(n), s)))
                .collect(),
        }
    };
    let all: Vec<Expr> = [p.i.clone(), p.trip.clone(), p.cond.clone()]
        .into_iter()
        .chain(p.states.iter().cloned())
        .chain(p.accs.iter().cloned())
        .chain(p.scanned.iter().cloned())
        .chain(p.captured.iter().map(|(_, e)| e.clone()))
        .collect();
    let param_sinfo: Vec<StructInfo> = all.iter().map(sinfo).collect();
    let callee = Expr::global_var(GlobalVar::new(&name)).with_struct_info(StructInfo::func(
        param_sinfo,
        ret,
        true,
    ));
    let params: Vec<Var> = all.iter().filter_map(|e| e.as_var().cloned()).collect();
    cx.bb.begin_function(&name, params);
    cx.bb.set_private(true).map_err(|e| cx.error(e))?;
    let site = Site {
        node: cx.node,
        opset: cx.opset,
    };
    build_function(site, cx.bb, plan, &closed, &p, &callee, &replace_first)?;

    // 3. The call from main, its results bound to their shapes.
    let mut args = vec![Expr::constant(Tensor::scalar(0i64)), trip, cond];
    args.extend(states.iter().cloned());
    for (dims, dtype) in &elems {
        // Dims computed in the body are 0 here: that accumulator is
        // replaced by the first step's output, never appended to.
        let mut d = vec![PrimExpr::int(0)];
        d.extend(
            dims.iter()
                .map(|x| x.clone().unwrap_or_else(|| PrimExpr::int(0))),
        );
        let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(*dtype))]);
        args.push(cx.call("relax.zeros", vec![super::shape(d)], attrs)?);
    }
    args.extend(scanned.iter().cloned());
    args.extend(captured.iter().map(|(_, e)| e.clone()));
    let r = cx
        .bb
        .emit(Expr::call(callee, args))
        .map_err(|e| cx.error(e))?;
    let r = Expr::var(&r);
    let mut fresh = 0;
    let mut fresh_dim = |base: &str| {
        fresh += 1;
        TirVar::new(format!("{base}_{}_{fresh}", name)).to_expr()
    };
    let mut final_states = Vec::new();
    for (k, s) in states.iter().enumerate() {
        let (dims, dtype) = dims_of(&sinfo(s)).expect("checked above");
        let target = if invariant[k] {
            StructInfo::tensor(dims, dtype)
        } else {
            StructInfo::tensor(dims.iter().map(|_| fresh_dim("d")).collect(), dtype)
        };
        let e = cx.item(&r, k)?;
        let v = cx.bb.emit_match_cast(e, target).map_err(|e| cx.error(e))?;
        final_states.push(Expr::var(&v));
    }
    let n = iterations.unwrap_or_else(|| fresh_dim("n"));
    let mut scans = Vec::new();
    for (j, (dims, dtype)) in elems.into_iter().enumerate() {
        let mut d = vec![n.clone()];
        d.extend(
            dims.into_iter()
                .map(|x| x.unwrap_or_else(|| fresh_dim("d"))),
        );
        let e = cx.item(&r, states.len() + j)?;
        let v = cx
            .bb
            .emit_match_cast(e, StructInfo::tensor(d, dtype))
            .map_err(|e| cx.error(e))?;
        scans.push(Expr::var(&v));
    }
    Ok((final_states, scans))
}

/// The body of the recursive function, into the function open in `bb`.
fn build_function(
    site: Site,
    bb: &mut BlockBuilder,
    plan: &Plan,
    closed: &HashMap<String, Expr>,
    p: &Params,
    callee: &Expr,
    replace_first: &[bool],
) -> Result<(), Error> {
    let Site { node, opset } = site;
    let none = HashMap::new();
    let mut f = Ctx {
        bb: &mut *bb,
        values: &none,
        opset,
        node,
    };
    let more = f.op2("relax.less", p.i.clone(), p.trip.clone())?;
    let go = f.op2("relax.logical_and", p.cond.clone(), more)?;
    f.bb.begin_inner_scope().map_err(|e| node.error(e))?;
    let StepOut {
        cond: next_cond,
        states: next_states,
        scans,
    } = step(site, f.bb, plan, closed, p)?;
    let mut args = Vec::new();
    let one = Expr::constant(Tensor::scalar(1i64));
    args.push(f.op2("relax.add", p.i.clone(), one)?);
    args.push(p.trip.clone());
    args.push(next_cond.unwrap_or_else(|| p.cond.clone()));
    args.extend(next_states);
    for ((acc, s), &replace) in p.accs.iter().zip(scans).zip(replace_first) {
        let attrs = Attrs::from_pairs([("axis", ints([0]))]);
        let s = f.call("relax.expand_dims", vec![s], attrs)?;
        let attrs = Attrs::from_pairs([("axis", AttrValue::Int(0))]);
        let tuple = Expr::tuple(vec![acc.clone(), s.clone()]);
        if !replace {
            args.push(f.call("relax.concat", vec![tuple], attrs)?);
            continue;
        }
        // if i == 0: [s] else: concat(acc, [s])
        let zero = Expr::constant(Tensor::scalar(0i64));
        let first = f.op2("relax.equal", p.i.clone(), zero)?;
        f.bb.begin_inner_scope().map_err(|e| node.error(e))?;
        let then = f.bb.end_inner_scope(s).map_err(|e| node.error(e))?;
        f.bb.begin_inner_scope().map_err(|e| node.error(e))?;
        let joined = f.call("relax.concat", vec![tuple], attrs)?;
        let otherwise = f.bb.end_inner_scope(joined).map_err(|e| node.error(e))?;
        let v =
            f.bb.emit(Expr::if_(first, then, otherwise))
                .map_err(|e| node.error(e))?;
        args.push(Expr::var(&v));
    }
    args.extend(p.scanned.iter().cloned());
    args.extend(p.captured.iter().map(|(_, e)| e.clone()));
    let r =
        f.bb.emit(Expr::call(callee.clone(), args))
            .map_err(|e| node.error(e))?;
    let then =
        f.bb.end_inner_scope(Expr::var(&r))
            .map_err(|e| node.error(e))?;
    f.bb.begin_inner_scope().map_err(|e| node.error(e))?;
    let done = Expr::tuple(p.states.iter().chain(&p.accs).cloned().collect());
    let otherwise = f.bb.end_inner_scope(done).map_err(|e| node.error(e))?;
    let out =
        f.bb.emit(Expr::if_(go, then, otherwise))
            .map_err(|e| node.error(e))?;
    f.bb.emit_func_output(Expr::var(&out))
        .map_err(|e| node.error(e))?;
    Ok(())
}

/// `Loop(M?, cond?, v_initial…)` with the subgraph `body`: the final
/// states, then each scan output stacked along a new first axis.
pub fn loop_(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["body"])?;
    let body = cx
        .node
        .graph("body")?
        .ok_or_else(|| cx.error("attribute `body` is required"))?;
    let trip = match cx.opt_input(0)? {
        Some(m) => scalar_of(cx, m, DataType::i64())?,
        None => Expr::constant(Tensor::scalar(i64::MAX)),
    };
    let cond = match cx.opt_input(1)? {
        Some(c) => scalar_of(cx, c, DataType::bool())?,
        None => Expr::constant(Tensor::scalar(true)),
    };
    let n_states = cx.node.num_inputs().saturating_sub(2);
    let mut states = Vec::new();
    for i in 0..n_states {
        states.push(cx.input(2 + i)?);
    }
    let n_scan = body.output.len().checked_sub(1 + n_states).ok_or_else(|| {
        cx.error(format!(
            "the body has {} output(s); it needs the condition and {n_states} state(s)",
            body.output.len()
        ))
    })?;
    if states.iter().any(is_sequence) {
        return unroll(cx, body, &trip, &cond, states, n_scan);
    }
    let plan = Plan {
        body: Body::Graph(body),
        is_loop: true,
        n_states,
        n_scan,
        scanned: vec![],
    };
    let (mut out, scans) = run(cx, &plan, trip, cond, states, vec![], None)?;
    out.extend(scans);
    Ok(out)
}

/// Whether `e` is a sequence (a tuple).
fn is_sequence(e: &Expr) -> bool {
    matches!(e.kind(), ExprKind::Tuple(_))
        || matches!(
            e.struct_info().map(|s| s.kind()),
            Some(StructInfoKind::Tuple(_))
        )
}

/// The most iterations [`unroll`] converts the body for.
const MAX_UNROLL: i64 = 4096;

/// A `Loop` carrying a sequence: a sequence is a tuple whose length is
/// static, and a recursive function's state cannot change it, so the loop
/// is unrolled at import, the body converted in place once per iteration
/// with the iteration number a constant. The trip count must be known at
/// import time (a constant: `SequenceLength` of a sequence of known
/// length is one) and so must each iteration's condition. Scan outputs
/// are the iterations' values stacked on a new axis 0.
fn unroll(
    cx: &mut Ctx,
    body: &GraphProto,
    trip: &Expr,
    cond: &Expr,
    mut states: Vec<Expr>,
    n_scan: usize,
) -> Result<Vec<Expr>, Error> {
    let constant = |e: &Expr| match e.kind() {
        ExprKind::Constant(t) if t.numel() == 1 => Some(t.to_f64_vec()[0]),
        _ => None,
    };
    let Some(trip_count) = constant(trip) else {
        return Err(cx.error(
            "the loop carries a sequence, which changes length at run time unless the loop \
             is unrolled, and its trip count is only known at run time (a sequence is a \
             tuple of a length known at import time)",
        ));
    };
    let trip_count = trip_count as i64;
    if trip_count > MAX_UNROLL {
        return Err(cx.error(format!(
            "the loop carries a sequence, so it is unrolled at import, and its trip count \
             {trip_count} is more than the {MAX_UNROLL} iterations unrolled"
        )));
    }
    let Some(mut keep_going) = constant(cond).map(|c| c != 0.0) else {
        return Err(cx.error(
            "the loop carries a sequence, so it is unrolled at import, and its initial \
             condition is only known at run time",
        ));
    };
    let outer = cx.values;
    let opset = cx.opset;
    let mut scans: Vec<Vec<Expr>> = vec![Vec::new(); n_scan];
    let mut i = 0;
    while keep_going && i < trip_count {
        let mut inputs = vec![
            Expr::constant(Tensor::scalar(i)),
            Expr::constant(Tensor::scalar(true)),
        ];
        inputs.extend(states.iter().cloned());
        let outs = convert_subgraph(cx.bb, outer, body, inputs, opset)
            .map_err(|e| cx.error(format!("iteration {i}: {e}")))?;
        let next = scalar_of(cx, outs[0].clone(), DataType::bool())?;
        let Some(c) = constant(&next) else {
            return Err(cx.error(format!(
                "the loop carries a sequence, so it is unrolled at import, and the \
                 condition iteration {i} computes is only known at run time"
            )));
        };
        keep_going = c != 0.0;
        states = outs[1..1 + states.len()].to_vec();
        for (acc, e) in scans.iter_mut().zip(&outs[1 + states.len()..]) {
            acc.push(e.clone());
        }
        i += 1;
    }
    let mut out = states;
    for (k, acc) in scans.into_iter().enumerate() {
        if acc.is_empty() {
            return Err(cx.error(format!(
                "scan output {k} of a loop unrolled at import runs no iteration: its \
                 element shape is not known"
            )));
        }
        let mut parts = Vec::new();
        for e in acc {
            let attrs = Attrs::from_pairs([("axis", ints([0]))]);
            parts.push(cx.call("relax.expand_dims", vec![e], attrs)?);
        }
        let attrs = Attrs::from_pairs([("axis", AttrValue::Int(0))]);
        out.push(cx.call("relax.concat", vec![Expr::tuple(parts)], attrs)?);
    }
    Ok(out)
}

/// `Scan` (opset 9 on: states, then `num_scan_inputs` inputs scanned
/// along `scan_input_axes` in `scan_input_directions`; scan outputs
/// stacked along `scan_output_axes` in `scan_output_directions`). Opset 8's
/// form (a leading batch axis on every input and an optional
/// `sequence_lens`) runs the scan once per batch entry and stacks the
/// results; its batch must be known at import time, and its
/// `sequence_lens`, when given, a constant equal to the sequence length.
pub fn scan(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let body = cx
        .node
        .graph("body")?
        .ok_or_else(|| cx.error("attribute `body` is required"))?;
    let m = cx
        .node
        .int("num_scan_inputs")?
        .ok_or_else(|| cx.error("attribute `num_scan_inputs` is required"))?;
    if cx.opset < 9 {
        return scan8(cx, body, m);
    }
    cx.node.only_attrs(&[
        "body",
        "num_scan_inputs",
        "scan_input_axes",
        "scan_input_directions",
        "scan_output_axes",
        "scan_output_directions",
    ])?;
    let inputs = cx.inputs()?;
    let m = usize::try_from(m)
        .ok()
        .filter(|&m| m >= 1 && m <= inputs.len())
        .ok_or_else(|| {
            cx.error(format!(
                "num_scan_inputs {m} is not in 1..={}",
                inputs.len()
            ))
        })?;
    let n_states = inputs.len() - m;
    let states = inputs[..n_states].to_vec();
    let scanned = inputs[n_states..].to_vec();
    let n_scan = body.output.len().checked_sub(n_states).ok_or_else(|| {
        cx.error(format!(
            "the body has {} output(s), fewer than the {n_states} state(s)",
            body.output.len()
        ))
    })?;
    let per = |cx: &Ctx, name: &str, n: usize| -> Result<Vec<i64>, Error> {
        let v = cx.node.ints(name)?.unwrap_or_else(|| vec![0; n]);
        if v.len() != n {
            return Err(cx.error(format!("`{name}` has {} value(s), expected {n}", v.len())));
        }
        Ok(v)
    };
    let in_axes = per(cx, "scan_input_axes", m)?;
    let in_dirs = per(cx, "scan_input_directions", m)?;
    let out_axes = per(cx, "scan_output_axes", n_scan)?;
    let out_dirs = per(cx, "scan_output_directions", n_scan)?;
    let mut plan_scanned = Vec::new();
    let mut len: Option<PrimExpr> = None;
    for (k, x) in scanned.iter().enumerate() {
        let (dims, _) = cx.tensor(x)?;
        let axis = normalize_axes(cx, &[in_axes[k]], dims.len())?[0];
        let d = dims[axis].clone();
        if let (Some(l), Some(a), Some(b)) =
            (&len, len.as_ref().and_then(|l| l.as_int()), d.as_int())
        {
            if a != b {
                return Err(cx.error(format!(
                    "scan input {k} has {b} steps along axis {axis}, and the first {l}"
                )));
            }
        }
        len.get_or_insert(d);
        plan_scanned.push((axis, in_dirs[k] != 0));
    }
    let len = len.expect("at least one scan input");
    let trip = cx.dim_tensor(len.clone())?;
    let plan = Plan {
        body: Body::Graph(body),
        is_loop: false,
        n_states,
        n_scan,
        scanned: plan_scanned,
    };
    let cond = Expr::constant(Tensor::scalar(true));
    let (mut out, scans) = run(cx, &plan, trip, cond, states, scanned, Some(len))?;
    for (j, y) in scans.into_iter().enumerate() {
        let y = if out_dirs[j] != 0 {
            let attrs = Attrs::from_pairs([("axis", AttrValue::Int(0))]);
            cx.call("relax.flip", vec![y], attrs)?
        } else {
            y
        };
        let (dims, _) = cx.tensor(&y)?;
        let axis = normalize_axes(cx, &[out_axes[j]], dims.len())?[0];
        let y = if axis == 0 {
            y
        } else {
            // The stacked axis 0 moved to `axis`.
            let mut order: Vec<i64> = (1..dims.len() as i64).collect();
            order.insert(axis, 0);
            let attrs = Attrs::from_pairs([("axes", ints(order))]);
            cx.call("relax.permute_dims", vec![y], attrs)?
        };
        out.push(y);
    }
    Ok(out)
}

/// Opset 8's `Scan`: `(sequence_lens?, state…, scanned…)`, each with a
/// leading batch axis, the scanned ones with the sequence axis next.
fn scan8(cx: &mut Ctx, body: &GraphProto, m: i64) -> Result<Vec<Expr>, Error> {
    cx.node
        .only_attrs(&["body", "num_scan_inputs", "directions"])?;
    let total = cx.node.num_inputs().saturating_sub(1);
    let m = usize::try_from(m)
        .ok()
        .filter(|&m| m >= 1 && m <= total)
        .ok_or_else(|| cx.error(format!("num_scan_inputs {m} is not in 1..={total}")))?;
    let n_states = total - m;
    let mut inputs = Vec::new();
    for i in 1..=total {
        inputs.push(cx.input(i)?);
    }
    let dirs = cx.node.ints("directions")?.unwrap_or_else(|| vec![0; m]);
    if dirs.len() != m {
        return Err(cx.error(format!(
            "`directions` has {} value(s), expected {m}",
            dirs.len()
        )));
    }
    let (xdims, _) = cx.tensor(&inputs[n_states])?;
    if xdims.len() < 2 {
        return Err(cx.error("a scan input needs a batch and a sequence axis"));
    }
    let batch = xdims[0].as_int().ok_or_else(|| {
        cx.error(format!(
            "the batch {} must be known at import time",
            xdims[0]
        ))
    })?;
    let len = xdims[1].clone();
    if let Some(lens) = cx.raw_input(0)? {
        let ExprKind::Constant(t) = lens.kind() else {
            return Err(cx.error("sequence_lens computed at run time is not supported"));
        };
        if t.to_f64_vec()
            .iter()
            .any(|&v| Some(v as i64) != len.as_int())
        {
            return Err(cx.error(format!(
                "sequence_lens shorter than the sequence length {len} are not supported"
            )));
        }
    }
    let n_scan = body.output.len().checked_sub(n_states).ok_or_else(|| {
        cx.error(format!(
            "the body has {} output(s), fewer than the {n_states} state(s)",
            body.output.len()
        ))
    })?;
    let plan = Plan {
        body: Body::Graph(body),
        is_loop: false,
        n_states,
        n_scan,
        scanned: dirs.iter().map(|&d| (0, d != 0)).collect(),
    };
    let take = |cx: &mut Ctx, x: &Expr, b: i64| -> Result<Expr, Error> {
        let attrs = Attrs::from_pairs([("axis", AttrValue::Int(0))]);
        cx.call(
            "relax.take",
            vec![x.clone(), Expr::constant(Tensor::scalar(b))],
            attrs,
        )
    };
    let mut rows: Vec<Vec<Expr>> = vec![Vec::new(); n_states + n_scan];
    for b in 0..batch {
        let mut row = Vec::new();
        for x in &inputs {
            row.push(take(cx, x, b)?);
        }
        let scanned = row.split_off(n_states);
        let trip = cx.dim_tensor(len.clone())?;
        let cond = Expr::constant(Tensor::scalar(true));
        let (states, scans) = run(cx, &plan, trip, cond, row, scanned, Some(len.clone()))?;
        for (k, y) in states.into_iter().chain(scans).enumerate() {
            let attrs = Attrs::from_pairs([("axis", ints([0]))]);
            rows[k].push(cx.call("relax.expand_dims", vec![y], attrs)?);
        }
    }
    rows.into_iter()
        .map(|parts| {
            let attrs = Attrs::from_pairs([("axis", AttrValue::Int(0))]);
            cx.call("relax.concat", vec![Expr::tuple(parts)], attrs)
        })
        .collect()
}

/// A scan whose step is written in Rust: `states` carried, each of
/// `scanned` (input, axis, reversed) taken one step at a time, `captured`
/// visible to `step` by name. The final states and the `n_scan` scan
/// outputs, stacked along a new first axis in the order of the
/// iterations. The number of steps is the first scanned input's extent
/// along its axis.
pub fn native_scan(
    cx: &mut Ctx,
    step: NativeStep,
    captured: Vec<(String, Expr)>,
    states: Vec<Expr>,
    scanned: Vec<(Expr, usize, bool)>,
    n_scan: usize,
) -> Result<(Vec<Expr>, Vec<Expr>), Error> {
    let (first, axis, _) = scanned
        .first()
        .ok_or_else(|| cx.error("a scan needs an input to scan"))?;
    let (dims, _) = cx.tensor(first)?;
    let len = dims
        .get(*axis)
        .cloned()
        .ok_or_else(|| cx.error(format!("axis {axis} is out of range")))?;
    let trip = cx.dim_tensor(len.clone())?;
    let plan = Plan {
        body: Body::Native(step, captured),
        is_loop: false,
        n_states: states.len(),
        n_scan,
        scanned: scanned.iter().map(|&(_, a, r)| (a, r)).collect(),
    };
    let cond = Expr::constant(Tensor::scalar(true));
    let inputs = scanned.into_iter().map(|(x, _, _)| x).collect();
    run(cx, &plan, trip, cond, states, inputs, Some(len))
}
