//! The operator registry: what the compiler knows about each `Op`.
//!
//! 1. An op is identified by its registry name (`relax.add`, `relax.nn.relu`);
//!    the DSL path is `R::add`, `R::nn::relu`, TVMScript's `R.add`.
//! 2. Each entry ([`OpInfo`]) declares the op's arity, its typed attributes
//!    with defaults, its StructInfo inference, its purity and its fusion
//!    pattern kind. Reference kernels and legalizations are attached by the
//!    runtime and loop-level issues.
//! 3. Inference is symbolic and reports an error only on what is provably
//!    wrong; an unknown dtype or rank propagates as unknown. Messages name the
//!    op, the argument and both shapes in DSL syntax
//!    (`matmul: inner dimensions differ: x is (n, 784), w is (128, 784)`).
//! 4. A call to an op that is not registered is treated as TVM treats an op
//!    without `FInferStructInfo`: pure, with result StructInfo from the call's
//!    `sinfo_args` (`default_derive`), else `Object`.
//!
//! One file per op group, as in TVM's `python/tvm/relax/op/`: [`binary`],
//! [`unary`], [`ternary`], [`linear_algebra`], [`manipulate`], [`index`],
//! [`create`], [`statistical`], [`search`], [`sorting`], [`set`],
//! [`datatype`], [`nn`] (and [`attention`]), [`image`], [`vision`], [`qdq`], [`base`], [`debug`] (`print`, `assert_op`).
//! Shared inference helpers are in [`infer`]; attribute schemas in [`attr`].

// The inference tests spell every dims list the same way (`&[n.clone()]`),
// which reads better than mixing in `std::slice::from_ref`.
#![cfg_attr(test, allow(clippy::cloned_ref_to_slice_refs))]

pub mod attention;
pub mod attr;
pub mod base;
pub mod binary;
pub mod create;
pub mod datatype;
pub mod debug;
pub mod image;
pub mod index;
pub mod infer;
pub mod linear_algebra;
pub mod manipulate;
pub mod memory;
pub mod nn;
pub mod qdq;
#[cfg(test)]
mod registry_roundtrip_tests;
pub mod search;
pub mod set;
pub mod sorting;
pub mod statistical;
pub mod ternary;
#[cfg(test)]
mod testing;
pub mod unary;
pub mod vision;

pub use attr::{AttrSpec, AttrType};

use crate::arith::Analyzer;
use crate::ir::{Attrs, Call, Expr, StructInfo};
use once_cell::sync::Lazy;
use relax_runtime::Diagnostic;
use std::collections::HashMap;

/// How an op's computation fuses with its neighbours (TVM's `OpPatternKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpPatternKind {
    /// Output element i depends only on input element i.
    ElemWise = 0,
    /// Elementwise up to broadcasting.
    Broadcast = 1,
    /// Each output element depends on one input element (reshape, transpose).
    Injective = 2,
    /// A commutative reduction (sum, max).
    CommReduce = 3,
    /// A complex op whose output can take elementwise ops fused after it (matmul, conv).
    OutEWiseFusable = 4,
    /// A tuple node.
    Tuple = 7,
    /// Never fused.
    Opaque = 8,
}

/// Infers a call's result StructInfo from its arguments' (all normalized).
pub type InferStructInfo = fn(&Call, &Analyzer) -> Result<StructInfo, Diagnostic>;

/// How many arguments an op takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly this many.
    Exact(usize),
    /// At least this many.
    AtLeast(usize),
}

impl Arity {
    /// Whether `n` arguments fit.
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Exact(k) => n == k,
            Arity::AtLeast(k) => n >= k,
        }
    }
}

impl std::fmt::Display for Arity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arity::Exact(1) => f.write_str("1 argument"),
            Arity::Exact(k) => write!(f, "{k} arguments"),
            Arity::AtLeast(k) => write!(f, "at least {k} arguments"),
        }
    }
}

/// A registered operator.
#[derive(Debug)]
pub struct OpInfo {
    /// The registry name, e.g. `relax.add`.
    pub name: &'static str,
    /// The names of the positional arguments, in order (used in messages).
    pub args: &'static [&'static str],
    /// How many arguments it takes.
    pub arity: Arity,
    /// The attributes, in declaration (and printing) order.
    pub attrs: &'static [AttrSpec],
    /// StructInfo inference.
    pub infer_struct_info: InferStructInfo,
    /// Whether a call has no side effects.
    pub purity: bool,
    /// The fusion pattern kind.
    pub pattern: OpPatternKind,
}

impl OpInfo {
    /// The name without the `relax.` prefix (`nn.relu`), as the DSL and
    /// messages spell it.
    pub fn short_name(&self) -> &'static str {
        self.name.strip_prefix("relax.").unwrap_or(self.name)
    }

    /// The attribute spec named `name`.
    pub fn attr_spec(&self, name: &str) -> Option<&'static AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// Checks `given` against the schema and returns the full attribute list
    /// in declaration order, defaults filled in. Errors name the attribute.
    pub fn normalize_attrs(&self, given: &Attrs) -> Result<Attrs, Diagnostic> {
        attr::normalize(self, given)
    }

    /// An error unless `n` arguments fit the op's arity.
    pub fn check_arity(&self, n: usize) -> Result<(), Diagnostic> {
        if self.arity.accepts(n) {
            return Ok(());
        }
        let verb = if n == 1 { "was" } else { "were" };
        Err(Diagnostic::new(
            "op-arity",
            format!(
                "{} takes {}, but {n} {verb} given",
                self.short_name(),
                self.arity
            ),
        ))
    }

    /// A call of this op on `args` with `attrs` checked and completed.
    pub fn call(&self, args: Vec<Expr>, attrs: &Attrs) -> Result<Expr, Diagnostic> {
        self.check_arity(args.len())?;
        Ok(Expr::call_full(
            Expr::op(self.name),
            args,
            self.normalize_attrs(attrs)?,
            vec![],
        ))
    }
}

/// Every op group's table, in the order of the module docs.
const GROUPS: &[&[OpInfo]] = &[
    binary::OPS,
    unary::OPS,
    ternary::OPS,
    linear_algebra::OPS,
    manipulate::OPS,
    index::OPS,
    create::OPS,
    statistical::OPS,
    search::OPS,
    sorting::OPS,
    set::OPS,
    datatype::OPS,
    nn::OPS,
    attention::OPS,
    image::OPS,
    vision::OPS,
    qdq::OPS,
    memory::OPS,
    base::OPS,
    debug::OPS,
];

static BY_NAME: Lazy<HashMap<&'static str, &'static OpInfo>> = Lazy::new(|| {
    GROUPS
        .iter()
        .flat_map(|g| g.iter())
        .map(|op| (op.name, op))
        .collect()
});

/// The entry of the op named `name` (`relax.add`), if registered.
pub fn lookup(name: &str) -> Option<&'static OpInfo> {
    BY_NAME.get(name).copied()
}

/// Every registered op, grouped as in the module docs.
pub fn all() -> impl Iterator<Item = &'static OpInfo> {
    GROUPS.iter().flat_map(|g| g.iter())
}

/// The registered op whose name is closest to `name` (for "unknown op" hints).
pub fn nearest(name: &str) -> Option<&'static str> {
    let want = name.strip_prefix("relax.").unwrap_or(name);
    all()
        .map(|op| (edit_distance(want, op.short_name()), op.name))
        .filter(|(d, _)| *d <= want.len().max(3) / 2 + 1)
        .min()
        .map(|(_, n)| n)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + (ca != *cb) as usize)
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Infers the StructInfo of a call of a registered op: checks the arity, then
/// runs the op's inference. `None` if the callee is not a registered op.
pub fn infer_call(call: &Call, analyzer: &Analyzer) -> Option<Result<StructInfo, Diagnostic>> {
    let name = match call.op.kind() {
        crate::ir::ExprKind::Op(op) => op.name().to_string(),
        _ => return None,
    };
    let info = lookup(&name)?;
    Some(
        info.check_arity(call.args.len())
            .and_then(|()| (info.infer_struct_info)(call, analyzer)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_has_the_design_op_list() {
        for name in [
            "add",
            "subtract",
            "multiply",
            "divide",
            "power",
            "maximum",
            "minimum",
            "negative",
            "exp",
            "log",
            "sqrt",
            "tanh",
            "sigmoid",
            "nn.relu",
            "nn.gelu",
            "nn.silu",
            "nn.softmax",
            "nn.log_softmax",
            "nn.layer_norm",
            "matmul",
            "permute_dims",
            "reshape",
            "flatten",
            "expand_dims",
            "squeeze",
            "concat",
            "split",
            "take",
            "strided_slice",
            "broadcast_to",
            "sum",
            "mean",
            "max",
            "min",
            "argmax",
            "astype",
            "zeros",
            "ones",
            "full",
            "where",
            "ewise_fma",
            "call_tir",
            "call_dps_packed",
            "shape_of",
            "nn.conv2d",
            "nn.max_pool2d",
            "nn.avg_pool2d",
            "nn.pad",
            "nn.conv2d_transpose",
            "image.resize2d",
        ] {
            assert!(
                lookup(&format!("relax.{name}")).is_some(),
                "relax.{name} is not registered"
            );
        }
        assert!(all().count() >= 45);
        let mut names: Vec<_> = all().map(|o| o.name).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate registrations");
    }

    #[test]
    fn nearest_name_for_typos() {
        assert_eq!(nearest("relax.matmull"), Some("relax.matmul"));
        assert_eq!(nearest("nn.rellu"), Some("relax.nn.relu"));
        assert_eq!(nearest("zzzzzzzzzzzz"), None);
    }
}
