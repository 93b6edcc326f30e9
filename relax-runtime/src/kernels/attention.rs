//! Fused multi-head attention, BSNH: `nn.attention(query, key, value)` and
//! `nn.attention_bias(query, key, value, bias)`.
//!
//! 1. `query` is `(B, S, N, H)`, `key` `(B, Skv, Nkv, H)` and `value`
//!    `(B, Skv, Nkv, Hv)`, all of one float dtype (`float16` and `bfloat16`
//!    too); the result is `(B, S, N, Hv)` in that dtype. `N` is a multiple
//!    of `Nkv` (grouped-query attention): query head `h` reads key and
//!    value head `h / G`, `G = N / Nkv` (integer division).
//! 2. The logit of query `i` and key `j` in head `h` is
//!    `scale · Σ_d q[b, i, h, d] · k[b, j, h / G, d]`, `scale` defaulting to
//!    `1 / sqrt(H)`, plus for `attention_bias` `bias[b, h, i, j]`: the bias
//!    is 4-D and broadcasts NumPy-style to `(B, N, S, Skv)` (each dim equal
//!    to the target's or 1, the last equal to `Skv`).
//! 3. `causal_mask` (`None`, `"TopLeft"` or `"BottomRight"`) lets query `i`
//!    see key `j` iff `j ≤ i + offset`, `offset` 0 for `"TopLeft"` and
//!    `|S − Skv|` for `"BottomRight"` (TVM's `tril(k=offset)`). A masked key
//!    has probability exactly 0: the softmax runs over the visible keys
//!    only, their maximum subtracted first. A query with no key (`Skv = 0`)
//!    gets 0, and so does a query whose every visible key has the logit
//!    `-inf` (a bias of `-inf`, a boolean mask's "no", for each of them):
//!    a fully masked row is zeros, not `0/0`, as FlashAttention's kernel
//!    and the legalization give (and ONNX's `Attention` asks).
//! 4. The output is `Σ_j p[b, h, i, j] · v[b, j, h / G, e]`. Everything is
//!    computed in `f64` and rounded once to the dtype.
//! 5. `window_size` (sliding-window attention) is not supported: a call
//!    that sets it is an error, as in the legalization.

use super::args::{check_arity, same_dtype, tensor_arg, tensor_value, udims, view};
use super::dispatch::{with_float, Float};
use super::{alloc, Kernel, KernelAttrs};
use crate::tensor::{fmt_shape, Tensor};
use crate::value::Value;

/// The attention kernels.
pub const KERNELS: &[(&str, Kernel)] = &[
    ("relax.nn.attention", attention),
    ("relax.nn.attention_bias", attention_bias),
];

/// The operands' names, in argument order.
const NAMES: [&str; 4] = ["query", "key", "value", "bias"];

/// `relax.nn.attention(query, key, value)`.
fn attention(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 3)?;
    attend(args, attrs)
}

/// `relax.nn.attention_bias(query, key, value, bias)`.
fn attention_bias(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 4)?;
    attend(args, attrs)
}

/// A checked call: the operands, their dims and the options.
struct Call<'a> {
    q: &'a Tensor,
    k: &'a Tensor,
    v: &'a Tensor,
    bias: Option<&'a Tensor>,
    b: usize,
    s: usize,
    n: usize,
    h: usize,
    skv: usize,
    nkv: usize,
    hv: usize,
    scale: f64,
    /// With a causal mask, keys `j ≤ i + offset` are visible.
    offset: Option<usize>,
}

fn attend(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    let ts = (0..args.len())
        .map(|i| tensor_arg(args, i, NAMES[i]).map(|t| (NAMES[i], t)))
        .collect::<Result<Vec<_>, _>>()?;
    let dtype = same_dtype(&ts)?;
    let call = check(&ts, attrs)?;
    with_float!(dtype, T => compute::<T>(&call))
}

/// Checks the operands' ranks and dims and reads the attributes.
fn check<'a>(ts: &[(&str, &'a Tensor)], attrs: &KernelAttrs) -> Result<Call<'a>, String> {
    for &(name, t) in ts {
        if t.ndim() != 4 {
            let dims = if name == "bias" {
                "broadcast to (batch, num_heads, seq_len, seq_len_kv)"
            } else {
                "batch, seq_len, num_heads, head_dim"
            };
            return Err(format!(
                "{name} must be 4-D ({dims}), found {}",
                fmt_shape(t.shape())
            ));
        }
    }
    let [(_, q), (_, k), (_, v)] = [ts[0], ts[1], ts[2]];
    let [qd, kd, vd] = [q, k, v].map(|t| udims(t.shape()));
    // (the operand, the one it must agree with, the axis, what it is).
    for (a, b, axis, what) in [
        (1, 0, 0, "batch size"),
        (2, 0, 0, "batch size"),
        (1, 0, 3, "head dim"),
        (2, 1, 1, "sequence length"),
        (2, 1, 2, "number of heads"),
    ] {
        let ((name, t), (other, o)) = (ts[a], ts[b]);
        if t.shape()[axis] != o.shape()[axis] {
            return Err(format!(
                "{name}'s {what} must equal {other}'s ({}), found {}: {other} is {}, {name} is {}",
                o.shape()[axis],
                t.shape()[axis],
                fmt_shape(o.shape()),
                fmt_shape(t.shape())
            ));
        }
    }
    if kd[2] == 0 {
        return Err(format!(
            "key's number of heads must be positive, found 0: key is {}",
            fmt_shape(k.shape())
        ));
    }
    if qd[2] % kd[2] != 0 {
        return Err(format!(
            "query's number of heads must be a multiple of key's ({}), found {}: query is {}, key is {}",
            kd[2],
            qd[2],
            fmt_shape(q.shape()),
            fmt_shape(k.shape())
        ));
    }
    let bias = ts.get(3).map(|&(_, t)| t);
    if let Some(bias) = bias {
        let target = [qd[0], qd[2], qd[1], kd[1]];
        let bd = udims(bias.shape());
        if bd.iter().zip(target).any(|(&d, t)| d != t && d != 1) || bd[3] != kd[1] {
            return Err(format!(
                "bias must broadcast to (batch, num_heads, seq_len, seq_len_kv) = {} \
                 (each dim equal or 1, the last equal), found {}",
                fmt_shape(&target.map(|d| d as i64)),
                fmt_shape(bias.shape())
            ));
        }
    }
    if !attrs.is_none("window_size") {
        return Err("sliding-window attention (window_size) is not supported".into());
    }
    let scale = if attrs.is_none("scale") {
        1.0 / (qd[3] as f64).sqrt()
    } else {
        attrs.float("scale")?
    };
    let offset = if attrs.is_none("causal_mask") {
        None
    } else {
        match attrs.str("causal_mask")? {
            "TopLeft" => Some(0),
            "BottomRight" => Some(qd[1].abs_diff(kd[1])),
            other => {
                return Err(format!(
                    "causal_mask must be \"TopLeft\", \"BottomRight\" or None, found {other:?}"
                ))
            }
        }
    };
    Ok(Call {
        q,
        k,
        v,
        bias,
        b: qd[0],
        s: qd[1],
        n: qd[2],
        h: qd[3],
        skv: kd[1],
        nkv: kd[2],
        hv: vd[3],
        scale,
        offset,
    })
}

/// The elements of `t` widened to `f64`.
fn wide<T: Float>(t: &Tensor) -> Result<Vec<f64>, String> {
    let v = view::<T>(t)?;
    alloc::collect(v.len(), v.iter().map(|e| e.to_f64()))
}

/// The attention of a checked call, in `T`.
fn compute<T: Float>(c: &Call) -> Result<Value, String> {
    let shape = [c.b, c.s, c.n, c.hv];
    let len = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or("the result has too many elements")?;
    if len == 0 {
        return tensor_value(&shape, Vec::<T>::new());
    }
    // The result is not empty, so every index below is under the element
    // count of a tensor that exists (no overflow).
    let (q, k, v) = (wide::<T>(c.q)?, wide::<T>(c.k)?, wide::<T>(c.v)?);
    // The bias and its strides, 0 along a broadcast (size-1) dim.
    let bias = match c.bias {
        None => None,
        Some(t) => {
            let d = udims(t.shape());
            let st = [d[1] * d[2] * d[3], d[2] * d[3], d[3], 1];
            let st: [usize; 4] = std::array::from_fn(|a| if d[a] == 1 { 0 } else { st[a] });
            Some((wide::<T>(t)?, st))
        }
    };
    let group = c.n / c.nkv;
    let mut out = alloc::vec::<T>(len)?;
    let mut p = alloc::vec::<f64>(c.skv)?;
    let mut acc = alloc::vec::<f64>(c.hv)?;
    for b in 0..c.b {
        for i in 0..c.s {
            let visible = c
                .offset
                .map_or(c.skv, |o| i.saturating_add(o).saturating_add(1).min(c.skv));
            for h in 0..c.n {
                let hk = h / group;
                let qi = &q[((b * c.s + i) * c.n + h) * c.h..][..c.h];
                p.clear();
                for j in 0..visible {
                    let kj = &k[((b * c.skv + j) * c.nkv + hk) * c.h..][..c.h];
                    let mut x = c.scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>();
                    if let Some((bias, st)) = &bias {
                        x += bias[b * st[0] + h * st[1] + i * st[2] + j * st[3]];
                    }
                    p.push(x);
                }
                // The softmax over the visible keys; no division when there
                // is none, or when the bias masks every one of them.
                if p.iter().all(|&x| x == f64::NEG_INFINITY) {
                    p.clear();
                }
                let m = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let mut sum = 0.0;
                for x in p.iter_mut() {
                    *x = (*x - m).exp();
                    sum += *x;
                }
                acc.clear();
                acc.resize(c.hv, 0.0);
                for (j, &e) in p.iter().enumerate() {
                    let vj = &v[((b * c.skv + j) * c.nkv + hk) * c.hv..][..c.hv];
                    let pj = e / sum;
                    for (a, x) in acc.iter_mut().zip(vj) {
                        *a += pj * x;
                    }
                }
                out.extend(acc.iter().map(|&a| T::from_f64(a)));
            }
        }
    }
    tensor_value(&shape, out)
}

#[cfg(test)]
mod tests {
    use crate::executable::KernelAttr;
    use crate::kernels::testing::*;
    use crate::{DataType, Value};

    type Attrs = Vec<(&'static str, KernelAttr)>;

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

    fn f32s(shape: &[i64], data: &[f64]) -> Value {
        tv(shape, data.iter().map(|&x| x as f32).collect())
    }

    /// One head's outputs by hand: row `i` is `Σ_j softmax(scale ·
    /// dots[i][..visible[i]])_j · v[j]` (`v` one row per key).
    fn by_hand(dots: &[&[f64]], scale: f64, visible: &[usize], v: &[&[f64]]) -> Vec<f64> {
        let mut out = Vec::new();
        for (row, &n) in dots.iter().zip(visible) {
            let e: Vec<f64> = row[..n].iter().map(|d| (scale * d).exp()).collect();
            let s: f64 = e.iter().sum();
            out.extend((0..v[0].len()).map(|c| (0..n).map(|j| e[j] / s * v[j][c]).sum::<f64>()));
        }
        out
    }

    #[test]
    fn one_head_by_hand_with_scale_and_masks() {
        // B = 1, S = 2, N = 1, H = 2; Skv = 3, Hv = 2.
        let q = f32s(&[1, 2, 1, 2], &[1.0, 0.0, 0.0, 2.0]);
        let k = f32s(&[1, 3, 1, 2], &[1.0, 1.0, 2.0, 0.0, 0.0, -1.0]);
        let v = f32s(&[1, 3, 1, 2], &[10.0, 1.0, 20.0, 0.0, 30.0, -1.0]);
        let dots: [&[f64]; 2] = [&[1.0, 2.0, 0.0], &[2.0, 0.0, -2.0]];
        let vs: [&[f64]; 3] = [&[10.0, 1.0], &[20.0, 0.0], &[30.0, -1.0]];
        let go = |a: Attrs| run("relax.nn.attention", &[q.clone(), k.clone(), v.clone()], &a);
        let s = 0.5f64.sqrt(); // 1 / sqrt(H)
        let cases = [
            (attrs(None, None), s, [3, 3]),
            (attrs(Some(0.5), None), 0.5, [3, 3]),
            (attrs(None, Some("TopLeft")), s, [1, 2]),
            // S = 2 < Skv = 3: offset 1.
            (attrs(None, Some("BottomRight")), s, [2, 3]),
            (attrs(Some(-1.0), Some("BottomRight")), -1.0, [2, 3]),
        ];
        for (a, scale, visible) in cases {
            let want = by_hand(&dots, scale, &visible, &vs);
            assert_close_f32(&go(a).unwrap(), &[1, 2, 1, 2], &want);
        }
        // An integer scale reads as a float.
        let a = vec![("scale", KernelAttr::Int(2))];
        let want = by_hand(&dots, 2.0, &[3, 3], &vs);
        assert_close_f32(&go(a).unwrap(), &[1, 2, 1, 2], &want);
        // Absent attributes are None.
        let want = by_hand(&dots, s, &[3, 3], &vs);
        assert_close_f32(&go(vec![]).unwrap(), &[1, 2, 1, 2], &want);
    }

    #[test]
    fn more_queries_than_keys() {
        // S = 4 > Skv = 3, H = Hv = 1: TopLeft shows 1, 2, 3, 3 keys;
        // BottomRight (offset |4 - 3| = 1) 2, 3, 3, 3.
        let q = f32s(&[1, 4, 1, 1], &[1.0, -1.0, 2.0, 0.5]);
        let k = f32s(&[1, 3, 1, 1], &[1.0, 0.0, -1.0]);
        let v = f32s(&[1, 3, 1, 1], &[10.0, 20.0, 40.0]);
        let rows = [
            [1.0, 0.0, -1.0],
            [-1.0, 0.0, 1.0],
            [2.0, 0.0, -2.0],
            [0.5, 0.0, -0.5],
        ];
        let dots: Vec<&[f64]> = rows.iter().map(|r| &r[..]).collect();
        let vs: [&[f64]; 3] = [&[10.0], &[20.0], &[40.0]];
        for (mask, visible) in [("TopLeft", [1, 2, 3, 3]), ("BottomRight", [2, 3, 3, 3])] {
            let args = [q.clone(), k.clone(), v.clone()];
            let out = run("relax.nn.attention", &args, &attrs(None, Some(mask))).unwrap();
            assert_close_f32(&out, &[1, 4, 1, 1], &by_hand(&dots, 1.0, &visible, &vs));
        }
    }

    #[test]
    fn grouped_query_heads_read_their_kv_head() {
        // N = 4 over Nkv = 2: heads 0, 1 read kv head 0 and heads 2, 3 kv
        // head 1 (not h % 2, which would swap heads 1 and 2).
        let q = f32s(&[1, 1, 4, 1], &[1.0, 2.0, -1.0, 3.0]);
        // k[0, j, hk, 0]: kv head 0 has keys (1, -1), kv head 1 (2, 0).
        let k = f32s(&[1, 2, 2, 1], &[1.0, 2.0, -1.0, 0.0]);
        let v = f32s(&[1, 2, 2, 1], &[10.0, 30.0, 20.0, 50.0]);
        let (keys, vals) = ([[1.0, -1.0], [2.0, 0.0]], [[10.0, 20.0], [30.0, 50.0]]);
        let want: Vec<f64> = [1.0, 2.0, -1.0, 3.0]
            .iter()
            .enumerate()
            .flat_map(|(h, &qh)| {
                let dots = [keys[h / 2][0] * qh, keys[h / 2][1] * qh];
                by_hand(&[&dots], 1.0, &[2], &[&[vals[h / 2][0]], &[vals[h / 2][1]]])
            })
            .collect();
        let out = run("relax.nn.attention", &[q, k, v], &attrs(None, None)).unwrap();
        assert_close_f32(&out, &[1, 1, 4, 1], &want);
    }

    #[test]
    fn bias_broadcasts_and_adds_to_the_scaled_scores() {
        // B = 2, S = 2, N = 2 (Nkv = 1), H = 1, Skv = 2, Hv = 1. Scale 0
        // cancels the scores, so row (b, h, i) is softmax(bias[b, h, i]).
        let q = f32s(&[2, 2, 2, 1], &[5.0; 8]);
        let k = f32s(&[2, 2, 1, 1], &[1.0, -3.0, 2.0, 7.0]);
        let v = f32s(&[2, 2, 1, 1], &[1.0, 3.0, 10.0, 20.0]);
        let row = |b: usize, bias: [f64; 2]| {
            let vs = [[[1.0], [3.0]], [[10.0], [20.0]]][b];
            by_hand(&[&bias], 1.0, &[2], &[&vs[0], &vs[1]])[0]
        };
        let run_bias = |bias: Value| {
            let args = [q.clone(), k.clone(), v.clone(), bias];
            run("relax.nn.attention_bias", &args, &attrs(Some(0.0), None)).unwrap()
        };
        // (1, 1, S, Skv): one bias row per query, for every batch and head.
        let out = run_bias(f32s(&[1, 1, 2, 2], &[0.0, 1.0, 2.0, 0.0]));
        let (r0, r1) = ([0.0, 1.0], [2.0, 0.0]);
        let want = [row(0, r0), row(0, r0), row(0, r1), row(0, r1)];
        let want2 = [row(1, r0), row(1, r0), row(1, r1), row(1, r1)];
        assert_close_f32(&out, &[2, 2, 2, 1], &[want, want2].concat());
        // A full (B, N, S, Skv) bias: bias[b, h, i] = (b + h + i, 0).
        let full: Vec<f64> = (0..16)
            .map(|e| {
                if e % 2 == 0 {
                    (e / 8 + e / 4 % 2 + e / 2 % 2) as f64
                } else {
                    0.0
                }
            })
            .collect();
        let out = run_bias(f32s(&[2, 2, 2, 2], &full));
        // Output order (b, i, h).
        let want: Vec<f64> = (0..8)
            .map(|o| {
                let (b, i, h) = (o / 4, o / 2 % 2, o % 2);
                row(b, [(b + h + i) as f64, 0.0])
            })
            .collect();
        assert_close_f32(&out, &[2, 2, 2, 1], &want);
        // The bias adds to the scaled scores: scale 1, q·k = 5 · k.
        let bias = f32s(&[1, 1, 1, 2], &[0.0, 20.0]);
        let args = [q.clone(), k.clone(), v.clone(), bias];
        let out = run("relax.nn.attention_bias", &args, &attrs(Some(1.0), None)).unwrap();
        let (b0, b1) = (row(0, [5.0, -15.0 + 20.0]), row(1, [10.0, 35.0 + 20.0]));
        assert_close_f32(&out, &[2, 2, 2, 1], &[b0, b0, b0, b0, b1, b1, b1, b1]);
    }

    #[test]
    fn a_row_the_bias_masks_everywhere_is_zeros() {
        // B = 1, S = 3, N = 2 (Nkv = 1), H = 1, Skv = 2, Hv = 1, scale 1.
        // Head 0's row 1 has -inf for both keys; head 1's row 0 for key 0,
        // which is all that row sees under TopLeft.
        let q = f32s(&[1, 3, 2, 1], &[1.0, 2.0, 0.5, -1.0, 3.0, 1.0]);
        let k = f32s(&[1, 2, 1, 1], &[1.0, -2.0]);
        let v = f32s(&[1, 2, 1, 1], &[10.0, 20.0]);
        let ninf = f64::NEG_INFINITY;
        #[rustfmt::skip]
        let bias = f32s(&[1, 2, 3, 2], &[
            0.0, 0.0,    ninf, ninf,  0.0, 1.0,
            ninf, 0.0,   0.0, 0.0,    0.0, 0.0,
        ]);
        let args = [q, k, v, bias];
        let go = |mask| {
            let out = run("relax.nn.attention_bias", &args, &attrs(Some(1.0), mask)).unwrap();
            let out = out.as_tensor().unwrap().to_f64_vec();
            assert!(out.iter().all(|x| x.is_finite()), "{out:?}");
            out
        };
        // Output order (i, h): head 0's row 1 is 0; head 1's row 0 is key
        // 1's value alone.
        let out = go(None);
        assert_eq!((out[1], out[2]), (20.0, 0.0), "{out:?}");
        // TopLeft: row 0 sees key 0 only, which head 1's bias masks.
        let out = go(Some("TopLeft"));
        assert_eq!((out[0], out[1], out[2]), (10.0, 0.0, 0.0), "{out:?}");
        assert!(out[3] > 10.0 && out[3] < 20.0, "{out:?}");
    }

    #[test]
    fn every_float_dtype_is_accepted() {
        let data = |n: usize, seed: f32| -> Vec<f32> {
            (0..n).map(|x| ((x as f32 + seed) * 0.37).sin()).collect()
        };
        let args32 = [
            tv(&[1, 3, 4, 2], data(24, 0.0)),
            tv(&[1, 5, 2, 2], data(20, 1.0)),
            tv(&[1, 5, 2, 3], data(30, 2.0)),
            tv(&[1, 1, 3, 5], data(15, 3.0)),
        ];
        let a = attrs(None, Some("BottomRight"));
        let want = run("relax.nn.attention_bias", &args32, &a).unwrap();
        let want = want.as_tensor().unwrap().to_f64_vec();
        for (dtype, tol) in [
            (DataType::f16(), 2e-3),
            (DataType::bf16(), 2e-2),
            (DataType::f64(), 1e-6),
        ] {
            let args: Vec<Value> = args32
                .iter()
                .map(|a| Value::Tensor(a.as_tensor().unwrap().astype(dtype).unwrap()))
                .collect();
            let got = run("relax.nn.attention_bias", &args, &a).unwrap();
            let got = got.as_tensor().unwrap();
            assert_eq!((got.dtype(), got.shape()), (dtype, &[1i64, 3, 4, 3][..]));
            for (g, w) in got.to_f64_vec().iter().zip(&want) {
                assert!((g - w).abs() <= tol, "{dtype}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn empty_dims_do_not_panic() {
        let z = |shape: &[i64]| {
            let n = shape.iter().product::<i64>() as usize;
            tv(shape, vec![1.0f32; n])
        };
        // Skv = 0: every query sees no key and gets 0, masked or not.
        for mask in [None, Some("TopLeft"), Some("BottomRight")] {
            let args = [z(&[1, 2, 1, 1]), z(&[1, 0, 1, 1]), z(&[1, 0, 1, 3])];
            let out = run("relax.nn.attention", &args, &attrs(None, mask));
            assert_ok(out, &[1, 2, 1, 3], vec![0.0f32; 6]);
        }
        let args = [
            z(&[1, 2, 1, 1]),
            z(&[1, 0, 1, 1]),
            z(&[1, 0, 1, 3]),
            z(&[1, 1, 1, 0]),
        ];
        let out = run("relax.nn.attention_bias", &args, &attrs(None, None));
        assert_ok(out, &[1, 2, 1, 3], vec![0.0f32; 6]);
        // H = 0 with a scale: every score is 0, the output the mean value.
        let v = f32s(&[1, 2, 1, 1], &[1.0, 3.0]);
        let args = [z(&[1, 1, 1, 0]), z(&[1, 2, 1, 0]), v];
        let out = run("relax.nn.attention", &args, &attrs(Some(1.0), None));
        assert_ok(out, &[1, 1, 1, 1], vec![2.0f32]);
        // An empty result: B, S, N or Hv is 0.
        for (q, k, v, out) in [
            ([0, 2, 2, 2], [0, 3, 1, 2], [0, 3, 1, 2], [0, 2, 2, 2]),
            ([1, 0, 2, 2], [1, 3, 1, 2], [1, 3, 1, 2], [1, 0, 2, 2]),
            ([1, 2, 0, 2], [1, 3, 1, 2], [1, 3, 1, 2], [1, 2, 0, 2]),
            ([1, 2, 2, 2], [1, 3, 1, 2], [1, 3, 1, 0], [1, 2, 2, 0]),
        ] {
            let args = [z(&q), z(&k), z(&v)];
            let got = run("relax.nn.attention", &args, &attrs(None, Some("TopLeft")));
            assert_ok(got, &out, Vec::<f32>::new());
        }
    }

    #[test]
    fn errors_name_the_operand_the_expected_and_the_found() {
        let z = |shape: &[i64]| {
            let n = shape.iter().product::<i64>() as usize;
            tv(shape, vec![0.0f32; n])
        };
        let (q, k, v) = (z(&[1, 2, 4, 2]), z(&[1, 3, 2, 2]), z(&[1, 3, 2, 1]));
        let none = attrs(None, None);
        let err = |args: &[Value], a: &Attrs| {
            let op = if args.len() == 4 {
                "relax.nn.attention_bias"
            } else {
                "relax.nn.attention"
            };
            run(op, args, a).unwrap_err()
        };
        let cases = [
            (
                vec![z(&[2, 4, 2]), k.clone(), v.clone()],
                "query must be 4-D (batch, seq_len, num_heads, head_dim), found (2, 4, 2)",
            ),
            (
                vec![q.clone(), z(&[1, 3, 2, 2, 1]), v.clone()],
                "key must be 4-D (batch, seq_len, num_heads, head_dim), found (1, 3, 2, 2, 1)",
            ),
            (
                vec![q.clone(), k.clone(), z(&[3, 2, 1])],
                "value must be 4-D (batch, seq_len, num_heads, head_dim), found (3, 2, 1)",
            ),
            (
                vec![q.clone(), z(&[2, 3, 2, 2]), v.clone()],
                "key's batch size must equal query's (1), found 2: \
                 query is (1, 2, 4, 2), key is (2, 3, 2, 2)",
            ),
            (
                vec![q.clone(), k.clone(), z(&[2, 3, 2, 1])],
                "value's batch size must equal query's (1), found 2: \
                 query is (1, 2, 4, 2), value is (2, 3, 2, 1)",
            ),
            (
                vec![q.clone(), z(&[1, 3, 2, 3]), v.clone()],
                "key's head dim must equal query's (2), found 3: \
                 query is (1, 2, 4, 2), key is (1, 3, 2, 3)",
            ),
            (
                vec![q.clone(), k.clone(), z(&[1, 2, 2, 1])],
                "value's sequence length must equal key's (3), found 2: \
                 key is (1, 3, 2, 2), value is (1, 2, 2, 1)",
            ),
            (
                vec![q.clone(), k.clone(), z(&[1, 3, 1, 1])],
                "value's number of heads must equal key's (2), found 1: \
                 key is (1, 3, 2, 2), value is (1, 3, 1, 1)",
            ),
            (
                vec![q.clone(), z(&[1, 3, 3, 2]), z(&[1, 3, 3, 1])],
                "query's number of heads must be a multiple of key's (3), found 4: \
                 query is (1, 2, 4, 2), key is (1, 3, 3, 2)",
            ),
            (
                vec![q.clone(), z(&[1, 3, 0, 2]), z(&[1, 3, 0, 1])],
                "key's number of heads must be positive, found 0: key is (1, 3, 0, 2)",
            ),
            (
                vec![q.clone(), k.clone(), v.clone(), z(&[2, 3])],
                "bias must be 4-D (broadcast to (batch, num_heads, seq_len, seq_len_kv)), \
                 found (2, 3)",
            ),
            (
                vec![q.clone(), k.clone(), v.clone(), z(&[1, 4, 2, 1])],
                "bias must broadcast to (batch, num_heads, seq_len, seq_len_kv) = (1, 4, 2, 3) \
                 (each dim equal or 1, the last equal), found (1, 4, 2, 1)",
            ),
            (
                vec![q.clone(), k.clone(), v.clone(), z(&[1, 2, 2, 3])],
                "bias must broadcast to (batch, num_heads, seq_len, seq_len_kv) = (1, 4, 2, 3) \
                 (each dim equal or 1, the last equal), found (1, 2, 2, 3)",
            ),
            (
                vec![q.clone(), k.clone(), tv(&[1, 3, 2, 1], vec![0.0f64; 6])],
                "dtypes differ: query is float32, value is float64",
            ),
            (
                vec![tv(&[1, 1, 1, 1], vec![1i32]); 3],
                "dtype int32 is not supported by this kernel",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(err(&args, &none), want);
        }
        let qkv = [q.clone(), k.clone(), v.clone()];
        assert_eq!(
            err(&qkv, &attrs(None, Some("Upper"))),
            "causal_mask must be \"TopLeft\", \"BottomRight\" or None, found \"Upper\""
        );
        let mut windowed = none.clone();
        windowed[2].1 = KernelAttr::Int(2);
        assert_eq!(
            err(&qkv, &windowed),
            "sliding-window attention (window_size) is not supported"
        );
        let e = err(&qkv, &vec![("scale", KernelAttr::Str("x".into()))]);
        assert!(e.starts_with("attribute `scale` must be a float"), "{e}");
        assert_eq!(
            run(
                "relax.nn.attention",
                &[q.clone(), k.clone(), v.clone(), q.clone()],
                &none
            )
            .unwrap_err(),
            "expected 3 argument(s), found 4"
        );
        assert_eq!(
            run("relax.nn.attention_bias", &qkv, &none).unwrap_err(),
            "expected 4 argument(s), found 3"
        );
        let e = err(&[q, k, Value::shape(&[1])], &none);
        assert!(e.starts_with("value must be a tensor"), "{e}");
    }
}
