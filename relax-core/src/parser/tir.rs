//! Lowering of `@T.prim_func` definitions to [`PrimFunc`]s.
//!
//! The signature: parameters are buffers (`A: T.Buffer((n, 4), "float32")`,
//! dtype `float32` when omitted, `strides=(…)` optional) or scalars
//! (`n: T.int64`). Scalar parameters are declared before any buffer shape is
//! read, so `(A: T.Buffer((n,)), n: T.int64)` refers to the scalar `n`; other
//! symbolic vars are declared by the body's `n = T.int64()` lines.
//!
//! The body is the printer's format (see [`crate::printer`]'s `tir.rs`):
//!
//! 1. `for i in range(n)` / `range(a, b)`, `T.serial`, `T.parallel`,
//!    `T.vectorized`, `T.unroll` (one or two bounds) and
//!    `for i, j in T.grid(a, b)` (nested serial loops). A loop var takes the
//!    dtype of the loop's extent. The loop kinds take TVM's
//!    `annotations={"name": value, …}`.
//! 2. `with T.block("C"):` whose leading statements are its header: iteration
//!    variables (`vi = T.axis.spatial(n, i)`, `T.axis.reduce`, a domain
//!    `(lo, hi)` for a non-zero start, or `vi, vj = T.axis.remap("SS", [i, j])`
//!    over enclosing loops, whose ranges give the domains), `T.reads(…)`,
//!    `T.writes(…)`, `T.block_attr({"name": value, …})` (the block's
//!    annotations; `T.sblock_attr` too), `name = T.alloc_buffer(…)` (the
//!    block's `alloc_buffers`) and `with T.init():`; the remaining statements are the
//!    body. An iteration variable takes its value's dtype.
//! 3. `C[vi, vj] = value` stores; `if`/`else`; `T.evaluate(e)` (a bare
//!    integer there is an `int32`, as in TVM); `pass` (nothing).
//! 4. Statements that open a scope running to the end of their statement
//!    list: `name = T.alloc_buffer(shape, dtype)` outside a block header is
//!    an `Allocate`, and `x: T.int32 = value` (or `x = value`) a `LetStmt`.
//! 5. A statement list of one statement is that statement, of several a
//!    `Seq`, of none an empty `Seq`.
//! 6. Regions: `A[vi, vk]` is a point (extent 1 per dim); a slice `lo:hi`
//!    has extent `hi - lo`, computed so that what the printer writes for
//!    `min:min + extent` gives back `extent` exactly (a literal difference
//!    when both bounds are literals, `e` when `hi` is `lo + e`); `:` alone is
//!    the whole dim.
//!
//! Expressions are lowered by `tir/expr.rs`.

mod expr;

use super::lower::{Frame, Lowered, Lowerer};
use super::prim::unify;
use super::sinfo::Args;
use super::syntax::{self, ExprKind as SK, FuncDef, LoopLevelStmt, Stmt, StmtKind};
use crate::ir::function::attr;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::ir::Attrs;
use crate::tir::{
    Block, Buffer, BufferRegion, ForKind, IterKind, IterVar, PrimFunc, PrimFuncParam, Stmt as TStmt,
};
use relax_runtime::{DataType, Span};
use std::collections::HashMap;

/// The scopes of a prim_func body: loop, block and let variables and
/// buffers by name (innermost last), and the enclosing loops.
#[derive(Default)]
pub(super) struct TirScope {
    vars: Vec<HashMap<String, TirVar>>,
    buffers: Vec<HashMap<String, Buffer>>,
    /// The enclosing loops: variable, start and extent.
    loops: Vec<(TirVar, PrimExpr, PrimExpr)>,
}

impl TirScope {
    fn push(&mut self) {
        self.vars.push(HashMap::new());
        self.buffers.push(HashMap::new());
    }
    fn pop(&mut self) {
        self.vars.pop();
        self.buffers.pop();
    }
    fn define_var(&mut self, name: &str, v: TirVar) {
        if let Some(s) = self.vars.last_mut() {
            s.insert(name.to_string(), v);
        }
    }
    fn define_buffer(&mut self, name: &str, b: Buffer) {
        if let Some(s) = self.buffers.last_mut() {
            s.insert(name.to_string(), b);
        }
    }
    fn var(&self, name: &str) -> Option<TirVar> {
        self.vars.iter().rev().find_map(|s| s.get(name).cloned())
    }
    fn buffer(&self, name: &str) -> Option<Buffer> {
        self.buffers.iter().rev().find_map(|s| s.get(name).cloned())
    }
}

/// One of a block's header statements, or the first body statement.
enum Header {
    IterVars,
    Reads(Vec<BufferRegion>),
    Writes(Vec<BufferRegion>),
    Alloc,
    Annotations,
    Init(TStmt),
    Body,
}

impl Lowerer<'_> {
    /// Lowers a `@T.prim_func` definition.
    pub(super) fn prim_func(&mut self, f: &FuncDef) -> Lowered<PrimFunc> {
        let errors_before = self.errors.len();
        let mut private = false;
        for d in &f.decorators {
            if let Some((_, _, kwargs)) = d.as_call() {
                for (k, v) in kwargs {
                    match (k.name.as_str(), &v.kind) {
                        ("private", SK::Bool(b)) => private = *b,
                        // TVM 0.27 marks functions with schedulable blocks
                        // `s_tir=True`; every PrimFunc here may have them.
                        ("check_well_formed", _) | ("s_tir", SK::Bool(_)) => {}
                        _ => self.error(
                            "syntax-error",
                            k.span,
                            format!("expected `private=True` or `private=False` in `@T.prim_func(…)`, found `{}`", k.name),
                        ),
                    }
                }
            }
        }
        self.frames.push(Frame {
            is_function: true,
            ..Frame::default()
        });
        self.tir_prelude(f);
        let params = self.prim_func_params(f);
        let mut attrs = Attrs::new();
        if !private {
            attrs = attrs.with(attr::GLOBAL_SYMBOL, f.name.name.as_str());
        }
        let mut body = Vec::new();
        for s in &f.body {
            if let Some(pairs) = self.func_attr_stmt(s, "T.func_attr") {
                for (k, v) in pairs {
                    attrs = attrs.with(&k, v);
                }
                continue;
            }
            if is_sym_decl(s) {
                continue; // declared by `tir_prelude`
            }
            if match_buffer_stmt(s).is_some() {
                continue; // a parameter, read by `prim_func_params`
            }
            body.push(s.clone());
        }
        let mut scope = TirScope::default();
        scope.push();
        for p in &params {
            if let PrimFuncParam::Buffer(b) = p {
                scope.define_buffer(b.name(), b.clone());
            }
        }
        let body = self.tir_stmts(&mut scope, &body);
        self.frames.pop();
        let body = with_root_block(body?);
        (self.errors.len() == errors_before).then_some(PrimFunc {
            params,
            body,
            attrs,
        })
    }

    /// The parameters: scalars first (buffer shapes may use them), then
    /// buffers, returned in written order.
    fn prim_func_params(&mut self, f: &FuncDef) -> Vec<PrimFuncParam> {
        let mut scalars = Vec::new();
        for p in &f.params {
            let Some(a) = &p.annotation else { continue };
            if is_handle(a) && has_match_buffer(f, &p.name.name) {
                continue;
            }
            if let Some(dt) = scalar_annotation(a) {
                match dt {
                    Ok(dt) => {
                        let v = self.declare_sym(&p.name.name, dt);
                        scalars.push((p.name.name.clone(), v));
                    }
                    Err(found) => self.error(
                        "invalid-dtype",
                        a.span,
                        format!("expected a scalar type such as `T.int64`, found `T.{found}`"),
                    ),
                }
            }
        }
        let mut params = Vec::new();
        for p in &f.params {
            let Some(a) = &p.annotation else {
                self.error(
                    "missing-annotation",
                    p.name.span,
                    format!(
                        "expected a `T.Buffer(…)` or scalar type annotation on parameter `{}`, found none",
                        p.name.name
                    ),
                );
                continue;
            };
            // `var_A: T.handle` with `A = T.match_buffer(var_A, shape, dtype)`
            // in the body: the parameter is the buffer `A`. A handle without
            // one stays an opaque scalar parameter.
            let matched = f
                .body
                .iter()
                .filter_map(match_buffer_stmt)
                .find(|m| m.handle == p.name.name);
            if let (true, Some(m)) = (is_handle(a), matched) {
                if let Some(b) =
                    self.buffer_decl(m.target, "T.match_buffer", m.span, m.args, m.kwargs, None)
                {
                    params.push(PrimFuncParam::Buffer(b));
                }
                continue;
            }
            if scalar_annotation(a).is_some() {
                if let Some((_, v)) = scalars.iter().find(|(n, _)| *n == p.name.name) {
                    params.push(PrimFuncParam::Scalar(v.clone()));
                }
                continue;
            }
            let Some((path, args, kwargs)) = a.as_call() else {
                self.error(
                    "unknown-struct-info",
                    a.span,
                    format!("expected `T.Buffer(shape, dtype)` or a scalar type such as `T.int64`, found {}", a.describe()),
                );
                continue;
            };
            if path != "T.Buffer" {
                self.error(
                    "unknown-struct-info",
                    a.span,
                    format!("expected `T.Buffer(shape, dtype)` or a scalar type such as `T.int64`, found a call of `{path}`"),
                );
                continue;
            }
            if let Some(b) = self.buffer_decl(&p.name.name, "T.Buffer", a.span, args, kwargs, None)
            {
                params.push(PrimFuncParam::Buffer(b));
            }
        }
        params
    }

    /// A buffer from `T.Buffer(shape, dtype, strides=…)` or
    /// `T.alloc_buffer(…)`; shapes of the latter may use loop-level names
    /// (`scope`), the former only symbolic variables.
    fn buffer_decl(
        &mut self,
        name: &str,
        path: &str,
        span: Span,
        args: &[syntax::Expr],
        kwargs: &[(syntax::Ident, syntax::Expr)],
        mut scope: Option<&mut TirScope>,
    ) -> Option<Buffer> {
        let mut args = Args::new(args, kwargs);
        let shape = args.take("shape", 0);
        let dtype = args.take("dtype", 0);
        let strides = args.take("strides", usize::MAX);
        let mem_scope = args.take("scope", usize::MAX);
        // `elem_offset=0` is the default, which TVM's printer sometimes
        // writes out; any other offset is not supported.
        if let Some(offset) = args.take("elem_offset", usize::MAX) {
            if !matches!(offset.kind, SK::Int(0)) {
                self.error(
                    "unsupported-syntax",
                    offset.span,
                    format!(
                        "expected `elem_offset=0` (buffers start at their data), found {}",
                        offset.describe()
                    ),
                );
            }
        }
        if let Some(extra) = args.positional.first() {
            self.error(
                "syntax-error",
                extra.span,
                format!(
                    "expected at most a shape and a dtype in `{path}`, found {}",
                    extra.describe()
                ),
            );
        }
        for (k, _) in &args.kwargs {
            self.error(
                "unsupported-syntax",
                k.span,
                format!(
                    "expected `shape`, `dtype`, `strides`, `scope` or `elem_offset` in `{path}`, found `{}`",
                    k.name
                ),
            );
        }
        let mut storage_scope = "global".to_string();
        if let Some(s) = mem_scope {
            match &s.kind {
                SK::Str(v) if scope.is_some() && crate::tir::schedule::set_scope::valid_scope(v) => {
                    storage_scope = v.clone()
                }
                SK::Str(v) if v == "global" => {}
                _ => self.error(
                    "unsupported-syntax",
                    s.span,
                    format!(
                        "expected a storage scope (\"global\", \"local\", \"shared\", …; a parameter's is \"global\"), found {}",
                        s.describe()
                    ),
                ),
            }
        }
        let dtype = match dtype {
            None => Some(DataType::f32()),
            Some(d) => self.dtype_string(d),
        };
        // With a `scope` (`T.alloc_buffer`) a dim may use loop-level names.
        let mut dim = |this: &mut Self, d: &syntax::Expr| match scope.as_deref_mut() {
            Some(sc) => this.tir_index(sc, d),
            None => this.dim(d, false),
        };
        let mut dims_of = |this: &mut Self, e: Option<&syntax::Expr>, what: &str| match e
            .map(|s| (s, &s.kind))
        {
            Some((_, SK::Tuple(items) | SK::List(items))) => this.lower_all(items, &mut dim),
            Some((e, SK::Int(_) | SK::Name(_))) if what == "shape" => dim(this, e).map(|d| vec![d]),
            Some((s, _)) => {
                this.error(
                    "syntax-error",
                    s.span,
                    format!(
                        "expected a {what} tuple such as `(n, 4)`, found {}",
                        s.describe()
                    ),
                );
                None
            }
            None => {
                this.error(
                    "syntax-error",
                    span,
                    format!("expected a {what} in `{path}(…)`, found none"),
                );
                None
            }
        };
        let dims = dims_of(self, shape, "shape");
        let strides = match strides {
            Some(s) => dims_of(self, Some(s), "strides"),
            None => Some(Vec::new()),
        };
        let (dims, dtype, strides) = (dims?, dtype?, strides?);
        if !strides.is_empty() && strides.len() != dims.len() {
            self.error(
                "syntax-error",
                span,
                format!(
                    "expected one stride per dimension in `{path}`, found {} for {}",
                    strides.len(),
                    dims.len()
                ),
            );
            return None;
        }
        let b = Buffer::with_strides(name, dims, dtype, strides);
        Some(if storage_scope == "global" {
            b
        } else {
            b.with_scope(&storage_scope)
        })
    }

    /// Declares `n = T.int64()` variables of a prim_func body.
    fn tir_prelude(&mut self, f: &FuncDef) {
        for s in &f.body {
            if !is_sym_decl(s) {
                continue;
            }
            let StmtKind::Assign { targets, value, .. } = &s.kind else {
                continue;
            };
            let Some((path, [], [])) = value.as_call() else {
                continue;
            };
            let Some(name) = path.strip_prefix("T.") else {
                continue;
            };
            let [t] = targets.as_slice() else { continue };
            match name.parse::<DataType>() {
                Ok(dt) => {
                    self.declare_sym(&t.name, dt);
                }
                Err(_) => self.error(
                    "invalid-dtype",
                    value.span,
                    format!("expected a data type such as `T.int64()`, found `{path}()`"),
                ),
            }
        }
    }

    // ---- statements -----------------------------------------------------

    /// A statement list (see the module docs, 4 and 5).
    fn tir_stmts(&mut self, sc: &mut TirScope, stmts: &[Stmt]) -> Lowered<TStmt> {
        let mut out = Vec::new();
        let mut ok = true;
        for (i, s) in stmts.iter().enumerate() {
            let rest = &stmts[i + 1..];
            // Statements whose scope is the rest of the list.
            if let StmtKind::Assign {
                targets,
                unpack: false,
                annotation,
                value,
            } = &s.kind
            {
                let name = &targets[0].name;
                if let Some((path, args, kwargs)) = value.as_call() {
                    if path == "T.alloc_buffer" {
                        let b = self.buffer_decl(
                            name,
                            "T.alloc_buffer",
                            value.span,
                            args,
                            kwargs,
                            Some(sc),
                        );
                        sc.push();
                        if let Some(b) = &b {
                            sc.define_buffer(name, b.clone());
                        }
                        let body = self.tir_stmts(sc, rest);
                        sc.pop();
                        let (b, body) = (b?, body?);
                        out.push(TStmt::Allocate {
                            buffer: b,
                            body: Box::new(body),
                        });
                        return ok.then(|| seq(out));
                    }
                }
                let value = self.tir_expr(sc, value);
                let dtype = match annotation {
                    Some(a) => self.tir_dtype_annotation(a),
                    None => value.as_ref().map(|v| v.dtype()),
                };
                let var = dtype.map(|dt| TirVar::with_dtype(name.as_str(), dt));
                let value = match (value, &var) {
                    (Some(v), Some(var)) => self.expect_dtype(v, var.dtype(), s.span),
                    _ => None,
                };
                sc.push();
                if let Some(var) = &var {
                    sc.define_var(name, var.clone());
                }
                let body = self.tir_stmts(sc, rest);
                sc.pop();
                let (var, value, body) = (var?, value?, body?);
                out.push(TStmt::LetStmt {
                    var,
                    value,
                    body: Box::new(body),
                });
                return ok.then(|| seq(out));
            }
            match self.tir_stmt(sc, s) {
                Some(Some(st)) => out.push(st),
                Some(None) => {}
                None => ok = false,
            }
        }
        ok.then(|| seq(out))
    }

    /// `x: T.int32` in a let: the dtype. TVM's printer writes a let's
    /// type as `T.let[T.int32]`, which means the same.
    fn tir_dtype_annotation(&mut self, a: &syntax::Expr) -> Option<DataType> {
        let a = match &a.kind {
            SK::Subscript(base, index) if base.dotted().as_deref() == Some("T.let") => index,
            _ => a,
        };
        match scalar_annotation(a) {
            Some(Ok(dt)) => Some(dt),
            _ => {
                self.error(
                    "invalid-dtype",
                    a.span,
                    format!(
                        "expected a scalar type such as `T.int32`, found {}",
                        a.describe()
                    ),
                );
                None
            }
        }
    }

    /// One statement that does not open a scope over the rest of its list;
    /// `Some(None)` when it lowers to nothing (`pass`, a docstring).
    fn tir_stmt(&mut self, sc: &mut TirScope, s: &Stmt) -> Option<Option<TStmt>> {
        match &s.kind {
            StmtKind::Pass => Some(None),
            StmtKind::Expr(e) if matches!(e.kind, SK::Str(_)) => Some(None),
            StmtKind::Expr(e) => {
                let Some((path, args, kwargs)) = e.as_call() else {
                    self.error(
                        "syntax-error",
                        e.span,
                        format!("expected a statement, found {}", e.describe()),
                    );
                    return None;
                };
                if path != "T.evaluate" || args.len() != 1 || !kwargs.is_empty() {
                    self.error(
                        "unsupported-syntax",
                        e.span,
                        format!("expected a loop-level statement (`T.evaluate(…)`, a store, a loop, a block), found a call of `{path}`"),
                    );
                    return None;
                }
                let v = match args[0].kind {
                    SK::Int(v) => PrimExpr::int_of(DataType::i32(), v),
                    _ => self.tir_expr(sc, &args[0])?,
                };
                Some(Some(TStmt::Evaluate(v)))
            }
            StmtKind::If { cond, then, orelse } => {
                let c = self.tir_expr(sc, cond);
                let c = c.and_then(|c| self.expect_dtype(c, DataType::bool(), cond.span));
                sc.push();
                let t = self.tir_stmts(sc, then);
                sc.pop();
                let e = match orelse {
                    Some(o) => {
                        sc.push();
                        let e = self.tir_stmts(sc, o);
                        sc.pop();
                        Some(Some(Box::new(e?)))
                    }
                    None => Some(None),
                };
                Some(Some(TStmt::IfThenElse {
                    cond: c?,
                    then_case: Box::new(t?),
                    else_case: e?,
                }))
            }
            StmtKind::With { item, body } => match item.as_call() {
                Some((p, args, _)) if p == "T.block" => {
                    let name = match args.first().map(|a| &a.kind) {
                        Some(SK::Str(n)) => n.clone(),
                        None => String::new(),
                        Some(_) => {
                            self.error(
                                "syntax-error",
                                item.span,
                                "expected a block name string in `T.block(…)`",
                            );
                            return None;
                        }
                    };
                    self.tir_block(sc, name, body).map(Some)
                }
                Some((p, _, _)) if p == "T.init" => {
                    self.error(
                        "syntax-error",
                        item.span,
                        "expected `with T.init():` only in a block's header, found it elsewhere",
                    );
                    None
                }
                _ => {
                    self.error(
                        "unsupported-syntax",
                        item.span,
                        format!(
                            "expected `with T.block(\"name\"):`, found `with` {}",
                            item.describe()
                        ),
                    );
                    None
                }
            },
            StmtKind::Unsupported(other) => match &other.loop_level {
                Some(LoopLevelStmt::For {
                    targets,
                    iter,
                    body,
                }) => self.tir_for(sc, targets, iter, body).map(Some),
                Some(LoopLevelStmt::ItemAssign { target, value }) => {
                    let SK::Subscript(base, index) = &target.kind else {
                        return None;
                    };
                    let (buffer, indices) = self.tir_access(sc, base, index)?;
                    let v = self.tir_expr(sc, value)?;
                    let v = self.expect_dtype(v, buffer.dtype(), value.span)?;
                    Some(Some(TStmt::BufferStore {
                        buffer,
                        value: v,
                        indices,
                    }))
                }
                None => {
                    self.error(
                        "unsupported-syntax",
                        s.span,
                        format!("expected a loop-level statement, found a `{other}` statement"),
                    );
                    None
                }
            },
            StmtKind::Assign { .. } => {
                self.error(
                    "unsupported-syntax",
                    s.span,
                    "expected one name to bind, found tuple unpacking (only `T.axis.remap` in a block header unpacks)",
                );
                None
            }
            StmtKind::Return(_)
            | StmtKind::FuncDef(_)
            | StmtKind::ClassDef(_)
            | StmtKind::Import => {
                self.error(
                    "syntax-error",
                    s.span,
                    "expected a loop-level statement in a `@T.prim_func` body, found another statement",
                );
                None
            }
        }
    }

    /// `for targets in iter: body`.
    fn tir_for(
        &mut self,
        sc: &mut TirScope,
        targets: &[syntax::Ident],
        iter: &syntax::Expr,
        body: &[Stmt],
    ) -> Lowered<TStmt> {
        let Some((path, args, kwargs)) = iter.as_call() else {
            self.error(
                "syntax-error",
                iter.span,
                format!(
                    "expected `range(…)`, `T.grid(…)` or a loop kind such as `T.parallel(…)`, found {}",
                    iter.describe()
                ),
            );
            return None;
        };
        // `T.serial(0, n, annotations={…})`: TVM's loop annotations, on the
        // loop kinds (not `range` or `T.grid`, which take none).
        let mut annotations = Attrs::new();
        for (k, v) in kwargs {
            let kinds = ["T.serial", "T.parallel", "T.vectorized", "T.unroll"];
            if k.name != "annotations" || !kinds.contains(&path.as_str()) {
                self.error(
                    "unsupported-syntax",
                    k.span,
                    format!(
                        "expected no keyword arguments to `{path}` but `annotations=` (on `T.serial`, `T.parallel`, `T.vectorized` or `T.unroll`), found `{}=`",
                        k.name
                    ),
                );
                return None;
            }
            annotations = Attrs::from_pairs(self.attr_dict(v)?);
        }
        // (kind, [(min, extent)]) per loop, outermost first.
        let mut ranges: Vec<(PrimExpr, PrimExpr)> = Vec::new();
        let kind = match path.as_str() {
            "T.grid" => {
                if args.len() != targets.len() {
                    self.error(
                        "syntax-error",
                        iter.span,
                        format!(
                            "expected one extent per loop variable in `T.grid`, found {} for {}",
                            args.len(),
                            targets.len()
                        ),
                    );
                    return None;
                }
                for a in args {
                    let e = self.tir_index(sc, a)?;
                    ranges.push((PrimExpr::int_of(e.dtype(), 0), e));
                }
                ForKind::Serial
            }
            "range" | "T.serial" | "T.parallel" | "T.vectorized" | "T.unroll" => {
                let kind = match path.as_str() {
                    "T.parallel" => ForKind::Parallel,
                    "T.vectorized" => ForKind::Vectorized,
                    "T.unroll" => ForKind::Unrolled,
                    _ => ForKind::Serial,
                };
                if targets.len() != 1 {
                    self.error(
                        "syntax-error",
                        iter.span,
                        format!("expected one loop variable for `{path}`, found {} (use `T.grid` for several)", targets.len()),
                    );
                    return None;
                }
                match args {
                    [n] => {
                        let e = self.tir_index(sc, n)?;
                        ranges.push((PrimExpr::int_of(e.dtype(), 0), e));
                    }
                    [a, b] => {
                        let lo = self.tir_index(sc, a);
                        let hi = self.tir_index(sc, b);
                        let (lo, hi) = unify::<TirScope>(lo?, hi?);
                        let lo = self.expect_dtype(lo, hi.dtype(), a.span)?;
                        let ext = extent_between(&lo, &hi);
                        ranges.push((lo, ext));
                    }
                    _ => {
                        self.error(
                            "syntax-error",
                            iter.span,
                            format!("expected `{path}(extent)` or `{path}(start, stop)`, found {} arguments", args.len()),
                        );
                        return None;
                    }
                }
                kind
            }
            _ => {
                self.error(
                    "unsupported-syntax",
                    iter.span,
                    format!("expected `range(…)`, `T.grid(…)`, `T.serial`, `T.parallel`, `T.vectorized` or `T.unroll`, found `{path}`"),
                );
                return None;
            }
        };
        sc.push();
        let depth = sc.loops.len();
        let mut vars = Vec::new();
        for (t, (min, extent)) in targets.iter().zip(&ranges) {
            let v = TirVar::with_dtype(t.name.as_str(), extent.dtype());
            sc.define_var(&t.name, v.clone());
            sc.loops.push((v.clone(), min.clone(), extent.clone()));
            vars.push(v);
        }
        let body = self.tir_stmts(sc, body);
        sc.loops.truncate(depth);
        sc.pop();
        let mut s = body?;
        for (v, (min, extent)) in vars.into_iter().zip(ranges).rev() {
            s = TStmt::For {
                loop_var: v,
                min,
                extent,
                kind,
                body: Box::new(s),
                annotations: annotations.clone(),
            };
        }
        Some(s)
    }

    /// `with T.block(name): header… body…`.
    fn tir_block(&mut self, sc: &mut TirScope, name: String, stmts: &[Stmt]) -> Lowered<TStmt> {
        sc.push();
        let r = self.tir_block_inner(sc, name, stmts);
        sc.pop();
        r
    }

    fn tir_block_inner(
        &mut self,
        sc: &mut TirScope,
        name: String,
        stmts: &[Stmt],
    ) -> Lowered<TStmt> {
        let mut block = Block {
            name,
            iter_vars: Vec::new(),
            iter_values: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            init: None,
            body: Box::new(TStmt::Seq(vec![])),
            alloc_buffers: Vec::new(),
            annotations: Attrs::new(),
        };
        let mut ok = true;
        let mut body_start = stmts.len();
        for (i, s) in stmts.iter().enumerate() {
            match self.block_header(sc, s, &mut block) {
                Some(Header::Body) => {
                    body_start = i;
                    break;
                }
                Some(Header::Reads(r)) => block.reads.extend(r),
                Some(Header::Writes(w)) => block.writes.extend(w),
                Some(Header::Init(init)) => {
                    if block.init.is_some() {
                        self.error(
                            "syntax-error",
                            s.span,
                            "expected one `with T.init():` per block, found another",
                        );
                        ok = false;
                    }
                    block.init = Some(Box::new(init));
                }
                Some(Header::IterVars | Header::Alloc | Header::Annotations) => {}
                None => ok = false,
            }
        }
        let body = self.tir_stmts(sc, &stmts[body_start..]);
        block.body = Box::new(body?);
        ok.then(|| TStmt::Block(Box::new(block)))
    }

    /// Classifies (and lowers) a statement at the head of a block.
    fn block_header(&mut self, sc: &mut TirScope, s: &Stmt, block: &mut Block) -> Option<Header> {
        match &s.kind {
            StmtKind::Assign {
                targets,
                annotation: None,
                value,
                ..
            } => {
                let Some((path, args, kwargs)) = value.as_call() else {
                    return Some(Header::Body);
                };
                match path.as_str() {
                    "T.axis.remap" => {
                        self.axis_remap(sc, targets, args, value.span, block)?;
                        Some(Header::IterVars)
                    }
                    "T.axis.spatial" | "T.axis.reduce" | "T.axis.S" | "T.axis.R" => {
                        let kind = if path.ends_with("spatial") || path.ends_with('S') {
                            IterKind::Spatial
                        } else {
                            IterKind::Reduce
                        };
                        let [t] = targets.as_slice() else {
                            self.error(
                                "syntax-error",
                                s.span,
                                format!(
                                    "expected one name bound by `{path}`, found {}",
                                    targets.len()
                                ),
                            );
                            return None;
                        };
                        let ([dom, value_e], []) = (args, kwargs) else {
                            self.error(
                                "syntax-error",
                                value.span,
                                format!("expected `{path}(domain, value)`"),
                            );
                            return None;
                        };
                        let v = self.tir_index(sc, value_e)?;
                        let (min, extent) = match &dom.kind {
                            SK::Tuple(items) if items.len() == 2 => {
                                let lo = self.tir_index(sc, &items[0]);
                                let hi = self.tir_index(sc, &items[1]);
                                let (lo, hi) = unify::<TirScope>(lo?, hi?);
                                let ext = extent_between(&lo, &hi);
                                (lo, ext)
                            }
                            _ => {
                                let e = self.tir_index(sc, dom)?;
                                (PrimExpr::int_of(e.dtype(), 0), e)
                            }
                        };
                        let var = TirVar::with_dtype(t.name.as_str(), v.dtype());
                        sc.define_var(&t.name, var.clone());
                        block.iter_vars.push(IterVar {
                            var,
                            min,
                            extent,
                            kind,
                        });
                        block.iter_values.push(v);
                        Some(Header::IterVars)
                    }
                    "T.alloc_buffer" if targets.len() == 1 => {
                        let name = &targets[0].name;
                        let b =
                            self.buffer_decl(name, &path, value.span, args, kwargs, Some(sc))?;
                        sc.define_buffer(name, b.clone());
                        block.alloc_buffers.push(b);
                        Some(Header::Alloc)
                    }
                    _ => Some(Header::Body),
                }
            }
            StmtKind::Expr(e) => {
                let Some((path, args, _)) = e.as_call() else {
                    return Some(Header::Body);
                };
                match path.as_str() {
                    "T.reads" | "T.writes" => {
                        let items: &[syntax::Expr] = match args {
                            [l] if matches!(l.kind, SK::List(_) | SK::Tuple(_)) => match &l.kind {
                                SK::List(items) | SK::Tuple(items) => items,
                                _ => args,
                            },
                            _ => args,
                        };
                        let mut regions = Vec::new();
                        for r in items {
                            regions.push(self.tir_region(sc, r)?);
                        }
                        Some(if path == "T.reads" {
                            Header::Reads(regions)
                        } else {
                            Header::Writes(regions)
                        })
                    }
                    "T.block_attr" => {
                        let pairs = self.func_attr_stmt(s, "T.block_attr")?;
                        for (k, v) in pairs {
                            block.annotations = block.annotations.with(&k, v);
                        }
                        Some(Header::Annotations)
                    }
                    "T.where" | "T.match_buffer" => {
                        self.error(
                            "unsupported-syntax",
                            e.span,
                            format!("expected an iteration variable, `T.reads`, `T.writes`, `T.block_attr`, `T.alloc_buffer` or `T.init` in the block header, found `{path}` (not supported)"),
                        );
                        None
                    }
                    _ => Some(Header::Body),
                }
            }
            StmtKind::With { item, body } => match item.as_call() {
                Some((p, [], [])) if p == "T.init" => {
                    sc.push();
                    let init = self.tir_stmts(sc, body);
                    sc.pop();
                    init.map(Header::Init)
                }
                _ => Some(Header::Body),
            },
            _ => Some(Header::Body),
        }
    }

    /// `vi, vj = T.axis.remap("SS", [i, j])`.
    fn axis_remap(
        &mut self,
        sc: &mut TirScope,
        targets: &[syntax::Ident],
        args: &[syntax::Expr],
        span: Span,
        block: &mut Block,
    ) -> Option<()> {
        let [kinds, values] = args else {
            self.error(
                "syntax-error",
                span,
                "expected `T.axis.remap(\"SR…\", [loop vars])`",
            );
            return None;
        };
        let (SK::Str(kinds), SK::List(values) | SK::Tuple(values)) = (&kinds.kind, &values.kind)
        else {
            self.error(
                "syntax-error",
                span,
                "expected `T.axis.remap(\"SR…\", [loop vars])`",
            );
            return None;
        };
        if kinds.chars().count() != values.len() || values.len() != targets.len() {
            self.error(
                "syntax-error",
                span,
                format!(
                    "expected as many names, kinds and values in `T.axis.remap`, found {} names, {} kinds and {} values",
                    targets.len(),
                    kinds.chars().count(),
                    values.len()
                ),
            );
            return None;
        }
        let mut new_vars = Vec::new();
        for ((t, k), v) in targets.iter().zip(kinds.chars()).zip(values) {
            let kind = match k {
                'S' => IterKind::Spatial,
                'R' => IterKind::Reduce,
                other => {
                    self.error(
                        "syntax-error",
                        span,
                        format!("expected iteration kinds `S` or `R` in `T.axis.remap`, found `{other}`"),
                    );
                    return None;
                }
            };
            let Some(lv) = v.as_name().and_then(|n| sc.var(n)) else {
                self.error(
                    "syntax-error",
                    v.span,
                    format!(
                        "expected an enclosing loop variable in `T.axis.remap`, found {}",
                        v.describe()
                    ),
                );
                return None;
            };
            let Some((_, min, extent)) = sc.loops.iter().rev().find(|(l, _, _)| *l == lv) else {
                self.error(
                    "syntax-error",
                    v.span,
                    format!(
                        "expected an enclosing loop variable in `T.axis.remap`, found `{}`, which is not a loop variable",
                        lv.name()
                    ),
                );
                return None;
            };
            let var = TirVar::with_dtype(t.name.as_str(), lv.dtype());
            block.iter_vars.push(IterVar {
                var: var.clone(),
                min: min.clone(),
                extent: extent.clone(),
                kind,
            });
            block.iter_values.push(lv.to_expr());
            new_vars.push((t.name.clone(), var));
        }
        // Defined after all values are read: `i, j = remap(…, [j, i])`.
        for (n, v) in new_vars {
            sc.define_var(&n, v);
        }
        Some(())
    }

    /// `A[vi, 0:128]` in `T.reads`/`T.writes`.
    fn tir_region(&mut self, sc: &mut TirScope, r: &syntax::Expr) -> Lowered<BufferRegion> {
        let SK::Subscript(base, index) = &r.kind else {
            // `T.reads(A)`: the whole buffer.
            if let Some(b) = r.as_name().and_then(|n| sc.buffer(n)) {
                let region = b
                    .shape()
                    .iter()
                    .map(|d| (PrimExpr::int_of(d.dtype(), 0), d.clone()))
                    .collect();
                return Some(BufferRegion { buffer: b, region });
            }
            self.error(
                "syntax-error",
                r.span,
                format!(
                    "expected a buffer region such as `A[i, 0:4]`, found {}",
                    r.describe()
                ),
            );
            return None;
        };
        let (buffer, items) = self.tir_subscript(sc, base, index, r.span)?;
        let mut region = Vec::new();
        for (item, dim) in items.into_iter().zip(buffer.shape()) {
            match item.as_call() {
                Some((p, [lo, hi], [])) if p == "slice" => {
                    let lo = match lo.kind {
                        SK::None => PrimExpr::int_of(dim.dtype(), 0),
                        _ => self.tir_index(sc, lo)?,
                    };
                    let hi = match hi.kind {
                        SK::None => dim.clone(),
                        _ => self.tir_index(sc, hi)?,
                    };
                    let (lo, hi) = unify::<TirScope>(lo, hi);
                    if lo.dtype() != hi.dtype() {
                        // As for any binary operator: `hi - lo` needs one dtype.
                        self.error(
                            "syntax-error",
                            item.span,
                            format!(
                                "expected the bounds of a slice of one dtype, found `{lo}` of {} and `{hi}` of {} (use `T.Cast`)",
                                lo.dtype(),
                                hi.dtype()
                            ),
                        );
                        return None;
                    }
                    let ext = extent_between(&lo, &hi);
                    region.push((lo, ext));
                }
                _ => {
                    let e = self.tir_index(sc, item)?;
                    let one = PrimExpr::int_of(e.dtype(), 1);
                    region.push((e, one));
                }
            }
        }
        Some(BufferRegion { buffer, region })
    }
}

/// `hi - lo` in the form that undoes the printer's `min:min + extent`.
fn extent_between(lo: &PrimExpr, hi: &PrimExpr) -> PrimExpr {
    if lo.as_int() == Some(0) {
        return hi.clone();
    }
    if let PrimExprKind::Add(a, e) = hi.kind() {
        if a == lo {
            return e.clone();
        }
    }
    if let (Some(a), Some(b)) = (lo.as_int(), hi.as_int()) {
        if let Some(d) = b.checked_sub(a) {
            return PrimExpr::int_of(hi.dtype(), d);
        }
    }
    hi.clone() - lo.clone()
}

/// A statement list as one statement, flattened as TVM's `SeqStmt`
/// constructor does: no-ops (`T.evaluate(0)`) are dropped, one statement is
/// itself, and none is the no-op.
fn seq(items: Vec<TStmt>) -> TStmt {
    let mut items: Vec<TStmt> = items.into_iter().filter(|s| !is_no_op(s)).collect();
    match items.len() {
        0 => TStmt::no_op(),
        1 => items.pop().unwrap_or_else(TStmt::no_op),
        _ => TStmt::Seq(items),
    }
}

/// `T.evaluate(0)`.
fn is_no_op(s: &TStmt) -> bool {
    matches!(s, TStmt::Evaluate(e) if e.as_int() == Some(0))
}

/// The body of a PrimFunc with blocks in TVM's form: one root block
/// (`with T.sblock("root")`) that owns the buffers allocated at the top
/// level, which TVM's parser adds when the text leaves it out (and TVM's
/// printer leaves out, as a comment).
fn with_root_block(body: TStmt) -> TStmt {
    if !body.contains_block() {
        return body;
    }
    if let TStmt::Block(b) = &body {
        if b.iter_vars.is_empty() && b.init.is_none() {
            return body;
        }
    }
    let mut allocs = Vec::new();
    let body = hoist_allocations(body, &mut allocs);
    TStmt::Block(Box::new(Block {
        name: "root".into(),
        iter_vars: vec![],
        iter_values: vec![],
        reads: vec![],
        writes: vec![],
        init: None,
        body: Box::new(body),
        alloc_buffers: allocs,
        annotations: Attrs::new(),
    }))
}

/// `s` without the allocations at its top level (outside loops and
/// blocks), which go to `allocs`.
fn hoist_allocations(s: TStmt, allocs: &mut Vec<Buffer>) -> TStmt {
    match s {
        TStmt::Allocate { buffer, body } => {
            allocs.push(buffer);
            hoist_allocations(*body, allocs)
        }
        TStmt::Seq(items) => seq(items
            .into_iter()
            .map(|i| hoist_allocations(i, allocs))
            .collect()),
        other => other,
    }
}

/// Whether `s` is `n = T.int64()` (a symbolic variable declaration).
fn is_sym_decl(s: &Stmt) -> bool {
    let StmtKind::Assign {
        targets,
        value,
        annotation: None,
        ..
    } = &s.kind
    else {
        return false;
    };
    targets.len() == 1
        && value.as_call().is_some_and(|(p, a, k)| {
            p.starts_with("T.") && p != "T.alloc_buffer" && a.is_empty() && k.is_empty()
        })
}

/// `T.int64` (also `T.int64()`): the scalar dtype, if `a` names one.
/// `T.handle`: an untyped parameter that a `T.match_buffer` turns into a buffer.
fn is_handle(a: &syntax::Expr) -> bool {
    a.dotted().as_deref() == Some("T.handle")
}

/// Whether the body of `f` matches a buffer to the handle `param`.
fn has_match_buffer(f: &FuncDef, param: &str) -> bool {
    f.body
        .iter()
        .filter_map(match_buffer_stmt)
        .any(|m| m.handle == param)
}

/// `A = T.match_buffer(var_A, shape, dtype, …)`, taken apart.
struct MatchBuffer<'a> {
    target: &'a str,
    handle: &'a str,
    args: &'a [syntax::Expr],
    kwargs: &'a [(syntax::Ident, syntax::Expr)],
    span: Span,
}

fn match_buffer_stmt(s: &Stmt) -> Option<MatchBuffer<'_>> {
    let StmtKind::Assign { targets, value, .. } = &s.kind else {
        return None;
    };
    let (path, args, kwargs) = value.as_call()?;
    if path != "T.match_buffer" || targets.len() != 1 {
        return None;
    }
    let (first, rest) = args.split_first()?;
    Some(MatchBuffer {
        target: &targets[0].name,
        handle: first.as_name()?,
        args: rest,
        kwargs,
        span: value.span,
    })
}

fn scalar_annotation(a: &syntax::Expr) -> Option<Result<DataType, String>> {
    let path = match &a.kind {
        SK::Attr(..) => a.dotted()?,
        SK::Call { func, args, kwargs } if args.is_empty() && kwargs.is_empty() => func.dotted()?,
        _ => return None,
    };
    let name = path.strip_prefix("T.")?;
    if name == "Buffer" {
        return None;
    }
    Some(name.parse().map_err(|_| name.to_string()))
}

#[cfg(test)]
mod tests;
