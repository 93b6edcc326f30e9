//! The canonical form of integer expressions: polynomials over atoms.
//!
//! 1. A [`Poly`] is `Σ kᵢ·mᵢ + c`: integer coefficients `kᵢ ≠ 0` on distinct
//!    monomials `mᵢ`, plus a constant `c`. Coefficients are `i64`; every
//!    operation is checked and returns `None` on overflow, so the caller can
//!    keep the expression unexpanded instead of computing a wrong one.
//! 2. A monomial is a non-empty sorted list of [`Atom`]s (with repetition for
//!    powers: `n*n` is `[n, n]`).
//! 3. An atom is an expression that cannot be expanded further: a variable,
//!    or a `//`, `%`, `min`, `max`, `select` (or any other node) whose
//!    children are already canonical.
//! 4. Atoms are totally ordered by [`cmp_expr`] (variables first, by id; then
//!    other nodes by kind and children), so equal polynomials are equal maps
//!    and print as identical `PrimExpr`s.
//!
//! [`Poly::to_expr`] prints in TVM's style: higher-degree monomials first,
//! variables before their coefficient (`n * 2`), subtraction for negative
//! coefficients (`n - 1`, never `n + -1`), and the constant last.

use crate::ir::prim_expr::{PrimExpr, PrimExprKind};
use relax_runtime::DataType;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Monomials larger than this many terms (after multiplying out) are kept
/// as unexpanded products: expanding `(a + b)^20` helps nobody.
const MAX_TERMS: usize = 64;

/// The position of a node kind in the total order on expressions.
fn kind_rank(k: &PrimExprKind) -> u8 {
    use PrimExprKind::*;
    match k {
        Var(_) => 0,
        IntImm(_) => 1,
        FloatImm(_) => 2,
        Add(..) => 3,
        Sub(..) => 4,
        Mul(..) => 5,
        Div(..) => 6,
        Mod(..) => 7,
        Min(..) => 8,
        Max(..) => 9,
        Eq(..) => 10,
        Ne(..) => 11,
        Lt(..) => 12,
        Le(..) => 13,
        Gt(..) => 14,
        Ge(..) => 15,
        And(..) => 16,
        Or(..) => 17,
        Not(_) => 18,
        Select(..) => 19,
        Cast(_) => 20,
        BufferLoad(..) => 21,
        Call(..) => 22,
    }
}

/// A total order on expressions, consistent with structural equality:
/// variables by id, literals by value, other nodes by kind, then children
/// left to right, then dtype.
pub(crate) fn cmp_expr(a: &PrimExpr, b: &PrimExpr) -> Ordering {
    use PrimExprKind::*;
    if a.ptr_eq(b) {
        return Ordering::Equal;
    }
    kind_rank(a.kind())
        .cmp(&kind_rank(b.kind()))
        .then_with(|| match (a.kind(), b.kind()) {
            (Var(x), Var(y)) => x.id().cmp(&y.id()),
            (IntImm(x), IntImm(y)) => x.cmp(y),
            (FloatImm(x), FloatImm(y)) => x.total_cmp(y),
            (BufferLoad(x, ia), BufferLoad(y, ib)) => {
                x.id().cmp(&y.id()).then_with(|| cmp_list(ia, ib))
            }
            (Call(x, aa), Call(y, ab)) => x.cmp(y).then_with(|| cmp_list(aa, ab)),
            _ => {
                let (ca, cb) = (a.children(), b.children());
                for (x, y) in ca.iter().zip(cb.iter()) {
                    let o = cmp_expr(x, y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                ca.len().cmp(&cb.len())
            }
        })
        .then_with(|| a.dtype().cmp(&b.dtype()))
}

/// Lists compared element by element, then by length.
fn cmp_list(a: &[PrimExpr], b: &[PrimExpr]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = cmp_expr(x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// An expression that the canonical form treats as an indivisible factor.
#[derive(Clone, Debug)]
pub(crate) struct Atom(pub PrimExpr);

impl PartialEq for Atom {
    fn eq(&self, other: &Self) -> bool {
        cmp_expr(&self.0, &other.0) == Ordering::Equal
    }
}
impl Eq for Atom {}
impl PartialOrd for Atom {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Atom {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_expr(&self.0, &other.0)
    }
}

/// A product of atoms, sorted, non-empty.
pub(crate) type Mono = Vec<Atom>;

/// `Σ kᵢ·mᵢ + constant`; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct Poly {
    /// Monomial → coefficient; never holds a zero coefficient.
    pub terms: BTreeMap<Mono, i64>,
    /// The constant term.
    pub constant: i64,
}

/// Greatest common divisor of magnitudes (`gcd(0, x) = |x|`).
pub(crate) fn gcd(a: u64, b: u64) -> u64 {
    let (mut a, mut b) = (a, b);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Poly {
    /// The constant `c`.
    pub fn constant(c: i64) -> Poly {
        Poly {
            terms: BTreeMap::new(),
            constant: c,
        }
    }
    /// The single atom `e` with coefficient 1.
    pub fn atom(e: PrimExpr) -> Poly {
        let mut terms = BTreeMap::new();
        terms.insert(vec![Atom(e)], 1);
        Poly { terms, constant: 0 }
    }
    /// The value, if the polynomial is a constant.
    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }
    /// Whether it is the constant 0.
    pub fn is_zero(&self) -> bool {
        self.as_constant() == Some(0)
    }

    fn add_term(&mut self, m: Mono, k: i64) -> Option<()> {
        match self.terms.get_mut(&m) {
            Some(old) => {
                *old = old.checked_add(k)?;
                if *old == 0 {
                    self.terms.remove(&m);
                }
            }
            None if k != 0 => {
                self.terms.insert(m, k);
            }
            None => {}
        }
        Some(())
    }

    /// `self + o`.
    pub fn add(&self, o: &Poly) -> Option<Poly> {
        let mut out = self.clone();
        out.constant = out.constant.checked_add(o.constant)?;
        for (m, k) in &o.terms {
            out.add_term(m.clone(), *k)?;
        }
        Some(out)
    }
    /// `k * self`.
    pub fn scale(&self, k: i64) -> Option<Poly> {
        if k == 0 {
            return Some(Poly::constant(0));
        }
        let mut out = Poly::constant(self.constant.checked_mul(k)?);
        for (m, c) in &self.terms {
            out.terms.insert(m.clone(), c.checked_mul(k)?);
        }
        Some(out)
    }
    /// `self - o`.
    pub fn sub(&self, o: &Poly) -> Option<Poly> {
        self.add(&o.scale(-1)?)
    }
    /// `self * o`, multiplied out; `None` on overflow or when the result
    /// would have more than [`MAX_TERMS`] monomials.
    pub fn mul(&self, o: &Poly) -> Option<Poly> {
        if let Some(c) = o.as_constant() {
            return self.scale(c);
        }
        if let Some(c) = self.as_constant() {
            return o.scale(c);
        }
        let mut out = Poly::constant(self.constant.checked_mul(o.constant)?);
        let lhs = self.terms_with_constant();
        let rhs = o.terms_with_constant();
        for (ma, ka) in &lhs {
            for (mb, kb) in &rhs {
                let k = ka.checked_mul(*kb)?;
                if ma.is_empty() && mb.is_empty() {
                    continue;
                }
                let mut m: Mono = ma.iter().chain(mb.iter()).cloned().collect();
                m.sort();
                out.add_term(m, k)?;
                if out.terms.len() > MAX_TERMS {
                    return None;
                }
            }
        }
        Some(out)
    }
    /// The terms, with the constant as a term over the empty monomial.
    fn terms_with_constant(&self) -> Vec<(Mono, i64)> {
        let mut v: Vec<(Mono, i64)> = self.terms.iter().map(|(m, k)| (m.clone(), *k)).collect();
        if self.constant != 0 {
            v.push((Vec::new(), self.constant));
        }
        v
    }

    /// Splits `self = c * q + r` where `q` takes the monomials whose
    /// coefficient `c` divides plus `floor(constant / c)`, and `r` keeps the
    /// other monomials and `floormod(constant, c)`. Then `self // c = q + r // c`
    /// and `self % c = r % c` for every value of the atoms. `c != 0`.
    pub fn split_by(&self, c: i64) -> Option<(Poly, Poly)> {
        use crate::ir::prim_expr::{floor_div, floor_mod};
        let mut q = Poly::constant(floor_div(self.constant, c)?);
        let mut r = Poly::constant(floor_mod(self.constant, c)?);
        for (m, k) in &self.terms {
            if k.checked_rem(c)? == 0 {
                q.terms.insert(m.clone(), k.checked_div(c)?);
            } else {
                r.terms.insert(m.clone(), *k);
            }
        }
        Some((q, r))
    }
    /// The gcd of the monomials' coefficients (0 for a constant).
    pub fn terms_gcd(&self) -> u64 {
        self.terms.values().fold(0, |g, k| gcd(g, k.unsigned_abs()))
    }
    /// The monomials divided exactly by `g` (which divides every coefficient),
    /// without the constant.
    pub fn terms_div_exact(&self, g: i64) -> Option<Poly> {
        let mut out = Poly::constant(0);
        for (m, k) in &self.terms {
            out.terms.insert(m.clone(), k.checked_div(g)?);
        }
        Some(out)
    }
    /// The coefficient of the first monomial in print order, if any.
    pub fn leading_coefficient(&self) -> Option<i64> {
        self.print_order().first().map(|(_, k)| *k)
    }
    /// `(positive, negated negative)` parts: `self = pos - neg` where both
    /// have only positive coefficients and a non-negative constant.
    pub fn split_signs(&self) -> (Poly, Poly) {
        let mut pos = Poly::constant(self.constant.max(0));
        // `constant.min(0)` negated cannot overflow unless it is i64::MIN, in
        // which case the term stays on the positive side as a negative constant.
        let mut neg = Poly::constant(0);
        if self.constant < 0 {
            match self.constant.checked_neg() {
                Some(v) => neg.constant = v,
                None => pos.constant = self.constant,
            }
        }
        for (m, k) in &self.terms {
            match k.checked_neg() {
                Some(nk) if *k < 0 => {
                    neg.terms.insert(m.clone(), nk);
                }
                _ => {
                    pos.terms.insert(m.clone(), *k);
                }
            }
        }
        (pos, neg)
    }

    /// Monomials in print order: higher degree first, then by atom order.
    fn print_order(&self) -> Vec<(&Mono, i64)> {
        let mut v: Vec<(&Mono, i64)> = self.terms.iter().map(|(m, k)| (m, *k)).collect();
        // The map is already sorted by atoms; a stable sort keeps that order
        // within one degree.
        v.sort_by_key(|(m, _)| std::cmp::Reverse(m.len()));
        v
    }

    /// The expression, in the print-friendly order of the module docs.
    pub fn to_expr(&self, dtype: DataType) -> PrimExpr {
        let int = |v: i64| PrimExpr::int_of(dtype, v);
        let bin = |a: PrimExpr, b: PrimExpr, f: fn(PrimExpr, PrimExpr) -> PrimExprKind| {
            PrimExpr::new(dtype, f(a, b))
        };
        let mut order = self.print_order();
        // Lead with a positive term when there is one (`m - n`, not `0 - n + m`).
        if order.first().is_some_and(|(_, k)| *k < 0) {
            if let Some(i) = order.iter().position(|(_, k)| *k > 0) {
                let t = order.remove(i);
                order.insert(0, t);
            }
        }
        let mut acc: Option<PrimExpr> = None;
        let mut constant_used = false;
        if order.first().is_some_and(|(_, k)| *k < 0) && self.constant > 0 {
            // No positive monomial: `3 - n` reads better than `0 - n + 3`.
            acc = Some(int(self.constant));
            constant_used = true;
        }
        for (m, k) in order {
            let mut body = m[0].0.clone();
            for a in &m[1..] {
                body = bin(body, a.0.clone(), PrimExprKind::Mul);
            }
            let (term, negative) = match k {
                1 => (body, false),
                -1 => (body, true),
                i64::MIN => (bin(body, int(k), PrimExprKind::Mul), false),
                _ => (bin(body, int(k.abs()), PrimExprKind::Mul), k < 0),
            };
            acc = Some(match (acc, negative) {
                (None, false) => term,
                (None, true) => bin(int(0), term, PrimExprKind::Sub),
                (Some(a), false) => bin(a, term, PrimExprKind::Add),
                (Some(a), true) => bin(a, term, PrimExprKind::Sub),
            });
        }
        let c = self.constant;
        match acc {
            None => int(c),
            Some(a) if constant_used || c == 0 => a,
            Some(a) if c > 0 || c == i64::MIN => bin(a, int(c), PrimExprKind::Add),
            Some(a) => bin(a, int(-c), PrimExprKind::Sub),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::prim_expr::TirVar;

    #[test]
    fn atoms_order_vars_by_id_before_other_nodes() {
        let n = TirVar::new("n");
        let m = TirVar::new("m");
        let (en, em) = (n.to_expr(), m.to_expr());
        assert_eq!(cmp_expr(&en, &em), Ordering::Less);
        assert_eq!(cmp_expr(&em, &en.clone().floordiv(2)), Ordering::Less);
        assert_eq!(cmp_expr(&en, &n.to_expr()), Ordering::Equal);
    }

    #[test]
    fn polynomial_arithmetic_and_printing() {
        let n = TirVar::new("n");
        let m = TirVar::new("m");
        let pn = Poly::atom(n.to_expr());
        let pm = Poly::atom(m.to_expr());
        let one = Poly::constant(1);
        // (n + 1) * (m - 1) = n*m - n + m - 1
        let p = pn.add(&one).unwrap().mul(&pm.sub(&one).unwrap()).unwrap();
        assert_eq!(p.to_expr(DataType::i64()).to_string(), "n * m - n + m - 1");
        let q = Poly::constant(3).sub(&pn).unwrap();
        assert_eq!(q.to_expr(DataType::i64()).to_string(), "3 - n");
        let r = pn.scale(-2).unwrap().sub(&one).unwrap();
        assert_eq!(r.to_expr(DataType::i64()).to_string(), "0 - n * 2 - 1");
        assert_eq!(
            Poly::constant(i64::MAX).add(&one),
            None,
            "overflow is reported, not wrapped"
        );
    }
}
