//! `FlashAttention`: `R.nn.attention` and `R.nn.attention_bias` as one
//! tiled kernel with an online softmax, which never holds the
//! `seq_len × seq_len_kv` scores (FlashAttention's algorithm, on the CPU).
//!
//! LegalizeOps gives these ops TVM's composite (`legalize/attention.rs`):
//! scores, softmax and the product with the values, each a stage with a
//! buffer of `batch · heads · seq_len · seq_len_kv` elements. That is what
//! a TVM user expects LegalizeOps to give, and it is what the loop-level
//! interpreter and the passes' TVM cases see. For the host, this pass runs
//! before LegalizeOps instead, as TVM's dispatch passes
//! (`DispatchSortScan`) put a target's own kernel in place of an op: each
//! eligible call becomes `R.call_tir` of the PrimFunc of
//! `flash_attention/kernel.rs`, written already scheduled, so
//! `DefaultSchedule` leaves it alone. Its memory is a few tiles per
//! thread, whatever the lengths, and a causal prefill skips the keys no
//! query of a block sees.
//!
//! Eligible: `float32`, `float16` or `bfloat16` operands of known rank 4;
//! constant head counts and head dims; `window_size` unset (as the
//! legalization, which reports it); a bias whose every dim is 1 or provably
//! the dim it broadcasts to. Batch, query and key/value lengths may be
//! symbolic. Anything else is left to LegalizeOps. Calls with the same
//! sizes, dtype and options share one PrimFunc.

#[path = "flash_attention/decode.rs"]
mod decode;
#[path = "flash_attention/kernel.rs"]
pub mod kernel;

use super::Pass;
use crate::arith::{Analyzer, Proof};
use crate::ir::{AttrValue, Call, Expr, GlobalVar, IRModule, PrimExpr};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use crate::op::attention::{causal_mask, sliding_window};
use crate::op::infer::attr;
use kernel::Config;
use relax_runtime::{DataType, Error};
use std::collections::HashMap;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlashAttention;

impl Pass for FlashAttention {
    fn name(&self) -> &str {
        "FlashAttention"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut m = Rewriter {
            state: MutatorState::with_module(&module),
            kernels: HashMap::new(),
        };
        mutate_module(&mut m, &module)
    }
}

/// The kernel's configuration for `call`, or `None` when the call is not
/// eligible (module docs).
pub fn config(call: &Call) -> Option<Config> {
    if sliding_window(call) {
        return None;
    }
    let causal = causal_mask(call).ok()?;
    let dims = |i: usize| -> Option<(DataType, Vec<PrimExpr>)> {
        let t = call.args.get(i)?.struct_info()?.as_tensor()?.clone();
        let dims = t.shape_values()?.to_vec();
        (dims.len() == 4).then_some((t.dtype, dims))
    };
    let (dtype, q) = dims(0)?;
    let (_, k) = dims(1)?;
    let (_, v) = dims(2)?;
    if ![DataType::f32(), DataType::f16(), DataType::bf16()].contains(&dtype) {
        return None;
    }
    let (heads, head_dim) = (q[2].as_int()?, q[3].as_int()?);
    let (kv_heads, head_dim_v) = (k[2].as_int()?, v[3].as_int()?);
    if kv_heads < 1 || heads % kv_heads != 0 || k[3].as_int()? != head_dim {
        return None;
    }
    let bias = match call.args.len() {
        3 => None,
        4 => {
            let (bias_dtype, b) = dims(3)?;
            let full = [&q[0], &q[2], &q[1], &k[1]];
            let ana = Analyzer::new();
            let mut ones = [false; 4];
            for a in 0..4 {
                if b[a].as_int() == Some(1) {
                    ones[a] = true;
                } else if ana.compare_equal(&b[a], full[a]) != Proof::Proven {
                    return None;
                }
            }
            if bias_dtype != dtype {
                return None;
            }
            Some(ones)
        }
        _ => return None,
    };
    let scale = match attr(call, "scale") {
        Some(AttrValue::Float(s)) => *s,
        _ => 1.0 / (head_dim as f64).sqrt(),
    };
    Some(Config {
        dtype,
        batch: q[0].as_int(),
        seq: q[1].as_int(),
        seq_kv: k[1].as_int(),
        heads,
        kv_heads,
        head_dim,
        head_dim_v,
        bias,
        scale_bits: scale.to_bits(),
        causal,
    })
}

struct Rewriter {
    state: MutatorState,
    /// The kernels added so far, by configuration.
    kernels: HashMap<Config, GlobalVar>,
}

impl Rewriter {
    fn kernel(&mut self, cfg: Config) -> GlobalVar {
        if let Some(gv) = self.kernels.get(&cfg) {
            return gv.clone();
        }
        let gv = self
            .builder()
            .add_func(kernel::build(&cfg), "flash_attention");
        self.kernels.insert(cfg, gv.clone());
        gv
    }
}

impl ExprMutator for Rewriter {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_call(&mut self, expr: &Expr, _call: &Call) -> Expr {
        let e = self.visit_expr_post_order(expr);
        let Some(call) = e.as_call() else { return e };
        if !matches!(
            e.call_op_name(),
            Some("relax.nn.attention" | "relax.nn.attention_bias")
        ) {
            return e;
        }
        let (Some(cfg), Some(out)) = (config(call), e.struct_info()) else {
            return e;
        };
        let gv = self.kernel(cfg);
        match self.builder().call_tir(gv, call.args.clone(), out.clone()) {
            Ok(new) => new,
            Err(err) => {
                self.builder().report(err);
                e
            }
        }
    }
}

#[cfg(test)]
#[path = "flash_attention/tests.rs"]
mod tests;
