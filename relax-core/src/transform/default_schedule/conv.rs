//! Case 6 of the module docs: a reduction over several axes that is a
//! matrix product once its reduce axes are flattened, run as an *implicit
//! GEMM* on case 5's packed schedule. A convolution is the example:
//!
//! ```text
//! O[n, oc, oh, ow] = Σ_{rc, ry, rx} X(n, rc, oh·s + ry - p, ow·s + rx - p) · W[oc, rc, ry, rx]
//! ```
//!
//! is, for each output row `(n, oh)`, the product of `A = W` (`oc × k`)
//! and `B(k, ow) = X(…)` (`k × ow`), with `k` the flattened `(rc, ry, rx)`.
//! The GEMM's B pack gathers the image through the window (the im2col of
//! one output row, packed straight into the register tile's layout, so no
//! im2col matrix is materialised), and the output rows run in parallel,
//! each packing its own panels.
//!
//! Output rows fold into the GEMM's columns when that fills the register
//! tiles better ([`rows_per_product`]): when they are narrower than the
//! tile (a 7 × 7 layer against tiles of 32 columns) and the convolution
//! has many filters and few groups, the whole image is one product whose
//! filters run in parallel chunks; otherwise groups of rows dividing the
//! height (ResNet's 56-wide rows by four: 224 = 7 × 32 columns) are each
//! one product of the batch. A tile then spans several output rows; the
//! pack and the write-back split the division of a lane's column by the
//! row width into one scalar division and a carry per lane
//! ([`super::gemm::split_lane_divisions`]). A pointwise convolution at
//! stride 1 of one image whose pixels case 5 reads in place
//! ([`Nest::in_place_implicit_gemm`]) is one product of the whole image,
//! whatever the filters.
//!
//! The nest qualifies when it has at least two reduce axes, a float update
//! `C[..] + x · y` (and an init), and for its innermost spatial axis `j`
//! and some other spatial axis `i`: one factor is free of `j` and uses
//! `i`, the other is free of `i`. The other spatial axes become the batch.
//! Plain matrix products (one reduce axis) are case 5's or cases 2 and 4's:
//! a weight read transposed is cheaper read in place than gathered.

use super::gemm::{branch, choice, GemmParallel};
use super::nest::{parallel_choice, Axis, Nest};
use super::util::*;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::Stmt;
use std::collections::HashMap;

/// The most (batch, group) products whose narrow output rows are still
/// fused into one axis: AlexNet's two groups gain, ShuffleNet's hundreds
/// lose (module docs of [`Nest::implicit_gemm`]).
const FUSED_ROWS_MAX_BATCH: i64 = 4;

/// The fewest filters (rows of the GEMM) for which narrow output rows are
/// fused: the fused product runs its filters in parallel chunks, and 32
/// filters (DenseNet's 3x3 layers) are too few for them, where a batch of
/// output rows keeps both cores busy.
const FUSED_ROWS_MIN_FILTERS: i64 = 128;

impl Nest {
    /// The nest with its spatial axes reordered to `(batch…, i, j)` and its
    /// reduce axes flattened into one, when it is an implicit GEMM (see
    /// the module docs).
    pub(super) fn implicit_gemm(&self) -> Option<Nest> {
        self.flattened(false)
    }

    /// [`Nest::implicit_gemm`], with every output row folded into the
    /// columns when `whole_image` (one product per image), whatever
    /// [`rows_per_product`] would choose.
    fn flattened(&self, whole_image: bool) -> Option<Nest> {
        let n = self.spatial.len();
        if self.reduce.len() < 2 || n < 2 {
            return None;
        }
        let j = &self.spatial[n - 1];
        let (a, b) = self.factors_along(j)?;
        // `i`: the innermost other axis that `A` uses and `B` does not.
        let at = self.spatial[..n - 1]
            .iter()
            .rposition(|s| uses_var(a, &s.var) && !uses_var(b, &s.var))?;
        let mut spatial: Vec<Axis> = self.spatial[..n - 1].to_vec();
        let i = spatial.remove(at);
        // Output rows fold into the GEMM's columns (see
        // [`rows_per_product`]): the row axis `r` before `j`, read by `B`
        // only, is cut into `r = ro · g + jr // J` and `jr = ri · J + j`
        // joins `j` (`j = jr % J`; the back end puts the flat offset back
        // together), so a tile spans several rows, when the other batch
        // axes (image, group) have at most [`FUSED_ROWS_MAX_BATCH`]
        // values. A convolution of many groups (ShuffleNet's depthwise
        // ones) keeps its batch of (group, row) products: fusing their rows
        // made them six times slower. A symbolic extent (an exported
        // model's `batch`) counts as one image, the inference batch: with
        // ResNet-18's batch symbolic its 7 x 7 layers kept a product per
        // row and ran three times slower.
        let few = |axes: &[Axis]| static_product(axes).is_some_and(|n| n <= FUSED_ROWS_MAX_BATCH);
        let one_product = !spatial.is_empty() && few(&spatial[..spatial.len() - 1]);
        let nr = self.gemm_nr();
        let mut rows_map = HashMap::new();
        let fold = match (j.extent.as_int(), spatial.last()) {
            (Some(jw), Some(r)) if one_product && uses_var(b, &r.var) && !uses_var(a, &r.var) => {
                let others = static_product(&spatial[..spatial.len() - 1]).unwrap_or(1);
                // The knob `conv_rows` overrides the rule where it
                // divides the height (`knobs.rs`).
                r.extent
                    .as_int()
                    .and_then(|h| match self.knobs.conv_rows {
                        _ if whole_image => (h > 1).then_some(h),
                        1 => None,
                        g if g > 1 && g <= h && h % g == 0 => Some(g),
                        _ => rows_per_product(jw, h, others, nr, i.extent.as_int()),
                    })
                    .map(|g| (jw, g))
            }
            _ => None,
        };
        let fused_row = fold.map(|(jw, g)| {
            let r = spatial.pop().expect("checked");
            let h = r.extent.as_int().expect("checked");
            let jdt = j.var.dtype();
            let rdt = r.var.dtype();
            let jr = TirVar::with_dtype(format!("{}_{}", r.var.name(), j.var.name()), jdt);
            let w = PrimExpr::int_of(jdt, jw);
            let within = PrimExpr::var(&jr).floordiv(w.clone()).cast(rdt);
            let row = if g == h {
                within
            } else {
                // Products of `g` rows: `ro` stays in the batch.
                let ro = TirVar::with_dtype(format!("{}_o", r.var.name()), rdt);
                spatial.push(Axis {
                    var: ro.clone(),
                    loop_var: fresh(&ro, ""),
                    extent: PrimExpr::int_of(rdt, h / g),
                });
                PrimExpr::var(&ro) * PrimExpr::int_of(rdt, g) + within
            };
            rows_map.insert(r.var.clone(), row);
            rows_map.insert(j.var.clone(), PrimExpr::var(&jr).floormod(w));
            Axis {
                var: jr.clone(),
                loop_var: fresh(&jr, ""),
                extent: PrimExpr::int_of(jdt, g * jw),
            }
        });
        spatial.push(i);
        spatial.push(fused_row.unwrap_or_else(|| j.clone()));
        Some(self.with_flat_reduce(spatial, &rows_map))
    }

    /// This nest over `spatial` (the implicit GEMM's `(batch…, i, j)`),
    /// its reduce axes flattened into one axis `k` over the product of
    /// their extents (each old axis a digit of `k`, the last varying
    /// fastest), and `rows_map` (old spatial vars in terms of a fused
    /// column axis, possibly empty) substituted everywhere. Shared by the
    /// float and the int8 implicit GEMM.
    pub(super) fn with_flat_reduce(
        &self,
        spatial: Vec<Axis>,
        rows_map: &HashMap<TirVar, PrimExpr>,
    ) -> Nest {
        let idt = self.reduce[0].var.dtype();
        let k = TirVar::with_dtype("k", idt);
        let mut map = unfuse(&self.reduce, &PrimExpr::var(&k), idt);
        map.extend(rows_map.clone());
        let epilogue = self.epilogue.clone().map(|mut e| {
            e.indices = e
                .indices
                .iter()
                .map(|x| x.substitute_map(rows_map))
                .collect();
            e.value = e.value.substitute_map(rows_map);
            e
        });
        let reduce = vec![Axis {
            var: k.clone(),
            loop_var: fresh(&k, ""),
            extent: fused_extent(&self.reduce, idt),
        }];
        Nest {
            spatial,
            reduce,
            buffer: self.buffer.clone(),
            indices: self
                .indices
                .iter()
                .map(|x| x.substitute_map(rows_map))
                .collect(),
            value: self.value.substitute_map(&map),
            init: self.init.as_ref().map(|x| x.substitute_map(rows_map)),
            epilogue,
            vector_bits: self.vector_bits,
            knobs: self.knobs,
        }
    }

    /// The nest as one product per image, every output row folded into
    /// the columns, on the schedule that reads the image where it is
    /// (`gemm/column_panels.rs`), when that applies: one image, work
    /// enough for the thread pool, and [`super::gemm::Gemm::b_in_place`]
    /// (a pointwise convolution at stride 1 of a 28 × 28, 14 × 14 or
    /// 7 × 7 image). Where [`rows_per_product`] would fold fewer rows
    /// (fewer than 128 filters), each product packed its own rows of the
    /// image: GoogLeNet's 256 → 64 convolution at 28 × 28 took two
    /// products, its 832 → 48 at 7 × 7 seven products of one 7-pixel row
    /// each (0.10 ms; 0.025 ms as one product read in place).
    /// `None` where it does not apply, or the knob `conv_rows` chooses.
    pub(super) fn in_place_implicit_gemm(&self) -> Option<Stmt> {
        if self.knobs.conv_rows != 0 {
            return None;
        }
        let flat = self.flattened(true)?;
        if parallel_choice(&flat.work(), flat.index_dtype()) != Ok(true) {
            return None;
        }
        let gemm = flat.gemm_of(false)?;
        gemm.b_in_place().then(|| gemm.column_panels())
    }

    /// This nest (an [`Nest::implicit_gemm`]) on the packed schedule, the
    /// batch in parallel when there is enough work; `None` when it is not
    /// a GEMM after all. `fallback` is the original nest, scheduled in place
    /// when the flattened reduction is empty at run time (the packed
    /// schedule writes the init only with a first slice of `k`).
    pub(super) fn implicit_gemm_schedule(&self, fallback: &Nest) -> Option<Stmt> {
        let mut gemm = self.gemm_of(false)?;
        let idt = self.index_dtype();
        let batch = self.spatial.len() - 2;
        let rows = fused_extent(&self.spatial[..batch], idt);
        let parallel = match parallel_choice(&self.work(), idt) {
            Ok(false) => GemmParallel::Serial,
            // Symbolic work is taken to be large; a symbolic batch of
            // products with no static axis of two or more (a symbolic image
            // count before fused rows) is taken to be one product, whose
            // filters run in parallel chunks.
            _ if rows.as_int().is_some_and(|r| r >= 2)
                || (rows.as_int().is_none()
                    && (static_product(&self.spatial[..batch]).is_some_and(|r| r >= 2)
                        || self.spatial[..batch]
                            .iter()
                            .filter(|a| a.extent.as_int().is_none())
                            .count()
                            >= 2)) =>
            {
                GemmParallel::Batch
            }
            _ => GemmParallel::Chunks,
        };
        gemm.parallel = parallel;
        // Filters are the same for every output row: pack them once.
        gemm.a_once = parallel == GemmParallel::Batch && gemm.a_packs_once();
        let nonempty = choice(
            self.reduce[0]
                .extent
                .clone()
                .cast(idt)
                .ge(PrimExpr::int_of(idt, 1)),
        );
        Some(branch(
            &nonempty,
            || gemm.packed(),
            || fallback.with_new_loops().schedule_in_place(),
        ))
    }
}

/// How many output rows (of `height`, each `width` wide) one product of an
/// implicit GEMM spans, when more than one: its columns are then `g`
/// rows, so a register tile of `nr` columns spans rows. `others` is the
/// number of products of the other batch axes, `filters` the GEMM's rows.
///
/// - Rows narrower than the tile of a convolution of many filters (ResNet's
///   7 x 7 layers filled 7 of its 32 columns): the whole image is one
///   product, whose filters run in parallel chunks.
/// - Otherwise `g` divides `height`, leaves at least two products for the
///   thread pool (a batch of products runs in parallel) and at most
///   [`FOLD_MAX_COLUMNS`] columns, and is the first that maximizes the
///   fraction of the tiles' columns holding outputs times the balance of
///   the products over pairs of threads: ResNet's 56-wide rows filled 56
///   of 64 columns, four rows fill 224 = 7 × 32; the stem's 112-wide rows
///   go by two. `None` when one row per product is as good.
fn rows_per_product(
    width: i64,
    height: i64,
    others: i64,
    nr: i64,
    filters: Option<i64>,
) -> Option<i64> {
    if width <= 0 || height <= 1 || nr <= 0 {
        return None;
    }
    if width < nr && filters.is_some_and(|m| m >= FUSED_ROWS_MIN_FILTERS) {
        return Some(height);
    }
    let score = |g: i64| {
        let cols = g * width;
        let filled = cols as f64 / ((cols + nr - 1) / nr * nr) as f64;
        let products = others.max(1) * (height / g);
        let balance = products as f64 / ((products + 1) / 2 * 2) as f64;
        filled * balance
    };
    let mut best = (1, score(1));
    for g in 2..=height {
        if height % g != 0 || g * width > FOLD_MAX_COLUMNS || others.max(1) * (height / g) < 2 {
            continue;
        }
        let s = score(g);
        if s > best.1 + 1e-9 {
            best = (g, s);
        }
    }
    (best.0 > 1).then_some(best.0)
}

/// The most columns (output rows times their width) one product of an
/// implicit GEMM folds: one B panel of [`super::gemm::WINDOW_BLOCKING`].
const FOLD_MAX_COLUMNS: i64 = 512;

/// The product of the static extents of `axes`, a symbolic one counting
/// as one; `None` on overflow.
pub(super) fn static_product(axes: &[Axis]) -> Option<i64> {
    axes.iter().try_fold(1i64, |acc, x| {
        acc.checked_mul(x.extent.as_int().unwrap_or(1))
    })
}

#[cfg(test)]
mod tests {
    use super::rows_per_product;

    /// The rows per product chosen for the layers of ResNet and MobileNet
    /// with tiles of 32 columns.
    #[test]
    fn rows_fold_to_fill_the_tiles() {
        // 56 x 56 with 64 filters: four rows, 224 columns, 14 products.
        assert_eq!(rows_per_product(56, 56, 1, 32, Some(64)), Some(4));
        // The stem's 112-wide rows: two.
        assert_eq!(rows_per_product(112, 112, 1, 32, Some(64)), Some(2));
        // Narrow rows, many filters: the whole image.
        assert_eq!(rows_per_product(7, 7, 1, 32, Some(512)), Some(7));
        assert_eq!(rows_per_product(28, 28, 1, 32, Some(128)), Some(28));
        // Narrow rows, few filters: two products at least.
        assert_eq!(rows_per_product(14, 14, 1, 32, Some(64)), Some(2));
        assert_eq!(rows_per_product(7, 7, 1, 32, Some(32)), None);
        // Rows filling whole tiles stay one per product.
        assert_eq!(rows_per_product(64, 64, 1, 32, Some(64)), None);
        // Degenerate extents.
        assert_eq!(rows_per_product(0, 8, 1, 32, None), None);
        assert_eq!(rows_per_product(20, 1, 1, 32, None), None);
    }
}
