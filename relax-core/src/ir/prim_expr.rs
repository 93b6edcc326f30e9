//! `PrimExpr`: symbolic scalar expressions (TIR's expression language).
//!
//! Relax uses PrimExprs for shape dimensions (`(n, 784)`, `n * 4`), for the
//! value of a `PrimValue`, and the loop-level IR reuses them for indices.
//!
//! 1. A `PrimExpr` is an immutable tree shared through `Arc`; cloning is cheap.
//! 2. Every node carries its [`DataType`]. Shape arithmetic is `int64`;
//!    comparisons and logic are `bool`.
//! 3. `Div` and `Mod` have floor semantics (TIR's `floordiv`/`floormod`), the
//!    ones shape arithmetic needs: `-7 // 2 == -4`, `-7 % 2 == 1`.
//! 4. A symbolic variable is a [`TirVar`] (TVM's `tir::Var`). Its identity is a
//!    unique id; two vars with the same name are different vars.
//! 5. `PartialEq`/`Hash` compare trees exactly (vars by id). Algebraic
//!    equality (`n*m == m*n`) is the job of [`crate::arith`].
//!
//! `Display` prints TVMScript (`n * 4 + 1`, `n // 2`, `T.min(a, b)`).

use relax_runtime::DataType;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh process-unique id, shared by every kind of variable.
pub(crate) fn fresh_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// A symbolic scalar variable (TVM's `tir::Var`), e.g. a shape dimension `n`.
#[derive(Clone)]
pub struct TirVar(Arc<TirVarNode>);

struct TirVarNode {
    id: u64,
    name: String,
    dtype: DataType,
}

impl TirVar {
    /// A new `int64` variable, distinct from every other.
    pub fn new(name: impl Into<String>) -> Self {
        Self::with_dtype(name, DataType::i64())
    }
    /// A new variable of the given dtype.
    pub fn with_dtype(name: impl Into<String>, dtype: DataType) -> Self {
        TirVar(Arc::new(TirVarNode {
            id: fresh_id(),
            name: name.into(),
            dtype,
        }))
    }
    /// The name it prints with (not its identity).
    pub fn name(&self) -> &str {
        &self.0.name
    }
    /// The identity.
    pub fn id(&self) -> u64 {
        self.0.id
    }
    /// The dtype.
    pub fn dtype(&self) -> DataType {
        self.0.dtype
    }
    /// This variable as an expression.
    pub fn to_expr(&self) -> PrimExpr {
        PrimExpr::var(self)
    }
}

impl PartialEq for TirVar {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}
impl Eq for TirVar {}
impl Hash for TirVar {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.id.hash(state)
    }
}
impl PartialOrd for TirVar {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for TirVar {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.id.cmp(&other.0.id)
    }
}
impl fmt::Debug for TirVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.0.name, self.0.id)
    }
}
impl fmt::Display for TirVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.name)
    }
}

/// The node kinds of a [`PrimExpr`], named as in the Relax spec's grammar.
#[derive(Clone, Debug, PartialEq)]
pub enum PrimExprKind {
    /// A symbolic variable.
    Var(TirVar),
    /// An integer literal (also `bool` literals, as 0 and 1).
    IntImm(i64),
    /// A floating-point literal.
    FloatImm(f64),
    /// `a + b`
    Add(PrimExpr, PrimExpr),
    /// `a - b`
    Sub(PrimExpr, PrimExpr),
    /// `a * b`
    Mul(PrimExpr, PrimExpr),
    /// `a // b`, rounding toward negative infinity.
    Div(PrimExpr, PrimExpr),
    /// `a % b`, with the sign of `b`.
    Mod(PrimExpr, PrimExpr),
    /// `min(a, b)`
    Min(PrimExpr, PrimExpr),
    /// `max(a, b)`
    Max(PrimExpr, PrimExpr),
    /// `a == b`
    Eq(PrimExpr, PrimExpr),
    /// `a != b`
    Ne(PrimExpr, PrimExpr),
    /// `a < b`
    Lt(PrimExpr, PrimExpr),
    /// `a <= b`
    Le(PrimExpr, PrimExpr),
    /// `a > b`
    Gt(PrimExpr, PrimExpr),
    /// `a >= b`
    Ge(PrimExpr, PrimExpr),
    /// `a and b`
    And(PrimExpr, PrimExpr),
    /// `a or b`
    Or(PrimExpr, PrimExpr),
    /// `not a`
    Not(PrimExpr),
    /// `cond ? t : f`, evaluating both sides.
    Select(PrimExpr, PrimExpr, PrimExpr),
    /// `T.Cast(dtype, value)`: a conversion to this node's dtype.
    Cast(PrimExpr),
    /// `buffer[indices]` (loop-level IR only).
    BufferLoad(crate::tir::Buffer, Vec<PrimExpr>),
    /// An intrinsic call such as `T.exp(x)` (loop-level IR only): the
    /// intrinsic's name and arguments; the result has this node's dtype.
    Call(String, Vec<PrimExpr>),
}

#[derive(Debug, PartialEq)]
struct PrimExprNode {
    dtype: DataType,
    kind: PrimExprKind,
}

/// A symbolic scalar expression. See the module docs.
#[derive(Clone, PartialEq)]
pub struct PrimExpr(Arc<PrimExprNode>);

impl Eq for PrimExpr {}

impl Hash for PrimExpr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        use PrimExprKind::*;
        self.dtype().hash(state);
        std::mem::discriminant(self.kind()).hash(state);
        match self.kind() {
            Var(v) => v.hash(state),
            IntImm(i) => i.hash(state),
            FloatImm(f) => f.to_bits().hash(state),
            Not(a) | Cast(a) => a.hash(state),
            BufferLoad(b, idx) => {
                b.hash(state);
                idx.hash(state)
            }
            Call(name, args) => {
                name.hash(state);
                args.hash(state)
            }
            Select(c, t, f) => {
                c.hash(state);
                t.hash(state);
                f.hash(state)
            }
            Add(a, b)
            | Sub(a, b)
            | Mul(a, b)
            | Div(a, b)
            | Mod(a, b)
            | Min(a, b)
            | Max(a, b)
            | Eq(a, b)
            | Ne(a, b)
            | Lt(a, b)
            | Le(a, b)
            | Gt(a, b)
            | Ge(a, b)
            | And(a, b)
            | Or(a, b) => {
                a.hash(state);
                b.hash(state)
            }
        }
    }
}

impl PrimExpr {
    /// A node from its kind and dtype. Prefer the typed constructors.
    pub fn new(dtype: DataType, kind: PrimExprKind) -> Self {
        PrimExpr(Arc::new(PrimExprNode { dtype, kind }))
    }
    /// An `int64` literal.
    pub fn int(value: i64) -> Self {
        Self::new(DataType::i64(), PrimExprKind::IntImm(value))
    }
    /// An integer literal of the given dtype.
    pub fn int_of(dtype: DataType, value: i64) -> Self {
        Self::new(dtype, PrimExprKind::IntImm(value))
    }
    /// A `bool` literal.
    pub fn bool(value: bool) -> Self {
        Self::new(DataType::bool(), PrimExprKind::IntImm(value as i64))
    }
    /// A float literal of the given dtype.
    pub fn float(dtype: DataType, value: f64) -> Self {
        Self::new(dtype, PrimExprKind::FloatImm(value))
    }
    /// A variable reference.
    pub fn var(v: &TirVar) -> Self {
        Self::new(v.dtype(), PrimExprKind::Var(v.clone()))
    }

    /// The node kind.
    pub fn kind(&self) -> &PrimExprKind {
        &self.0.kind
    }
    /// The dtype.
    pub fn dtype(&self) -> DataType {
        self.0.dtype
    }
    /// The value, if this is an integer literal.
    pub fn as_int(&self) -> Option<i64> {
        match self.kind() {
            PrimExprKind::IntImm(v) => Some(*v),
            _ => None,
        }
    }
    /// The variable, if this is a bare variable.
    pub fn as_var(&self) -> Option<&TirVar> {
        match self.kind() {
            PrimExprKind::Var(v) => Some(v),
            _ => None,
        }
    }
    /// Whether both are the same `Arc` (a cheap pre-check for equality).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    fn arith(self, rhs: PrimExpr, f: fn(PrimExpr, PrimExpr) -> PrimExprKind) -> PrimExpr {
        let dtype = self.dtype();
        PrimExpr::new(dtype, f(self, rhs))
    }
    fn compare(self, rhs: PrimExpr, f: fn(PrimExpr, PrimExpr) -> PrimExprKind) -> PrimExpr {
        PrimExpr::new(DataType::bool(), f(self, rhs))
    }
    /// `self // rhs` (floor division).
    pub fn floordiv(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.arith(rhs.into(), PrimExprKind::Div)
    }
    /// `self % rhs` (floor modulo).
    pub fn floormod(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.arith(rhs.into(), PrimExprKind::Mod)
    }
    /// `min(self, rhs)`
    pub fn min(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.arith(rhs.into(), PrimExprKind::Min)
    }
    /// `max(self, rhs)`
    pub fn max(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.arith(rhs.into(), PrimExprKind::Max)
    }
    /// `self == rhs`
    pub fn eq_(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.compare(rhs.into(), PrimExprKind::Eq)
    }
    /// `self != rhs`
    pub fn ne_(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.compare(rhs.into(), PrimExprKind::Ne)
    }
    /// `self < rhs`
    pub fn lt(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.compare(rhs.into(), PrimExprKind::Lt)
    }
    /// `self <= rhs`
    pub fn le(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.compare(rhs.into(), PrimExprKind::Le)
    }
    /// `self > rhs`
    pub fn gt(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.compare(rhs.into(), PrimExprKind::Gt)
    }
    /// `self >= rhs`
    pub fn ge(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.compare(rhs.into(), PrimExprKind::Ge)
    }
    /// `self and rhs`
    pub fn and(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.compare(rhs.into(), PrimExprKind::And)
    }
    /// `self or rhs`
    pub fn or(self, rhs: impl Into<PrimExpr>) -> PrimExpr {
        self.compare(rhs.into(), PrimExprKind::Or)
    }
    /// `T.Cast(dtype, self)`
    pub fn cast(self, dtype: DataType) -> PrimExpr {
        if self.dtype() == dtype {
            return self;
        }
        PrimExpr::new(dtype, PrimExprKind::Cast(self))
    }
    /// `buffer[indices]`
    pub fn load(buffer: &crate::tir::Buffer, indices: Vec<PrimExpr>) -> PrimExpr {
        PrimExpr::new(
            buffer.dtype(),
            PrimExprKind::BufferLoad(buffer.clone(), indices),
        )
    }
    /// The intrinsic `name(args…)` with result type `dtype` (`exp`, `log`,
    /// `sqrt`, `tanh`, `erf`, `pow`, `fabs`, …).
    pub fn call(dtype: DataType, name: &str, args: Vec<PrimExpr>) -> PrimExpr {
        PrimExpr::new(dtype, PrimExprKind::Call(name.to_string(), args))
    }
    /// `cond ? t : f`
    pub fn select(cond: PrimExpr, t: PrimExpr, f: PrimExpr) -> PrimExpr {
        let dtype = t.dtype();
        PrimExpr::new(dtype, PrimExprKind::Select(cond, t, f))
    }

    /// The direct children, left to right.
    pub fn children(&self) -> Vec<&PrimExpr> {
        use PrimExprKind::*;
        match self.kind() {
            Var(_) | IntImm(_) | FloatImm(_) => vec![],
            Not(a) | Cast(a) => vec![a],
            BufferLoad(_, args) | Call(_, args) => args.iter().collect(),
            Select(c, t, f) => vec![c, t, f],
            Add(a, b)
            | Sub(a, b)
            | Mul(a, b)
            | Div(a, b)
            | Mod(a, b)
            | Min(a, b)
            | Max(a, b)
            | Eq(a, b)
            | Ne(a, b)
            | Lt(a, b)
            | Le(a, b)
            | Gt(a, b)
            | Ge(a, b)
            | And(a, b)
            | Or(a, b) => vec![a, b],
        }
    }

    /// The same node with its children replaced by `f(child)`; shares the node
    /// when no child changed.
    pub fn map_children(&self, mut f: impl FnMut(&PrimExpr) -> PrimExpr) -> PrimExpr {
        use PrimExprKind::*;
        let kind = match self.kind() {
            Var(_) | IntImm(_) | FloatImm(_) => return self.clone(),
            Not(a) => Not(f(a)),
            Cast(a) => Cast(f(a)),
            BufferLoad(b, idx) => BufferLoad(b.clone(), idx.iter().map(&mut f).collect()),
            Call(name, args) => Call(name.clone(), args.iter().map(&mut f).collect()),
            Select(c, t, e) => Select(f(c), f(t), f(e)),
            Add(a, b) => Add(f(a), f(b)),
            Sub(a, b) => Sub(f(a), f(b)),
            Mul(a, b) => Mul(f(a), f(b)),
            Div(a, b) => Div(f(a), f(b)),
            Mod(a, b) => Mod(f(a), f(b)),
            Min(a, b) => Min(f(a), f(b)),
            Max(a, b) => Max(f(a), f(b)),
            Eq(a, b) => Eq(f(a), f(b)),
            Ne(a, b) => Ne(f(a), f(b)),
            Lt(a, b) => Lt(f(a), f(b)),
            Le(a, b) => Le(f(a), f(b)),
            Gt(a, b) => Gt(f(a), f(b)),
            Ge(a, b) => Ge(f(a), f(b)),
            And(a, b) => And(f(a), f(b)),
            Or(a, b) => Or(f(a), f(b)),
        };
        if kind == *self.kind() {
            return self.clone();
        }
        PrimExpr::new(self.dtype(), kind)
    }

    /// Replaces variables for which `f` returns `Some`.
    pub fn substitute(&self, f: &dyn Fn(&TirVar) -> Option<PrimExpr>) -> PrimExpr {
        match self.kind() {
            PrimExprKind::Var(v) => f(v).unwrap_or_else(|| self.clone()),
            _ => self.map_children(|c| c.substitute(f)),
        }
    }

    /// Replaces the variables that `map` binds.
    pub fn substitute_map(&self, map: &HashMap<TirVar, PrimExpr>) -> PrimExpr {
        if map.is_empty() {
            return self.clone();
        }
        self.substitute(&|v| map.get(v).cloned())
    }

    /// The free variables in order of first appearance, each once.
    pub fn free_vars(&self) -> Vec<TirVar> {
        let mut out = Vec::new();
        self.collect_vars(&mut out);
        out
    }

    pub(crate) fn collect_vars(&self, out: &mut Vec<TirVar>) {
        match self.kind() {
            PrimExprKind::Var(v) => {
                if !out.contains(v) {
                    out.push(v.clone())
                }
            }
            _ => self
                .children()
                .into_iter()
                .for_each(|c| c.collect_vars(out)),
        }
    }

    /// Evaluates an integer or boolean expression with the variables bound by
    /// `env`. Booleans evaluate to 0 or 1.
    pub fn eval(&self, env: &HashMap<TirVar, i64>) -> Result<i64, EvalError> {
        use PrimExprKind::*;
        let bin = |a: &PrimExpr, b: &PrimExpr| -> Result<(i64, i64), EvalError> {
            Ok((a.eval(env)?, b.eval(env)?))
        };
        let overflow = || EvalError::Overflow(self.to_string());
        Ok(match self.kind() {
            Var(v) => *env
                .get(v)
                .ok_or_else(|| EvalError::Unbound(v.name().to_string()))?,
            IntImm(i) => *i,
            FloatImm(_) | BufferLoad(..) | Call(..) => {
                return Err(EvalError::NotInteger(self.to_string()))
            }
            Cast(a) if self.dtype().is_integer() && a.dtype().is_integer() => {
                let v = a.eval(env)?;
                match self.dtype() {
                    d if d.is_bool() => (v != 0) as i64,
                    d if d.bits() >= 64 => v,
                    d if d.is_uint() => v & ((1i64 << d.bits()) - 1),
                    d => (v << (64 - d.bits())) >> (64 - d.bits()),
                }
            }
            Cast(_) => return Err(EvalError::NotInteger(self.to_string())),
            Add(a, b) => {
                let (a, b) = bin(a, b)?;
                a.checked_add(b).ok_or_else(overflow)?
            }
            Sub(a, b) => {
                let (a, b) = bin(a, b)?;
                a.checked_sub(b).ok_or_else(overflow)?
            }
            Mul(a, b) => {
                let (a, b) = bin(a, b)?;
                a.checked_mul(b).ok_or_else(overflow)?
            }
            Div(a, b) => {
                let (a, b) = bin(a, b)?;
                floor_div(a, b).ok_or_else(|| EvalError::DivisionByZero(self.to_string()))?
            }
            Mod(a, b) => {
                let (a, b) = bin(a, b)?;
                floor_mod(a, b).ok_or_else(|| EvalError::DivisionByZero(self.to_string()))?
            }
            Min(a, b) => {
                let (a, b) = bin(a, b)?;
                a.min(b)
            }
            Max(a, b) => {
                let (a, b) = bin(a, b)?;
                a.max(b)
            }
            Eq(a, b) => {
                let (a, b) = bin(a, b)?;
                (a == b) as i64
            }
            Ne(a, b) => {
                let (a, b) = bin(a, b)?;
                (a != b) as i64
            }
            Lt(a, b) => {
                let (a, b) = bin(a, b)?;
                (a < b) as i64
            }
            Le(a, b) => {
                let (a, b) = bin(a, b)?;
                (a <= b) as i64
            }
            Gt(a, b) => {
                let (a, b) = bin(a, b)?;
                (a > b) as i64
            }
            Ge(a, b) => {
                let (a, b) = bin(a, b)?;
                (a >= b) as i64
            }
            And(a, b) => {
                let (a, b) = bin(a, b)?;
                (a != 0 && b != 0) as i64
            }
            Or(a, b) => {
                let (a, b) = bin(a, b)?;
                (a != 0 || b != 0) as i64
            }
            Not(a) => (a.eval(env)? == 0) as i64,
            Select(c, t, f) => {
                let (t, f) = bin(t, f)?;
                if c.eval(env)? != 0 {
                    t
                } else {
                    f
                }
            }
        })
    }
}

/// `a // b` rounding toward negative infinity; `None` when `b == 0` or on overflow.
pub fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

/// `a % b` with the sign of `b`; `None` when `b == 0`.
pub fn floor_mod(a: i64, b: i64) -> Option<i64> {
    let r = a.checked_rem(b)?;
    if r != 0 && ((r < 0) != (b < 0)) {
        Some(r + b)
    } else {
        Some(r)
    }
}

/// Why [`PrimExpr::eval`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A variable has no value.
    Unbound(String),
    /// A division or modulo by zero.
    DivisionByZero(String),
    /// The result does not fit in `i64`.
    Overflow(String),
    /// A float appeared where an integer was needed.
    NotInteger(String),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Unbound(v) => write!(f, "symbolic variable `{v}` has no value"),
            EvalError::DivisionByZero(e) => write!(f, "division by zero in `{e}`"),
            EvalError::Overflow(e) => write!(f, "integer overflow in `{e}`"),
            EvalError::NotInteger(e) => write!(f, "`{e}` is not an integer expression"),
        }
    }
}

impl std::error::Error for EvalError {}

impl From<i64> for PrimExpr {
    fn from(v: i64) -> Self {
        PrimExpr::int(v)
    }
}
impl From<&TirVar> for PrimExpr {
    fn from(v: &TirVar) -> Self {
        PrimExpr::var(v)
    }
}
impl From<TirVar> for PrimExpr {
    fn from(v: TirVar) -> Self {
        PrimExpr::var(&v)
    }
}
impl From<&PrimExpr> for PrimExpr {
    fn from(e: &PrimExpr) -> Self {
        e.clone()
    }
}

macro_rules! binop {
    ($trait:ident, $method:ident, $kind:ident) => {
        impl<R: Into<PrimExpr>> std::ops::$trait<R> for PrimExpr {
            type Output = PrimExpr;
            fn $method(self, rhs: R) -> PrimExpr {
                self.arith(rhs.into(), PrimExprKind::$kind)
            }
        }
        impl<R: Into<PrimExpr>> std::ops::$trait<R> for &PrimExpr {
            type Output = PrimExpr;
            fn $method(self, rhs: R) -> PrimExpr {
                self.clone().arith(rhs.into(), PrimExprKind::$kind)
            }
        }
        impl<R: Into<PrimExpr>> std::ops::$trait<R> for &TirVar {
            type Output = PrimExpr;
            fn $method(self, rhs: R) -> PrimExpr {
                PrimExpr::var(self).arith(rhs.into(), PrimExprKind::$kind)
            }
        }
    };
}
binop!(Add, add, Add);
binop!(Sub, sub, Sub);
binop!(Mul, mul, Mul);

impl std::ops::Not for PrimExpr {
    type Output = PrimExpr;
    /// `not self`
    fn not(self) -> PrimExpr {
        PrimExpr::new(DataType::bool(), PrimExprKind::Not(self))
    }
}

impl std::ops::Neg for PrimExpr {
    type Output = PrimExpr;
    fn neg(self) -> PrimExpr {
        PrimExpr::int_of(self.dtype(), 0) - self
    }
}

/// Precedence levels of Python's grammar, used to parenthesize as TVMScript does.
fn precedence(k: &PrimExprKind) -> u8 {
    use PrimExprKind::*;
    match k {
        Or(..) => 1,
        And(..) => 2,
        Not(..) => 3,
        Eq(..) | Ne(..) | Lt(..) | Le(..) | Gt(..) | Ge(..) => 4,
        Add(..) | Sub(..) => 5,
        Mul(..) | Div(..) | Mod(..) => 6,
        _ => 9,
    }
}

impl PrimExpr {
    fn fmt_operand(&self, f: &mut fmt::Formatter<'_>, parent: u8, right: bool) -> fmt::Result {
        let p = precedence(self.kind());
        // Python operators are left-associative: a right operand of equal
        // precedence needs parentheses (`a - (b - c)`), a left one does not.
        let needs = p < parent || (right && p == parent) || (p == 4 && parent == 4);
        let negative_literal =
            matches!(self.kind(), PrimExprKind::IntImm(v) if *v < 0) && parent >= 5;
        if needs || negative_literal {
            write!(f, "({self})")
        } else {
            write!(f, "{self}")
        }
    }
}

impl fmt::Display for PrimExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PrimExprKind::*;
        let p = precedence(self.kind());
        let mut infix = |a: &PrimExpr, op: &str, b: &PrimExpr| -> fmt::Result {
            a.fmt_operand(f, p, false)?;
            write!(f, " {op} ")?;
            b.fmt_operand(f, p, true)
        };
        match self.kind() {
            Var(v) => write!(f, "{v}"),
            IntImm(v) if self.dtype().is_bool() => {
                f.write_str(if *v != 0 { "True" } else { "False" })
            }
            IntImm(v) if self.dtype() == DataType::i64() => write!(f, "{v}"),
            IntImm(v) => write!(f, "T.{}({v})", self.dtype()),
            FloatImm(v) => write!(
                f,
                "T.{}({})",
                self.dtype(),
                relax_runtime::tensor::format_float(*v, self.dtype().bits())
            ),
            Add(a, b) => infix(a, "+", b),
            Sub(a, b) => infix(a, "-", b),
            Mul(a, b) => infix(a, "*", b),
            Div(a, b) => infix(a, "//", b),
            Mod(a, b) => infix(a, "%", b),
            Eq(a, b) => infix(a, "==", b),
            Ne(a, b) => infix(a, "!=", b),
            Lt(a, b) => infix(a, "<", b),
            Le(a, b) => infix(a, "<=", b),
            Gt(a, b) => infix(a, ">", b),
            Ge(a, b) => infix(a, ">=", b),
            And(a, b) => infix(a, "and", b),
            Or(a, b) => infix(a, "or", b),
            Not(a) => {
                f.write_str("not ")?;
                a.fmt_operand(f, p, false)
            }
            Min(a, b) => write!(f, "T.min({a}, {b})"),
            Max(a, b) => write!(f, "T.max({a}, {b})"),
            Select(c, t, e) => write!(f, "T.Select({c}, {t}, {e})"),
            Cast(a) => write!(f, "T.Cast(\"{}\", {a})", self.dtype()),
            BufferLoad(b, idx) => {
                let idx: Vec<String> = idx.iter().map(|i| i.to_string()).collect();
                write!(f, "{}[{}]", b.name(), idx.join(", "))
            }
            Call(name, args) => {
                let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                write!(f, "T.{name}({})", args.join(", "))
            }
        }
    }
}

impl fmt::Debug for PrimExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PrimExpr({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vars_are_identified_by_id_not_name() {
        let a = TirVar::new("n");
        let b = TirVar::new("n");
        assert_ne!(a, b);
        assert_eq!(a, a.clone());
        assert_ne!(PrimExpr::var(&a), PrimExpr::var(&b));
    }

    #[test]
    fn prints_with_python_precedence() {
        let n = TirVar::new("n");
        let m = TirVar::new("m");
        assert_eq!((&n + 1).to_string(), "n + 1");
        assert_eq!(((&n + 1) * 2).to_string(), "(n + 1) * 2");
        assert_eq!((&n - (&m - 1)).to_string(), "n - (m - 1)");
        assert_eq!(((&n - &m) - 1).to_string(), "n - m - 1");
        assert_eq!((&n * 4).floordiv(4).to_string(), "n * 4 // 4");
        assert_eq!(PrimExpr::var(&n).min(&m).to_string(), "T.min(n, m)");
        assert_eq!(
            PrimExpr::var(&n)
                .lt(4)
                .and(PrimExpr::bool(true))
                .to_string(),
            "n < 4 and True"
        );
        assert_eq!((&n * -2).to_string(), "n * (-2)");
    }

    #[test]
    fn floor_semantics() {
        assert_eq!(floor_div(-7, 2), Some(-4));
        assert_eq!(floor_mod(-7, 2), Some(1));
        assert_eq!(floor_div(7, -2), Some(-4));
        assert_eq!(floor_mod(7, -2), Some(-1));
        assert_eq!(floor_div(1, 0), None);
        assert_eq!(floor_div(i64::MIN, -1), None);
    }

    #[test]
    fn eval_substitute_and_free_vars() {
        let n = TirVar::new("n");
        let m = TirVar::new("m");
        let e = (&n * &m + &n).floordiv(3);
        assert_eq!(e.free_vars(), vec![n.clone(), m.clone()]);
        let env = HashMap::from([(n.clone(), 5), (m.clone(), 2)]);
        assert_eq!(e.eval(&env), Ok(5));
        let k = TirVar::new("k");
        let sub = e.substitute_map(&HashMap::from([(m.clone(), PrimExpr::var(&k) + 1)]));
        assert_eq!(sub.to_string(), "(n * (k + 1) + n) // 3");
        assert!(matches!(sub.eval(&env), Err(EvalError::Unbound(_))));
        assert!(matches!(
            PrimExpr::var(&n).floordiv(0).eval(&env),
            Err(EvalError::DivisionByZero(_))
        ));
    }
}
