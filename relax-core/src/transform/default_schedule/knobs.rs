//! `Knobs`: the choices of the CPU schedules that are constants of the
//! rules (register tile, cache blocking, how a convolution folds its
//! output rows, the chunks of a parallel loop), as one value a tuner can
//! change per kernel (`crate::tune`).
//!
//! [`Knobs::default()`] is the rules' own choice everywhere, so
//! `DefaultSchedule` with the default knobs writes exactly the loops it
//! wrote before they were knobs. Those choices were measured on an AMD
//! EPYC (Zen 4); [`Knobs::for_vendor`] gives each CPU vendor's own (today
//! Intel's AVX-512 cores take a larger register tile, a smaller `kc` for a
//! matrix product and a larger one for a convolution),
//! and `DefaultSchedule::for_host` and `for_cpu` start from the host's.
//! A knob only acts where its schedule applies: the register tile and
//! blocking in the packed GEMM (case 5) and the implicit GEMM (case 6),
//! the row folding in case 6, the rows of a register tile in case 2, the
//! chunk in a one-loop injective nest (case 1). [`Knobs::check`] says whether a
//! value is one the schedules take (a tuning database is user input).

use super::gemm::{Blocking, GEMM_BLOCKING, GEMM_MR, GEMM_NR_VECTORS, WINDOW_BLOCKING};
use super::{PARALLEL_CHUNK, VECTOR_LANES};
use relax_runtime::cpu::Vendor;

/// The tunable choices of `DefaultSchedule` (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Knobs {
    /// Rows of the packed GEMM's register tile (default `gemm::GEMM_MR`).
    pub gemm_mr: i64,
    /// Vector registers per row of the register tile
    /// (default `gemm::GEMM_NR_VECTORS`).
    pub gemm_nr_vectors: i64,
    /// The cache blocking of a matrix product (default `gemm::GEMM_BLOCKING`).
    pub gemm_blocking: Blocking,
    /// The cache blocking of an implicit GEMM (default `gemm::WINDOW_BLOCKING`).
    pub window_blocking: Blocking,
    /// Output rows per product of an implicit GEMM: 0 is the rule's
    /// choice (`conv.rs`'s `rows_per_product`), 1 one row per product,
    /// `g` that many rows (where `g` does not divide the height, the
    /// rule's choice).
    pub conv_rows: i64,
    /// Rows of a case-2 register tile (a reduction contiguous along its
    /// last spatial axis: Winograd's batched products, a direct
    /// convolution, a matmul too small to pack): 0 is the rule's choice
    /// (`reduction.rs`), `r` that many rows where `r` times the tile's
    /// vectors fits `reduction_accumulators`, else the rule's.
    pub reduction_rows: i64,
    /// Iterations per parallel chunk of a one-loop nest
    /// ([`PARALLEL_CHUNK`]).
    pub parallel_chunk: i64,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            gemm_mr: GEMM_MR,
            gemm_nr_vectors: GEMM_NR_VECTORS,
            gemm_blocking: GEMM_BLOCKING,
            window_blocking: WINDOW_BLOCKING,
            conv_rows: 0,
            reduction_rows: 0,
            parallel_chunk: PARALLEL_CHUNK,
        }
    }
}

/// Rows of the packed GEMM's register tile on Intel's AVX-512 cores: 12
/// rows of two vectors, 24 accumulators of the 32 registers. Intel's two
/// 512-bit FMA units keep more FMAs in flight per broadcast than AMD's
/// Zen 4: a 12 × 32 tile summed over a B panel in the L1 cache ran at
/// 0.82–0.86 of one core's FMA peak on a Xeon with AMX (Sapphire Rapids
/// class), the 6 × 32 tile at 0.71–0.74.
pub const INTEL_AVX512_GEMM_MR: i64 = 12;

/// The packed GEMM's blocking on Intel's AVX-512 cores: slices of 256 `k`,
/// so that a tile's B panel (256 × 32 `float32`, 32 KiB) stays in the
/// 48 KiB L1 cache across the row tiles, where the 2048 of
/// [`GEMM_BLOCKING`] streams it from L2; chunks of 24 rows. Measured on
/// the same Xeon (2 threads, 1024 and 2048 cubed, alternated runs): 303 →
/// 333–364 and 305 → 327–354 GFLOPS at the median, with the 12-row tile.
pub const INTEL_AVX512_GEMM_BLOCKING: Blocking = Blocking {
    kc: 256,
    mc: 24,
    nc: 1024,
};

/// An implicit GEMM's blocking on Intel's AVX-512 cores: slices of 1024
/// `k`, where [`WINDOW_BLOCKING`] slices by 256 to keep a tile's B panel
/// in an AMD core's L1 cache. A convolution's `k` (input channels times
/// taps: 576 to 4608 in ResNet) then takes one to five slices instead of
/// three to eighteen, each tile of the output written back once per
/// slice, and its 128 KiB B panel streams from the 2 MiB L2. The tuner
/// chose 1024 for ResNet-18's stride-2 layers on a Xeon with AMX; whole
/// models measured alternated on it: ResNet-18 0.7%, GoogLeNet 1.5% and
/// RegNet-Y 2.5% faster at batch 1, and 2048 no better than 1024.
pub const INTEL_AVX512_WINDOW_BLOCKING: Blocking = Blocking {
    kc: 1024,
    ..WINDOW_BLOCKING
};

/// The most accumulator registers a case-2 tile of [`Knobs::reduction_rows`]
/// takes on any target: 24 of AVX-512's 32 (`reduction_accumulators`).
pub const REDUCTION_ACCUMULATORS: i64 = 24;

/// The accumulator registers a case-2 tile of [`Knobs::reduction_rows`]
/// may take with vectors of `bits`: three quarters of the register file
/// (24 of AVX-512's 32, 12 of AVX2's 16), the rest for the vectors of
/// the right operand and a broadcast, as the packed GEMM's tile leaves.
pub fn reduction_accumulators(bits: u32) -> i64 {
    vector_registers(bits) * 3 / 4
}

/// The element widths of the float dtypes a packed GEMM runs on.
const FLOAT_BITS: [u32; 3] = [16, 32, 64];

/// The vector registers of an x86-64 target with vectors of `bits`: 32
/// with AVX-512, 16 below.
pub fn vector_registers(bits: u32) -> i64 {
    if bits >= 512 {
        32
    } else {
        16
    }
}

impl Knobs {
    /// The rules' choices for a CPU of `vendor` with vectors of
    /// `vector_bits`: [`Knobs::default()`], except on Intel with AVX-512,
    /// where the packed GEMM's tile has 12 rows and its blocking slices
    /// `k` by 256 with chunks of 24 rows, and an implicit GEMM slices `k`
    /// by 1024 (`INTEL_AVX512_GEMM_MR`, `INTEL_AVX512_GEMM_BLOCKING` and
    /// `INTEL_AVX512_WINDOW_BLOCKING` in `knobs.rs` say why).
    pub fn for_vendor(vendor: Vendor, vector_bits: u32) -> Knobs {
        match vendor {
            Vendor::Intel if vector_bits >= 512 => Knobs {
                gemm_mr: INTEL_AVX512_GEMM_MR,
                gemm_blocking: INTEL_AVX512_GEMM_BLOCKING,
                window_blocking: INTEL_AVX512_WINDOW_BLOCKING,
                ..Knobs::default()
            },
            _ => Knobs::default(),
        }
    }

    /// [`Knobs::for_vendor`] of the CPU this process runs on.
    pub fn for_host(vector_bits: u32) -> Knobs {
        Knobs::for_vendor(relax_runtime::cpu::vendor(), vector_bits)
    }

    /// The register tile's columns for elements of `elem_bits` on vectors
    /// of `vector_bits`.
    pub fn gemm_nr(&self, vector_bits: u32, elem_bits: u32) -> i64 {
        (self.gemm_nr_vectors * i64::from(vector_bits) / i64::from(elem_bits.max(1))).max(1)
    }

    /// `Ok` when the schedules for vectors of `vector_bits` take these
    /// knobs, else an error naming the first knob that is wrong, what it
    /// must be and what it is:
    ///
    /// - the register tile's `MR · NR_VECTORS` accumulators, one register
    ///   per vector of B and the broadcast of A fit the register file;
    /// - its columns (`float32`) are at most one step of the back end's
    ///   vectors or whole steps of them;
    /// - each block size is positive, `mc` a multiple of `MR` and `nc` of
    ///   the tile's columns (the packs hold whole tiles);
    /// - the row folding is not negative, a case-2 tile's rows are 0 to
    ///   `REDUCTION_ACCUMULATORS`, and the parallel chunk is positive.
    pub fn check(&self, vector_bits: u32) -> Result<(), String> {
        let regs = vector_registers(vector_bits);
        let (mr, nv) = (self.gemm_mr, self.gemm_nr_vectors);
        if !(1..=regs).contains(&mr) {
            return Err(format!("gemm_mr must be in 1..={regs}, found {mr}"));
        }
        if !(1..=regs).contains(&nv) {
            return Err(format!("gemm_nr_vectors must be in 1..={regs}, found {nv}"));
        }
        if mr * nv + nv + 1 > regs {
            return Err(format!(
                "gemm_mr · gemm_nr_vectors + gemm_nr_vectors + 1 must be at most the {regs} vector registers, found {mr} · {nv} + {nv} + 1 = {}",
                mr * nv + nv + 1
            ));
        }
        // The float dtypes a packed GEMM takes: 16, 32 and 64 bits.
        for elem in FLOAT_BITS {
            let nr = self.gemm_nr(vector_bits, elem);
            if nr > VECTOR_LANES && nr % VECTOR_LANES != 0 {
                return Err(format!(
                    "gemm_nr_vectors must give at most {VECTOR_LANES} or a multiple of {VECTOR_LANES} columns of {elem}-bit elements on {vector_bits}-bit vectors, found {nr}"
                ));
            }
        }
        for (name, b) in [
            ("gemm_blocking", self.gemm_blocking),
            ("window_blocking", self.window_blocking),
        ] {
            if b.kc < 1 || b.mc < 1 || b.nc < 1 {
                return Err(format!(
                    "{name} must have positive kc, mc and nc, found ({}, {}, {})",
                    b.kc, b.mc, b.nc
                ));
            }
            if b.mc % mr != 0 {
                return Err(format!(
                    "{name}.mc must be a multiple of gemm_mr = {mr}, found {}",
                    b.mc
                ));
            }
            for elem in FLOAT_BITS {
                let nr = self.gemm_nr(vector_bits, elem);
                if b.nc % nr != 0 {
                    return Err(format!(
                        "{name}.nc must be a multiple of the register tile's {nr} columns ({elem}-bit elements), found {}",
                        b.nc
                    ));
                }
            }
        }
        if self.conv_rows < 0 {
            return Err(format!(
                "conv_rows must be 0 (the rule's) or a row count, found {}",
                self.conv_rows
            ));
        }
        if !(0..=REDUCTION_ACCUMULATORS).contains(&self.reduction_rows) {
            return Err(format!(
                "reduction_rows must be 0 (the rule's) or a row count up to {REDUCTION_ACCUMULATORS}, found {}",
                self.reduction_rows
            ));
        }
        if self.parallel_chunk < 1 {
            return Err(format!(
                "parallel_chunk must be positive, found {}",
                self.parallel_chunk
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_valid_on_every_width() {
        for bits in [128, 256, 512] {
            Knobs::default().check(bits).unwrap();
        }
    }

    #[test]
    fn every_vendor_has_valid_knobs() {
        for vendor in [Vendor::Amd, Vendor::Intel, Vendor::Other] {
            for bits in [128, 256, 512] {
                Knobs::for_vendor(vendor, bits).check(bits).unwrap();
            }
        }
        // Intel's AVX-512 cores take their own tile; narrower Intel
        // targets (16 registers) and AMD keep the defaults.
        assert_eq!(Knobs::for_vendor(Vendor::Intel, 512).gemm_mr, 12);
        assert_eq!(
            Knobs::for_vendor(Vendor::Intel, 512).window_blocking.kc,
            1024
        );
        assert_eq!(Knobs::for_vendor(Vendor::Intel, 256), Knobs::default());
        assert_eq!(Knobs::for_vendor(Vendor::Amd, 512), Knobs::default());
    }

    #[test]
    fn bad_knobs_are_named() {
        let k = Knobs {
            gemm_mr: 14,
            gemm_nr_vectors: 3,
            ..Knobs::default()
        };
        let e = k.check(512).unwrap_err();
        assert!(
            e.contains("gemm_mr · gemm_nr_vectors") && e.contains("46"),
            "{e}"
        );
        let k = Knobs {
            gemm_blocking: Blocking {
                kc: 256,
                mc: 50,
                nc: 1024,
            },
            ..Knobs::default()
        };
        let e = k.check(512).unwrap_err();
        assert!(e.contains("gemm_blocking.mc") && e.contains("50"), "{e}");
        // Three AVX2 vectors are 24 float32 columns: not whole steps.
        let k = Knobs {
            gemm_mr: 3,
            gemm_nr_vectors: 3,
            gemm_blocking: Blocking {
                kc: 256,
                mc: 48,
                nc: 1536,
            },
            window_blocking: Blocking {
                kc: 256,
                mc: 96,
                nc: 1536,
            },
            ..Knobs::default()
        };
        assert!(
            k.check(256).unwrap_err().contains("found 24"),
            "{:?}",
            k.check(256)
        );
        let k = Knobs {
            parallel_chunk: 0,
            ..Knobs::default()
        };
        assert!(k.check(512).unwrap_err().contains("parallel_chunk"));
        for rows in [-1, 25] {
            let k = Knobs {
                reduction_rows: rows,
                ..Knobs::default()
            };
            assert!(k.check(512).unwrap_err().contains("reduction_rows"));
        }
    }
}
