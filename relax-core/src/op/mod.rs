//! The operator registry: what the compiler knows about each `Op`.
//!
//! 1. An op is identified by its registry name (`relax.add`, `relax.nn.relu`);
//!    the DSL path is `R::add`, `R::nn::relu`.
//! 2. Each entry ([`OpInfo`]) declares the op's StructInfo inference, its
//!    purity and its fusion pattern kind. Attributes, reference kernels and
//!    legalizations are added by later issues.
//! 3. A call to an op that is not registered is treated as TVM treats an op
//!    without `FInferStructInfo`: pure, with result StructInfo from the
//!    call's `sinfo_args` (`default_derive`), else `Object`.
//!
//! The registry is empty until the op-registry issue fills it; this module
//! fixes the shape every analysis programs against.

use crate::arith::Analyzer;
use crate::ir::{Call, StructInfo};
use relax_runtime::Diagnostic;

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

/// A registered operator.
#[derive(Debug)]
pub struct OpInfo {
    /// The registry name, e.g. `relax.add`.
    pub name: &'static str,
    /// StructInfo inference.
    pub infer_struct_info: InferStructInfo,
    /// Whether a call has no side effects.
    pub purity: bool,
    /// The fusion pattern kind.
    pub pattern: OpPatternKind,
}

static REGISTRY: &[OpInfo] = &[];

/// The entry of the op named `name`, if registered.
pub fn lookup(name: &str) -> Option<&'static OpInfo> {
    REGISTRY.iter().find(|op| op.name == name)
}

/// Every registered op.
pub fn all() -> &'static [OpInfo] {
    REGISTRY
}
