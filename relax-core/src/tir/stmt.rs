//! Statements of the loop-level IR (TVM's TIR `Stmt`).
//!
//! 1. A PrimFunc body is a tree of statements over [`Buffer`]s; scalar
//!    computation is `PrimExpr` (with `BufferLoad`, `Cast` and intrinsic
//!    `Call` nodes).
//! 2. A [`Block`] is TensorIR's unit of computation: iteration variables
//!    (spatial or reduce) bound to values of the surrounding loops, the
//!    buffer regions it reads and writes, an optional `init` run on the first
//!    iteration of its reduce variables, and a body. Blocks make the
//!    computation's structure explicit for scheduling and analysis (for
//!    instance the op-pattern annotation); lowering replaces them with plain
//!    loops.
//! 3. Loops carry a [`ForKind`]: serial, parallel (run on the runtime's
//!    thread pool), vectorized (becomes LLVM vectors) or unrolled.
//! 4. Loops and blocks carry annotations, as TVM's do: an ordered map of
//!    name to [`AttrValue`](crate::ir::AttrValue) set by the schedule's
//!    `annotate` and read by whichever pass or back end knows the name;
//!    an unknown name is carried and ignored. Rewrites that keep a loop or
//!    a block keep its annotations.
//! 5. Immutable values; rewriting builds new statements.

use super::buffer::Buffer;
use crate::ir::attrs::Attrs;
use crate::ir::prim_expr::{PrimExpr, TirVar};

/// How a loop runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ForKind {
    /// One iteration after another.
    Serial,
    /// Iterations in parallel on the runtime's thread pool.
    Parallel,
    /// Iterations as the lanes of vector instructions.
    Vectorized,
    /// Fully unrolled.
    Unrolled,
}

/// The kind of a block's iteration variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IterKind {
    /// Indexes the output (`T.axis.spatial`).
    Spatial,
    /// Is reduced over (`T.axis.reduce`).
    Reduce,
}

/// A block iteration variable with its domain `[min, min + extent)`.
#[derive(Clone, Debug, PartialEq)]
pub struct IterVar {
    /// The variable.
    pub var: TirVar,
    /// The domain's start.
    pub min: PrimExpr,
    /// The domain's size.
    pub extent: PrimExpr,
    /// Spatial or reduce.
    pub kind: IterKind,
}

/// A rectangular region of a buffer: `(min, extent)` per dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferRegion {
    /// The buffer.
    pub buffer: Buffer,
    /// One `(min, extent)` per dimension.
    pub region: Vec<(PrimExpr, PrimExpr)>,
}

/// A TensorIR block. See the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The block's name (`T.block("C")`).
    pub name: String,
    /// Its iteration variables.
    pub iter_vars: Vec<IterVar>,
    /// The value of each iteration variable, in terms of the enclosing loops.
    pub iter_values: Vec<PrimExpr>,
    /// The regions read.
    pub reads: Vec<BufferRegion>,
    /// The regions written.
    pub writes: Vec<BufferRegion>,
    /// Run when every reduce variable is at its minimum.
    pub init: Option<Box<Stmt>>,
    /// The computation.
    pub body: Box<Stmt>,
    /// Buffers allocated for the block's lifetime.
    pub alloc_buffers: Vec<Buffer>,
    /// TVM's block annotations (`T.block_attr({"key": value})`): named
    /// hints for later passes and the back end, in the order set.
    pub annotations: Attrs,
}

/// A statement. See the module docs.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `for loop_var in range(min, min + extent): body`
    For {
        /// The loop variable.
        loop_var: TirVar,
        /// The first value.
        min: PrimExpr,
        /// The number of iterations.
        extent: PrimExpr,
        /// How the iterations run.
        kind: ForKind,
        /// The body.
        body: Box<Stmt>,
        /// TVM's loop annotations (`T.serial(0, n, annotations={…})`):
        /// named hints for later passes and the back end, in the order set.
        annotations: Attrs,
    },
    /// A TensorIR block.
    Block(Box<Block>),
    /// `buffer[indices] = value`
    BufferStore {
        /// The buffer written.
        buffer: Buffer,
        /// The value.
        value: PrimExpr,
        /// One index per dimension.
        indices: Vec<PrimExpr>,
    },
    /// A buffer allocated for the duration of `body`.
    Allocate {
        /// The buffer.
        buffer: Buffer,
        /// Where it is live.
        body: Box<Stmt>,
    },
    /// `if cond: then_case else: else_case`
    IfThenElse {
        /// The condition (bool).
        cond: PrimExpr,
        /// Run when true.
        then_case: Box<Stmt>,
        /// Run when false, if any.
        else_case: Option<Box<Stmt>>,
    },
    /// `var = value` in `body`.
    LetStmt {
        /// The variable.
        var: TirVar,
        /// Its value.
        value: PrimExpr,
        /// Where it is visible.
        body: Box<Stmt>,
    },
    /// An expression evaluated for its effect (`T.evaluate(0)` is a no-op).
    Evaluate(PrimExpr),
    /// Statements in order.
    Seq(Vec<Stmt>),
}

impl Stmt {
    /// This statement with `f` applied to each direct child statement (a
    /// loop's, allocation's or let's body, a block's init and body, both
    /// arms of a conditional, each statement of a sequence).
    pub fn try_map_children<E>(
        &self,
        mut f: impl FnMut(&Stmt) -> Result<Stmt, E>,
    ) -> Result<Stmt, E> {
        Ok(match self {
            Stmt::For {
                loop_var,
                min,
                extent,
                kind,
                body,
                annotations,
            } => Stmt::For {
                loop_var: loop_var.clone(),
                min: min.clone(),
                extent: extent.clone(),
                kind: *kind,
                body: Box::new(f(body)?),
                annotations: annotations.clone(),
            },
            Stmt::Block(b) => {
                let mut b = (**b).clone();
                b.init = match &b.init {
                    Some(i) => Some(Box::new(f(i)?)),
                    None => None,
                };
                b.body = Box::new(f(&b.body)?);
                Stmt::Block(Box::new(b))
            }
            Stmt::Allocate { buffer, body } => Stmt::Allocate {
                buffer: buffer.clone(),
                body: Box::new(f(body)?),
            },
            Stmt::IfThenElse {
                cond,
                then_case,
                else_case,
            } => Stmt::IfThenElse {
                cond: cond.clone(),
                then_case: Box::new(f(then_case)?),
                else_case: match else_case {
                    Some(e) => Some(Box::new(f(e)?)),
                    None => None,
                },
            },
            Stmt::LetStmt { var, value, body } => Stmt::LetStmt {
                var: var.clone(),
                value: value.clone(),
                body: Box::new(f(body)?),
            },
            Stmt::Seq(v) => Stmt::Seq(v.iter().map(&mut f).collect::<Result<_, E>>()?),
            Stmt::BufferStore { .. } | Stmt::Evaluate(_) => self.clone(),
        })
    }

    /// `for var in range(extent)` of `kind`, with no annotations.
    pub fn for_range(var: &TirVar, extent: impl Into<PrimExpr>, kind: ForKind, body: Stmt) -> Stmt {
        Stmt::For {
            loop_var: var.clone(),
            min: PrimExpr::int_of(var.dtype(), 0),
            extent: extent.into(),
            kind,
            body: Box::new(body),
            annotations: Attrs::new(),
        }
    }

    /// `buffer[indices] = value`
    pub fn store(buffer: &Buffer, indices: Vec<PrimExpr>, value: PrimExpr) -> Stmt {
        Stmt::BufferStore {
            buffer: buffer.clone(),
            value,
            indices,
        }
    }

    /// The no-op `T.evaluate(0)`.
    pub fn no_op() -> Stmt {
        Stmt::Evaluate(PrimExpr::int_of(relax_runtime::DataType::i32(), 0))
    }

    /// The variables this statement reads that nothing in it binds (a
    /// loop, a `LetStmt`, a block's iteration variables), in order of
    /// first appearance, each once: a PrimFunc's scalar parameters and
    /// shape variables, or variables nothing defines.
    pub fn free_vars(&self) -> Vec<TirVar> {
        let mut out = Vec::new();
        self.collect_free(&mut Vec::new(), &mut out);
        out
    }

    fn collect_free(&self, bound: &mut Vec<TirVar>, out: &mut Vec<TirVar>) {
        fn expr(e: &PrimExpr, bound: &[TirVar], out: &mut Vec<TirVar>) {
            for v in e.free_vars() {
                if !bound.contains(&v) && !out.contains(&v) {
                    out.push(v);
                }
            }
        }
        fn buffer(b: &Buffer, bound: &[TirVar], out: &mut Vec<TirVar>) {
            for e in b.shape().iter().chain(b.strides()) {
                expr(e, bound, out);
            }
        }
        match self {
            Stmt::For {
                loop_var,
                min,
                extent,
                body,
                ..
            } => {
                expr(min, bound, out);
                expr(extent, bound, out);
                bound.push(loop_var.clone());
                body.collect_free(bound, out);
                bound.pop();
            }
            Stmt::Block(b) => {
                for (iv, value) in b.iter_vars.iter().zip(&b.iter_values) {
                    expr(&iv.min, bound, out);
                    expr(&iv.extent, bound, out);
                    expr(value, bound, out);
                }
                for buf in &b.alloc_buffers {
                    buffer(buf, bound, out);
                }
                let depth = bound.len();
                bound.extend(b.iter_vars.iter().map(|iv| iv.var.clone()));
                for r in b.reads.iter().chain(&b.writes) {
                    for (min, extent) in &r.region {
                        expr(min, bound, out);
                        expr(extent, bound, out);
                    }
                }
                if let Some(init) = &b.init {
                    init.collect_free(bound, out);
                }
                b.body.collect_free(bound, out);
                bound.truncate(depth);
            }
            Stmt::BufferStore { value, indices, .. } => {
                for i in indices {
                    expr(i, bound, out);
                }
                expr(value, bound, out);
            }
            Stmt::Allocate { buffer: b, body } => {
                buffer(b, bound, out);
                body.collect_free(bound, out);
            }
            Stmt::IfThenElse {
                cond,
                then_case,
                else_case,
            } => {
                expr(cond, bound, out);
                then_case.collect_free(bound, out);
                if let Some(e) = else_case {
                    e.collect_free(bound, out);
                }
            }
            Stmt::LetStmt { var, value, body } => {
                expr(value, bound, out);
                bound.push(var.clone());
                body.collect_free(bound, out);
                bound.pop();
            }
            Stmt::Evaluate(e) => expr(e, bound, out),
            Stmt::Seq(stmts) => {
                for s in stmts {
                    s.collect_free(bound, out);
                }
            }
        }
    }

    /// Whether a TensorIR block occurs in this statement.
    pub fn contains_block(&self) -> bool {
        match self {
            Stmt::Block(_) => true,
            Stmt::For { body, .. } | Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => {
                body.contains_block()
            }
            Stmt::IfThenElse {
                then_case,
                else_case,
                ..
            } => {
                then_case.contains_block() || else_case.as_ref().is_some_and(|e| e.contains_block())
            }
            Stmt::Seq(stmts) => stmts.iter().any(Stmt::contains_block),
            Stmt::BufferStore { .. } | Stmt::Evaluate(_) => false,
        }
    }
}
