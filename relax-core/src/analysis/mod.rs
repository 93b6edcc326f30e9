//! Analyses over Relax programs.
//!
//! | file | what |
//! |---|---|
//! | [`struct_info_analysis`] | base-of, least common ancestor, erasure, call result derivation |
//! | [`derive`](mod@derive) | the StructInfo of an expression from its parts (spec derivation rules) |
//! | [`well_formed`](mod@well_formed) | every well-formedness rule of the spec |
//! | [`basic_block_normal_form`] | the basic-block normal form checker |
//! | [`vars`] | free, bound and all variables of an expression |
//! | [`indexed_forward_graph`] | the dataflow graph of a binding block, nodes in topological order |
//! | [`post_dominator_tree`] | post-dominators in that graph (fusion, the pattern language's `dominates`) |
//! | [`graph_partitioner`] | fusion groups of a block by op-pattern kind (FuseOps' grouping) |

pub mod basic_block_normal_form;
pub mod derive;
pub mod graph_partitioner;
pub mod indexed_forward_graph;
pub mod post_dominator_tree;
pub mod struct_info_analysis;
pub mod vars;
pub mod well_formed;

pub use basic_block_normal_form::{check_basic_block_normal_form, is_basic_block_normal_form};
pub use indexed_forward_graph::{GraphNode, IndexedForwardGraph};
pub use post_dominator_tree::PostDominatorTree;
pub use vars::{all_vars, bound_vars, free_vars};
pub use well_formed::well_formed;
