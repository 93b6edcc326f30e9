//! The int8 GEMM rows, `gemm_int8_n`: relax-rs' `R.matmul` of a `uint8`
//! and an `int8` `n × n` matrix into `int32` (the product of a quantized
//! model, on `vpdpbusd` where the CPU has AVX512-VNNI), for n in 512, 1024
//! and 2048, timed in interleaved rounds with relax-rs' float32 GEMM of the
//! same size. Each row prints the int8 GEMM's throughput (two operations
//! per byte product, as a GEMM's flops count them), its fraction of the
//! int8 dot-product peak measured in the same run (`limits::int8_peak`),
//! and its speed over the float32 GEMM's. None of the peers has an int8
//! matrix product.

use crate::{arr2, relax_models, timing, tv};
use relax::{Tensor, Value};
use std::hint::black_box;

/// The sizes of the `gemm_int8_n` rows.
pub const SIZES: [usize; 3] = [512, 1024, 2048];

/// One row: seconds per call of the int8 and the float32 GEMM.
pub struct Row {
    name: String,
    n: usize,
    int8: f64,
    f32: f64,
}

/// Deterministic bytes covering the whole range of `u8`.
fn bytes(n: usize, seed: u64) -> Vec<u8> {
    crate::data(n, seed)
        .into_iter()
        .map(|v| ((v + 1.0) * 127.9) as u8)
        .collect()
}

/// The rows `wanted` lets through.
pub fn rows(rounds: usize, wanted: &dyn Fn(&str) -> bool) -> Vec<Row> {
    let names: Vec<(usize, String)> = SIZES
        .iter()
        .map(|&n| (n, format!("gemm_int8_{n}")))
        .filter(|(_, name)| wanted(name))
        .collect();
    if names.is_empty() {
        return Vec::new();
    }
    let int8 = relax_models::compile(relax_models::MATMUL_INT8);
    let float = relax_models::compile(relax_models::MATMUL);
    names
        .into_iter()
        .map(|(n, name)| {
            let a = bytes(n * n, 40);
            let b: Vec<i8> = bytes(n * n, 41).into_iter().map(|v| v as i8).collect();
            let dims = [n as i64, n as i64];
            let args: [Value; 2] = [
                Tensor::from_vec(&dims, a.clone()).expect("a").into(),
                Tensor::from_vec(&dims, b.clone()).expect("b").into(),
            ];
            let got = int8
                .call("main", &args)
                .expect("relax-rs runs the int8 matmul");
            let got = got
                .as_tensor()
                .expect("a tensor")
                .to_vec::<i32>()
                .expect("i32");
            // Three rows checked against the plain sum.
            for i in [0, n / 2, n - 1] {
                for j in 0..n {
                    let want = (0..n).fold(0i32, |s, k| {
                        s.wrapping_add(i32::from(a[i * n + k]) * i32::from(b[k * n + j]))
                    });
                    assert_eq!(got[i * n + j], want, "{name}: element ({i}, {j})");
                }
            }
            let (fa, fb) = (arr2(n, n, 20), arr2(n, n, 21));
            let fargs = [tv(&fa), tv(&fb)];
            let mut q = || {
                black_box(int8.call("main", &args).expect("call"));
            };
            let mut f = || {
                black_box(float.call("main", &fargs).expect("call"));
            };
            let rounds = if n >= 1024 { rounds.min(7) } else { rounds };
            let times = timing::interleaved(rounds, &mut [&mut q, &mut f]);
            Row {
                name,
                n,
                int8: times[0],
                f32: times[1],
            }
        })
        .collect()
}

/// The rows' table, against `peak` (int8 operations per second, and how
/// it was measured) when the CPU has one.
pub fn print(rows: &[Row], peak: Option<(f64, String)>) {
    if rows.is_empty() {
        return;
    }
    match &peak {
        Some((ops, how)) => println!("int8 peak: {:.0} GOPS ({how})", ops / 1e9),
        None => println!("int8 peak: none measured (no AVX512-VNNI)"),
    }
    println!(
        "{:<15} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "µs/call", "int8", "f32", "int8 GOPS", "of peak", "vs f32 GEMM"
    );
    for row in rows {
        let ops = 2.0 * (row.n as f64).powi(3);
        let gops = ops / row.int8 / 1e9;
        let of_peak = match &peak {
            Some((p, _)) => format!("{:.2}", ops / row.int8 / p),
            None => "-".into(),
        };
        println!(
            "{:<15} {:>10.1} {:>10.1} {:>10.0} {:>10} {:>11.2}×",
            row.name,
            row.int8 * 1e6,
            row.f32 * 1e6,
            gops,
            of_peak,
            row.f32 / row.int8
        );
    }
    println!(
        "(int8: uint8 × int8 → int32; f32: the float32 GEMM of the same size in the same rounds;"
    );
    println!(" of peak: the int8 GEMM's operations per second over the vpdpbusd peak)");
}
