//! The shape heap of one call frame and the evaluation of [`SymExpr`]s over
//! it (and [`SymExpr::operands`], for the walks of `matching.rs` and
//! `validate.rs`).
//!
//! 1. A heap has `num_slots` integer slots, each unset until a `Bind` stores
//!    a dim into it. Reading an unset slot is an error (the compiler binds
//!    every symbolic var before it is used), never a default of 0.
//! 2. Each bound slot remembers the dim's name and who bound it (the context
//!    of the `MatchCast`), so a later contradiction can say "expected n = 3
//!    (bound by parameter `x` of `main`)".
//! 3. Slots are allocated as they are bound, so a large `num_slots` costs
//!    only the slots actually written.
//! 4. Arithmetic is checked `i64`; `//` and `%` round toward negative
//!    infinity (TIR's `floordiv`/`floormod`). Overflow and division by zero
//!    are errors. `Select` and the logical operators evaluate lazily, like
//!    TIR's `if_then_else`, so a guarded division does not fail.

use crate::executable::SymExpr;
use std::borrow::Cow;

impl SymExpr {
    /// The operands, left to right (none for a literal or a slot), for walks
    /// that treat every operator alike.
    pub(super) fn operands(&self) -> impl Iterator<Item = &SymExpr> {
        use SymExpr as S;
        let ops: [Option<&SymExpr>; 3] = match self {
            S::Const(_) | S::Slot(_) => [None, None, None],
            S::Not(a) => [Some(a), None, None],
            S::Add(a, b)
            | S::Sub(a, b)
            | S::Mul(a, b)
            | S::FloorDiv(a, b)
            | S::FloorMod(a, b)
            | S::Min(a, b)
            | S::Max(a, b)
            | S::Eq(a, b)
            | S::Ne(a, b)
            | S::Lt(a, b)
            | S::Le(a, b)
            | S::Gt(a, b)
            | S::Ge(a, b)
            | S::And(a, b)
            | S::Or(a, b) => [Some(a), Some(b), None],
            S::Select(c, t, f) => [Some(c), Some(t), Some(f)],
        };
        ops.into_iter().flatten()
    }
}

/// Who bound a slot, and to what.
#[derive(Clone, Debug)]
pub(super) struct Binding<'a> {
    /// The bound value.
    pub value: i64,
    /// The symbolic dim's name.
    pub name: &'a str,
    /// The context of the check that bound it.
    pub by: Cow<'a, str>,
}

/// The shape heap of one frame. See the module docs.
#[derive(Debug)]
pub(super) struct ShapeHeap<'a> {
    size: u32,
    slots: Vec<Option<Binding<'a>>>,
}

impl<'a> ShapeHeap<'a> {
    /// An empty heap of `size` slots.
    pub fn new(size: u32) -> Self {
        ShapeHeap {
            size,
            slots: Vec::new(),
        }
    }

    /// The number of slots.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Who bound `slot`, if anyone.
    pub fn binding(&self, slot: u32) -> Option<&Binding<'a>> {
        self.slots.get(slot as usize).and_then(Option::as_ref)
    }

    /// The value in `slot`.
    pub fn get(&self, slot: u32) -> Result<i64, String> {
        if slot >= self.size {
            return Err(format!(
                "shape-heap slot {slot} is out of range (the function has {} slots)",
                self.size
            ));
        }
        self.binding(slot)
            .map(|b| b.value)
            .ok_or_else(|| format!("shape-heap slot {slot} is read before it is bound"))
    }

    /// Stores `value` in `slot`, recording who bound it.
    pub fn bind(
        &mut self,
        slot: u32,
        value: i64,
        name: &'a str,
        by: Cow<'a, str>,
    ) -> Result<(), String> {
        if slot >= self.size {
            return Err(format!(
                "shape-heap slot {slot} is out of range (the function has {} slots)",
                self.size
            ));
        }
        let i = slot as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, None);
        }
        self.slots[i] = Some(Binding { value, name, by });
        Ok(())
    }

    /// The value of `e`.
    pub fn eval(&self, e: &SymExpr) -> Result<i64, String> {
        use SymExpr as S;
        let bin = |a: &SymExpr, b: &SymExpr| -> Result<(i64, i64), String> {
            Ok((self.eval(a)?, self.eval(b)?))
        };
        let overflow = |op: &str, a: i64, b: i64| {
            format!("integer overflow in a shape expression: {a} {op} {b}")
        };
        Ok(match e {
            S::Const(c) => *c,
            S::Slot(s) => self.get(*s)?,
            S::Add(a, b) => {
                let (a, b) = bin(a, b)?;
                a.checked_add(b).ok_or_else(|| overflow("+", a, b))?
            }
            S::Sub(a, b) => {
                let (a, b) = bin(a, b)?;
                a.checked_sub(b).ok_or_else(|| overflow("-", a, b))?
            }
            S::Mul(a, b) => {
                let (a, b) = bin(a, b)?;
                a.checked_mul(b).ok_or_else(|| overflow("*", a, b))?
            }
            S::FloorDiv(a, b) => {
                let (a, b) = bin(a, b)?;
                floor_div(a, b)?
            }
            S::FloorMod(a, b) => {
                let (a, b) = bin(a, b)?;
                floor_mod(a, b)?
            }
            S::Min(a, b) => {
                let (a, b) = bin(a, b)?;
                a.min(b)
            }
            S::Max(a, b) => {
                let (a, b) = bin(a, b)?;
                a.max(b)
            }
            S::Eq(a, b) => {
                let (a, b) = bin(a, b)?;
                (a == b) as i64
            }
            S::Ne(a, b) => {
                let (a, b) = bin(a, b)?;
                (a != b) as i64
            }
            S::Lt(a, b) => {
                let (a, b) = bin(a, b)?;
                (a < b) as i64
            }
            S::Le(a, b) => {
                let (a, b) = bin(a, b)?;
                (a <= b) as i64
            }
            S::Gt(a, b) => {
                let (a, b) = bin(a, b)?;
                (a > b) as i64
            }
            S::Ge(a, b) => {
                let (a, b) = bin(a, b)?;
                (a >= b) as i64
            }
            S::And(a, b) => (self.eval(a)? != 0 && self.eval(b)? != 0) as i64,
            S::Or(a, b) => (self.eval(a)? != 0 || self.eval(b)? != 0) as i64,
            S::Not(a) => (self.eval(a)? == 0) as i64,
            S::Select(c, t, f) => {
                if self.eval(c)? != 0 {
                    self.eval(t)?
                } else {
                    self.eval(f)?
                }
            }
        })
    }
}

/// `a // b`, rounding toward negative infinity.
fn floor_div(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 {
        return Err(format!("division by zero in a shape expression: {a} // 0"));
    }
    let q = a
        .checked_div(b)
        .ok_or_else(|| format!("integer overflow in a shape expression: {a} // {b}"))?;
    // Truncation rounded toward zero; step down when the signs differ and
    // the division was inexact.
    Ok(if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// `a % b` with the sign of `b` (so `a == b * (a // b) + a % b`).
fn floor_mod(a: i64, b: i64) -> Result<i64, String> {
    if b == 0 {
        return Err(format!("division by zero in a shape expression: {a} % 0"));
    }
    // `checked_rem` fails only for MIN % -1, whose floor remainder is 0.
    let r = a.checked_rem(b).unwrap_or(0);
    Ok(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(v: i64) -> Box<SymExpr> {
        Box::new(SymExpr::Const(v))
    }

    #[test]
    fn floor_division_and_modulo_round_down() {
        for (a, b, q, r) in [
            (7, 2, 3, 1),
            (-7, 2, -4, 1),
            (7, -2, -4, -1),
            (-7, -2, 3, -1),
            (6, 3, 2, 0),
            (-6, 3, -2, 0),
        ] {
            assert_eq!(floor_div(a, b), Ok(q), "{a} // {b}");
            assert_eq!(floor_mod(a, b), Ok(r), "{a} % {b}");
        }
        assert!(floor_div(1, 0).is_err());
        assert!(floor_mod(1, 0).is_err());
        assert!(floor_div(i64::MIN, -1).is_err());
        assert_eq!(floor_mod(i64::MIN, -1), Ok(0));
    }

    #[test]
    fn evaluation_is_checked_and_lazy() {
        let mut heap = ShapeHeap::new(2);
        heap.bind(0, 6, "n", "test".into()).unwrap();
        let n = || Box::new(SymExpr::Slot(0));
        let e = SymExpr::Add(Box::new(SymExpr::Mul(n(), c(2))), c(1));
        assert_eq!(heap.eval(&e), Ok(13));
        assert!(heap
            .eval(&SymExpr::Mul(c(i64::MAX), c(2)))
            .unwrap_err()
            .contains("overflow"));
        assert!(heap.eval(&SymExpr::Slot(1)).unwrap_err().contains("before"));
        assert!(heap.eval(&SymExpr::Slot(2)).unwrap_err().contains("range"));
        // The division by zero sits in the branch not taken.
        let guarded = SymExpr::Select(
            Box::new(SymExpr::Gt(n(), c(0))),
            n(),
            Box::new(SymExpr::FloorDiv(c(1), c(0))),
        );
        assert_eq!(heap.eval(&guarded), Ok(6));
        let and = SymExpr::And(c(0), Box::new(SymExpr::FloorDiv(c(1), c(0))));
        assert_eq!(heap.eval(&and), Ok(0));
        assert_eq!(heap.eval(&SymExpr::Not(c(0))), Ok(1));
        assert_eq!(heap.eval(&SymExpr::Min(c(3), n())), Ok(3));
        assert_eq!(heap.eval(&SymExpr::Max(c(3), n())), Ok(6));
        assert!(heap.bind(2, 1, "m", "test".into()).is_err());
    }
}
