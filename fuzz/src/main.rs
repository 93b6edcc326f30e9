//! `relax-fuzz`: stable-Rust fuzzing of what a user's input reaches.
//!
//! ```text
//! cargo run --release -p relax-fuzz -- --seconds 600            # every target, 600 s each
//! cargo run -p relax-fuzz -- --seconds 20 --target parser       # one target
//! cargo run -p relax-fuzz -- --write-seeds                      # regenerate fuzz/corpus/executable
//! ```
//!
//! 1. Each target (`targets.rs`) starts from its seed corpus
//!    (`fuzz/corpus/<target>/`, plus the repository's round-trip texts for
//!    the parser, the backend cases' models for `onnx`, and the seeds
//!    `onnx-external` writes itself) and from every input that ever
//!    crashed (`fuzz/regressions/<target>/`).
//! 2. Inputs are mutated (`mutate.rs`: bytes, splices, the target's
//!    dictionary; `onnx-external`'s two files one at a time) and run
//!    under `catch_unwind`. This is mutation fuzzing
//!    without coverage feedback: stable Rust has no sanitizer coverage,
//!    and the dictionaries take the text targets past their lexers.
//! 3. A panic, or an `Err` from the target, is a crash: the input is saved
//!    to `fuzz/regressions/<target>/<hash>` (which the test
//!    `regressions_do_not_crash` replays on every `cargo test`) and the run
//!    goes on. The summary prints executions, executions per second, the
//!    share of inputs that got past the target's first check ("reached")
//!    and crashes per target; the exit status is 1 when anything crashed.
//!
//! The command line is three flags, parsed by hand: no dependency for that.

use relax_fuzz::rng::Rng;
use relax_fuzz::targets;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use targets::FuzzTarget;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Every file of `dir` (none if it does not exist), sorted by name.
fn read_dir(dir: &Path) -> Vec<Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    paths
        .iter()
        .filter(|p| p.is_file())
        .filter_map(|p| std::fs::read(p).ok())
        .collect()
}

/// The seeds of `target`: its corpus, its regressions, the ones it makes
/// itself, and for the parser the round-trip texts of the repository.
pub fn seeds(t: &dyn FuzzTarget) -> Vec<Vec<u8>> {
    let target = t.name();
    let root = fuzz_dir();
    let mut out = read_dir(&root.join("corpus").join(target));
    out.extend(t.seeds());
    out.extend(read_dir(&root.join("regressions").join(target)));
    if target == "parser" {
        out.extend(read_dir(&root.join("../relax-core/tests/roundtrip")));
    }
    if target == "onnx" {
        // The committed ONNX backend cases' models.
        let data = root.join("../relax-onnx/tests/data");
        if let Ok(entries) = std::fs::read_dir(&data) {
            let mut models: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path().join("model.onnx")))
                .filter(|p| p.is_file())
                .collect();
            models.sort();
            out.extend(models.iter().filter_map(|p| std::fs::read(p).ok()));
        }
    }
    if out.is_empty() {
        out.push(Vec::new());
    }
    out
}

/// Runs one input: `Err` with the panic message or the target's error.
pub fn run_one(target: &dyn FuzzTarget, input: &[u8]) -> Result<bool, String> {
    match catch_unwind(AssertUnwindSafe(|| target.run(input))) {
        Ok(r) => r,
        Err(payload) => Err(payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into())),
    }
}

struct Report {
    name: &'static str,
    execs: u64,
    /// Inputs that got past the target's first check.
    reached: u64,
    secs: f64,
    crashes: Vec<String>,
}

fn fuzz(target: &dyn FuzzTarget, budget: Duration, seed: u64) -> Report {
    let mut corpus = seeds(target);
    let mut rng = Rng::new(seed);
    let mut crashes = Vec::new();
    let mut execs = 0u64;
    let mut reached = 0u64;
    let start = Instant::now();
    // The seeds themselves first.
    let mut queue: Vec<Vec<u8>> = corpus.clone();
    while start.elapsed() < budget {
        let input = match queue.pop() {
            Some(i) => i,
            None => {
                let base = &corpus[rng.below(corpus.len())];
                target.mutate(base, &corpus, &mut rng)
            }
        };
        execs += 1;
        let outcome = run_one(target, &input);
        reached += u64::from(outcome == Ok(true));
        if let Err(why) = outcome {
            let mut h = DefaultHasher::new();
            input.hash(&mut h);
            let dir = fuzz_dir().join("regressions").join(target.name());
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(format!("{:016x}", h.finish()));
            let _ = std::fs::write(&path, &input);
            let first = why.lines().next().unwrap_or("").to_string();
            eprintln!(
                "{}: crash saved to {}: {first}",
                target.name(),
                path.display()
            );
            crashes.push(first);
            continue;
        }
        // Keep some mutants that got past the first check as bases: the
        // only feedback there is without coverage, it lets the corpus drift
        // toward deeper inputs without filling up with garbage.
        if outcome == Ok(true) && rng.one_in(16) && corpus.len() < 4096 {
            corpus.push(input);
        }
    }
    Report {
        name: target.name(),
        execs,
        reached,
        secs: start.elapsed().as_secs_f64(),
        crashes,
    }
}

fn write_seeds() {
    let dir = fuzz_dir().join("corpus").join("executable");
    std::fs::create_dir_all(&dir).expect("the corpus directory");
    for (i, text) in targets::VM_MODULES.iter().enumerate() {
        let m: relax::ir::IRModule = text.parse().expect("parses");
        let exec = relax::build(&m, &relax::Target::interpreter()).expect("builds");
        let path = dir.join(format!("module{i}.relaxvm"));
        std::fs::write(&path, exec.to_bytes()).expect("written");
        println!("wrote {}", path.display());
    }
}

fn usage() -> ! {
    eprintln!("usage: relax-fuzz [--seconds N] [--target parser|executable|vm|frontend|onnx|onnx-external] [--seed N] | --write-seeds");
    std::process::exit(2)
}

fn main() {
    let mut seconds = 20u64;
    let mut only: Option<String> = None;
    let mut seed = 1u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--seconds" => seconds = value().parse().unwrap_or_else(|_| usage()),
            "--target" => only = Some(value()),
            "--seed" => seed = value().parse().unwrap_or_else(|_| usage()),
            "--write-seeds" => return write_seeds(),
            _ => usage(),
        }
    }
    // Panics are caught and reported per input; the default hook would
    // print each one.
    std::panic::set_hook(Box::new(|_| {}));
    let all = targets::all();
    if let Some(name) = &only {
        if !all.iter().any(|t| t.name() == name) {
            usage();
        }
    }
    let mut crashed = false;
    println!(
        "{:<12}{:>12}{:>10}{:>12}{:>9}{:>9}",
        "target", "executions", "seconds", "per second", "reached", "crashes"
    );
    for t in all
        .iter()
        .filter(|t| only.as_deref().is_none_or(|n| n == t.name()))
    {
        let r = fuzz(t.as_ref(), Duration::from_secs(seconds), seed);
        crashed |= !r.crashes.is_empty();
        println!(
            "{:<12}{:>12}{:>10.1}{:>12.0}{:>8.1}%{:>9}",
            r.name,
            r.execs,
            r.secs,
            r.execs as f64 / r.secs.max(1e-9),
            100.0 * r.reached as f64 / r.execs.max(1) as f64,
            r.crashes.len()
        );
        let mut kinds = r.crashes.clone();
        kinds.sort();
        kinds.dedup();
        for k in kinds {
            println!("    {k}");
        }
    }
    if crashed {
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relax_fuzz::mutate;

    /// Every seed and every saved crash of every target runs without a
    /// panic or an error: a crash the fuzzer ever found stays fixed.
    #[test]
    fn regressions_do_not_crash() {
        for t in targets::all() {
            for input in seeds(t.as_ref()) {
                if let Err(why) = run_one(t.as_ref(), &input) {
                    panic!(
                        "{}: {why}\ninput: {:?}",
                        t.name(),
                        String::from_utf8_lossy(&input)
                    );
                }
            }
        }
    }

    /// The onnx-external seeds import (they reach past the first check),
    /// and a few hundred mutants of them, the data file or the model,
    /// import or fail without a panic.
    #[test]
    fn external_data_mutants_do_not_crash() {
        let all = targets::all();
        let t = all
            .iter()
            .find(|t| t.name() == "onnx-external")
            .expect("the onnx-external target");
        let corpus = t.seeds();
        for seed in &corpus {
            assert_eq!(run_one(t.as_ref(), seed), Ok(true));
        }
        let mut rng = Rng::new(3);
        for i in 0..300 {
            let input = t.mutate(&corpus[i % corpus.len()], &corpus, &mut rng);
            if let Err(why) = run_one(t.as_ref(), &input) {
                panic!("mutant {i}: {why}");
            }
        }
    }

    #[test]
    fn two_file_inputs_split_as_joined() {
        let joined = mutate::join(b"model", b"data");
        assert_eq!(mutate::split(&joined), (&b"model"[..], &b"data"[..]));
        assert_eq!(mutate::split(b"ab"), (&b"ab"[..], &b""[..]));
        assert_eq!(mutate::split(b"\xff\0\0\0xy"), (&b"xy"[..], &b""[..]));
    }

    #[test]
    fn mutation_is_deterministic_and_bounded() {
        let corpus = vec![b"abc".to_vec(), b"R.add(x, y)".to_vec()];
        let run = |seed| {
            let mut rng = Rng::new(seed);
            (0..200)
                .map(|_| mutate::mutate(&corpus[1], &corpus, &["R."], seed % 2 == 0, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert!(run(7).iter().all(|m| m.len() <= 1 << 16));
        assert_ne!(run(7), run(8));
    }
}
