//! Words of four consecutive bytes (`T.dpbusd`'s operands) in vector
//! steps: one vector load of the bytes where the lanes' words are
//! consecutive, the generic per-byte code otherwise; both against the
//! interpreter, on bytes that reach 0, 127, 128 and 255.

use super::{bp, buf, func, run, store, var};
use crate::ir::prim_expr::PrimExpr;
use crate::tir::interp;
use crate::tir::{ForKind, PrimFunc};
use relax_runtime::{DataType, Tensor};

/// How byte `t` of the word is written.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// `i32(B[o + t]) · 2^8t`
    Plain,
    /// `(i32(B[o + t]) & 255) · 2^8t`
    Masked,
    /// `T.shift_left(i32(B[o + t]) & 255, 8t)`, the terms in reverse order
    ShiftedReversed,
}

/// `Out[i] = word(B[stride·i .. stride·i + 3])` over `n` words, `B` of
/// `dtype`, in a loop of `kind`.
fn word_kernel(n: i64, stride: i64, dtype: DataType, form: Form, kind: ForKind) -> PrimFunc {
    let i32t = DataType::i32();
    let len = stride * (n - 1) + 4;
    let (b, o) = (buf("B", &[len], dtype), buf("Out", &[n], i32t));
    let i = var("i");
    let byte = |t: i64| {
        let at = i.to_expr() * PrimExpr::int(stride) + PrimExpr::int(t);
        let wide = PrimExpr::load(&b, vec![at]).cast(i32t);
        let masked = PrimExpr::call(
            i32t,
            "bitwise_and",
            vec![wide.clone(), PrimExpr::int_of(i32t, 255)],
        );
        match form {
            Form::Plain => wide * PrimExpr::int_of(i32t, 1 << (8 * t)),
            Form::Masked => masked * PrimExpr::int_of(i32t, 1 << (8 * t)),
            Form::ShiftedReversed => PrimExpr::call(
                i32t,
                "shift_left",
                vec![masked, PrimExpr::int_of(i32t, 8 * t)],
            ),
        }
    };
    let terms: Vec<PrimExpr> = match form {
        Form::ShiftedReversed => (0..4).rev().map(byte).collect(),
        _ => (0..4).map(byte).collect(),
    };
    let value = terms.into_iter().reduce(|a, b| a + b).unwrap();
    let body = store(&o, vec![i.to_expr()], value);
    func(vec![bp(&b), bp(&o)], super::for_(&i, n, kind, body))
}

fn bytes(len: i64, dtype: DataType) -> Tensor {
    let raw: Vec<u8> = (0..len)
        .map(|k| match k {
            0..=3 => [0u8, 127, 128, 255][k as usize],
            _ => ((k * 89 + 13) % 256) as u8,
        })
        .collect();
    if dtype == DataType::int(8) {
        Tensor::from_vec(&[len], raw.into_iter().map(|x| x as i8).collect()).unwrap()
    } else {
        Tensor::from_vec(&[len], raw).unwrap()
    }
}

/// `f` on `input` through the JIT equals the interpreter's `n` words;
/// returns its LLVM IR before optimization.
fn compiled_as_interpreted(f: PrimFunc, input: Tensor, n: i64, case: &str) -> String {
    let mut want = [Tensor::zeros(DataType::i32(), &[n]).unwrap()];
    interp::run(&f, &[&input], &mut want, &[]).unwrap();
    let got = run(f.clone(), &[input], &[(DataType::i32(), vec![n])], &[]);
    assert_eq!(
        got[0].to_vec::<i32>().unwrap(),
        want[0].to_vec::<i32>().unwrap(),
        "{case}"
    );
    crate::codegen::llvm::emit_llvm_ir(&[("kernel".to_string(), f)], &Default::default(), false)
        .unwrap()
}

#[test]
fn a_word_of_consecutive_bytes_is_one_vector_load_and_equals_the_interpreter() {
    let u8t = DataType::uint(8);
    let i8t = DataType::int(8);
    // (dtype, form, stride, whether it is one vector load of the bytes):
    // int8 bytes need their masks (but the top one); words 8 bytes apart
    // are not consecutive.
    let cases = [
        (u8t, Form::Plain, 4, true),
        (u8t, Form::ShiftedReversed, 4, true),
        (i8t, Form::Masked, 4, true),
        (i8t, Form::ShiftedReversed, 4, true),
        (i8t, Form::Plain, 4, false),
        (u8t, Form::Masked, 8, false),
    ];
    // 16-lane steps and a tail of 5 lanes.
    let n = 37;
    for (dtype, form, stride, one_load) in cases {
        let f = word_kernel(n, stride, dtype, form, ForKind::Vectorized);
        let case = format!("{dtype} {form:?} stride {stride}");
        let ir = compiled_as_interpreted(f, bytes(stride * (n - 1) + 4, dtype), n, &case);
        assert_eq!(ir.contains("load <64 x i8>"), one_load, "{case}\n{ir}");
        assert_eq!(ir.contains("bitcast <64 x i8>"), one_load, "{case}");
    }
    // Outside a vector step a word is one 32-bit load too.
    let f = word_kernel(n, 4, i8t, Form::Masked, ForKind::Serial);
    let ir = compiled_as_interpreted(f, bytes(4 * n, i8t), n, "serial");
    assert!(
        ir.contains("load i32, i32*") && !ir.contains("load i8, i8*"),
        "{ir}"
    );
    // The word of bytes 0, 127, 128, 255 (little-endian) as a check of the
    // interpreter's side.
    let f = word_kernel(1, 4, u8t, Form::Masked, ForKind::Serial);
    let mut out = [Tensor::zeros(DataType::i32(), &[1]).unwrap()];
    interp::run(&f, &[&bytes(4, u8t)], &mut out, &[]).unwrap();
    assert_eq!(out[0].to_vec::<i32>().unwrap(), [0xff80_7f00u32 as i32]);
}
