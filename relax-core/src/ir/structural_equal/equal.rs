//! The comparison walk: both sides in lockstep, a bijection between their
//! variables, and the path to where they first differ.
//!
//! Every method returns at the first difference. The path is a stack of cheap
//! segments that is only formatted when a report is built, so comparing equal
//! values allocates little beyond the variable maps.
//!
//! The order in which fields are visited is part of the contract with
//! [`super::hash`]: both walks must meet definitions in the same order.

use super::{describe, StructuralEq, StructuralMismatch};
use crate::ir::attrs::{AttrValue, Attrs};
use crate::ir::expr::{Binding, BindingBlock, Expr, ExprKind, SeqExpr, Var};
use crate::ir::function::Function;
use crate::ir::module::{BaseFunc, IRModule};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::ir::struct_info::{StructInfo, StructInfoKind};
use crate::tir::{PrimFunc, PrimFuncParam};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::{self, Display};

pub(super) mod tir;

type Outcome = Result<(), StructuralMismatch>;

/// Why two PrimExprs differ, if a reason beyond "the trees differ" is known.
type PrimOutcome = Result<(), Option<String>>;

/// One step of the path to a difference.
enum Seg {
    /// `ret_struct_info`, `value`, `call op`, …
    Field(&'static str),
    /// `block 0`, `binding 1`, `param 2`, `dim 0`
    Item(&'static str, usize),
    /// `call args[0]`, or `[0]` with an empty name
    Index(&'static str, usize),
    /// `attrs["global_symbol"]`
    Key(&'static str, String),
    /// `function main`
    Function(String),
}

impl Display for Seg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Seg::Field(name) => f.write_str(name),
            Seg::Item(name, i) => write!(f, "{name} {i}"),
            Seg::Index(name, i) => write!(f, "{name}[{i}]"),
            Seg::Key(name, key) => write!(f, "{name}[{key:?}]"),
            Seg::Function(name) => write!(f, "function {name}"),
        }
    }
}

/// A variable kind with an identity and a name for reports.
trait Ident: Clone {
    fn ident(&self) -> u64;
    fn label(&self) -> String;
}

impl Ident for Var {
    fn ident(&self) -> u64 {
        self.id()
    }
    fn label(&self) -> String {
        describe::var(self)
    }
}

impl Ident for TirVar {
    fn ident(&self) -> u64 {
        self.id()
    }
    fn label(&self) -> String {
        self.name().to_string()
    }
}

/// A one-to-one mapping between lhs and rhs variables, keyed by id both ways.
struct BiMap<V> {
    forward: HashMap<u64, V>,
    backward: HashMap<u64, V>,
}

impl<V: Ident> BiMap<V> {
    fn new() -> Self {
        BiMap {
            forward: HashMap::new(),
            backward: HashMap::new(),
        }
    }

    /// `Ok(true)` if `a ↦ b` is already mapped, `Ok(false)` if neither side
    /// is mapped, and the reason if either is mapped to something else.
    fn check(&self, a: &V, b: &V) -> Result<bool, String> {
        match (self.forward.get(&a.ident()), self.backward.get(&b.ident())) {
            (Some(m), _) if m.ident() == b.ident() => Ok(true),
            (Some(m), _) => Err(format!(
                "lhs {} corresponds to rhs {}",
                a.label(),
                m.label()
            )),
            (None, Some(m)) => Err(format!(
                "rhs {} corresponds to lhs {}",
                b.label(),
                m.label()
            )),
            (None, None) => Ok(false),
        }
    }

    fn insert(&mut self, a: &V, b: &V) {
        self.forward.insert(a.ident(), b.clone());
        self.backward.insert(b.ident(), a.clone());
    }

    fn clear(&mut self) {
        self.forward.clear();
        self.backward.clear();
    }
}

/// The state of one structural comparison (see the module docs of
/// [`structural_equal`](mod@crate::ir::structural_equal)). Created by the
/// comparison functions.
pub struct Comparer {
    /// Map unmapped variables at use sites too (TVM's `map_free_vars`).
    map_free_vars: bool,
    /// Inside a definition context (parameter annotations, `match_cast`
    /// patterns), where unmapped symbolic variables are defined on first sight.
    defining: bool,
    vars: BiMap<Var>,
    tir_vars: BiMap<TirVar>,
    /// Buffers of the loop-level IR, mapped where they are defined.
    buffers: BiMap<crate::tir::Buffer>,
    path: Vec<Seg>,
    /// Only the answer is wanted: a mismatch is not described (no strings
    /// are built), which keeps `structural_equal` cheap when it says no.
    quiet: bool,
}

impl Comparer {
    pub(super) fn new(map_free_vars: bool) -> Self {
        Comparer {
            map_free_vars,
            defining: false,
            vars: BiMap::new(),
            tir_vars: BiMap::new(),
            buffers: BiMap::new(),
            path: Vec::new(),
            quiet: false,
        }
    }

    /// A comparer that does not describe mismatches (see `quiet`).
    pub(super) fn quiet(map_free_vars: bool) -> Self {
        Comparer {
            quiet: true,
            ..Comparer::new(map_free_vars)
        }
    }

    // ---- plumbing -------------------------------------------------------

    fn mismatch(
        &self,
        lhs: impl Display,
        rhs: impl Display,
        note: Option<String>,
    ) -> StructuralMismatch {
        if self.quiet {
            return StructuralMismatch::new(String::new(), String::new(), String::new(), None);
        }
        let path = self
            .path
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" / ");
        StructuralMismatch::new(path, lhs.to_string(), rhs.to_string(), note)
    }

    fn fail(&self, lhs: impl Display, rhs: impl Display) -> Outcome {
        Err(self.mismatch(lhs, rhs, None))
    }

    fn fail_note(&self, lhs: impl Display, rhs: impl Display, note: String) -> Outcome {
        Err(self.mismatch(lhs, rhs, Some(note)))
    }

    /// Runs `f` with `seg` appended to the path.
    fn at(&mut self, seg: Seg, f: impl FnOnce(&mut Self) -> Outcome) -> Outcome {
        self.path.push(seg);
        let result = f(self);
        self.path.pop();
        result
    }

    /// Runs `f` in a definition context.
    fn defining(&mut self, f: impl FnOnce(&mut Self) -> Outcome) -> Outcome {
        let outer = std::mem::replace(&mut self.defining, true);
        let result = f(self);
        self.defining = outer;
        result
    }

    /// Fails at a `what` segment when two counts differ.
    fn count(&mut self, what: &'static str, a: usize, b: usize) -> Outcome {
        if a == b {
            Ok(())
        } else {
            self.at(Seg::Field(what), |c| c.fail(a, b))
        }
    }

    /// Fails at a `what` segment when two plain values differ.
    fn same<T: PartialEq + Display>(&mut self, what: &'static str, a: T, b: T) -> Outcome {
        if a == b {
            Ok(())
        } else {
            self.at(Seg::Field(what), |c| c.fail(a, b))
        }
    }

    /// Variables are function-local: each pair of module functions starts
    /// with empty maps.
    fn reset(&mut self) {
        self.vars.clear();
        self.tir_vars.clear();
        self.buffers.clear();
    }

    // ---- modules and functions ------------------------------------------

    pub(super) fn module(&mut self, a: &IRModule, b: &IRModule) -> Outcome {
        // A missing function is the most fundamental difference: report it
        // before any difference inside a function both sides have.
        for (gv, fa) in a.functions() {
            if !b.contains(gv) {
                return self.at(Seg::Function(gv.name_hint().to_string()), |c| {
                    c.fail(describe::base_func(fa), "absent")
                });
            }
        }
        for (gv, fb) in b.functions() {
            if !a.contains(gv) {
                return self.at(Seg::Function(gv.name_hint().to_string()), |c| {
                    c.fail("absent", describe::base_func(fb))
                });
            }
        }
        self.attrs("module attrs", a.attrs(), b.attrs())?;
        for ((gv, fa), (_, fb)) in a.functions().zip(b.functions()) {
            self.reset();
            self.at(Seg::Function(gv.name_hint().to_string()), |c| {
                c.base_func(fa, fb)
            })?;
        }
        Ok(())
    }

    pub(super) fn base_func(&mut self, a: &BaseFunc, b: &BaseFunc) -> Outcome {
        match (a, b) {
            (BaseFunc::Relax(fa), BaseFunc::Relax(fb)) => self.function(fa, fb),
            (BaseFunc::Prim(fa), BaseFunc::Prim(fb)) => self.prim_func(fa, fb),
            (BaseFunc::Extern(a), BaseFunc::Extern(b)) if a == b => Ok(()),
            _ => self.fail(describe::base_func(a), describe::base_func(b)),
        }
    }

    pub(super) fn function(&mut self, a: &Function, b: &Function) -> Outcome {
        self.count("number of params", a.params.len(), b.params.len())?;
        for (i, (pa, pb)) in a.params.iter().zip(&b.params).enumerate() {
            self.at(Seg::Item("param", i), |c| c.param(pa, pb))?;
        }
        // The result may only mention variables the parameters defined.
        self.at(Seg::Field("ret_struct_info"), |c| {
            c.struct_info(&a.ret_struct_info, &b.ret_struct_info)
        })?;
        self.same(
            "purity",
            describe::purity(a.is_pure),
            describe::purity(b.is_pure),
        )?;
        self.attrs("attrs", &a.attrs, &b.attrs)?;
        if a.body.as_seq().is_some() && b.body.as_seq().is_some() {
            // The usual body: its blocks are the function's own structure.
            self.expr(&a.body, &b.body)
        } else {
            self.at(Seg::Field("body"), |c| c.expr(&a.body, &b.body))
        }
    }

    pub(super) fn prim_func(&mut self, a: &PrimFunc, b: &PrimFunc) -> Outcome {
        self.count("number of params", a.params.len(), b.params.len())?;
        for (i, (pa, pb)) in a.params.iter().zip(&b.params).enumerate() {
            // Buffer shapes and scalar parameters define symbolic variables.
            self.at(Seg::Item("param", i), |c| {
                c.defining(|c| c.prim_func_param(pa, pb))
            })?;
        }
        self.attrs("attrs", &a.attrs, &b.attrs)?;
        self.at(Seg::Field("body"), |c| c.tir_stmt(&a.body, &b.body))
    }

    fn prim_func_param(&mut self, a: &PrimFuncParam, b: &PrimFuncParam) -> Outcome {
        match (a, b) {
            (PrimFuncParam::Buffer(ba), PrimFuncParam::Buffer(bb)) => {
                let (sa, sb) = (ba.shape(), bb.shape());
                let (da, db) = (&ba.dtype(), &bb.dtype());
                self.same("dtype", da, db)?;
                if sa.len() != sb.len() {
                    return self.at(Seg::Field("shape"), |c| {
                        c.fail(describe::dims(sa), describe::dims(sb))
                    });
                }
                for (j, (x, y)) in sa.iter().zip(sb).enumerate() {
                    self.at(Seg::Item("dim", j), |c| c.prim_expr(x, y))?;
                }
                self.def_buffer_rest(ba, bb)
            }
            (PrimFuncParam::Scalar(x), PrimFuncParam::Scalar(y)) => match self.tir_var(x, y) {
                Ok(()) => Ok(()),
                Err(note) => Err(self.mismatch(
                    format!("scalar {x}: {}", x.dtype()),
                    format!("scalar {y}: {}", y.dtype()),
                    note,
                )),
            },
            _ => self.fail(prim_param(a), prim_param(b)),
        }
    }

    /// A function parameter: a definition whose annotation defines symbolic
    /// variables.
    pub(super) fn param(&mut self, a: &Var, b: &Var) -> Outcome {
        self.bind_var(a, b)?;
        self.defining(|c| c.annotation(a, b))
    }

    /// Maps a defined variable `a ↦ b`; the kinds must agree.
    fn bind_var(&mut self, a: &Var, b: &Var) -> Outcome {
        if a.is_dataflow() != b.is_dataflow() {
            return self.fail(describe::var(a), describe::var(b));
        }
        match self.vars.check(a, b) {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.vars.insert(a, b);
                Ok(())
            }
            Err(note) => self.fail_note(describe::var(a), describe::var(b), note),
        }
    }

    /// Compares the StructInfo annotations of two variables.
    fn annotation(&mut self, a: &Var, b: &Var) -> Outcome {
        self.at(Seg::Field("struct info"), |c| {
            match (a.struct_info(), b.struct_info()) {
                (Some(sa), Some(sb)) => c.struct_info(sa, sb),
                (None, None) => Ok(()),
                (sa, sb) => c.fail(describe::annotation(sa), describe::annotation(sb)),
            }
        })
    }

    /// A variable at a use site: it must agree with the mapping; a free one
    /// is equal only to itself unless free variables are mapped.
    fn use_var(&mut self, a: &Var, b: &Var) -> Outcome {
        match self.vars.check(a, b) {
            Ok(true) => Ok(()),
            Err(note) => self.fail_note(describe::var(a), describe::var(b), note),
            Ok(false) if self.map_free_vars => {
                // First sight of a free variable: compare it as a definition.
                if a.is_dataflow() != b.is_dataflow() {
                    return self.fail(describe::var(a), describe::var(b));
                }
                self.annotation(a, b)?;
                self.vars.insert(a, b);
                Ok(())
            }
            Ok(false) if a.id() == b.id() => {
                self.vars.insert(a, b);
                Ok(())
            }
            Ok(false) => self.fail_note(
                describe::var(a),
                describe::var(b),
                "both are free variables".to_string(),
            ),
        }
    }

    // ---- blocks and bindings --------------------------------------------

    pub(super) fn seq(&mut self, a: &SeqExpr, b: &SeqExpr) -> Outcome {
        self.count("number of blocks", a.blocks.len(), b.blocks.len())?;
        for (i, (ba, bb)) in a.blocks.iter().zip(&b.blocks).enumerate() {
            self.at(Seg::Item("block", i), |c| c.block(ba, bb))?;
        }
        self.at(Seg::Field("result"), |c| c.expr(&a.body, &b.body))
    }

    pub(super) fn block(&mut self, a: &BindingBlock, b: &BindingBlock) -> Outcome {
        if a.is_dataflow != b.is_dataflow {
            return self.fail(
                describe::block_kind(a.is_dataflow),
                describe::block_kind(b.is_dataflow),
            );
        }
        self.count("number of bindings", a.bindings.len(), b.bindings.len())?;
        for (i, (x, y)) in a.bindings.iter().zip(&b.bindings).enumerate() {
            self.at(Seg::Item("binding", i), |c| c.binding(x, y))?;
        }
        Ok(())
    }

    pub(super) fn binding(&mut self, a: &Binding, b: &Binding) -> Outcome {
        match (a, b) {
            (Binding::VarBinding(x), Binding::VarBinding(y)) => {
                // The variable is mapped before the value is compared, so a
                // recursive local function sees itself as bound.
                self.at(Seg::Field("var"), |c| c.bind_var(&x.var, &y.var))?;
                self.at(Seg::Field("value"), |c| c.expr(&x.value, &y.value))?;
                self.at(Seg::Field("var"), |c| c.annotation(&x.var, &y.var))
            }
            (Binding::MatchCast(x), Binding::MatchCast(y)) => {
                self.at(Seg::Field("value"), |c| c.expr(&x.value, &y.value))?;
                self.at(Seg::Field("pattern"), |c| {
                    c.defining(|c| c.struct_info(&x.struct_info, &y.struct_info))
                })?;
                self.at(Seg::Field("var"), |c| {
                    c.bind_var(&x.var, &y.var)?;
                    c.annotation(&x.var, &y.var)
                })
            }
            _ => self.fail(describe::binding(a), describe::binding(b)),
        }
    }

    // ---- expressions ----------------------------------------------------

    pub(super) fn expr(&mut self, a: &Expr, b: &Expr) -> Outcome {
        use ExprKind as K;
        match (a.kind(), b.kind()) {
            (K::Var(x), K::Var(y)) => self.use_var(x, y),
            (K::Constant(x), K::Constant(y)) => {
                if x.dtype() != y.dtype() || x.shape() != y.shape() {
                    return self.fail(describe::expr(a), describe::expr(b));
                }
                match first_difference(x, y) {
                    None => Ok(()),
                    Some(note) => self.fail_note(describe::expr(a), describe::expr(b), note),
                }
            }
            (K::GlobalVar(x), K::GlobalVar(y)) if x == y => Ok(()),
            (K::Op(x), K::Op(y)) if x == y => Ok(()),
            (K::ExternFunc(x), K::ExternFunc(y)) if x == y => Ok(()),
            (K::StringImm(x), K::StringImm(y)) if x == y => Ok(()),
            (K::DataTypeImm(x), K::DataTypeImm(y)) if x == y => Ok(()),
            (K::PrimValue(x), K::PrimValue(y)) => self.prim_expr(x, y),
            (K::ShapeExpr(xs), K::ShapeExpr(ys)) => {
                if xs.len() != ys.len() {
                    return self.fail(describe::expr(a), describe::expr(b));
                }
                for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
                    self.at(Seg::Item("dim", i), |c| c.prim_expr(x, y))?;
                }
                Ok(())
            }
            (K::Tuple(xs), K::Tuple(ys)) => {
                if xs.len() != ys.len() {
                    return self.fail(describe::expr(a), describe::expr(b));
                }
                for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
                    self.at(Seg::Item("field", i), |c| c.expr(x, y))?;
                }
                Ok(())
            }
            (K::TupleGetItem(x, i), K::TupleGetItem(y, j)) => {
                self.at(Seg::Field("tuple"), |c| c.expr(x, y))?;
                self.same("index", i, j)
            }
            (K::SeqExpr(x), K::SeqExpr(y)) => self.seq(x, y),
            (K::If(x), K::If(y)) => {
                self.at(Seg::Field("cond"), |c| c.expr(&x.cond, &y.cond))?;
                self.at(Seg::Field("true branch"), |c| {
                    c.expr(&x.true_branch, &y.true_branch)
                })?;
                self.at(Seg::Field("false branch"), |c| {
                    c.expr(&x.false_branch, &y.false_branch)
                })
            }
            (K::Function(x), K::Function(y)) => self.function(x, y),
            (K::Call(x), K::Call(y)) => {
                self.at(Seg::Field("call op"), |c| c.expr(&x.op, &y.op))?;
                self.count("number of call args", x.args.len(), y.args.len())?;
                for (i, (p, q)) in x.args.iter().zip(&y.args).enumerate() {
                    self.at(Seg::Index("call args", i), |c| c.expr(p, q))?;
                }
                self.attrs("call attrs", &x.attrs, &y.attrs)?;
                self.count(
                    "number of call sinfo_args",
                    x.sinfo_args.len(),
                    y.sinfo_args.len(),
                )?;
                for (i, (p, q)) in x.sinfo_args.iter().zip(&y.sinfo_args).enumerate() {
                    self.at(Seg::Index("call sinfo_args", i), |c| c.struct_info(p, q))?;
                }
                Ok(())
            }
            _ => self.fail(describe::expr(a), describe::expr(b)),
        }
    }

    // ---- attributes -----------------------------------------------------

    /// Attributes compare as maps: the same keys, and equal values per key.
    fn attrs(&mut self, what: &'static str, a: &Attrs, b: &Attrs) -> Outcome {
        let ma = attr_map(a);
        let mb = attr_map(b);
        let keys: BTreeSet<&str> = ma.keys().chain(mb.keys()).copied().collect();
        for key in keys {
            self.at(Seg::Key(what, key.to_string()), |c| {
                match (ma.get(key), mb.get(key)) {
                    (Some(x), Some(y)) => c.attr_value(x, y),
                    (Some(x), None) => c.fail(describe::attr(x), "absent"),
                    (None, Some(y)) => c.fail("absent", describe::attr(y)),
                    (None, None) => Ok(()),
                }
            })?;
        }
        Ok(())
    }

    fn attr_value(&mut self, a: &AttrValue, b: &AttrValue) -> Outcome {
        use AttrValue as V;
        match (a, b) {
            (V::Array(xs), V::Array(ys)) => {
                if xs.len() != ys.len() {
                    return self.fail(describe::attr(a), describe::attr(b));
                }
                for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
                    self.at(Seg::Index("", i), |c| c.attr_value(x, y))?;
                }
                Ok(())
            }
            (V::PrimExpr(x), V::PrimExpr(y)) => self.prim_expr(x, y),
            (V::None, V::None) => Ok(()),
            (V::Bool(x), V::Bool(y)) if x == y => Ok(()),
            (V::Int(x), V::Int(y)) if x == y => Ok(()),
            (V::Float(x), V::Float(y)) if x.to_bits() == y.to_bits() => Ok(()),
            (V::Str(x), V::Str(y)) if x == y => Ok(()),
            (V::DataType(x), V::DataType(y)) if x == y => Ok(()),
            _ => self.fail(describe::attr(a), describe::attr(b)),
        }
    }

    // ---- StructInfo -----------------------------------------------------

    pub(super) fn struct_info(&mut self, a: &StructInfo, b: &StructInfo) -> Outcome {
        use StructInfoKind as K;
        match (a.kind(), b.kind()) {
            (K::Object, K::Object) => Ok(()),
            (K::Prim(x), K::Prim(y)) => {
                self.same("dtype", x.dtype, y.dtype)?;
                match (&x.value, &y.value) {
                    (Some(p), Some(q)) => self.at(Seg::Field("value"), |c| c.prim_expr(p, q)),
                    (None, None) => Ok(()),
                    _ => self.fail(a, b),
                }
            }
            (K::Shape(x), K::Shape(y)) => {
                match (&x.values, &y.values) {
                    (Some(xs), Some(ys)) => {
                        if xs.len() != ys.len() {
                            return self.fail(a, b);
                        }
                        for (i, (p, q)) in xs.iter().zip(ys).enumerate() {
                            self.at(Seg::Item("dim", i), |c| c.prim_expr(p, q))?;
                        }
                    }
                    (None, None) => {}
                    _ => return self.fail(a, b),
                }
                self.same("ndim", x.ndim, y.ndim)
            }
            (K::Tensor(x), K::Tensor(y)) => {
                self.same("dtype", x.dtype, y.dtype)?;
                match (&x.shape, &y.shape) {
                    (Some(p), Some(q)) => self.at(Seg::Field("shape"), |c| c.expr(p, q))?,
                    (None, None) => {}
                    _ => return self.fail(a, b),
                }
                self.same("ndim", x.ndim, y.ndim)
            }
            (K::Tuple(xs), K::Tuple(ys)) => {
                if xs.len() != ys.len() {
                    return self.fail(a, b);
                }
                for (i, (p, q)) in xs.iter().zip(ys).enumerate() {
                    self.at(Seg::Item("field", i), |c| c.struct_info(p, q))?;
                }
                Ok(())
            }
            (K::Func(x), K::Func(y)) => {
                match (&x.params, &y.params) {
                    (Some(xs), Some(ys)) => {
                        if xs.len() != ys.len() {
                            return self.fail(a, b);
                        }
                        for (i, (p, q)) in xs.iter().zip(ys).enumerate() {
                            // Like a function's parameters, a callable's
                            // parameters define the symbolic variables in them.
                            self.at(Seg::Item("param", i), |c| {
                                c.defining(|c| c.struct_info(p, q))
                            })?;
                        }
                    }
                    (None, None) => {}
                    _ => return self.fail(a, b),
                }
                self.at(Seg::Field("ret"), |c| c.struct_info(&x.ret, &y.ret))?;
                self.same(
                    "purity",
                    describe::purity(x.purity),
                    describe::purity(y.purity),
                )?;
                if x.derive_func != y.derive_func {
                    return self.at(Seg::Field("derive_func"), |c| {
                        c.fail(
                            format!("{:?}", x.derive_func),
                            format!("{:?}", y.derive_func),
                        )
                    });
                }
                Ok(())
            }
            _ => self.fail(a, b),
        }
    }

    // ---- PrimExprs ------------------------------------------------------

    /// Compares two PrimExprs and reports a difference at the current path,
    /// showing both whole expressions (they are short) and, for a variable
    /// that breaks the mapping, why.
    pub(super) fn prim_expr(&mut self, a: &PrimExpr, b: &PrimExpr) -> Outcome {
        match self.prim(a, b) {
            Ok(()) => Ok(()),
            Err(note) => Err(self.mismatch(a, b, note)),
        }
    }

    fn prim(&mut self, a: &PrimExpr, b: &PrimExpr) -> PrimOutcome {
        use PrimExprKind as K;
        if a.dtype() != b.dtype() {
            return Err(Some(format!(
                "dtype of lhs {a} is {}, of rhs {b} is {}",
                a.dtype(),
                b.dtype()
            )));
        }
        match (a.kind(), b.kind()) {
            (K::Var(x), K::Var(y)) => self.tir_var(x, y),
            (K::IntImm(x), K::IntImm(y)) if x == y => Ok(()),
            (K::FloatImm(x), K::FloatImm(y)) if x.to_bits() == y.to_bits() => Ok(()),
            (K::Var(_) | K::IntImm(_) | K::FloatImm(_), _) => Err(None),
            (K::Call(x, _), K::Call(y, _)) if x != y => {
                Err(Some(format!("lhs calls T.{x}, rhs calls T.{y}")))
            }
            (K::BufferLoad(x, ix), K::BufferLoad(y, iy)) => {
                self.use_buffer(x, y)?;
                if ix.len() != iy.len() {
                    return Err(Some(format!(
                        "lhs has {} indices, rhs {}",
                        ix.len(),
                        iy.len()
                    )));
                }
                for (p, q) in ix.iter().zip(iy) {
                    self.prim(p, q)?;
                }
                Ok(())
            }
            (x, y) if std::mem::discriminant(x) == std::mem::discriminant(y) => {
                for (p, q) in a.children().into_iter().zip(b.children()) {
                    self.prim(p, q)?;
                }
                Ok(())
            }
            _ => Err(None),
        }
    }

    /// A symbolic variable: mapped ones must agree; unmapped ones are defined
    /// in a definition context (or when mapping free variables), else they
    /// must be the same variable.
    fn tir_var(&mut self, a: &TirVar, b: &TirVar) -> PrimOutcome {
        if a.dtype() != b.dtype() {
            return Err(Some(format!(
                "lhs {a} is {}, rhs {b} is {}",
                a.dtype(),
                b.dtype()
            )));
        }
        match self.tir_vars.check(a, b) {
            Ok(true) => Ok(()),
            Ok(false) if self.defining || self.map_free_vars || a.id() == b.id() => {
                self.tir_vars.insert(a, b);
                Ok(())
            }
            Ok(false) => Err(Some("both are free symbolic variables".to_string())),
            Err(note) => Err(Some(note)),
        }
    }

    // ---- sequences ------------------------------------------------------

    pub(super) fn slice<T: StructuralEq>(&mut self, a: &[T], b: &[T]) -> Outcome {
        self.count("number of elements", a.len(), b.len())?;
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            self.at(Seg::Item("element", i), |c| x.compare(y, c))?;
        }
        Ok(())
    }
}

/// `buffer A: float32 (n, 4)` or `scalar n: int64`.
fn prim_param(p: &PrimFuncParam) -> String {
    match p {
        PrimFuncParam::Buffer(b) => {
            format!(
                "buffer {}: {} {}",
                b.name(),
                b.dtype(),
                describe::dims(b.shape())
            )
        }
        PrimFuncParam::Scalar(v) => format!("scalar {v}: {}", v.dtype()),
    }
}

/// Attributes by key; the first occurrence of a repeated key wins, as in
/// [`Attrs::get`].
pub(super) fn attr_map(attrs: &Attrs) -> BTreeMap<&str, &AttrValue> {
    let mut map = BTreeMap::new();
    for (key, value) in attrs.iter() {
        map.entry(key).or_insert(value);
    }
    map
}

/// Where the data of two constants of equal dtype and shape first differ.
fn first_difference(a: &relax_runtime::Tensor, b: &relax_runtime::Tensor) -> Option<String> {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let byte = x.iter().zip(y).position(|(p, q)| p != q)?;
    let width = a.dtype().size_in_bytes().max(1);
    let element = byte / width;
    let (va, vb) = (a.to_f64_vec(), b.to_f64_vec());
    match (va.get(element), vb.get(element)) {
        (Some(p), Some(q)) => Some(format!("data differ at element {element}: {p} vs {q}")),
        _ => Some(format!("data differ at element {element}")),
    }
}
