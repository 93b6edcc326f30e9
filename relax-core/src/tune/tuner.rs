//! The tuner: for each distinct kernel of a lowered module, the knobs
//! from the database, or measured and added to it (feature "llvm").
//!
//! A kernel is looked up by the host CPU's key and its [`kernel_key`];
//! when the database has it, its knobs are used as they are and nothing
//! is compiled or run. Otherwise, when tuning is asked for (`trials` of at
//! least 2), its candidates ([`candidates`]) are measured ([`measure`]),
//! and the fastest is recorded; a candidate must beat the default by
//! [`MIN_GAIN`] to replace it, so noise does not swap knobs. A kernel with
//! one candidate (no knob acts on it) is not measured and not recorded.
//! Kernels are visited in module order, and each distinct key once.

use super::database::{Record, TuningDatabase};
use super::measure::{measure, Outcome};
use super::space::candidates;
use crate::ir::{BaseFunc, IRModule};
use crate::tir::PrimFunc;
use crate::transform::{kernel_key, DefaultSchedule, Knobs};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How much faster than the default a candidate must be to be kept.
pub const MIN_GAIN: f64 = 0.03;

/// What to tune and how.
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// The most candidates per kernel, the default included; below 2 the
    /// database is only read.
    pub trials: usize,
    /// Values of symbolic dims by name (others are
    /// [`super::measure::DEFAULT_DIM`]).
    pub dims: HashMap<String, i64>,
    /// The seed of the candidates' sampling.
    pub seed: u64,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            trials: 0,
            dims: HashMap::new(),
            seed: 0x5eed,
        }
    }
}

/// What happened to one kernel.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelOutcome {
    /// Its knobs came from the database; nothing was measured.
    Reused(Knobs),
    /// It was measured: the knobs kept, the default's and the kept
    /// candidate's times, the candidates timed and those rejected.
    Tuned {
        /// The knobs kept.
        knobs: Knobs,
        /// The default's best time.
        default: Duration,
        /// The kept knobs' best time.
        best: Duration,
        /// Candidates timed (the default included).
        timed: usize,
        /// Candidates that gave other results than the default.
        rejected: usize,
    },
    /// No knob acts on it: one candidate, nothing measured.
    Fixed,
    /// Not in the database, and tuning was not asked for.
    Untuned,
    /// It could not be measured (why).
    Failed(String),
}

/// One kernel's entry of a [`TuneReport`].
#[derive(Clone, Debug)]
pub struct KernelReport {
    /// Its name in the module.
    pub name: String,
    /// Its [`kernel_key`].
    pub key: u64,
    /// What happened.
    pub outcome: KernelOutcome,
}

/// What [`Tuner::tune_module`] did.
#[derive(Clone, Debug, Default)]
pub struct TuneReport {
    /// Each distinct kernel, in module order.
    pub kernels: Vec<KernelReport>,
    /// How many candidates were compiled and run (0 when every kernel
    /// came from the database).
    pub measured: usize,
    /// The wall time of tuning.
    pub elapsed: Duration,
    /// The schedule's own knobs (its vendor's, [`Knobs::for_vendor`]),
    /// which each candidate is described against.
    pub base: Knobs,
}

impl TuneReport {
    /// The knobs of every kernel the database or the measurements gave,
    /// by key.
    pub fn knobs(&self) -> HashMap<u64, Knobs> {
        self.kernels
            .iter()
            .filter_map(|k| match &k.outcome {
                KernelOutcome::Reused(knobs) | KernelOutcome::Tuned { knobs, .. } => {
                    Some((k.key, *knobs))
                }
                _ => None,
            })
            .collect()
    }

    /// A line per tuned kernel and a summary, for a command line.
    pub fn summary(&self) -> String {
        let count =
            |f: fn(&KernelOutcome) -> bool| self.kernels.iter().filter(|k| f(&k.outcome)).count();
        let mut lines = Vec::new();
        let (mut before, mut after) = (0f64, 0f64);
        for k in &self.kernels {
            match &k.outcome {
                KernelOutcome::Tuned {
                    knobs,
                    default,
                    best,
                    timed,
                    rejected,
                } => {
                    before += default.as_secs_f64();
                    after += best.as_secs_f64();
                    lines.push(format!(
                        "  {:>9.1} us -> {:>9.1} us ({:.2}x, {timed} timed, {rejected} rejected)  {}  {}",
                        default.as_secs_f64() * 1e6,
                        best.as_secs_f64() * 1e6,
                        default.as_secs_f64() / best.as_secs_f64().max(1e-12),
                        k.name,
                        describe(knobs, &self.base)
                    ));
                }
                KernelOutcome::Failed(why) => {
                    lines.push(format!("  not measured: {}: {why}", k.name))
                }
                _ => {}
            }
        }
        lines.push(format!(
            "tuning: {} kernels measured ({} candidates run, {:.1} s; measured kernels {:.3} ms -> {:.3} ms), {} from the database, {} without knobs, {} untuned, {} failed",
            count(|o| matches!(o, KernelOutcome::Tuned { .. })),
            self.measured,
            self.elapsed.as_secs_f64(),
            before * 1e3,
            after * 1e3,
            count(|o| matches!(o, KernelOutcome::Reused(_))),
            count(|o| matches!(o, KernelOutcome::Fixed)),
            count(|o| matches!(o, KernelOutcome::Untuned)),
            count(|o| matches!(o, KernelOutcome::Failed(_))),
        ));
        lines.join("\n")
    }
}

/// The knobs of `k` that differ from `d` (the schedule's own), as
/// `name=value`; `default` when none does.
pub fn describe(k: &Knobs, d: &Knobs) -> String {
    let mut parts = Vec::new();
    if (k.gemm_mr, k.gemm_nr_vectors) != (d.gemm_mr, d.gemm_nr_vectors) {
        parts.push(format!("tile={}x{}v", k.gemm_mr, k.gemm_nr_vectors));
    }
    for (name, b, db) in [
        ("gemm", k.gemm_blocking, d.gemm_blocking),
        ("window", k.window_blocking, d.window_blocking),
    ] {
        if b != db {
            parts.push(format!("{name}=(kc {}, mc {}, nc {})", b.kc, b.mc, b.nc));
        }
    }
    if k.conv_rows != d.conv_rows {
        parts.push(format!("conv_rows={}", k.conv_rows));
    }
    if k.reduction_rows != d.reduction_rows {
        parts.push(format!("reduction_rows={}", k.reduction_rows));
    }
    if k.parallel_chunk != d.parallel_chunk {
        parts.push(format!("chunk={}", k.parallel_chunk));
    }
    if parts.is_empty() {
        "default".into()
    } else {
        parts.join(" ")
    }
}

/// Tunes kernels for one schedule on this machine. See the module docs.
#[derive(Clone, Debug)]
pub struct Tuner {
    schedule: DefaultSchedule,
    cpu: String,
    options: TuneOptions,
}

impl Tuner {
    /// A tuner of `schedule`'s knobs on the CPU `cpu`
    /// ([`super::host_cpu_key`] for this machine).
    pub fn new(schedule: DefaultSchedule, cpu: &str, options: TuneOptions) -> Self {
        Tuner {
            schedule,
            cpu: cpu.to_string(),
            options,
        }
    }

    /// Every PrimFunc of `module` (unscheduled, as the pipeline leaves
    /// them before `DefaultSchedule`), through [`Tuner::tune`].
    pub fn tune_module(&self, db: &mut TuningDatabase, module: &IRModule) -> TuneReport {
        let funcs: Vec<(String, PrimFunc)> = module
            .functions()
            .filter_map(|(gv, f)| match f {
                BaseFunc::Prim(p) => Some((gv.name_hint().to_string(), p.clone())),
                _ => None,
            })
            .collect();
        self.tune(db, &funcs)
    }

    /// Each distinct kernel of `funcs` (name, unscheduled PrimFunc): its
    /// knobs from `db`, or measured and recorded in it (module docs).
    pub fn tune(&self, db: &mut TuningDatabase, funcs: &[(String, PrimFunc)]) -> TuneReport {
        let start = Instant::now();
        let mut report = TuneReport {
            base: self.schedule.knobs(),
            ..TuneReport::default()
        };
        let mut seen = HashSet::new();
        let bits = self.schedule.vector_bits();
        for (name, func) in funcs {
            let key = kernel_key(func);
            if !seen.insert(key) {
                continue;
            }
            let outcome = match db.get(&self.cpu, key) {
                Some(r) if r.vector_bits == bits => KernelOutcome::Reused(r.knobs),
                _ if self.options.trials < 2 => KernelOutcome::Untuned,
                _ => {
                    let seed = self.options.seed ^ key;
                    let cands = candidates(&self.schedule, func, self.options.trials, seed);
                    if cands.len() < 2 {
                        KernelOutcome::Fixed
                    } else {
                        report.measured += cands.len();
                        match measure(func, &cands, &self.options.dims) {
                            Err(e) => KernelOutcome::Failed(e),
                            Ok(outcomes) => {
                                let outcome = choose(&cands, &outcomes);
                                if let KernelOutcome::Tuned {
                                    knobs,
                                    default,
                                    best,
                                    timed,
                                    ..
                                } = &outcome
                                {
                                    db.insert(Record {
                                        cpu: self.cpu.clone(),
                                        kernel: key,
                                        name: name.clone(),
                                        vector_bits: bits,
                                        knobs: *knobs,
                                        default_us: default.as_secs_f64() * 1e6,
                                        best_us: best.as_secs_f64() * 1e6,
                                        candidates: *timed,
                                    });
                                }
                                outcome
                            }
                        }
                    }
                }
            };
            report.kernels.push(KernelReport {
                name: name.clone(),
                key,
                outcome,
            });
        }
        report.elapsed = start.elapsed();
        report
    }
}

/// The kept candidate (module docs): the fastest, when it beats the
/// default by [`MIN_GAIN`], else the default.
fn choose(cands: &[super::space::Candidate], outcomes: &[Outcome]) -> KernelOutcome {
    let time = |k: usize| match outcomes.get(k) {
        Some(Outcome::Time(t)) => Some(*t),
        _ => None,
    };
    let Some(default) = time(0) else {
        return KernelOutcome::Failed("the default was not timed".into());
    };
    let fastest = (0..cands.len())
        .filter_map(|k| time(k).map(|t| (t, k)))
        .min()
        .map_or(0, |(_, k)| k);
    let keep = match time(fastest) {
        Some(t) if t.as_secs_f64() < default.as_secs_f64() * (1.0 - MIN_GAIN) => fastest,
        _ => 0,
    };
    KernelOutcome::Tuned {
        knobs: cands[keep].knobs,
        default,
        best: time(keep).unwrap_or(default),
        timed: (0..cands.len()).filter(|&k| time(k).is_some()).count(),
        rejected: outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Rejected(_)))
            .count(),
    }
}
