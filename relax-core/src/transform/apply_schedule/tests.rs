//! `ApplySchedule`: the user's schedule survives the build pipeline (and
//! `DefaultSchedule` in it), computes what the default does, and bad names
//! and failed steps are errors naming them.

use super::*;
use crate::backend::{build, pipeline, Target};
use crate::transform::LegalizeOps;
use relax_runtime::{Tensor, Value, VirtualMachine};

const MODULE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((24, 16), dtype="float32"), w: R.Tensor((16, 20), dtype="float32")) -> R.Tensor((24, 20), dtype="float32"):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.nn.relu(y)
            R.output(z)
        return z
"#;

fn legalized() -> IRModule {
    let m: IRModule = MODULE.parse().unwrap();
    LegalizeOps::default().run(m).unwrap()
}

/// A hand schedule of the legalized matmul: rows split by 8, the outer
/// rows parallel, the column loop vectorized.
fn by_hand() -> ApplySchedule {
    ApplySchedule::default().func("matmul", |s| {
        let b = s.get_block("T_matmul")?;
        let [i, j, k] = s.get_loops(b)?[..] else {
            unreachable!("three loops")
        };
        let [i0, i1] = s.split(i, &[None, Some(8)])?[..] else {
            unreachable!("two loops")
        };
        s.reorder(&[i0, i1, k, j])?;
        s.parallel(i0)?;
        Ok(())
    })
}

fn prim<'a>(m: &'a IRModule, name: &str) -> &'a crate::tir::PrimFunc {
    m.functions()
        .find_map(|(gv, f)| match f {
            BaseFunc::Prim(p) if gv.name_hint() == name => Some(p),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no {name}"))
}

fn run(m: &IRModule, target: &Target) -> Vec<f32> {
    let exec = build(m, target).unwrap();
    let vm = VirtualMachine::new(&exec);
    let x: Vec<f32> = (0..24 * 16).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
    let w: Vec<f32> = (0..16 * 20)
        .map(|i| ((i * 5) % 13) as f32 * 0.25 - 1.5)
        .collect();
    let out = vm
        .call(
            "main",
            &[
                Value::Tensor(Tensor::from_vec(&[24, 16], x).unwrap()),
                Value::Tensor(Tensor::from_vec(&[16, 20], w).unwrap()),
            ],
        )
        .unwrap();
    out.as_tensor().unwrap().to_vec::<f32>().unwrap()
}

#[test]
fn the_users_schedule_survives_the_pipeline_and_computes_the_same() {
    let scheduled = by_hand().run(legalized()).unwrap();
    let f = prim(&scheduled, "matmul");
    assert!(is_scheduled(&f.attrs));
    assert_eq!(
        f.attrs.get(OP_PATTERN),
        Some(&AttrValue::Int(OpPatternKind::Opaque as i64))
    );
    // DefaultSchedule (run here for 512-bit vectors) leaves the user's
    // kernel as it is; fusion does not merge it with the relu.
    let target = Target::tir_interpreter().with_vector_bits(512);
    let lowered = pipeline(&target).run(scheduled.clone()).unwrap();
    assert_eq!(prim(&lowered, "matmul").body, f.body);
    let text = lowered.to_string();
    assert!(text.contains("for ax0_0 in T.parallel(3):"), "{text}");
    // It computes what the default build and the reference kernels do.
    let want = run(&legalized(), &Target::interpreter());
    assert_eq!(run(&scheduled, &target), want);
    assert_eq!(run(&legalized(), &target), want);
}

#[test]
fn unknown_names_and_failed_steps_are_errors_naming_them() {
    let e = ApplySchedule::default()
        .func("matmull", |_| Ok(()))
        .run(legalized())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no PrimFunc named `matmull`; its PrimFuncs are: matmul, relu"),
        "{e}"
    );
    let e = ApplySchedule::default()
        .func("relu", |s| s.get_block("T_matmul").map(|_| ()))
        .run(legalized())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("scheduling `relu`: get_block: no block named \"T_matmul\""),
        "{e}"
    );
}
