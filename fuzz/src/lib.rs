//! `relax-fuzz`: the fuzz targets (`targets`), their mutator and
//! generator, shared by the fuzzing driver (`main.rs`) and the soak test
//! (`bin/soak.rs`).

pub mod mutate;
pub mod rng;
pub mod targets;
