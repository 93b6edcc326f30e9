//! Fused multi-head attention: `nn.attention(query, key, value)` and
//! `nn.attention_bias(query, key, value, bias)`, BSNH.
//!
//! 1. `query` is `(B, S, N, H)`, `key` `(B, Skv, Nkv, H)`, `value`
//!    `(B, Skv, Nkv, Hv)`, all of one float dtype; the result is
//!    `(B, S, N, Hv)`. `N` is a multiple of `Nkv`: query head `h` reads
//!    key/value head `h / (N / Nkv)` (grouped-query attention).
//! 2. The logit of query `i` and key `j` is `scale · Σ_d q·k` (`scale`
//!    defaults to `1 / sqrt(H)`) plus `bias[b, h, i, j]`, the bias 4-D and
//!    broadcast (each dim equal or 1) to `(B, N, S, Skv)`.
//! 3. `causal_mask`: `"TopLeft"` lets query `i` see keys `j ≤ i`,
//!    `"BottomRight"` keys `j ≤ i + |Skv − S|` (TVM's `tril(k=offset)`);
//!    a masked key has probability exactly 0. The softmax runs over the
//!    visible keys, their maximum subtracted first; a query with no key
//!    (`Skv = 0`) gets 0.
//! 4. Everything is computed in `f64` and rounded once to the dtype.
//!    `window_size` (sliding-window attention) is not implemented, here or
//!    in the legalization, and is reported.

use super::args::{check_arity, same_dtype, tensor_arg, tensor_value, udims, view};
use super::dispatch::{with_float, Float};
use super::{alloc, Kernel, KernelAttrs};
use crate::tensor::{fmt_shape, Tensor};
use crate::value::Value;

/// The attention kernels.
pub const KERNELS: &[(&str, Kernel)] = &[
    ("relax.nn.attention", attention),
    ("relax.nn.attention_bias", attention),
];

/// The dims and options of one call, checked.
struct Dims {
    b: usize,
    s: usize,
    n: usize,
    h: usize,
    skv: usize,
    nkv: usize,
    hv: usize,
    scale: f64,
    /// Keys `j ≤ i + offset` are visible, when masked.
    offset: Option<usize>,
}

fn check(args: &[Value], attrs: &KernelAttrs) -> Result<Dims, String> {
    let names = ["query", "key", "value", "bias"];
    let ts: Vec<&Tensor> = (0..args.len())
        .map(|i| tensor_arg(args, i, names[i]))
        .collect::<Result<_, _>>()?;
    for (t, name) in ts.iter().zip(names) {
        if t.ndim() != 4 {
            return Err(format!(
                "{name} must be 4-D (batch, seq_len, num_heads, head_dim), found {}",
                fmt_shape(t.shape())
            ));
        }
    }
    let [q, k, v] = [0, 1, 2].map(|i| udims(ts[i].shape()));
    let shapes = || {
        format!(
            "query is {}, key is {}, value is {}",
            fmt_shape(ts[0].shape()),
            fmt_shape(ts[1].shape()),
            fmt_shape(ts[2].shape())
        )
    };
    for (ok, what) in [
        (q[0] == k[0] && k[0] == v[0], "the batch sizes differ"),
        (q[3] == k[3], "query and key head dims differ"),
        (k[1] == v[1], "key and value sequence lengths differ"),
        (k[2] == v[2], "key and value head counts differ"),
        (
            k[2] != 0 && q[2] % k[2] == 0,
            "the query heads are not a multiple of the key heads",
        ),
    ] {
        if !ok {
            return Err(format!("{what}: {}", shapes()));
        }
    }
    if let Some(bias) = ts.get(3) {
        let target = [q[0], q[2], q[1], k[1]];
        let bs = udims(bias.shape());
        if bs.iter().zip(target).any(|(&d, t)| d != t && d != 1) || bs[3] != k[1] {
            return Err(format!(
                "bias must broadcast to (batch, num_heads, seq_len, seq_len_kv) = {}, found {}",
                fmt_shape(&target.map(|d| d as i64)),
                fmt_shape(bias.shape())
            ));
        }
    }
    if !attrs.is_none("window_size") {
        return Err("sliding-window attention (window_size) is not supported".into());
    }
    let scale = if attrs.is_none("scale") {
        1.0 / (q[3] as f64).sqrt()
    } else {
        attrs.float("scale")?
    };
    let offset = if attrs.is_none("causal_mask") {
        None
    } else {
        match attrs.str("causal_mask")? {
            "TopLeft" => Some(0),
            "BottomRight" => Some(q[1].abs_diff(k[1])),
            other => {
                return Err(format!(
                    "causal_mask must be \"TopLeft\", \"BottomRight\" or None, found {other:?}"
                ))
            }
        }
    };
    Ok(Dims {
        b: q[0],
        s: q[1],
        n: q[2],
        h: q[3],
        skv: k[1],
        nkv: k[2],
        hv: v[3],
        scale,
        offset,
    })
}

fn attention(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    if args.len() != 4 {
        check_arity(args, 3)?;
    }
    let d = check(args, attrs)?;
    let names = ["query", "key", "value", "bias"];
    let ts: Vec<(&str, &Tensor)> = (0..args.len())
        .map(|i| tensor_arg(args, i, names[i]).map(|t| (names[i], t)))
        .collect::<Result<_, _>>()?;
    let dtype = same_dtype(&ts)?;
    with_float!(dtype, T => {
        let wide = |t: &Tensor| -> Result<Vec<f64>, String> {
            let v = view::<T>(t)?;
            alloc::collect(v.len(), v.iter().map(|e| e.to_f64()))
        };
        let (q, k, v) = (wide(ts[0].1)?, wide(ts[1].1)?, wide(ts[2].1)?);
        let bias = match ts.get(3) {
            Some((_, t)) => Some((wide(t)?, udims(t.shape()))),
            None => None,
        };
        let group = d.n / d.nkv;
        let mut out = alloc::vec::<T>(d.b * d.s * d.n * d.hv)?;
        let mut logits = alloc::vec::<f64>(d.skv)?;
        let mut acc = alloc::vec::<f64>(d.hv)?;
        for b in 0..d.b {
            for h in 0..d.n {
                let hk = h / group;
                for i in 0..d.s {
                    let visible = d.offset.map_or(d.skv, |o| (i + o + 1).min(d.skv));
                    logits.clear();
                    let qi = &q[((b * d.s + i) * d.n + h) * d.h..][..d.h];
                    for j in 0..visible {
                        let kj = &k[((b * d.skv + j) * d.nkv + hk) * d.h..][..d.h];
                        let mut x = d.scale * qi.iter().zip(kj).map(|(a, c)| a * c).sum::<f64>();
                        if let Some((bv, bs)) = &bias {
                            let at = |a: usize, x: usize| if bs[a] == 1 { 0 } else { x };
                            x += bv[((at(0, b) * bs[1] + at(1, h)) * bs[2] + at(2, i)) * bs[3] + j];
                        }
                        logits.push(x);
                    }
                    let m = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let mut sum = 0.0;
                    for x in logits.iter_mut() {
                        *x = (*x - m).exp();
                        sum += *x;
                    }
                    acc.clear();
                    acc.resize(d.hv, 0.0);
                    for (j, p) in logits.iter().enumerate() {
                        let vj = &v[((b * d.skv + j) * d.nkv + hk) * d.hv..][..d.hv];
                        for (a, x) in acc.iter_mut().zip(vj) {
                            *a += p / sum * x;
                        }
                    }
                    out.extend(acc.iter().map(|&a| T::from_f64(a)));
                }
            }
        }
        // `out` is (B, N, S, Hv); the result is (B, S, N, Hv).
        let mut bsnh = alloc::vec::<T>(out.len())?;
        for b in 0..d.b {
            for i in 0..d.s {
                for h in 0..d.n {
                    let from = ((b * d.n + h) * d.s + i) * d.hv;
                    bsnh.extend_from_slice(&out[from..from + d.hv]);
                }
            }
        }
        tensor_value(&[d.b, d.s, d.n, d.hv], bsnh)
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use crate::executable::KernelAttr;
    use crate::{DataType, Value};

    type Attrs = Vec<(&'static str, KernelAttr)>;

    fn t(shape: &[i64], data: &[f32]) -> Value {
        tv(shape, data.to_vec())
    }

    fn attrs(scale: Option<f64>, mask: Option<&str>) -> Attrs {
        vec![
            ("scale", scale.map_or(KernelAttr::None, KernelAttr::Float)),
            (
                "causal_mask",
                mask.map_or(KernelAttr::None, |m| KernelAttr::Str(m.into())),
            ),
            ("window_size", KernelAttr::None),
        ]
    }

    fn vals(v: &Value) -> Vec<f32> {
        v.as_tensor().unwrap().to_vec::<f32>().unwrap()
    }

    /// A plain softmax of `xs`.
    fn softmax(xs: &[f64]) -> Vec<f64> {
        let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = xs.iter().map(|x| (x - m).exp()).collect();
        let s: f64 = e.iter().sum();
        e.iter().map(|x| x / s).collect()
    }

    fn close(got: &[f32], want: &[f64]) {
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        for (g, w) in got.iter().zip(want) {
            assert!((*g as f64 - w).abs() < 1e-5, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn one_head_by_hand_with_each_mask() {
        // B = 1, S = 2, N = 1, H = 2; Skv = 3, Hv = 1.
        let q = t(&[1, 2, 1, 2], &[1.0, 0.0, 0.0, 2.0]);
        let k = t(&[1, 3, 1, 2], &[1.0, 1.0, 2.0, 0.0, 0.0, -1.0]);
        let v = t(&[1, 3, 1, 1], &[10.0, 20.0, 30.0]);
        let dots = [[1.0, 2.0, 0.0], [2.0, 0.0, -2.0]];
        let expect = |scale: f64, visible: [usize; 2]| -> Vec<f64> {
            (0..2)
                .map(|i| {
                    let xs: Vec<f64> = dots[i][..visible[i]].iter().map(|d| d * scale).collect();
                    softmax(&xs)
                        .iter()
                        .zip([10.0, 20.0, 30.0])
                        .map(|(p, x)| p * x)
                        .sum()
                })
                .collect()
        };
        let run = |a: Attrs| run("relax.nn.attention", &[q.clone(), k.clone(), v.clone()], &a);
        let s = 1.0 / 2f64.sqrt();
        close(&vals(&run(attrs(None, None)).unwrap()), &expect(s, [3, 3]));
        close(
            &vals(&run(attrs(Some(0.5), None)).unwrap()),
            &expect(0.5, [3, 3]),
        );
        close(
            &vals(&run(attrs(None, Some("TopLeft"))).unwrap()),
            &expect(s, [1, 2]),
        );
        // S = 2 < Skv = 3: offset 1.
        close(
            &vals(&run(attrs(None, Some("BottomRight"))).unwrap()),
            &expect(s, [2, 3]),
        );
        let out = run(attrs(None, None)).unwrap();
        assert_eq!(out.as_tensor().unwrap().shape(), &[1, 2, 1, 1]);
    }

    #[test]
    fn more_queries_than_keys_bottom_right_sees_everything() {
        // S = 3 > Skv = 1: offset 2, every query sees the one key.
        let q = t(&[1, 3, 1, 1], &[1.0, 2.0, 3.0]);
        let k = t(&[1, 1, 1, 1], &[1.0]);
        let v = t(&[1, 1, 1, 2], &[4.0, 5.0]);
        let out = run(
            "relax.nn.attention",
            &[q, k, v],
            &attrs(None, Some("BottomRight")),
        )
        .unwrap();
        close(&vals(&out), &[4.0, 5.0, 4.0, 5.0, 4.0, 5.0]);
    }

    #[test]
    fn grouped_heads_read_their_key_head() {
        // N = 4 over Nkv = 2: heads 0, 1 read kv head 0; heads 2, 3 kv head 1.
        // One key each, so the output is that head's value row.
        let q = t(&[1, 1, 4, 1], &[1.0; 4]);
        let k = t(&[1, 1, 2, 1], &[1.0, 1.0]);
        let v = t(&[1, 1, 2, 1], &[7.0, 9.0]);
        let out = run("relax.nn.attention", &[q, k, v], &attrs(None, None)).unwrap();
        close(&vals(&out), &[7.0, 7.0, 9.0, 9.0]);
        assert_eq!(out.as_tensor().unwrap().shape(), &[1, 1, 4, 1]);
    }

    #[test]
    fn a_bias_broadcasts_and_adds_to_the_logits() {
        let q = t(&[1, 2, 1, 1], &[0.0, 0.0]);
        let k = t(&[1, 2, 1, 1], &[0.0, 0.0]);
        let v = t(&[1, 2, 1, 1], &[1.0, 3.0]);
        // All logits 0 but the bias: row i gets softmax(bias[i]).
        let bias = t(&[1, 1, 2, 2], &[0.0, 1.0, 2.0, 0.0]);
        let out = run(
            "relax.nn.attention_bias",
            &[q.clone(), k.clone(), v.clone(), bias],
            &attrs(None, None),
        )
        .unwrap();
        let row = |b: [f64; 2]| {
            softmax(&b)
                .iter()
                .zip([1.0, 3.0])
                .map(|(p, x)| p * x)
                .sum::<f64>()
        };
        close(&vals(&out), &[row([0.0, 1.0]), row([2.0, 0.0])]);
        // One bias row for every query.
        let bias = t(&[1, 1, 1, 2], &[0.0, 1.0]);
        let out = run(
            "relax.nn.attention_bias",
            &[q, k, v, bias],
            &attrs(None, None),
        )
        .unwrap();
        close(&vals(&out), &[row([0.0, 1.0]), row([0.0, 1.0])]);
    }

    #[test]
    fn float16_matches_float32() {
        let data: Vec<f32> = (0..24).map(|x| (x as f32 * 0.37).sin()).collect();
        let shapes = [[1, 2, 2, 3], [1, 4, 1, 3], [1, 4, 1, 2]];
        let args32: Vec<Value> = shapes
            .iter()
            .map(|s| {
                let n = s.iter().product::<i64>() as usize;
                t(s, &data[..n])
            })
            .collect();
        let args16: Vec<Value> = args32
            .iter()
            .map(|a| Value::Tensor(a.as_tensor().unwrap().astype(DataType::f16()).unwrap()))
            .collect();
        let a = attrs(None, Some("BottomRight"));
        let want = vals(&run("relax.nn.attention", &args32, &a).unwrap());
        let got = run("relax.nn.attention", &args16, &a).unwrap();
        let got = vals(&Value::Tensor(
            got.as_tensor().unwrap().astype(DataType::f32()).unwrap(),
        ));
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-2, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn no_keys_give_zeros() {
        let q = t(&[1, 2, 1, 1], &[1.0, 2.0]);
        let k = t(&[1, 0, 1, 1], &[]);
        let v = t(&[1, 0, 1, 3], &[]);
        let out = run("relax.nn.attention", &[q, k, v], &attrs(None, None)).unwrap();
        assert_eq!(vals(&out), vec![0.0; 6]);
    }

    #[test]
    fn errors_name_what_does_not_fit() {
        let q = t(&[1, 2, 4, 2], &[0.0; 16]);
        let k = t(&[1, 3, 2, 2], &[0.0; 12]);
        let v = t(&[1, 3, 2, 1], &[0.0; 6]);
        let op = "relax.nn.attention";
        let err = |args: &[Value], a: &Attrs| run(op, args, a).unwrap_err();
        let none = attrs(None, None);
        assert_eq!(
            err(&[t(&[2, 4, 2], &[0.0; 16]), k.clone(), v.clone()], &none),
            "query must be 4-D (batch, seq_len, num_heads, head_dim), found (2, 4, 2)"
        );
        assert_eq!(
            err(&[q.clone(), t(&[1, 3, 2, 3], &[0.0; 18]), v.clone()], &none),
            "query and key head dims differ: query is (1, 2, 4, 2), key is (1, 3, 2, 3), value is (1, 3, 2, 1)"
        );
        assert_eq!(
            err(&[q.clone(), k.clone(), t(&[1, 2, 2, 1], &[0.0; 4])], &none),
            "key and value sequence lengths differ: query is (1, 2, 4, 2), key is (1, 3, 2, 2), value is (1, 2, 2, 1)"
        );
        assert_eq!(
            err(&[q.clone(), t(&[1, 3, 3, 2], &[0.0; 18]), t(&[1, 3, 3, 1], &[0.0; 9])], &none),
            "the query heads are not a multiple of the key heads: query is (1, 2, 4, 2), key is (1, 3, 3, 2), value is (1, 3, 3, 1)"
        );
        assert_eq!(
            err(
                &[q.clone(), k.clone(), v.clone()],
                &attrs(None, Some("Upper"))
            ),
            "causal_mask must be \"TopLeft\", \"BottomRight\" or None, found \"Upper\""
        );
        let mut windowed = none.clone();
        windowed[2].1 = KernelAttr::Int(2);
        assert_eq!(
            err(&[q.clone(), k.clone(), v.clone()], &windowed),
            "sliding-window attention (window_size) is not supported"
        );
        let bias = t(&[1, 4, 2, 2], &[0.0; 16]);
        assert_eq!(
            run("relax.nn.attention_bias", &[q.clone(), k.clone(), v.clone(), bias], &none).unwrap_err(),
            "bias must broadcast to (batch, num_heads, seq_len, seq_len_kv) = (1, 4, 2, 3), found (1, 4, 2, 2)"
        );
        let f16 = Value::Tensor(v.as_tensor().unwrap().astype(DataType::f16()).unwrap());
        assert!(err(&[q, k, f16], &none).contains("float16"));
    }
}
