//! `TensorIntrin`: the registry of tensor intrinsics `tensorize` maps
//! blocks onto (TVM's `tir.TensorIntrin.register(name, desc, impl)`).
//!
//! 1. An intrinsic is two PrimFuncs with the same buffer parameters
//!    (dtype and shape, in order): the *description* computes the
//!    micro-kernel as a loop nest over one block (under an optional root
//!    block without iteration variables, as TVM writes it), and the
//!    *implementation* computes the same with the instructions to emit
//!    (`T.dpbusd` in a vectorized loop), without blocks.
//! 2. `tensorize` matches a block's body against the description
//!    structurally ([`super::tensorize`]) and puts the implementation in
//!    its place, its parameters bound to the regions the block accesses.
//! 3. The registry is global; a name is registered once unless
//!    `override_` is given (TVM's `override=True`). The built-in
//!    intrinsics are registered on first use:
//!
//! | name | computes | emits |
//! |---|---|---|
//! | [`VNNI_DOT_16X4`] (`"dot_16x4_vnni"`) | `C[i] += i32(A[k]) · i32(B[i, k])`, `C` int32 (16), `A` uint8 (4), `B` int8 (16, 4) | one `T.dpbusd` on 16 lanes: `vpdpbusd` on AVX512-VNNI |
//!
//! 4. **Cost.** The implementation builds its operand words from bytes
//!    (TIR has no 64-byte vector load reinterpreted as 16 words, TVM's
//!    `B.vload([0, 0], "int8x64")`); the back end reads such a word as one
//!    32-bit load (`codegen/llvm/words.rs`). The row of `A` is one word,
//!    broadcast; the 16 words of `B`'s rows, `K` bytes apart, are 16
//!    loads per `vpdpbusd`. On 64 × 512 × 512 that is 14 GOPS (3.6 when
//!    each word was four byte loads), against 34 for the unscheduled loop
//!    nest (2-core Intel Xeon, 2026-11-29), and far less than
//!    `DefaultSchedule`'s packed GEMM, which packs `B`'s words once per
//!    panel so that a step's 16 words are one vector load.

use super::{Result, ScheduleError};
use crate::tir::{PrimFunc, PrimFuncParam, Stmt};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The name of the built-in 16-lane `u8 × s8 → i32` dot product of four
/// bytes per lane (TVM's `VNNI_DOT_16x4_INTRIN`).
pub const VNNI_DOT_16X4: &str = "dot_16x4_vnni";

/// A description and an implementation. See the module docs.
#[derive(Clone, Debug)]
pub struct TensorIntrin {
    /// What the micro-kernel computes: loops over one block.
    pub desc: PrimFunc,
    /// How: the statements that replace a matched block's body.
    pub implementation: PrimFunc,
}

fn registry() -> &'static Mutex<HashMap<String, TensorIntrin>> {
    static R: OnceLock<Mutex<HashMap<String, TensorIntrin>>> = OnceLock::new();
    R.get_or_init(|| {
        let mut m = HashMap::new();
        let vnni = builtin_vnni_dot_16x4();
        m.insert(VNNI_DOT_16X4.to_string(), vnni);
        Mutex::new(m)
    })
}

/// `body` without the root blocks (no iteration variables) around it.
pub(crate) fn strip_root(body: &Stmt) -> (&Stmt, Vec<crate::tir::Buffer>) {
    let mut cur = body;
    let mut allocs = Vec::new();
    while let Stmt::Block(b) = cur {
        if !b.iter_vars.is_empty() || b.init.is_some() {
            break;
        }
        allocs.extend(b.alloc_buffers.iter().cloned());
        cur = &b.body;
    }
    (cur, allocs)
}

impl TensorIntrin {
    /// Registers `desc` and `implementation` under `name` (TVM's
    /// `TensorIntrin.register`): an `Err` when the name is taken (and
    /// `override_` is false), when the two functions' parameters differ,
    /// when a parameter is not a buffer, when the description is not loops
    /// over one block, or when the implementation has a block or allocates.
    pub fn register(
        name: &str,
        desc: PrimFunc,
        implementation: PrimFunc,
        override_: bool,
    ) -> Result<()> {
        let intrin = TensorIntrin::new(name, desc, implementation)?;
        let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
        if r.contains_key(name) && !override_ {
            return Err(ScheduleError::new(format!(
                "TensorIntrin.register: an intrinsic named {name:?} is registered already"
            )));
        }
        r.insert(name.to_string(), intrin);
        Ok(())
    }

    /// The intrinsic registered as `name`.
    pub fn get(name: &str) -> Option<TensorIntrin> {
        let r = registry().lock().unwrap_or_else(|e| e.into_inner());
        r.get(name).cloned()
    }

    /// The intrinsic, checked (see [`TensorIntrin::register`]).
    fn new(name: &str, desc: PrimFunc, implementation: PrimFunc) -> Result<Self> {
        let err = |m: String| {
            Err(ScheduleError::new(format!(
                "TensorIntrin.register({name:?}): {m}"
            )))
        };
        if desc.params.len() != implementation.params.len() {
            return err(format!(
                "the description has {} parameters and the implementation {}",
                desc.params.len(),
                implementation.params.len()
            ));
        }
        for (i, (d, p)) in desc.params.iter().zip(&implementation.params).enumerate() {
            let (PrimFuncParam::Buffer(d), PrimFuncParam::Buffer(p)) = (d, p) else {
                return err(format!("parameter {i} is not a buffer in both functions"));
            };
            let same_shape = d.shape().len() == p.shape().len()
                && d.shape()
                    .iter()
                    .zip(p.shape())
                    .all(|(a, b)| a.as_int().is_some() && a.as_int() == b.as_int());
            if d.dtype() != p.dtype() || !same_shape {
                return err(format!(
                    "parameter {i} is {} of shape {:?} in the description and {} of shape {:?} in the implementation (both must be the same constant shape)",
                    d.dtype(),
                    d.shape().iter().map(|e| e.to_string()).collect::<Vec<_>>(),
                    p.dtype(),
                    p.shape().iter().map(|e| e.to_string()).collect::<Vec<_>>()
                ));
            }
        }
        let (mut cur, _) = strip_root(&desc.body);
        while let Stmt::For { body, .. } = cur {
            cur = body;
        }
        match cur {
            Stmt::Block(b) if !b.body.contains_block() && b.init.is_none() => {}
            _ => {
                return err("the description is not a loop nest over one block without init".into())
            }
        }
        let (imp, allocs) = strip_root(&implementation.body);
        if imp.contains_block() || !allocs.is_empty() {
            return err("the implementation has a block or allocates a buffer".into());
        }
        Ok(TensorIntrin {
            desc,
            implementation,
        })
    }
}

/// The parameters both functions of the VNNI intrinsic take.
const VNNI_PARAMS: &str =
    r#"A: T.Buffer((4,), "uint8"), B: T.Buffer((16, 4), "int8"), C: T.Buffer((16,), "int32")"#;

/// `dot_16x4_vnni`'s description: 16 outputs, each the dot product of the
/// four bytes of `A` with a row of `B`, accumulated.
const VNNI_DESC: &str = r#"        with T.block("root"):
            T.reads(C[0:16], A[0:4], B[0:16, 0:4])
            T.writes(C[0:16])
            for i, k in T.grid(16, 4):
                with T.block("update"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(C[vi], A[vk], B[vi, vk])
                    T.writes(C[vi])
                    C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])
"#;

/// Its implementation: the four bytes of `A` as one word (broadcast), the
/// four bytes of each row of `B` as one word per lane, one `T.dpbusd`.
const VNNI_IMPL: &str = r#"        with T.block("root"):
            T.reads(C[0:16], A[0:4], B[0:16, 0:4])
            T.writes(C[0:16])
            for i in T.vectorized(16):
                C[i] = T.dpbusd(C[i], T.Cast("int32", A[0]) + T.Cast("int32", A[1]) * 256 + T.Cast("int32", A[2]) * 65536 + T.Cast("int32", A[3]) * 16777216, T.bitwise_and(T.Cast("int32", B[i, 0]), 255) + T.bitwise_and(T.Cast("int32", B[i, 1]), 255) * 256 + T.bitwise_and(T.Cast("int32", B[i, 2]), 255) * 65536 + T.bitwise_and(T.Cast("int32", B[i, 3]), 255) * 16777216)
"#;

fn parse(params: &str, body: &str) -> PrimFunc {
    let text =
        format!("@I.ir_module\nclass Module:\n    @T.prim_func\n    def main({params}):\n{body}");
    let m = crate::parser::parse_module(&text)
        .unwrap_or_else(|e| panic!("a built-in tensor intrinsic does not parse: {e:?}"));
    let f = m
        .functions()
        .find_map(|(_, f)| f.as_prim().cloned())
        .expect("a built-in tensor intrinsic is a PrimFunc");
    f
}

fn builtin_vnni_dot_16x4() -> TensorIntrin {
    TensorIntrin::new(
        VNNI_DOT_16X4,
        parse(VNNI_PARAMS, VNNI_DESC),
        parse(VNNI_PARAMS, VNNI_IMPL),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}
