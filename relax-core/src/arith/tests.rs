//! Tests of the simplifier and the prover: one group per rule of the module
//! docs, the decisions shape checking needs, the claims the prover must not
//! make, and randomized checks against `PrimExpr::eval`.

use super::{Analyzer, ConstIntBound, Proof};
use crate::ir::prim_expr::{PrimExpr, TirVar};
use relax_runtime::DataType;
use std::collections::HashMap;

fn v(name: &str) -> (TirVar, PrimExpr) {
    let t = TirVar::new(name);
    let e = t.to_expr();
    (t, e)
}

fn simp(a: &Analyzer, e: &PrimExpr) -> String {
    a.simplify(e).to_string()
}

fn non_negative(vars: &[&TirVar]) -> Analyzer {
    let mut a = Analyzer::new();
    for v in vars {
        a.mark_non_negative(v);
    }
    a
}

// ---------------------------------------------------------------- canonical

#[test]
fn sums_and_products_are_multiplied_out_and_collected() {
    let a = Analyzer::new();
    let (_, n) = v("n");
    let (_, m) = v("m");
    assert_eq!(simp(&a, &((&n + 1) * 2)), "n * 2 + 2");
    assert_eq!(simp(&a, &(PrimExpr::int(2) * &n + 2)), "n * 2 + 2");
    assert_eq!(simp(&a, &(&n - &n)), "0");
    assert_eq!(simp(&a, &(&n + 1 - 1)), "n");
    assert_eq!(simp(&a, &(&n * (&m + 1) - &n * &m)), "n");
    assert_eq!(simp(&a, &((&n + &m) * (&n - &m))), "n * n - m * m");
    assert_eq!(simp(&a, &(PrimExpr::int(3) * 4 + 5)), "17");
    let (zero, one) = (PrimExpr::int(0), PrimExpr::int(1));
    assert_eq!(simp(&a, &(&n * zero + &m * one)), "m");
}

#[test]
fn equal_polynomials_give_identical_expressions() {
    let a = Analyzer::new();
    let (_, n) = v("n");
    let (_, m) = v("m");
    let (_, k) = v("k");
    assert_eq!(a.simplify(&(&n * &m)), a.simplify(&(&m * &n)));
    assert_eq!(a.simplify(&((&n + &m) + &k)), a.simplify(&(&k + (&m + &n))));
    assert_eq!(
        a.simplify(&(&n * (&m + &k))),
        a.simplify(&(&k * &n + &m * &n))
    );
    assert_eq!(
        a.simplify(&n.clone().min(&m)),
        a.simplify(&m.clone().min(&n))
    );
}

#[test]
fn print_order_follows_tvm() {
    let a = Analyzer::new();
    // Creation order fixes the variable order: n before m.
    let (_, n) = v("n");
    let (_, m) = v("m");
    assert_eq!(
        simp(&a, &(PrimExpr::int(1) + &m * 3 + &n * &n)),
        "n * n + m * 3 + 1"
    );
    assert_eq!(simp(&a, &(&n - 1)), "n - 1");
    assert_eq!(simp(&a, &(PrimExpr::int(1) - &n)), "1 - n");
    assert_eq!(simp(&a, &(&m - &n)), "m - n");
    assert_eq!(simp(&a, &(&n * -2 - 1)), "0 - n * 2 - 1");
    assert_eq!(simp(&a, &(&n * &m * 2 + &n)), "n * m * 2 + n");
}

#[test]
fn the_dtype_is_kept() {
    let a = Analyzer::new();
    let n = TirVar::with_dtype("n", DataType::i32());
    let e =
        (n.to_expr() + PrimExpr::int_of(DataType::i32(), 1)) * PrimExpr::int_of(DataType::i32(), 2);
    let s = a.simplify(&e);
    assert_eq!(s.dtype(), DataType::i32());
    assert_eq!(s.to_string(), "n * T.int32(2) + T.int32(2)");
    assert_eq!(a.simplify(&(&n - &n)).dtype(), DataType::i32());
}

#[test]
fn overflowing_canonical_forms_stay_unexpanded() {
    let a = Analyzer::new();
    let (_, n) = v("n");
    let e = &n + i64::MAX + 1;
    let s = a.simplify(&e);
    let env = HashMap::from([(n.as_var().unwrap().clone(), -5)]);
    assert_eq!(s.eval(&env), e.eval(&env));
    let big = (&n * i64::MAX) * 2;
    assert_eq!(simp(&a, &big), "n * 9223372036854775807 * 2");
    assert_eq!(a.compare_equal(&big, &big), Proof::Proven);
}

// ------------------------------------------------------------ div and mod

#[test]
fn division_by_a_constant_splits_off_the_multiple() {
    let a = Analyzer::new();
    let (_, n) = v("n");
    let (mv, m) = v("m");
    assert_eq!(simp(&a, &(&n * 4).floordiv(4)), "n");
    assert_eq!(simp(&a, &(&n * 4 + 8).floordiv(4)), "n + 2");
    assert_eq!(simp(&a, &(&n * 4 + 3).floordiv(4)), "n");
    assert_eq!(simp(&a, &(&n * 4 + &m).floordiv(4)), "n + m // 4");
    assert_eq!(simp(&a, &n.clone().floordiv(1)), "n");
    assert_eq!(simp(&a, &(&n + 5).floordiv(4)), "(n + 1) // 4 + 1");
    assert_eq!(simp(&a, &((&n - 1).floordiv(2) + 1)), "(n + 1) // 2");
    assert_eq!(simp(&a, &(&n * 6 + 3).floordiv(4)), "(n * 3 + 1) // 2");
    assert_eq!(simp(&a, &(&n * 4 + 2).floordiv(-2)), "0 - n * 2 - 1");
    assert_eq!(simp(&a, &PrimExpr::int(-7).floordiv(2)), "-4");
    // (4n + m) // 4 is n exactly when 0 <= m < 4.
    let mut small = Analyzer::new();
    small.bind_range(&mv, Some(0), Some(3));
    assert_eq!(simp(&small, &(&n * 4 + &m).floordiv(4)), "n");
}

#[test]
fn a_quotient_and_its_remainder_recombine() {
    // x = c * (x // c) + x % c for floor division, whatever x.
    let a = Analyzer::new();
    let (_, n) = v("n");
    let (_, m) = v("m");
    let j = &n + &m * 3;
    assert_eq!(
        simp(&a, &(j.clone().floordiv(7) * 7 + j.clone().floormod(7))),
        "n + m * 3"
    );
    assert_eq!(
        simp(
            &a,
            &(j.clone().floordiv(7) * 14 + j.clone().floormod(7) * 2 + 1)
        ),
        "n * 2 + m * 6 + 1"
    );
    // A different divisor, or coefficients that do not match, stay.
    assert_eq!(
        simp(&a, &(n.clone().floordiv(7) * 7 + n.clone().floormod(5))),
        "n // 7 * 7 + n % 5"
    );
    assert_eq!(
        simp(&a, &(n.clone().floordiv(7) * 6 + n.clone().floormod(7))),
        "n // 7 * 6 + n % 7"
    );
    // Split in three, as a convolution's window index (ci, kh, kw) is:
    // the two low parts join first, then the whole.
    let k = &n + &m * 2;
    let parts =
        k.clone().floordiv(9) * 9 + k.clone().floordiv(3).floormod(3) * 3 + k.clone().floormod(3);
    assert_eq!(simp(&a, &parts), "n + m * 2");
    let low = k.clone().floordiv(3).floormod(3) * 3 + k.clone().floormod(3);
    assert_eq!(simp(&a, &low), "(n + m * 2) % 9");
    // The middle part's coefficient must be the low part's divisor.
    let off = k.clone().floordiv(3).floormod(3) * 2 + k.floormod(3);
    assert_eq!(simp(&a, &off), "(n + m * 2) % 3 + (n + m * 2) // 3 % 3 * 2");
}

#[test]
fn modulo_by_a_constant_keeps_the_remainder() {
    let a = Analyzer::new();
    let (nv, n) = v("n");
    assert_eq!(simp(&a, &(&n * 4).floormod(4)), "0");
    assert_eq!(simp(&a, &n.clone().floormod(1)), "0");
    assert_eq!(simp(&a, &(&n + 7).floormod(4)), "(n + 3) % 4");
    assert_eq!(simp(&a, &(&n * 4 + 7).floormod(4)), "3");
    assert_eq!(simp(&a, &(&n * 4 + 3).floormod(4)), "3");
    assert_eq!(simp(&a, &(&n * 6).floormod(4)), "n * 3 % 2 * 2");
    assert_eq!(simp(&a, &PrimExpr::int(-7).floormod(2)), "1");
    let nn = non_negative(&[&nv]);
    assert_eq!(simp(&nn, &n.clone().floormod(4).floormod(4)), "n % 4");
    assert_eq!(simp(&nn, &n.clone().floormod(4).floordiv(4)), "0");
}

#[test]
fn division_by_zero_is_never_folded() {
    let a = Analyzer::new();
    let (_, n) = v("n");
    assert_eq!(simp(&a, &n.clone().floordiv(0)), "n // 0");
    assert_eq!(simp(&a, &n.clone().floormod(0)), "n % 0");
    assert_eq!(simp(&a, &PrimExpr::int(5).floordiv(0)), "5 // 0");
    assert_eq!(simp(&a, &(&n * 4).floordiv(&n - &n)), "n * 4 // 0");
    // n // n is 1 only where n != 0.
    assert_eq!(simp(&a, &n.clone().floordiv(&n)), "n // n");
    assert_eq!(simp(&a, &PrimExpr::int(0).floordiv(&n)), "0 // n");
}

#[test]
fn division_by_an_expression_uses_bounds() {
    let (nv, n) = v("n");
    let (_, m) = v("m");
    let mut pos = Analyzer::new();
    pos.bind_range(&nv, Some(1), None);
    assert_eq!(simp(&pos, &n.clone().floordiv(&n)), "1");
    assert_eq!(simp(&pos, &n.clone().floormod(&n)), "0");
    let nn = non_negative(&[&nv]);
    assert_eq!(simp(&nn, &n.clone().floordiv(&n + 1)), "0");
    assert_eq!(simp(&nn, &n.clone().floormod(&n + 1)), "n");
    assert_eq!(simp(&nn, &n.clone().floordiv(&m)), "n // m");
}

// ---------------------------------------------------------------- min/max

#[test]
fn min_and_max_fold_when_the_difference_has_a_sign() {
    let a = Analyzer::new();
    let (nv, n) = v("n");
    let (_, m) = v("m");
    assert_eq!(simp(&a, &n.clone().min(&n + 1)), "n");
    assert_eq!(simp(&a, &n.clone().max(&n + 1)), "n + 1");
    assert_eq!(simp(&a, &(&n - 2).max(&n - 3)), "n - 2");
    assert_eq!(simp(&a, &n.clone().min(&n)), "n");
    assert_eq!(simp(&a, &PrimExpr::int(3).min(5)), "3");
    assert_eq!(simp(&a, &PrimExpr::int(3).max(5)), "5");
    assert_eq!(simp(&a, &n.clone().max(0)), "T.max(n, 0)");
    assert_eq!(simp(&a, &m.clone().min(&n)), "T.min(n, m)");
    let nn = non_negative(&[&nv]);
    assert_eq!(simp(&nn, &n.clone().max(0)), "n");
    assert_eq!(simp(&nn, &n.clone().min(-1)), "-1");
    assert_eq!(simp(&nn, &(&n * &n).max(&n - &n)), "n * n");
}

// ------------------------------------------------------ comparisons, logic

#[test]
fn comparisons_fold_or_cancel() {
    let a = Analyzer::new();
    let (nv, n) = v("n");
    let (_, m) = v("m");
    assert_eq!(simp(&a, &n.clone().lt(&n + 1)), "True");
    assert_eq!(simp(&a, &(&n + 1).le(&n)), "False");
    assert_eq!(simp(&a, &(&n * &n).ge(0)), "True");
    assert_eq!(simp(&a, &(&n * 2).eq_(1)), "False");
    assert_eq!(simp(&a, &(&n * 2).ne_(&m * 4 + 3)), "True");
    assert_eq!(simp(&a, &(&n + 1).lt(&m + 1)), "n < m");
    assert_eq!(simp(&a, &m.clone().eq_(&n)), simp(&a, &n.clone().eq_(&m)));
    assert_eq!(simp(&a, &(&n + 1).le(&m)), "n + 1 <= m");
    assert_eq!(simp(&a, &n.clone().ge(0)), "n >= 0");
    assert_eq!(simp(&a, &(&n + 4).le(0)), "n <= -4");
    assert_eq!(simp(&a, &(PrimExpr::int(3) - &n).gt(1)), "2 > n");
    assert_eq!(simp(&a, &(&n * 2 - 1).eq_(&m)), "n * 2 == m + 1");
    let nn = non_negative(&[&nv]);
    assert_eq!(simp(&nn, &n.clone().ge(0)), "True");
    assert_eq!(simp(&nn, &n.clone().lt(0)), "False");
    assert_eq!(simp(&nn, &(&n + 1).gt(0)), "True");
    assert_eq!(simp(&nn, &n.clone().floormod(4).lt(4)), "True");
}

#[test]
fn logic_folds_constant_operands() {
    let a = Analyzer::new();
    let (_, n) = v("n");
    let (_, m) = v("m");
    let t = PrimExpr::bool(true);
    let f = PrimExpr::bool(false);
    let c = n.clone().lt(&m);
    assert_eq!(simp(&a, &c.clone().and(t.clone())), "n < m");
    assert_eq!(simp(&a, &c.clone().and(f.clone())), "False");
    assert_eq!(simp(&a, &c.clone().or(t.clone())), "True");
    assert_eq!(simp(&a, &c.clone().or(f.clone())), "n < m");
    assert_eq!(simp(&a, &c.clone().and(c.clone())), "n < m");
    assert_eq!(simp(&a, &!c.clone()), "n >= m");
    assert_eq!(simp(&a, &!!c.clone()), "n < m");
    assert_eq!(simp(&a, &!t.clone()), "False");
    assert_eq!(
        simp(&a, &n.clone().lt(&n + 1).and(m.clone().le(&m))),
        "True"
    );
    assert_eq!(simp(&a, &PrimExpr::select(t, n.clone(), m.clone())), "n");
    assert_eq!(
        simp(
            &a,
            &PrimExpr::select(c.clone(), &n + 1, PrimExpr::int(1) + &n)
        ),
        "n + 1"
    );
    assert_eq!(
        simp(&a, &PrimExpr::select(c, n.clone() * 2, m.clone())),
        "T.Select(n < m, n * 2, m)"
    );
}

// ---------------------------------------------------------------- bounds

#[test]
fn constant_bounds() {
    let (nv, n) = v("n");
    let (mv, m) = v("m");
    let a = Analyzer::new();
    let none = ConstIntBound {
        min: None,
        max: None,
    };
    assert_eq!(a.const_int_bound(&n), none);
    assert_eq!(
        a.const_int_bound(&n.clone().floormod(4)),
        ConstIntBound {
            min: Some(0),
            max: Some(3)
        }
    );
    assert_eq!(a.const_int_bound(&(&n * &n)).min, Some(0));
    let nn = non_negative(&[&nv, &mv]);
    assert_eq!(
        nn.const_int_bound(&(&n * 2 + 1)),
        ConstIntBound {
            min: Some(1),
            max: None
        }
    );
    assert_eq!(
        nn.const_int_bound(&n.clone().min(5)),
        ConstIntBound {
            min: Some(0),
            max: Some(5)
        }
    );
    assert!(nn.can_prove_non_negative(&(&n * &m + &n)));
    assert!(!nn.can_prove_non_negative(&(&n - &m)));
    // Far beyond i64: no panic, no wrong bound.
    let mut huge = Analyzer::new();
    huge.bind_range(&nv, Some(1 << 62), None);
    let cube = &n * &n * &n * &n;
    let b = huge.const_int_bound(&cube);
    assert!(b.min.is_none_or(|lo| lo > 0) && b.max.is_none());
}

#[test]
fn ranges_and_bindings() {
    let (nv, n) = v("n");
    let (mv, m) = v("m");
    let mut a = Analyzer::new();
    a.bind_range(&nv, Some(2), Some(10));
    a.bind_range(&nv, Some(0), Some(5));
    assert_eq!(
        a.const_int_bound(&n),
        ConstIntBound {
            min: Some(2),
            max: Some(5)
        }
    );
    // A contradicting range is ignored rather than proving everything.
    a.bind_range(&nv, Some(7), None);
    assert_eq!(a.prove(&n.clone().eq_(&n + 1)), Proof::Disproven);
    assert_eq!(a.const_int_bound(&n).max, Some(5));
    a.bind(&mv, &(&n * 2));
    assert_eq!(simp(&a, &(&m - &n)), "n");
    assert!(a.can_prove(&m.clone().ge(4)));
    let k = TirVar::new("k");
    a.bind(&nv, &PrimExpr::int(3));
    a.bind(&k, &(&m + 1));
    assert_eq!(simp(&a, &k.to_expr()), "7");
    let (jv, j) = v("j");
    a.bind(&jv, &(&j + 1));
    assert_eq!(a.prove(&j.clone().eq_(&j + 1)), Proof::Disproven);
}

// ------------------------------------------------------ required decisions

#[test]
fn decisions_shape_checking_needs() {
    let (nv, n) = v("n");
    let (mv, m) = v("m");
    for a in [Analyzer::new(), non_negative(&[&nv, &mv])] {
        assert_eq!(a.compare_equal(&(&n * &m), &(&m * &n)), Proof::Proven);
        assert_eq!(
            a.compare_equal(&((&n + 1) * 2), &(PrimExpr::int(2) * &n + 2)),
            Proof::Proven
        );
        assert_eq!(a.compare_equal(&(&n * 4).floordiv(4), &n), Proof::Proven);
        assert_eq!(
            a.compare_equal(&(&n - &n), &PrimExpr::int(0)),
            Proof::Proven
        );
        assert_eq!(a.compare_equal(&n.clone().min(&n + 1), &n), Proof::Proven);
        assert_eq!(a.compare_equal(&(&n + 1), &n), Proof::Disproven);
        assert!(a.can_prove_equal(&(&n * &m), &(&m * &n)));
        // %/// of one operand cancel in the prover's second attempt.
        assert_eq!(
            a.compare_equal(&(n.clone().floordiv(2) * 2 + n.clone().floormod(2)), &n),
            Proof::Proven
        );
    }
    let nn = non_negative(&[&nv]);
    assert_eq!(
        nn.compare_equal(&(&n + 1), &PrimExpr::int(0)),
        Proof::Disproven
    );
    assert_eq!(nn.prove(&(&n * 3 + 7).floordiv(1).gt(6)), Proof::Proven);
    assert_eq!(
        Analyzer::new().compare_equal(&PrimExpr::int(784), &PrimExpr::int(128)),
        Proof::Disproven
    );
}

#[test]
fn claims_the_prover_must_not_make() {
    let (nv, n) = v("n");
    let (mv, m) = v("m");
    for a in [Analyzer::new(), non_negative(&[&nv, &mv])] {
        let unknown = [
            (n.clone(), m.clone()),
            (n.clone().floordiv(2) * 2, n.clone()),
            (n.clone().floormod(2), PrimExpr::int(0)),
            (&n * &n, n.clone()),
            (n.clone().min(&m), n.clone()),
            (n.clone().floordiv(&m) * &m, n.clone()),
            (&n + &m, PrimExpr::int(7)),
            (n.clone().floordiv(4), n.clone().floordiv(2)),
        ];
        for (x, y) in unknown {
            assert_eq!(a.compare_equal(&x, &y), Proof::Unknown, "{x} == {y}");
        }
        assert_eq!(a.prove(&n.clone().lt(&m)), Proof::Unknown);
        assert_eq!(a.prove(&n.clone().floordiv(&n).eq_(1)), Proof::Unknown);
        assert_eq!(a.prove(&n.clone()), Proof::Unknown);
    }
    let a = Analyzer::new();
    assert_eq!(a.prove(&n.clone().ge(0)), Proof::Unknown);
    assert_eq!(a.compare_equal(&n.clone().max(0), &n), Proof::Unknown);
    // Floats are not algebra: x == x fails for NaN.
    let x = TirVar::with_dtype("x", DataType::f32());
    assert_eq!(a.compare_equal(&x.to_expr(), &x.to_expr()), Proof::Unknown);
}

// ------------------------------------------------------------- randomized

/// splitmix64: a tiny, fixed-seed generator so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

struct Gen<'a> {
    rng: &'a mut Rng,
    vars: &'a [TirVar],
}

impl Gen<'_> {
    fn leaf(&mut self) -> PrimExpr {
        if self.rng.below(5) < 3 {
            let i = self.rng.below(self.vars.len() as u64) as usize;
            self.vars[i].to_expr()
        } else {
            PrimExpr::int(self.rng.range(-5, 5))
        }
    }
    fn divisor(&mut self) -> i64 {
        let d = self.rng.range(1, 4);
        if self.rng.below(4) == 0 {
            -d
        } else {
            d
        }
    }
    fn int(&mut self, depth: u32) -> PrimExpr {
        if depth == 0 || self.rng.below(5) == 0 {
            return self.leaf();
        }
        let d = depth - 1;
        match self.rng.below(11) {
            0 => self.int(d) + self.int(d),
            1 => self.int(d) - self.int(d),
            2 => self.int(d) * self.int(d),
            3 => {
                let c = self.divisor();
                self.int(d).floordiv(c)
            }
            4 => {
                let c = self.divisor();
                self.int(d).floormod(c)
            }
            5 => self.int(d).floordiv(self.int(d)),
            6 => self.int(d).floormod(self.int(d)),
            7 => self.int(d).min(self.int(d)),
            8 => self.int(d).max(self.int(d)),
            9 => {
                let c = self.boolean(d);
                PrimExpr::select(c, self.int(d), self.int(d))
            }
            _ => self.int(d) * PrimExpr::int(self.rng.range(-3, 3)),
        }
    }
    fn boolean(&mut self, depth: u32) -> PrimExpr {
        let d = depth.saturating_sub(1);
        match self.rng.below(9) {
            0 => self.int(d).eq_(self.int(d)),
            1 => self.int(d).ne_(self.int(d)),
            2 => self.int(d).lt(self.int(d)),
            3 => self.int(d).le(self.int(d)),
            4 => self.int(d).gt(self.int(d)),
            5 => self.int(d).ge(self.int(d)),
            6 if depth > 0 => self.boolean(d).and(self.boolean(d)),
            7 if depth > 0 => self.boolean(d).or(self.boolean(d)),
            8 if depth > 0 => !self.boolean(d),
            _ => self.int(d).le(self.int(d)),
        }
    }
}

/// The analyzers under test with the assignments that respect their facts:
/// `x` and `y` non-negative in the second, `x` in `[1, 6]` in the third.
fn setups(vars: &[TirVar]) -> Vec<(Analyzer, Vec<HashMap<TirVar, i64>>)> {
    let mut rng = Rng(7);
    let mut out = Vec::new();
    for case in 0..3 {
        let mut a = Analyzer::new();
        let mut lo = [-6i64; 3];
        let hi = [6i64; 3];
        if case == 1 {
            a.mark_non_negative(&vars[0]);
            a.mark_non_negative(&vars[1]);
            lo[0] = 0;
            lo[1] = 0;
        }
        if case == 2 {
            a.bind_range(&vars[0], Some(1), Some(6));
            lo[0] = 1;
        }
        let envs = (0..24)
            .map(|_| {
                (0..3)
                    .map(|i| (vars[i].clone(), rng.range(lo[i], hi[i])))
                    .collect()
            })
            .collect();
        out.push((a, envs));
    }
    out
}

#[test]
fn random_expressions_keep_their_values() {
    let vars = [TirVar::new("x"), TirVar::new("y"), TirVar::new("z")];
    let setups = setups(&vars);
    let mut rng = Rng(0x5EED);
    let mut checked = 0;
    for i in 0..3000 {
        let mut g = Gen {
            rng: &mut rng,
            vars: &vars,
        };
        let e = if i % 3 == 0 { g.boolean(3) } else { g.int(4) };
        for (a, envs) in &setups {
            let s = a.simplify(&e);
            for env in envs {
                let Ok(want) = e.eval(env) else { continue };
                assert_eq!(s.eval(env), Ok(want), "{e}  ~>  {s}  at {env:?}");
                checked += 1;
            }
            // The canonical form is a fixed point.
            assert_eq!(a.simplify(&s), s, "{e}  ~>  {s}");
            match a.prove(&e) {
                Proof::Proven => assert!(
                    envs.iter().all(|env| !matches!(e.eval(env), Ok(0))),
                    "claimed {e} always holds"
                ),
                Proof::Disproven => assert!(
                    envs.iter().all(|env| matches!(e.eval(env), Ok(0) | Err(_))),
                    "claimed {e} never holds"
                ),
                Proof::Unknown => {}
            }
        }
    }
    assert!(checked > 50_000, "too few evaluations succeeded: {checked}");
}

#[test]
fn random_pairs_are_compared_soundly() {
    let vars = [TirVar::new("x"), TirVar::new("y"), TirVar::new("z")];
    let setups = setups(&vars);
    let mut rng = Rng(0xC0FFEE);
    let mut counts = HashMap::new();
    for i in 0..3000 {
        let mut g = Gen {
            rng: &mut rng,
            vars: &vars,
        };
        let a_expr = g.int(3);
        let b_expr = match i % 4 {
            // The same value written differently: must not be Disproven.
            0 => {
                let t = g.int(2);
                (&a_expr + &t) - t
            }
            1 => &a_expr + g.rng.range(-2, 2),
            2 => &a_expr * 2 - &a_expr,
            _ => g.int(3),
        };
        for (an, envs) in &setups {
            let proof = an.compare_equal(&a_expr, &b_expr);
            *counts.entry(proof).or_insert(0) += 1;
            for env in envs {
                let (Ok(x), Ok(y)) = (a_expr.eval(env), b_expr.eval(env)) else {
                    continue;
                };
                match proof {
                    Proof::Proven => assert_eq!(x, y, "{a_expr} == {b_expr} at {env:?}"),
                    Proof::Disproven => assert_ne!(x, y, "{a_expr} != {b_expr} at {env:?}"),
                    Proof::Unknown => {}
                }
            }
            // Rewritings that only move terms around are always decided.
            if i % 4 == 0 || i % 4 == 2 {
                assert_eq!(proof, Proof::Proven, "{a_expr} vs {b_expr}");
            }
        }
    }
    assert!(counts.get(&Proof::Disproven).copied().unwrap_or(0) > 500);
    assert!(counts.get(&Proof::Unknown).copied().unwrap_or(0) > 500);
}

#[test]
fn random_canonical_forms_do_not_depend_on_the_writing() {
    let vars = [TirVar::new("x"), TirVar::new("y"), TirVar::new("z")];
    let a = Analyzer::new();
    let mut rng = Rng(99);
    for _ in 0..1000 {
        let mut g = Gen {
            rng: &mut rng,
            vars: &vars,
        };
        let (p, q) = (g.int(3), g.int(3));
        assert_eq!(a.simplify(&(&p + &q)), a.simplify(&(&q + &p)), "{p} + {q}");
        assert_eq!(a.simplify(&(&p * &q)), a.simplify(&(&q * &p)), "{p} * {q}");
        assert_eq!(a.simplify(&(&p * 2)), a.simplify(&(&p + &p)), "2 * ({p})");
    }
}

/// A loop over a symbolic extent (`for j in range(seq)`) bounds its
/// variable by that extent: the index arithmetic of a reshape and a
/// transpose on `seq` rows folds (`(i * seq + j) // seq == i`), and without
/// the bound it does not.
#[test]
fn symbolic_loop_bounds_fold_division_by_the_extent() {
    let (i, ie) = v("i");
    let (a, ae) = v("a");
    let (b, be) = v("b");
    let (j, je) = v("j");
    let (_, seq) = v("seq");
    let mut an = Analyzer::new();
    an.mark_non_negative(seq.as_var().unwrap());
    let flat = &ie * &seq + &je;
    assert!(an
        .simplify(&flat.clone().floordiv(seq.clone()))
        .to_string()
        .contains("//"));
    an.bind_loop(&i, &PrimExpr::int(8));
    an.bind_loop(&j, &seq);
    assert_eq!(an.simplify(&flat.clone().floordiv(seq.clone())), ie.clone());
    assert_eq!(an.simplify(&flat.clone().floormod(seq.clone())), je.clone());
    // BERT's head split: (((i * 4 + a) * 32 + b) * seq + j), a < 4, b < 32.
    an.bind_loop(&a, &PrimExpr::int(4));
    an.bind_loop(&b, &PrimExpr::int(32));
    let x = ((&ie * 4 + &ae) * 32 + &be) * &seq + &je;
    let rows = an.simplify(&x.clone().floordiv(seq.clone()));
    assert_eq!(
        an.simplify(&rows.clone().floordiv(PrimExpr::int(32)))
            .to_string(),
        "i * 4 + a"
    );
    assert_eq!(an.simplify(&rows.floormod(PrimExpr::int(32))), be.clone());
    // A remainder that can reach the divisor is left alone.
    let over = &ie * &seq + &je + 1;
    assert!(an
        .simplify(&over.floordiv(seq.clone()))
        .to_string()
        .contains("//"));
}
