//! The hashing walk, consistent with [`super::equal`].
//!
//! It visits fields in the comparison's order and numbers variables where the
//! comparison maps them: a definition gets the next index of its kind (Relax
//! or symbolic), a use of a bound variable hashes that index, a use of a free
//! variable hashes its id (or, when free variables are mapped, gets an index
//! on first sight as the comparison maps it then). Two values that compare
//! equal therefore feed the same stream of bytes to the hasher.
//!
//! The hasher is 64-bit FNV-1a: simple, deterministic and good enough to key
//! tables of IR values.

use super::equal::attr_map;
use super::StructuralEq;
use crate::ir::attrs::{AttrValue, Attrs};
use crate::ir::expr::{Binding, BindingBlock, Expr, ExprKind, SeqExpr, Var};
use crate::ir::function::Function;
use crate::ir::module::{BaseFunc, IRModule};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::ir::struct_info::{StructInfo, StructInfoKind};
use crate::tir::{PrimFunc, PrimFuncParam};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

mod tir;

use crate::fnv::Fnv1a;

/// Tags that keep node kinds and variable states apart in the stream.
#[derive(Clone, Copy)]
#[repr(u8)]
enum Tag {
    Module = 1,
    Relax,
    Prim,
    Buffer,
    Scalar,
    BoundVar,
    FreeVar,
    FirstSeenVar,
    NoneSome,
    VarBinding,
    MatchCast,
    Expr,
    Attrs,
    AttrValue,
    StructInfo,
    PrimExpr,
    Slice,
    Stmt,
    BufferUse,
    Extern,
}

/// The state of one structural hash (see the module docs of
/// [`structural_equal`](mod@crate::ir::structural_equal)). Created by the
/// hashing functions.
pub struct HashWalker {
    state: Fnv1a,
    /// Number free variables on first sight (TVM's `map_free_vars`).
    map_free_vars: bool,
    /// Inside a definition context, where unseen symbolic variables are
    /// definitions.
    defining: bool,
    /// Relax variable id → definition index.
    vars: HashMap<u64, u64>,
    /// Symbolic variable id → definition index.
    tir_vars: HashMap<u64, u64>,
    /// Buffer id → definition index.
    buffers: HashMap<u64, u64>,
}

impl HashWalker {
    pub(super) fn new(map_free_vars: bool) -> Self {
        HashWalker {
            state: Fnv1a::default(),
            map_free_vars,
            defining: false,
            vars: HashMap::new(),
            tir_vars: HashMap::new(),
            buffers: HashMap::new(),
        }
    }

    pub(super) fn finish(&self) -> u64 {
        self.state.finish()
    }

    // ---- plumbing -------------------------------------------------------

    fn tag(&mut self, tag: Tag) {
        self.state.write_u8(tag as u8);
    }

    fn put<T: Hash + ?Sized>(&mut self, value: &T) {
        value.hash(&mut self.state);
    }

    fn len(&mut self, n: usize) {
        self.state.write_u64(n as u64);
    }

    fn defining(&mut self, f: impl FnOnce(&mut Self)) {
        let outer = std::mem::replace(&mut self.defining, true);
        f(self);
        self.defining = outer;
    }

    fn option<T>(&mut self, value: Option<&T>, f: impl FnOnce(&mut Self, &T)) {
        self.tag(Tag::NoneSome);
        self.put(&value.is_some());
        if let Some(v) = value {
            f(self, v)
        }
    }

    /// The index of a Relax variable, numbering it if it is new.
    fn var_index(&mut self, v: &Var) -> u64 {
        let next = self.vars.len() as u64;
        *self.vars.entry(v.id()).or_insert(next)
    }

    fn tir_var_index(&mut self, v: &TirVar) -> u64 {
        let next = self.tir_vars.len() as u64;
        *self.tir_vars.entry(v.id()).or_insert(next)
    }

    // ---- modules and functions ------------------------------------------

    pub(super) fn module(&mut self, m: &IRModule) {
        self.tag(Tag::Module);
        // Only a module with attributes hashes them, so the hashes of
        // modules without (every module of the DSL and the importer) stay.
        if !m.attrs().is_empty() {
            self.attrs(m.attrs());
        }
        self.len(m.len());
        for (gv, f) in m.functions() {
            // Fresh numbering per function, as the comparison uses fresh maps.
            self.vars.clear();
            self.tir_vars.clear();
            self.buffers.clear();
            self.put(gv.name_hint());
            self.base_func(f);
        }
    }

    pub(super) fn base_func(&mut self, f: &BaseFunc) {
        match f {
            BaseFunc::Relax(f) => {
                self.tag(Tag::Relax);
                self.function(f)
            }
            BaseFunc::Prim(f) => {
                self.tag(Tag::Prim);
                self.prim_func(f)
            }
            BaseFunc::Extern(symbol) => {
                self.tag(Tag::Extern);
                self.put(symbol.as_str())
            }
        }
    }

    pub(super) fn function(&mut self, f: &Function) {
        self.tag(Tag::Relax);
        self.len(f.params.len());
        for p in &f.params {
            self.param(p);
        }
        self.struct_info(&f.ret_struct_info);
        self.put(&f.is_pure);
        self.attrs(&f.attrs);
        self.expr(&f.body);
    }

    pub(super) fn prim_func(&mut self, f: &PrimFunc) {
        self.tag(Tag::Prim);
        self.len(f.params.len());
        for p in &f.params {
            self.defining(|h| h.prim_func_param(p));
        }
        self.attrs(&f.attrs);
        self.tir_stmt(&f.body);
    }

    fn prim_func_param(&mut self, p: &PrimFuncParam) {
        match p {
            PrimFuncParam::Buffer(b) => {
                let (shape, dtype) = (b.shape(), &b.dtype());
                self.tag(Tag::Buffer);
                self.put(dtype);
                self.len(shape.len());
                for d in shape {
                    self.prim_expr(d);
                }
                self.def_buffer_rest(b);
            }
            PrimFuncParam::Scalar(v) => {
                self.tag(Tag::Scalar);
                self.tir_var(v);
            }
        }
    }

    pub(super) fn param(&mut self, v: &Var) {
        self.bind_var(v);
        self.defining(|h| h.annotation(v));
    }

    fn bind_var(&mut self, v: &Var) {
        self.put(&v.is_dataflow());
        self.tag(Tag::BoundVar);
        let index = self.var_index(v);
        self.put(&index);
    }

    fn annotation(&mut self, v: &Var) {
        self.option(v.struct_info(), |h, s| h.struct_info(s));
    }

    fn use_var(&mut self, v: &Var) {
        if let Some(&index) = self.vars.get(&v.id()) {
            self.tag(Tag::BoundVar);
            self.put(&index);
        } else if self.map_free_vars {
            self.tag(Tag::FirstSeenVar);
            self.put(&v.is_dataflow());
            self.annotation(v);
            let index = self.var_index(v);
            self.put(&index);
        } else {
            self.tag(Tag::FreeVar);
            self.put(&v.id());
        }
    }

    // ---- blocks and bindings --------------------------------------------

    pub(super) fn seq(&mut self, s: &SeqExpr) {
        self.len(s.blocks.len());
        for b in &s.blocks {
            self.block(b);
        }
        self.expr(&s.body);
    }

    pub(super) fn block(&mut self, b: &BindingBlock) {
        self.put(&b.is_dataflow);
        self.len(b.bindings.len());
        for binding in &b.bindings {
            self.binding(binding);
        }
    }

    pub(super) fn binding(&mut self, b: &Binding) {
        match b {
            Binding::VarBinding(vb) => {
                self.tag(Tag::VarBinding);
                self.bind_var(&vb.var);
                self.expr(&vb.value);
                self.annotation(&vb.var);
            }
            Binding::MatchCast(mc) => {
                self.tag(Tag::MatchCast);
                self.expr(&mc.value);
                self.defining(|h| h.struct_info(&mc.struct_info));
                self.bind_var(&mc.var);
                self.annotation(&mc.var);
            }
        }
    }

    // ---- expressions ----------------------------------------------------

    pub(super) fn expr(&mut self, e: &Expr) {
        use ExprKind as K;
        self.tag(Tag::Expr);
        self.put(&std::mem::discriminant(e.kind()));
        match e.kind() {
            K::Var(v) => self.use_var(v),
            K::Constant(t) => {
                self.put(&t.dtype());
                self.put(t.shape());
                self.put(t.as_bytes());
            }
            K::GlobalVar(gv) => self.put(gv.name_hint()),
            K::Op(op) => self.put(op.name()),
            K::ExternFunc(symbol) => self.put(symbol.as_str()),
            K::StringImm(s) => self.put(s.as_str()),
            K::DataTypeImm(d) => self.put(d),
            K::PrimValue(p) => self.prim_expr(p),
            K::ShapeExpr(values) => {
                self.len(values.len());
                for v in values {
                    self.prim_expr(v);
                }
            }
            K::Tuple(fields) => {
                self.len(fields.len());
                for f in fields {
                    self.expr(f);
                }
            }
            K::TupleGetItem(t, index) => {
                self.expr(t);
                self.put(index);
            }
            K::SeqExpr(s) => self.seq(s),
            K::If(i) => {
                self.expr(&i.cond);
                self.expr(&i.true_branch);
                self.expr(&i.false_branch);
            }
            K::Function(f) => self.function(f),
            K::Call(c) => {
                self.expr(&c.op);
                self.len(c.args.len());
                for a in &c.args {
                    self.expr(a);
                }
                self.attrs(&c.attrs);
                self.len(c.sinfo_args.len());
                for s in &c.sinfo_args {
                    self.struct_info(s);
                }
            }
        }
    }

    // ---- attributes -----------------------------------------------------

    fn attrs(&mut self, attrs: &Attrs) {
        self.tag(Tag::Attrs);
        let map = attr_map(attrs);
        self.len(map.len());
        for (key, value) in map {
            self.put(key);
            self.attr_value(value);
        }
    }

    fn attr_value(&mut self, v: &AttrValue) {
        use AttrValue as V;
        self.tag(Tag::AttrValue);
        self.put(&std::mem::discriminant(v));
        match v {
            V::None => {}
            V::Bool(b) => self.put(b),
            V::Int(i) => self.put(i),
            V::Float(f) => self.put(&f.to_bits()),
            V::Str(s) => self.put(s.as_str()),
            V::DataType(d) => self.put(d),
            V::PrimExpr(e) => self.prim_expr(e),
            V::Array(items) => {
                self.len(items.len());
                for item in items {
                    self.attr_value(item);
                }
            }
        }
    }

    // ---- StructInfo -----------------------------------------------------

    pub(super) fn struct_info(&mut self, s: &StructInfo) {
        use StructInfoKind as K;
        self.tag(Tag::StructInfo);
        self.put(&std::mem::discriminant(s.kind()));
        match s.kind() {
            K::Object => {}
            K::Prim(p) => {
                self.put(&p.dtype);
                self.option(p.value.as_ref(), |h, v| h.prim_expr(v));
            }
            K::Shape(shape) => {
                self.option(shape.values.as_ref(), |h, values| {
                    h.len(values.len());
                    for v in values {
                        h.prim_expr(v);
                    }
                });
                self.put(&shape.ndim);
            }
            K::Tensor(t) => {
                self.put(&t.dtype);
                self.option(t.shape.as_ref(), |h, shape| h.expr(shape));
                self.put(&t.ndim);
            }
            K::Tuple(fields) => {
                self.len(fields.len());
                for f in fields {
                    self.struct_info(f);
                }
            }
            K::Func(f) => {
                self.option(f.params.as_ref(), |h, params| {
                    h.len(params.len());
                    for p in params {
                        h.defining(|h| h.struct_info(p));
                    }
                });
                self.struct_info(&f.ret);
                self.put(&f.purity);
                self.put(&f.derive_func);
            }
        }
    }

    // ---- PrimExprs ------------------------------------------------------

    pub(super) fn prim_expr(&mut self, e: &PrimExpr) {
        self.tag(Tag::PrimExpr);
        self.put(&e.dtype());
        self.put(&std::mem::discriminant(e.kind()));
        match e.kind() {
            PrimExprKind::Var(v) => self.tir_var(v),
            PrimExprKind::IntImm(i) => self.put(i),
            PrimExprKind::FloatImm(f) => self.put(&f.to_bits()),
            PrimExprKind::Call(name, args) => {
                self.put(name);
                for a in args {
                    self.prim_expr(a);
                }
            }
            PrimExprKind::BufferLoad(b, idx) => {
                self.use_buffer(b);
                self.len(idx.len());
                for i in idx {
                    self.prim_expr(i);
                }
            }
            _ => {
                for c in e.children() {
                    self.prim_expr(c);
                }
            }
        }
    }

    fn tir_var(&mut self, v: &TirVar) {
        self.put(&v.dtype());
        let known = self.tir_vars.get(&v.id()).copied();
        match known {
            Some(index) => {
                self.tag(Tag::BoundVar);
                self.put(&index);
            }
            None if self.defining || self.map_free_vars => {
                self.tag(Tag::BoundVar);
                let index = self.tir_var_index(v);
                self.put(&index);
            }
            None => {
                self.tag(Tag::FreeVar);
                self.put(&v.id());
            }
        }
    }

    // ---- sequences ------------------------------------------------------

    pub(super) fn slice<T: StructuralEq>(&mut self, items: &[T]) {
        self.tag(Tag::Slice);
        self.len(items.len());
        for item in items {
            item.hash_into(self);
        }
    }
}
