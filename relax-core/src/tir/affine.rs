//! Index analyses shared by the loop schedules (`DefaultSchedule`) and the
//! LLVM back end: which variables an expression uses, the constant
//! coefficient of a loop variable in an offset, which loads of an
//! expression only run under a condition, and which of those a vector
//! step may read masked (a padded window's clamped load).

use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::Buffer;

/// Whether `e` mentions `v`.
pub fn uses_var(e: &PrimExpr, v: &TirVar) -> bool {
    match e.kind() {
        PrimExprKind::Var(x) => x == v,
        _ => e.children().into_iter().any(|c| uses_var(c, v)),
    }
}

/// `Some(c)` when `e == c * v + (terms without v)` for a constant `c`.
pub fn linear_coeff(e: &PrimExpr, v: &TirVar) -> Option<i64> {
    use PrimExprKind as K;
    if !uses_var(e, v) {
        return Some(0);
    }
    match e.kind() {
        K::Var(_) => Some(1),
        K::Add(a, b) => linear_coeff(a, v)?.checked_add(linear_coeff(b, v)?),
        K::Sub(a, b) => linear_coeff(a, v)?.checked_sub(linear_coeff(b, v)?),
        K::Mul(a, b) => match (a.as_int(), b.as_int()) {
            (Some(k), _) => linear_coeff(b, v)?.checked_mul(k),
            (_, Some(k)) => linear_coeff(a, v)?.checked_mul(k),
            _ => None,
        },
        K::Cast(a) if widens(a, e) => linear_coeff(a, v),
        _ => None,
    }
}

/// Whether the cast of `a` to `e`'s dtype keeps every value of `a`: an
/// integer to a signed integer at least as wide (strictly wider from
/// unsigned), or unsigned to unsigned at least as wide.
fn widens(a: &PrimExpr, e: &PrimExpr) -> bool {
    let (from, to) = (a.dtype(), e.dtype());
    if !from.is_integer() || !to.is_integer() || from.is_bool() || to.is_bool() {
        return false;
    }
    match (from.is_uint(), to.is_uint()) {
        (false, false) | (true, true) => to.bits() >= from.bits(),
        (true, false) => to.bits() > from.bits(),
        (false, true) => false,
    }
}

/// The loads in `e` (as expressions), outermost first.
pub fn loads_of(e: &PrimExpr, out: &mut Vec<PrimExpr>) {
    if matches!(e.kind(), PrimExprKind::BufferLoad(..)) {
        out.push(e.clone());
    }
    for c in e.children() {
        loads_of(c, out);
    }
}

/// Whether `e` has a load that only runs under a condition (a side of a
/// `Select` or `if_then_else`): vector code computes every side, so such
/// an expression is not vectorized lane by lane. Two kinds of load on a
/// side are not guarded:
///
/// - one the condition makes too (relu's `x < 0 ? 0 : x`, as `LegalizeOps`
///   writes it with its NaN test): its address is read whichever side is
///   chosen;
/// - one whose every index is provably inside its buffer's (constant)
///   shape, such as a padded window's load with clamped indices
///   (`x[.., max(min(h, H - 1), 0), ..]` under `0 <= h < H`): reading it
///   when the other side is chosen is harmless.
pub fn guarded_load(e: &PrimExpr) -> bool {
    guarded_load_in(e, None)
}

/// [`guarded_load`] inside a vector step over `lanes`: a padded window's
/// load `Select(inside, X[clamped], v)` is not guarded either, as the back
/// end reads it masked ([`masked_offset`]: a masked load, or a masked
/// gather where the unclamped offset is not contiguous in the lanes), only
/// where the scalar code would; nor is a `Select` that does not use
/// `lanes` at all, which the back end branches on once for every lane.
pub fn guarded_load_in(e: &PrimExpr, lanes: Option<&TirVar>) -> bool {
    // `masked`: the vector variable when the first side may be read
    // masked (a `Select`'s; an `if_then_else` branches).
    let sides_guarded = |cond: &PrimExpr, sides: &[&PrimExpr], masked: Option<&TirVar>| {
        let mut made = Vec::new();
        loads_of(cond, &mut made);
        let mut on_sides = Vec::new();
        for side in sides {
            loads_of(side, &mut on_sides);
        }
        let is_masked =
            |l: &PrimExpr| masked.is_some() && *l == *sides[0] && unclamped_load(cond, l).is_some();
        on_sides
            .iter()
            .any(|l| !made.contains(l) && !in_bounds(l) && !is_masked(l))
    };
    // A `Select` the same in every lane is one scalar branch in a vector
    // step (the back end's `lazy_select`).
    let guarded = match e.kind() {
        PrimExprKind::Select(c, t, f) if lanes.is_some_and(|v| lane_invariant(&[c, t, f], v)) => {
            false
        }
        PrimExprKind::Select(c, t, f) => sides_guarded(c, &[t, f], lanes),
        PrimExprKind::Call(name, args) if name == "if_then_else" && !args.is_empty() => {
            sides_guarded(&args[0], &args[1..].iter().collect::<Vec<_>>(), None)
        }
        _ => false,
    };
    guarded || e.children().into_iter().any(|c| guarded_load_in(c, lanes))
}

/// Whether none of `parts` reads `lanes`: each is the same in every lane
/// of a vector step over it.
pub fn lane_invariant(parts: &[&PrimExpr], lanes: &TirVar) -> bool {
    parts.iter().all(|p| !uses_var(p, lanes))
}

/// Whether `load`, the chosen side of a `Select` on `cond`, can be read
/// as a masked vector load over `lanes`: its [`masked_offset`] is
/// contiguous in them.
pub fn maskable(cond: &PrimExpr, load: &PrimExpr, lanes: &TirVar) -> bool {
    masked_offset(cond, load, lanes).is_some_and(|(_, o)| linear_coeff(&o, lanes) == Some(1))
}

/// The buffer of `load`, the chosen side of a `Select` on `cond`, and the
/// flat offset of its unclamped indices ([`unclamped_load`]), simplified:
/// what a masked vector step over `lanes` reads, as one masked load where
/// the offset is contiguous in `lanes` ([`maskable`]), else as a masked
/// gather (a strided window's image).
///
/// When `cond` is the same in every lane (a padded NHWC window, whose
/// lanes are channels), the offset is that of the clamped indices: it
/// equals the unclamped one where the mask is on, and where it is off it
/// stays inside the buffer along the clamped axes. A masked load whose
/// masked-off lanes lie outside mapped memory (the row above a
/// padded image) takes a fault-suppression assist, hundreds of cycles,
/// on every call.
pub fn masked_offset(
    cond: &PrimExpr,
    load: &PrimExpr,
    lanes: &TirVar,
) -> Option<(Buffer, PrimExpr)> {
    let (buffer, mut indices) = unclamped_load(cond, load)?;
    if lane_invariant(&[cond], lanes) {
        if let PrimExprKind::BufferLoad(_, clamped) = load.kind() {
            indices = clamped.clone();
        }
    }
    let offset = Analyzer::new().simplify(&buffer.offset_of(&indices));
    Some((buffer, offset))
}

/// The indices of `load` without its clamps into its buffer
/// (`max(min(e, D - 1), 0)` and the halves of it), when `cond` has, for
/// every clamp of `e`, the conjuncts that make it the identity (`e >= 0`,
/// `e < D`, compared in the simplifier's canonical form): where `cond`
/// holds, the unclamped load reads what the clamped one reads.
pub fn unclamped_load(cond: &PrimExpr, load: &PrimExpr) -> Option<(Buffer, Vec<PrimExpr>)> {
    let PrimExprKind::BufferLoad(buffer, indices) = load.kind() else {
        return None;
    };
    if !buffer.strides().is_empty() || buffer.shape().len() != indices.len() {
        return None;
    }
    let mut plain = Vec::with_capacity(indices.len());
    let mut needed = Vec::new();
    for (i, dim) in indices.iter().zip(buffer.shape()) {
        match dim.as_int().and_then(|dim| unclamp(i, dim)) {
            Some((e, conds)) => {
                plain.push(e);
                needed.extend(conds);
            }
            None => plain.push(i.clone()),
        }
    }
    if needed.is_empty() {
        return None;
    }
    let an = Analyzer::new();
    let mut have = Vec::new();
    conjuncts(cond, &mut have);
    let have: Vec<PrimExpr> = have.iter().map(|x| an.simplify(x)).collect();
    needed
        .iter()
        .all(|n| have.contains(&an.simplify(n)))
        .then(|| (buffer.clone(), plain))
}

/// `e` without a clamp into `[0, d)`, and the conditions under which the
/// clamp is the identity; `None` when `e` is no such clamp.
fn unclamp(e: &PrimExpr, d: i64) -> Option<(PrimExpr, Vec<PrimExpr>)> {
    use PrimExprKind as K;
    let zero = |x: &PrimExpr| x.as_int() == Some(0);
    let top = |x: &PrimExpr| x.as_int() == Some(d - 1);
    let dt = e.dtype();
    let ge0 = |x: &PrimExpr| x.clone().ge(PrimExpr::int_of(dt, 0));
    let lt_d = |x: &PrimExpr| x.clone().lt(PrimExpr::int_of(dt, d));
    match e.kind() {
        K::Max(a, z) if zero(z) => match a.kind() {
            K::Min(x, t) if top(t) => Some((x.clone(), vec![ge0(x), lt_d(x)])),
            _ => Some((a.clone(), vec![ge0(a)])),
        },
        K::Min(a, t) if top(t) => match a.kind() {
            K::Max(x, z) if zero(z) => Some((x.clone(), vec![ge0(x), lt_d(x)])),
            _ => Some((a.clone(), vec![lt_d(a)])),
        },
        _ => None,
    }
}

/// The conjuncts of `c` (`a and b and …`).
fn conjuncts(c: &PrimExpr, out: &mut Vec<PrimExpr>) {
    match c.kind() {
        PrimExprKind::And(a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        _ => out.push(c.clone()),
    }
}

/// Whether the load `l` reads inside its buffer whatever its variables'
/// values: every index's bound lies within `[0, dim)` of a constant dim.
pub fn in_bounds(l: &PrimExpr) -> bool {
    in_bounds_under(l, &Analyzer::new(), |_, _| false)
}

/// [`in_bounds`] for variables in the ranges `an` knows, with `known(index,
/// dim)` accepting an index known to lie in `[0, dim)` otherwise (a
/// symbolic dim read at the loop variable that runs over it).
pub fn in_bounds_under(
    l: &PrimExpr,
    an: &Analyzer,
    known: impl Fn(&PrimExpr, &PrimExpr) -> bool,
) -> bool {
    let PrimExprKind::BufferLoad(buffer, indices) = l.kind() else {
        return false;
    };
    if !buffer.strides().is_empty() || indices.len() != buffer.shape().len() {
        return false;
    }
    indices.iter().zip(buffer.shape()).all(|(i, dim)| {
        if known(i, dim) {
            return true;
        }
        let (Some(d), b) = (dim.as_int(), an.const_int_bound(i)) else {
            return false;
        };
        b.min.is_some_and(|lo| lo >= 0) && b.max.is_some_and(|hi| hi < d)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tir::Buffer;
    use relax_runtime::DataType;

    fn var(name: &str) -> (TirVar, PrimExpr) {
        let v = TirVar::with_dtype(name, DataType::i64());
        let e = PrimExpr::var(&v);
        (v, e)
    }

    fn int(v: i64) -> PrimExpr {
        PrimExpr::int_of(DataType::i64(), v)
    }

    #[test]
    fn coefficients_of_affine_offsets() {
        let (j, je) = var("j");
        let (_, ke) = var("k");
        assert_eq!(
            linear_coeff(&(je.clone() * int(2) + ke.clone()), &j),
            Some(2)
        );
        assert_eq!(
            linear_coeff(&(ke.clone() - je.clone() * int(3)), &j),
            Some(-3)
        );
        assert_eq!(linear_coeff(&ke, &j), Some(0));
        assert_eq!(linear_coeff(&je.clone().min(int(7)), &j), None);
        assert_eq!(linear_coeff(&(je.clone() * ke), &j), None);
        // Widening keeps the value; narrowing, or signed to unsigned, not.
        let wide = je.clone().cast(DataType::i64());
        assert_eq!(linear_coeff(&wide, &j), Some(1));
        assert_eq!(linear_coeff(&je.clone().cast(DataType::i32()), &j), None);
        assert_eq!(linear_coeff(&je.cast(DataType::uint(64)), &j), None);
    }

    /// A padded window's load: its indices clamped into the buffer, under
    /// a bounds test. Reading it on either side is harmless, so it is not
    /// guarded; the same load unclamped is.
    #[test]
    fn clamped_loads_are_not_guarded() {
        let x = Buffer::new("x", vec![int(10), int(12)], DataType::f32());
        let (_, he) = var("h");
        let (_, we) = var("w");
        let clamp = |e: PrimExpr, d: i64| e.min(int(d - 1)).max(int(0));
        let inside = he.clone().ge(int(0)).and(he.clone().lt(int(10)));
        let ninf = PrimExpr::float(DataType::f32(), f64::NEG_INFINITY);
        let clamped = PrimExpr::load(&x, vec![clamp(he.clone(), 10), clamp(we.clone(), 12)]);
        assert!(in_bounds(&clamped));
        let e = PrimExpr::select(inside.clone(), clamped, ninf.clone());
        assert!(!guarded_load(&e));
        // Clamped to the wrong extent: past the buffer's 10 rows.
        let past = PrimExpr::load(&x, vec![clamp(he.clone(), 11), clamp(we.clone(), 12)]);
        assert!(!in_bounds(&past));
        assert!(guarded_load(&PrimExpr::select(
            inside.clone(),
            past,
            ninf.clone()
        )));
        let raw = PrimExpr::load(&x, vec![he, we]);
        assert!(!in_bounds(&raw));
        assert!(guarded_load(&PrimExpr::select(inside, raw, ninf)));
    }

    /// A padded row `Select(0 <= w - 1 < 12, x[h, clamp(w - 1)], 0)`: the
    /// bounds test makes the clamp the identity, so the load unclamped is
    /// `x[h, w - 1]`, contiguous in `w`, and a vector step over `w` reads
    /// it masked (not guarded); one over `h` reads it as a masked gather.
    /// Without the upper test it is guarded.
    #[test]
    fn a_padded_row_is_read_masked() {
        let x = Buffer::new("x", vec![int(10), int(12)], DataType::f32());
        let (h, he) = var("h");
        let (w, we) = var("w");
        let e = we.clone() - int(1);
        let clamped = PrimExpr::load(&x, vec![he.clone(), e.clone().min(int(11)).max(int(0))]);
        let zero = PrimExpr::float(DataType::f32(), 0.0);
        let inside = e.clone().ge(int(0)).and(e.clone().lt(int(12)));
        let (buffer, plain) = unclamped_load(&inside, &clamped).unwrap();
        assert_eq!(buffer, x);
        assert_eq!(plain, vec![he.clone(), e.clone()]);
        assert!(maskable(&inside, &clamped, &w));
        assert!(!maskable(&inside, &clamped, &h), "not contiguous in h");
        // `h` unclamped and unbounded: guarded, unless read masked.
        let sel = PrimExpr::select(inside, clamped.clone(), zero.clone());
        assert!(guarded_load(&sel));
        assert!(!guarded_load_in(&sel, Some(&w)));
        // Over `h` the lanes are a row apart: a masked gather, unguarded.
        assert!(!guarded_load_in(&sel, Some(&h)));
        let half = e.clone().ge(int(0));
        assert!(unclamped_load(&half, &clamped).is_none());
        assert!(guarded_load_in(
            &PrimExpr::select(half, clamped, zero),
            Some(&w)
        ));
    }

    /// A padded NHWC pixel `Select(0 <= h - 1 < 10, x[clamp(h - 1), c],
    /// 0)` read over the channels `c`: the mask is the same in every lane,
    /// so the masked load reads at the clamped offset (inside `x` even
    /// where the mask is off); a mask that varies along the lanes keeps
    /// the unclamped one.
    #[test]
    fn a_lane_invariant_mask_reads_at_the_clamped_offset() {
        let x = Buffer::new("x", vec![int(10), int(16)], DataType::f32());
        let (_, he) = var("h");
        let (c, ce) = var("c");
        let e = he.clone() - int(1);
        let clamped_h = e.clone().min(int(9)).max(int(0));
        let load = PrimExpr::load(&x, vec![clamped_h.clone(), ce.clone()]);
        let inside = e.clone().ge(int(0)).and(e.clone().lt(int(10)));
        let (buffer, offset) = masked_offset(&inside, &load, &c).unwrap();
        assert_eq!(buffer, x);
        let an = Analyzer::new();
        let want = an.simplify(&x.offset_of(&[clamped_h, ce.clone()]));
        assert_eq!(offset, want);
        // The row's own mask (along `w`, the lanes) keeps the unclamped.
        let (w, we) = var("w");
        let ew = we.clone() - int(1);
        let row = PrimExpr::load(&x, vec![he.clone(), ew.clone().min(int(15)).max(int(0))]);
        let inside_w = ew.clone().ge(int(0)).and(ew.clone().lt(int(16)));
        let (_, offset) = masked_offset(&inside_w, &row, &w).unwrap();
        assert_eq!(offset, an.simplify(&x.offset_of(&[he, ew])));
    }

    /// relu's load is made by its condition too: not guarded.
    #[test]
    fn a_load_the_condition_makes_is_not_guarded() {
        let x = Buffer::new("x", vec![int(4)], DataType::f32());
        let (_, ie) = var("i");
        let v = PrimExpr::load(&x, vec![ie]);
        let zero = PrimExpr::float(DataType::f32(), 0.0);
        let relu = PrimExpr::select(v.clone().lt(zero.clone()), zero, v);
        assert!(!guarded_load(&relu));
    }
}
