//! Analyses over Relax programs.
//!
//! | file | what |
//! |---|---|
//! | [`struct_info_analysis`] | base-of, least common ancestor, erasure, call result derivation |
//! | [`derive`](mod@derive) | the StructInfo of an expression from its parts (spec derivation rules) |
//! | [`well_formed`] | every well-formedness rule of the spec |
//! | [`basic_block_normal_form`] | the basic-block normal form checker |

pub mod basic_block_normal_form;
pub mod derive;
pub mod struct_info_analysis;
pub mod well_formed;

pub use basic_block_normal_form::{check_basic_block_normal_form, is_basic_block_normal_form};
pub use well_formed::well_formed;
