//! Relax expressions, bindings and binding blocks: the spec's grammar.
//!
//! A Relax function is two-level, like naga's IR: a tree of *binding blocks*
//! (statements) whose bindings point into a DAG of *expressions*.
//!
//! 1. Nodes are immutable and shared through `Arc`; "rewriting" builds new
//!    nodes. Everything is `Send + Sync`, so a module can live in a `static`.
//! 2. A [`Var`]'s identity is a process-unique id, not its name. A
//!    `DataflowVar` is a `Var` whose [`Var::is_dataflow`] is true (in TVM,
//!    `DataflowVarNode` subclasses `VarNode`); [`ExprKind::Var`] holds both.
//! 3. Every expression has a slot for its [`StructInfo`]. Leaves get it when
//!    built (a `Var` carries its own; a `ShapeExpr`, `PrimValue`, `Constant`,
//!    `StringImm` and `DataTypeImm` know theirs), as does a `Function` (from its
//!    signature) and a `Tuple`/`TupleGetItem` over annotated parts. Calls, `If`
//!    and `SeqExpr` get theirs when normalized. A *normalized* expression
//!    always has one.
//! 4. Normal form (spec §"Normal Form"): a binding's value is a leaf or a
//!    non-leaf whose operands are leaves; a `Function` body and both `If`
//!    branches are `SeqExpr`s; a `SeqExpr` appears nowhere else. The types do
//!    not force it; [`well_formed`](fn@crate::analysis::well_formed) checks it.
//! 5. `PartialEq` is exact equality (vars by identity). Equality modulo the
//!    names and ids of bound variables is [`structural_equal`](fn@crate::ir::structural_equal).

use super::attrs::Attrs;
use super::function::Function;
use super::prim_expr::{fresh_id, PrimExpr};
use super::struct_info::StructInfo;
use relax_runtime::{DataType, Tensor};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A local variable: a `Var`, or a `DataflowVar` scoped to one dataflow block.
#[derive(Clone)]
pub struct Var(Arc<VarNode>);

struct VarNode {
    id: u64,
    name_hint: String,
    struct_info: Option<StructInfo>,
    is_dataflow: bool,
}

impl Var {
    /// A new `Var` with the given StructInfo (its annotation).
    pub fn new(name_hint: impl Into<String>, struct_info: Option<StructInfo>) -> Self {
        Self::make(name_hint.into(), struct_info, false)
    }
    /// A new `DataflowVar`.
    pub fn new_dataflow(name_hint: impl Into<String>, struct_info: Option<StructInfo>) -> Self {
        Self::make(name_hint.into(), struct_info, true)
    }
    fn make(name_hint: String, struct_info: Option<StructInfo>, is_dataflow: bool) -> Self {
        Var(Arc::new(VarNode {
            id: fresh_id(),
            name_hint,
            struct_info,
            is_dataflow,
        }))
    }
    /// A new variable like this one (same kind and name) with other StructInfo.
    pub fn with_struct_info(&self, struct_info: StructInfo) -> Self {
        Self::make(
            self.0.name_hint.clone(),
            Some(struct_info),
            self.0.is_dataflow,
        )
    }
    /// The name it prints with.
    pub fn name_hint(&self) -> &str {
        &self.0.name_hint
    }
    /// The identity.
    pub fn id(&self) -> u64 {
        self.0.id
    }
    /// Its StructInfo, if known.
    pub fn struct_info(&self) -> Option<&StructInfo> {
        self.0.struct_info.as_ref()
    }
    /// Whether this is a `DataflowVar`.
    pub fn is_dataflow(&self) -> bool {
        self.0.is_dataflow
    }
    /// This variable as an expression.
    pub fn to_expr(&self) -> Expr {
        Expr::var(self)
    }
}

impl PartialEq for Var {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}
impl Eq for Var {}
impl Hash for Var {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.id.hash(state)
    }
}
impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_dataflow() {
            "DataflowVar"
        } else {
            "Var"
        };
        write!(f, "{kind}({}#{})", self.0.name_hint, self.0.id)
    }
}

/// A module-level name, bound to a function in an `IRModule`. Two global vars
/// are the same when their names are (names are unique in a module).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalVar(Arc<str>);

impl GlobalVar {
    /// A global var named `name`.
    pub fn new(name: impl AsRef<str>) -> Self {
        GlobalVar(Arc::from(name.as_ref()))
    }
    /// The name.
    pub fn name_hint(&self) -> &str {
        &self.0
    }
}
impl fmt::Debug for GlobalVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GlobalVar({})", self.0)
    }
}

/// A built-in operator, named like `relax.add` or `relax.nn.relu`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Op(Arc<str>);

impl Op {
    /// The operator with registry name `name` (e.g. `relax.matmul`).
    pub fn new(name: impl AsRef<str>) -> Self {
        Op(Arc::from(name.as_ref()))
    }
    /// The registry name.
    pub fn name(&self) -> &str {
        &self.0
    }
}
impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Op({})", self.0)
    }
}

/// A call: `op(args…)` with attributes and explicit result StructInfo.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// An `Op`, a `GlobalVar`, an `ExternFunc` or a var holding a closure.
    pub op: Expr,
    /// The arguments.
    pub args: Vec<Expr>,
    /// Typed attributes of an op call (empty for other calls).
    pub attrs: Attrs,
    /// Result StructInfo given where inference cannot derive it
    /// (`call_tir`'s `out_sinfo`, `call_packed`'s `sinfo_args`).
    pub sinfo_args: Vec<StructInfo>,
}

/// `if cond { true_branch } else { false_branch }`; only one branch runs.
#[derive(Clone, Debug, PartialEq)]
pub struct If {
    /// A `bool` scalar (a rank-0 tensor or a `PrimValue`).
    pub cond: Expr,
    /// Normal form: a `SeqExpr`.
    pub true_branch: Expr,
    /// Normal form: a `SeqExpr`.
    pub false_branch: Expr,
}

/// Binding blocks followed by a result; opens a scope.
#[derive(Clone, Debug, PartialEq)]
pub struct SeqExpr {
    /// The blocks, in order.
    pub blocks: Vec<BindingBlock>,
    /// The result; normal form: a leaf.
    pub body: Expr,
}

/// `var = value`
#[derive(Clone, Debug, PartialEq)]
pub struct VarBinding {
    /// The bound variable (a `DataflowVar` only inside a dataflow block).
    pub var: Var,
    /// The value.
    pub value: Expr,
}

/// `var = match_cast(value, struct_info)`: a run-time check that may bind new
/// symbolic variables (those standing alone as dimensions in `struct_info`).
#[derive(Clone, Debug, PartialEq)]
pub struct MatchCast {
    /// The bound variable; its StructInfo is `struct_info`.
    pub var: Var,
    /// The value checked.
    pub value: Expr,
    /// What the value must match.
    pub struct_info: StructInfo,
}

/// One statement of a binding block.
#[derive(Clone, Debug, PartialEq)]
pub enum Binding {
    /// `var = value`
    VarBinding(VarBinding),
    /// `var = match_cast(value, struct_info)`
    MatchCast(MatchCast),
}

impl Binding {
    /// `var = value`
    pub fn var_binding(var: Var, value: Expr) -> Self {
        Binding::VarBinding(VarBinding { var, value })
    }
    /// `var = match_cast(value, struct_info)`
    pub fn match_cast(var: Var, value: Expr, struct_info: StructInfo) -> Self {
        Binding::MatchCast(MatchCast {
            var,
            value,
            struct_info,
        })
    }
    /// The variable this binding defines.
    pub fn var(&self) -> &Var {
        match self {
            Binding::VarBinding(b) => &b.var,
            Binding::MatchCast(b) => &b.var,
        }
    }
    /// The right-hand side.
    pub fn value(&self) -> &Expr {
        match self {
            Binding::VarBinding(b) => &b.value,
            Binding::MatchCast(b) => &b.value,
        }
    }
    /// The same binding (same variable, same pattern) of another value.
    pub fn with_value(&self, value: Expr) -> Binding {
        match self {
            Binding::VarBinding(b) => Binding::var_binding(b.var.clone(), value),
            Binding::MatchCast(b) => {
                Binding::match_cast(b.var.clone(), value, b.struct_info.clone())
            }
        }
    }
}

/// A sequence of bindings: an ordinary `BindingBlock`, or a `DataflowBlock`
/// (pure, no control flow) when `is_dataflow` is set.
#[derive(Clone, Debug, PartialEq)]
pub struct BindingBlock {
    /// The bindings, in evaluation order.
    pub bindings: Vec<Binding>,
    /// Whether this is a `DataflowBlock`.
    pub is_dataflow: bool,
}

impl BindingBlock {
    /// An ordinary binding block.
    pub fn new(bindings: Vec<Binding>) -> Self {
        BindingBlock {
            bindings,
            is_dataflow: false,
        }
    }
    /// A dataflow block.
    pub fn dataflow(bindings: Vec<Binding>) -> Self {
        BindingBlock {
            bindings,
            is_dataflow: true,
        }
    }
}

/// The node kinds of the spec's `Expr`.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A tensor constant.
    Constant(Tensor),
    /// A `Var` or `DataflowVar` (see [`Var::is_dataflow`]).
    Var(Var),
    /// A module-level function name.
    GlobalVar(GlobalVar),
    /// An immutable tuple.
    Tuple(Vec<Expr>),
    /// Blocks then a result.
    SeqExpr(SeqExpr),
    /// A boxed scalar.
    PrimValue(PrimExpr),
    /// A string value.
    StringImm(String),
    /// A dtype value.
    DataTypeImm(DataType),
    /// A function (a closure when nested).
    Function(Function),
    /// A conditional.
    If(If),
    /// A function found by symbol at run time (a packed function).
    ExternFunc(String),
    /// A call.
    Call(Call),
    /// A shape value of symbolic dimensions.
    ShapeExpr(Vec<PrimExpr>),
    /// The `index`-th field of a tuple.
    TupleGetItem(Expr, usize),
    /// A built-in operator (only as a call's `op`).
    Op(Op),
}

#[derive(Debug, PartialEq)]
struct ExprNode {
    kind: ExprKind,
    struct_info: Option<StructInfo>,
}

/// A Relax expression. See the module docs.
#[derive(Clone, PartialEq)]
pub struct Expr(Arc<ExprNode>);

impl Expr {
    /// A node of the given kind, with the StructInfo leaves know at
    /// construction (see the module docs, point 3).
    pub fn new(kind: ExprKind) -> Self {
        let struct_info = leaf_struct_info(&kind);
        Expr(Arc::new(ExprNode { kind, struct_info }))
    }
    /// This expression with its StructInfo set, in place when this is the
    /// only reference to the node; otherwise as [`Expr::with_struct_info`].
    /// Use it on a node just built: a `SeqExpr` of a large function is not
    /// copied.
    pub fn into_with_struct_info(mut self, struct_info: StructInfo) -> Self {
        match Arc::get_mut(&mut self.0) {
            Some(node) => {
                node.struct_info = Some(struct_info);
                self
            }
            None => self.with_struct_info(struct_info),
        }
    }
    /// This expression with its StructInfo set: a new node holding a copy of
    /// the kind (its children are shared, the kind's own vectors are copied).
    pub fn with_struct_info(&self, struct_info: StructInfo) -> Self {
        Expr(Arc::new(ExprNode {
            kind: self.0.kind.clone(),
            struct_info: Some(struct_info),
        }))
    }
    /// The node kind.
    pub fn kind(&self) -> &ExprKind {
        &self.0.kind
    }
    /// The StructInfo, if known (always, once normalized).
    pub fn struct_info(&self) -> Option<&StructInfo> {
        self.0.struct_info.as_ref()
    }
    /// Whether both are the same node.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// An address usable as a key in side tables (spans, analysis results).
    pub fn node_id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// A tensor constant.
    pub fn constant(data: Tensor) -> Self {
        Self::new(ExprKind::Constant(data))
    }
    /// A variable reference.
    pub fn var(v: &Var) -> Self {
        Self::new(ExprKind::Var(v.clone()))
    }
    /// A global function reference.
    pub fn global_var(gv: GlobalVar) -> Self {
        Self::new(ExprKind::GlobalVar(gv))
    }
    /// A tuple.
    pub fn tuple(fields: Vec<Expr>) -> Self {
        Self::new(ExprKind::Tuple(fields))
    }
    /// Blocks then a body.
    pub fn seq(blocks: Vec<BindingBlock>, body: Expr) -> Self {
        Self::new(ExprKind::SeqExpr(SeqExpr { blocks, body }))
    }
    /// A boxed scalar.
    pub fn prim_value(value: PrimExpr) -> Self {
        Self::new(ExprKind::PrimValue(value))
    }
    /// A string.
    pub fn string(value: impl Into<String>) -> Self {
        Self::new(ExprKind::StringImm(value.into()))
    }
    /// A dtype value.
    pub fn dtype(value: DataType) -> Self {
        Self::new(ExprKind::DataTypeImm(value))
    }
    /// A function.
    pub fn function(f: Function) -> Self {
        Self::new(ExprKind::Function(f))
    }
    /// A conditional.
    pub fn if_(cond: Expr, true_branch: Expr, false_branch: Expr) -> Self {
        Self::new(ExprKind::If(If {
            cond,
            true_branch,
            false_branch,
        }))
    }
    /// An external (packed) function.
    pub fn extern_func(global_symbol: impl Into<String>) -> Self {
        Self::new(ExprKind::ExternFunc(global_symbol.into()))
    }
    /// A call with no attributes and no `sinfo_args`.
    pub fn call(op: Expr, args: Vec<Expr>) -> Self {
        Self::call_full(op, args, Attrs::default(), vec![])
    }
    /// A call with everything spelled out.
    pub fn call_full(op: Expr, args: Vec<Expr>, attrs: Attrs, sinfo_args: Vec<StructInfo>) -> Self {
        Self::new(ExprKind::Call(Call {
            op,
            args,
            attrs,
            sinfo_args,
        }))
    }
    /// A call of the operator named `name` (e.g. `relax.add`).
    pub fn call_op(name: &str, args: Vec<Expr>, attrs: Attrs) -> Self {
        Self::call_full(Self::op(name), args, attrs, vec![])
    }
    /// A shape value.
    pub fn shape(values: Vec<PrimExpr>) -> Self {
        Self::new(ExprKind::ShapeExpr(values))
    }
    /// The `index`-th field of `tuple`.
    pub fn tuple_get_item(tuple: Expr, index: usize) -> Self {
        Self::new(ExprKind::TupleGetItem(tuple, index))
    }
    /// An operator.
    pub fn op(name: &str) -> Self {
        Self::new(ExprKind::Op(Op::new(name)))
    }

    /// The variable, if this is a `Var` or `DataflowVar`.
    pub fn as_var(&self) -> Option<&Var> {
        match self.kind() {
            ExprKind::Var(v) => Some(v),
            _ => None,
        }
    }
    /// The call, if this is one.
    pub fn as_call(&self) -> Option<&Call> {
        match self.kind() {
            ExprKind::Call(c) => Some(c),
            _ => None,
        }
    }
    /// The sequence, if this is one.
    pub fn as_seq(&self) -> Option<&SeqExpr> {
        match self.kind() {
            ExprKind::SeqExpr(s) => Some(s),
            _ => None,
        }
    }
    /// The function, if this is one.
    pub fn as_function(&self) -> Option<&Function> {
        match self.kind() {
            ExprKind::Function(f) => Some(f),
            _ => None,
        }
    }
    /// The operator name, if this is a call of an `Op`.
    pub fn call_op_name(&self) -> Option<&str> {
        match self.as_call()?.op.kind() {
            ExprKind::Op(op) => Some(op.name()),
            _ => None,
        }
    }

    /// Whether this is a *leaf* in the spec's normal form: a var, global var,
    /// constant, shape, prim value, string, dtype, op, extern function, or a
    /// tuple of leaves.
    pub fn is_leaf(&self) -> bool {
        match self.kind() {
            ExprKind::Var(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Constant(_)
            | ExprKind::ShapeExpr(_)
            | ExprKind::PrimValue(_)
            | ExprKind::StringImm(_)
            | ExprKind::DataTypeImm(_)
            | ExprKind::Op(_)
            | ExprKind::ExternFunc(_) => true,
            ExprKind::Tuple(fields) => fields.iter().all(Expr::is_leaf),
            _ => false,
        }
    }
}

/// StructInfo that an expression of this kind has without normalization.
fn leaf_struct_info(kind: &ExprKind) -> Option<StructInfo> {
    Some(match kind {
        ExprKind::Constant(t) => StructInfo::tensor(
            t.shape().iter().map(|&d| PrimExpr::int(d)).collect(),
            t.dtype(),
        ),
        ExprKind::Var(v) => return v.struct_info().cloned(),
        ExprKind::ShapeExpr(values) => StructInfo::shape(values.clone()),
        ExprKind::PrimValue(v) => StructInfo::prim_value(v.clone()),
        ExprKind::StringImm(_) | ExprKind::DataTypeImm(_) => StructInfo::object(),
        ExprKind::ExternFunc(_) => StructInfo::opaque_func(
            super::struct_info::DeriveFunc::Default,
            StructInfo::object(),
        ),
        ExprKind::Function(f) => f.struct_info(),
        ExprKind::Tuple(fields) => StructInfo::tuple(
            fields
                .iter()
                .map(|f| f.struct_info().cloned())
                .collect::<Option<_>>()?,
        ),
        ExprKind::TupleGetItem(t, i) => t.struct_info()?.as_tuple()?.get(*i)?.clone(),
        ExprKind::GlobalVar(_)
        | ExprKind::Call(_)
        | ExprKind::If(_)
        | ExprKind::SeqExpr(_)
        | ExprKind::Op(_) => return None,
    })
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.kind.fmt(f)
    }
}

impl From<&Var> for Expr {
    fn from(v: &Var) -> Self {
        Expr::var(v)
    }
}
impl From<Var> for Expr {
    fn from(v: Var) -> Self {
        Expr::var(&v)
    }
}
