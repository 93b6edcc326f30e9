//! The loop-level IR (TVM's TIR / TensorIR).
//!
//! | file | what |
//! |---|---|
//! | [`abi`] | the kernel ABI: which integers a caller passes besides the buffers, in which order |
//! | [`affine`] | index analyses: variables used, a loop variable's coefficient in an offset, loads that run only under a condition |
//! | [`buffer`] | `Buffer`: typed, shaped memory with identity |
//! | [`buffer_uses`] | whether an expression or statement loads or stores a buffer |
//! | [`stmt`] | `Stmt` (`For`, `Block`, `BufferStore`, `Allocate`, `IfThenElse`, `LetStmt`, `Evaluate`, `Seq`) |
//! | [`half_float`] | `float16` and `bfloat16`: stored in 16 bits, computed in `float32`; the rounding rules the interpreter and the LLVM back end share |
//! | [`interp`] | the interpreter: runs a PrimFunc on tensors (the oracle for compiled code) |
//! | [`prim_func`] | `PrimFunc`: buffer and scalar parameters, a body |
//! | [`te`] | tensor expressions: stages lowered to a PrimFunc; `BlockBuilder::call_te` |
//! | [`substitute`] | `Substitute`: a statement with variables and buffers replaced |
//! | [`compact_buffer`] | `compact_buffer_allocation`: intermediates shrunk to what one iteration of their loops touches, allocated there (TVM's `CompactBufferAllocation`) |
//! | [`compute_inline`] | an intermediate buffer's producer inlined into its readers |
//! | [`simplify`] | buffer indices in canonical form under the loops' ranges, symbolic extents included (TVM's `tir.transform.Simplify`) |
//! | [`schedule`] | `Schedule`: TVM's schedule primitives (`split`, `fuse`, `reorder`, `parallel`, …) with a replayable trace |
//!
//! Scalar computation reuses [`crate::ir::PrimExpr`], whose `BufferLoad`,
//! `Cast` and intrinsic `Call` nodes exist for this IR.

pub mod abi;
pub mod affine;
pub mod buffer;
pub mod buffer_uses;
pub mod compact_buffer;
pub mod compute_inline;
pub mod half_float;
pub mod interp;
pub mod prim_func;
pub mod schedule;
pub mod simplify;
pub mod stmt;
pub mod substitute;
pub mod te;

pub use buffer::Buffer;
pub use prim_func::{PrimFunc, PrimFuncParam};
pub use stmt::{Block, BufferRegion, ForKind, IterKind, IterVar, Stmt};
pub use substitute::Substitute;
