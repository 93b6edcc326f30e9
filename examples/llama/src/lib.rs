//! A Llama-architecture decoder (RMSNorm, rotary embeddings, grouped-query
//! attention, SwiGLU MLP, tied or untied embeddings) whose computation is
//! the relax DSL module of `src/model.rs.in`, compiled ahead of time by
//! build.rs, one module per configuration.
//!
//! Rust holds what is data: the checkpoint's weights (read from
//! `model.safetensors` through a memory map), one key and one value
//! [`relax::Value::KvCache`] per layer, the loop over layers, the rotary
//! tables (from `rope_theta`) and the sampler; the causal mask is
//! `nn.attention`'s own (`BottomRight`).
//!
//! [`Llama::load_quantized`] quantizes the matrices at load, Q8_0 or Q4_0
//! ([`quant`]), and runs the module's `layer_q8`/`layer_q4` and
//! `head_q8`/`head_q4`, whose kernels dequantize inside the matmuls.

use relax::{ndarray, Tensor, Value};
use std::path::Path;

#[allow(clippy::all)]
pub mod model {
    include!(concat!(env!("OUT_DIR"), "/model.rs"));
}

pub mod bandwidth;
pub mod config;
pub mod memory;
pub mod quant;
pub mod sample;
pub mod tokenizer;
pub mod weights;

pub use config::Config;
pub use quant::Quant;
pub use sample::Sampler;
pub use tokenizer::Tokenizer;
pub use weights::{LayerWeights, QuantLayer, Quantized, Weights};

/// Any error of this crate, as text naming what failed.
pub type Error = String;

mod configs {
    include!("configs.rs");
}
pub use configs::{Compiled, CONFIGS};

include!(concat!(env!("OUT_DIR"), "/dispatch.rs"));

/// A loaded model and its caches.
pub struct Llama {
    pub config: Config,
    /// The name of the compiled module (`CONFIGS`) it runs on.
    variant: &'static str,
    weights: Weights,
    /// The quantized matrices, when loaded with `--quant q8|q4`.
    quantized: Option<Quantized>,
    caches: Vec<(Value, Value)>,
    /// Tokens in the caches.
    len: usize,
    /// `inv_freq[j] = theta^(-2j/d)`, as transformers computes it.
    inv_freq: Vec<f32>,
    /// The checkpoint's `tokenizer.json`, when it has one.
    pub tokenizer: Option<Tokenizer>,
}

fn err(context: &str) -> impl Fn(relax::Error) -> Error + '_ {
    move |e| format!("{context}: {e}")
}

impl Llama {
    /// Loads `dir/config.json`, `dir/model.safetensors` and, when present,
    /// `dir/tokenizer.json`; an error if no compiled module has the
    /// checkpoint's dims.
    pub fn load(dir: &Path) -> Result<Llama, Error> {
        Llama::load_quantized(dir, Quant::F32)
    }

    /// [`Llama::load`], the matrices then quantized as `quant` (none for
    /// [`Quant::F32`]).
    pub fn load_quantized(dir: &Path, quant: Quant) -> Result<Llama, Error> {
        let config = Config::load(&dir.join("config.json"))?;
        let dims = [
            config.hidden_size,
            config.num_attention_heads,
            config.num_key_value_heads,
            config.head_dim,
            config.intermediate_size,
            config.vocab_size,
        ];
        let variant = CONFIGS
            .iter()
            .find(|c| {
                [c.hidden, c.heads, c.kv_heads, c.head_dim, c.intermediate, c.vocab] == dims
                    && config.max_position_embeddings <= c.capacity
            })
            .map(|c| c.name)
            .ok_or_else(|| {
                let compiled: Vec<String> = CONFIGS
                    .iter()
                    .map(|c| {
                        format!(
                            "{} {:?} up to {} positions",
                            c.name,
                            [c.hidden, c.heads, c.kv_heads, c.head_dim, c.intermediate, c.vocab],
                            c.capacity
                        )
                    })
                    .collect();
                format!(
                    "{}: no compiled module has this configuration: hidden, heads, kv heads, head dim, intermediate, vocab = {dims:?} with {} positions; compiled: {}; add it to src/configs.rs",
                    dir.display(),
                    config.max_position_embeddings,
                    compiled.join(", ")
                )
            })?;
        let weights = Weights::load(&dir.join("model.safetensors"), &config)?;
        let quantized = match quant {
            Quant::F32 => None,
            q => {
                let quantized = weights.quantize(q)?;
                weights.release_pages();
                Some(quantized)
            }
        };
        let tokenizer = Tokenizer::load(dir)?;
        let d = config.head_dim;
        let inv_freq = (0..d / 2)
            .map(|j| 1.0 / (config.rope_theta as f32).powf((2 * j) as f32 / d as f32))
            .collect();
        let mut llama = Llama {
            config,
            variant,
            weights,
            quantized,
            caches: Vec::new(),
            len: 0,
            inv_freq,
            tokenizer,
        };
        llama.reset()?;
        Ok(llama)
    }

    /// This float32 model on the weights its quantization as `quant`
    /// stands for ([`Weights::round_tripped`]): the quantized model's
    /// results up to float32 rounding, which tells its kernels' error apart
    /// from the format's.
    pub fn round_tripped(mut self, quant: Quant) -> Result<Llama, Error> {
        if self.quantized.is_some() {
            return Err("round_tripped: expected a float32 model, found a quantized one".into());
        }
        self.weights = self.weights.round_tripped(quant)?;
        Ok(self)
    }

    /// Bytes of weights (all read for each decoded token): the
    /// checkpoint's float32 tensors, or with quantized matrices those
    /// matrices and the norms.
    pub fn weight_bytes(&self) -> usize {
        self.quantized
            .as_ref()
            .map_or(self.weights.bytes, |q| q.bytes)
    }

    /// Bytes the key and value caches hold: every layer's two, each
    /// reserving the compiled module's capacity (rows of `(kv heads, head
    /// dim)` float32) once, when the caches are made.
    pub fn cache_bytes(&self) -> usize {
        let c = &self.config;
        let capacity = CONFIGS
            .iter()
            .find(|m| m.name == self.variant)
            .map_or(0, |m| m.capacity);
        c.num_hidden_layers * 2 * capacity * c.num_key_value_heads * c.head_dim * 4
    }

    /// Bytes of the weights copied out of the checkpoint's map at load
    /// (the rest are read in place), or, quantized, the bytes read per
    /// token (the quantized matrices, and the norms).
    pub fn copied_weight_bytes(&self) -> usize {
        self.quantized
            .as_ref()
            .map_or(self.weights.copied_bytes, |q| q.bytes)
    }

    /// How the matrices are held.
    pub fn quant(&self) -> Quant {
        self.quantized.as_ref().map_or(Quant::F32, |q| q.quant)
    }

    /// The time each kernel took since the last [`Llama::generate`]'s
    /// prefill (its decode steps), longest first: empty unless the
    /// environment variable `RELAX_PROFILE` was set before the first call
    /// (see `relax::dsl`).
    pub fn profile(&self) -> Vec<relax::dsl::KernelTime> {
        executable(self.variant).profile()
    }

    /// Empties the caches (new ones; the old ones are dropped).
    pub fn reset(&mut self) -> Result<(), Error> {
        let c = &self.config;
        let zero = ndarray::Array3::<f32>::zeros((0, c.num_key_value_heads, c.head_dim));
        self.caches = (0..c.num_hidden_layers)
            .map(|_| {
                let k = dispatch!(self.variant, new_cache(&zero)).map_err(err("new_cache"))?;
                let v = dispatch!(self.variant, new_cache(&zero)).map_err(err("new_cache"))?;
                Ok((k, v))
            })
            .collect::<Result<_, Error>>()?;
        self.len = 0;
        Ok(())
    }

    /// Runs `tokens` after the cached ones; the logits of the last one.
    /// `prefill` is this on the prompt, `decode` on one token.
    pub fn forward(&mut self, tokens: &[u32]) -> Result<Vec<f32>, Error> {
        let n = tokens.len();
        let c = &self.config;
        if n == 0 {
            return Err("forward: no tokens".into());
        }
        if let Some(&t) = tokens.iter().find(|&&t| t as usize >= c.vocab_size) {
            return Err(format!(
                "token id {t} is not below the vocabulary size {}",
                c.vocab_size
            ));
        }
        let m = self.len + n;
        if m > c.max_position_embeddings {
            return Err(format!(
                "{m} tokens exceed max_position_embeddings = {}",
                c.max_position_embeddings
            ));
        }
        let ids =
            ndarray::Array2::from_shape_vec((1, n), tokens.iter().map(|&t| t as i32).collect())
                .expect("shape");
        let (cos, sin) = self.rotary(self.len, n);
        let eps = ndarray::arr0(c.rms_norm_eps as f32);
        let w = &self.weights;
        let mut x = Tensor::from_ndarray(
            &dispatch!(self.variant, embed(&ids, &w.embed)).map_err(err("embed"))?,
        );
        let total = [m as i64];
        for (i, (l, (kc, vc))) in w.layers.iter().zip(&self.caches).enumerate() {
            let (k, v) = (kc.clone(), vc.clone());
            let (norm1, norm2) = (&l.input_norm, &l.post_norm);
            let y = match &self.quantized {
                None => dispatch!(
                    self.variant,
                    layer(
                        &x, k, v, &total, &cos, &sin, &eps, norm1, &l.wq, &l.wk, &l.wv, &l.wo,
                        norm2, &l.w_gate, &l.w_up, &l.w_down,
                    )
                ),
                Some(q) => {
                    let ql = &q.layers[i];
                    let (wq, wk, wv, wo) = (&ql.wq, &ql.wk, &ql.wv, &ql.wo);
                    let (wg, wu, wd) = (&ql.w_gate, &ql.w_up, &ql.w_down);
                    match q.quant {
                        Quant::Q4 => dispatch!(
                            self.variant,
                            layer_q4(
                                &x, k, v, &total, &cos, &sin, &eps, &q.nibble, norm1, &wq.values,
                                &wq.scales, &wk.values, &wk.scales, &wv.values, &wv.scales,
                                &wo.values, &wo.scales, norm2, &wg.values, &wg.scales, &wu.values,
                                &wu.scales, &wd.values, &wd.scales,
                            )
                        ),
                        _ => dispatch!(
                            self.variant,
                            layer_q8(
                                &x, k, v, &total, &cos, &sin, &eps, norm1, &wq.values, &wq.scales,
                                &wk.values, &wk.scales, &wv.values, &wv.scales, &wo.values,
                                &wo.scales, norm2, &wg.values, &wg.scales, &wu.values, &wu.scales,
                                &wd.values, &wd.scales,
                            )
                        ),
                    }
                }
            }
            .map_err(|e| format!("layer {i}: {e}"))?;
            x = Tensor::from_ndarray(&y);
        }
        self.len = m;
        let logits = match &self.quantized {
            None => dispatch!(self.variant, head(&x, &w.norm, &eps, w.lm_head())),
            Some(q) => {
                let h = &q.lm_head;
                match q.quant {
                    Quant::Q4 => dispatch!(
                        self.variant,
                        head_q4(&x, &w.norm, &eps, &q.nibble, &h.values, &h.scales)
                    ),
                    _ => dispatch!(
                        self.variant,
                        head_q8(&x, &w.norm, &eps, &h.values, &h.scales)
                    ),
                }
            }
        }
        .map_err(err("head"))?;
        Ok(logits.into_raw_vec_and_offset().0)
    }

    /// The rotary tables of positions `start..start + n`, `(n, head_dim)`
    /// each: `cos(p·inv_freq)` twice over (transformers' layout).
    fn rotary(&self, start: usize, n: usize) -> (Tensor, Tensor) {
        let d = self.config.head_dim;
        let angle = |i: usize, j: usize| (start + i) as f32 * self.inv_freq[j % (d / 2)];
        let cos = ndarray::Array2::from_shape_fn((n, d), |(i, j)| angle(i, j).cos());
        let sin = ndarray::Array2::from_shape_fn((n, d), |(i, j)| angle(i, j).sin());
        (Tensor::from_ndarray(&cos), Tensor::from_ndarray(&sin))
    }

    /// Prefills `prompt` (emptying the caches first), then appends
    /// `new_tokens` tokens chosen by `sampler`; returns them and the
    /// seconds spent in prefill and in decode.
    pub fn generate(
        &mut self,
        prompt: &[u32],
        new_tokens: usize,
        sampler: &mut Sampler,
    ) -> Result<(Vec<u32>, f64, f64), Error> {
        self.reset()?;
        let start = std::time::Instant::now();
        let mut logits = self.forward(prompt)?;
        let prefill = start.elapsed().as_secs_f64();
        executable(self.variant).reset_profile();
        let start = std::time::Instant::now();
        let mut out = Vec::with_capacity(new_tokens);
        for i in 0..new_tokens {
            let t = sampler.next(&logits);
            out.push(t);
            if i + 1 < new_tokens {
                logits = self.forward(&[t])?;
            }
        }
        Ok((out, prefill, start.elapsed().as_secs_f64()))
    }

    /// Teacher-forced top-1 agreement with a reference continuation: after
    /// prefilling `prompt` (emptying the caches first), step `t` compares
    /// the argmax of this model's logits with `reference[t]`, then feeds
    /// `reference[t]`. The number of steps that agree (of
    /// `reference.len()`).
    pub fn top1_agreement(&mut self, prompt: &[u32], reference: &[u32]) -> Result<usize, Error> {
        self.reset()?;
        let mut logits = self.forward(prompt)?;
        let mut agree = 0;
        for (t, &want) in reference.iter().enumerate() {
            agree += usize::from(Sampler::greedy().next(&logits) == want);
            if t + 1 < reference.len() {
                logits = self.forward(&[want])?;
            }
        }
        Ok(agree)
    }
}
