//! The fields of transformers' `config.json` a Llama decoder needs.

use std::path::Path;

/// A `LlamaConfig`, as `save_pretrained` writes it.
#[derive(Clone, Debug)]
pub struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    pub head_dim: usize,
    pub max_position_embeddings: usize,
    pub rms_norm_eps: f64,
    pub rope_theta: f64,
    pub tie_word_embeddings: bool,
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let j: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let field = |name: &str| format!("{}: field `{name}`", path.display());
        let int = |name: &str| -> Result<usize, String> {
            j[name]
                .as_u64()
                .map(|v| v as usize)
                .ok_or_else(|| format!("{}: expected a non-negative integer", field(name)))
        };
        if let Some(act) = j.get("hidden_act") {
            if act != "silu" {
                return Err(format!(
                    "{}: expected \"silu\", found {act}",
                    field("hidden_act")
                ));
            }
        }
        for bias in ["attention_bias", "mlp_bias"] {
            if j.get(bias).is_some_and(|b| b != false) {
                return Err(format!("{}: biases are not supported", field(bias)));
            }
        }
        // transformers 5 writes `rope_parameters: {rope_theta, rope_type}`;
        // earlier versions a top-level `rope_theta`.
        let rope = j.get("rope_parameters").filter(|r| r.is_object());
        if let Some(kind) = rope.and_then(|r| r.get("rope_type")) {
            if kind != "default" {
                return Err(format!(
                    "{}: only the default rotary embedding is supported, found {kind}",
                    field("rope_parameters.rope_type")
                ));
            }
        }
        if j.get("rope_scaling").is_some_and(|r| !r.is_null()) {
            return Err(format!(
                "{}: rope scaling is not supported",
                field("rope_scaling")
            ));
        }
        let rope_theta = rope
            .and_then(|r| r.get("rope_theta"))
            .or_else(|| j.get("rope_theta"))
            .and_then(|t| t.as_f64())
            .unwrap_or(10000.0);
        let heads = int("num_attention_heads")?;
        let hidden = int("hidden_size")?;
        let kv_heads = j
            .get("num_key_value_heads")
            .and_then(|v| v.as_u64())
            .map(|v| v as usize)
            .unwrap_or(heads);
        let head_dim = j
            .get("head_dim")
            .and_then(|v| v.as_u64())
            .map(|v| v as usize)
            .unwrap_or(hidden / heads.max(1));
        if heads == 0
            || kv_heads == 0
            || !heads.is_multiple_of(kv_heads)
            || !head_dim.is_multiple_of(2)
        {
            return Err(format!(
                "{}: {heads} heads, {kv_heads} KV heads of dim {head_dim}: expected heads a multiple of KV heads and an even head dim",
                path.display()
            ));
        }
        Ok(Config {
            vocab_size: int("vocab_size")?,
            hidden_size: hidden,
            intermediate_size: int("intermediate_size")?,
            num_hidden_layers: int("num_hidden_layers")?,
            num_attention_heads: heads,
            num_key_value_heads: kv_heads,
            head_dim,
            max_position_embeddings: int("max_position_embeddings")?,
            rms_norm_eps: j["rms_norm_eps"].as_f64().unwrap_or(1e-6),
            rope_theta,
            tie_word_embeddings: j["tie_word_embeddings"].as_bool().unwrap_or(false),
        })
    }

    /// The multiply-add flops (two per FMA) a prefill of `n` tokens must
    /// do: every layer's projections and MLP for each token, the attention
    /// products over the `n·(n+1)/2` query-key pairs a causal mask leaves
    /// (scores and values), and the `lm_head` for the last token. Norms,
    /// rotary embeddings, the softmax and the elementwise work are not
    /// counted, so `flops / seconds` understates the speed a little.
    pub fn prefill_flops(&self, n: usize) -> f64 {
        let (h, d) = (self.hidden_size as f64, self.head_dim as f64);
        let q = self.num_attention_heads as f64 * d;
        let kv = self.num_key_value_heads as f64 * d;
        let per_token = 2.0 * h * (2.0 * q + 2.0 * kv + 3.0 * self.intermediate_size as f64);
        let pairs = (n * (n + 1) / 2) as f64;
        let attention = 2.0 * 2.0 * self.num_attention_heads as f64 * d * pairs;
        let layers = self.num_hidden_layers as f64;
        layers * (n as f64 * per_token + attention) + 2.0 * h * self.vocab_size as f64
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn prefill_flops_count_projections_causal_attention_and_one_head_row() {
        let c = super::Config {
            vocab_size: 10,
            hidden_size: 4,
            intermediate_size: 6,
            num_hidden_layers: 2,
            num_attention_heads: 2,
            num_key_value_heads: 1,
            head_dim: 2,
            max_position_embeddings: 8,
            rms_norm_eps: 1e-5,
            rope_theta: 1e4,
            tie_word_embeddings: true,
        };
        // Per token and layer: q, o 4×4; k, v 4×2; gate, up, down 4×6:
        // 2·(16 + 16 + 8 + 8 + 72) = 240. Three tokens: 6 causal pairs,
        // each 2 heads · 2 dims · 2 products · 2 flops = 16.
        let want = 2.0 * (3.0 * 240.0 + 6.0 * 16.0) + 2.0 * 4.0 * 10.0;
        assert_eq!(c.prefill_flops(3), want);
    }
}
