//! Helpers shared by the kernel tests: building tensor values and
//! attributes, running a registered kernel, and comparing results exactly or
//! within a tolerance.

use crate::executable::KernelAttr;
use crate::kernels::KernelAttrs;
use crate::tensor::{Element, Tensor};
use crate::value::Value;

/// A tensor value.
pub(crate) fn tv<T: Element>(shape: &[i64], data: Vec<T>) -> Value {
    Value::Tensor(Tensor::from_vec(shape, data).unwrap())
}

/// An `int32` tensor of `shape` holding `0, 1, 2, …` in row-major order.
pub(crate) fn iota(shape: &[i64]) -> Value {
    let n: i64 = shape.iter().product();
    tv(shape, (0..n as i32).collect())
}

/// An integer-list attribute.
pub(crate) fn ints(v: &[i64]) -> KernelAttr {
    KernelAttr::Array(v.iter().map(|&i| KernelAttr::Int(i)).collect())
}

/// Attributes from `(name, value)` pairs.
pub(crate) fn attrs(list: &[(&str, KernelAttr)]) -> KernelAttrs {
    KernelAttrs(
        list.iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect(),
    )
}

/// Runs the registered kernel of `op`.
pub(crate) fn run(op: &str, args: &[Value], list: &[(&str, KernelAttr)]) -> Result<Value, String> {
    let k = crate::kernels::lookup(op).unwrap_or_else(|| panic!("no kernel for {op}"));
    k(args, &attrs(list))
}

/// Asserts that `v` is a tensor of `shape` holding exactly `want`.
#[track_caller]
pub(crate) fn assert_tensor<T: Element>(v: &Value, shape: &[i64], want: &[T]) {
    let t = v.as_tensor().expect("a tensor");
    assert_eq!(t.shape(), shape, "shape");
    assert_eq!(t.to_vec::<T>().expect("dtype"), want);
}

/// Asserts that a kernel succeeded with a tensor of `shape` holding exactly
/// `want`.
#[track_caller]
pub(crate) fn assert_ok<T: Element>(v: Result<Value, String>, shape: &[i64], want: Vec<T>) {
    assert_tensor(&v.unwrap(), shape, &want);
}

/// Asserts that `v` is a float tensor of `shape` within relative
/// tolerance `rel` of `want` (NaN matches NaN).
#[track_caller]
pub(crate) fn assert_close(v: &Value, shape: &[i64], want: &[f64], rel: f64) {
    let t = v.as_tensor().expect("a tensor");
    assert!(t.dtype().is_float(), "dtype {}", t.dtype());
    assert_eq!(t.shape(), shape, "shape");
    let got = t.to_f64_vec();
    assert_eq!(got.len(), want.len());
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan())
            || g == w
            || (g - w).abs() <= rel * w.abs().max(f64::MIN_POSITIVE);
        assert!(ok, "element {i}: got {g}, want {w} (got {got:?})");
    }
}

/// [`assert_close`] with the `f32` tolerance, `1e-6` relative.
#[track_caller]
pub(crate) fn assert_close_f32(v: &Value, shape: &[i64], want: &[f64]) {
    assert_eq!(v.as_tensor().unwrap().dtype(), crate::DataType::f32());
    assert_close(v, shape, want, 1e-6);
}

#[cfg(test)]
mod tests {
    use crate::kernels::{conv, image, index, linalg, lookup, manipulate, ops, pad};

    #[test]
    fn every_kernel_is_registered_once() {
        let tables = [
            linalg::KERNELS,
            manipulate::KERNELS,
            index::KERNELS,
            conv::KERNELS,
            pad::KERNELS,
            image::KERNELS,
        ];
        for (name, _) in tables.iter().flat_map(|t| t.iter()) {
            assert!(lookup(name).is_some(), "{name} is not in TABLES");
            assert_eq!(ops().filter(|n| n == name).count(), 1, "{name}");
        }
        assert_eq!(tables.iter().map(|t| t.len()).sum::<usize>(), 30);
    }
}
