//! Programs written in the DSL, run through the generated wrappers and
//! checked against ndarray, with a symbolic batch dim at several sizes.

use relax::ndarray::{arr1, arr2, Array, Array1, Array2, Axis, IxDyn};

relax::module! {
    /// The seed's MLP (MLC chapter 7.4).
    pub mod mlp {
        #[function]
        pub fn main(
            x: Tensor![(n, 784), f32],
            w0: Tensor![(128, 784), f32],
            b0: Tensor![(128,), f32],
            w1: Tensor![(10, 128), f32],
            b1: Tensor![(10,), f32],
        ) -> Tensor![(n, 10), f32] {
            R::dataflow! {
                let lv0 = R::matmul(x, R::permute_dims(w0));
                let lv1 = R::add(lv0, b0);
                let lv2 = R::nn::relu(lv1);
                let lv3 = R::matmul(lv2, R::permute_dims(w1));
                let gv = R::add(lv3, b1);
                R::output(gv);
            }
            gv
        }
    }
}

relax::module! {
    pub mod programs {
        /// The seed's rewrite target: x * y + y.
        #[function]
        pub fn fma(x: Tensor![(n, 4), f32], y: Tensor![(n, 4), f32]) -> Tensor![(n, 4), f32] {
            R::dataflow! {
                let lv0 = R::multiply(x, y);
                let gv0 = R::add(lv0, y);
                R::output(gv0);
            }
            gv0
        }

        /// Two outputs: the exp and its row sums.
        #[function]
        pub fn two_outputs(x: Tensor![(n, 3), f32]) -> (Tensor![(n, 3), f32], Tensor![(n,), f32]) {
            let e = R::exp(x);
            let s = R::sum(e, axis = [1]);
            (e, s)
        }

        /// A tensor of unknown shape, cast to (m, 4), then flattened.
        #[function]
        pub fn cast_then_reshape(x: Tensor![ndim = 2, f32]) -> Tensor![ndim = 1, f32] {
            let y = R::match_cast(x, Tensor![(m, 4), f32]);
            R::reshape(y, R::shape([m * 4]))
        }

        /// A public function calling a private helper.
        #[function]
        pub fn uses_helper(x: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
            let y = square(x);
            R::add(y, x)
        }

        #[function]
        fn square(a: Tensor![(k,), f32]) -> Tensor![(k,), f32] {
            R::multiply(a, a)
        }

        /// `if` on a bool prim value.
        #[function]
        pub fn pick(flag: bool, x: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
            let y = if flag {
                let a = R::exp(x);
                a
            } else {
                R::negative(x)
            };
            y
        }
    }
}

fn random(shape: &[usize], seed: u64) -> Array<f32, IxDyn> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    Array::from_shape_fn(IxDyn(shape), |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 2000) as f32 / 1000.0 - 1.0
    })
}

fn matrix(rows: usize, cols: usize, seed: u64) -> Array2<f32> {
    random(&[rows, cols], seed).into_dimensionality().unwrap()
}

fn vector(len: usize, seed: u64) -> Array1<f32> {
    random(&[len], seed).into_dimensionality().unwrap()
}

/// Equal up to 1e-5 of the result's largest magnitude. With the "llvm"
/// feature the wrappers run JIT-compiled kernels, which sum float32 dot
/// products (784 terms in the MLP) in another order than ndarray's blocked
/// `dot`; the rounding differences scale with the magnitude of the sums,
/// not of each element.
fn assert_close<D: relax::ndarray::Dimension>(a: &Array<f32, D>, b: &Array<f32, D>) {
    assert_eq!(a.shape(), b.shape());
    let scale = b.iter().fold(1.0f32, |m, y| m.max(y.abs()));
    for (x, y) in a.iter().zip(b.iter()) {
        assert!((x - y).abs() <= 1e-5 * scale, "{x} vs {y} (scale {scale})");
    }
}

#[test]
fn seed_mlp_for_several_batch_sizes() {
    let (w0, b0, w1, b1) = (
        matrix(128, 784, 1),
        vector(128, 2),
        matrix(10, 128, 3),
        vector(10, 4),
    );
    for batch in [1, 3, 64] {
        let x = matrix(batch, 784, 10 + batch as u64);
        let out: Array2<f32> = mlp::main(&x, &w0, &b0, &w1, &b1).unwrap();
        let expected = (x.dot(&w0.t()) + &b0).mapv(|v| v.max(0.0)).dot(&w1.t()) + &b1;
        assert_close(&out, &expected);
    }
}

#[test]
fn a_wrong_shape_is_an_error_naming_both_dims() {
    let (w0, b0, w1, b1) = (
        matrix(128, 784, 1),
        vector(128, 2),
        matrix(10, 128, 3),
        vector(10, 4),
    );
    let x = matrix(2, 785, 5);
    let err = mlp::main(&x, &w0, &b0, &w1, &b1).unwrap_err().to_string();
    assert!(err.contains("parameter `x` of `main`"), "{err}");
    assert!(err.contains("785") && err.contains("784"), "{err}");
    // A relax::Tensor works as an argument too.
    let t = relax::Tensor::from(&matrix(1, 784, 6));
    assert!(mlp::main(&t, &w0, &b0, &w1, &b1).is_ok());
}

#[test]
fn fma_two_outputs_cast_helper_and_if() {
    for n in [1, 5] {
        let x = matrix(n, 4, 7);
        let y = matrix(n, 4, 8);
        assert_close(&programs::fma(&x, &y).unwrap(), &(&x * &y + &y));

        let x3 = matrix(n, 3, 9);
        let (e, s) = programs::two_outputs(&x3).unwrap();
        let expected = x3.mapv(f32::exp);
        assert_close(&e, &expected);
        assert_close(&s, &expected.sum_axis(Axis(1)));

        let flat = programs::cast_then_reshape(&x).unwrap();
        assert_eq!(flat.len(), n * 4);

        let v = vector(n, 11);
        assert_close(&programs::uses_helper(&v).unwrap(), &(&v * &v + &v));
        assert_close(&programs::pick(true, &v).unwrap(), &v.mapv(f32::exp));
        assert_close(&programs::pick(false, &v).unwrap(), &v.mapv(|a| -a));
    }
    // The match_cast fails at run time when the second dim is not 4.
    let bad = arr2(&[[1.0f32, 2.0, 3.0]]);
    let err = programs::cast_then_reshape(&bad).unwrap_err().to_string();
    assert!(err.contains("match_cast"), "{err}");
    let _ = arr1(&[0.0f32]);
}

relax::module! {
    /// Ops called with their attributes left to the defaults.
    pub mod defaults {
        #[function]
        pub fn main(
            x: Tensor![(1, 3, 8, 8), f32],
            w: Tensor![(4, 3, 3, 3), f32],
        ) -> Tensor![(1, 4, 3, 3), f32] {
            let c = R::nn::conv2d(x, w);
            let p = R::nn::max_pool2d(c);
            let s = R::nn::softmax(p);
            let m = R::matmul(s, s);
            let t = R::sum(m, axis = [3], keepdims = true);
            let q = R::strided_slice(R::add(m, t), axes = [2], begin = [0], end = [3]);
            R::strided_slice(q, axes = [3], begin = [0], end = [3])
        }
    }
}

/// A module the DSL built prints, and the text parses back to a
/// structurally equal module: defaulted attributes have the same types as
/// written ones (`dilation=[1, 1]`).
#[test]
fn dsl_modules_survive_printing_and_parsing_back() {
    for module in [defaults::module(), programs::module(), mlp::module()] {
        let text = module.to_string();
        let back: relax::ir::IRModule = text.parse().unwrap();
        if let Err(e) = relax::ir::structural_equal_report(module, &back) {
            panic!("{e}\n{text}");
        }
    }
}

relax::module! {
    /// Functions on `float16` and `bfloat16` tensors.
    pub mod halves {
        /// `x * y + y`, each operation rounded to float16.
        #[function]
        pub fn fma(x: Tensor![(n,), f16], y: Tensor![(n,), f16]) -> Tensor![(n,), f16] {
            R::add(R::multiply(x, y), y)
        }

        /// The elements in bfloat16, summed (once rounded, in float32).
        #[function]
        pub fn bf16_sum(x: Tensor![(n,), f16]) -> Tensor![(), bf16] {
            R::sum(R::astype(x, dtype = bf16))
        }
    }
}

/// A `float16` parameter takes an ndarray of `relax::half::f16` and a
/// `bfloat16` result is one of `relax::half::bf16`; the module runs on the
/// interpreter. Through the wrappers (the default LLVM target), the build
/// is an error naming the dtype until the LLVM back end computes in these
/// dtypes; once it does, the wrappers must give the interpreter's results.
#[test]
fn float16_and_bfloat16_functions_take_and_give_half_arrays() {
    use relax::half::{bf16, f16};
    use relax::{FromValue, Tensor, Value};
    let h = |v: &[f32]| Array1::from_iter(v.iter().map(|&x| f16::from_f32(x)));
    let x = h(&[1.5, -2.0, 0.1, 300.0]);
    let y = h(&[2.0, 0.5, 3.0, 300.0]);
    // The wrappers' types: half arrays in and out.
    type Out<T> = Result<T, relax::Error>;
    let fma: fn(&Array1<f16>, &Array1<f16>) -> Out<Array1<f16>> = halves::fma;
    let sum: fn(&Array1<f16>) -> Out<Array<bf16, relax::ndarray::Ix0>> = halves::bf16_sum;

    let want_fma: Array1<f16> = x
        .iter()
        .zip(&y)
        .map(|(a, b)| {
            let p = f16::from_f32(a.to_f32() * b.to_f32());
            f16::from_f32(p.to_f32() + b.to_f32())
        })
        .collect();
    // 300 * 300 is beyond float16's 65504.
    assert_eq!(want_fma[3], f16::INFINITY);
    let as_bf16: f32 = x.iter().map(|v| bf16::from_f32(v.to_f32()).to_f32()).sum();
    let want_sum = bf16::from_f32(as_bf16);

    let exec = relax::build(halves::module(), &relax::Target::interpreter()).unwrap();
    let vm = relax::VirtualMachine::new(&exec);
    let args = [
        Value::Tensor(Tensor::from(&x)),
        Value::Tensor(Tensor::from(&y)),
    ];
    let got = Array1::<f16>::from_value(vm.call("fma", &args).unwrap(), "fma").unwrap();
    assert_eq!(got, want_fma);
    let got = vm.call("bf16_sum", &args[..1]).unwrap();
    let got = Array::<bf16, relax::ndarray::Ix0>::from_value(got, "bf16_sum").unwrap();
    assert_eq!(got.into_scalar(), want_sum);

    match fma(&x, &y) {
        Ok(got) => {
            assert_eq!(got, want_fma);
            assert_eq!(sum(&x).unwrap().into_scalar(), want_sum);
        }
        Err(e) => assert!(e.to_string().contains("float16"), "{e}"),
    }
}

relax::module! {
    /// The seed's MLP in bfloat16, both matmuls accumulating in float32.
    pub mod mlp_bf16 {
        #[function]
        pub fn main(
            x: Tensor![(n, 784), bf16],
            w0: Tensor![(128, 784), bf16],
            b0: Tensor![(128,), bf16],
            w1: Tensor![(10, 128), bf16],
            b1: Tensor![(10,), bf16],
        ) -> Tensor![(n, 10), f32] {
            R::dataflow! {
                let lv0 = R::matmul(x, R::permute_dims(w0), out_dtype = f32);
                let lv1 = R::add(R::astype(lv0, dtype = bf16), b0);
                let lv2 = R::nn::relu(lv1);
                let lv3 = R::matmul(lv2, R::permute_dims(w1), out_dtype = f32);
                let gv = R::add(lv3, R::astype(b1, dtype = f32));
                R::output(gv);
            }
            gv
        }
    }
}

/// The MLP in bfloat16 (written so in the DSL, and the float32 module
/// through `ToMixedPrecision(bfloat16)`) gives the float32 logits within
/// bfloat16's precision: a few roundings of 2⁻⁸ relative to the logits'
/// scale, on LLVM (the wrappers) and on the interpreter.
#[test]
fn the_mlp_in_bfloat16_gives_the_float32_result() {
    use relax::half::bf16;
    use relax::transform::{Pass, ToMixedPrecision};
    use relax::{DataType, Target, Tensor, Value, VirtualMachine};
    let mut seed = 0x2545_f491u32;
    let mut rand = |n: usize, scale: f32| -> Vec<f32> {
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                ((seed % 2001) as f32 / 1000.0 - 1.0) * scale
            })
            .collect()
    };
    let batch = 7;
    let x = Array2::from_shape_vec((batch, 784), rand(batch * 784, 1.0)).unwrap();
    let w0 = Array2::from_shape_vec((128, 784), rand(128 * 784, 0.05)).unwrap();
    let b0 = Array1::from_vec(rand(128, 0.1));
    let w1 = Array2::from_shape_vec((10, 128), rand(10 * 128, 0.2)).unwrap();
    let b1 = Array1::from_vec(rand(10, 0.1));
    let want: Array2<f32> = mlp::main(&x, &w0, &b0, &w1, &b1).unwrap();
    let scale = want.iter().fold(0f32, |m, v| m.max(v.abs()));
    assert!(scale > 0.1, "{want}");
    let tol = 4.0 / 256.0 * scale;
    let check = |got: &Array2<f32>, how: &str| {
        let worst = got
            .iter()
            .zip(want.iter())
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst <= tol, "{how}: max difference {worst} > {tol}");
        // bfloat16 did round: the results are not float32's.
        assert!(worst > 0.0, "{how}");
    };

    let h1 = |a: &Array1<f32>| a.mapv(bf16::from_f32);
    let h2 = |a: &Array2<f32>| a.mapv(bf16::from_f32);
    let (xh, w0h, b0h, w1h, b1h) = (h2(&x), h2(&w0), h1(&b0), h2(&w1), h1(&b1));
    check(
        &mlp_bf16::main(&xh, &w0h, &b0h, &w1h, &b1h).unwrap(),
        "bf16 DSL on LLVM",
    );
    let interp = |m: &relax::ir::IRModule, args: Vec<Value>| -> Array2<f32> {
        let exec = relax::build(m, &Target::interpreter()).unwrap();
        let out = VirtualMachine::new(&exec).call("main", &args).unwrap();
        out.as_tensor()
            .unwrap()
            .to_ndarray::<f32>()
            .unwrap()
            .into_dimensionality()
            .unwrap()
    };
    let half_args = vec![
        Tensor::from(&xh).into(),
        Tensor::from(&w0h).into(),
        Tensor::from(&b0h).into(),
        Tensor::from(&w1h).into(),
        Tensor::from(&b1h).into(),
    ];
    check(
        &interp(mlp_bf16::module(), half_args),
        "bf16 DSL on the interpreter",
    );

    let mixed = ToMixedPrecision::with_dtype(DataType::bf16())
        .run(mlp::module().clone())
        .unwrap();
    assert!(mixed.to_string().contains("bfloat16"), "{mixed}");
    let args: Vec<Value> = vec![
        Tensor::from(&x).into(),
        Tensor::from(&w0).into(),
        Tensor::from(&b0).into(),
        Tensor::from(&w1).into(),
        Tensor::from(&b1).into(),
    ];
    check(
        &interp(&mixed, args.clone()),
        "ToMixedPrecision on the interpreter",
    );
    let exec = relax::build(&mixed, &Target::host()).unwrap();
    let out = VirtualMachine::new(&exec).call("main", &args).unwrap();
    let got: Array2<f32> = out
        .as_tensor()
        .unwrap()
        .to_ndarray::<f32>()
        .unwrap()
        .into_dimensionality()
        .unwrap();
    check(&got, "ToMixedPrecision on LLVM");
}

// ---- schedules attached in the DSL -----------------------------------------

use relax::tir::schedule::{Schedule, ScheduleError};
use relax::{Target, Tensor, Value, VirtualMachine};

/// The schedule `scheduled::main` attaches to its legalized matmul: rows
/// in tiles of 4 (13 rows: the last tile is guarded), the tiles in
/// parallel, the reduction after the column loop, and TVM's unroll hint
/// on the tile's rows (carried, not interpreted by the LLVM back end).
fn tile_matmul(sch: &mut Schedule) -> Result<(), ScheduleError> {
    let c = sch.get_block("T_matmul")?;
    let loops = sch.get_loops(c)?;
    let (i, j, k) = (loops[0], loops[1], loops[2]);
    let tiles = sch.split(i, &[None, Some(4)])?;
    sch.reorder(&[tiles[0], j, k, tiles[1]])?;
    sch.parallel(tiles[0])?;
    sch.annotate(tiles[1], "pragma_auto_unroll_max_step", 16_i64)?;
    sch.annotate(c, "schedule_source", "tests/dsl.rs")?;
    Ok(())
}

/// A schedule whose first step fails: the build, and so every call, is an
/// `Err` naming the PrimFunc and the block.
fn wrong_block(sch: &mut Schedule) -> Result<(), ScheduleError> {
    sch.get_block("no_such_block").map(|_| ())
}

relax::module! {
    pub mod scheduled {
        /// A matmul at odd sizes, scheduled by hand when it is compiled.
        #[function]
        #[schedule(matmul = tile_matmul)]
        pub fn main(a: Tensor![(13, 9), f32], b: Tensor![(9, 37), f32]) -> Tensor![(13, 37), f32] {
            R::matmul(a, b)
        }
    }
}

/// The one-function form takes the attribute too; a path through `self::`.
#[relax::function]
#[schedule(matmul = self::wrong_block)]
pub fn badly_scheduled(a: Tensor![(5, 3), f32], b: Tensor![(3, 7), f32]) -> Tensor![(5, 7), f32] {
    R::matmul(a, b)
}

#[test]
fn an_attached_schedule_runs_when_the_module_is_compiled() {
    use relax::ir::BaseFunc;
    let m = scheduled::scheduled_module().unwrap();
    let kernel = m
        .functions()
        .find_map(|(gv, f)| match f {
            BaseFunc::Prim(p) if gv.name_hint() == "matmul" => Some(p.clone()),
            _ => None,
        })
        .expect("the legalized matmul");
    assert!(
        relax::transform::apply_schedule::is_scheduled(&kernel.attrs),
        "{m}"
    );
    let text = m.to_string();
    for want in [
        "for ax0_0 in T.parallel(4):",
        "annotations={\"pragma_auto_unroll_max_step\": 16}",
        "T.sblock_attr({\"schedule_source\": \"tests/dsl.rs\"})",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }

    let a = matrix(13, 9, 31);
    let b = matrix(9, 37, 32);
    // Through the wrapper: LLVM-compiled with the schedule.
    let got: Array2<f32> = scheduled::main(&a, &b).unwrap();
    assert_close(&got, &a.dot(&b));
    // The scheduled and the unscheduled module on the interpreter.
    let args = [
        Value::Tensor(Tensor::from(&a)),
        Value::Tensor(Tensor::from(&b)),
    ];
    let run = |module: &relax::ir::IRModule| -> Array2<f32> {
        let exec = relax::build(module, &Target::interpreter()).unwrap();
        VirtualMachine::new(&exec)
            .call("main", &args)
            .unwrap()
            .as_tensor()
            .unwrap()
            .to_ndarray::<f32>()
            .unwrap()
            .into_dimensionality()
            .unwrap()
    };
    assert_close(&run(&m), &run(scheduled::module()));
    assert_close(&run(&m), &got);
}

#[test]
fn a_failing_attached_schedule_is_an_error_from_every_call() {
    let a = matrix(5, 3, 1);
    let b = matrix(3, 7, 2);
    for _ in 0..2 {
        let e = badly_scheduled(&a, &b).unwrap_err().to_string();
        assert!(e.contains("scheduling `matmul`"), "{e}");
        assert!(e.contains("no_such_block"), "{e}");
    }
    let e = badly_scheduled::scheduled_module().unwrap_err().to_string();
    assert!(e.contains("no_such_block"), "{e}");
}
