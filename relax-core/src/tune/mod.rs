//! Measured tuning of `DefaultSchedule`'s knobs, and the tuning database
//! (`relax compile --tune N`, `relax::aot::Builder::tune`).
//!
//! The schedules' choices that are constants of their rules (the packed
//! GEMM's register tile and cache blocking, how a convolution folds its
//! output rows into the GEMM's columns, the chunk of a parallel loop) are
//! [`Knobs`]; the default knobs are the rules' own choices. Tuning tries
//! other values per kernel on this machine:
//!
//! 1. [`space`]: a kernel's candidates, the default first, each a
//!    different scheduled program, sampled from a seed when there are
//!    more than asked for;
//! 2. [`measure`]: each compiled with LLVM and run on random inputs;
//!    a candidate whose results differ from the default's is rejected
//!    before it is timed, so tuning never changes what a model computes
//!    (beyond the order of float sums);
//! 3. [`tuner`]: the fastest kept per kernel in a [`TuningDatabase`]
//!    ([`database`], JSON, keyed by the host CPU and the kernel's
//!    structural hash), which later builds read without measuring.
//!
//! [`Tuning::knobs`] is what a build calls: it reads the database (the
//! file given, by default [`default_path`]), tunes the kernels it lacks
//! when asked to, writes it back, and returns the knobs by kernel for
//! `DefaultSchedule::with_tuned`.

pub mod database;
#[cfg(feature = "llvm")]
pub mod measure;
pub mod space;
#[cfg(feature = "llvm")]
pub mod tuner;

pub use database::{default_path, Record, TuningDatabase};
pub use space::{candidates, Candidate};
#[cfg(feature = "llvm")]
pub use tuner::{KernelOutcome, KernelReport, TuneOptions, TuneReport, Tuner};

pub use crate::transform::Knobs;

#[cfg(feature = "llvm")]
use crate::ir::IRModule;
#[cfg(feature = "llvm")]
use crate::transform::DefaultSchedule;
#[cfg(feature = "llvm")]
use std::collections::HashMap;
#[cfg(feature = "llvm")]
use std::path::PathBuf;

/// The key of this machine's CPU in a tuning database: LLVM's name of
/// the host CPU, `/`, and the FNV-1a hash of LLVM's feature string for
/// it (16 hex digits): two machines share tuned knobs only when LLVM
/// sees the same CPU with the same features.
#[cfg(feature = "llvm")]
pub fn host_cpu_key() -> String {
    let (name, features) = crate::codegen::llvm::host_cpu();
    let h = crate::fnv::fnv1a(features.as_bytes());
    format!("{name}/{h:016x}")
}

/// How a build uses tuning: which database, and how many candidates to
/// try per kernel it lacks.
#[cfg(feature = "llvm")]
#[derive(Clone, Debug)]
pub struct Tuning {
    /// The database file.
    pub db: PathBuf,
    /// The trials (below 2: only read the database) and the dims
    /// measurements bind.
    pub options: TuneOptions,
}

#[cfg(feature = "llvm")]
impl Tuning {
    /// Reading the database at `db` (which must exist), tuning nothing.
    pub fn read_only(db: PathBuf) -> Self {
        Tuning {
            db,
            options: TuneOptions::default(),
        }
    }

    /// Tuning up to `trials` candidates per kernel the database at `db`
    /// lacks (a missing file is an empty database).
    pub fn measuring(db: PathBuf, trials: usize) -> Self {
        Tuning {
            db,
            options: TuneOptions {
                trials,
                ..TuneOptions::default()
            },
        }
    }

    /// The knobs for the unscheduled kernels of `module` on this machine
    /// (host schedules), by [`crate::transform::kernel_key`]: read from
    /// the database, the missing ones measured when tuning; the database
    /// is written back when it gained records. Errors: the database
    /// cannot be read or written.
    pub fn knobs(&self, module: &IRModule) -> Result<(HashMap<u64, Knobs>, TuneReport), String> {
        let measuring = self.options.trials >= 2;
        let mut db = if measuring {
            TuningDatabase::load_or_new(&self.db)?
        } else {
            TuningDatabase::load(&self.db)?
        };
        let before = db.clone();
        let tuner = Tuner::new(
            DefaultSchedule::for_host(),
            &host_cpu_key(),
            self.options.clone(),
        );
        let report = tuner.tune_module(&mut db, module);
        if db != before {
            db.save(&self.db)?;
        }
        Ok((report.knobs(), report))
    }
}

#[cfg(all(test, feature = "llvm"))]
mod tests;
