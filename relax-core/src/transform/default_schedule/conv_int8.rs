//! Case 10 of the module docs: an integer convolution, a reduction over
//! several axes of products of bytes into `int32` (what `R.nn.conv2d` of
//! `uint8`/`int8` tensors with `out_dtype="int32"` legalizes to),
//!
//! ```text
//! O[n, oc, oh, ow] = Σ_{rc, ry, rx} i32(X(n, rc, oh·s + ry - p, ow·s + rx - p)) · i32(W[oc, rc, ry, rx])
//! ```
//!
//! run as an *implicit GEMM* on case 8's packed `T.dpbusd` kernel
//! (`gemm_int8.rs`): its reduce axes flattened into one `k` (the last
//! varying fastest), for each output row `(n, oh)` the product of
//! `A = W` (`oc × k`) and `B(k, ow)`, the image gathered through the
//! window into the B pack, four `k` to a word. A padded window's taps
//! outside the image are the byte 0 (`select(inside, X(..), 0)`, clamped
//! loads), which is the activation's zero point once
//! `FakeQuantizationToInteger` has padded a nonzero one explicitly
//! (`nn.pad` with it; the convolution then has no padding of its own).
//!
//! - **Parallelism.** The output rows (the batch) run in parallel, each
//!   packing its own B panel, and the filters are packed once for all of
//!   them ([`GemmInt8::a_once`]), with their row sums when they are
//!   needed.
//! - **Narrow rows.** When the output rows are narrower than the register
//!   tile (ResNet's 14 × 14 and 7 × 7 layers against tiles of
//!   [`I8_NR`] = 32 columns), there are many filters and few images and
//!   groups, the row axis joins `ow` as one axis of the GEMM (`jr = oh ·
//!   OW + ow`): a tile spans several output rows and the filters, the
//!   GEMM's rows, run in parallel chunks.
//! - **Signs.** `vpdpbusd` multiplies unsigned by signed bytes. A `uint8`
//!   image and `int8` filters (onnxruntime's `quantize_dynamic`, a
//!   `ConvInteger`) need no correction: the image words are the unsigned
//!   operand. For operands of one sign (`quantize_static`'s `int8` ×
//!   `int8`) the image is offset by 128, and the correction is each
//!   filter's sum, computed once beside the filters' pack; the image's
//!   window sums are only needed when the filters are `uint8` and the
//!   image `int8`.
//!
//! The nest qualifies on a 512-bit target with at least two reduce axes,
//! an `int32` update `C[..] + i32(x) · i32(y)` of bytes (either possibly
//! behind a padding test), and for its innermost spatial axis `j` and some
//! other spatial axis `i`: one factor free of `j` and using `i`, the other
//! free of `i`. Every loaded index stays in bounds: the packs read the
//! slice's last `k` again for the bytes past it (then zero them), and the
//! padding's loads are clamped by the legalization.
//!
//! [`GemmInt8::a_once`]: super::gemm_int8::GemmInt8

use super::conv::static_product;
use super::gemm_int8::{Int8Parallel, I8_NR};
use super::nest::{Axis, Nest};
use super::util::*;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::Stmt;
use std::collections::HashMap;

/// The most (image, group) products whose narrow output rows are still
/// fused into one axis (as for the float convolution, `conv.rs`).
const I8_FUSED_ROWS_MAX_BATCH: i64 = 4;

/// The fewest filters (rows of the GEMM) for which narrow output rows are
/// fused: the fused product runs its filters in parallel chunks of
/// at most 48, so fewer filters would leave a core idle.
const I8_FUSED_ROWS_MIN_FILTERS: i64 = 96;

impl Nest {
    /// The int8 convolution's schedule (module docs), or `None` when the
    /// nest is not one.
    pub(super) fn conv_int8(&self) -> Option<Stmt> {
        if self.reduce.len() < 2 || self.spatial.len() < 2 {
            return None;
        }
        let flat = self.implicit_gemm_int8()?;
        let mut gemm = flat.gemm_int8_oriented(true)?;
        let n = flat.spatial.len();
        let batch = &flat.spatial[..n - 2];
        // Many products (output rows): the batch in parallel, each packing
        // its own image panel; one (a symbolic image count counts as one,
        // the inference batch) or a few: the filters in parallel chunks.
        let many = static_product(batch).is_some_and(|r| r >= 2)
            || batch.iter().filter(|a| a.extent.as_int().is_none()).count() >= 2;
        gemm.parallel = if many {
            Int8Parallel::Batch
        } else {
            Int8Parallel::Chunks
        };
        // The filters are the same for every output row: pack them once.
        gemm.a_once = many && gemm.a_packs_once();
        gemm.implicit = true;
        Some(gemm.schedule())
    }

    /// The nest with its spatial axes reordered to `(batch…, i, j)`, its
    /// narrow output rows fused into `j` where that pays (module docs), and
    /// its reduce axes flattened into one, when it is a product of bytes
    /// with a factor free of `j` that uses some other spatial axis `i`
    /// which the other factor does not use.
    fn implicit_gemm_int8(&self) -> Option<Nest> {
        let n = self.spatial.len();
        let (x, y) = self.byte_product()?;
        let j = &self.spatial[n - 1];
        let (a, b) = match (uses_var(&x, &j.var), uses_var(&y, &j.var)) {
            (false, true) => (x, y),
            (true, false) => (y, x),
            _ => return None,
        };
        // `i`: the innermost other axis that `A` uses and `B` does not.
        let at = self.spatial[..n - 1]
            .iter()
            .rposition(|s| uses_var(&a, &s.var) && !uses_var(&b, &s.var))?;
        let mut spatial: Vec<Axis> = self.spatial[..n - 1].to_vec();
        let i = spatial.remove(at);
        let few =
            |axes: &[Axis]| static_product(axes).is_some_and(|p| p <= I8_FUSED_ROWS_MAX_BATCH);
        let one_product = !spatial.is_empty() && few(&spatial[..spatial.len() - 1]);
        let mut rows_map = HashMap::new();
        let fused_row = match (j.extent.as_int(), spatial.last()) {
            (Some(jw), Some(r))
                if jw < I8_NR
                    && one_product
                    && i.extent
                        .as_int()
                        .is_some_and(|m| m >= I8_FUSED_ROWS_MIN_FILTERS)
                    && r.extent.as_int().is_some()
                    && uses_var(&b, &r.var)
                    && !uses_var(&a, &r.var) =>
            {
                let r = spatial.pop().expect("checked");
                let jdt = j.var.dtype();
                let jr = TirVar::with_dtype(format!("{}_{}", r.var.name(), j.var.name()), jdt);
                let w = PrimExpr::int_of(jdt, jw);
                rows_map.insert(
                    r.var.clone(),
                    PrimExpr::var(&jr).floordiv(w.clone()).cast(r.var.dtype()),
                );
                rows_map.insert(j.var.clone(), PrimExpr::var(&jr).floormod(w));
                let extent = PrimExpr::int_of(jdt, r.extent.as_int().expect("checked") * jw);
                Some(Axis {
                    var: jr.clone(),
                    loop_var: fresh(&jr, ""),
                    extent,
                })
            }
            _ => None,
        };
        spatial.push(i);
        spatial.push(fused_row.unwrap_or_else(|| j.clone()));
        Some(self.with_flat_reduce(spatial, &rows_map))
    }
}
