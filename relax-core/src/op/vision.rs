//! Vision: `vision.all_class_non_max_suppression` (TVM's
//! `R.vision.all_class_non_max_suppression`, ONNX's `NonMaxSuppression`).
//!
//! `all_class_non_max_suppression(boxes, scores, max_output_boxes_per_class,
//! iou_threshold, score_threshold, output_format)`: `boxes` is `(batch,
//! num_boxes, 4)` corners `[y1, x1, y2, x2]` (either corner first),
//! `scores` `(batch, num_classes, num_boxes)`; the other three are
//! one-element tensors (`int64`, then floats). For every batch and class,
//! boxes scoring above the score threshold are taken by descending score
//! (ties: the lower index first) unless their IoU with a box already taken
//! exceeds the IoU threshold, at most `max_output_boxes_per_class` of
//! them. With `output_format = "onnx"` (the only one) the result is the
//! tuple of the `(batch, class, box)` rows of every selection, padded to
//! `batch · num_classes · num_boxes` rows, and their count as a `(1,)`
//! `int64` tensor; a frontend cuts the rows to the count. The op is not
//! legalized: the VM runs its kernel (the selection is sequential and
//! data-dependent).

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{arg_name, attr, error, product, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{AttrValue, Call, PrimExpr, StructInfo};
use relax_runtime::{DataType, Diagnostic};

fn infer_nms(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let boxes = tensor_arg(call, 0)?;
    let scores = tensor_arg(call, 1)?;
    for (i, t) in [(0, boxes), (1, scores)] {
        if !t.is_unknown_ndim() && t.ndim != 3 {
            return Err(error(
                call,
                "op-rank",
                format!(
                    "{} must have rank 3, found rank {}",
                    arg_name(call, i),
                    t.ndim
                ),
            ));
        }
    }
    for i in 2..5 {
        tensor_arg(call, i)?;
    }
    match attr(call, "output_format") {
        Some(AttrValue::Str(s)) if s == "onnx" => {}
        other => {
            return Err(error(
                call,
                "op-nms-format",
                format!("output_format must be \"onnx\", found {other:?}"),
            ))
        }
    }
    if let (Some(b), Some(s)) = (boxes.shape_values(), scores.shape_values()) {
        if let Some(x) = b[2].as_int().filter(|&x| x != 4) {
            return Err(error(
                call,
                "op-nms-boxes",
                format!("boxes must have 4 coordinates per box, found {x}"),
            ));
        }
        let rows = ana.simplify(&product(&[b[0].clone(), s[1].clone(), b[1].clone()]));
        return Ok(StructInfo::tuple(vec![
            StructInfo::tensor(vec![rows, PrimExpr::int(3)], DataType::i64()),
            StructInfo::tensor(vec![PrimExpr::int(1)], DataType::i64()),
        ]));
    }
    Ok(StructInfo::tuple(vec![
        StructInfo::tensor_ndim(2, DataType::i64()),
        StructInfo::tensor(vec![PrimExpr::int(1)], DataType::i64()),
    ]))
}

/// The vision ops.
pub const OPS: &[OpInfo] = &[OpInfo {
    name: "relax.vision.all_class_non_max_suppression",
    args: &[
        "boxes",
        "scores",
        "max_output_boxes_per_class",
        "iou_threshold",
        "score_threshold",
    ],
    arity: Arity::Exact(5),
    attrs: &[AttrSpec::new(
        "output_format",
        AttrType::Str,
        AttrDefault::Str("onnx"),
    )],
    infer_struct_info: infer_nms,
    purity: true,
    pattern: OpPatternKind::Opaque,
}];

#[cfg(test)]
mod tests {
    use crate::op::testing::*;

    #[test]
    fn nms_rows_are_padded_to_every_box_of_every_class() {
        let n = sym("n");
        let scalars = || [t(&[d(1)], I64), t(&[d(1)], F32), t(&[d(1)], F32)];
        let [m, iou, score] = scalars();
        assert_infers(
            "relax.vision.all_class_non_max_suppression",
            &[
                t(&[d(2), n.clone(), d(4)], F32),
                t(&[d(2), d(3), n.clone()], F32),
                m,
                iou,
                score,
            ],
            &[],
            "R.Tuple(R.Tensor((n * 6, 3), dtype=\"int64\"), R.Tensor((1,), dtype=\"int64\"))",
        );
        let [m, iou, score] = scalars();
        assert_fails(
            "relax.vision.all_class_non_max_suppression",
            &[
                t(&[d(2), d(4)], F32),
                t(&[d(2), d(3), d(5)], F32),
                m,
                iou,
                score,
            ],
            &[],
            "vision.all_class_non_max_suppression: boxes must have rank 3, found rank 2",
        );
        let [m, iou, score] = scalars();
        assert_fails(
            "relax.vision.all_class_non_max_suppression",
            &[
                t(&[d(1), d(5), d(3)], F32),
                t(&[d(1), d(3), d(5)], F32),
                m,
                iou,
                score,
            ],
            &[],
            "vision.all_class_non_max_suppression: boxes must have 4 coordinates per box, found 3",
        );
    }
}
