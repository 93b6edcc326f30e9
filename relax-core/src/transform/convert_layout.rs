//! `ConvertLayout`: convolutions in another data layout, the new layout
//! carried through the operators that do not care (TVM's
//! `relax.transform.ConvertLayout(desired_layouts)`).
//!
//! 1. What is converted: `R.nn.conv2d` with NCHW data, OIHW weights and
//!    NCHW output, when the desired layouts name `relax.nn.conv2d`, e.g.
//!    `["NHWC", "HWIO"]`. Its data becomes `permute_dims(x, [0, 2, 3, 1])`
//!    (unless `x` already is NHWC), its weight `permute_dims(w, …)` to the
//!    desired kernel layout (a constant weight is then folded by
//!    `FoldConstant`), and the convolution is NHWC in and out.
//! 2. How the layout travels: a binding's value is kept in the new layout
//!    while its operators do not care about layouts:
//!    - elementwise unary operators (`R.nn.relu`, `R.sigmoid`,
//!      `R.astype`, …) give their operand's layout;
//!    - elementwise binary operators (`R.add`, `R.maximum`, …) give the
//!      layout of their converted operand; an operand of the same rank in
//!      the original layout (a per-channel bias `(1, C, 1, 1)`, a
//!      residual) is permuted to it, a scalar is left as it is;
//!    - reductions with explicit axes (`R.mean(x, axis=[2, 3])`, a global
//!      average pool) renumber their axes; with `keepdims=True` they keep
//!      the layout, without it the axes left keep their held order;
//!    - `R.concat` and `R.split` renumber their axis (every field of the
//!      concat's tuple is brought to the layout; each field of the split's
//!      tuple, `parts[i]`, is in it);
//!    - `R.reshape` carries it when its axes group as `reshape.rs` says
//!      (a channel split `(N, C, H, W) → (N, g, C/g, H, W)` on an NHWC
//!      value is a reshape to `(N, H, W, g, C/g)`);
//!    - `R.permute_dims` moves no data: the held value is its result, in
//!      the two permutations composed (a channel shuffle's transpose then
//!      becomes a permutation of the last two axes, done where the next
//!      reshape needs the axes together);
//!    - 2-d pools (`max_pool2d`, `avg_pool2d`, `adaptive_avg_pool2d`) of a
//!      value held NHWC are NHWC.
//! 3. Anywhere else (any other operator, a tuple outside these, a call of
//!    a function, the output of a dataflow block) a converted value is
//!    first permuted back, bound to its original variable, so every value
//!    outside keeps its original layout and the function its signature.
//!
//! With a chain of convolutions only the first input and the values that
//! leave the chain are transposed. `ConvertLayout::for_host()` is the
//! build's rule (`backend/pipeline.rs`): NHWC with HWIO weights for the
//! convolutions with a constant weight and at least 16 input channels or
//! a 1 × 1 window (with fewer and a larger window, an image's stem, NCHW
//! data and NHWC output),
//! in functions with such a grouped convolution and none that
//! `Conv2dWinograd` rewrites (the mobile nets: a depthwise convolution vectorized over
//! channels is about three times faster than over a row, and their 1 × 1
//! convolutions become matrix products, `Conv2dToMatmul`; RegNet: a
//! grouped convolution runs group by group with a group's channels in
//! the vector lanes, `default_schedule/groups.rs`, where NCHW gathers
//! each group's image into an implicit GEMM's pack; RegNet-Y 400MF at
//! batch 1 on a 2-core AMD EPYC with AVX2, alternated: 16.3–21.7 →
//! 13.5–18.3 ms). In other
//! functions (ResNet, GoogLeNet) it converts only the stem: its output,
//! relu and max pool run NHWC, and the value is permuted back to NCHW
//! before the next convolution (ResNet-18's 7 × 7 stem and pool at batch
//! 1 on a 2-core Xeon: 1.61 → 1.25 ms with the transpose).

mod reshape;

use super::conv2d_winograd::Conv2dWinograd;
use super::Pass;
use crate::analysis::vars::free_vars;
use crate::ir::{
    AttrValue, Attrs, Binding, BindingBlock, Call, Expr, ExprKind, IRModule, StructInfo, Var,
    VarBinding,
};
use crate::mutator::{ExprMutator, MutatorState};
use crate::op::infer::{attr, attr_int, attr_ints};
use crate::visitor::ExprVisitor;
use relax_runtime::Error;
use std::collections::{BTreeMap, HashMap};

/// The pass. See the module docs.
#[derive(Clone, Debug)]
pub struct ConvertLayout {
    /// Operator name to its desired layouts (data, then kernel).
    desired: BTreeMap<String, Vec<String>>,
    /// Convert only functions that `for_host`'s rule selects.
    host_rule: bool,
}

/// The fewest input channels of a convolution with a window `for_host`
/// converts whole: with fewer (an image's 3), only its output is
/// (`host_stem`). A 1 × 1 convolution (a matrix product once converted)
/// is converted whatever its channels.
const HOST_MIN_CHANNELS: i64 = 16;

/// Elementwise operators of one tensor operand: the layout passes through.
const UNARY: &[&str] = &[
    "relax.abs",
    "relax.astype",
    "relax.ceil",
    "relax.cos",
    "relax.erf",
    "relax.exp",
    "relax.floor",
    "relax.log",
    "relax.negative",
    "relax.nn.gelu",
    "relax.nn.gelu_tanh",
    "relax.nn.leakyrelu",
    "relax.nn.relu",
    "relax.nn.silu",
    "relax.round",
    "relax.rsqrt",
    "relax.sigmoid",
    "relax.sin",
    "relax.sqrt",
    "relax.square",
    "relax.tanh",
];

/// Elementwise operators of two broadcast operands.
const BINARY: &[&str] = &[
    "relax.add",
    "relax.divide",
    "relax.maximum",
    "relax.minimum",
    "relax.multiply",
    "relax.power",
    "relax.subtract",
];

/// 2-d pools, converted when their input is held NHWC.
const POOLS: &[&str] = &[
    "relax.nn.adaptive_avg_pool2d",
    "relax.nn.avg_pool2d",
    "relax.nn.max_pool2d",
];

/// Reductions whose axes renumber.
const REDUCTIONS: &[&str] = &[
    "relax.max",
    "relax.mean",
    "relax.min",
    "relax.prod",
    "relax.sum",
];

impl ConvertLayout {
    /// Converts every operator `desired` names to its layouts (TVM's
    /// `desired_layouts`: `{"relax.nn.conv2d": ["NHWC", "HWIO"]}`).
    /// Only `relax.nn.conv2d` is converted; its data layout must be
    /// `NHWC` or `NCHW`, its kernel layout a permutation of `OIHW`.
    pub fn new<'a>(
        desired: impl IntoIterator<Item = (&'a str, Vec<&'a str>)>,
    ) -> Result<Self, Error> {
        let desired: BTreeMap<String, Vec<String>> = desired
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
            .collect();
        for (op, layouts) in &desired {
            let ok = op == "relax.nn.conv2d"
                && layouts.len() == 2
                && permutation("NCHW", &layouts[0]).is_some()
                && matches!(layouts[0].as_str(), "NHWC" | "NCHW")
                && permutation("OIHW", &layouts[1]).is_some();
            if !ok {
                return Err(Error::Unsupported(format!(
                    "ConvertLayout: the desired layouts must be relax.nn.conv2d: [NHWC or NCHW, a permutation of OIHW], found {op}: {layouts:?}"
                )));
            }
        }
        Ok(ConvertLayout {
            desired,
            host_rule: false,
        })
    }

    /// The build's rule for the host (module docs): NHWC data and HWIO
    /// weights for the convolutions with a constant weight and at least
    /// 16 input channels, in functions with such a grouped (or
    /// depthwise) convolution and no convolution `Conv2dWinograd`
    /// rewrites.
    pub fn for_host() -> Self {
        let mut pass =
            ConvertLayout::new([("relax.nn.conv2d", vec!["NHWC", "HWIO"])]).expect("valid layouts");
        pass.host_rule = true;
        pass
    }
}

/// The permutation taking layout `from` to `to` (`to[d] = from[perm[d]]`),
/// when both name the same axes once each.
fn permutation(from: &str, to: &str) -> Option<Vec<usize>> {
    if from.len() != to.len() {
        return None;
    }
    let perm: Vec<usize> = to.chars().map(|c| from.find(c)).collect::<Option<_>>()?;
    is_permutation(&perm).then_some(perm)
}

/// Axis `a` (negative: from the end) of a tensor of `rank` axes.
fn axis_in(a: i64, rank: usize) -> Option<usize> {
    let a = if a < 0 { a + rank as i64 } else { a };
    usize::try_from(a).ok().filter(|&a| a < rank)
}

/// Whether `axes` names each of `0 .. axes.len()` once.
fn is_permutation(axes: &[usize]) -> bool {
    let mut seen = axes.to_vec();
    seen.sort_unstable();
    seen.iter().enumerate().all(|(d, &a)| d == a)
}

/// The inverse permutation.
fn inverse(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (d, &p) in perm.iter().enumerate() {
        inv[p] = d;
    }
    inv
}

/// `R.permute_dims(x, axes=perm)`.
fn permute_dims(x: Expr, perm: &[usize]) -> Expr {
    let axes = AttrValue::Array(perm.iter().map(|&p| AttrValue::Int(p as i64)).collect());
    Expr::call_op(
        "relax.permute_dims",
        vec![x],
        Attrs::from_pairs([("axes", axes)]),
    )
}

fn is_identity(perm: &[usize]) -> bool {
    perm.iter().enumerate().all(|(d, &p)| d == p)
}

fn str_attr_is(call: &Call, name: &str, want: &str) -> bool {
    match attr(call, name) {
        Some(AttrValue::Str(s)) => s == want,
        None => true,
        Some(_) => false,
    }
}

fn ndim(e: &Expr) -> Option<usize> {
    let t = e.struct_info().and_then(StructInfo::as_tensor)?;
    usize::try_from(t.ndim).ok()
}

/// A conv2d in the original layouts (NCHW, OIHW, NCHW).
fn original_conv2d(call: &Call) -> bool {
    call.args.len() == 2
        && str_attr_is(call, "data_layout", "NCHW")
        && str_attr_is(call, "kernel_layout", "OIHW")
        && str_attr_is(call, "out_layout", "NCHW")
        && call.args.iter().all(|a| ndim(a) == Some(4))
}

/// The input channels of `call`, a conv2d in NCHW.
fn in_channels(call: &Call) -> Option<i64> {
    let t = call.args[0].struct_info().and_then(StructInfo::as_tensor)?;
    t.shape_values()?.get(1)?.as_int()
}

/// Whether `call` (a conv2d) is grouped: more than one group, as many as
/// the input channels for a depthwise convolution.
fn grouped(call: &Call) -> bool {
    attr_int(call, "groups").unwrap_or(1) > 1
}

/// Whether the host's rule converts `call`, a conv2d in the original
/// layouts: its weight is a constant (so its permutation is folded at
/// build time; a weight passed in would be permuted on every call and
/// read through the permutation) and it has at least
/// [`HOST_MIN_CHANNELS`] input channels or a 1 × 1 window.
fn host_convertible(call: &Call) -> bool {
    matches!(call.args[1].kind(), ExprKind::Constant(_))
        && (in_channels(call).is_some_and(|c| c >= HOST_MIN_CHANNELS) || pointwise(call))
}

/// Whether `call` (a conv2d with OIHW weights) has a 1 × 1 window.
fn pointwise(call: &Call) -> bool {
    call.args[1]
        .struct_info()
        .and_then(StructInfo::as_tensor)
        .and_then(|t| t.shape_values())
        .is_some_and(|s| s.len() == 4 && s[2..].iter().all(|d| d.as_int() == Some(1)))
}

/// Whether `call` (a conv2d in the original layouts) is a stem the host's
/// rule converts: a constant weight, fewer than [`HOST_MIN_CHANNELS`]
/// input channels (an image's 3), a window larger than 1 × 1, one group.
/// Its data stays NCHW and its output is NHWC (`out_layout`): a direct
/// convolution (`DefaultSchedule`'s case 2, channels in the vector lanes)
/// reads the image in place, and no transpose writes its output again.
fn host_stem(call: &Call) -> bool {
    matches!(call.args[1].kind(), ExprKind::Constant(_))
        && in_channels(call).is_some_and(|c| c < HOST_MIN_CHANNELS)
        && attr_int(call, "groups").unwrap_or(1) == 1
        && !pointwise(call)
}

/// The rule of [`ConvertLayout::for_host`] for one function.
fn host_rule_selects(func: &Expr) -> bool {
    struct Convs(Vec<Call>);
    impl ExprVisitor for Convs {
        fn visit_call(&mut self, expr: &Expr, call: &Call) {
            if expr.call_op_name() == Some("relax.nn.conv2d") {
                self.0.push(call.clone());
            }
            crate::visitor::walk_call(self, call);
        }
    }
    let mut convs = Convs(Vec::new());
    convs.visit_expr(func);
    convs
        .0
        .iter()
        .any(|c| original_conv2d(c) && grouped(c) && host_convertible(c))
        && !convs.0.iter().any(Conv2dWinograd::rewrites_with_rule)
}

impl Pass for ConvertLayout {
    fn name(&self) -> &str {
        "ConvertLayout"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            let func = Expr::function(func.clone());
            // Elsewhere the host's rule converts only the image's stem.
            let stems_only = self.host_rule && !host_rule_selects(&func);
            let mut m = Rewriter {
                state: MutatorState::with_module(&module),
                desired: &self.desired,
                layouts: HashMap::new(),
                host_rule: self.host_rule,
                stems_only,
                permuted: HashMap::new(),
            };
            let new = m.visit_expr(&func);
            let errors = m.builder().take_errors();
            if !errors.is_empty() {
                return Err(Error::Compile(errors));
            }
            if let Some(nf) = new.as_function() {
                out.add(gv.clone(), nf.clone());
            }
        }
        Ok(out)
    }
}

struct Rewriter<'a> {
    state: MutatorState,
    desired: &'a BTreeMap<String, Vec<String>>,
    /// Variables whose value is held in another layout, not yet bound:
    /// the variable holding it and the permutation from the original.
    layouts: HashMap<Var, (Var, Vec<usize>)>,
    /// Convert only the convolutions `host_convertible` accepts.
    host_rule: bool,
    /// Convert only the image's stem (`host_stem`).
    stems_only: bool,
    /// Values of the original layout already permuted, by permutation.
    permuted: HashMap<(Var, Vec<usize>), Expr>,
}

impl Rewriter<'_> {
    fn emit(&mut self, value: Expr, name: &str) -> Option<Var> {
        match self.builder().emit_named(value, name) {
            Ok(v) => Some(v),
            Err(e) => {
                self.builder().report(e);
                None
            }
        }
    }

    fn permute(&mut self, x: Expr, perm: &[usize], name: &str) -> Option<Expr> {
        if is_identity(perm) {
            return Some(x);
        }
        self.emit(permute_dims(x, perm), name)
            .map(|v| Expr::var(&v))
    }

    /// `e` (an argument) in the layout `perm` of the original one.
    fn in_layout(&mut self, e: &Expr, perm: &[usize]) -> Option<Expr> {
        if let Some((held, p)) = e.as_var().and_then(|v| self.layouts.get(v)).cloned() {
            // From `p` to `perm`: axis `d` of the result is axis
            // `perm[d]` of the original, which is axis `p⁻¹[perm[d]]`.
            let inv = inverse(&p);
            let step: Vec<usize> = perm.iter().map(|&d| inv[d]).collect();
            return self.permute(Expr::var(&held), &step, &format!("{}_t", held.name_hint()));
        }
        let e = self.visit_expr(e);
        let Some(var) = e.as_var().cloned() else {
            return self.permute(e, perm, "lv");
        };
        let key = (var.clone(), perm.to_vec());
        if let Some(done) = self.permuted.get(&key) {
            return Some(done.clone());
        }
        let done = self.permute(e, perm, &format!("{}_t", var.name_hint()))?;
        self.permuted.insert(key, done.clone());
        Some(done)
    }

    /// Binds `var` to its value in the original layout, if it is held in
    /// another.
    fn materialize(&mut self, var: &Var) {
        let Some((held, p)) = self.layouts.remove(var) else {
            return;
        };
        let back = inverse(&p);
        let value = match held.struct_info().and_then(StructInfo::as_tuple) {
            // A tuple held in another layout (a split's): each field
            // permuted back.
            Some(fields) => {
                let mut back_fields = Vec::with_capacity(fields.len());
                for index in 0..fields.len() {
                    let field = Expr::tuple_get_item(Expr::var(&held), index);
                    let Some(field) = self.emit(field, &format!("{}_{index}", held.name_hint()))
                    else {
                        return;
                    };
                    let name = format!("{}_{index}_t", held.name_hint());
                    let Some(field) = self.permute(Expr::var(&field), &back, &name) else {
                        return;
                    };
                    back_fields.push(field);
                }
                self.normalize(Expr::tuple(back_fields))
            }
            None if is_identity(&p) => Expr::var(&held),
            None => self.normalize(permute_dims(Expr::var(&held), &back)),
        };
        if let Err(e) = self
            .builder()
            .emit_normalized(Binding::var_binding(var.clone(), value))
        {
            self.builder().report(e);
        }
    }

    /// The permutation of the first argument held in another layout.
    fn held_layout(&self, call: &Call) -> Option<Vec<usize>> {
        call.args
            .iter()
            .find_map(|a| a.as_var().and_then(|v| self.layouts.get(v)))
            .map(|(_, p)| p.clone())
    }

    /// `binding` rewritten in another layout: the variable holding its
    /// value and the permutation, or `None` to leave it as it is.
    fn convert(&mut self, binding: &VarBinding) -> Option<(Var, Vec<usize>)> {
        // An output of the block keeps its name for the value it leaves
        // with (bound by `materialize`).
        let name = match binding.var.is_dataflow() {
            true => binding.var.name_hint().to_string(),
            false => format!("{}_t", binding.var.name_hint()),
        };
        // A field of a tuple held in another layout is in that layout.
        if let ExprKind::TupleGetItem(tuple, index) = binding.value.kind() {
            let (held, perm) = tuple.as_var().and_then(|v| self.layouts.get(v)).cloned()?;
            let v = self.emit(Expr::tuple_get_item(Expr::var(&held), *index), &name)?;
            return Some((v, perm));
        }
        let call = binding.value.as_call()?;
        let op = binding.value.call_op_name()?;
        if op == "relax.concat" {
            return self.concat(call, &name);
        }
        if let Some(layouts) = self.desired.get(op).cloned() {
            if op != "relax.nn.conv2d" || !original_conv2d(call) || layouts[0] == "NCHW" {
                return None;
            }
            // The host's stem: the image stays NCHW, the output is in the
            // new layout.
            let stem = self.host_rule && host_stem(call);
            if self.host_rule && !stem && (self.stems_only || !host_convertible(call)) {
                return None;
            }
            let data = permutation("NCHW", &layouts[0])?;
            let kernel = permutation("OIHW", &layouts[1])?;
            let (x, data_layout) = match stem {
                true => (self.visit_expr(&call.args[0]), "NCHW"),
                false => (self.in_layout(&call.args[0], &data)?, layouts[0].as_str()),
            };
            let w = self.in_layout(&call.args[1], &kernel)?;
            let attrs = call
                .attrs
                .with("data_layout", AttrValue::from(data_layout))
                .with("kernel_layout", AttrValue::from(layouts[1].as_str()))
                .with("out_layout", AttrValue::from(layouts[0].as_str()));
            let v = self.emit(Expr::call_op(op, vec![x, w], attrs), &name)?;
            return Some((v, data));
        }
        let perm = self.held_layout(call)?;
        let rank = perm.len();
        if UNARY.contains(&op) {
            // Only the tensor operand is converted (`leakyrelu`'s slope is
            // an attribute).
            if ndim(&call.args[0]) != Some(rank)
                || call.args[1..]
                    .iter()
                    .any(|a| ndim(a) != Some(0) && ndim(a).is_some())
            {
                return None;
            }
            let x = self.in_layout(&call.args[0], &perm)?;
            let mut args = vec![x];
            args.extend(call.args[1..].iter().map(|a| self.visit_expr(a)));
            let v = self.emit(Expr::call_op(op, args, call.attrs.clone()), &name)?;
            return Some((v, perm));
        }
        if BINARY.contains(&op) && call.args.len() == 2 {
            if ndim(&binding.value) != Some(rank)
                || call
                    .args
                    .iter()
                    .any(|a| !matches!(ndim(a), Some(0)) && ndim(a) != Some(rank))
            {
                return None;
            }
            let mut args = Vec::with_capacity(2);
            for a in &call.args {
                args.push(match ndim(a) {
                    Some(0) => self.visit_expr(a),
                    _ => self.in_layout(a, &perm)?,
                });
            }
            let v = self.emit(Expr::call_op(op, args, call.attrs.clone()), &name)?;
            return Some((v, perm));
        }
        if REDUCTIONS.contains(&op) && call.args.len() == 1 {
            let keep = matches!(attr(call, "keepdims"), Some(AttrValue::Bool(true)));
            let axes = attr_ints(call, "axis")?;
            if ndim(&call.args[0]) != Some(rank) {
                return None;
            }
            let inv = inverse(&perm);
            let mut reduced = Vec::with_capacity(axes.len());
            for a in axes {
                reduced.push(axis_in(a, rank)?);
            }
            let new_axes = reduced.iter().map(|&a| AttrValue::Int(inv[a] as i64));
            let x = self.in_layout(&call.args[0], &perm)?;
            let attrs = call
                .attrs
                .with("axis", AttrValue::Array(new_axes.collect()));
            let v = self.emit(Expr::call_op(op, vec![x], attrs), &name)?;
            if keep {
                return Some((v, perm));
            }
            // The axes left, numbered among themselves, in held order.
            let kept: Vec<usize> = perm
                .iter()
                .filter(|a| !reduced.contains(a))
                .copied()
                .collect();
            let out = kept
                .iter()
                .map(|&a| a - reduced.iter().filter(|&&r| r < a).count());
            return Some((v, out.collect()));
        }
        match op {
            "relax.split" => self.split(call, &perm, &name),
            "relax.reshape" => self.reshape(binding, call, &perm, &name),
            "relax.permute_dims" => self.permute_dims(call, &perm),
            _ if POOLS.contains(&op) => self.pool(op, call, &perm, &name),
            _ => None,
        }
    }

    /// `R.concat` of a tuple with a field held in another layout: every
    /// field in that layout, the axis renumbered.
    fn concat(&mut self, call: &Call, name: &str) -> Option<(Var, Vec<usize>)> {
        let ExprKind::Tuple(fields) = call.args.first()?.kind() else {
            return None;
        };
        let perm = fields
            .iter()
            .find_map(|f| f.as_var().and_then(|v| self.layouts.get(v)))
            .map(|(_, p)| p.clone())?;
        let rank = perm.len();
        if fields.iter().any(|f| ndim(f) != Some(rank)) {
            return None;
        }
        let axis = axis_in(attr_int(call, "axis")?, rank)?;
        let mut held = Vec::with_capacity(fields.len());
        for f in fields {
            held.push(self.in_layout(f, &perm)?);
        }
        let attrs = call
            .attrs
            .with("axis", AttrValue::Int(inverse(&perm)[axis] as i64));
        let v = self.emit(
            Expr::call_op("relax.concat", vec![Expr::tuple(held)], attrs),
            name,
        )?;
        Some((v, perm))
    }

    /// `R.split` of a value held in another layout: along the renumbered
    /// axis; each field of the tuple is in the layout.
    fn split(&mut self, call: &Call, perm: &[usize], name: &str) -> Option<(Var, Vec<usize>)> {
        let rank = perm.len();
        if call.args.len() != 1 || ndim(&call.args[0]) != Some(rank) {
            return None;
        }
        let axis = axis_in(attr_int(call, "axis").unwrap_or(0), rank)?;
        let x = self.in_layout(&call.args[0], perm)?;
        let attrs = call
            .attrs
            .with("axis", AttrValue::Int(inverse(perm)[axis] as i64));
        let v = self.emit(Expr::call_op("relax.split", vec![x], attrs), name)?;
        Some((v, perm.to_vec()))
    }

    /// `R.reshape` of a value held in another layout, as `reshape.rs`
    /// says; `None` (the value permuted back first) when the reshape
    /// would need the original layout anyway.
    fn reshape(
        &mut self,
        binding: &VarBinding,
        call: &Call,
        perm: &[usize],
        name: &str,
    ) -> Option<(Var, Vec<usize>)> {
        let shape_of = |e: &Expr| {
            let t = e.struct_info().and_then(StructInfo::as_tensor)?;
            t.shape_values().map(<[_]>::to_vec)
        };
        let from = shape_of(&call.args[0])?;
        let to = shape_of(&binding.value)?;
        if from.len() != perm.len() {
            return None;
        }
        let groups = reshape::reshape_groups(&from, &to)?;
        let (input, output) = reshape::reshape_layouts(perm, &groups);
        if is_identity(&input) {
            return None;
        }
        let x = self.in_layout(&call.args[0], &input)?;
        let shape = Expr::shape(output.iter().map(|&a| to[a].clone()).collect());
        let value = Expr::call_op("relax.reshape", vec![x, shape], call.attrs.clone());
        let v = self.emit(value, name)?;
        Some((v, output))
    }

    /// `R.permute_dims` of a value held in another layout moves no data:
    /// the held value is the result, in the layout composed of both.
    fn permute_dims(&mut self, call: &Call, perm: &[usize]) -> Option<(Var, Vec<usize>)> {
        let rank = perm.len();
        let (held, _) = call.args[0]
            .as_var()
            .and_then(|v| self.layouts.get(v))
            .cloned()?;
        let axes: Vec<usize> = match attr_ints(call, "axes") {
            Some(axes) => axes
                .into_iter()
                .map(|a| axis_in(a, rank))
                .collect::<Option<_>>()?,
            None => (0..rank).rev().collect(),
        };
        if axes.len() != rank || !is_permutation(&axes) {
            return None;
        }
        // Held axis `k` is input axis `perm[k]`, which is output axis
        // `axes⁻¹[perm[k]]`.
        let inv = inverse(&axes);
        Some((held, perm.iter().map(|&a| inv[a]).collect()))
    }

    /// A 2-d pool of a value held NHWC: the pool in NHWC.
    fn pool(
        &mut self,
        op: &str,
        call: &Call,
        perm: &[usize],
        name: &str,
    ) -> Option<(Var, Vec<usize>)> {
        let nhwc = permutation("NCHW", "NHWC")?;
        if perm != nhwc.as_slice()
            || call.args.len() != 1
            || !str_attr_is(call, "layout", "NCHW")
            || !str_attr_is(call, "out_layout", "NCHW")
        {
            return None;
        }
        let x = self.in_layout(&call.args[0], perm)?;
        let attrs = call
            .attrs
            .with("layout", AttrValue::from("NHWC"))
            .with("out_layout", AttrValue::from("NHWC"));
        let v = self.emit(Expr::call_op(op, vec![x], attrs), name)?;
        Some((v, perm.to_vec()))
    }
}

impl ExprMutator for Rewriter<'_> {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_dataflow_block(&mut self, block: &BindingBlock) {
        if let Err(e) = self.builder().begin_dataflow() {
            self.builder().report(e);
        }
        for b in &block.bindings {
            if let Binding::VarBinding(v) = b {
                if let Some(held) = self.convert(v) {
                    self.layouts.insert(v.var.clone(), held);
                    // An output of the block leaves it in its layout.
                    if !v.var.is_dataflow() {
                        self.materialize(&v.var);
                    }
                    continue;
                }
            }
            let value = match b {
                Binding::VarBinding(v) => &v.value,
                Binding::MatchCast(m) => &m.value,
            };
            for var in free_vars(value) {
                self.materialize(&var);
            }
            self.visit_binding(b);
        }
        // Nothing held is used after the block (its outputs were bound).
        self.layouts.clear();
        self.permuted.clear();
        if let Err(e) = self.builder().end_dataflow() {
            self.builder().report(e);
        }
    }
}

#[cfg(test)]
#[path = "convert_layout/tests.rs"]
mod tests;
