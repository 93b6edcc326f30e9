//! The soak test: eight threads share one VM (the seed's MLP compiled by
//! LLVM, symbolic batch) and call it for a given time with a mix of valid
//! and invalid arguments.
//!
//! ```text
//! cargo run --release -p relax-fuzz --bin soak -- --seconds 60
//! ```
//!
//! Every valid call's result is checked against the reference kernels
//! (`Target::interpreter()`, computed once per batch size); every invalid
//! call must be an `Err` naming what is wrong (a wrong dtype, a wrong dim,
//! a missing argument). It prints
//! calls per second, errors and the resident memory at the start (after a
//! warm-up) and at the end, and fails when memory grew by more than 10% or
//! anything was wrong.

use relax::ir::IRModule;
use relax::{DataType, Target, Tensor, Value, VirtualMachine};
use relax_fuzz::rng::Rng;
use relax_fuzz::targets::MLP;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const THREADS: usize = 8;
const BATCHES: [i64; 4] = [1, 3, 16, 33];

fn tensor(shape: &[i64], seed: u64) -> Tensor {
    let n: i64 = shape.iter().product();
    let mut rng = Rng::new(seed);
    let data = (0..n)
        .map(|_| (rng.next_u64() % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    Tensor::from_vec(shape, data).expect("a valid shape")
}

/// Resident memory in bytes (Linux), 0 elsewhere.
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn main() {
    let mut seconds = 30u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--seconds", Some(s)) => seconds = s,
            _ => {
                eprintln!("usage: soak [--seconds N]");
                std::process::exit(2);
            }
        }
    }
    let m: IRModule = MLP.parse().expect("the MLP parses");
    let exec = relax::build(&m, &Target::host()).expect("the MLP builds");
    let oracle = VirtualMachine::new(&relax::build(&m, &Target::interpreter()).expect("builds"));
    let vm = Arc::new(VirtualMachine::new(&exec).with_memory_limit(256 << 20));
    let weights = [
        tensor(&[128, 784], 2),
        tensor(&[128], 3),
        tensor(&[10, 128], 4),
        tensor(&[10], 5),
    ];
    // The valid cases and their expected results.
    let cases: Arc<Vec<(Vec<Value>, Vec<f32>)>> = Arc::new(
        BATCHES
            .iter()
            .map(|&n| {
                let mut args = vec![Value::Tensor(tensor(&[n, 784], n as u64))];
                args.extend(weights.iter().cloned().map(Value::Tensor));
                let want = oracle.call("main", &args).expect("the oracle runs");
                let want = want
                    .as_tensor()
                    .expect("a tensor")
                    .to_vec::<f32>()
                    .expect("f32");
                (args, want)
            })
            .collect(),
    );
    let (calls, errors, wrong) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let run = |duration: Duration| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (vm, cases) = (vm.clone(), cases.clone());
                let (calls, errors, wrong) = (calls.clone(), errors.clone(), wrong.clone());
                std::thread::spawn(move || {
                    let start = Instant::now();
                    let mut i = t;
                    while start.elapsed() < duration {
                        i = i.wrapping_mul(31).wrapping_add(7);
                        let (args, want) = &cases[i % cases.len()];
                        calls.fetch_add(1, Ordering::Relaxed);
                        match i % 6 {
                            // Invalid: each must be an Err naming the problem.
                            0 => {
                                let mut bad = args.clone();
                                bad[2] =
                                    Value::Tensor(Tensor::zeros(DataType::f64(), &[128]).unwrap());
                                check_err(vm.call("main", &bad), "b0", &wrong, &errors);
                            }
                            1 => {
                                let mut bad = args.clone();
                                bad[0] = Value::Tensor(tensor(&[2, 783], 9));
                                check_err(vm.call("main", &bad), "x", &wrong, &errors);
                            }
                            2 => {
                                check_err(vm.call("main", &args[..4]), "argument", &wrong, &errors)
                            }
                            _ => match vm.call("main", args) {
                                Ok(v) => {
                                    let got = v.as_tensor().and_then(|t| t.to_vec::<f32>().ok());
                                    let close = got.is_some_and(|g| {
                                        g.len() == want.len()
                                            && g.iter().zip(want).all(|(a, b)| {
                                                (a - b).abs() <= 1e-3 * (1.0 + b.abs())
                                            })
                                    });
                                    if !close {
                                        wrong.fetch_add(1, Ordering::Relaxed);
                                    }
                                }
                                Err(e) => {
                                    eprintln!("a valid call failed: {e}");
                                    wrong.fetch_add(1, Ordering::Relaxed);
                                }
                            },
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("a soak thread panicked");
        }
    };
    // Warm-up, then measure.
    run(Duration::from_secs(2));
    let rss_start = rss();
    calls.store(0, Ordering::Relaxed);
    errors.store(0, Ordering::Relaxed);
    let start = Instant::now();
    run(Duration::from_secs(seconds));
    let secs = start.elapsed().as_secs_f64();
    let rss_end = rss();
    let (c, e, w) = (
        calls.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
        wrong.load(Ordering::Relaxed),
    );
    println!("threads          {THREADS}");
    println!("seconds          {secs:.1}");
    println!("calls            {c} ({:.0} per second)", c as f64 / secs);
    println!("expected errors  {e}");
    println!("wrong outcomes   {w}");
    println!(
        "resident memory  {:.1} MiB at the start, {:.1} MiB at the end",
        rss_start as f64 / 1048576.0,
        rss_end as f64 / 1048576.0
    );
    let grew = rss_end as f64 > rss_start as f64 * 1.10 + (4 << 20) as f64;
    if w > 0 || grew {
        eprintln!("soak failed: {w} wrong outcomes, memory grew: {grew}");
        std::process::exit(1);
    }
}

/// An invalid call must be an `Err` whose message mentions `names`.
fn check_err(r: Result<Value, relax::Error>, names: &str, wrong: &AtomicU64, errors: &AtomicU64) {
    match r {
        Err(e) if e.to_string().contains(names) => {
            errors.fetch_add(1, Ordering::Relaxed);
        }
        other => {
            eprintln!("an invalid call gave {:?}", other.map(|_| ()));
            wrong.fetch_add(1, Ordering::Relaxed);
        }
    }
}
