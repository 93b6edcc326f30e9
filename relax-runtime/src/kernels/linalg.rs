//! `relax.matmul` with NumPy semantics.
//!
//! 1. A 1-D left operand is promoted to a `(1, k)` row, a 1-D right operand to
//!    a `(k, 1)` column; the added dim is removed from the result again.
//! 2. The dims before the last two are batch dims and broadcast (NumPy rules:
//!    aligned from the right, a dim of 1 stretches). Each batch entry is one
//!    2-D product; an operand with fewer batch dims is reused, not copied.
//! 3. Float products go through ndarray's `dot` (its GEMM); integer products
//!    are a plain loop that wraps on overflow. `float16` and `bfloat16`
//!    operands are widened to `f32`, multiplied and summed there, and each
//!    result is rounded once to the element type.
//! 4. `out_dtype` `void` keeps the (common) input dtype. Otherwise both
//!    operands are converted to `out_dtype` before multiplying and the sum is
//!    accumulated in it, as TVM's legalization does
//!    (`a.astype(out) * b.astype(out)`), so the inputs may differ in dtype.

use super::alloc;
use super::args::{check_arity, same_dtype, tensor_arg, tensor_value, udims, view};
use super::dispatch::{cast_to, with_num, Num};
use super::{Kernel, KernelAttrs};
use crate::tensor::fmt_shape;
use crate::value::Value;
use ndarray::{ArrayView2, ArrayViewD, ArrayViewMut2, Axis, Dimension, Ix2};

/// The linear-algebra kernels.
pub const KERNELS: &[(&str, Kernel)] = &[("relax.matmul", matmul)];

/// `relax.matmul(x1, x2, out_dtype)`.
fn matmul(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let a = tensor_arg(args, 0, "x1")?;
    let b = tensor_arg(args, 1, "x2")?;
    let plan = MatmulPlan::new(a.shape(), b.shape())?;
    let out_dtype = attrs.dtype("out_dtype")?;
    if out_dtype.is_void() {
        let dtype = same_dtype(&[("x1", a), ("x2", b)])?;
        with_num!(dtype, T => plan.run::<T>(view::<T>(a)?, view::<T>(b)?))
    } else {
        with_num!(out_dtype, T => {
            let (ca, cb) = (cast_to::<T>(a)?, cast_to::<T>(b)?);
            plan.run::<T>(ca.view(), cb.view())
        })
    }
}

/// The shapes of one matmul call, checked.
struct MatmulPlan {
    /// x1's shape with a 1-D operand promoted to `(1, k)`.
    a: Vec<usize>,
    /// x2's shape with a 1-D operand promoted to `(k, 1)`.
    b: Vec<usize>,
    /// The broadcast batch dims.
    batch: Vec<usize>,
    /// The result shape, promoted dims removed.
    out: Vec<usize>,
}

impl MatmulPlan {
    fn new(sa: &[i64], sb: &[i64]) -> Result<MatmulPlan, String> {
        for (name, s) in [("x1", sa), ("x2", sb)] {
            if s.is_empty() {
                return Err(format!("{name} must have rank at least 1, found a scalar"));
            }
        }
        let mismatch =
            |what: &str| format!("{what}: x1 is {}, x2 is {}", fmt_shape(sa), fmt_shape(sb));
        let mut a = udims(sa);
        let mut b = udims(sb);
        if a.len() == 1 {
            a.insert(0, 1);
        }
        if b.len() == 1 {
            b.push(1);
        }
        let (ra, rb) = (a.len(), b.len());
        if a[ra - 1] != b[rb - 2] {
            return Err(mismatch("inner dimensions differ"));
        }
        let (ba, bb) = (&a[..ra - 2], &b[..rb - 2]);
        let nb = ba.len().max(bb.len());
        let mut batch = Vec::with_capacity(nb);
        for i in 0..nb {
            // Align from the right; a missing dim acts as 1.
            let da = (i + ba.len()).checked_sub(nb).map_or(1, |j| ba[j]);
            let db = (i + bb.len()).checked_sub(nb).map_or(1, |j| bb[j]);
            batch.push(match (da, db) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => return Err(mismatch("batch dimensions do not broadcast")),
            });
        }
        let mut out = batch.clone();
        if sa.len() >= 2 {
            out.push(a[ra - 2]);
        }
        if sb.len() >= 2 {
            out.push(b[rb - 1]);
        }
        Ok(MatmulPlan { a, b, batch, out })
    }

    /// The product of `x` and `y` (already of element type `T`).
    fn run<T: MatMul>(&self, x: ArrayViewD<'_, T>, y: ArrayViewD<'_, T>) -> Result<Value, String> {
        let x = x
            .into_shape_with_order(self.a.clone())
            .map_err(|e| e.to_string())?;
        let y = y
            .into_shape_with_order(self.b.clone())
            .map_err(|e| e.to_string())?;
        let n = self.out.iter().product();
        let mut data = alloc::vec::<T>(n)?;
        data.resize(n, T::ZERO);
        let (rows, cols) = (self.a[self.a.len() - 2], self.b[self.b.len() - 1]);
        if n > 0 {
            for (idx, c) in ndarray::indices(self.batch.clone())
                .into_iter()
                .zip(data.chunks_exact_mut(rows * cols))
            {
                let ma = batch_matrix(&x, idx.slice(), self.batch.len())?;
                let mb = batch_matrix(&y, idx.slice(), self.batch.len())?;
                let c = ndarray::ArrayViewMut2::from_shape((rows, cols), c)
                    .map_err(|e| e.to_string())?;
                T::matmul2(ma, mb, c);
            }
        }
        tensor_value(&self.out, data)
    }
}

/// The 2-D matrix product of an element type, the one step of matmul whose
/// algorithm depends on the type.
trait MatMul: Num {
    /// `c = a · b` for 2-D views with matching dims (`c` is zero-filled).
    fn matmul2(a: ArrayView2<'_, Self>, b: ArrayView2<'_, Self>, c: ArrayViewMut2<'_, Self>);
}

macro_rules! matmul_float {
    ($($t:ty),*) => {$(
        impl MatMul for $t {
            fn matmul2(a: ArrayView2<'_, Self>, b: ArrayView2<'_, Self>, mut c: ArrayViewMut2<'_, Self>) {
                // matrixmultiply's GEMM, writing into the output in place.
                ndarray::linalg::general_mat_mul(1.0, &a, &b, 0.0, &mut c);
            }
        }
    )*};
}
matmul_float!(f32, f64);

macro_rules! matmul_half {
    ($($t:ty),*) => {$(
        impl MatMul for $t {
            fn matmul2(a: ArrayView2<'_, Self>, b: ArrayView2<'_, Self>, mut c: ArrayViewMut2<'_, Self>) {
                let (wa, wb) = (a.mapv(<$t>::to_f32), b.mapv(<$t>::to_f32));
                let mut wc = ndarray::Array2::<f32>::zeros(c.raw_dim());
                ndarray::linalg::general_mat_mul(1.0, &wa, &wb, 0.0, &mut wc);
                c.zip_mut_with(&wc, |o, &v| *o = <$t>::from_f32(v));
            }
        }
    )*};
}
matmul_half!(half::f16, half::bf16);

macro_rules! matmul_int {
    ($($t:ty),*) => {$(
        impl MatMul for $t {
            fn matmul2(a: ArrayView2<'_, Self>, b: ArrayView2<'_, Self>, mut c: ArrayViewMut2<'_, Self>) {
                // ndarray's integer `dot` would panic on overflow in debug
                // builds; a plain loop with wrapping arithmetic does not.
                let k = a.dim().1;
                for ((i, j), out) in c.indexed_iter_mut() {
                    *out = (0..k).fold(0, |acc, l| Self::mul_add(acc, a[(i, l)], b[(l, j)]));
                }
            }
        }
    )*};
}
matmul_int!(i8, i16, i32, i64, u8, u16, u32, u64);

/// The matrix of `m` (batch dims then 2) at the output batch index `idx`
/// (`nb` dims): `m`'s batch dims align with the last of `idx`, and a dim of
/// size 1 is broadcast.
fn batch_matrix<'a, T>(
    m: &ArrayViewD<'a, T>,
    idx: &[usize],
    nb: usize,
) -> Result<ndarray::ArrayView2<'a, T>, String> {
    let own = m.ndim() - 2;
    let mut v = m.clone();
    for &i in &idx[nb - own..] {
        let pick = if v.len_of(Axis(0)) == 1 { 0 } else { i };
        v = v.index_axis_move(Axis(0), pick);
    }
    v.into_dimensionality::<Ix2>().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data_type::DataType;
    use crate::executable::KernelAttr;
    use crate::kernels::testing::tv;
    use crate::tensor::Tensor;
    fn none() -> KernelAttrs {
        KernelAttrs(vec![(
            "out_dtype".into(),
            KernelAttr::DataType(DataType::void()),
        )])
    }
    fn out(dt: DataType) -> KernelAttrs {
        KernelAttrs(vec![("out_dtype".into(), KernelAttr::DataType(dt))])
    }
    fn run(a: Value, b: Value, attrs: &KernelAttrs) -> Result<Tensor, String> {
        matmul(&[a, b], attrs).map(|v| v.as_tensor().unwrap().clone())
    }

    #[test]
    fn two_d_float() {
        let a = tv(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let b = tv(&[3, 2], vec![7.0f32, 8.0, 9.0, 10.0, 11.0, 12.0]);
        let r = run(a, b, &none()).unwrap();
        assert_eq!(r.shape(), &[2, 2]);
        assert_eq!(r.to_vec::<f32>().unwrap(), vec![58.0, 64.0, 139.0, 154.0]);
        let a = tv(&[1, 2], vec![0.5f64, -1.0]);
        let b = tv(&[2, 1], vec![4.0f64, 3.0]);
        assert_eq!(
            run(a, b, &none()).unwrap().to_vec::<f64>().unwrap(),
            vec![-1.0]
        );
    }

    #[test]
    fn one_d_operands_drop_the_promoted_dim() {
        let v = tv(&[2], vec![1.0f32, 2.0]);
        let m = tv(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let r = run(v.clone(), m.clone(), &none()).unwrap();
        assert_eq!(r.shape(), &[3]);
        assert_eq!(r.to_vec::<f32>().unwrap(), vec![9.0, 12.0, 15.0]);
        let mt = tv(&[3, 2], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let r = run(mt, v.clone(), &none()).unwrap();
        assert_eq!(r.shape(), &[3]);
        assert_eq!(r.to_vec::<f32>().unwrap(), vec![5.0, 11.0, 17.0]);
        let r = run(v.clone(), v, &none()).unwrap();
        assert_eq!(r.shape(), &[] as &[i64]);
        assert_eq!(r.to_vec::<f32>().unwrap(), vec![5.0]);
    }

    #[test]
    fn batched_with_broadcast() {
        // (2, 1, 2, 2) @ (3, 2, 1) -> (2, 3, 2, 1).
        let a = tv(
            &[2, 1, 2, 2],
            vec![1.0f32, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 2.0],
        );
        let b = tv(&[3, 2, 1], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let r = run(a, b, &none()).unwrap();
        assert_eq!(r.shape(), &[2, 3, 2, 1]);
        assert_eq!(
            r.to_vec::<f32>().unwrap(),
            vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
        );
        // A batched left operand times a 1-D vector: (2, 2, 3) @ (3,) -> (2, 2).
        let a = tv(&[2, 2, 3], (0..12).map(|i| i as f64).collect());
        let v = tv(&[3], vec![1.0f64, 0.0, -1.0]);
        let r = run(a, v, &none()).unwrap();
        assert_eq!(r.shape(), &[2, 2]);
        assert_eq!(r.to_vec::<f64>().unwrap(), vec![-2.0, -2.0, -2.0, -2.0]);
    }

    #[test]
    fn integers_wrap_and_out_dtype_converts_operands() {
        let a = tv(&[2, 2], vec![1i32, 2, 3, 4]);
        let b = tv(&[2, 2], vec![5i32, 6, 7, 8]);
        let r = run(a.clone(), b.clone(), &none()).unwrap();
        assert_eq!(r.dtype(), DataType::i32());
        assert_eq!(r.to_vec::<i32>().unwrap(), vec![19, 22, 43, 50]);
        let r = run(a, b, &out(DataType::f64())).unwrap();
        assert_eq!(r.to_vec::<f64>().unwrap(), vec![19.0, 22.0, 43.0, 50.0]);
        let big = tv(&[1, 2], vec![100i8, 100]);
        let one = tv(&[2, 1], vec![1i8, 1]);
        let r = run(big.clone(), one.clone(), &none()).unwrap();
        assert_eq!(r.to_vec::<i8>().unwrap(), vec![200u8 as i8]);
        let r = run(big, one, &out(DataType::i32())).unwrap();
        assert_eq!(r.to_vec::<i32>().unwrap(), vec![200]);
        // Mixed input dtypes are fine once out_dtype names the common one.
        let x = tv(&[1, 1], vec![2i64]);
        let y = tv(&[1, 1], vec![1.5f32]);
        let r = run(x, y, &out(DataType::f32())).unwrap();
        assert_eq!(r.to_vec::<f32>().unwrap(), vec![3.0]);
    }

    #[test]
    fn empty_dims() {
        // k = 0: every entry is an empty sum.
        let a = tv::<f32>(&[2, 0], vec![]);
        let b = tv::<f32>(&[0, 3], vec![]);
        let r = run(a, b, &none()).unwrap();
        assert_eq!(r.shape(), &[2, 3]);
        assert_eq!(r.to_vec::<f32>().unwrap(), vec![0.0; 6]);
        let a = tv::<i64>(&[2, 0], vec![]);
        let b = tv::<i64>(&[0, 1], vec![]);
        assert_eq!(
            run(a, b, &none()).unwrap().to_vec::<i64>().unwrap(),
            vec![0, 0]
        );
        // A zero batch dim gives an empty result.
        let a = tv::<f32>(&[0, 2, 2], vec![]);
        let b = tv(&[2, 2], vec![1.0f32, 0.0, 0.0, 1.0]);
        assert_eq!(run(a, b, &none()).unwrap().shape(), &[0, 2, 2]);
    }

    #[test]
    fn errors() {
        let m = tv(&[2, 3], vec![0.0f32; 6]);
        assert_eq!(
            run(m.clone(), m.clone(), &none()).unwrap_err(),
            "inner dimensions differ: x1 is (2, 3), x2 is (2, 3)"
        );
        let s = Value::Tensor(Tensor::scalar(1.0f32));
        assert_eq!(
            run(s, m.clone(), &none()).unwrap_err(),
            "x1 must have rank at least 1, found a scalar"
        );
        let a = tv(&[2, 2, 3], vec![0.0f32; 12]);
        let b = tv(&[3, 3, 1], vec![0.0f32; 9]);
        assert_eq!(
            run(a, b, &none()).unwrap_err(),
            "batch dimensions do not broadcast: x1 is (2, 2, 3), x2 is (3, 3, 1)"
        );
        let i = tv(&[3, 1], vec![1i32, 2, 3]);
        assert_eq!(
            run(m.clone(), i, &none()).unwrap_err(),
            "dtypes differ: x1 is float32, x2 is int32"
        );
        let bools = tv(&[1, 1], vec![true]);
        assert!(run(bools.clone(), bools, &none()).is_err());
        assert_eq!(
            matmul(std::slice::from_ref(&m), &none()).unwrap_err(),
            "expected 2 argument(s), found 1"
        );
        assert!(matmul(&[m, Value::Int(3)], &none()).is_err());
    }
}
