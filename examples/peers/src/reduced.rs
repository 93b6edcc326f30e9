//! Reduced-precision rows, printed after the peers' table with their own
//! limits measured in the same run: `gemm_bf16_n` (n = 512, 1024, 2048),
//! `C = A B` of `bfloat16` `n × n` matrices summed in `float32`
//! (`matmul(out_dtype="float32")`, as `ToMixedPrecision` writes it), in
//! GFLOPS, against the `vdpbf16ps` peak (a register-only loop of
//! independent accumulators on every kernel thread, where the CPU has
//! AVX512-BF16) and against relax-rs' `float32` GEMM of the same `n`
//! timed in the same interleaved rounds. `gemv_f16_n` (n = 2048, 4096,
//! 8192): `y = x · Wᵀ` for one `float16` row `x` and a `float16` weight
//! `W` of `n × n` (a decode step's linear layer, PyTorch's layout), sums in
//! `float32`, in GB/s of `W` read, against a plain copy moving as many
//! bytes (half read, half written, over the kernel threads) timed in the
//! same interleaved rounds.

use crate::{data, limits, relax_models, timing};
use relax::{Tensor, Value};
use std::hint::black_box;

/// The sizes of the `gemm_bf16_n` rows.
const SIZES: [usize; 3] = [512, 1024, 2048];

/// `C = A B`, `bfloat16` operands of constant shape `n × n`, `float32` sums.
fn bf16_matmul(n: usize) -> String {
    format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(({n}, {n}), dtype="bfloat16"), b: R.Tensor(({n}, {n}), dtype="bfloat16")) -> R.Tensor(({n}, {n}), dtype="float32"):
        with R.dataflow():
            gv = R.matmul(a, b, out_dtype="float32")
            R.output(gv)
        return gv
"#
    )
}

/// Whether the CPU has AVX512-BF16.
fn has_bf16() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the schedules run the bf16 GEMM on `vdpbf16ps` here (not on
/// Intel's cores, where the float32 GEMM on converted operands is faster).
fn runs_on_vdpbf16ps() -> bool {
    relax::transform::DefaultSchedule::for_host().bf16()
}

/// Prints the `gemm_bf16_n` rows wanted.
pub fn gemm_bf16_rows(rounds: usize, wanted: &dyn Fn(&str) -> bool) {
    let sizes: Vec<usize> = SIZES
        .into_iter()
        .filter(|n| wanted(&format!("gemm_bf16_{n}")))
        .collect();
    if sizes.is_empty() {
        return;
    }
    let bf16 = has_bf16();
    let peak = peak();
    let how = match runs_on_vdpbf16ps() {
        true => "the bf16 GEMM runs on vdpbf16ps",
        false => "the bf16 GEMM runs as the float32 GEMM on converted operands",
    };
    match peak {
        Some(p) => println!(
            "avx512bf16 detected: {how}; vdpbf16ps peak {:.0} GFLOPS on {} thread(s)",
            p / 1e9,
            threads()
        ),
        None => println!(
            "avx512bf16 {}: {how}; no bf16 peak",
            if bf16 {
                "detected but not timed"
            } else {
                "not detected"
            }
        ),
    }
    println!(
        "{:<15} {:>10} {:>10} {:>9} {:>9} {:>9} {:>11}",
        "", "bf16 µs", "f32 µs", "bf16 GF/s", "f32 GF/s", "of peak", "bf16 / f32"
    );
    let f32_vm = relax_models::compile(relax_models::MATMUL);
    for n in sizes {
        let vm = relax_models::compile(&bf16_matmul(n));
        let (a, b) = (data(n * n, 40), data(n * n, 41));
        let round =
            |v: &[f32]| -> Vec<half::bf16> { v.iter().map(|&x| half::bf16::from_f32(x)).collect() };
        let (ah, bh) = (round(&a), round(&b));
        let t = |v: &[half::bf16]| -> Value {
            Tensor::from_slice(&[n as i64, n as i64], v)
                .expect("shape")
                .into()
        };
        let args = [t(&ah), t(&bh)];
        // The f32 GEMM of the bf16 values: the reference, and the f32 row.
        let widen = |v: &[half::bf16]| -> Vec<f32> { v.iter().map(|x| x.to_f32()).collect() };
        let (af, bf) = (widen(&ah), widen(&bh));
        let tf = |v: &[f32]| -> Value {
            Tensor::from_slice(&[n as i64, n as i64], v)
                .expect("shape")
                .into()
        };
        let f32_args = [tf(&af), tf(&bf)];
        let got = vm
            .call("main", &args)
            .expect("relax-rs runs the bf16 matmul");
        let want = f32_vm
            .call("main", &f32_args)
            .expect("relax-rs runs the f32 matmul");
        let (got, want) = (
            got.as_tensor()
                .expect("a tensor")
                .to_vec::<f32>()
                .expect("f32"),
            want.as_tensor()
                .expect("a tensor")
                .to_vec::<f32>()
                .expect("f32"),
        );
        let err = got
            .iter()
            .zip(&want)
            .fold(0f32, |m, (g, w)| m.max((g - w).abs()));
        assert!(
            err < 1e-3 * n as f32,
            "the bf16 GEMM differs from the f32 GEMM of the same values by {err}"
        );
        let mut r = || {
            black_box(vm.call("main", &args).expect("call"));
        };
        let mut f = || {
            black_box(f32_vm.call("main", &f32_args).expect("call"));
        };
        let rounds = if n >= 1024 { rounds.min(7) } else { rounds };
        let times = timing::interleaved(rounds, &mut [&mut r, &mut f]);
        let flops = 2.0 * (n as f64).powi(3);
        let (gb, gf) = (flops / times[0] / 1e9, flops / times[1] / 1e9);
        let of_peak = peak.map_or("-".to_string(), |p| format!("{:.2}", flops / times[0] / p));
        println!(
            "{:<15} {:>10.0} {:>10.0} {:>9.0} {:>9.0} {:>9} {:>10.2}×",
            format!("gemm_bf16_{n}"),
            times[0] * 1e6,
            times[1] * 1e6,
            gb,
            gf,
            of_peak,
            times[1] / times[0]
        );
    }
    println!("(of peak: the bf16 GEMM's flops per second over the vdpbf16ps peak; bf16 / f32: the f32 GEMM's time over the bf16 GEMM's, same n, same rounds)");
}

/// The threads relax-rs' kernels use: `RELAX_NUM_THREADS`, else the
/// available parallelism.
fn threads() -> usize {
    std::env::var("RELAX_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `vdpbf16ps` per thread and loop iteration of [`x86::dpbf16ps_chains`].
const CHAINS: f64 = 12.0;
const ITERS: u64 = 1 << 22;

/// The `vdpbf16ps` peak in flops per second over all kernel threads (64
/// flops an instruction: 16 lanes of two products and two sums), the best
/// of 7; `None` without AVX512-BF16.
fn peak() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        if !has_bf16() {
            return None;
        }
        let threads = threads();
        let mut best = f64::INFINITY;
        for _ in 0..8 {
            let t = std::time::Instant::now();
            std::thread::scope(|s| {
                for _ in 0..threads {
                    // SAFETY: AVX512-BF16 (and so AVX512F) was detected.
                    s.spawn(|| unsafe { x86::dpbf16ps_chains(black_box(ITERS)) });
                }
            });
            best = best.min(t.elapsed().as_secs_f64());
        }
        Some(ITERS as f64 * CHAINS * 64.0 * threads as f64 / best)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    /// `iters` rounds of twelve independent `vdpbf16ps` on registers.
    ///
    /// # Safety
    /// The CPU must have AVX512-BF16.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn dpbf16ps_chains(iters: u64) {
        // SAFETY: registers only; the caller checked the CPU.
        unsafe {
            std::arch::asm!(
                "vpxord zmm12, zmm12, zmm12",
                "vpxord zmm13, zmm13, zmm13",
                "vpxord zmm0, zmm0, zmm0",
                "vpxord zmm1, zmm1, zmm1",
                "vpxord zmm2, zmm2, zmm2",
                "vpxord zmm3, zmm3, zmm3",
                "vpxord zmm4, zmm4, zmm4",
                "vpxord zmm5, zmm5, zmm5",
                "vpxord zmm6, zmm6, zmm6",
                "vpxord zmm7, zmm7, zmm7",
                "vpxord zmm8, zmm8, zmm8",
                "vpxord zmm9, zmm9, zmm9",
                "vpxord zmm10, zmm10, zmm10",
                "vpxord zmm11, zmm11, zmm11",
                "2:",
                "vdpbf16ps zmm0, zmm12, zmm13",
                "vdpbf16ps zmm1, zmm12, zmm13",
                "vdpbf16ps zmm2, zmm12, zmm13",
                "vdpbf16ps zmm3, zmm12, zmm13",
                "vdpbf16ps zmm4, zmm12, zmm13",
                "vdpbf16ps zmm5, zmm12, zmm13",
                "vdpbf16ps zmm6, zmm12, zmm13",
                "vdpbf16ps zmm7, zmm12, zmm13",
                "vdpbf16ps zmm8, zmm12, zmm13",
                "vdpbf16ps zmm9, zmm12, zmm13",
                "vdpbf16ps zmm10, zmm12, zmm13",
                "vdpbf16ps zmm11, zmm12, zmm13",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) iters => _,
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
                out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
                out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
                out("zmm12") _, out("zmm13") _,
                options(nostack, nomem),
            );
        }
    }
}

/// The sizes of the `gemv_f16_n` rows.
const GEMV_SIZES: [usize; 3] = [2048, 4096, 8192];

/// `y = x · Wᵀ`, `float16` `x` (`1 × n`) and `W` (`n × n`), `float32` sums.
fn f16_gemv(n: usize) -> String {
    format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, {n}), dtype="float16"), w: R.Tensor(({n}, {n}), dtype="float16")) -> R.Tensor((1, {n}), dtype="float32"):
        with R.dataflow():
            wt = R.permute_dims(w)
            gv = R.matmul(x, wt, out_dtype="float32")
            R.output(gv)
        return gv
"#
    )
}

/// Prints the `gemv_f16_n` rows wanted.
pub fn gemv_f16_rows(rounds: usize, wanted: &dyn Fn(&str) -> bool) {
    let sizes: Vec<usize> = GEMV_SIZES
        .into_iter()
        .filter(|n| wanted(&format!("gemv_f16_{n}")))
        .collect();
    if sizes.is_empty() {
        return;
    }
    println!(
        "{:<15} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "", "gemv µs", "copy µs", "GB/s", "copy GB/s", "of copy"
    );
    for n in sizes {
        let vm = relax_models::compile(&f16_gemv(n));
        let (x, w) = (data(n, 50), data(n * n, 51));
        let half =
            |v: &[f32]| -> Vec<half::f16> { v.iter().map(|&x| half::f16::from_f32(x)).collect() };
        let (xh, wh) = (half(&x), half(&w));
        let args: [Value; 2] = [
            Tensor::from_slice(&[1, n as i64], &xh)
                .expect("shape")
                .into(),
            Tensor::from_slice(&[n as i64, n as i64], &wh)
                .expect("shape")
                .into(),
        ];
        let got = vm.call("main", &args).expect("relax-rs runs the f16 GEMV");
        let got = got
            .as_tensor()
            .expect("a tensor")
            .to_vec::<f32>()
            .expect("f32");
        for (j, g) in got.iter().enumerate().step_by(97) {
            let want: f64 = (0..n)
                .map(|k| f64::from(xh[k].to_f32()) * f64::from(wh[j * n + k].to_f32()))
                .sum();
            assert!(
                (f64::from(*g) - want).abs() < 1e-4 * n as f64,
                "row {j}: relax-rs {g}, want {want}"
            );
        }
        let bytes = 2.0 * (n * n) as f64;
        let mut copy = limits::Copy::new(&limits::Work { flops: 0.0, bytes });
        let mut cp = || copy.run();
        let mut r = || {
            black_box(vm.call("main", &args).expect("call"));
        };
        let times = timing::interleaved(rounds, &mut [&mut r, &mut cp]);
        println!(
            "{:<15} {:>10.0} {:>10.0} {:>9.1} {:>9.1} {:>9.2}",
            format!("gemv_f16_{n}"),
            times[0] * 1e6,
            times[1] * 1e6,
            bytes / times[0] / 1e9,
            bytes / times[1] / 1e9,
            times[1] / times[0]
        );
    }
    println!("(GB/s: the bytes of W over the GEMV's time; copy: a plain copy moving as many bytes, half read and half written, in the same rounds; of copy: the copy's time over the GEMV's)");
}
