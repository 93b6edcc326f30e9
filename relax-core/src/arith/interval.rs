//! Integer intervals with infinite ends: the domain of bound analysis.
//!
//! 1. An [`Interval`] is `[lo, hi]` over the mathematical integers, stored in
//!    `i128`. `i128::MIN` stands for −∞ (only as `lo`) and `i128::MAX` for +∞
//!    (only as `hi`).
//! 2. Finite ends stay within ±2¹⁰⁰, far beyond any `i64` product of a few
//!    factors but far from `i128` overflow. An end whose exact value would
//!    leave that range is widened to the infinity on its side, which is always
//!    sound: a lower bound may always be lowered and an upper bound raised.
//! 3. Every operation over-approximates: the result contains every value the
//!    operation can produce from values inside its operands.

/// −∞ as a lower end.
pub(crate) const NEG_INF: i128 = i128::MIN;
/// +∞ as an upper end.
pub(crate) const POS_INF: i128 = i128::MAX;
/// The largest magnitude a finite end may have (see the module docs).
const LIMIT: i128 = 1 << 100;

/// A set of integers `[lo, hi]`; see the module docs for the encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Interval {
    /// The lower end, or [`NEG_INF`].
    pub lo: i128,
    /// The upper end, or [`POS_INF`].
    pub hi: i128,
}

/// A finite lower end, or −∞ when the exact value is unknown or too large.
fn lower(v: Option<i128>) -> i128 {
    match v {
        Some(x) if (-LIMIT..=LIMIT).contains(&x) => x,
        _ => NEG_INF,
    }
}

/// A finite upper end, or +∞ when the exact value is unknown or too large.
fn upper(v: Option<i128>) -> i128 {
    match v {
        Some(x) if (-LIMIT..=LIMIT).contains(&x) => x,
        _ => POS_INF,
    }
}

/// Whether `v` is one of the two infinities.
fn is_inf(v: i128) -> bool {
    v == NEG_INF || v == POS_INF
}

/// The product of two ends, where either may be infinite. `0 · ∞ = 0` is
/// right for interval ends: the end value 0 is attained, and the product of
/// it with anything is 0. `None` when a finite product is too large.
fn mul_end(a: i128, b: i128) -> Option<i128> {
    if a == 0 || b == 0 {
        return Some(0);
    }
    if is_inf(a) || is_inf(b) {
        return Some(if (a < 0) == (b < 0) { POS_INF } else { NEG_INF });
    }
    a.checked_mul(b).filter(|p| (-LIMIT..=LIMIT).contains(p))
}

/// `floor(v / c)` for an end `v` (possibly infinite) and a constant `c != 0`.
fn div_end(v: i128, c: i128) -> i128 {
    if is_inf(v) {
        return if (v < 0) == (c < 0) { POS_INF } else { NEG_INF };
    }
    floor_div_i128(v, c)
}

/// `floor(a / b)` for finite `a` and `b != 0` (the operands never overflow:
/// ends are bounded by 2¹⁰⁰ and divisors come from `i64`).
pub(crate) fn floor_div_i128(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

impl Interval {
    /// All integers.
    pub fn everything() -> Self {
        Interval {
            lo: NEG_INF,
            hi: POS_INF,
        }
    }
    /// `{v}`.
    pub fn point(v: i64) -> Self {
        Interval {
            lo: v as i128,
            hi: v as i128,
        }
    }
    /// `[lo, hi]` from optional `i64` ends (`None` is infinite).
    pub fn from_ends(lo: Option<i64>, hi: Option<i64>) -> Self {
        Interval {
            lo: lo.map_or(NEG_INF, |v| v as i128),
            hi: hi.map_or(POS_INF, |v| v as i128),
        }
    }
    /// `[0, +∞)`.
    pub fn non_negative() -> Self {
        Interval { lo: 0, hi: POS_INF }
    }
    /// `{0, 1}`, the values of a boolean.
    pub fn boolean() -> Self {
        Interval { lo: 0, hi: 1 }
    }
    /// Whether the lower end is finite.
    pub fn has_lo(&self) -> bool {
        self.lo != NEG_INF
    }
    /// Whether the upper end is finite.
    pub fn has_hi(&self) -> bool {
        self.hi != POS_INF
    }
    /// The single value, if the interval has exactly one.
    pub fn as_point(&self) -> Option<i128> {
        (self.lo == self.hi && !is_inf(self.lo)).then_some(self.lo)
    }
    /// Whether no integer is in the interval (contradictory facts).
    pub fn is_empty(&self) -> bool {
        self.lo > self.hi
    }
    /// Every value is `>= v`.
    pub fn all_ge(&self, v: i128) -> bool {
        self.has_lo() && self.lo >= v
    }
    /// Every value is `<= v`.
    pub fn all_le(&self, v: i128) -> bool {
        self.has_hi() && self.hi <= v
    }
    /// Whether 0 is outside the interval.
    pub fn excludes_zero(&self) -> bool {
        self.all_ge(1) || self.all_le(-1)
    }

    /// `{a + b}`.
    pub fn add(self, o: Interval) -> Interval {
        let lo = if self.has_lo() && o.has_lo() {
            lower(self.lo.checked_add(o.lo))
        } else {
            NEG_INF
        };
        let hi = if self.has_hi() && o.has_hi() {
            upper(self.hi.checked_add(o.hi))
        } else {
            POS_INF
        };
        Interval { lo, hi }
    }
    /// `{-a}`.
    pub fn neg(self) -> Interval {
        Interval {
            lo: if self.has_hi() { -self.hi } else { NEG_INF },
            hi: if self.has_lo() { -self.lo } else { POS_INF },
        }
    }
    /// `{a - b}`.
    pub fn sub(self, o: Interval) -> Interval {
        self.add(o.neg())
    }
    /// `{a * b}`: the extremes are among the four products of the ends.
    pub fn mul(self, o: Interval) -> Interval {
        let candidates = [
            mul_end(self.lo, o.lo),
            mul_end(self.lo, o.hi),
            mul_end(self.hi, o.lo),
            mul_end(self.hi, o.hi),
        ];
        // One unknown candidate could be the minimum or the maximum.
        if candidates.iter().any(Option::is_none) {
            return Interval::everything();
        }
        let values = candidates.map(|c| c.unwrap_or_default());
        Interval {
            lo: lower(values.iter().min().copied()),
            hi: upper(values.iter().max().copied()),
        }
    }
    /// `{a^p}` for `p >= 1`. Even powers are non-negative, which plain
    /// repeated multiplication would not see.
    pub fn pow(self, p: usize) -> Interval {
        let base = if p.is_multiple_of(2) {
            self.abs()
        } else {
            self
        };
        let mut acc = base;
        for _ in 1..p {
            acc = acc.mul(base);
        }
        acc
    }
    /// `{|a|}`.
    pub fn abs(self) -> Interval {
        if self.all_ge(0) {
            self
        } else if self.all_le(0) {
            self.neg()
        } else {
            let n = self.neg();
            Interval {
                lo: 0,
                hi: self.hi.max(n.hi),
            }
        }
    }
    /// `{floor(a / c)}` for a constant `c != 0`; floor division by a constant
    /// is monotone (increasing for `c > 0`, decreasing for `c < 0`).
    pub fn div_const(self, c: i64) -> Interval {
        let c = c as i128;
        if c > 0 {
            Interval {
                lo: div_end(self.lo, c),
                hi: div_end(self.hi, c),
            }
        } else {
            Interval {
                lo: div_end(self.hi, c),
                hi: div_end(self.lo, c),
            }
        }
    }
    /// `{floor(a / b)}` for a divisor interval (any divisor may be 0, in which
    /// case the expression has no value and any bound is sound).
    pub fn floordiv(self, d: Interval) -> Interval {
        if let Some(c) = d.as_point() {
            if c != 0 {
                if let Ok(c) = i64::try_from(c) {
                    return self.div_const(c);
                }
            }
        }
        if d.all_ge(1) {
            // For b >= 1, a // b lies between min(a, 0) and max(a, 0), and for
            // a >= 0 it is at most a // min(b).
            let mut out = Interval {
                lo: self.lo.min(0),
                hi: self.hi.max(0),
            };
            if self.all_ge(0) && self.has_hi() {
                out.hi = floor_div_i128(self.hi, d.lo);
            }
            return out;
        }
        Interval::everything()
    }
    /// `{a mod b}` (floor modulo, the sign of `b`).
    pub fn floormod(self, d: Interval) -> Interval {
        if d.all_ge(1) {
            let mut out = Interval {
                lo: 0,
                hi: if d.has_hi() { d.hi - 1 } else { POS_INF },
            };
            if let Some(c) = d.as_point() {
                // Within one block [k*c, k*c + c) the modulo is a shift.
                if self.has_lo() && self.has_hi() {
                    let k = floor_div_i128(self.lo, c);
                    if k == floor_div_i128(self.hi, c) {
                        return Interval {
                            lo: self.lo - k * c,
                            hi: self.hi - k * c,
                        };
                    }
                }
            }
            if self.all_ge(0) {
                out.hi = out.hi.min(self.hi);
            }
            return out;
        }
        if d.all_le(-1) {
            return Interval {
                lo: if d.has_lo() { d.lo + 1 } else { NEG_INF },
                hi: 0,
            };
        }
        Interval::everything()
    }
    /// `{min(a, b)}`.
    pub fn min(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo.min(o.lo),
            hi: self.hi.min(o.hi),
        }
    }
    /// `{max(a, b)}`.
    pub fn max(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo.max(o.lo),
            hi: self.hi.max(o.hi),
        }
    }
    /// The smallest interval holding both.
    pub fn union(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }
    /// The values in both.
    pub fn intersect(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo.max(o.lo),
            hi: self.hi.min(o.hi),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(lo: i128, hi: i128) -> Interval {
        Interval { lo, hi }
    }

    #[test]
    fn multiplication_takes_the_extreme_products() {
        assert_eq!(iv(-2, 3).mul(iv(4, 5)), iv(-10, 15));
        assert_eq!(iv(0, 5).mul(iv(3, POS_INF)), iv(0, POS_INF));
        assert_eq!(iv(NEG_INF, 0).mul(iv(0, POS_INF)), iv(NEG_INF, 0));
        assert_eq!(iv(-3, 2).pow(2), iv(0, 9));
        assert_eq!(Interval::everything().pow(2), iv(0, POS_INF));
    }

    #[test]
    fn huge_ends_widen_instead_of_overflowing() {
        let big = iv(1 << 90, 1 << 90);
        assert_eq!(big.mul(big), Interval::everything());
        assert_eq!(big.add(big), iv(1 << 91, 1 << 91));
        let near = iv(LIMIT, LIMIT);
        assert_eq!(near.add(near), Interval::everything());
    }

    #[test]
    fn division_and_modulo() {
        assert_eq!(iv(-7, 9).div_const(2), iv(-4, 4));
        assert_eq!(iv(-7, 9).div_const(-2), iv(-5, 3));
        assert_eq!(iv(NEG_INF, 9).div_const(-2), iv(-5, POS_INF));
        assert_eq!(iv(0, 100).floormod(iv(4, 4)), iv(0, 3));
        assert_eq!(iv(5, 6).floormod(iv(4, 4)), iv(1, 2));
        assert_eq!(iv(0, 2).floormod(iv(4, 10)), iv(0, 2));
        assert_eq!(iv(-5, 5).floormod(iv(-3, -3)), iv(-2, 0));
        assert_eq!(iv(0, 10).floordiv(iv(2, POS_INF)), iv(0, 5));
        assert_eq!(iv(-4, 10).floordiv(iv(0, 3)), Interval::everything());
    }
}
