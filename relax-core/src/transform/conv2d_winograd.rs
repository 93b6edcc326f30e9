//! `Conv2dWinograd`: 3 × 3 convolutions by Winograd's minimal filtering
//! algorithm F(m × m, 3 × 3) (TVM's `conv2d_winograd_nchw` and Relay's
//! `contrib_conv2d_winograd_weight_transform` /
//! `contrib_conv2d_winograd_without_weight_transform`, as one Relax
//! rewrite).
//!
//! 1. What is rewritten: `R.nn.conv2d` in `float32` with NCHW data, OIHW
//!    weights and NCHW output, a 3 × 3 kernel, strides and dilation 1,
//!    groups 1, constant padding, constant channels and image size (the
//!    batch may be symbolic), padding of at most 2 and a constant weight,
//!    when the layer is one where Winograd wins
//!    ([`Conv2dWinograd::tile_for`]: F(4, 3) on images of at least 14 × 14,
//!    F(2, 3) from 6 × 6, at least 16 channels in and out); or always, with
//!    the tile given by [`Conv2dWinograd::with_tile`].
//! 2. Into what, for output tiles of side `m` and `α = m + 2`
//!    (`conv2d_winograd/matrices.rs` holds `G`, `Bᵀ`, `Aᵀ`):
//!    - the weight transform `U = G g Gᵀ` as Relax ops on the constant
//!      weight: a reshape to `(O · C, 9)`, `matmul` by the constant
//!      `(G ⊗ G)ᵀ` (9 × α²), a reshape to `(O, C, α²)` and `permute_dims`
//!      to `(α², O, C)`; `FoldConstant` evaluates them at compile time, so
//!      no call pays for them;
//!    - the input transform `V = Bᵀ d B` of every tile, a `call_tir` of a
//!      scheduled PrimFunc `winograd_input_transform` giving
//!      `(N, α², C, TH · TW)`;
//!    - one `R.matmul(U, V)`, `U` broadcast over the batch: N · α² matrix
//!      products `(O, C) × (C, TH · TW)` of constant shape, which
//!      `DefaultSchedule` runs as its packed GEMM (with the batch a
//!      symbolic outer dim, the product keeps its constant-shape schedule:
//!      with the tiles of all images as its columns, a symbolic batch made
//!      ResNet's 64-channel 56 × 56 layer 1.5 times slower);
//!    - the output transform `Y = Aᵀ M A`, cropped to the output, a
//!      `call_tir` of `winograd_output_transform`.
//!
//!    The transforms' loops are written scheduled (`conv2d_winograd/
//!    transforms.rs`); `DefaultSchedule` leaves them as they are.
//! 3. The epilogue: where the convolution's only use is `R.add` of a
//!    constant per-channel bias (`(1, O, 1, 1)`, `(O, 1, 1)`), then
//!    possibly `R.add` of a tensor of the output's shape (a residual),
//!    then possibly `R.nn.relu`, each the only use of the one before, the
//!    output transform computes them too and the last of them is bound to
//!    its result (the others are left for `DeadCodeElimination`). Fusion
//!    cannot do this for it: the output transform is an opaque PrimFunc.
//! 4. Accuracy: F(2, 3)'s constants are ±1 and ½, so its results are as
//!    close to the direct convolution's as two summation orders are;
//!    F(4, 3) multiplies by up to 8 and divides by 24, which costs about
//!    one decimal digit in `float32` (the tests bound both). On ResNet-18
//!    (PyTorch's export, random weights) against onnxruntime the logits'
//!    largest error relative to the largest logit is 8.9e-7 with direct
//!    convolutions, 8.1e-7 with F(2, 3) everywhere, 1.0e-6 with F(4, 3)
//!    everywhere and 8.1e-7 with the default rule (the top class
//!    unchanged).
//!
//! The pass runs before `LegalizeOps`; `build` runs it followed by
//! `FoldConstant` for `Target::host()` (see `backend/pipeline.rs`).

#[path = "conv2d_winograd/matrices.rs"]
pub mod matrices;
#[path = "conv2d_winograd/transforms.rs"]
pub mod transforms;

use super::Pass;
use crate::block_builder::BlockBuilder;
use crate::ir::{
    AttrValue, Attrs, Binding, BindingBlock, Call, Expr, ExprKind, IRModule, PrimExpr, StructInfo,
    Var, VarBinding,
};
use crate::mutator::{ExprMutator, MutatorState};
use crate::op::infer::{attr, attr_ints};
use crate::visitor::ExprVisitor;
use matrices::Matrices;
use relax_runtime::{DataType, Error, Tensor};
use std::collections::{HashMap, HashSet};
use transforms::{Epilogue, Geometry};

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Conv2dWinograd {
    /// The output tile's side for every eligible layer; `None`: the rule of
    /// [`Conv2dWinograd::tile_for`].
    tile: Option<i64>,
}

impl Conv2dWinograd {
    /// Rewrites every eligible convolution (module docs, item 1) with
    /// output tiles of side `m` (2 or 4), whatever its sizes.
    pub fn with_tile(m: i64) -> Result<Self, Error> {
        if matrices::for_tile(m).is_none() {
            return Err(Error::Unsupported(format!(
                "Conv2dWinograd: the output tile must be 2 or 4, found {m}"
            )));
        }
        Ok(Conv2dWinograd { tile: Some(m) })
    }

    /// The output tile for a layer of these sizes, or `None` when the
    /// direct convolution is faster, measured layer by layer (one conv
    /// with bias and relu, batch 1, padding 1, `relax bench --runs 30`,
    /// best run; a loaded 2-core EPYC, so only the ratios mean much):
    ///
    /// | C = O, image | direct | F(2, 3) | F(4, 3) |
    /// |---|---|---|---|
    /// | 16, 56 × 56 | 0.23 ms | 0.13 ms | 0.13 ms |
    /// | 32, 56 × 56 | 0.85 ms | 0.43 ms | 0.32 ms |
    /// | 32, 28 × 28 | 0.22 ms | 0.11 ms | 0.09 ms |
    /// | 64, 56 × 56 | 2.9 ms | 2.0 ms | 0.95 ms |
    /// | 128, 28 × 28 | 2.8 ms | 1.8 ms | 1.1 ms |
    /// | 256, 14 × 14 | 2.3 ms | 2.0 ms | 1.5 ms |
    /// | 512, 7 × 7 | 3.8 ms | 2.6 ms | 6.8 ms |
    ///
    /// F(4, 3) wins wherever the image holds a few tiles of 4; on 7 × 7
    /// its 2 × 2 tiles of 8 × 8 waste a quarter of the work and give the
    /// products 4 columns, where F(2, 3)'s 16 still pay. Layers narrower
    /// than 16 channels and images under 6 × 6 were not measured and stay
    /// direct.
    pub fn tile_for(c_in: i64, c_out: i64, out_h: i64, out_w: i64) -> Option<i64> {
        if c_in < 16 || c_out < 16 {
            return None;
        }
        match out_h.min(out_w) {
            side if side >= 14 => Some(4),
            side if side >= 6 => Some(2),
            _ => None,
        }
    }
}

impl Conv2dWinograd {
    /// Whether the default pass (the rule of [`Conv2dWinograd::tile_for`])
    /// rewrites `call`, a `relax.nn.conv2d`.
    pub fn rewrites_with_rule(call: &Call) -> bool {
        Eligible::of(call, None).is_some()
    }
}

impl Pass for Conv2dWinograd {
    fn name(&self) -> &str {
        "Conv2dWinograd"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut m = Rewriter {
            state: MutatorState::with_module(&module),
            tile: self.tile,
            uses: HashMap::new(),
        };
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            let func = Expr::function(func.clone());
            m.uses = count_uses(&func);
            let new = m.visit_expr(&func);
            if let Some(nf) = new.as_function() {
                out.add(gv.clone(), nf.clone());
            }
        }
        let errors = m.builder().take_errors();
        if !errors.is_empty() {
            return Err(Error::Compile(errors));
        }
        // The builder's module holds the transforms' PrimFuncs.
        for (gv, f) in m.builder().get().functions() {
            if out.get(gv.name_hint()).is_none() {
                out.add(gv.clone(), f.clone());
            }
        }
        Ok(out)
    }
}

/// How many times each variable is used in `expr`.
fn count_uses(expr: &Expr) -> HashMap<Var, usize> {
    struct Count(HashMap<Var, usize>);
    impl ExprVisitor for Count {
        fn visit_var(&mut self, _expr: &Expr, var: &Var) {
            *self.0.entry(var.clone()).or_insert(0) += 1;
        }
        fn visit_dataflow_var(&mut self, _expr: &Expr, var: &Var) {
            *self.0.entry(var.clone()).or_insert(0) += 1;
        }
    }
    let mut c = Count(HashMap::new());
    c.visit_expr(expr);
    c.0
}

struct Rewriter {
    state: MutatorState,
    tile: Option<i64>,
    /// Uses of each variable of the function being rewritten.
    uses: HashMap<Var, usize>,
}

/// A rewrite planned in a dataflow block: the convolution, what its
/// epilogue absorbs, and the bindings it replaces.
struct Plan {
    conv: Eligible,
    epilogue: Epilogue,
    /// The bias as `(O,)`.
    bias: Option<Tensor>,
    residual: Option<Expr>,
}

impl Rewriter {
    /// The rewrites of `block`: keyed by the variable the rewritten
    /// computation is bound to (the last binding of the chain), and the
    /// variables of the bindings it replaces.
    fn plan(&self, block: &BindingBlock) -> (HashMap<Var, Plan>, HashSet<Var>) {
        let mut plans = HashMap::new();
        let mut absorbed = HashSet::new();
        let bindings: Vec<(&Var, &Expr)> = block
            .bindings
            .iter()
            .filter_map(|b| match b {
                Binding::VarBinding(v) => Some((&v.var, &v.value)),
                Binding::MatchCast(_) => None,
            })
            .collect();
        for (k, (var, value)) in bindings.iter().enumerate() {
            if value.call_op_name() != Some("relax.nn.conv2d") {
                continue;
            }
            let Some(conv) = value.as_call().and_then(|c| Eligible::of(c, self.tile)) else {
                continue;
            };
            let mut plan = Plan {
                conv,
                epilogue: Epilogue::default(),
                bias: None,
                residual: None,
            };
            let mut end = (*var).clone();
            let mut chain = Vec::new();
            // Follow single uses: bias, residual, relu, in that order.
            while self.uses.get(&end) == Some(&1) && !plan.epilogue.relu {
                let Some((next, value)) = bindings[k + 1..].iter().find(|(_, v)| {
                    v.as_call()
                        .is_some_and(|c| c.args.iter().any(|a| a.as_var() == Some(&end)))
                }) else {
                    break;
                };
                let call = value.as_call().expect("found as a call");
                let other = || call.args.iter().find(|a| a.as_var() != Some(&end)).cloned();
                match value.call_op_name() {
                    Some("relax.add") if call.args.len() == 2 => {
                        let Some(other) = other() else { break };
                        if !plan.epilogue.bias && !plan.epilogue.residual {
                            if let Some(b) = channel_bias(&other, plan.conv.geo.c_out) {
                                plan.bias = Some(b);
                                plan.epilogue.bias = true;
                            } else if !self.residual_fits(&other, value, &plan) {
                                break;
                            } else {
                                plan.residual = Some(other);
                                plan.epilogue.residual = true;
                            }
                        } else if !plan.epilogue.residual
                            && self.residual_fits(&other, value, &plan)
                        {
                            plan.residual = Some(other);
                            plan.epilogue.residual = true;
                        } else {
                            break;
                        }
                    }
                    Some("relax.nn.relu") => plan.epilogue.relu = true,
                    _ => break,
                }
                chain.push(end);
                end = (*next).clone();
            }
            absorbed.extend(chain);
            plans.insert(end, plan);
        }
        (plans, absorbed)
    }

    /// Whether `other`, added to the chain's value by `add`, is a residual
    /// the output transform can read: a variable of the output's shape and
    /// dtype, the sum keeping that shape (no broadcasting).
    fn residual_fits(&self, other: &Expr, add: &Expr, plan: &Plan) -> bool {
        let same = |e: &Expr| {
            let Some(t) = e.struct_info().and_then(StructInfo::as_tensor) else {
                return false;
            };
            let Some(dims) = t.shape_values() else {
                return false;
            };
            t.dtype == DataType::f32()
                && dims.len() == 4
                && dims[0] == plan.conv.batch
                && dims[1].as_int() == Some(plan.conv.geo.c_out)
                && dims[2].as_int() == Some(plan.conv.geo.out_h())
                && dims[3].as_int() == Some(plan.conv.geo.out_w())
        };
        other.as_var().is_some() && same(other) && same(add)
    }

    fn emit_plan(&mut self, binding: &VarBinding, plan: &Plan) {
        let data = self.visit_expr(&plan.conv.data);
        let mut extra = Vec::new();
        if let Some(b) = &plan.bias {
            extra.push(Expr::constant(b.clone()));
        }
        if let Some(r) = &plan.residual {
            extra.push(self.visit_expr(r));
        }
        let conv = Eligible {
            data,
            ..plan.conv.clone()
        };
        match conv.rewrite(self.builder(), plan.epilogue, &extra) {
            Ok(value) => self.reemit_binding(binding, value),
            Err(err) => self.builder().report(err),
        }
    }
}

/// A constant per-channel bias of `c_out` channels (`(1, O, 1, 1)` or
/// `(O, 1, 1)`), as `(O,)`.
fn channel_bias(e: &Expr, c_out: i64) -> Option<Tensor> {
    let ExprKind::Constant(t) = e.kind() else {
        return None;
    };
    if t.dtype() != DataType::f32() {
        return None;
    }
    match t.shape() {
        [1, o, 1, 1] | [o, 1, 1] if *o == c_out => {}
        _ => return None,
    }
    let data = t.as_slice::<f32>().ok()?.to_vec();
    Tensor::from_vec(&[c_out], data).ok()
}

impl ExprMutator for Rewriter {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_dataflow_block(&mut self, block: &BindingBlock) {
        let (plans, absorbed) = self.plan(block);
        if let Err(e) = self.builder().begin_dataflow() {
            self.builder().report(e);
        }
        for b in &block.bindings {
            match b {
                Binding::VarBinding(v) if absorbed.contains(&v.var) => {}
                Binding::VarBinding(v) if plans.contains_key(&v.var) => {
                    self.emit_plan(v, &plans[&v.var]);
                }
                b => self.visit_binding(b),
            }
        }
        if let Err(e) = self.builder().end_dataflow() {
            self.builder().report(e);
        }
    }

    /// A convolution outside dataflow blocks: rewritten without an
    /// epilogue.
    fn visit_call(&mut self, expr: &Expr, _call: &Call) -> Expr {
        let e = self.visit_expr_post_order(expr);
        let Some(call) = e.as_call() else { return e };
        if e.call_op_name() != Some("relax.nn.conv2d") {
            return e;
        }
        let Some(conv) = Eligible::of(call, self.tile) else {
            return e;
        };
        match conv.rewrite(self.builder(), Epilogue::default(), &[]) {
            Ok(new) => new,
            Err(err) => {
                self.builder().report(err);
                e
            }
        }
    }
}

/// A convolution the pass rewrites, with what it needs to know.
#[derive(Clone)]
struct Eligible {
    data: Expr,
    weight: Tensor,
    batch: PrimExpr,
    geo: Geometry,
    mats: Matrices,
}

fn ints_are(call: &Call, name: &str, want: i64) -> bool {
    match attr_ints(call, name) {
        Some(v) => !v.is_empty() && v.iter().all(|&x| x == want),
        None => attr(call, name).is_none(),
    }
}

fn str_is(call: &Call, name: &str, want: &str) -> bool {
    match attr(call, name) {
        Some(AttrValue::Str(s)) => s == want,
        None => true,
        Some(_) => false,
    }
}

impl Eligible {
    /// `call` (a `conv2d`) when the pass rewrites it. See the module docs.
    fn of(call: &Call, tile: Option<i64>) -> Option<Eligible> {
        if !(ints_are(call, "strides", 1) && ints_are(call, "dilation", 1)) {
            return None;
        }
        if crate::op::infer::attr_int(call, "groups").unwrap_or(1) != 1 {
            return None;
        }
        if !(str_is(call, "data_layout", "NCHW")
            && str_is(call, "kernel_layout", "OIHW")
            && str_is(call, "out_layout", "NCHW"))
        {
            return None;
        }
        let out_dtype = crate::op::infer::attr_dtype(call, "out_dtype");
        if !(out_dtype.is_void() || out_dtype == DataType::f32()) {
            return None;
        }
        let [data, weight] = &call.args[..] else {
            return None;
        };
        let ExprKind::Constant(weight) = weight.kind() else {
            return None;
        };
        if weight.dtype() != DataType::f32() {
            return None;
        }
        let &[c_out, c_in, 3, 3] = weight.shape() else {
            return None;
        };
        let sinfo = data.struct_info()?.as_tensor()?;
        if sinfo.dtype != DataType::f32() {
            return None;
        }
        let dims = sinfo.shape_values()?;
        let [batch, c, h, w] = dims else { return None };
        if batch.as_int().is_none() && batch.as_var().is_none() {
            return None;
        }
        let (c, h, w) = (c.as_int()?, h.as_int()?, w.as_int()?);
        if c != c_in {
            return None;
        }
        let pad = crate::op::nn::padding4(call).ok()?;
        let pad = [
            pad[0].as_int()?,
            pad[1].as_int()?,
            pad[2].as_int()?,
            pad[3].as_int()?,
        ];
        if pad.iter().any(|&p| !(0..=2).contains(&p)) {
            return None;
        }
        let mut geo = Geometry {
            c_in,
            c_out,
            h,
            w,
            pad,
            m: 2,
        };
        if geo.out_h() < 1 || geo.out_w() < 1 {
            return None;
        }
        geo.m = match tile {
            Some(m) => m,
            None => Conv2dWinograd::tile_for(c_in, c_out, geo.out_h(), geo.out_w())?,
        };
        Some(Eligible {
            data: data.clone(),
            weight: weight.clone(),
            batch: batch.clone(),
            geo,
            mats: matrices::for_tile(geo.m)?,
        })
    }

    /// The rewritten computation; `extra` are the epilogue's tensor
    /// arguments (the bias as `(O,)`, then the residual).
    fn rewrite(
        &self,
        bb: &mut BlockBuilder,
        epilogue: Epilogue,
        extra: &[Expr],
    ) -> Result<Expr, Error> {
        let (geo, mats) = (&self.geo, &self.mats);
        let alpha = geo.alpha();
        let f32 = DataType::f32();
        let op = |bb: &mut BlockBuilder, name: &str, args: Vec<Expr>, attrs: Attrs| {
            let info = crate::op::lookup(name)
                .ok_or_else(|| Error::Unsupported(format!("{name} is not registered")))?;
            let call = info
                .call(args, &attrs)
                .map_err(|d| Error::Compile(vec![d]))?;
            Ok::<Expr, Error>(bb.emit(call)?.into())
        };
        // U = G g Gᵀ, as (α², O, C): each filter flattened to 9 values
        // times (G ⊗ G)ᵀ, K[(k, l), (i, j)] = G[i, k] · G[j, l], one
        // (O · C, 9) × (9, α²) product (folding it as O · C products of
        // 3 × 3 matrices took 5 s for ResNet-18 on the reference kernels).
        let a = alpha as usize;
        let kron: Vec<f32> = (0..9 * a * a)
            .map(|x| {
                let (kl, ij) = (x / (a * a), x % (a * a));
                (mats.g(ij / a, kl / 3) * mats.g(ij % a, kl % 3)) as f32
            })
            .collect();
        let kron = Tensor::from_vec(&[9, alpha * alpha], kron).map_err(tensor_error)?;
        let w = Expr::constant(self.weight.clone());
        let rows = Expr::shape(vec![(geo.c_out * geo.c_in).into(), 9.into()]);
        let flat = op(bb, "relax.reshape", vec![w, rows], Attrs::new())?;
        let prod = op(
            bb,
            "relax.matmul",
            vec![flat, Expr::constant(kron)],
            Attrs::new(),
        )?;
        let shape = Expr::shape(vec![
            geo.c_out.into(),
            geo.c_in.into(),
            (alpha * alpha).into(),
        ]);
        let flat = op(bb, "relax.reshape", vec![prod, shape], Attrs::new())?;
        let axes = AttrValue::Array([2, 0, 1].map(AttrValue::Int).to_vec());
        let u = op(
            bb,
            "relax.permute_dims",
            vec![flat],
            Attrs::from_pairs([("axes", axes)]),
        )?;

        let tiles = PrimExpr::int(geo.tiles_h() * geo.tiles_w());
        let own_batch = transforms::batch_dim(&self.batch);
        let input = transforms::input_transform(geo, mats, &own_batch);
        let gv = bb.add_func(input, "winograd_input_transform");
        let v_sinfo = StructInfo::tensor(
            vec![
                self.batch.clone(),
                (alpha * alpha).into(),
                geo.c_in.into(),
                tiles,
            ],
            f32,
        );
        let v = call_tir(bb, gv, vec![self.data.clone()], v_sinfo)?;
        let prod = op(bb, "relax.matmul", vec![u, v], Attrs::new())?;

        let output = transforms::output_transform(geo, mats, &own_batch, epilogue);
        let gv = bb.add_func(output, "winograd_output_transform");
        let y_sinfo = StructInfo::tensor(
            vec![
                self.batch.clone(),
                geo.c_out.into(),
                geo.out_h().into(),
                geo.out_w().into(),
            ],
            f32,
        );
        let mut args = vec![prod];
        args.extend(extra.iter().cloned());
        bb.call_tir(gv, args, y_sinfo)
    }
}

fn tensor_error(e: relax_runtime::TensorError) -> Error {
    Error::Unsupported(format!("Conv2dWinograd: a transform matrix: {e}"))
}

/// [`BlockBuilder::call_tir`], bound to a fresh variable.
fn call_tir(
    bb: &mut BlockBuilder,
    gv: crate::ir::GlobalVar,
    args: Vec<Expr>,
    out: StructInfo,
) -> Result<Expr, Error> {
    let call = bb.call_tir(gv, args, out)?;
    Ok(bb.emit(call)?.into())
}

#[cfg(test)]
#[path = "conv2d_winograd/tests.rs"]
mod tests;
