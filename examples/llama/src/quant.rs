//! Weight-only group quantization of the decoder's matrices, a pass over
//! the float32 weights at load (`--quant q8|q4`), in the formats of
//! llama.cpp's Q8_0 and Q4_0 (with float32 scales where llama.cpp stores
//! float16 ones).
//!
//! A matrix `W` of `(out, in)` (transformers' layout, `y = x · Wᵀ`) is cut
//! along `in` into groups of [`GROUP`] = 32 consecutive weights; each group
//! has one scale `d` and 32 small integers `q`, and stands for `q · d`:
//!
//! - **Q8_0**: `d = max|w| / 127`, `q = round(w / d)` in `[-127, 127]`,
//!   int8. The values are `(out, in / 32, 32)` int8, the scales
//!   `(out, in / 32, 1)` float32: 1.125 bytes a weight.
//! - **Q4_0**: `m` is the weight of the largest magnitude (with its sign),
//!   `d = m / -8`, `q = min(15, ⌊w / d + 8.5⌋)` in `[0, 15]`, standing for
//!   `(q - 8) · d`: the extreme weight is exactly `-8 · d` and the others
//!   round to the nearest of 16 levels. Two values share a byte: byte `b`
//!   of a group (`b < 16`) holds value `b` in its low nibble and value
//!   `b + 16` in its high one. The bytes are `(out, in / 32, 1, 16)` uint8,
//!   the scales `(out, in / 32, 1, 1)` float32: 0.625 bytes a weight.
//!
//! The shapes are those the quantized functions of `model.rs.in` take: the
//! dequantize is a broadcast over the group axis and a reshape back to
//! `(out, in)`, fused into the kernel of the matmul that reads it.
//! A group of zeros has the scale 0 and dequantizes to zeros.

use relax::Tensor;

/// Weights in a group (along a matrix's input axis).
pub const GROUP: usize = 32;

/// How the decoder's matrices are held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quant {
    /// The checkpoint's float32 weights, read in place.
    F32,
    /// Q8_0: int8 values, a float32 scale per group of 32.
    Q8,
    /// Q4_0: 4-bit values two to a byte, a float32 scale per group of 32.
    Q4,
}

impl std::str::FromStr for Quant {
    type Err = String;

    fn from_str(s: &str) -> Result<Quant, String> {
        match s {
            "f32" => Ok(Quant::F32),
            "q8" => Ok(Quant::Q8),
            "q4" => Ok(Quant::Q4),
            other => Err(format!("--quant: expected f32, q8 or q4, found `{other}`")),
        }
    }
}

/// One quantized matrix: its values (int8, or bytes of two 4-bit values)
/// and its scales, shaped for the quantized functions (see the module
/// docs).
pub struct QMatrix {
    pub values: Tensor,
    pub scales: Tensor,
}

impl QMatrix {
    /// Bytes of values and scales.
    pub fn bytes(&self) -> usize {
        self.values.as_bytes().len() + self.scales.as_bytes().len()
    }
}

/// The Q8_0 values and scales of `w`, rows of `k` weights (`k` a multiple
/// of [`GROUP`], checked by the caller).
pub fn quantize_q8(w: &[f32], k: usize) -> (Vec<i8>, Vec<f32>) {
    debug_assert!(k.is_multiple_of(GROUP) && w.len().is_multiple_of(k));
    let mut values = Vec::with_capacity(w.len());
    let mut scales = Vec::with_capacity(w.len() / GROUP);
    for g in w.chunks_exact(GROUP) {
        let amax = g.iter().fold(0f32, |m, x| m.max(x.abs()));
        let d = amax / 127.0;
        let inv = if d > 0.0 { 1.0 / d } else { 0.0 };
        values.extend(
            g.iter()
                .map(|x| (x * inv).round().clamp(-127.0, 127.0) as i8),
        );
        scales.push(d);
    }
    (values, scales)
}

/// The weights Q8_0 `values` and `scales` stand for.
pub fn dequantize_q8(values: &[i8], scales: &[f32]) -> Vec<f32> {
    values
        .chunks_exact(GROUP)
        .zip(scales)
        .flat_map(|(g, &d)| g.iter().map(move |&q| f32::from(q) * d))
        .collect()
}

/// The Q4_0 bytes (two values each, see the module docs) and scales of
/// `w`, rows of `k` weights (`k` a multiple of [`GROUP`]).
pub fn quantize_q4(w: &[f32], k: usize) -> (Vec<u8>, Vec<f32>) {
    debug_assert!(k.is_multiple_of(GROUP) && w.len().is_multiple_of(k));
    let mut bytes = Vec::with_capacity(w.len() / 2);
    let mut scales = Vec::with_capacity(w.len() / GROUP);
    for g in w.chunks_exact(GROUP) {
        // The weight of the largest magnitude, with its sign.
        let m = g
            .iter()
            .fold(0f32, |m, &x| if x.abs() > m.abs() { x } else { m });
        let d = m / -8.0;
        let inv = if d != 0.0 { 1.0 / d } else { 0.0 };
        let q = |x: f32| ((x * inv + 8.5) as i32).clamp(0, 15) as u8;
        let half = GROUP / 2;
        bytes.extend((0..half).map(|b| q(g[b]) | (q(g[b + half]) << 4)));
        scales.push(d);
    }
    (bytes, scales)
}

/// The weights Q4_0 `bytes` and `scales` stand for.
pub fn dequantize_q4(bytes: &[u8], scales: &[f32]) -> Vec<f32> {
    let half = GROUP / 2;
    bytes
        .chunks_exact(half)
        .zip(scales)
        .flat_map(|(g, &d)| {
            let low = g.iter().map(move |&b| (f32::from(b & 15) - 8.0) * d);
            let high = g.iter().map(move |&b| (f32::from(b >> 4) - 8.0) * d);
            low.chain(high).collect::<Vec<_>>()
        })
        .collect()
}

/// `w`, a float32 `(out, in)` matrix, quantized as `quant` (Q8 or Q4);
/// `name` names it in errors.
pub fn quantize(w: &Tensor, quant: Quant, name: &str) -> Result<QMatrix, String> {
    let [n, k] = *w.shape() else {
        return Err(format!(
            "{name}: expected a matrix, found shape {:?}",
            w.shape()
        ));
    };
    let (n, k) = (n as usize, k as usize);
    if !k.is_multiple_of(GROUP) {
        return Err(format!(
            "{name}: expected an input axis that is a multiple of {GROUP}, found {k}"
        ));
    }
    let data = w
        .as_slice::<f32>()
        .map_err(|e| format!("{name}: expected float32 weights: {e}"))?;
    let groups = (k / GROUP) as i64;
    let n = n as i64;
    match quant {
        Quant::Q8 => {
            let (values, scales) = quantize_q8(data, k);
            Ok(QMatrix {
                values: shaped(name, Tensor::from_vec(&[n, groups, GROUP as i64], values))?,
                scales: shaped(name, Tensor::from_vec(&[n, groups, 1], scales))?,
            })
        }
        Quant::Q4 => {
            let (bytes, scales) = quantize_q4(data, k);
            Ok(QMatrix {
                values: shaped(
                    name,
                    Tensor::from_vec(&[n, groups, 1, GROUP as i64 / 2], bytes),
                )?,
                scales: shaped(name, Tensor::from_vec(&[n, groups, 1, 1], scales))?,
            })
        }
        Quant::F32 => Err(format!("{name}: float32 weights are not quantized")),
    }
}

/// The float32 weights a quantized `w` stands for, `(out, in)` as `w`:
/// what the quantized functions compute with, for checking them against
/// the float32 functions.
pub fn round_trip(w: &Tensor, quant: Quant, name: &str) -> Result<Tensor, String> {
    let m = quantize(w, quant, name)?;
    let scales = m
        .scales
        .as_slice::<f32>()
        .map_err(|e| format!("{name}: {e}"))?;
    let back = match quant {
        Quant::Q8 => dequantize_q8(
            m.values
                .as_slice::<i8>()
                .map_err(|e| format!("{name}: {e}"))?,
            scales,
        ),
        Quant::Q4 => dequantize_q4(
            m.values
                .as_slice::<u8>()
                .map_err(|e| format!("{name}: {e}"))?,
            scales,
        ),
        Quant::F32 => return Err(format!("{name}: float32 weights are not quantized")),
    };
    shaped(name, Tensor::from_vec(w.shape(), back))
}

fn shaped<E: std::fmt::Display>(name: &str, r: Result<Tensor, E>) -> Result<Tensor, String> {
    r.map_err(|e| format!("{name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Weights of several magnitudes, signs and a group of zeros.
    fn weights(k: usize, rows: usize) -> Vec<f32> {
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        (0..rows * k)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let row = i / k;
                if row == 2 && i % k < GROUP {
                    0.0
                } else {
                    ((s % 20001) as f32 / 10000.0 - 1.0) * 10f32.powi(row as i32 % 4 - 2)
                }
            })
            .collect()
    }

    #[test]
    fn q8_round_trips_within_half_a_step_of_each_group() {
        let (k, rows) = (96, 5);
        let w = weights(k, rows);
        let (q, d) = quantize_q8(&w, k);
        assert_eq!((q.len(), d.len()), (w.len(), w.len() / GROUP));
        let back = dequantize_q8(&q, &d);
        for (g, (wg, bg)) in w.chunks(GROUP).zip(back.chunks(GROUP)).enumerate() {
            let amax = wg.iter().fold(0f32, |m, x| m.max(x.abs()));
            let step = amax / 127.0;
            for (a, b) in wg.iter().zip(bg) {
                assert!(
                    (a - b).abs() <= 0.5 * step * (1.0 + 1e-5),
                    "group {g}: {a} vs {b}"
                );
            }
            // The largest weight is exact, up to rounding of the scale.
            assert!(bg.iter().fold(0f32, |m, x| m.max(x.abs())) >= amax * (1.0 - 1e-6));
        }
        assert!(q.iter().all(|&v| v >= -127));
    }

    #[test]
    fn q4_round_trips_within_half_a_step_but_the_clamped_level() {
        let (k, rows) = (64, 5);
        let w = weights(k, rows);
        let (b, d) = quantize_q4(&w, k);
        assert_eq!((b.len(), d.len()), (w.len() / 2, w.len() / GROUP));
        let back = dequantize_q4(&b, &d);
        for (g, (wg, bg)) in w.chunks(GROUP).zip(back.chunks(GROUP)).enumerate() {
            let step = d[g].abs();
            let m = wg
                .iter()
                .fold(0f32, |m, &x| if x.abs() > m.abs() { x } else { m });
            assert!((step - m.abs() / 8.0).abs() <= 1e-7 * m.abs());
            for (a, b) in wg.iter().zip(bg) {
                // Q4_0's levels are -8..7 steps from the extreme's side: a
                // weight more than 7.5 steps on the other side (at most 8)
                // is clamped to the 7th level, within a step; the others
                // round to the nearest level, within half a step.
                let clamped = a / d[g] + 8.0 > 15.5;
                let bound = if clamped { step } else { 0.5 * step };
                assert!(
                    (a - b).abs() <= bound * (1.0 + 1e-5) + 1e-12,
                    "group {g}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn q4_packs_element_b_low_and_b_plus_16_high() {
        // Levels -8..7 times 0.5: the extreme -4.0 sets d = 0.5.
        let w: Vec<f32> = (0..GROUP).map(|i| (i as f32 % 16.0 - 8.0) * 0.5).collect();
        let (b, d) = quantize_q4(&w, GROUP);
        assert_eq!(d, [0.5]);
        assert_eq!(b[3], 3 | (3 << 4));
        assert_eq!(dequantize_q4(&b, &d), w);
    }

    #[test]
    fn a_matrix_is_shaped_for_the_quantized_functions() {
        let w = Tensor::from_vec(&[3, 64], weights(64, 3)).unwrap();
        let q8 = quantize(&w, Quant::Q8, "w").unwrap();
        assert_eq!(
            (q8.values.shape(), q8.scales.shape()),
            (&[3, 2, 32][..], &[3, 2, 1][..])
        );
        let q4 = quantize(&w, Quant::Q4, "w").unwrap();
        assert_eq!(q4.values.shape(), &[3, 2, 1, 16]);
        assert_eq!(q4.scales.shape(), &[3, 2, 1, 1]);
        assert_eq!(q4.bytes(), 3 * 32 + 3 * 2 * 4);
        let bad = Tensor::from_vec(&[2, 40], vec![0f32; 80]).unwrap();
        let e = quantize(&bad, Quant::Q8, "w").err().unwrap();
        assert!(e.contains("multiple of 32, found 40"), "{e}");
        assert_eq!("q4".parse::<Quant>(), Ok(Quant::Q4));
        assert!("q5".parse::<Quant>().unwrap_err().contains("found `q5`"));
    }
}
