//! How `relax run` shows a result: a header line with the output's name,
//! dtype and shape (and its min, max and mean when it is large), then its
//! values as numpy prints them, in lines of at most 75 characters, with the
//! middle of any axis longer than six elided (`...`, numpy's `edgeitems` of
//! 3) once the tensor has more than 100 elements, unless the full data is
//! asked for; and the same as JSON for `--json`.

use relax_runtime::{Tensor, Value};
use serde_json::{json, Value as Json};

/// Larger tensors are summarized (numpy's `threshold` is 1000; a terminal
/// shows less).
const THRESHOLD: usize = 100;
/// numpy's `linewidth`.
const LINE: usize = 75;
/// numpy's `edgeitems`: what a summarized axis keeps at each end.
const EDGE: usize = 3;

/// `name: float32[1, 1000]` and the values below it.
pub fn text(name: &str, v: &Value, full: bool) -> String {
    match v {
        Value::Tensor(t) => {
            let mut header = format!("{name}: {}{:?}", t.dtype(), t.shape());
            let vals = t.to_f64_vec();
            let summarize = !full && vals.len() > THRESHOLD;
            if summarize {
                let (min, max, mean) = stats(&vals);
                header += &format!("  min {min:.6}  max {max:.6}  mean {mean:.6}");
            }
            let kind = Kind::of(t);
            let mut body = String::new();
            nested(&mut body, &vals, t.shape(), 0, summarize, kind);
            format!("{header}\n{body}")
        }
        other => format!("{name}: {other}"),
    }
}

/// The output as JSON: name, dtype, shape, and the data (flat, row-major)
/// when `full`, else min, max and mean.
pub fn json(name: &str, v: &Value, full: bool) -> Json {
    match v {
        Value::Tensor(t) => {
            let mut o = json!({
                "name": name,
                "dtype": t.dtype().to_string(),
                "shape": t.shape(),
            });
            let vals = t.to_f64_vec();
            {
                if full {
                    o["data"] = vals.iter().map(|&x| number(x)).collect();
                } else if !vals.is_empty() {
                    let (min, max, mean) = stats(&vals);
                    o["min"] = number(min);
                    o["max"] = number(max);
                    o["mean"] = number(mean);
                }
            }
            o
        }
        other => json!({ "name": name, "value": other.to_string() }),
    }
}

/// The min, max and mean of `vals` (NaN when any is NaN).
fn stats(vals: &[f64]) -> (f64, f64, f64) {
    let nan = vals.iter().any(|x| x.is_nan());
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = vals.iter().sum::<f64>() / vals.len().max(1) as f64;
    if nan {
        (f64::NAN, f64::NAN, mean)
    } else {
        (min, max, mean)
    }
}

/// A float as JSON, NaN and infinities as strings (JSON has no such
/// numbers).
fn number(x: f64) -> Json {
    if x.is_finite() {
        json!(x)
    } else {
        json!(x.to_string())
    }
}

/// How the elements print.
#[derive(Clone, Copy)]
enum Kind {
    Bool,
    Int,
    /// Floats, with 8 digits after the point at most (numpy's precision).
    Float,
}

impl Kind {
    fn of(t: &Tensor) -> Kind {
        let d = t.dtype();
        if d.is_bool() {
            Kind::Bool
        } else if d.is_float() {
            Kind::Float
        } else {
            Kind::Int
        }
    }
}

fn element(x: f64, kind: Kind) -> String {
    match kind {
        Kind::Bool => (if x != 0.0 { "True" } else { "False" }).into(),
        Kind::Int => format!("{}", x as i128),
        Kind::Float if !x.is_finite() => format!("{x}"),
        Kind::Float => {
            let s = format!("{x:.8}");
            let s = s.trim_end_matches('0');
            s.strip_suffix('.').unwrap_or(s).to_string()
        }
    }
}

/// numpy's nested brackets, one innermost row per line.
fn nested(
    out: &mut String,
    vals: &[f64],
    shape: &[i64],
    depth: usize,
    summarize: bool,
    kind: Kind,
) {
    if shape.is_empty() {
        out.push_str(&element(vals.first().copied().unwrap_or(0.0), kind));
        return;
    }
    let n = shape[0].max(0) as usize;
    let inner: usize = shape[1..].iter().map(|&d| d.max(0) as usize).product();
    let shown: Vec<Option<usize>> = if summarize && n > 2 * EDGE {
        (0..EDGE)
            .map(Some)
            .chain([None])
            .chain((n - EDGE..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    };
    out.push('[');
    for (k, i) in shown.iter().enumerate() {
        if k > 0 {
            if shape.len() == 1 {
                let next = match i {
                    Some(i) => element(vals[*i], kind).len(),
                    None => 3,
                };
                let column = out.len() - out.rfind('\n').map_or(0, |p| p + 1);
                if column + 2 + next + 1 > LINE {
                    out.push_str(",\n");
                    out.push_str(&" ".repeat(depth + 1));
                } else {
                    out.push_str(", ");
                }
            } else {
                out.push_str(",\n");
                out.push_str(&" ".repeat(depth + 1));
            }
        }
        match i {
            None => out.push_str("..."),
            Some(i) if shape.len() == 1 => {
                out.push_str(&element(vals[*i], kind));
            }
            Some(i) => nested(
                out,
                &vals[i * inner..(i + 1) * inner],
                &shape[1..],
                depth + 1,
                summarize,
                kind,
            ),
        }
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(shape: &[i64], n: usize) -> Value {
        let data: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        Value::Tensor(Tensor::from_slice(shape, &data).unwrap())
    }

    #[test]
    fn small_tensors_print_whole() {
        let s = text("y", &tensor(&[2, 3], 6), false);
        assert_eq!(s, "y: float32[2, 3]\n[[0, 0.5, 1],\n [1.5, 2, 2.5]]");
    }

    #[test]
    fn large_tensors_elide_the_middle_unless_full() {
        let s = text("y", &tensor(&[1, 2000], 2000), false);
        assert_eq!(
            s,
            "y: float32[1, 2000]  min 0.000000  max 999.500000  mean 499.750000\n\
             [[0, 0.5, 1, ..., 998.5, 999, 999.5]]"
        );
        let full = text("y", &tensor(&[1, 2000], 2000), true);
        let body: Vec<&str> = full.lines().skip(1).collect();
        assert!(body.iter().all(|l| l.len() <= 75), "{full}");
        assert_eq!(
            body.iter().map(|l| l.matches(',').count()).sum::<usize>(),
            1999
        );
    }

    #[test]
    fn json_has_a_summary_or_the_data() {
        let j = json("y", &tensor(&[2, 2], 4), false);
        assert_eq!(j["shape"], json!([2, 2]));
        assert_eq!(j["dtype"], "float32");
        assert_eq!(j["max"], json!(1.5));
        assert_eq!(j["mean"], json!(0.75));
        assert!(j.get("data").is_none());
        let j = json("y", &tensor(&[2, 2], 4), true);
        assert_eq!(j["data"], json!([0.0, 0.5, 1.0, 1.5]));
    }
}
