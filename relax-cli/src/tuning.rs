//! The tuning options of `relax compile` (`--tune N`, `--tuning-db`,
//! `--tune-dim`) and the database `run` and `bench` read
//! (`relax_core::tune`).

use relax_core::transform::{DefaultSchedule, Knobs};
use relax_core::tune::{default_path, host_cpu_key, Tuning, TuningDatabase};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How `relax compile` tunes: `None` without `--tune` or `--tuning-db`;
/// with `--tune N` (N ≥ 2) the database (`--tuning-db`, or the default
/// path) gains the kernels it lacks; with `--tuning-db` alone it is read.
pub fn options(
    tune: usize,
    db: Option<PathBuf>,
    dims: &[String],
) -> Result<Option<Tuning>, String> {
    if tune == 1 {
        return Err(
            "--tune takes the candidates per kernel, at least 2 (the default is one), found 1"
                .into(),
        );
    }
    if tune == 0 && !dims.is_empty() {
        return Err("--tune-dim binds a symbolic dim while tuning; give --tune N too".into());
    }
    let parsed = parse_dims("--tune-dim", dims)?;
    let mut t = match (tune, db) {
        (0, None) => return Ok(None),
        (0, Some(db)) => Tuning::read_only(db),
        (n, db) => Tuning::measuring(db.unwrap_or_else(default_path), n),
    };
    t.options.dims = parsed;
    Ok(Some(t))
}

/// `NAME=VALUE` pairs (`seq=128`) of the option `flag` (`--tune-dim`,
/// `--bind`): each value a non-negative integer, each name given once.
pub fn parse_dims(flag: &str, dims: &[String]) -> Result<HashMap<String, i64>, String> {
    let mut parsed = HashMap::new();
    for d in dims {
        let (name, value) = d
            .split_once('=')
            .ok_or_else(|| format!("{flag} takes NAME=VALUE, found `{d}`"))?;
        let v: i64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v| *v >= 0)
            .ok_or_else(|| {
                format!("{flag} {name}: the value must be a non-negative integer, found `{value}`")
            })?;
        if parsed.insert(name.trim().to_string(), v).is_some() {
            return Err(format!("{flag} {name}: given twice"));
        }
    }
    Ok(parsed)
}

/// The knobs the database at `path` holds for this machine's CPU and
/// vector width (for `Target::with_tuned_knobs`).
pub fn host_knobs(path: &Path) -> Result<HashMap<u64, Knobs>, String> {
    let db = TuningDatabase::load(path)?;
    let bits = DefaultSchedule::for_host().vector_bits();
    Ok(db.knobs_for(&host_cpu_key(), bits))
}
