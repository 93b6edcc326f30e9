//! `DefaultSchedule`: CPU loop schedules for the PrimFuncs of a module (the
//! role of TVM's default schedules, `dlight`'s fallback rules for the CPU).
//!
//! The pass works on the *canonical nests* that TE lowering (and so
//! `LegalizeOps`) produces: serial loops from 0, one per block iteration
//! variable in order (spatial first, then reduce), around one block whose
//! iteration variables are bound to exactly those loops and whose body is
//! one `BufferStore` (a reduction also has an `init` storing to the same
//! element and reads the output only there; an injective block does not
//! read its output). Its expressions are first simplified with every
//! iteration variable in its range (a fused reshape's flattened index is
//! then affine again). Each such nest is replaced by plain loops, the block's
//! iteration variables substituted by expressions of the new loops; the
//! enclosing root block (the stages' scope and the owner of the
//! intermediate buffers) stays. Anything else (hand-written loops,
//! non-canonical blocks) is left unchanged and lowered as before, so the
//! pass is idempotent. Writing plain loops rather than scheduling blocks is
//! deliberate: the restructured nests (hoisted init, tiles, tails) are not
//! perfect nests a block could describe, and the back end needs no block
//! information after this pass. The one block it makes is a scope without
//! iteration variables that owns a tile's accumulator.
//!
//! Schedules (the loop kinds are those the LLVM back end acts on):
//!
//! 1. **Injective** nests (no reduce variable): the innermost loop is
//!    `Vectorized` when the store is contiguous in it and every load is
//!    contiguous or invariant in it. When some input is read with a stride
//!    along it but contiguously along another loop (a transpose), those two
//!    loops are cut into square tiles of one vector's lanes instead, each
//!    whole tile two nested `Vectorized` loops that the LLVM back end
//!    transposes in registers (`injective.rs`). When the innermost index
//!    is read through `c // k` and `c % k` (a channel shuffle), that loop
//!    is split by `k` into `k` stores whose reads are affine
//!    (`interleave.rs`). When the nest writes at
//!    least a sixteenth of [`PARALLEL_MIN_WORK`] elements (an element
//!    moves memory, where sixteen multiply-adds share one instruction) its
//!    outer loops are fused into one `Parallel` loop (a one-loop nest is
//!    split into `Parallel` chunks of [`PARALLEL_CHUNK`] and a tail).
//! 2. **Reductions** whose innermost spatial variable `j` is contiguous in
//!    the output and in some input (a matmul `C[i, j] += A[i, k] * B[k, j]`,
//!    a column sum): the two innermost spatial loops are tiled into blocks
//!    of [`TILE_ROWS`] × [`TILE_COLS`] outputs (twice the rows where a
//!    row is one 512-bit register, so the tile is eight accumulators),
//!    each accumulated in a local buffer `acc` (rows `Unrolled`, columns
//!    `Vectorized`) that LLVM keeps
//!    in registers over the whole reduction: init `acc`, run the reduce
//!    loops around the update of `acc`, write `acc` to the output. On a
//!    512-bit target (32 registers) a matrix product's tiles are wider:
//!    a whole row of up to `WHOLE_ROW_TILE_COLS` (64) columns
//!    (a Winograd product's 49), else two vectors, 4 to 8 rows tall.
//!    A grouped convolution in NHWC, whose image is read at its group's
//!    channel (`c // g`), first has its channel axis split by the group
//!    width and the groups moved outside the pixels (`groups.rs`), so a
//!    tile is pixels by one group's channels.
//!    A constant number of columns left of the tiles is one tile as tall
//!    as the others. A sum into one output row (a mean over an image) is
//!    cut along its first reduce axis into parts summed in parallel, then
//!    added up (`reduction.rs`, `split_column_sum`). Rows that do not fill a tile run row by row, a row
//!    of constant width up to [`ROW_ACCUMULATOR`] as a one-row tile (a
//!    batch-1 matmul), a wider one accumulating in the output with the
//!    `j` loop innermost; except that a constant number of rows left
//!    over, wider than that, are one shorter tile (the last pixels of a
//!    7 × 7 NHWC depthwise convolution of 1152 channels). A tile's
//!    columns are unrolled vectors of 16 lanes and one shorter vector
//!    for the rest.
//!    The outermost loop (a batch loop, else the rows of tiles) is
//!    `Parallel` when the nest does at least [`PARALLEL_MIN_WORK`]
//!    multiply-adds.
//! 3. **Other reductions** (an input strided along the reduction, an
//!    integer sum) keep their loop order; the init is hoisted out of the
//!    reduce loops (no first-iteration guard in the inner loop) and the
//!    outermost spatial loop is `Parallel` above the same threshold.
//! 4. **Dot products**: a float reduction along a variable every input is
//!    contiguous in, when case 2 does not apply (`x · wᵀ`, a matmul whose
//!    weight is read transposed; a row sum): each output sums 16-lane
//!    vector partial sums along `k`, then the lanes and the tail
//!    (`dot.rs`).
//!
//! 5. **Matrix products too large for the caches** (`M · N · K` at least
//!    [`PARALLEL_MIN_WORK`], `M` at least 32 rows; an update
//!    `C + A(i, k) · B(k, j)` with either matrix in any layout): a packed,
//!    cache-blocked GEMM in the manner of GotoBLAS/BLIS, whose register
//!    tile has two vector registers of the target per row (`gemm.rs`).
//!    Smaller products stay in cases 2 and 4, which read the weights in
//!    place, and so, on a 512-bit target, do products at most 64 columns
//!    wide whose `B` fits the L1 cache (`Gemm::when`): case 2's whole-row
//!    tiles need no pack and no padded columns. With symbolic shapes
//!    both are emitted and chosen at run time. One product whose `B` rows
//!    are contiguous and spread over the L1 cache's sets, with an `A` that
//!    fits L2, reads `B` in place instead, its column panels in parallel
//!    (`gemm/column_panels.rs`).
//! 6. **Implicit GEMMs**: a float reduction over several axes that is a
//!    matrix product once they are flattened into one, a convolution
//!    (`conv.rs`): case 5's schedule with the image gathered through the
//!    window into the B pack, the output rows (the batch) in parallel,
//!    and the filters packed once for all of them; a pointwise
//!    convolution of one image whose pixels case 5 can read in place is
//!    one product of the whole image instead.
//! 7. **Window reductions** (a pooling: a reduction whose loads leave
//!    the input at the borders, through bounds tests and clamped indices):
//!    the output columns are partitioned into the borders and an interior
//!    where the update, simplified, has neither, and each row runs in
//!    tiles that accumulate one vector per 16 columns over the window
//!    (`window.rs`); the other output axes are one parallel loop.
//! 8. **Integer matrix products** of bytes into int32 (`R.matmul` of
//!    `uint8`/`int8` operands with `out_dtype="int32"`) on a 512-bit
//!    target: a packed GEMM whose inner step is `T.dpbusd` (`vpdpbusd`
//!    with AVX512-VNNI) on words of four `k`, all four sign combinations
//!    through offsets and row or column sums (`gemm_int8.rs`).
//! 9. **`bfloat16` matrix products** on a CPU with AVX512-BF16 where the
//!    instruction pays ([`DefaultSchedule::with_bf16`],
//!    [`vdpbf16ps_pays`]): `float32` sums of products of two
//!    `bfloat16` loads, with constant shapes, are packed into words of two
//!    consecutive `k` and run on `vdpbf16ps` (`gemm_bf16.rs`), before
//!    the cases above see them.
//! 10. **Integer convolutions** of bytes into int32 (`R.nn.conv2d` of
//!     `uint8`/`int8` tensors with `out_dtype="int32"`) on a 512-bit
//!     target: case 6's implicit GEMM on case 8's `T.dpbusd` kernel, the
//!     filters packed once, the output rows in parallel (`conv_int8.rs`).
//!
//! The target: the pass is built for a vector register width
//! ([`DefaultSchedule::for_host`], [`DefaultSchedule::for_cpu`] for an
//! ahead-of-time CPU level, [`DefaultSchedule::with_vector_bits`]); only
//! case 5's register tile depends on it.
//!
//! The work a nest is measured by (`Nest::work`) is its multiply-adds,
//! but sixteen per iteration where it reads each element of an operand
//! once, or each byte of two 4-bit weights twice (a matrix-vector
//! product's weight: one token's projections in a decoder), as an
//! elementwise nest's elements count: such a nest is bound by memory,
//! not by arithmetic.
//!
//! Symbolic extents: a nest whose amount of work is not a constant gets
//! both versions, chosen at run time by `if work >= PARALLEL_MIN_WORK`, so
//! a batch of one does not pay the thread pool's dispatch. A `Vectorized`
//! loop of symbolic extent is vector code in the back end (16-lane steps,
//! then a scalar rest), so no explicit remainder loop is needed for it. A
//! parallel loop over a symbolic outer axis (a batch, 1 at run time) is
//! fused with the axis after it (`util::nest`), so the threads still share
//! work; and a reshape's divisions by a symbolic extent,
//! `(i·n + j) // n`, are simplified to `i` as a constant `n` would be
//! (`symbolic_div.rs`), so a symbolic sequence length keeps the static
//! twin's affine loads.
//!
//! Semantics are exact for cases 1 to 3: every output element still sees
//! its init and then its updates in the original order of the reduce
//! loops (the LLVM back end then contracts each multiply-add into an FMA).
//! Case 4 reassociates the sum (16 partial sums), cases 5 and 6 sum each slice
//! of `k` apart. One difference is intended: with an
//! empty reduction domain the hoisted init still runs, so the output holds
//! the reduction's identity (TVM's guarded init would leave it unwritten).
//!
//! The constants are tuned for x86-64 with AVX2 or AVX-512 and `float32`
//! (`benches/matmul_mlp.rs` and the peers benchmark measure them), on an
//! AMD EPYC; the packed GEMM's register tile and blocking are knobs
//! ([`Knobs`]) whose values depend on the CPU's vendor
//! ([`Knobs::for_vendor`]: Intel's AVX-512 cores take their own).

mod conv;
mod conv_int8;
mod dot;
mod epilogue;
mod fold_rows;
mod gemm;
mod gemm_bf16;
mod gemm_int8;
mod groups;
mod injective;
mod interior;
mod interleave;
mod knobs;
mod nest;
mod prepack;
mod reduction;
mod rows;
mod symbolic_div;
mod util;
mod window;

use super::Pass;
use crate::ir::{BaseFunc, IRModule};
use crate::tir::{PrimFunc, Stmt};
pub use gemm::Blocking;
pub use knobs::{vector_registers, Knobs};
use nest::Nest;
pub use prepack::{to_panels, PrepackWeights, PANEL_WIDTH};
use relax_runtime::Error;
use std::collections::HashMap;
use std::sync::Arc;

/// A nest doing fewer iterations than this runs on the calling thread:
/// below it the thread pool's dispatch (waking workers, a few microseconds)
/// costs more than it saves on vectorized code (the digits MLP at batch 64,
/// half a million multiply-adds, is faster serial).
pub const PARALLEL_MIN_WORK: i64 = 1 << 20;

/// The iterations per parallel chunk when a one-loop nest is split.
pub const PARALLEL_CHUNK: i64 = 4096;

/// Output rows per register tile of a contiguous reduction.
pub const TILE_ROWS: i64 = 4;

/// Output columns per register tile: one 16-lane vector of `float32`
/// (two AVX2 registers), so a tile holds eight accumulator registers.
pub const TILE_COLS: i64 = 16;

/// The widest tile of a transpose: sixteen rows, one 512-bit vector of
/// `float32` each, loaded once and transposed in registers. (Wider tiles
/// read more rows a power-of-two stride apart than the L1 cache has ways
/// for one set.)
pub const TRANSPOSE_TILE_MAX: i64 = 16;

/// The tiles along each side of a transpose's blocks: a block of 8 × 8
/// tiles reads and writes 128 rows of 512 bytes (with 16 × 16 tiles), few
/// enough pages for the TLB, where a column of tiles down a large matrix
/// touches a new page with every row it reads.
pub const TRANSPOSE_BLOCK_TILES: i64 = 8;

/// The narrowest tile of a transpose (a `float64` transpose on a 128-bit
/// target still uses 4 × 4 tiles, as two registers per row).
pub const TRANSPOSE_TILE_MIN: i64 = 4;

/// The lanes of one vector step of the LLVM back end (its `MAX_LANES`):
/// wider tile columns are unrolled vectors of this many lanes.
const VECTOR_LANES: i64 = 16;

/// The widest row of constant width that accumulates in a local buffer
/// (eight 16-lane vectors) rather than in the output.
pub const ROW_ACCUMULATOR: i64 = 128;

/// The pass. See the module docs.
#[derive(Clone, Debug)]
pub struct DefaultSchedule {
    vector_bits: u32,
    bf16: bool,
    /// The choices for every kernel without tuned ones.
    knobs: Knobs,
    /// Tuned choices by kernel ([`kernel_key`]).
    tuned: Option<Arc<HashMap<u64, Knobs>>>,
}

impl DefaultSchedule {
    /// Schedules for the CPU this process runs on (the JIT's target),
    /// with its vendor's knobs ([`Knobs::for_host`]).
    pub fn for_host() -> Self {
        let bits = host_vector_bits();
        Self::with_vector_bits(bits)
            .with_bf16(host_bf16())
            .with_knobs(Knobs::for_host(bits))
    }

    /// Schedules for the x86-64 level `cpu` (`x86-64-v4-vnni-bf16`:
    /// AVX-512 with the bfloat16 GEMM, `x86-64-v4`: AVX-512, `x86-64-v3`:
    /// AVX2; anything else: 128-bit SSE2), as the ahead-of-time variants
    /// are compiled. The knobs are those of the build host's vendor
    /// ([`Knobs::for_host`]), and so is the use of `vdpbf16ps` on the
    /// level that has it ([`vdpbf16ps_pays`]): a level names
    /// instructions, not a core, and a package is most often built where
    /// it runs; `relax compile --tune` measures the knobs for any other.
    pub fn for_cpu(cpu: &str) -> Self {
        let dl = cpu == relax_runtime::cpu::V4_VNNI_BF16;
        let bits = match cpu {
            "x86-64-v4" => 512,
            _ if dl => 512,
            "x86-64-v3" => 256,
            "native" => host_vector_bits(),
            _ => 128,
        };
        let vendor = relax_runtime::cpu::vendor();
        let bf16 = match cpu {
            "native" => host_bf16(),
            _ => dl && vdpbf16ps_pays(vendor),
        };
        Self::with_vector_bits(bits)
            .with_bf16(bf16)
            .with_knobs(Knobs::for_vendor(vendor, bits))
    }

    /// Schedules for vector registers of `bits` (128, 256 or 512), with
    /// [`Knobs::default()`] whatever the host.
    pub fn with_vector_bits(bits: u32) -> Self {
        Self {
            vector_bits: bits.clamp(128, 512),
            bf16: false,
            knobs: Knobs::default(),
            tuned: None,
        }
    }

    /// These schedules, for a CPU with AVX512-BF16 when `bf16`: a
    /// `bfloat16` matrix product with 512-bit vectors is then a packed
    /// GEMM on `vdpbf16ps` (`gemm_bf16.rs`).
    pub fn with_bf16(self, bf16: bool) -> Self {
        Self { bf16, ..self }
    }

    /// Whether the schedules use AVX512-BF16.
    pub fn bf16(&self) -> bool {
        self.bf16
    }

    /// The width of the vector registers scheduled for.
    pub fn vector_bits(&self) -> u32 {
        self.vector_bits
    }

    /// These schedules with `knobs` for every kernel without tuned ones
    /// (the rules' own choices: [`Knobs::for_host`] from `for_host` and
    /// `for_cpu`, [`Knobs::default()`] from `with_vector_bits`).
    pub fn with_knobs(self, knobs: Knobs) -> Self {
        Self { knobs, ..self }
    }

    /// The knobs of kernels without tuned ones.
    pub fn knobs(&self) -> Knobs {
        self.knobs
    }

    /// These schedules with tuned knobs: a kernel whose [`kernel_key`] is
    /// in `tuned` is scheduled with its knobs (`crate::tune` measures
    /// them; knobs the schedules do not take, [`Knobs::check`], are
    /// ignored).
    pub fn with_tuned(self, tuned: Arc<HashMap<u64, Knobs>>) -> Self {
        Self {
            tuned: Some(tuned),
            ..self
        }
    }

    /// The knobs `func` (unscheduled) is scheduled with.
    pub fn knobs_for(&self, func: &PrimFunc) -> Knobs {
        self.tuned
            .as_ref()
            .filter(|t| !t.is_empty())
            .and_then(|t| t.get(&kernel_key(func)).copied())
            .filter(|k| k.check(self.vector_bits).is_ok())
            .unwrap_or(self.knobs)
    }
}

/// The key of a kernel for tuned knobs: the structural hash of the
/// unscheduled PrimFunc, its variables mapped by order of appearance (so
/// it is the same in every process) and without the attribute that only
/// names it (`global_symbol`), so equal kernels of two models share it.
pub fn kernel_key(func: &PrimFunc) -> u64 {
    let mut f = func.clone();
    f.attrs = f.attrs.without("global_symbol");
    crate::ir::structural_equal::structural_hash_map_free_vars(&f)
}

impl Default for DefaultSchedule {
    fn default() -> Self {
        Self::for_host()
    }
}

/// Whether the bfloat16 GEMM runs on `vdpbf16ps` on the host: it has
/// AVX512-BF16 and the instruction pays there ([`vdpbf16ps_pays`]).
fn host_bf16() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512bf16")
            && vdpbf16ps_pays(relax_runtime::cpu::vendor())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether `vdpbf16ps` beats the `float32` GEMM on converted operands on
/// a CPU of `vendor` that has it. Not on Intel's cores: there it issues at
/// half the rate of the 512-bit FMAs (on a Sapphire Rapids-class Xeon,
/// 244 against 474 GFLOPS in the peers benchmark's same-run peaks, and
/// the bf16 GEMM took 1.54–1.57 times the float32 one's time), where on
/// AMD's Zen 4 the bf16 GEMM ran at 2.3 times the float32 one's speed.
pub fn vdpbf16ps_pays(vendor: relax_runtime::cpu::Vendor) -> bool {
    vendor != relax_runtime::cpu::Vendor::Intel
}

/// The host's vector registers in bits: 512 with AVX-512, 256 with AVX2
/// and FMA, else 128.
fn host_vector_bits() -> u32 {
    if relax_runtime::cpu::supports("x86-64-v4") {
        512
    } else if relax_runtime::cpu::supports("x86-64-v3") {
        256
    } else {
        128
    }
}

impl Pass for DefaultSchedule {
    fn name(&self) -> &str {
        "DefaultSchedule"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            if let BaseFunc::Prim(pf) = f {
                out.add(gv.clone(), self.schedule_prim_func(pf));
            }
        }
        Ok(out)
    }
}

impl DefaultSchedule {
    /// `func` with every canonical nest scheduled (see the module docs);
    /// a function a user scheduled (`tir.is_scheduled`, as
    /// `ApplySchedule` marks it) stays as written.
    pub fn schedule_prim_func(&self, func: &PrimFunc) -> PrimFunc {
        self.schedule_prim_func_with(func, self.knobs_for(func))
    }

    /// [`DefaultSchedule::schedule_prim_func`] with `knobs`, whatever
    /// these schedules would choose.
    pub fn schedule_prim_func_with(&self, func: &PrimFunc, knobs: Knobs) -> PrimFunc {
        if super::apply_schedule::is_scheduled(&func.attrs) {
            return func.clone();
        }
        let body = match self.bf16 {
            true => gemm_bf16::schedule_bf16_gemms(&func.body, self.vector_bits),
            false => func.body.clone(),
        };
        PrimFunc {
            params: func.params.clone(),
            body: schedule_stmt(&body, self.vector_bits, knobs),
            attrs: func.attrs.clone(),
        }
    }
}

/// `stages` with each nested sequence spliced in, in order.
fn flat_stages(stages: &[Stmt]) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stages.len());
    for s in stages {
        match s {
            Stmt::Seq(inner) => out.extend(flat_stages(inner)),
            other => out.push(other.clone()),
        }
    }
    out
}

fn schedule_stmt(s: &Stmt, bits: u32, knobs: Knobs) -> Stmt {
    match s {
        Stmt::For { body, .. } => match Nest::of(s, bits, knobs) {
            Some(nest) => nest.schedule(),
            None => {
                let mut s = s.clone();
                if let Stmt::For { body: b, .. } = &mut s {
                    **b = schedule_stmt(body, bits, knobs);
                }
                s
            }
        },
        // A scope block (the root): schedule the stages inside it, row
        // reductions and what reads them as one loop over the rows where
        // `rows.rs` allows, each other reduction with the elementwise stage
        // after it as its epilogue where `epilogue.rs` allows; intermediates no stage touches any
        // more are not allocated.
        Stmt::Block(b) if b.iter_vars.is_empty() => {
            let mut b = (**b).clone();
            b.body = Box::new(match &*b.body {
                Stmt::Seq(stages) => {
                    // A fused function's stages, some of them a sequence
                    // of their own (FuseTIR keeps each inlined body's), as
                    // one sequence: a softmax's reductions and the stage
                    // that reads them are then neighbours for `rows.rs`.
                    let stages = flat_stages(stages);
                    let mut out = Vec::with_capacity(stages.len());
                    let mut i = 0;
                    while i < stages.len() {
                        if let Some((fused, n)) =
                            rows::row_run(&stages, i, &b.alloc_buffers, bits, knobs)
                        {
                            out.push(fused);
                            i += n;
                            continue;
                        }
                        match epilogue::with_epilogue(&stages, i, &b.alloc_buffers, bits, knobs) {
                            Some(nest) => {
                                out.push(nest.schedule());
                                i += 2;
                            }
                            None => {
                                out.push(schedule_stmt(&stages[i], bits, knobs));
                                i += 1;
                            }
                        }
                    }
                    Stmt::Seq(out)
                }
                other => schedule_stmt(other, bits, knobs),
            });
            let body = &b.body;
            b.alloc_buffers
                .retain(|buf| crate::tir::buffer_uses::stmt_uses(body, buf));
            Stmt::Block(Box::new(b))
        }
        Stmt::Seq(ss) => Stmt::Seq(ss.iter().map(|s| schedule_stmt(s, bits, knobs)).collect()),
        Stmt::Allocate { buffer, body } => Stmt::Allocate {
            buffer: buffer.clone(),
            body: Box::new(schedule_stmt(body, bits, knobs)),
        },
        Stmt::LetStmt { var, value, body } => Stmt::LetStmt {
            var: var.clone(),
            value: value.clone(),
            body: Box::new(schedule_stmt(body, bits, knobs)),
        },
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case,
        } => Stmt::IfThenElse {
            cond: cond.clone(),
            then_case: Box::new(schedule_stmt(then_case, bits, knobs)),
            else_case: else_case
                .as_deref()
                .map(|e| Box::new(schedule_stmt(e, bits, knobs))),
        },
        Stmt::Block(_) | Stmt::BufferStore { .. } | Stmt::Evaluate(_) => s.clone(),
    }
}

#[cfg(test)]
mod tests;
