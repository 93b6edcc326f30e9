//! The rewriter: a `PrimExpr` to its canonical form.
//!
//! Integer expressions become a [`Poly`] bottom-up and print back through
//! [`Poly::to_expr`]; boolean expressions are folded with the bound analysis.
//! Every rule is an identity over the integers that holds for *every* value
//! of the variables inside their known ranges:
//!
//! | rule | algebra |
//! |---|---|
//! | sums, products | multiply out, collect like monomials, fold constants |
//! | `a // c`, `c` constant | `a = c·q + r` ⇒ `a // c = q + r // c` |
//! | `a % c`, `c` constant | `a = c·q + r` ⇒ `a % c = r % c` |
//! | `r // c`, `r % c` by bounds | `floor(lo/c) = floor(hi/c) = k` ⇒ `r // c = k`, `r % c = r - k·c` |
//! | common factor `g` of `c > 0` and `r`'s coefficients | `(g·x + s) // (g·c') = (x + s // g) // c'`, `(g·x + s) % (g·c') = g·((x + s // g) % c') + s % g` |
//! | `a // b`, `a % b`, `b` not constant | `b ≠ 0`: `a // a = 1`, `a % a = 0`; `0 ≤ a < b` ⇒ `a // b = 0`, `a % b = a` |
//! | `min(a, b)`, `max(a, b)` | pick the side the sign of `a - b` allows |
//! | `a < b` (and the others) | decided by the bound of `a - b`, else `P < N` with `a - b = P - N` |
//! | `a == b` | also false when a gcd of the coefficients does not divide the constant |
//! | `and`, `or`, `not`, `select` | fold constant operands; `not` flips integer comparisons |
//!
//! Division or modulo by zero is never folded, and an operation whose
//! canonical form would overflow `i64` stays unexpanded (an opaque atom).

use super::bound::Bounds;
use super::canonical::{cmp_expr, gcd, Atom, Poly};
use super::interval::floor_div_i128;
use crate::ir::prim_expr::{floor_div, floor_mod, PrimExpr, PrimExprKind};
use relax_runtime::DataType;
use std::cmp::Ordering;

/// Whether expressions of this dtype get the polynomial treatment.
pub(crate) fn is_int(dt: DataType) -> bool {
    dt.is_integer() && !dt.is_bool() && dt.lanes() == 1
}

/// The comparison operators, to treat them uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn of(k: &PrimExprKind) -> Option<(Cmp, &PrimExpr, &PrimExpr)> {
        use PrimExprKind as K;
        Some(match k {
            K::Eq(a, b) => (Cmp::Eq, a, b),
            K::Ne(a, b) => (Cmp::Ne, a, b),
            K::Lt(a, b) => (Cmp::Lt, a, b),
            K::Le(a, b) => (Cmp::Le, a, b),
            K::Gt(a, b) => (Cmp::Gt, a, b),
            K::Ge(a, b) => (Cmp::Ge, a, b),
            _ => return None,
        })
    }
    fn build(self, a: PrimExpr, b: PrimExpr) -> PrimExprKind {
        use PrimExprKind as K;
        match self {
            Cmp::Eq => K::Eq(a, b),
            Cmp::Ne => K::Ne(a, b),
            Cmp::Lt => K::Lt(a, b),
            Cmp::Le => K::Le(a, b),
            Cmp::Gt => K::Gt(a, b),
            Cmp::Ge => K::Ge(a, b),
        }
    }
    /// The comparison meaning `not (a op b)` on integers.
    fn negate(self) -> Cmp {
        match self {
            Cmp::Eq => Cmp::Ne,
            Cmp::Ne => Cmp::Eq,
            Cmp::Lt => Cmp::Ge,
            Cmp::Le => Cmp::Gt,
            Cmp::Gt => Cmp::Le,
            Cmp::Ge => Cmp::Lt,
        }
    }
    fn eval<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
}

/// One simplification run over the analyzer's facts.
pub(crate) struct Simplifier<'a> {
    /// Variable ranges.
    pub bounds: Bounds<'a>,
    /// Prover mode: write `r % c` as `r - c·(r // c)`, so that `%` and `//`
    /// of the same operand cancel (`n // 2 * 2 + n % 2 == n`). Off for
    /// user-facing output, where `n % 2` reads better.
    pub expand_mod: bool,
}

impl Simplifier<'_> {
    /// The canonical form of `e`.
    pub fn simplify(&self, e: &PrimExpr) -> PrimExpr {
        use PrimExprKind::*;
        let dt = e.dtype();
        if is_int(dt)
            && matches!(
                e.kind(),
                Var(_)
                    | IntImm(_)
                    | Add(..)
                    | Sub(..)
                    | Mul(..)
                    | Div(..)
                    | Mod(..)
                    | Min(..)
                    | Max(..)
                    | Select(..)
            )
        {
            return self.poly(e).to_expr(dt);
        }
        if let Some((op, a, b)) = Cmp::of(e.kind()) {
            return self.compare(e.dtype(), op, a, b);
        }
        match e.kind() {
            And(a, b) => self.logic(e.dtype(), true, a, b),
            Or(a, b) => self.logic(e.dtype(), false, a, b),
            Not(a) => self.not(e.dtype(), a),
            Select(c, t, f) => {
                let c = self.simplify(c);
                if let Some(v) = c.as_int() {
                    return self.simplify(if v != 0 { t } else { f });
                }
                let (t, f) = (self.simplify(t), self.simplify(f));
                if t == f {
                    return t;
                }
                PrimExpr::new(dt, Select(c, t, f))
            }
            _ => e.map_children(|c| self.simplify(c)),
        }
    }

    /// The canonical polynomial of an integer expression.
    pub fn poly(&self, e: &PrimExpr) -> Poly {
        use PrimExprKind::*;
        let dt = e.dtype();
        if !is_int(dt) {
            return Poly::atom(self.simplify(e));
        }
        match e.kind() {
            IntImm(v) => Poly::constant(*v),
            Var(_) => Poly::atom(e.clone()),
            Add(a, b) => {
                let (pa, pb) = (self.poly(a), self.poly(b));
                pa.add(&pb)
                    .map(|p| self.recombine(p))
                    .unwrap_or_else(|| self.opaque(dt, &pa, &pb, PrimExprKind::Add))
            }
            Sub(a, b) => {
                let (pa, pb) = (self.poly(a), self.poly(b));
                pa.sub(&pb)
                    .map(|p| self.recombine(p))
                    .unwrap_or_else(|| self.opaque(dt, &pa, &pb, PrimExprKind::Sub))
            }
            Mul(a, b) => {
                let (pa, pb) = (self.poly(a), self.poly(b));
                pa.mul(&pb)
                    .unwrap_or_else(|| self.opaque_commutative(dt, &pa, &pb, PrimExprKind::Mul))
            }
            Div(a, b) => self.div(dt, &self.poly(a), &self.poly(b)),
            Mod(a, b) => self.modulo(dt, &self.poly(a), &self.poly(b)),
            Min(a, b) => self.min_max(dt, true, &self.poly(a), &self.poly(b)),
            Max(a, b) => self.min_max(dt, false, &self.poly(a), &self.poly(b)),
            Select(c, t, f) => {
                let c = self.simplify(c);
                if let Some(v) = c.as_int() {
                    return self.poly(if v != 0 { t } else { f });
                }
                let (pt, pf) = (self.poly(t), self.poly(f));
                if pt == pf {
                    return pt;
                }
                Poly::atom(PrimExpr::new(dt, Select(c, pt.to_expr(dt), pf.to_expr(dt))))
            }
            _ => Poly::atom(e.map_children(|c| self.simplify(c))),
        }
    }

    /// `p` with every `k·c·(x // c) + k·(x % c)` replaced by `k·x` (floor
    /// division and modulo: `x = c·(x // c) + x % c` for every `x`), as
    /// an index split into a quotient and a remainder and put back
    /// together is `(j // 7) * 7 + j % 7`. A split in three first has its
    /// two low parts joined, `k·c·((x // c) % d) + k·(x % c)` into
    /// `k·(x % (c·d))` (for `c, d > 0`, `x % (c·d) = c·((x // c) % d) +
    /// x % c`), as a convolution's flattened window index `k` is
    /// `(k // 9)·9 + (k // 3 % 3)·3 + k % 3`.
    fn recombine(&self, mut p: Poly) -> Poly {
        use PrimExprKind::*;
        while let Some(next) = self.join_low_parts(&p) {
            p = next;
        }
        loop {
            let found = p.terms.iter().find_map(|(m, &k)| {
                let [Atom(e)] = m.as_slice() else {
                    return None;
                };
                let Div(x, c) = e.kind() else {
                    return None;
                };
                let c = c.as_int().filter(|&c| c != 0)?;
                let rem = vec![Atom(PrimExpr::new(
                    e.dtype(),
                    Mod(x.clone(), PrimExpr::int_of(e.dtype(), c)),
                ))];
                let k_rem = *p.terms.get(&rem)?;
                (k_rem.checked_mul(c)? == k).then(|| (m.clone(), rem, k_rem, x.clone()))
            });
            let Some((quot, rem, k, x)) = found else {
                return p;
            };
            let whole = match self.poly(&x).scale(k) {
                Some(w) => w,
                None => return p,
            };
            let mut next = p.clone();
            next.terms.remove(&quot);
            next.terms.remove(&rem);
            match next.add(&whole) {
                Some(q) => p = q,
                None => return p,
            }
        }
    }

    /// One `k·c·((x // c) % d) + k·(x % c)` of `p` joined into
    /// `k·(x % (c·d))` (see [`Self::recombine`]), if `p` has one.
    fn join_low_parts(&self, p: &Poly) -> Option<Poly> {
        use PrimExprKind::*;
        let (mid, low, k, joined) = p.terms.iter().find_map(|(m, &kc)| {
            let [Atom(e)] = m.as_slice() else {
                return None;
            };
            let Mod(q, d) = e.kind() else { return None };
            let Div(x, c) = q.kind() else { return None };
            let (c, d) = (c.as_int()?, d.as_int()?);
            if c <= 0 || d <= 0 {
                return None;
            }
            let dt = e.dtype();
            let low = vec![Atom(PrimExpr::new(
                dt,
                Mod(x.clone(), PrimExpr::int_of(dt, c)),
            ))];
            let k = *p.terms.get(&low)?;
            if k.checked_mul(c)? != kc {
                return None;
            }
            let cd = c.checked_mul(d)?;
            let joined = vec![Atom(PrimExpr::new(
                dt,
                Mod(x.clone(), PrimExpr::int_of(dt, cd)),
            ))];
            Some((m.clone(), low, k, joined))
        })?;
        let mut next = p.clone();
        next.terms.remove(&mid);
        next.terms.remove(&low);
        let old = next.terms.get(&joined).copied().unwrap_or(0);
        let sum = old.checked_add(k)?;
        if sum == 0 {
            next.terms.remove(&joined);
        } else {
            next.terms.insert(joined, sum);
        }
        Some(next)
    }

    /// `a op b` kept as one atom over canonical children.
    fn opaque(
        &self,
        dt: DataType,
        a: &Poly,
        b: &Poly,
        op: fn(PrimExpr, PrimExpr) -> PrimExprKind,
    ) -> Poly {
        Poly::atom(PrimExpr::new(dt, op(a.to_expr(dt), b.to_expr(dt))))
    }

    /// Like [`Self::opaque`] for a commutative `op`: the children are put in
    /// atom order so `op(a, b)` and `op(b, a)` give the same atom.
    fn opaque_commutative(
        &self,
        dt: DataType,
        a: &Poly,
        b: &Poly,
        op: fn(PrimExpr, PrimExpr) -> PrimExprKind,
    ) -> Poly {
        let (x, y) = (a.to_expr(dt), b.to_expr(dt));
        // Literals go last, as people write them (`x * 2`).
        let swap = match (x.as_int(), y.as_int()) {
            (Some(_), None) => true,
            (None, Some(_)) => false,
            _ => cmp_expr(&x, &y) == Ordering::Greater,
        };
        let (x, y) = if swap { (y, x) } else { (x, y) };
        Poly::atom(PrimExpr::new(dt, op(x, y)))
    }

    /// `a // b`.
    fn div(&self, dt: DataType, a: &Poly, b: &Poly) -> Poly {
        let node = || self.opaque(dt, a, b, PrimExprKind::Div);
        if let Some(c) = b.as_constant() {
            if c == 0 {
                return node();
            }
            if let Some(x) = a.as_constant() {
                return floor_div(x, c).map_or_else(node, Poly::constant);
            }
            if c == 1 {
                return a.clone();
            }
            let Some((q, r)) = a.split_by(c) else {
                return node();
            };
            return self
                .div_rest(dt, &r, c)
                .and_then(|rest| q.add(&rest))
                .unwrap_or_else(node);
        }
        let bb = self.bounds.of_poly(b);
        if bb.excludes_zero() {
            if a == b {
                return Poly::constant(1);
            }
            if a.is_zero() || self.in_zero_to(a, b) {
                return Poly::constant(0);
            }
        }
        if let Some((q, _)) = self.split_by_symbol(a, b) {
            return q;
        }
        node()
    }

    /// `(q, r)` with `a = q·b + r` and `0 <= r < b`, when `b` is one
    /// monomial with coefficient 1 (`seq`, `s * h`): `q` takes the terms
    /// whose monomial contains `b`'s, and the rest `r` must be shown to lie
    /// in `[0, b)` (through the variables' symbolic bounds). Then
    /// `a // b = q` and `a % b = r`.
    fn split_by_symbol(&self, a: &Poly, b: &Poly) -> Option<(Poly, Poly)> {
        if b.constant != 0 || b.terms.len() != 1 {
            return None;
        }
        let (bm, bk) = b.terms.iter().next()?;
        if *bk != 1 {
            return None;
        }
        let mut q = Poly::constant(0);
        let mut r = Poly::constant(a.constant);
        for (m, k) in &a.terms {
            let mut rest = m.clone();
            let divides = bm
                .iter()
                .all(|atom| match rest.iter().position(|x| x == atom) {
                    Some(i) => {
                        rest.remove(i);
                        true
                    }
                    None => false,
                });
            if divides {
                if rest.is_empty() {
                    q.constant = q.constant.checked_add(*k)?;
                } else {
                    q.terms.insert(rest, *k);
                }
            } else {
                r.terms.insert(m.clone(), *k);
            }
        }
        if q.is_zero() || !self.in_zero_to(&r, b) {
            return None;
        }
        Some((q, r))
    }

    /// `r // c` for the remainder part of a split (`r`'s constant is
    /// `floormod(_, c)` and no coefficient is a multiple of `c`).
    fn div_rest(&self, dt: DataType, r: &Poly, c: i64) -> Option<Poly> {
        if let Some(v) = r.as_constant() {
            return floor_div(v, c).map(Poly::constant);
        }
        if let Some(k) = self.same_block(r, c) {
            return Some(Poly::constant(k));
        }
        if c > 0 {
            let g = gcd(r.terms_gcd(), c as u64) as i64;
            if g > 1 {
                let x = r
                    .terms_div_exact(g)?
                    .add(&Poly::constant(floor_div(r.constant, g)?))?;
                return Some(self.div(dt, &x, &Poly::constant(c / g)));
            }
        }
        Some(self.opaque(dt, r, &Poly::constant(c), PrimExprKind::Div))
    }

    /// `a % b`.
    fn modulo(&self, dt: DataType, a: &Poly, b: &Poly) -> Poly {
        let node = || self.opaque(dt, a, b, PrimExprKind::Mod);
        if let Some(c) = b.as_constant() {
            if c == 0 {
                return node();
            }
            if let Some(x) = a.as_constant() {
                return floor_mod(x, c).map_or_else(node, Poly::constant);
            }
            if c == 1 || c == -1 {
                return Poly::constant(0);
            }
            return a
                .split_by(c)
                .and_then(|(_, r)| self.mod_rest(dt, &r, c))
                .unwrap_or_else(node);
        }
        let bb = self.bounds.of_poly(b);
        if bb.excludes_zero() {
            if a == b || a.is_zero() {
                return Poly::constant(0);
            }
            if self.in_zero_to(a, b) {
                return a.clone();
            }
        }
        if let Some((_, r)) = self.split_by_symbol(a, b) {
            return r;
        }
        node()
    }

    /// `r % c` for the remainder part of a split.
    fn mod_rest(&self, dt: DataType, r: &Poly, c: i64) -> Option<Poly> {
        if let Some(v) = r.as_constant() {
            return floor_mod(v, c).map(Poly::constant);
        }
        if let Some(k) = self.same_block(r, c) {
            return r.add(&Poly::constant(k.checked_mul(c)?.checked_neg()?));
        }
        if c > 0 {
            let g = gcd(r.terms_gcd(), c as u64) as i64;
            if g > 1 {
                let y = r
                    .terms_div_exact(g)?
                    .add(&Poly::constant(floor_div(r.constant, g)?))?;
                let s = floor_mod(r.constant, g)?;
                return self
                    .modulo(dt, &y, &Poly::constant(c / g))
                    .scale(g)?
                    .add(&Poly::constant(s));
            }
        }
        if self.expand_mod {
            let q = self.div_rest(dt, r, c)?;
            return r.sub(&q.scale(c)?);
        }
        Some(self.opaque(dt, r, &Poly::constant(c), PrimExprKind::Mod))
    }

    /// `k` when `floor(r / c) = k` for every value of `r` (its bound lies in
    /// one block `[k·c, k·c + c)`).
    fn same_block(&self, r: &Poly, c: i64) -> Option<i64> {
        let b = self.bounds.of_poly(r);
        if !(b.has_lo() && b.has_hi()) {
            return None;
        }
        let k = floor_div_i128(b.lo, c as i128);
        if k != floor_div_i128(b.hi, c as i128) {
            return None;
        }
        i64::try_from(k).ok()
    }

    /// Whether `0 <= a < b` always holds.
    fn in_zero_to(&self, a: &Poly, b: &Poly) -> bool {
        if !self.bounds.of_poly(a).all_ge(0) {
            return false;
        }
        if b.sub(a).is_some_and(|d| self.bounds.of_poly(&d).all_ge(1)) {
            return true;
        }
        // With symbolic bounds: each variable term `k·v` (k > 0) of `a` at
        // its largest value `k·(upper(v) - 1)` gives an `a' >= a`; `b - a'
        // >= 1` shows `a < b`.
        let mut top = Poly::constant(a.constant);
        let mut used = false;
        for (m, k) in &a.terms {
            let bound = match m.as_slice() {
                [Atom(e)] if *k > 0 => e
                    .as_var()
                    .and_then(|v| self.bounds.upper.get(v))
                    .map(|u| self.poly(u).sub(&Poly::constant(1))?.scale(*k)),
                _ => None,
            };
            match bound.flatten() {
                Some(t) => {
                    used = true;
                    match top.add(&t) {
                        Some(x) => top = x,
                        None => return false,
                    }
                }
                None => {
                    let mut one = Poly::constant(0);
                    one.terms.insert(m.clone(), *k);
                    match top.add(&one) {
                        Some(x) => top = x,
                        None => return false,
                    }
                }
            }
        }
        used && b
            .sub(&top)
            .is_some_and(|d| self.bounds.of_poly(&d).all_ge(1))
    }

    /// `min(a, b)` or `max(a, b)`.
    fn min_max(&self, dt: DataType, is_min: bool, a: &Poly, b: &Poly) -> Poly {
        if let Some(d) = a.sub(b) {
            let bd = self.bounds.of_poly(&d);
            // a <= b everywhere, or a >= b everywhere.
            let (a_le, a_ge) = (bd.all_le(0), bd.all_ge(0));
            if (is_min && a_le) || (!is_min && a_ge) {
                return a.clone();
            }
            if (is_min && a_ge) || (!is_min && a_le) {
                return b.clone();
            }
        }
        let op = if is_min {
            PrimExprKind::Min
        } else {
            PrimExprKind::Max
        };
        self.opaque_commutative(dt, a, b, op)
    }

    /// `a op b` for a comparison.
    fn compare(&self, out: DataType, op: Cmp, a: &PrimExpr, b: &PrimExpr) -> PrimExpr {
        use PrimExprKind::FloatImm;
        let dt = a.dtype();
        if !is_int(dt) || !is_int(b.dtype()) {
            let (a, b) = (self.simplify(a), self.simplify(b));
            if let (FloatImm(x), FloatImm(y)) = (a.kind(), b.kind()) {
                return PrimExpr::bool(op.eval(x, y));
            }
            if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
                return PrimExpr::bool(op.eval(x, y));
            }
            return PrimExpr::new(out, op.build(a, b));
        }
        let (pa, pb) = (self.poly(a), self.poly(b));
        let Some(mut d) = pa.sub(&pb) else {
            return PrimExpr::new(out, op.build(pa.to_expr(dt), pb.to_expr(dt)));
        };
        if let Some(v) = self.decide(op, &d) {
            return PrimExpr::bool(v);
        }
        // `a == b` and `b == a` get one orientation.
        if matches!(op, Cmp::Eq | Cmp::Ne) && d.leading_coefficient().is_some_and(|k| k < 0) {
            if let Some(n) = d.scale(-1) {
                d = n;
            }
        }
        let (lhs, rhs) = comparison_sides(&d);
        PrimExpr::new(out, op.build(lhs.to_expr(dt), rhs.to_expr(dt)))
    }

    /// The truth of `d op 0`, when the bound of `d` settles it.
    fn decide(&self, op: Cmp, d: &Poly) -> Option<bool> {
        let b = self.bounds.of_poly(d);
        let never_zero = || {
            if b.excludes_zero() {
                return true;
            }
            // Σ kᵢ·mᵢ is a multiple of g = gcd(kᵢ); it never equals -c unless
            // g divides c.
            let g = d.terms_gcd();
            g > 1 && !d.constant.unsigned_abs().is_multiple_of(g)
        };
        match op {
            Cmp::Eq | Cmp::Ne => {
                let eq = if d.is_zero() {
                    true
                } else if never_zero() {
                    false
                } else {
                    return None;
                };
                Some(eq == (op == Cmp::Eq))
            }
            Cmp::Lt => decided(b.all_le(-1), b.all_ge(0)),
            Cmp::Le => decided(b.all_le(0), b.all_ge(1)),
            Cmp::Gt => decided(b.all_ge(1), b.all_le(0)),
            Cmp::Ge => decided(b.all_ge(0), b.all_le(-1)),
        }
    }

    /// `a and b` (`is_and`) or `a or b`.
    fn logic(&self, out: DataType, is_and: bool, a: &PrimExpr, b: &PrimExpr) -> PrimExpr {
        let (a, b) = (self.simplify(a), self.simplify(b));
        // The value that decides the result alone: false for `and`, true for `or`.
        let absorbing = !is_and;
        let truth = |e: &PrimExpr| e.as_int().map(|v| v != 0);
        match (truth(&a), truth(&b)) {
            (Some(x), _) if x == absorbing => return PrimExpr::bool(absorbing),
            (_, Some(y)) if y == absorbing => return PrimExpr::bool(absorbing),
            (Some(_), Some(_)) => return PrimExpr::bool(!absorbing),
            // The identity operand drops out when the other is already a bool.
            (Some(_), None) if b.dtype().is_bool() => return b,
            (None, Some(_)) if a.dtype().is_bool() => return a,
            _ => {}
        }
        if a == b && a.dtype().is_bool() {
            return a;
        }
        let kind = if is_and {
            PrimExprKind::And(a, b)
        } else {
            PrimExprKind::Or(a, b)
        };
        PrimExpr::new(out, kind)
    }

    /// `not a`.
    fn not(&self, out: DataType, a: &PrimExpr) -> PrimExpr {
        let a = self.simplify(a);
        if let Some(v) = a.as_int() {
            return PrimExpr::bool(v == 0);
        }
        match a.kind() {
            PrimExprKind::Not(x) if x.dtype().is_bool() => return x.clone(),
            k => {
                if let Some((op, x, y)) = Cmp::of(k) {
                    // Only integers: with floats, `not (x < y)` also holds for NaN.
                    if is_int(x.dtype()) && is_int(y.dtype()) {
                        return PrimExpr::new(out, op.negate().build(x.clone(), y.clone()));
                    }
                }
            }
        }
        PrimExpr::new(out, PrimExprKind::Not(a))
    }
}

/// `Some(true)` when `yes`, `Some(false)` when `no`, else unknown.
fn decided(yes: bool, no: bool) -> Option<bool> {
    if yes {
        Some(true)
    } else if no {
        Some(false)
    } else {
        None
    }
}

/// Two sides `(l, r)` with `d = l - r` for printing `d op 0` as `l op r`.
/// Terms of one sign stay together and the constant goes to the side that
/// has no terms (`n <= -4`, `2 < n`), or else to the side where it is
/// positive (`n + 1 <= m`).
fn comparison_sides(d: &Poly) -> (Poly, Poly) {
    let (pos, neg) = d.split_signs();
    if neg.terms.is_empty() {
        if let Some(c) = d.constant.checked_neg() {
            let mut terms = d.clone();
            terms.constant = 0;
            return (terms, Poly::constant(c));
        }
    } else if pos.terms.is_empty() {
        if let Some(terms) = d.scale(-1) {
            let mut terms = terms;
            terms.constant = 0;
            return (Poly::constant(d.constant), terms);
        }
    }
    (pos, neg)
}
