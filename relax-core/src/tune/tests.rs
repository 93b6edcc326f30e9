//! Tuning: every candidate computes what the unscheduled kernel does (on
//! the loop-level interpreter, which checks every access against its
//! buffer's bounds), at sizes off every tile; the database round-trips
//! and a build that finds its kernels there measures nothing.

use super::measure::random;
use super::*;
use crate::backend::{build, pipeline, Target};
use crate::ir::BaseFunc;
use crate::tir::interp::InterpreterLibrary;
use crate::tir::PrimFunc;
use crate::transform::{kernel_key, Pass};
use relax_runtime::{Tensor, Value, VirtualMachine};

/// A module whose `main` computes `body` of float32 `params` into `out`.
fn module(params: &str, out: &str, body: &str) -> String {
    format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main({params}) -> R.Tensor({out}, dtype="float32"):
        with R.dataflow():
            y: R.Tensor({out}, dtype="float32") = {body}
            R.output(y)
        return y
"#
    )
}

/// A packed GEMM, 38 × 300 × 93 (1.06M multiply-adds): tiles, slices and
/// tails on every knob.
fn gemm_module() -> String {
    module(
        r#"x: R.Tensor((38, 300), dtype="float32"), w: R.Tensor((300, 93), dtype="float32")"#,
        "(38, 93)",
        "R.matmul(x, w)",
    )
}

/// A GEMM of `rows` × 300 × 93: a 7 × 7 image's pixels in NHWC (49) or
/// two images' (98).
fn pixels_module(rows: i64) -> String {
    module(
        &format!(
            r#"x: R.Tensor(({rows}, 300), dtype="float32"), w: R.Tensor((300, 93), dtype="float32")"#
        ),
        &format!("({rows}, 93)"),
        "R.matmul(x, w)",
    )
}

/// An implicit GEMM with padding and folded rows, (1, 32, 6, 5) ⊛ (130,
/// 32, 3, 3).
fn conv_module() -> String {
    module(
        r#"x: R.Tensor((1, 32, 6, 5), dtype="float32"), w: R.Tensor((130, 32, 3, 3), dtype="float32")"#,
        "(1, 130, 6, 5)",
        "R.nn.conv2d(x, w, padding=[1, 1, 1, 1])",
    )
}

/// The module's PrimFuncs as the host pipeline leaves them before
/// `DefaultSchedule`.
fn unscheduled(text: &str) -> (IRModule, Vec<(String, PrimFunc)>) {
    let m: IRModule = text.parse().unwrap();
    let lowered = pipeline(&Target::tir_interpreter()).run(m).unwrap();
    let funcs = lowered
        .functions()
        .filter_map(|(gv, f)| match f {
            BaseFunc::Prim(p) => Some((gv.name_hint().to_string(), p.clone())),
            _ => None,
        })
        .collect();
    (lowered, funcs)
}

/// `func` run on the loop-level interpreter on `buffers` (every buffer
/// parameter, inputs first), which it leaves as the kernel does.
fn interpret(func: &PrimFunc, buffers: &mut [Tensor]) {
    let lib: InterpreterLibrary = [("f".to_string(), func.clone())].into_iter().collect();
    let kernel = relax_runtime::native::NativeLibrary::lookup(&lib, "f").unwrap();
    kernel.call(&[], buffers, &[]).unwrap();
}

/// The one compute kernel (a matmul or a convolution) of `text`,
/// unscheduled.
fn gemm_kernel(text: &str) -> PrimFunc {
    let (_, funcs) = unscheduled(text);
    funcs
        .into_iter()
        .find(|(name, _)| name.contains("matmul") || name.contains("conv2d"))
        .expect("a GEMM kernel")
        .1
}

/// Each of `scheduled` (a name and a schedule of `func`), interpreted,
/// gives `func`'s results on the same random inputs.
fn agree_with_unscheduled(func: &PrimFunc, scheduled: &[(String, PrimFunc)]) {
    let shapes: Vec<(relax_runtime::DataType, Vec<i64>)> = func
        .buffers()
        .map(|b| {
            let shape = b.shape().iter().map(|d| d.as_int().unwrap()).collect();
            (b.dtype(), shape)
        })
        .collect();
    let inputs: Vec<Tensor> = shapes
        .iter()
        .enumerate()
        .map(|(i, (dt, s))| random(*dt, s, i as u64 + 3).unwrap())
        .collect();
    let copy = || -> Vec<Tensor> {
        inputs
            .iter()
            .map(|t| Tensor::from_bytes(t.dtype(), t.shape(), t.as_bytes()).unwrap())
            .collect()
    };
    let mut want = copy();
    interpret(func, &mut want);
    let out = want.last().unwrap().to_vec::<f32>().unwrap();
    let scale = out.iter().fold(1f32, |m, v| m.max(v.abs()));
    for (name, f) in scheduled {
        let mut got = copy();
        interpret(f, &mut got);
        let got = got.last().unwrap().to_vec::<f32>().unwrap();
        for (e, (g, w)) in got.iter().zip(&out).enumerate() {
            assert!(
                (g - w).abs() <= 1e-5 * scale,
                "{name}: element {e}: {g} vs {w}"
            );
        }
    }
}

/// Every candidate (up to `n`) of the one compute kernel of `text`,
/// interpreted, gives the unscheduled kernel's results; returns how many
/// there were.
fn candidates_agree(text: &str, n: usize) -> Vec<Knobs> {
    let func = gemm_kernel(text);
    let schedule = DefaultSchedule::with_vector_bits(512);
    let cands = candidates(&schedule, &func, n, 7);
    assert_eq!(cands[0].knobs, Knobs::default());
    let named: Vec<(String, PrimFunc)> = cands
        .iter()
        .map(|c| {
            (
                tuner::describe(&c.knobs, &schedule.knobs()),
                c.scheduled.clone(),
            )
        })
        .collect();
    agree_with_unscheduled(&func, &named);
    cands.iter().map(|c| c.knobs).collect()
}

/// Each vendor's knobs ([`Knobs::for_vendor`]) schedule a GEMM and a
/// convolution that compute the unscheduled kernels, whatever CPU the
/// test runs on: Intel's 12-row tile and 256-deep slices (a K of 300 is
/// a slice and a tail) included, and its tile of 7 rows for 49 rows and
/// of 14 for 98 (`rows_tile`: no tile mostly padding).
#[test]
fn every_vendors_knobs_compute_the_unscheduled_kernel() {
    use relax_runtime::cpu::Vendor;
    for (rows, tile) in [(49, 7), (98, 14)] {
        let func = gemm_kernel(&pixels_module(rows));
        let knobs = Knobs::for_vendor(Vendor::Intel, 512);
        let f = DefaultSchedule::with_vector_bits(512).schedule_prim_func_with(&func, knobs);
        let text = crate::tir::schedule::tests::text(&f);
        assert!(
            text.contains(&format!("acc = T.alloc_buffer(({tile}, 32))")),
            "{text}"
        );
        agree_with_unscheduled(&func, &[("Intel".to_string(), f)]);
    }
    let gemm = gemm_module();
    let conv = conv_module();
    for text in [gemm, conv] {
        let func = gemm_kernel(&text);
        let named: Vec<(String, PrimFunc)> = [Vendor::Amd, Vendor::Intel, Vendor::Other]
            .into_iter()
            .map(|v| {
                let knobs = Knobs::for_vendor(v, 512);
                let f =
                    DefaultSchedule::with_vector_bits(512).schedule_prim_func_with(&func, knobs);
                (format!("{v:?}"), f)
            })
            .collect();
        // Intel's knobs act on both (the tile's rows, the GEMM's slices).
        assert_ne!(format!("{:?}", named[0].1), format!("{:?}", named[1].1));
        agree_with_unscheduled(&func, &named);
    }
}

/// A packed GEMM (38 × 300 × 93, 1.06M multiply-adds): every candidate's
/// tiles, blocks and tails stay in bounds and sum the same.
#[test]
fn every_candidate_of_a_gemm_computes_the_unscheduled_kernel() {
    let text = gemm_module();
    let knobs = candidates_agree(&text, 6);
    assert_eq!(knobs.len(), 6, "{knobs:?}");
    // The GEMM's knobs act; the convolution's and the chunk's do not.
    assert!(knobs
        .iter()
        .all(|k| k.conv_rows == 0 && k.parallel_chunk == 4096));
    assert!(knobs
        .iter()
        .any(|k| k.gemm_mr != 6 || k.gemm_blocking != Knobs::default().gemm_blocking));
}

/// An implicit GEMM with padding and folded rows (1, 32, 6, 5) ⊛ (130,
/// 32, 3, 3): every candidate matches.
#[test]
fn every_candidate_of_a_convolution_computes_the_unscheduled_kernel() {
    let text = conv_module();
    let knobs = candidates_agree(&text, 4);
    assert_eq!(knobs.len(), 4, "{knobs:?}");
}

/// A batched product of case 2's register tiles (a Winograd
/// convolution's: 6 products of 37 × 64 by 64 × 16): `reduction_rows`
/// acts on it (tiles of 2 to 24 rows, 37 rows leaving tails), the GEMM's
/// knobs do not, and every candidate matches.
#[test]
fn every_candidate_of_a_batched_product_computes_the_unscheduled_kernel() {
    let text = module(
        r#"a: R.Tensor((6, 37, 64), dtype="float32"), x: R.Tensor((1, 6, 64, 16), dtype="float32")"#,
        "(1, 6, 37, 16)",
        "R.matmul(a, x)",
    );
    let knobs = candidates_agree(&text, 8);
    assert!(knobs.len() > 4, "{knobs:?}");
    assert!(knobs[1..].iter().all(|k| k.reduction_rows > 0), "{knobs:?}");
    assert!(knobs.iter().all(|k| k.gemm_mr == Knobs::default().gemm_mr));
}

/// An elementwise kernel has no knob that changes its loops but the
/// chunk of a one-loop nest; a small one has none at all.
#[test]
fn kernels_without_knobs_have_one_candidate() {
    let text = module(
        r#"x: R.Tensor((9, 37), dtype="float32"), b: R.Tensor((37,), dtype="float32")"#,
        "(9, 37)",
        "R.add(x, b)",
    );
    let (_, funcs) = unscheduled(&text);
    for (_, f) in &funcs {
        assert_eq!(
            candidates(&DefaultSchedule::with_vector_bits(512), f, 8, 1).len(),
            1
        );
    }
}

/// Tuning records the kernel; a second run with the database measures
/// nothing and gives the same knobs; a build with them computes the
/// same as the default build.
#[test]
fn the_database_is_reused_without_measuring() {
    let text = module(
        r#"x: R.Tensor((70, 130), dtype="float32"), w: R.Tensor((130, 131), dtype="float32")"#,
        "(70, 131)",
        "R.matmul(x, w)",
    );
    let (lowered, _) = unscheduled(&text);
    let dir = std::env::temp_dir().join(format!("relax-tune-test-{}", std::process::id()));
    let path = dir.join("db.json");
    let _ = std::fs::remove_file(&path);
    let first = Tuning::measuring(path.clone(), 4);
    let (knobs, report) = first.knobs(&lowered).unwrap();
    assert!(report.measured >= 2, "{}", report.summary());
    assert_eq!(knobs.len(), 1, "{}", report.summary());
    let db = TuningDatabase::load(&path).unwrap();
    assert_eq!(db.len(), 1);
    // Read only: the database's knobs, nothing measured.
    let (again, report) = Tuning::read_only(path.clone()).knobs(&lowered).unwrap();
    assert_eq!(report.measured, 0);
    assert_eq!(again, knobs);
    assert!(matches!(
        report
            .kernels
            .iter()
            .find(|k| knobs.contains_key(&k.key))
            .unwrap()
            .outcome,
        KernelOutcome::Reused(_)
    ));
    // Asked to tune again: still nothing measured.
    let (_, report) = Tuning::measuring(path.clone(), 8).knobs(&lowered).unwrap();
    assert_eq!(report.measured, 0, "{}", report.summary());
    // The build with the knobs: the kernel scheduled with them, and the
    // same results.
    let (key, k) = knobs.iter().next().map(|(a, b)| (*a, *b)).unwrap();
    let schedule = DefaultSchedule::for_host().with_tuned(std::sync::Arc::new(knobs.clone()));
    let (_, funcs) = unscheduled(&text);
    let f = funcs.iter().find(|(_, f)| kernel_key(f) == key).unwrap();
    assert_eq!(schedule.knobs_for(&f.1), k);
    let m: IRModule = text.parse().unwrap();
    let tuned = build(&m, &Target::host().with_tuned_knobs(knobs)).unwrap();
    let plain = build(&m, &Target::host()).unwrap();
    let args: Vec<Value> = [vec![70, 130], vec![130, 131]]
        .iter()
        .enumerate()
        .map(|(i, s)| {
            random(relax_runtime::DataType::f32(), s, i as u64)
                .unwrap()
                .into()
        })
        .collect();
    let run = |e| {
        VirtualMachine::new(e)
            .call("main", &args)
            .unwrap()
            .as_tensor()
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    };
    let (a, b) = (run(&tuned), run(&plain));
    let scale = b.iter().fold(1f32, |m, v| m.max(v.abs()));
    assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-5 * scale));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A candidate that computes something else is rejected before it is
/// timed.
#[test]
fn a_wrong_candidate_is_rejected() {
    let text = module(
        r#"x: R.Tensor((70, 130), dtype="float32"), w: R.Tensor((130, 131), dtype="float32")"#,
        "(70, 131)",
        "R.matmul(x, w)",
    );
    let (_, funcs) = unscheduled(&text);
    let (_, f) = funcs.iter().find(|(n, _)| n.contains("matmul")).unwrap();
    let schedule = DefaultSchedule::for_host();
    let mut cands = candidates(&schedule, f, 1, 1);
    // The second "candidate": the same kernel with its init 1 instead of
    // 0, so every output is off by one.
    let mut wrong = f.clone();
    wrong.body = init_one(&f.body);
    cands.push(Candidate {
        knobs: Knobs::default(),
        scheduled: schedule.schedule_prim_func(&wrong),
    });
    let outcomes = measure::measure(f, &cands, &Default::default()).unwrap();
    assert!(matches!(outcomes[0], measure::Outcome::Time(_)));
    assert!(
        matches!(&outcomes[1], measure::Outcome::Rejected(why) if why.contains("where the default gives")),
        "{outcomes:?}"
    );
}

/// `s` with every reduction's init storing 1.
fn init_one(s: &crate::tir::Stmt) -> crate::tir::Stmt {
    use crate::ir::prim_expr::PrimExpr;
    use crate::tir::Stmt;
    if let Stmt::Block(b) = s {
        if let Some(Stmt::BufferStore {
            buffer, indices, ..
        }) = b.init.as_deref()
        {
            let mut b = (**b).clone();
            b.init = Some(Box::new(Stmt::BufferStore {
                buffer: buffer.clone(),
                value: PrimExpr::float(buffer.dtype(), 1.0),
                indices: indices.clone(),
            }));
            return Stmt::Block(Box::new(b));
        }
    }
    match s.try_map_children(|c| Ok::<_, std::convert::Infallible>(init_one(c))) {
        Ok(r) => r,
        Err(never) => match never {},
    }
}
