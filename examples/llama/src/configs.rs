// The configurations compiled into Relax modules, one module
// `llama_<name>` each. Read by build.rs (which renders `src/model.rs.in`
// for each) and by the crate (which matches a checkpoint's `config.json`
// against them), through `include!`, so the two cannot disagree.

/// The static dims of one compiled module.
pub struct Compiled {
    pub name: &'static str,
    pub hidden: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub intermediate: usize,
    pub vocab: usize,
    /// Rows reserved in each KV cache: the longest sequence.
    pub capacity: usize,
}

pub const CONFIGS: &[Compiled] = &[
    // scripts/llama_checkpoints.py's "tiny" (the committed test fixture).
    Compiled { name: "tiny", hidden: 64, heads: 4, kv_heads: 2, head_dim: 16, intermediate: 128, vocab: 256, capacity: 256 },
    // Its "small": grouped-query attention, 8 heads over 2 KV heads.
    Compiled { name: "small", hidden: 512, heads: 8, kv_heads: 2, head_dim: 64, intermediate: 1408, vocab: 4096, capacity: 512 },
    // Its "base" (75M parameters).
    Compiled { name: "base", hidden: 768, heads: 12, kv_heads: 4, head_dim: 64, intermediate: 2048, vocab: 32000, capacity: 512 },
];
