//! relax-rs against its peers: candle, ndarray and numpy, on the seed's MLP
//! and on the ops fusion and kernels are about, every figure from one run.
//!
//! ```text
//! cargo run --release --manifest-path examples/peers/Cargo.toml [-- --rounds N] [--only ROW_PREFIX]
//! PEERS_PYTHON=.venv/bin/python cargo run --release --manifest-path examples/peers/Cargo.toml
//! ```
//!
//! Rows: the MLP 784-128-10 (f32, weights passed as parameters) at batch 1,
//! 16, 64 and 256; softmax over 64×1000; layer norm over 64×768; `relu(x + y)`
//! over 4M floats; a three-op elementwise chain `relu((x + y) * z)` over 4M
//! floats; a 4096×4096 transpose; the row and the column sums of a
//! 4096×1024 matrix; square matrix products (`gemm_n`, n from 64 to 2048, one
//! symbolic-shape module for all of them); three convolutions (`conv_resnet`:
//! 1×64×56×56 with 64 filters of 3×3, padding 1; `conv_first`: 1×3×224×224
//! with 64 filters of 7×7, stride 2, padding 3) and a depthwise one
//! (`conv_depthwise`: 1×144×56×56, one 3×3 filter per channel, padding 1),
//! against candle only
//! (ndarray and numpy have no convolution); int8 matrix products
//! (`gemm_int8_n`, `int8.rs`) against the int8 peak and relax-rs' float32
//! GEMM. The Rust peers run in this process in interleaved rounds
//! (`timing.rs`); numpy runs in a child process right after (`numpy.rs`).
//! Each row prints every peer's median time per call, relax-rs' speed
//! relative to the best peer (above 1.00 means relax-rs is faster), and the
//! row's limit on this machine (`limits.rs`: the roofline of its flops at
//! the measured FMA peak and a plain copy of its bytes timed in the same
//! run; for the bandwidth-bound rows, in the row's own interleaved
//! rounds) with the fraction of it relax-rs reaches. relax-rs
//! is timed through `VirtualMachine::call` (argument checks and output
//! allocation included), with inputs converted to tensors once, as a
//! serving loop would hold them.

mod int8;
mod numpy;
mod reduced;
mod relax_models;
mod timing;

use peers::limits;

use candle_core::{Device, Tensor as CTensor};
use ndarray::{Array1, Array2, Axis};
use relax::{Tensor, Value};
use std::collections::BTreeMap;
use std::hint::black_box;

/// Deterministic pseudo-random data in [-1, 1).
fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

fn arr2(r: usize, c: usize, seed: u64) -> Array2<f32> {
    Array2::from_shape_vec((r, c), data(r * c, seed)).expect("shape")
}

fn arr1(n: usize, seed: u64) -> Array1<f32> {
    Array1::from_vec(data(n, seed))
}

fn ct2(a: &Array2<f32>) -> CTensor {
    let (r, c) = a.dim();
    CTensor::from_slice(a.as_slice().expect("standard layout"), (r, c), &Device::Cpu)
        .expect("candle tensor")
}

fn ct1(a: &Array1<f32>) -> CTensor {
    CTensor::from_slice(
        a.as_slice().expect("standard layout"),
        a.len(),
        &Device::Cpu,
    )
    .expect("candle tensor")
}

fn tv<D: ndarray::Dimension>(a: &ndarray::Array<f32, D>) -> Value {
    Value::Tensor(Tensor::from_ndarray(a))
}

/// One row's times: relax-rs, candle, ndarray (seconds per call), and
/// its work; for a bandwidth-bound row, a plain copy of its bytes timed
/// in the same rounds (the fourth time).
struct Row {
    name: String,
    times: Vec<f64>,
    work: limits::Work,
}

impl Row {
    /// The copy timed in the row's rounds, if it timed one.
    fn copied(&self) -> Option<f64> {
        self.times.get(3).copied()
    }
}

/// `flops` and the bytes of `floats` `float32` values.
fn work(flops: f64, floats: usize) -> limits::Work {
    limits::Work {
        flops,
        bytes: 4.0 * floats as f64,
    }
}

fn relu(v: f32) -> f32 {
    v.max(0.0)
}

fn mlp_row(batch: usize, rounds: usize) -> Row {
    let x = arr2(batch, 784, 1);
    let (w0, b0, w1, b1) = (
        arr2(128, 784, 2),
        arr1(128, 3),
        arr2(10, 128, 4),
        arr1(10, 5),
    );
    let vm = relax_models::compile(relax_models::MLP);
    let args = [tv(&x), tv(&w0), tv(&b0), tv(&w1), tv(&b1)];
    let (cx, cw0, cb0, cw1, cb1) = (ct2(&x), ct2(&w0), ct1(&b0), ct2(&w1), ct1(&b1));
    // The three agree before anything is timed.
    let want = (x.dot(&w0.t()) + &b0).mapv_into(relu).dot(&w1.t()) + &b1;
    let got = vm.call("main", &args).expect("relax-rs runs the MLP");
    let got = got
        .as_tensor()
        .expect("a tensor")
        .to_ndarray::<f32>()
        .expect("f32");
    let err = (&got - &want.clone().into_dyn())
        .mapv(f32::abs)
        .fold(0.0f32, |a, &b| a.max(b));
    assert!(err < 1e-2, "relax-rs differs from ndarray by {err}");
    let mut r = || {
        black_box(vm.call("main", &args).expect("call"));
    };
    let mut c = || {
        let h = cx
            .matmul(&cw0.t().unwrap())
            .unwrap()
            .broadcast_add(&cb0)
            .unwrap()
            .relu()
            .unwrap();
        black_box(
            h.matmul(&cw1.t().unwrap())
                .unwrap()
                .broadcast_add(&cb1)
                .unwrap(),
        );
    };
    let mut n = || {
        black_box((x.dot(&w0.t()) + &b0).mapv_into(relu).dot(&w1.t()) + &b1);
    };
    Row {
        name: format!("mlp_b{batch}"),
        times: timing::interleaved(rounds, &mut [&mut r, &mut c, &mut n]),
        work: work(
            2.0 * batch as f64 * (784.0 * 128.0 + 128.0 * 10.0),
            batch * 784 + 128 * 784 + 128 + 10 * 128 + 10 + batch * 10,
        ),
    }
}

fn softmax_row(rounds: usize) -> Row {
    let x = arr2(64, 1000, 6);
    let vm = relax_models::compile(relax_models::SOFTMAX);
    let args = [tv(&x)];
    let cx = ct2(&x);
    let mut r = || {
        black_box(vm.call("main", &args).expect("call"));
    };
    let mut c = || {
        black_box(candle_nn::ops::softmax_last_dim(&cx).unwrap());
    };
    let mut n = || {
        let m = x.fold_axis(Axis(1), f32::NEG_INFINITY, |a, &b| a.max(b));
        let e = (&x - &m.insert_axis(Axis(1))).mapv_into(f32::exp);
        let s = e.sum_axis(Axis(1));
        black_box(e / &s.insert_axis(Axis(1)));
    };
    Row {
        name: "softmax".into(),
        times: timing::interleaved(rounds, &mut [&mut r, &mut c, &mut n]),
        work: work(0.0, 2 * 64 * 1000),
    }
}

fn layer_norm_row(rounds: usize) -> Row {
    let (x, g, b) = (arr2(64, 768, 7), arr1(768, 8), arr1(768, 9));
    let vm = relax_models::compile(relax_models::LAYER_NORM);
    let args = [tv(&x), tv(&g), tv(&b)];
    let (cx, cg, cb) = (ct2(&x), ct1(&g), ct1(&b));
    let mut r = || {
        black_box(vm.call("main", &args).expect("call"));
    };
    let mut c = || {
        black_box(candle_nn::ops::layer_norm(&cx, &cg, &cb, 1e-5).unwrap());
    };
    let mut n = || {
        let m = x
            .mean_axis(Axis(1))
            .expect("non-empty")
            .insert_axis(Axis(1));
        let d = &x - &m;
        let v = (&d * &d)
            .mean_axis(Axis(1))
            .expect("non-empty")
            .insert_axis(Axis(1));
        black_box(d / &v.mapv_into(|v| (v + 1e-5).sqrt()) * &g + &b);
    };
    Row {
        name: "layer_norm".into(),
        times: timing::interleaved(rounds, &mut [&mut r, &mut c, &mut n]),
        work: work(0.0, 2 * 64 * 768 + 2 * 768),
    }
}

fn elementwise_rows(rounds: usize) -> Vec<Row> {
    let n = 1 << 22;
    let (x, y, z) = (arr1(n, 10), arr1(n, 11), arr1(n, 12));
    let (cx, cy, cz) = (ct1(&x), ct1(&y), ct1(&z));
    let add_relu = relax_models::compile(relax_models::ADD_RELU);
    let chain = relax_models::compile(relax_models::CHAIN3);
    let (a2, a3) = ([tv(&x), tv(&y)], [tv(&x), tv(&y), tv(&z)]);
    let mut r = || {
        black_box(add_relu.call("main", &a2).expect("call"));
    };
    let mut c = || {
        black_box(cx.add(&cy).unwrap().relu().unwrap());
    };
    let mut nd = || {
        black_box((&x + &y).mapv_into(relu));
    };
    let w = work(0.0, 3 * n);
    let mut copy = limits::Copy::new(&w);
    let mut cp = || copy.run();
    let first = Row {
        name: "add_relu".into(),
        times: timing::interleaved(rounds, &mut [&mut r, &mut c, &mut nd, &mut cp]),
        work: w,
    };
    let mut r = || {
        black_box(chain.call("main", &a3).expect("call"));
    };
    let mut c = || {
        black_box(cx.add(&cy).unwrap().mul(&cz).unwrap().relu().unwrap());
    };
    let mut nd = || {
        black_box(((&x + &y) * &z).mapv_into(relu));
    };
    let w = work(0.0, 4 * n);
    let mut copy = limits::Copy::new(&w);
    let mut cp = || copy.run();
    let second = Row {
        name: "chain3".into(),
        times: timing::interleaved(rounds, &mut [&mut r, &mut c, &mut nd, &mut cp]),
        work: w,
    };
    vec![first, second]
}

/// The bandwidth-bound rows that are not elementwise: a 4096 × 4096
/// transpose (`transpose`: 128 MB moved, more than the caches hold), and the row and column sums of a 4096 × 1024
/// matrix (`sum_rows`, `sum_cols`).
fn layout_rows(rounds: usize, wanted: &dyn Fn(&str) -> bool) -> Vec<Row> {
    let mut rows = Vec::new();
    if wanted("transpose") {
        let n = 4096;
        let a = arr2(n, n, 30);
        let ca = ct2(&a);
        let vm = relax_models::compile(relax_models::TRANSPOSE);
        let args = [tv(&a)];
        let got = vm.call("main", &args).expect("relax-rs runs the transpose");
        let got = got
            .as_tensor()
            .expect("a tensor")
            .to_ndarray::<f32>()
            .expect("f32");
        assert!(got == a.t().into_dyn(), "relax-rs' transpose differs");
        let mut r = || {
            black_box(vm.call("main", &args).expect("call"));
        };
        let mut c = || {
            black_box(ca.t().unwrap().contiguous().unwrap());
        };
        let mut nd = || {
            black_box(a.t().as_standard_layout().into_owned());
        };
        let w = work(0.0, 2 * n * n);
        let mut copy = limits::Copy::new(&w);
        let mut cp = || copy.run();
        rows.push(Row {
            name: "transpose".into(),
            // The peers take about 100 ms a call: fewer rounds.
            times: timing::interleaved(rounds.min(7), &mut [&mut r, &mut c, &mut nd, &mut cp]),
            work: w,
        });
    }
    let (m, n) = (4096, 1024);
    let x = arr2(m, n, 31);
    let cx = ct2(&x);
    let args = [tv(&x)];
    for (name, text, axis, out) in [
        ("sum_rows", relax_models::SUM_ROWS, 1, m),
        ("sum_cols", relax_models::SUM_COLS, 0, n),
    ] {
        if !wanted(name) {
            continue;
        }
        let vm = relax_models::compile(text);
        let got = vm.call("main", &args).expect("relax-rs runs the sum");
        let got = got
            .as_tensor()
            .expect("a tensor")
            .to_ndarray::<f32>()
            .expect("f32");
        let want = x.sum_axis(Axis(axis)).into_dyn();
        let err = (&got - &want).mapv(f32::abs).fold(0.0f32, |a, &b| a.max(b));
        assert!(err < 1e-2, "relax-rs' {name} differs by {err}");
        let mut r = || {
            black_box(vm.call("main", &args).expect("call"));
        };
        let mut c = || {
            black_box(cx.sum(axis).unwrap());
        };
        let mut nd = || {
            black_box(x.sum_axis(Axis(axis)));
        };
        let w = work(0.0, m * n + out);
        let mut copy = limits::Copy::new(&w);
        let mut cp = || copy.run();
        rows.push(Row {
            name: name.into(),
            times: timing::interleaved(rounds, &mut [&mut r, &mut c, &mut nd, &mut cp]),
            work: w,
        });
    }
    rows
}

/// The sizes of the `gemm_n` rows (the numpy script has the same list).
const GEMM_SIZES: [usize; 6] = [64, 128, 256, 512, 1024, 2048];

/// `C = A B` for square `n × n` matrices, relax-rs through one module with
/// symbolic shapes.
/// The CPU and the packed GEMM's path on it: the code level the JIT
/// targets and the register tile and blocking `DefaultSchedule::for_host`
/// chose for this vendor.
fn cpu_line() -> String {
    use relax::cpu;
    let schedule = relax::transform::DefaultSchedule::for_host();
    let knobs = schedule.knobs();
    let bits = schedule.vector_bits();
    let b = knobs.gemm_blocking;
    format!(
        "CPU: {} ({:?}, {}); packed GEMM: {} x {} register tile ({}-bit vectors), kc {}, mc {}, nc {}",
        cpu::brand(),
        cpu::vendor(),
        cpu::best(cpu::X86_64_LEVELS.iter().copied()).unwrap_or("generic"),
        knobs.gemm_mr,
        knobs.gemm_nr(bits, 32),
        bits,
        b.kc,
        b.mc,
        b.nc
    )
}

fn gemm_row(vm: &relax::VirtualMachine, n: usize, rounds: usize) -> Row {
    let (a, b) = (arr2(n, n, 20), arr2(n, n, 21));
    let args = [tv(&a), tv(&b)];
    let (ca, cb) = (ct2(&a), ct2(&b));
    let want = a.dot(&b);
    let got = vm.call("main", &args).expect("relax-rs runs the matmul");
    let got = got
        .as_tensor()
        .expect("a tensor")
        .to_ndarray::<f32>()
        .expect("f32");
    let err = (&got - &want.clone().into_dyn())
        .mapv(f32::abs)
        .fold(0.0f32, |m, &v| m.max(v));
    assert!(
        err < 1e-2 * (n as f32).sqrt(),
        "relax-rs differs from ndarray by {err}"
    );
    let mut r = || {
        black_box(vm.call("main", &args).expect("call"));
    };
    let mut c = || {
        black_box(ca.matmul(&cb).unwrap());
    };
    let mut nd = || {
        black_box(a.dot(&b));
    };
    // Fewer rounds for the largest sizes (each sample is one call).
    let rounds = if n >= 1024 { rounds.min(7) } else { rounds };
    Row {
        name: format!("gemm_{n}"),
        times: timing::interleaved(rounds, &mut [&mut r, &mut c, &mut nd]),
        work: work(2.0 * (n as f64).powi(3), 3 * n * n),
    }
}

/// A convolution of an `x` of shape `xs` with filters of shape `ws` in
/// `groups` groups (relax-rs' module `text`) against candle's `conv2d`.
fn conv_row(
    name: &str,
    text: &str,
    xs: [usize; 4],
    ws: [usize; 4],
    (padding, stride, groups): (usize, usize, usize),
    rounds: usize,
) -> Row {
    let vm = relax_models::compile(text);
    let (xn, wn): (usize, usize) = (xs.iter().product(), ws.iter().product());
    let (xd, wd) = (data(xn, 30), data(wn, 31));
    let x = ndarray::Array::from_shape_vec(xs.to_vec(), xd.clone()).expect("shape");
    let w = ndarray::Array::from_shape_vec(ws.to_vec(), wd.clone()).expect("shape");
    let args = [tv(&x), tv(&w)];
    let cx = CTensor::from_vec(xd, &xs[..], &Device::Cpu).expect("candle tensor");
    let cw = CTensor::from_vec(wd, &ws[..], &Device::Cpu).expect("candle tensor");
    let want = cx
        .conv2d(&cw, padding, stride, 1, groups)
        .expect("candle runs the convolution");
    let want: Vec<f32> = want.flatten_all().unwrap().to_vec1().unwrap();
    let got = vm
        .call("main", &args)
        .expect("relax-rs runs the convolution");
    let got = got
        .as_tensor()
        .expect("a tensor")
        .to_vec::<f32>()
        .expect("f32");
    assert_eq!(got.len(), want.len());
    let err = got
        .iter()
        .zip(&want)
        .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    assert!(err < 1e-2, "{name}: relax-rs differs from candle by {err}");
    let mut r = || {
        black_box(vm.call("main", &args).expect("call"));
    };
    let mut c = || {
        black_box(cx.conv2d(&cw, padding, stride, 1, groups).unwrap());
    };
    let out: usize = got.len();
    Row {
        name: name.into(),
        times: {
            let mut t = timing::interleaved(rounds, &mut [&mut r, &mut c]);
            t.push(f64::NAN);
            t
        },
        work: work(
            2.0 * out as f64 * (ws[1] * ws[2] * ws[3]) as f64,
            xn + wn + out,
        ),
    }
}

fn fmt_us(secs: Option<f64>) -> String {
    match secs {
        Some(s) => format!("{:.1}", s * 1e6),
        None => "-".into(),
    }
}

fn main() {
    let mut rounds = 15;
    let mut only: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next()) {
            ("--rounds", Some(n)) if n.parse::<usize>().is_ok() => {
                rounds = n.parse().expect("checked")
            }
            ("--only", Some(prefix)) => only = Some(prefix),
            _ => {
                eprintln!("usage: peers [--rounds N] [--only ROW_PREFIX]");
                std::process::exit(2);
            }
        }
    }
    // `--only conv` runs the rows whose names start with `conv`.
    let wanted = |name: &str| only.as_deref().is_none_or(|p| name.starts_with(p));
    let mut rows: Vec<Row> = Vec::new();
    for batch in [1, 16, 64, 256] {
        if wanted(&format!("mlp_b{batch}")) {
            rows.push(mlp_row(batch, rounds));
        }
    }
    if wanted("softmax") {
        rows.push(softmax_row(rounds));
    }
    if wanted("layer_norm") {
        rows.push(layer_norm_row(rounds));
    }
    if wanted("add_relu") || wanted("chain3") {
        rows.extend(elementwise_rows(rounds));
    }
    rows.extend(layout_rows(rounds, &wanted));
    if GEMM_SIZES.iter().any(|n| wanted(&format!("gemm_{n}"))) {
        let matmul = relax_models::compile(relax_models::MATMUL);
        for n in GEMM_SIZES {
            if wanted(&format!("gemm_{n}")) {
                rows.push(gemm_row(&matmul, n, rounds));
            }
        }
    }
    if wanted("conv_resnet") {
        rows.push(conv_row(
            "conv_resnet",
            relax_models::CONV_RESNET,
            [1, 64, 56, 56],
            [64, 64, 3, 3],
            (1, 1, 1),
            rounds,
        ));
    }
    if wanted("conv_first") {
        rows.push(conv_row(
            "conv_first",
            relax_models::CONV_FIRST,
            [1, 3, 224, 224],
            [64, 3, 7, 7],
            (3, 2, 1),
            rounds,
        ));
    }
    if wanted("conv_depthwise") {
        rows.push(conv_row(
            "conv_depthwise",
            relax_models::CONV_DEPTHWISE,
            [1, 144, 56, 56],
            [144, 1, 3, 3],
            (1, 1, 144),
            rounds,
        ));
    }
    let int8_rows = int8::rows(rounds, &wanted);
    let limits = limits::measure();
    let numpy = numpy::times(rounds);
    let numpy_rows: BTreeMap<String, f64> = match &numpy {
        Ok(rows) => rows.clone(),
        Err(why) => {
            println!("numpy skipped: {why}");
            BTreeMap::new()
        }
    };

    println!("{}", cpu_line());
    println!(
        "FMA peak: {:.0} GFLOPS ({})",
        limits.flops / 1e9,
        limits.how
    );
    println!(
        "{:<11} {:>10} {:>10} {:>10} {:>10}   {:>12} {:>10} {:>9}",
        "µs/call", "relax-rs", "candle", "ndarray", "numpy", "vs best peer", "limit", "of limit"
    );
    for row in &rows {
        let np = numpy_rows.get(&row.name).copied();
        let measured = |t: f64| Some(t).filter(|t| t.is_finite());
        let peers = [measured(row.times[1]), measured(row.times[2]), np];
        let best = peers
            .iter()
            .flatten()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let limit = limits.time(&row.work, row.copied());
        println!(
            "{:<11} {:>10} {:>10} {:>10} {:>10}   {:>11.2}× {:>10} {:>9.2}",
            row.name,
            fmt_us(Some(row.times[0])),
            fmt_us(peers[0]),
            fmt_us(peers[1]),
            fmt_us(np),
            best / row.times[0],
            fmt_us(Some(limit)),
            limit / row.times[0]
        );
    }
    println!("(vs best peer: the best peer's time over relax-rs' time; above 1 means relax-rs is faster;");
    println!(" limit: the row's flops at the FMA peak or a plain copy of its bytes, whichever is longer;");
    println!(" of limit: the limit over relax-rs' time)");
    if !int8_rows.is_empty() {
        int8::print(&int8_rows, limits::int8_peak());
    }
    reduced::gemm_bf16_rows(rounds, &wanted);
    reduced::gemv_f16_rows(rounds, &wanted);
}
