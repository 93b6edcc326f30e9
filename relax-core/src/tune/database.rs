//! The tuning database: the best knobs measured for each kernel on each
//! CPU, as a JSON file that later builds read instead of measuring.
//!
//! A record is keyed by the CPU (`cpu`: LLVM's name of the host CPU and a
//! hash of its feature string, [`super::host_cpu_key`]) and the kernel
//! (`kernel`: [`kernel_key`](crate::transform::kernel_key),
//! the structural hash of the unscheduled PrimFunc, as 16 hex digits). It
//! holds the knobs, the vector width they were measured for, and what
//! the measurement found (the default's and the best time in
//! microseconds, the candidates timed), which is informative only.
//!
//! ```json
//! {
//!   "format": "relax-tuning-db",
//!   "version": 1,
//!   "records": [
//!     {
//!       "cpu": "znver4/8c3f0d1e2a4b5c6d",
//!       "kernel": "4f1c2a9b0d3e5f60",
//!       "name": "fused_matmul_add",
//!       "vector_bits": 512,
//!       "knobs": {"gemm_mr": 8, "gemm_nr_vectors": 2, "gemm_kc": 2048, "gemm_mc": 48,
//!                 "gemm_nc": 1024, "window_kc": 256, "window_mc": 96, "window_nc": 512,
//!                 "conv_rows": 0, "parallel_chunk": 4096, "reduction_rows": 0},
//!       "default_us": 812.5, "best_us": 701.0, "candidates": 8
//!     }
//!   ]
//! }
//! ```
//!
//! Reading checks everything: a malformed file, a record without a field
//! or with a knob the schedules do not take is an error naming the record,
//! the field, what it must be and what it is. `reduction_rows` alone may
//! be missing (0, the rule's choice), as in databases written before it
//! was a knob.

use crate::transform::{Blocking, Knobs};
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The value of the file's `format` field.
pub const FORMAT: &str = "relax-tuning-db";
/// The schema version this code reads and writes.
pub const VERSION: i64 = 1;

/// What tuning found for one kernel on one CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The CPU ([`super::host_cpu_key`]).
    pub cpu: String,
    /// The kernel ([`crate::transform::kernel_key`]).
    pub kernel: u64,
    /// The kernel's name when it was tuned (informative).
    pub name: String,
    /// The vector width the knobs were measured with.
    pub vector_bits: u32,
    /// The best knobs.
    pub knobs: Knobs,
    /// The default knobs' time, in microseconds.
    pub default_us: f64,
    /// The best knobs' time, in microseconds.
    pub best_us: f64,
    /// How many distinct candidates were timed.
    pub candidates: usize,
}

/// Records by CPU and kernel. See the module docs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TuningDatabase {
    records: BTreeMap<(String, u64), Record>,
}

impl TuningDatabase {
    /// An empty database.
    pub fn new() -> Self {
        Self::default()
    }

    /// The database at `path`; an error when it cannot be read or is not
    /// a valid database.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("tuning database {}: {e}", path.display()))?;
        Self::from_json(&text).map_err(|e| format!("tuning database {}: {e}", path.display()))
    }

    /// [`TuningDatabase::load`], or an empty database when there is no
    /// file at `path` yet.
    pub fn load_or_new(path: &Path) -> Result<Self, String> {
        if path.exists() {
            Self::load(path)
        } else {
            Ok(Self::new())
        }
    }

    /// Writes the database to `path` (its folder created when missing),
    /// through a temporary file renamed over it, so a reader never sees
    /// half a file.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let err = |e: std::io::Error| format!("tuning database {}: {e}", path.display());
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, self.to_json()).map_err(err)?;
        std::fs::rename(&tmp, path).map_err(err)
    }

    /// The record of `kernel` on `cpu`.
    pub fn get(&self, cpu: &str, kernel: u64) -> Option<&Record> {
        self.records.get(&(cpu.to_string(), kernel))
    }

    /// Adds `record`, replacing the one of its CPU and kernel.
    pub fn insert(&mut self, record: Record) {
        self.records
            .insert((record.cpu.clone(), record.kernel), record);
    }

    /// How many records there are.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Every record, by CPU and kernel.
    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.records.values()
    }

    /// The knobs of every kernel tuned on `cpu` for vectors of
    /// `vector_bits`, by kernel: what `DefaultSchedule::with_tuned` takes.
    pub fn knobs_for(&self, cpu: &str, vector_bits: u32) -> HashMap<u64, Knobs> {
        self.records
            .values()
            .filter(|r| r.cpu == cpu && r.vector_bits == vector_bits)
            .map(|r| (r.kernel, r.knobs))
            .collect()
    }

    /// The database as JSON text (module docs).
    pub fn to_json(&self) -> String {
        let records: Vec<Json> = self.records.values().map(record_json).collect();
        let doc = json!({"format": FORMAT, "version": VERSION, "records": records});
        serde_json::to_string_pretty(&doc).expect("a JSON value always serializes")
    }

    /// The database in `text` (module docs), every field checked.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let doc: Json = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
        if doc.get("format").and_then(Json::as_str) != Some(FORMAT) {
            return Err(format!(
                "`format` must be {FORMAT:?}, found {}",
                found(doc.get("format"))
            ));
        }
        let version = doc.get("version").and_then(integer);
        if version != Some(VERSION) {
            return Err(format!(
                "`version` must be {VERSION}, found {}",
                found(doc.get("version"))
            ));
        }
        let Some(Json::Array(items)) = doc.get("records") else {
            return Err(format!(
                "`records` must be an array, found {}",
                found(doc.get("records"))
            ));
        };
        let mut db = TuningDatabase::new();
        for (i, item) in items.iter().enumerate() {
            let r = read_record(item).map_err(|e| format!("record {i}: {e}"))?;
            db.insert(r);
        }
        Ok(db)
    }
}

/// The default database: `$RELAX_TUNING_DB` when set, else
/// `$XDG_CACHE_HOME/relax/tuning.json`, else
/// `$HOME/.cache/relax/tuning.json`, else `relax-tuning.json` in the
/// working directory.
pub fn default_path() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(p) = var("RELAX_TUNING_DB") {
        return PathBuf::from(p);
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("relax").join("tuning.json");
    }
    if let Some(h) = var("HOME") {
        return PathBuf::from(h)
            .join(".cache")
            .join("relax")
            .join("tuning.json");
    }
    PathBuf::from("relax-tuning.json")
}

/// A value as an error message shows it.
fn found(v: Option<&Json>) -> String {
    match v {
        None => "nothing".into(),
        Some(Json::String(s)) => format!("{s:?}"),
        Some(Json::Number(n)) => format!("{n}"),
        Some(Json::Bool(b)) => format!("{b}"),
        Some(Json::Null) => "null".into(),
        Some(Json::Array(_)) => "an array".into(),
        Some(Json::Object(_)) => "an object".into(),
    }
}

/// The knob a record may lack, read as 0 (the rule's choice): databases
/// written before it was a knob.
const OPTIONAL_KNOB: &str = "reduction_rows";

/// The knob fields, in the order of [`Knobs`].
const KNOB_FIELDS: [&str; 11] = [
    "gemm_mr",
    "gemm_nr_vectors",
    "gemm_kc",
    "gemm_mc",
    "gemm_nc",
    "window_kc",
    "window_mc",
    "window_nc",
    "conv_rows",
    "parallel_chunk",
    "reduction_rows",
];

fn knob_values(k: &Knobs) -> [i64; 11] {
    [
        k.gemm_mr,
        k.gemm_nr_vectors,
        k.gemm_blocking.kc,
        k.gemm_blocking.mc,
        k.gemm_blocking.nc,
        k.window_blocking.kc,
        k.window_blocking.mc,
        k.window_blocking.nc,
        k.conv_rows,
        k.parallel_chunk,
        k.reduction_rows,
    ]
}

/// An integer: a JSON number without a fraction that fits an `i64`
/// (`6` and `6.0` alike).
fn integer(v: &Json) -> Option<i64> {
    v.as_i64().or_else(|| {
        let n = v.as_f64()?;
        (n.fract() == 0.0 && n.abs() < 9.0e15).then_some(n as i64)
    })
}

fn record_json(r: &Record) -> Json {
    let knobs: BTreeMap<&str, i64> = KNOB_FIELDS
        .iter()
        .copied()
        .zip(knob_values(&r.knobs))
        .collect();
    let round = |us: f64| (us * 1000.0).round() / 1000.0;
    json!({
        "cpu": r.cpu,
        "kernel": format!("{:016x}", r.kernel),
        "name": r.name,
        "vector_bits": r.vector_bits,
        "knobs": knobs,
        "default_us": round(r.default_us),
        "best_us": round(r.best_us),
        "candidates": r.candidates,
    })
}

fn read_record(item: &Json) -> Result<Record, String> {
    let string = |name: &str| {
        item.get(name)
            .and_then(Json::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("`{name}` must be a string, found {}", found(item.get(name))))
    };
    let number = |name: &str| {
        item.get(name)
            .and_then(Json::as_f64)
            .filter(|v| *v >= 0.0)
            .ok_or_else(|| {
                format!(
                    "`{name}` must be a number of at least 0, found {}",
                    found(item.get(name))
                )
            })
    };
    let kernel_text = string("kernel")?;
    let kernel = (kernel_text.len() == 16)
        .then(|| u64::from_str_radix(&kernel_text, 16).ok())
        .flatten()
        .ok_or_else(|| format!("`kernel` must be 16 hex digits, found {kernel_text:?}"))?;
    let vector_bits = item
        .get("vector_bits")
        .and_then(integer)
        .filter(|b| matches!(b, 128 | 256 | 512))
        .ok_or_else(|| {
            format!(
                "`vector_bits` must be 128, 256 or 512, found {}",
                found(item.get("vector_bits"))
            )
        })? as u32;
    let knobs_json = item.get("knobs");
    if !matches!(knobs_json, Some(Json::Object(_))) {
        return Err(format!(
            "`knobs` must be an object, found {}",
            found(knobs_json)
        ));
    }
    let mut v = [0i64; 11];
    for (slot, name) in v.iter_mut().zip(KNOB_FIELDS) {
        let x = knobs_json.and_then(|k| k.get(name));
        if x.is_none() && name == OPTIONAL_KNOB {
            continue;
        }
        *slot = x
            .and_then(integer)
            .ok_or_else(|| format!("`knobs.{name}` must be an integer, found {}", found(x)))?;
    }
    let knobs = Knobs {
        gemm_mr: v[0],
        gemm_nr_vectors: v[1],
        gemm_blocking: Blocking {
            kc: v[2],
            mc: v[3],
            nc: v[4],
        },
        window_blocking: Blocking {
            kc: v[5],
            mc: v[6],
            nc: v[7],
        },
        conv_rows: v[8],
        parallel_chunk: v[9],
        reduction_rows: v[10],
    };
    knobs
        .check(vector_bits)
        .map_err(|e| format!("`knobs`: {e}"))?;
    let candidates = number("candidates")?;
    Ok(Record {
        cpu: string("cpu")?,
        kernel,
        name: string("name")?,
        vector_bits,
        knobs,
        default_us: number("default_us")?,
        best_us: number("best_us")?,
        candidates: candidates as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kernel: u64, mr: i64) -> Record {
        Record {
            cpu: "znver4/0011223344556677".into(),
            kernel,
            name: "fused_matmul".into(),
            vector_bits: 512,
            knobs: Knobs {
                gemm_mr: mr,
                ..Knobs::default()
            },
            default_us: 10.5,
            best_us: 9.25,
            candidates: 8,
        }
    }

    #[test]
    fn a_database_round_trips_through_its_file() {
        let mut db = TuningDatabase::new();
        db.insert(record(0xdead_beef_0000_0001, 8));
        db.insert(record(u64::MAX, 4));
        let dir = std::env::temp_dir().join(format!("relax-tune-db-{}", std::process::id()));
        let path = dir.join("sub").join("tuning.json");
        db.save(&path).unwrap();
        let back = TuningDatabase::load(&path).unwrap();
        assert_eq!(back, db);
        let knobs = back.knobs_for("znver4/0011223344556677", 512);
        assert_eq!(knobs[&u64::MAX].gemm_mr, 4);
        assert!(back.knobs_for("znver4/0011223344556677", 256).is_empty());
        assert!(back.knobs_for("other", 512).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_files_are_errors_naming_the_field() {
        let mut db = TuningDatabase::new();
        db.insert(record(7, 6));
        let good = db.to_json();
        for (from, to, says) in [
            ("\"relax-tuning-db\"", "\"other\"", "`format` must be"),
            (
                "\"version\": 1",
                "\"version\": 2",
                "`version` must be 1, found 2",
            ),
            (
                "\"gemm_mr\": 6",
                "\"gemm_mr\": 40",
                "record 0: `knobs`: gemm_mr must be in 1..=32, found 40",
            ),
            (
                "\"gemm_mr\": 6",
                "\"gemm_mr\": 6.5",
                "`knobs.gemm_mr` must be an integer, found 6.5",
            ),
            (
                "\"kernel\": \"0000000000000007\"",
                "\"kernel\": \"7\"",
                "`kernel` must be 16 hex digits",
            ),
            (
                "\"vector_bits\": 512",
                "\"vector_bits\": 100",
                "`vector_bits` must be 128, 256 or 512",
            ),
            (
                "\"best_us\": 9.25",
                "\"best_us\": -1",
                "`best_us` must be a number of at least 0",
            ),
            (
                "\"reduction_rows\": 0",
                "\"reduction_rows\": 30",
                "reduction_rows must be 0 (the rule's) or a row count up to 24, found 30",
            ),
        ] {
            assert!(good.contains(from), "{from}\n{good}");
            let e = TuningDatabase::from_json(&good.replace(from, to)).unwrap_err();
            assert!(e.contains(says), "{from} -> {to}: {e}");
        }
        // A database written before `reduction_rows` was a knob reads it
        // as the rule's choice.
        let older = good
            .replace("\"reduction_rows\": 0,", "")
            .replace(",\n        \"reduction_rows\": 0", "");
        assert!(!older.contains("reduction_rows"), "{older}");
        let back = TuningDatabase::from_json(&older).unwrap();
        assert_eq!(back, db);
        assert!(TuningDatabase::from_json("{")
            .unwrap_err()
            .contains("invalid JSON"));
        let missing = TuningDatabase::load(Path::new("/nonexistent/relax/tuning.json"));
        assert!(missing
            .unwrap_err()
            .contains("/nonexistent/relax/tuning.json"));
    }
}
