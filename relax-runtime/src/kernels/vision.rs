//! Vision kernels: `vision.all_class_non_max_suppression` in ONNX's output
//! format.
//!
//! Per batch and class: the boxes scoring above the score threshold, by
//! descending score (ties: lower index first); each is taken unless its
//! IoU with a box taken before exceeds the IoU threshold, up to the
//! maximum per class. Corners may come in either order; boxes that do not
//! overlap, or of zero area, never suppress. The rows `(batch, class,
//! box)` are written in that order into a `(batch · classes · boxes, 3)`
//! `int64` tensor, zero-padded, with their count as a `(1,)` tensor.

use super::args::{check_arity, tensor_arg, tensor_value};
use super::{Kernel, KernelAttrs};
use crate::tensor::Tensor;
use crate::value::Value;

/// The vision kernels.
pub const KERNELS: &[(&str, Kernel)] = &[(
    "relax.vision.all_class_non_max_suppression",
    all_class_non_max_suppression,
)];

/// The single value of a one-element tensor, as `f64`.
fn single(t: &Tensor, name: &str) -> Result<f64, String> {
    match t.to_f64_vec().as_slice() {
        [v] => Ok(*v),
        other => Err(format!("{name} must hold one value, found {}", other.len())),
    }
}

/// `(min, max)` of two coordinates.
fn span(a: f64, b: f64) -> (f64, f64) {
    (a.min(b), a.max(b))
}

/// Whether box `a` suppresses box `b` (`[y1, x1, y2, x2]` each).
fn suppresses(a: &[f64], b: &[f64], iou_threshold: f64) -> bool {
    let (ax0, ax1) = span(a[1], a[3]);
    let (bx0, bx1) = span(b[1], b[3]);
    let (ay0, ay1) = span(a[0], a[2]);
    let (by0, by1) = span(b[0], b[2]);
    let (ix0, ix1) = (ax0.max(bx0), ax1.min(bx1));
    let (iy0, iy1) = (ay0.max(by0), ay1.min(by1));
    if ix1 <= ix0 || iy1 <= iy0 {
        return false;
    }
    let inter = (ix1 - ix0) * (iy1 - iy0);
    let area_a = (ax1 - ax0) * (ay1 - ay0);
    let area_b = (bx1 - bx0) * (by1 - by0);
    let union = area_a + area_b - inter;
    if inter <= 0.0 || area_a <= 0.0 || area_b <= 0.0 || union <= 0.0 {
        return false;
    }
    inter / union > iou_threshold
}

/// `relax.vision.all_class_non_max_suppression(boxes, scores, max, iou,
/// score)`.
fn all_class_non_max_suppression(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 5)?;
    let format = attrs.str("output_format")?;
    if format != "onnx" {
        return Err(format!("output_format {format:?} is not supported"));
    }
    let boxes = tensor_arg(args, 0, "boxes")?;
    let scores = tensor_arg(args, 1, "scores")?;
    let max_out = single(
        tensor_arg(args, 2, "max_output_boxes_per_class")?,
        "max_output_boxes_per_class",
    )?;
    let iou = single(tensor_arg(args, 3, "iou_threshold")?, "iou_threshold")?;
    let min_score = single(tensor_arg(args, 4, "score_threshold")?, "score_threshold")?;
    let (&[nb, n, four], &[sb, c, sn]) = (boxes.shape(), scores.shape()) else {
        return Err("boxes and scores must have rank 3".into());
    };
    if four != 4 || sb != nb || sn != n {
        return Err(format!(
            "boxes {:?} and scores {:?} do not describe the same boxes",
            boxes.shape(),
            scores.shape()
        ));
    }
    let (nb, n, c) = (nb as usize, n as usize, c as usize);
    let max_out = if max_out > 0.0 {
        max_out.min(n as f64) as usize
    } else {
        0
    };
    let bx = boxes.to_f64_vec();
    let sc = scores.to_f64_vec();
    let rows = nb * c * n;
    let mut out = super::alloc::collect(rows * 3, std::iter::repeat_n(0i64, rows * 3))?;
    let mut count = 0usize;
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut taken: Vec<usize> = Vec::with_capacity(n);
    for b in 0..nb {
        let bb = &bx[b * n * 4..(b + 1) * n * 4];
        for k in 0..c {
            let s = &sc[(b * c + k) * n..(b * c + k + 1) * n];
            order.clear();
            order.extend((0..n).filter(|&i| s[i] > min_score));
            // Descending score, lower index first among equals.
            order.sort_by(|&i, &j| s[j].partial_cmp(&s[i]).unwrap_or(std::cmp::Ordering::Equal));
            taken.clear();
            for &i in &order {
                if taken.len() >= max_out {
                    break;
                }
                let bi = &bb[i * 4..i * 4 + 4];
                if taken
                    .iter()
                    .any(|&t| suppresses(bi, &bb[t * 4..t * 4 + 4], iou))
                {
                    continue;
                }
                taken.push(i);
                out[count * 3..count * 3 + 3].copy_from_slice(&[b as i64, k as i64, i as i64]);
                count += 1;
            }
        }
    }
    let selected = tensor_value(&[rows, 3], out)?;
    let count = tensor_value(&[1], vec![count as i64])?;
    Ok(Value::Tuple(vec![selected, count].into()))
}

#[cfg(test)]
mod tests {
    use crate::executable::KernelAttr;
    use crate::kernels::testing::*;
    use crate::value::Value;

    #[test]
    fn nms_keeps_the_best_box_of_each_overlapping_group() {
        // Box 1 overlaps box 0 heavily (IoU 0.81), box 2 is apart.
        let boxes = tv(
            &[1, 3, 4],
            vec![
                0.0f32, 0.0, 1.0, 1.0, 0.0, 0.1, 1.0, 1.0, 5.0, 5.0, 6.0, 6.0,
            ],
        );
        let scores = tv(&[1, 2, 3], vec![0.9f32, 0.95, 0.3, 0.1, 0.2, 0.5]);
        let args = |m: i64, thr: f32| {
            vec![
                boxes.clone(),
                scores.clone(),
                tv(&[1], vec![m]),
                tv(&[1], vec![0.5f32]),
                tv(&[1], vec![thr]),
            ]
        };
        let attrs = [("output_format", KernelAttr::Str("onnx".into()))];
        let r = run(
            "relax.vision.all_class_non_max_suppression",
            &args(3, 0.0),
            &attrs,
        )
        .unwrap();
        let Value::Tuple(f) = r else {
            panic!("not a tuple")
        };
        let mut want = vec![0i64, 0, 1, 0, 0, 2, 0, 1, 2, 0, 1, 1];
        want.resize(18, 0);
        assert_tensor(&f[0], &[6, 3], &want);
        assert_tensor(&f[1], &[1], &[4i64]);
        // One box per class, and a score threshold dropping class 1's 0.2.
        let r = run(
            "relax.vision.all_class_non_max_suppression",
            &args(1, 0.25),
            &attrs,
        )
        .unwrap();
        let Value::Tuple(f) = r else {
            panic!("not a tuple")
        };
        assert_tensor(&f[1], &[1], &[2i64]);
        let mut want = vec![0i64, 0, 1, 0, 1, 2];
        want.resize(18, 0);
        assert_tensor(&f[0], &[6, 3], &want);
    }
}
