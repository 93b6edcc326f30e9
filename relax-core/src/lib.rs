//! relax-core: the Relax compiler.
//!
//! | module | what |
//! |---|---|
//! | [`ir`] | the IR: `PrimExpr`, `StructInfo`, `Expr`, `Function`, `IRModule` |
//! | `frontend` | the DSL: Rust tokens to a checked module, and the generated code (feature "syntax") |
//! | [`codegen`] | LLVM code generation for PrimFuncs (feature "llvm") |
//! | [`block_builder`] | `BlockBuilder`: build functions in normal form |
//! | [`backend`] | `build` and `Target`: from a module to an executable |
//! | [`arith`] | symbolic arithmetic: simplifier and prover |
//! | [`analysis`] | StructInfo relations and derivation, well-formedness, normal forms |
//! | [`printer`] | TVMScript text out (`Display`) |
//! | [`parser`] | TVMScript text in (`FromStr`) |
//! | [`dpl`] | the dataflow pattern language: patterns, matching, graph patterns, rewriting |
//! | [`mutator`] | `ExprMutator` (rewriting through a BlockBuilder), `remove_all_unused`, graph rewrites |
//! | [`visitor`] | `ExprVisitor` (read-only traversal) |
//! | [`tir`] | the loop-level IR: PrimFuncs, their interpreter, tensor expressions |
//! | [`op`] | the operator registry |
//! | [`transform`] | passes (`Pass`, `Sequential`) |
//!
//! See ARCHITECTURE.md at the repository root for the flow between them.

#![warn(missing_docs)]

pub mod analysis;
pub mod arith;
pub mod backend;
pub mod block_builder;
// The LLVM back end's module docs link its private submodules (a map for
// readers of the source); `cargo doc` would reject them as broken links.
#[allow(rustdoc::private_intra_doc_links)]
pub mod codegen;
pub mod dpl;
pub mod fnv;
#[cfg(feature = "syntax")]
pub mod frontend;
pub mod ir;
pub mod mutator;
pub mod parser;
pub mod printer;
pub mod tir;
pub mod visitor;

pub mod op;
pub mod transform;
pub mod tune;

pub use backend::{build, build_with, Target};
pub use block_builder::BlockBuilder;
pub use relax_runtime::{Diagnostic, Error, Span};
