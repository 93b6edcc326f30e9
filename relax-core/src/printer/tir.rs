//! Printing loop-level functions (`@T.prim_func`) as TVMScript TIR.
//!
//! 1. The signature: buffer parameters as `A: T.Buffer((n, 4), "float32")`
//!    (with `strides=(…)` when they have strides), scalar ones as
//!    `n: T.int64`; `T.func_attr({…})` for the attributes (without a global
//!    symbol equal to the function's name); then `n = T.int64()` for every
//!    symbolic var of a buffer shape that is not a scalar parameter.
//! 2. Loops: a chain of serial loops from 0, each directly the body of the
//!    previous one and with an extent that does not use the outer loop vars,
//!    prints as `for i, j in T.grid(a, b):`; a single one as
//!    `for i in range(n):`. Other loops print their kind: `T.serial(a, b)`
//!    (serial from a non-zero start), `T.parallel(n)`, `T.vectorized(n)`,
//!    `T.unroll(n)`, with `(min, min + extent)` when the start is not 0;
//!    a loop with annotations prints its kind with TVM's
//!    `annotations={"name": value}` (`T.serial(n, annotations=…)`, never
//!    in a `T.grid`).
//! 3. Blocks print in TVM's order: `with T.block("C"):`, the iteration
//!    variables (one `T.axis.remap("SSR", [i, j, k])` line when there are
//!    several and every value is an enclosing loop var from 0 whose extent
//!    is the domain's, else one
//!    `vi = T.axis.spatial(extent, value)` / `T.axis.reduce` line each, the
//!    domain as `(min, min + extent)` when it does not start at 0),
//!    `T.reads(…)`, `T.writes(…)`, `T.sblock_attr({…})` for the block's
//!    annotations, the `alloc_buffers`, `with T.init():`,
//!    then the body. A region prints as the point `A[vi, vk]` where every
//!    extent is 1, else with slices `A[vi, 0:128]`.
//! 4. Statements: `C[vi, vj] = value`; `if cond:` / `else:`;
//!    `T.evaluate(e)`; a `Seq` as its statements in order (an empty one as
//!    `pass`). `Allocate` prints as `name = T.alloc_buffer(shape, dtype)`
//!    and `LetStmt` as `x: T.int32 = value` (TVM's spelling), each followed
//!    by its body at the same indentation: their scope runs to the end of
//!    the enclosing statement list, which is how the parser reads them back.
//!    `T.alloc_buffer` leaves out the dtype when it is `float32`, as TVM does.
//!    Two shapes are therefore printed alike and read back as one: an
//!    `Allocate` followed by more statements of a `Seq` reads back with
//!    those statements in its body, and an `Allocate` that starts a block's
//!    body reads back as one of the block's `alloc_buffers`. Both keep the
//!    program's meaning (the scratch is live and zero-filled over the same
//!    statements that use it).
//! 5. Expressions print through the PrimExpr printer of `prim.rs` (the
//!    loop-level forms `A[i, j]` loads, `T.Cast("float32", x)`, `T.exp(x)`
//!    intrinsics, `T.Select(c, t, f)`, `T.float32(1.0)` float literals are
//!    its own) with one difference: `/` for division of floats (`//` stays
//!    floor division of integers).
//!
//! Buffers and variables print through the function's name table, so two
//! buffers or loop vars with the same name hint print as `A` and `A_1`.

use super::names::sanitize;
use super::prim::{py_tuple, quote};
use super::relax::Printer;
use crate::ir::function::attr;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::ir::Attrs;
use crate::tir::{Block, Buffer, BufferRegion, ForKind, IterKind, PrimFunc, PrimFuncParam, Stmt};
use relax_runtime::DataType;

/// A loop var of an enclosing loop and that loop's extent, for `remap`.
struct LoopScope {
    var: TirVar,
    from_zero: bool,
    extent: PrimExpr,
}

/// The root block of a PrimFunc body, when the parser would make the same
/// block from its contents: named `root`, without iteration variables,
/// init or regions, around a body with blocks, and the body's only
/// statement.
fn implicit_root(body: &Stmt) -> Option<&Block> {
    let Stmt::Block(b) = body else { return None };
    let plain = b.name == "root"
        && b.iter_vars.is_empty()
        && b.init.is_none()
        && b.reads.is_empty()
        && b.writes.is_empty()
        && b.body.contains_block();
    plain.then_some(&**b)
}

impl Printer {
    /// The PrimFunc `f`, named `name`.
    pub(crate) fn prim_func(&mut self, name: &str, f: &PrimFunc) {
        self.uses_tir = true;
        let global_symbol = f.attrs.get(attr::GLOBAL_SYMBOL).and_then(|v| v.as_str());
        let mut options = Vec::new();
        if global_symbol.is_none() {
            options.push("private=True");
        }
        if f.body.contains_block() {
            // TVM 0.27 accepts blocks only in functions marked schedulable.
            options.push("s_tir=True");
        }
        if options.is_empty() {
            self.line("@T.prim_func");
        } else {
            self.line(&format!("@T.prim_func({})", options.join(", ")));
        }
        let mut params = Vec::new();
        let mut shape_vars: Vec<TirVar> = Vec::new();
        for (k, p) in f.params.iter().enumerate() {
            // Scalar parameters declared after this one: TVM reads a dim
            // naming one only as a string.
            let later: Vec<&TirVar> = f.params[k..]
                .iter()
                .filter_map(|p| match p {
                    PrimFuncParam::Scalar(v) => Some(v),
                    PrimFuncParam::Buffer(_) => None,
                })
                .collect();
            params.push(match p {
                PrimFuncParam::Buffer(b) => {
                    let name = self.buffer_name(b);
                    for d in b.shape() {
                        d.collect_vars(&mut shape_vars);
                    }
                    let mut text = format!(
                        "{name}: T.Buffer({}, {}",
                        self.signature_dims(b.shape(), &later),
                        quote(&b.dtype().to_string())
                    );
                    if !b.strides().is_empty() {
                        text.push_str(&format!(", strides={}", self.tir_tuple(b.strides())));
                    }
                    text.push(')');
                    text
                }
                PrimFuncParam::Scalar(v) => {
                    format!("{}: T.{}", self.tir_var_name(v), v.dtype())
                }
            });
        }
        self.line(&format!("def {}({}):", sanitize(name), params.join(", ")));
        self.indent += 1;
        let attrs = if global_symbol == Some(name) {
            f.attrs.without(attr::GLOBAL_SYMBOL)
        } else {
            f.attrs.clone()
        };
        if !attrs.is_empty() {
            let dict = self.attr_dict(&attrs);
            self.line(&format!("T.func_attr({dict})"));
        }
        // Variables the body reads that nothing binds are declared too, so
        // the text parses back (TVM prints them the same way).
        for v in f.body.free_vars() {
            if !shape_vars.contains(&v) {
                shape_vars.push(v);
            }
        }
        for v in shape_vars {
            let is_param = f
                .params
                .iter()
                .any(|p| matches!(p, PrimFuncParam::Scalar(s) if *s == v));
            if !is_param {
                let name = self.tir_var_name(&v);
                match &mut self.type_vars {
                    Some(module_vars) if v.dtype() == DataType::int(64) => {
                        module_vars.insert(name);
                    }
                    _ => self.line(&format!("{name} = T.{}()", v.dtype())),
                }
            }
        }
        let mut loops = Vec::new();
        match implicit_root(&f.body) {
            // TVM's form: the root block as a comment, its buffers and body
            // at the function's level (the parser puts the block back).
            Some(root) => {
                self.line("# with T.sblock(\"root\"):");
                for buf in &root.alloc_buffers {
                    self.alloc_buffer_line(buf);
                }
                self.tir_stmt(&root.body, &mut loops);
            }
            None => self.tir_stmt(&f.body, &mut loops),
        }
        self.indent -= 1;
    }

    /// The name of a buffer.
    fn buffer_name(&mut self, b: &Buffer) -> String {
        self.names.get(b.id(), b.name())
    }

    /// A buffer parameter's shape, as TVM 0.27 writes it: a dim that is
    /// neither a constant nor a variable, or that names a scalar parameter
    /// declared `later`, is a string (`"m * 4"`), which TVM reads after
    /// every parameter is declared.
    fn signature_dims(&mut self, dims: &[PrimExpr], later: &[&TirVar]) -> String {
        let items: Vec<String> = dims
            .iter()
            .map(|d| {
                let text = self.tir_expr(d);
                let declared = d.as_var().is_some_and(|v| !later.contains(&v));
                if d.as_int().is_some() || declared {
                    text
                } else {
                    quote(&text)
                }
            })
            .collect();
        py_tuple(&items)
    }

    /// `(a, b)` of PrimExprs.
    fn tir_tuple(&mut self, items: &[PrimExpr]) -> String {
        let items: Vec<String> = items.iter().map(|d| self.tir_expr(d)).collect();
        py_tuple(&items)
    }

    /// `T.alloc_buffer((n, 4))` / `T.alloc_buffer((n,), "int32")`.
    fn alloc_buffer_line(&mut self, b: &Buffer) {
        let name = self.buffer_name(b);
        let mut args = vec![self.tir_tuple(b.shape())];
        if b.dtype() != DataType::f32() {
            args.push(quote(&b.dtype().to_string()));
        }
        if !b.strides().is_empty() {
            args.push(format!("strides={}", self.tir_tuple(b.strides())));
        }
        if b.scope() != "global" {
            args.push(format!("scope={}", quote(b.scope())));
        }
        self.line(&format!("{name} = T.alloc_buffer({})", args.join(", ")));
    }

    /// Writes the lines of `s`; `loops` are the enclosing loops, innermost
    /// last.
    fn tir_stmt(&mut self, s: &Stmt, loops: &mut Vec<LoopScope>) {
        match s {
            Stmt::Seq(items) if items.is_empty() => self.line("pass"),
            Stmt::Seq(items) => {
                for it in items {
                    self.tir_stmt(it, loops);
                }
            }
            Stmt::For { .. } => self.tir_for(s, loops),
            Stmt::Block(b) => self.tir_block(b, loops),
            Stmt::BufferStore {
                buffer,
                value,
                indices,
            } => {
                let target = self.tir_access(buffer, indices);
                let value = self.tir_expr(value);
                self.line(&format!("{target} = {value}"));
            }
            Stmt::Allocate { buffer, body } => {
                self.alloc_buffer_line(buffer);
                self.tir_stmt(body, loops);
            }
            Stmt::IfThenElse {
                cond,
                then_case,
                else_case,
            } => {
                let cond = self.tir_expr(cond);
                self.line(&format!("if {cond}:"));
                self.tir_nested(then_case, loops);
                if let Some(e) = else_case {
                    self.line("else:");
                    self.tir_nested(e, loops);
                }
            }
            Stmt::LetStmt { var, value, body } => {
                let value = self.tir_expr(value);
                let name = self.tir_var_name(var);
                self.line(&format!("{name}: T.{} = {value}", var.dtype()));
                self.tir_stmt(body, loops);
            }
            Stmt::Evaluate(e) => {
                // A bare integer is an `int32` in `T.evaluate`, as in TVM.
                let text = match e.kind() {
                    PrimExprKind::IntImm(v) if e.dtype() == DataType::i32() => v.to_string(),
                    _ => self.tir_expr(e),
                };
                self.line(&format!("T.evaluate({text})"));
            }
        }
    }

    /// `s` one level deeper.
    fn tir_nested(&mut self, s: &Stmt, loops: &mut Vec<LoopScope>) {
        self.indent += 1;
        self.tir_stmt(s, loops);
        self.indent -= 1;
    }

    fn tir_for(&mut self, s: &Stmt, loops: &mut Vec<LoopScope>) {
        let Stmt::For {
            loop_var,
            min,
            extent,
            kind,
            body,
            annotations,
        } = s
        else {
            return;
        };
        let depth = loops.len();
        // A loop with annotations prints as `T.serial(…, annotations=…)`.
        let is_grid_loop = |kind: &ForKind, min: &PrimExpr, annotations: &Attrs| {
            *kind == ForKind::Serial && min.as_int() == Some(0) && annotations.is_empty()
        };
        if is_grid_loop(kind, min, annotations) {
            // The longest chain of serial loops from 0 directly nested.
            let mut vars = vec![loop_var.clone()];
            let mut extents = vec![extent.clone()];
            let mut inner: &Stmt = body;
            while let Stmt::For {
                loop_var,
                min,
                extent,
                kind,
                body,
                annotations,
            } = inner
            {
                let uses_outer = extent.free_vars().iter().any(|v| vars.contains(v));
                if !is_grid_loop(kind, min, annotations) || uses_outer {
                    break;
                }
                vars.push(loop_var.clone());
                extents.push(extent.clone());
                inner = body;
            }
            let names: Vec<String> = vars.iter().map(|v| self.tir_var_name(v)).collect();
            let exts: Vec<String> = extents.iter().map(|e| self.tir_expr(e)).collect();
            if vars.len() == 1 {
                self.line(&format!("for {} in range({}):", names[0], exts[0]));
            } else {
                self.line(&format!(
                    "for {} in T.grid({}):",
                    names.join(", "),
                    exts.join(", ")
                ));
            }
            for (v, e) in vars.into_iter().zip(extents) {
                loops.push(LoopScope {
                    var: v,
                    from_zero: true,
                    extent: e,
                });
            }
            self.tir_nested(inner, loops);
        } else {
            let f = match kind {
                ForKind::Serial => "serial",
                ForKind::Parallel => "parallel",
                ForKind::Vectorized => "vectorized",
                ForKind::Unrolled => "unroll",
            };
            let name = self.tir_var_name(loop_var);
            let range = if min.as_int() == Some(0) {
                self.tir_expr(extent)
            } else {
                let end = end_of(min, extent);
                format!("{}, {}", self.tir_expr(min), self.tir_expr(&end))
            };
            let annotations = if annotations.is_empty() {
                String::new()
            } else {
                format!(", annotations={}", self.attr_dict(annotations))
            };
            self.line(&format!("for {name} in T.{f}({range}{annotations}):"));
            loops.push(LoopScope {
                var: loop_var.clone(),
                from_zero: min.as_int() == Some(0),
                extent: extent.clone(),
            });
            self.tir_nested(body, loops);
        }
        loops.truncate(depth);
    }

    fn tir_block(&mut self, b: &Block, loops: &mut Vec<LoopScope>) {
        self.line(&format!("with T.sblock({}):", quote(&b.name)));
        self.indent += 1;
        let remap = b.iter_vars.len() >= 2
            && b.iter_vars.len() == b.iter_values.len()
            && b.iter_vars.iter().zip(&b.iter_values).all(|(iv, value)| {
                value.as_var().is_some_and(|lv| {
                    loops.iter().any(|l| {
                        l.var == *lv
                            && l.from_zero
                            && l.extent == iv.extent
                            && iv.min.as_int() == Some(0)
                            && iv.var.dtype() == lv.dtype()
                    })
                })
            });
        if remap {
            let names: Vec<String> = b
                .iter_vars
                .iter()
                .map(|iv| self.tir_var_name(&iv.var))
                .collect();
            let kinds: String = b
                .iter_vars
                .iter()
                .map(|iv| match iv.kind {
                    IterKind::Spatial => 'S',
                    IterKind::Reduce => 'R',
                })
                .collect();
            let values: Vec<String> = b.iter_values.iter().map(|v| self.tir_expr(v)).collect();
            self.line(&format!(
                "{} = T.axis.remap(\"{kinds}\", [{}])",
                names.join(", "),
                values.join(", ")
            ));
        } else {
            for (iv, value) in b.iter_vars.iter().zip(&b.iter_values) {
                let f = match iv.kind {
                    IterKind::Spatial => "spatial",
                    IterKind::Reduce => "reduce",
                };
                let dom = if iv.min.as_int() == Some(0) {
                    self.tir_expr(&iv.extent)
                } else {
                    let end = end_of(&iv.min, &iv.extent);
                    format!("({}, {})", self.tir_expr(&iv.min), self.tir_expr(&end))
                };
                let value = self.tir_expr(value);
                let name = self.tir_var_name(&iv.var);
                self.line(&format!("{name} = T.axis.{f}({dom}, {value})"));
            }
        }
        let reads: Vec<String> = b.reads.iter().map(|r| self.tir_region(r)).collect();
        self.line(&format!("T.reads({})", reads.join(", ")));
        let writes: Vec<String> = b.writes.iter().map(|r| self.tir_region(r)).collect();
        self.line(&format!("T.writes({})", writes.join(", ")));
        if !b.annotations.is_empty() {
            let dict = self.attr_dict(&b.annotations);
            self.line(&format!("T.sblock_attr({dict})"));
        }
        for a in &b.alloc_buffers {
            self.alloc_buffer_line(a);
        }
        if let Some(init) = &b.init {
            self.line("with T.init():");
            self.tir_nested(init, loops);
        }
        self.tir_stmt(&b.body, loops);
        self.indent -= 1;
    }

    /// `A[vi, 0:128]`: points where the extent is 1, slices elsewhere.
    fn tir_region(&mut self, r: &BufferRegion) -> String {
        let name = self.buffer_name(&r.buffer);
        let items: Vec<String> = r
            .region
            .iter()
            .map(|(min, extent)| {
                if extent.as_int() == Some(1) {
                    self.tir_expr(min)
                } else {
                    let end = end_of(min, extent);
                    format!("{}:{}", self.tir_expr(min), self.tir_expr(&end))
                }
            })
            .collect();
        format!("{name}[{}]", items.join(", "))
    }

    /// `A[i, j]`.
    fn tir_access(&mut self, b: &Buffer, indices: &[PrimExpr]) -> String {
        self.buffer_access(b, indices, true)
    }

    /// A loop-level expression (see the module docs).
    pub(crate) fn tir_expr(&mut self, e: &PrimExpr) -> String {
        self.scalar(e, true)
    }
}

/// `min + extent`, folded when both are integer literals or `min` is 0, in
/// the form the parser takes apart again (see `parser/tir`).
fn end_of(min: &PrimExpr, extent: &PrimExpr) -> PrimExpr {
    match (min.as_int(), extent.as_int()) {
        (Some(0), _) => extent.clone(),
        (Some(a), Some(b)) if min.dtype() == extent.dtype() => match a.checked_add(b) {
            Some(s) => PrimExpr::int_of(min.dtype(), s),
            None => min.clone() + extent.clone(),
        },
        _ => min.clone() + extent.clone(),
    }
}
