//! What the peers benchmark shares with the other benchmark crates: the
//! machine's limits (`limits.rs`), measured in the same run as the figures
//! they judge. `examples/llama/peers` holds prefill to the FMA peak with it.

pub mod limits;
