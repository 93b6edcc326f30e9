//! The backward analysis of `ToMixedPrecision` (TVM's
//! `DTypeDecisionCollector`): which values are only ever read in the mixed
//! dtype, so they can be stored in it.
//!
//! 1. A value's decision is a [`Msg`] shaped like its StructInfo: one
//!    [`Need`] per tensor leaf of a (nested) tuple.
//! 2. `Need` is a semi-lattice: `Unknown` (no use seen) below `Mixed` (only
//!    read by `Always` ops) below `Full` (read somewhere in its own
//!    dtype); two decisions merge to the higher.
//! 3. Bindings are visited last to first, so a variable's decision is
//!    complete when its own binding is reached: an `Always` call needs its
//!    tensor arguments `Mixed`, any other op call needs them `Full`; a tuple
//!    passes its variable's decision to its fields, a projection to the
//!    projected field. Every other use of a variable (a non-op call, a
//!    `match_cast`, an alias, the function's result, a branch condition)
//!    needs it `Full`. Constants need nothing: they are cast where used.

use super::policy::{policy, Policy};
use crate::ir::{Binding, BindingBlock, Expr, ExprKind, StructInfo, Var};
use std::collections::HashMap;

/// What the uses of one tensor need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    /// No use seen.
    Unknown,
    /// Only read in the mixed dtype.
    Mixed,
    /// Read in its own dtype somewhere.
    Full,
}

/// A per-leaf message shaped like a value's StructInfo.
#[derive(Clone, Debug, PartialEq)]
pub enum Msg<T> {
    /// A tensor (or a value that is not a tuple).
    Leaf(T),
    /// A tuple, field by field.
    Tuple(Vec<Msg<T>>),
}

impl<T: Copy> Msg<T> {
    /// `leaf` at every leaf of `sinfo` (`unknown` if there is none).
    pub fn from_struct_info(
        sinfo: Option<&StructInfo>,
        unknown: T,
        leaf: &dyn Fn(&StructInfo) -> T,
    ) -> Self {
        match sinfo {
            Some(s) => match s.as_tuple() {
                Some(fields) => Msg::Tuple(
                    fields
                        .iter()
                        .map(|f| Msg::from_struct_info(Some(f), unknown, leaf))
                        .collect(),
                ),
                None => Msg::Leaf(leaf(s)),
            },
            None => Msg::Leaf(unknown),
        }
    }
}

/// Whether `sinfo` is a tensor or a (nested) tuple of tensors.
pub fn is_nested_tensor(sinfo: Option<&StructInfo>) -> bool {
    match sinfo {
        Some(s) if s.as_tensor().is_some() => true,
        Some(s) => s
            .as_tuple()
            .is_some_and(|fs| fs.iter().all(|f| is_nested_tensor(Some(f)))),
        None => false,
    }
}

/// `need` at every tensor leaf of `sinfo`.
fn uniform(sinfo: Option<&StructInfo>, need: Need) -> Msg<Need> {
    Msg::from_struct_info(sinfo, Need::Unknown, &|s| {
        if s.as_tensor().is_some() {
            need
        } else {
            Need::Unknown
        }
    })
}

/// The higher of two decisions, leaf by leaf; a shape mismatch (which a
/// well-formed module cannot have) keeps the safe `Full`.
fn merge(a: &Msg<Need>, b: &Msg<Need>) -> Msg<Need> {
    match (a, b) {
        (Msg::Leaf(x), Msg::Leaf(y)) => Msg::Leaf((*x).max(*y)),
        (Msg::Tuple(xs), Msg::Tuple(ys)) if xs.len() == ys.len() => {
            Msg::Tuple(xs.iter().zip(ys).map(|(x, y)| merge(x, y)).collect())
        }
        (Msg::Leaf(Need::Unknown), other) | (other, Msg::Leaf(Need::Unknown)) => other.clone(),
        _ => Msg::Leaf(Need::Full),
    }
}

/// The decisions of every variable of a function (module docs).
#[derive(Default)]
pub struct Collector {
    /// Variable → what its uses need.
    pub needs: HashMap<Var, Msg<Need>>,
}

impl Collector {
    /// The decisions for the function whose body is `body`.
    pub fn collect(body: &Expr) -> HashMap<Var, Msg<Need>> {
        let mut c = Collector::default();
        c.expr(body);
        c.needs
    }

    fn require_var(&mut self, var: &Var, msg: Msg<Need>) {
        let merged = match self.needs.get(var) {
            Some(old) => merge(old, &msg),
            None => msg,
        };
        self.needs.insert(var.clone(), merged);
    }

    fn decision(&self, var: &Var) -> Msg<Need> {
        self.needs
            .get(var)
            .cloned()
            .unwrap_or_else(|| uniform(var.struct_info(), Need::Unknown))
    }

    /// `arg` (a variable, a constant or a tuple of them) needs `msg`.
    fn require(&mut self, arg: &Expr, msg: Msg<Need>) {
        match arg.kind() {
            ExprKind::Var(v) => self.require_var(v, msg),
            ExprKind::Tuple(fields) => {
                for (i, f) in fields.iter().enumerate() {
                    let m = match &msg {
                        Msg::Tuple(ms) => ms.get(i).cloned().unwrap_or(Msg::Leaf(Need::Full)),
                        Msg::Leaf(n) => uniform(f.struct_info(), *n),
                    };
                    self.require(f, m);
                }
            }
            _ => self.expr(arg),
        }
    }

    /// Any other use: every variable in `e` is read in its own dtype.
    fn expr(&mut self, e: &Expr) {
        match e.kind() {
            ExprKind::Var(v) if is_nested_tensor(v.struct_info()) => {
                self.require_var(v, uniform(v.struct_info(), Need::Full));
            }
            ExprKind::Tuple(fields) => fields.iter().for_each(|f| self.expr(f)),
            ExprKind::TupleGetItem(t, _) => self.expr(t),
            ExprKind::Call(c) => {
                self.expr(&c.op);
                c.args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::SeqExpr(seq) => {
                self.expr(&seq.body);
                for block in seq.blocks.iter().rev() {
                    self.block(block);
                }
            }
            ExprKind::If(i) => {
                self.expr(&i.true_branch);
                self.expr(&i.false_branch);
                self.expr(&i.cond);
            }
            ExprKind::Function(f) => self.expr(&f.body),
            _ => {}
        }
    }

    fn block(&mut self, block: &BindingBlock) {
        for b in block.bindings.iter().rev() {
            match b {
                Binding::VarBinding(vb) => self.binding(&vb.var, &vb.value),
                Binding::MatchCast(mc) => self.expr(&mc.value),
            }
        }
    }

    fn binding(&mut self, var: &Var, value: &Expr) {
        match value.kind() {
            ExprKind::Call(call) => {
                let ExprKind::Op(op) = call.op.kind() else {
                    return self.expr(value);
                };
                let need = match policy(op.name()) {
                    Policy::Always => Need::Mixed,
                    Policy::Follow | Policy::Never => Need::Full,
                };
                for a in &call.args {
                    if is_nested_tensor(a.struct_info()) {
                        self.require(a, uniform(a.struct_info(), need));
                    } else {
                        self.expr(a);
                    }
                }
            }
            ExprKind::Tuple(fields) => {
                let msg = self.decision(var);
                self.require(&Expr::tuple(fields.clone()), msg);
            }
            ExprKind::TupleGetItem(t, index) => {
                let lhs = self.decision(var);
                let fields = t
                    .struct_info()
                    .and_then(|s| s.as_tuple())
                    .map(|fs| fs.to_vec())
                    .unwrap_or_default();
                let msg = Msg::Tuple(
                    fields
                        .iter()
                        .enumerate()
                        .map(|(i, f)| {
                            if i == *index {
                                lhs.clone()
                            } else {
                                uniform(Some(f), Need::Unknown)
                            }
                        })
                        .collect(),
                );
                self.require(t, msg);
            }
            _ => self.expr(value),
        }
    }
}
