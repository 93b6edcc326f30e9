//! How a reshape carries a layout: the reshape's axes in groups, and the
//! layouts its input and output are held in.
//!
//! A reshape `(N, 116, H, W) → (N, 2, 58, H, W)` splits one axis and keeps
//! the others: its axes fall into groups, a run of input axes and a run
//! of output axes with the same number of elements (`{N}↔{N}`,
//! `{116}↔{2, 58}`, `{H}↔{H}`, `{W}↔{W}`). On a value held in another
//! layout (NHWC, the permutation `[0, 2, 3, 1]` of NCHW), the same
//! reshape is a reshape of the held value as long as each group's input
//! axes lie next to each other there, in their order: the held output
//! lists each group's output axes where its input axes were
//! (`(N, H, W, 2, 58)`, the permutation `[0, 3, 4, 1, 2]`). When a
//! group's axes are apart (a channel shuffle's `(N, 58, 2, H, W) → (N,
//! 116, H, W)` on a value held as `(N, H, W, 2, 58)`), the held value is
//! first permuted so that they are together: that permutation is the
//! shuffle itself, and the output is held NHWC again.

use crate::ir::PrimExpr;
use std::ops::Range;

/// One group: a run of input axes and a run of output axes of the same
/// number of elements.
pub(super) type Group = (Range<usize>, Range<usize>);

/// The groups of a reshape from `from` to `to`, in order, or `None` when
/// they cannot be found: a symbolic extent that is not matched by the
/// same extent on the other side, or a side with no axes.
pub(super) fn reshape_groups(from: &[PrimExpr], to: &[PrimExpr]) -> Option<Vec<Group>> {
    let (mut i, mut j) = (0, 0);
    let mut groups: Vec<Group> = Vec::new();
    while i < from.len() && j < to.len() {
        if from[i] == to[j] {
            groups.push((i..i + 1, j..j + 1));
            i += 1;
            j += 1;
            continue;
        }
        let (i0, j0) = (i, j);
        let mut a = from[i].as_int()?;
        let mut b = to[j].as_int()?;
        i += 1;
        j += 1;
        while a != b {
            if a < b {
                a *= from.get(i)?.as_int()?;
                i += 1;
            } else {
                b *= to.get(j)?.as_int()?;
                j += 1;
            }
        }
        groups.push((i0..i, j0..j));
    }
    // Trailing axes of one element join the last group.
    let last = groups.last_mut()?;
    if from[i..].iter().any(|d| d.as_int() != Some(1))
        || to[j..].iter().any(|d| d.as_int() != Some(1))
    {
        return None;
    }
    last.0.end = from.len();
    last.1.end = to.len();
    Some(groups)
}

/// For a reshape with `groups` of a value held in the layout `held` (the
/// permutation of its axes: held axis `k` is axis `held[k]`): the layout
/// the input must be held in (each group's axes together and in order,
/// the groups in the order of their first held axis) and the layout of
/// the output.
pub(super) fn reshape_layouts(held: &[usize], groups: &[Group]) -> (Vec<usize>, Vec<usize>) {
    let position = |axis: usize| held.iter().position(|&a| a == axis).unwrap_or(usize::MAX);
    let mut order: Vec<&Group> = groups.iter().collect();
    order.sort_by_key(|(input, _)| input.clone().map(position).min());
    let input = order.iter().flat_map(|(i, _)| i.clone()).collect();
    let output = order.iter().flat_map(|(_, o)| o.clone()).collect();
    (input, output)
}
