//! The rewrite's shape (what it emits, what it leaves alone) and its
//! numbers against the direct convolution, on the interpreter target (the
//! reference kernels and the loop-level interpreter) and on LLVM, at odd
//! sizes: images whose sides are not multiples of the tile, odd channel
//! counts, padding 0 and 1, a symbolic batch.

use super::*;
use crate::backend::{build, Target};
use crate::ir::{BaseFunc, Var};
use crate::transform::{DeadCodeElimination, FoldConstant};
use relax_runtime::{Value, VirtualMachine};
use transforms::{CHANNEL_VECTOR_TILES, PHASE_MIN_TILES};

fn f32t() -> DataType {
    DataType::f32()
}

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

fn tensor(shape: &[i64], seed: u64) -> Tensor {
    let n = shape.iter().product::<i64>() as usize;
    Tensor::from_vec(shape, values(n, seed)).unwrap()
}

/// How the test module's convolution is made.
#[derive(Clone, Debug)]
struct Case {
    batch: Option<i64>,
    c_in: i64,
    c_out: i64,
    h: i64,
    w: i64,
    pad: i64,
    kernel: i64,
    strides: i64,
    dilation: i64,
    groups: i64,
    weight_param: bool,
    epilogue: Epilogue,
}

impl Case {
    fn new(c_in: i64, c_out: i64, h: i64, w: i64, pad: i64) -> Case {
        Case {
            batch: Some(1),
            c_in,
            c_out,
            h,
            w,
            pad,
            kernel: 3,
            strides: 1,
            dilation: 1,
            groups: 1,
            weight_param: false,
            epilogue: Epilogue::default(),
        }
    }

    fn batch_dim(&self) -> PrimExpr {
        match self.batch {
            Some(n) => PrimExpr::int(n),
            None => PrimExpr::var(&crate::ir::TirVar::new("batch")),
        }
    }

    fn weight(&self) -> Tensor {
        let k = self.kernel;
        tensor(&[self.c_out, self.c_in / self.groups, k, k], 7)
    }

    /// `main(x[, w][, residual])`: the convolution, then the epilogue's
    /// ops.
    fn module(&self) -> IRModule {
        let batch = self.batch_dim();
        let x = Var::new(
            "x",
            Some(StructInfo::tensor(
                vec![
                    batch.clone(),
                    self.c_in.into(),
                    self.h.into(),
                    self.w.into(),
                ],
                f32t(),
            )),
        );
        let k = self.kernel;
        let w_param = Var::new(
            "w",
            Some(StructInfo::tensor(
                vec![
                    self.c_out.into(),
                    (self.c_in / self.groups).into(),
                    k.into(),
                    k.into(),
                ],
                f32t(),
            )),
        );
        let out_h = (self.h + 2 * self.pad - self.dilation * (k - 1) - 1) / self.strides + 1;
        let out_w = (self.w + 2 * self.pad - self.dilation * (k - 1) - 1) / self.strides + 1;
        let residual = Var::new(
            "residual",
            Some(StructInfo::tensor(
                vec![batch, self.c_out.into(), out_h.into(), out_w.into()],
                f32t(),
            )),
        );
        let mut params = vec![x.clone()];
        if self.weight_param {
            params.push(w_param.clone());
        }
        if self.epilogue.residual {
            params.push(residual.clone());
        }
        let ints = |v: i64, n: usize| AttrValue::Array(vec![AttrValue::Int(v); n]);
        let attrs = Attrs::from_pairs([
            ("strides", ints(self.strides, 2)),
            ("padding", ints(self.pad, 4)),
            ("dilation", ints(self.dilation, 2)),
            ("groups", AttrValue::Int(self.groups)),
        ]);
        let weight = if self.weight_param {
            Expr::var(&w_param)
        } else {
            Expr::constant(self.weight())
        };
        let bias = Expr::constant(tensor(&[1, self.c_out, 1, 1], 11));
        let mut bb = BlockBuilder::new();
        let case = self.clone();
        bb.function("main", params, |bb| {
            bb.dataflow(|bb| {
                let op = |name: &str| crate::op::lookup(name).unwrap();
                let conv = op("relax.nn.conv2d")
                    .call(vec![Expr::var(&x), weight], &attrs)
                    .unwrap();
                let mut y: Expr = bb.emit(conv)?.into();
                if case.epilogue.bias {
                    let add = op("relax.add").call(vec![y, bias], &Attrs::new()).unwrap();
                    y = bb.emit(add)?.into();
                }
                if case.epilogue.residual {
                    let add = op("relax.add")
                        .call(vec![y, Expr::var(&residual)], &Attrs::new())
                        .unwrap();
                    y = bb.emit(add)?.into();
                }
                if case.epilogue.relu {
                    let relu = op("relax.nn.relu").call(vec![y], &Attrs::new()).unwrap();
                    y = bb.emit(relu)?.into();
                }
                let gv = bb.emit_output(y)?;
                Ok(Expr::var(&gv))
            })
        })
        .unwrap();
        bb.finalize().unwrap()
    }

    fn args(&self, batch: i64) -> Vec<Value> {
        let mut args = vec![Value::Tensor(tensor(
            &[batch, self.c_in, self.h, self.w],
            3,
        ))];
        if self.weight_param {
            args.push(Value::Tensor(self.weight()));
        }
        if self.epilogue.residual {
            let k = self.kernel;
            let out_h = (self.h + 2 * self.pad - k) / self.strides + 1;
            let out_w = (self.w + 2 * self.pad - k) / self.strides + 1;
            args.push(Value::Tensor(tensor(&[batch, self.c_out, out_h, out_w], 5)));
        }
        args
    }
}

fn run(module: &IRModule, target: &Target, args: &[Value]) -> Vec<f32> {
    let exec = build(module, target).unwrap_or_else(|e| panic!("build on {target}: {e}"));
    match VirtualMachine::new(&exec).call("main", args).unwrap() {
        Value::Tensor(t) => t.as_slice::<f32>().unwrap().to_vec(),
        other => panic!("not a tensor: {other:?}"),
    }
}

/// The op names `main` calls, in order (`call_tir` as the PrimFunc's name).
fn calls(module: &IRModule) -> Vec<String> {
    let main = module.get_relax("main").unwrap();
    let mut out = Vec::new();
    for block in main.body.as_seq().unwrap().blocks.iter() {
        for b in block.bindings.iter() {
            let Some(call) = b.value().as_call() else {
                continue;
            };
            match b.value().call_op_name() {
                Some("relax.call_tir") => match call.args[0].kind() {
                    ExprKind::GlobalVar(gv) => out.push(gv.name_hint().to_string()),
                    _ => out.push("call_tir".into()),
                },
                Some(name) => out.push(name.trim_start_matches("relax.").to_string()),
                None => out.push("call".into()),
            }
        }
    }
    out
}

/// The interpreter, and LLVM when relax-core is built with it (the
/// workspace's tests are).
fn targets() -> Vec<Target> {
    let mut targets = vec![Target::interpreter()];
    if cfg!(feature = "llvm") {
        targets.push(Target::host());
    }
    targets
}

fn rewritten(case: &Case, tile: i64) -> IRModule {
    let pass = Conv2dWinograd::with_tile(tile).unwrap();
    pass.run(case.module()).unwrap()
}

/// The largest difference relative to the largest magnitude of `want`.
fn max_rel_error(got: &[f32], want: &[f32]) -> f64 {
    assert_eq!(got.len(), want.len());
    let scale = want
        .iter()
        .fold(0f64, |m, v| m.max(v.abs() as f64))
        .max(1e-30);
    got.iter()
        .zip(want)
        .fold(0f64, |m, (a, b)| m.max((*a as f64 - *b as f64).abs()))
        / scale
}

#[test]
fn emits_the_weight_transform_the_product_and_the_tile_transforms() {
    let m = rewritten(&Case::new(5, 7, 9, 11, 1), 2);
    assert_eq!(
        calls(&m),
        [
            "reshape",
            "matmul",
            "reshape",
            "permute_dims",
            "winograd_input_transform",
            "matmul",
            "winograd_output_transform"
        ]
    );
    for name in ["winograd_input_transform", "winograd_output_transform"] {
        let Some(BaseFunc::Prim(f)) = m.get(name) else {
            panic!("no PrimFunc {name}")
        };
        assert!(crate::transform::apply_schedule::is_scheduled(&f.attrs));
    }
    // The weight transform folds into one constant (α², O, C).
    let folded = DeadCodeElimination::default()
        .run(FoldConstant.run(m).unwrap())
        .unwrap();
    assert_eq!(
        calls(&folded),
        [
            "winograd_input_transform",
            "matmul",
            "winograd_output_transform"
        ]
    );
}

#[test]
fn leaves_what_it_cannot_rewrite_alone() {
    let base = Case::new(8, 8, 9, 9, 1);
    let cases = [
        Case {
            strides: 2,
            ..base.clone()
        },
        Case {
            groups: 2,
            ..base.clone()
        },
        Case {
            dilation: 2,
            ..base.clone()
        },
        Case {
            weight_param: true,
            ..base.clone()
        },
        Case {
            kernel: 1,
            pad: 0,
            ..base.clone()
        },
        Case {
            kernel: 5,
            pad: 2,
            ..base.clone()
        },
    ];
    for case in cases {
        let before = case.module();
        let after = Conv2dWinograd::with_tile(2)
            .unwrap()
            .run(before.clone())
            .unwrap();
        assert!(
            crate::ir::structural_equal(&before, &after),
            "{case:?} was rewritten"
        );
    }
}

#[test]
fn a_tile_other_than_2_or_4_is_an_error() {
    let err = Conv2dWinograd::with_tile(3).unwrap_err().to_string();
    assert!(err.contains("2 or 4") && err.contains('3'), "{err}");
}

/// The rewritten module against the direct convolution on both targets.
fn check(case: &Case, tile: i64, tolerance: f64) {
    let before = case.module();
    let after = rewritten(case, tile);
    assert_ne!(calls(&before), calls(&after), "{case:?} was not rewritten");
    let args = case.args(case.batch.unwrap_or(2));
    let want = run(&before, &Target::interpreter(), &args);
    for target in targets() {
        let got = run(&after, &target, &args);
        let err = max_rel_error(&got, &want);
        assert!(
            err <= tolerance,
            "F({tile}, 3) {case:?} on {target}: relative error {err:e}"
        );
    }
}

#[test]
fn f2_matches_the_direct_convolution_at_odd_sizes() {
    for (c_in, c_out, h, w, pad) in [
        (3, 5, 7, 9, 1),
        (5, 3, 8, 11, 0),
        (6, 33, 5, 5, 1),
        (1, 1, 3, 3, 0),
        (3, 5, 6, 21, 1),
    ] {
        check(&Case::new(c_in, c_out, h, w, pad), 2, 1e-5);
    }
}

#[test]
fn f4_matches_the_direct_convolution_at_odd_sizes() {
    for (c_in, c_out, h, w, pad) in [
        (3, 5, 7, 9, 1),
        (5, 3, 10, 13, 0),
        (7, 17, 6, 6, 1),
        (2, 3, 5, 37, 1),
        (2, 3, 21, 9, 1),
    ] {
        check(&Case::new(c_in, c_out, h, w, pad), 4, 1e-4);
    }
}

/// The input transform's three forms, by the image's tiles (the odd
/// sizes above check each against the direct convolution): at most
/// `CHANNEL_VECTOR_TILES` tiles are the lanes of one vector per channel
/// (`d`, gathered); more, in rows of at least `PHASE_MIN_TILES`, read each
/// column of a row's tiles once into `phase`; in narrower rows, `row` is
/// read in the combinations.
#[test]
fn the_input_transform_takes_its_form_from_the_tiles() {
    for (h, w, form) in [(5, 9, "d"), (21, 9, "row"), (5, 37, "phase")] {
        let case = Case::new(2, 3, h, w, 1);
        let (th, tw) = ((h + 3) / 4, (w + 3) / 4);
        let expected = if th * tw <= CHANNEL_VECTOR_TILES {
            "d"
        } else if tw >= PHASE_MIN_TILES {
            "phase"
        } else {
            "row"
        };
        assert_eq!(expected, form);
        let text = rewritten(&case, 4).to_string();
        // The phase form reads its columns out of `row`.
        let buffers: &[&str] = match form {
            "phase" => &["row", "phase"],
            _ => &[form],
        };
        for buffer in ["d", "row", "phase"] {
            let alloc = format!(" {buffer} = T.alloc_buffer");
            let want = buffers.contains(&buffer);
            assert_eq!(text.contains(&alloc), want, "{h} x {w}: {text}");
        }
    }
}

#[test]
fn a_symbolic_batch_is_rewritten() {
    check(
        &Case {
            batch: None,
            ..Case::new(3, 5, 7, 9, 1)
        },
        2,
        1e-5,
    );
}

fn with_epilogue(bias: bool, residual: bool, relu: bool) -> Epilogue {
    Epilogue {
        bias,
        residual,
        relu,
    }
}

#[test]
fn the_bias_the_residual_and_relu_are_computed_by_the_output_transform() {
    for (epilogue, params) in [
        (with_epilogue(true, false, false), 3),
        (with_epilogue(true, false, true), 3),
        (with_epilogue(true, true, true), 4),
        (with_epilogue(false, true, true), 3),
        (with_epilogue(false, false, true), 2),
    ] {
        let case = Case {
            epilogue,
            ..Case::new(5, 7, 9, 11, 1)
        };
        let m = rewritten(&case, 2);
        assert_eq!(
            calls(&m),
            [
                "reshape",
                "matmul",
                "reshape",
                "permute_dims",
                "winograd_input_transform",
                "matmul",
                "winograd_output_transform"
            ],
            "{epilogue:?}"
        );
        let Some(BaseFunc::Prim(f)) = m.get("winograd_output_transform") else {
            panic!("no output transform")
        };
        assert_eq!(f.params.len(), params, "{epilogue:?}");
        check(&case, 2, 1e-5);
        check(&case, 4, 1e-4);
    }
}

/// A value used twice ends the chain: the bias add is absorbed (the
/// convolution has one use), the relu after it (the add has two) is not.
#[test]
fn a_value_with_other_uses_ends_the_chain() {
    let case = Case {
        epilogue: with_epilogue(true, false, false),
        ..Case::new(4, 6, 7, 7, 1)
    };
    let before = case.module();
    // main returns (add, relu(add)): the add has two uses.
    let main = before.get_relax("main").unwrap();
    let seq = main.body.as_seq().unwrap();
    let mut bb = BlockBuilder::new();
    let params = main.params.clone();
    let conv = seq.blocks[0].bindings[0].value().clone();
    let conv_var = seq.blocks[0].bindings[0].var().clone();
    let add = seq.blocks[0].bindings[1].value().clone();
    bb.function("main", params, |bb| {
        bb.dataflow(|bb| {
            let c = bb.emit(conv)?;
            let add = crate::mutator::replace_vars(
                &add,
                &[(conv_var.clone(), Expr::var(&c))].into_iter().collect(),
                &IRModule::new(),
            )?;
            let a = bb.emit(add)?;
            let relu = crate::op::lookup("relax.nn.relu")
                .unwrap()
                .call(vec![Expr::var(&a)], &Attrs::new())
                .unwrap();
            let r = bb.emit(relu)?;
            let out = bb.emit_output(Expr::tuple(vec![Expr::var(&a), Expr::var(&r)]))?;
            Ok(Expr::var(&out))
        })
    })
    .unwrap();
    let m = Conv2dWinograd::with_tile(2)
        .unwrap()
        .run(bb.finalize().unwrap())
        .unwrap();
    let names = calls(&m);
    assert_eq!(
        names[names.len() - 2..],
        ["winograd_output_transform", "nn.relu"]
    );
    let Some(BaseFunc::Prim(f)) = m.get("winograd_output_transform") else {
        panic!("no output transform")
    };
    assert_eq!(f.params.len(), 3);
}

#[test]
fn the_default_rule_picks_the_tile_by_image_and_channels() {
    assert_eq!(Conv2dWinograd::tile_for(64, 64, 56, 56), Some(4));
    assert_eq!(Conv2dWinograd::tile_for(256, 256, 14, 14), Some(4));
    assert_eq!(Conv2dWinograd::tile_for(512, 512, 7, 7), Some(2));
    assert_eq!(Conv2dWinograd::tile_for(8, 64, 56, 56), None);
    assert_eq!(Conv2dWinograd::tile_for(64, 64, 5, 5), None);
    // Too narrow for the default rule: left alone.
    let before = Case::new(5, 7, 9, 11, 1).module();
    let after = Conv2dWinograd::default().run(before.clone()).unwrap();
    assert!(crate::ir::structural_equal(&before, &after));
    // Wide enough: F(2, 3) on 7 × 7.
    let case = Case::new(16, 17, 7, 7, 1);
    let after = Conv2dWinograd::default().run(case.module()).unwrap();
    assert!(calls(&after).contains(&"winograd_output_transform".to_string()));
}

/// Ahead of time (`relax::aot`, `relax compile`), a convolution where
/// Winograd wins is compiled as `relax::build` compiles it for the host:
/// through the tile transforms, not as a direct convolution.
#[cfg(all(feature = "syntax", feature = "llvm"))]
#[test]
fn ahead_of_time_compilation_uses_winograd_as_the_host_build_does() {
    use crate::backend::aot::{compile_ir_module, cpu_variants};
    use crate::transform::PassContext;
    let m = Case::new(16, 16, 14, 14, 1).module();
    let compiled = compile_ir_module(
        &m,
        "relax_winograd",
        &cpu_variants(false),
        &PassContext::new(),
    )
    .unwrap();
    let names: Vec<&str> = compiled.kernels.iter().map(|k| k.name.as_str()).collect();
    for transform in ["winograd_input_transform", "winograd_output_transform"] {
        assert!(
            names.iter().any(|n| n.contains(transform)),
            "{transform} not among {names:?}"
        );
    }
    assert!(!names.iter().any(|n| n.contains("conv2d")), "{names:?}");
}
