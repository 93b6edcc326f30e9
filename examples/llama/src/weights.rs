//! The checkpoint's tensors, read from `model.safetensors` through a memory
//! map, under the names transformers writes
//! (`model.layers.0.self_attn.q_proj.weight`, …).
//!
//! Each float32 tensor reads the map in place ([`relax::Tensor::from_external`]
//! keeps the map alive): nothing is copied at load, and the page cache is
//! the only copy of the weights in memory. A tensor that the file stores at
//! an address that is not a multiple of 4 is copied out instead.
//!
//! [`Weights::quantize`] is the load-time pass that makes the Q8_0 or
//! Q4_0 copies of the matrices ([`crate::quant`]) the quantized functions
//! read; the float32 tensors stay mapped (norms, embeddings).

use crate::quant::{QMatrix, Quant};
use crate::Config;
use relax::Tensor;
use safetensors::{Dtype, SafeTensors};
use std::path::Path;

/// One decoder layer's weights, in transformers' `(out, in)` layout.
pub struct LayerWeights {
    pub input_norm: Tensor,
    pub wq: Tensor,
    pub wk: Tensor,
    pub wv: Tensor,
    pub wo: Tensor,
    pub post_norm: Tensor,
    pub w_gate: Tensor,
    pub w_up: Tensor,
    pub w_down: Tensor,
}

pub struct Weights {
    pub embed: Tensor,
    pub layers: Vec<LayerWeights>,
    pub norm: Tensor,
    /// `None` when the embeddings are tied.
    lm_head: Option<Tensor>,
    /// Bytes of weights read per generated token.
    pub bytes: usize,
    /// Of those, the bytes copied out of the map at load (tensors stored at
    /// an address that is not a multiple of 4); the rest are read in place.
    pub copied_bytes: usize,
    /// The checkpoint's map, which the tensors read in place share.
    map: std::sync::Arc<memmap2::Mmap>,
}

impl Weights {
    pub fn lm_head(&self) -> &Tensor {
        self.lm_head.as_ref().unwrap_or(&self.embed)
    }

    pub fn load(path: &Path, c: &Config) -> Result<Weights, String> {
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // SAFETY: the file is only read; a checkpoint changed while it is
        // mapped is outside what this example guards against.
        let map = std::sync::Arc::new(
            unsafe { memmap2::Mmap::map(&file) }.map_err(|e| format!("{}: {e}", path.display()))?,
        );
        let st = SafeTensors::deserialize(&map).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut bytes = 0;
        let mut copied_bytes = 0;
        let mut get = |name: &str, shape: &[usize]| -> Result<Tensor, String> {
            let t = st
                .tensor(name)
                .map_err(|e| format!("{}: tensor `{name}`: {e}", path.display()))?;
            if t.dtype() != Dtype::F32 || t.shape() != shape {
                return Err(format!(
                    "{}: tensor `{name}`: expected F32 {shape:?}, found {:?} {:?}",
                    path.display(),
                    t.dtype(),
                    t.shape()
                ));
            }
            bytes += t.data().len();
            let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            let start = t.data().as_ptr() as usize - map.as_ptr() as usize;
            let range = start..start + t.data().len();
            if (t.data().as_ptr() as usize).is_multiple_of(4) {
                // SAFETY: the map is read-only and lives in its Arc, which the
                // tensor keeps; the file changing while mapped is outside what
                // this example guards against (as for `Mmap::map` above).
                unsafe { Tensor::from_external(relax::DataType::f32(), &shape, map.clone(), range) }
                    .map_err(|e| format!("tensor `{name}`: {e}"))
            } else {
                copied_bytes += t.data().len();
                let data: Vec<f32> = t
                    .data()
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                Tensor::from_vec(&shape, data).map_err(|e| format!("tensor `{name}`: {e}"))
            }
        };
        let (h, i, v) = (c.hidden_size, c.intermediate_size, c.vocab_size);
        let (qd, kd) = (
            c.num_attention_heads * c.head_dim,
            c.num_key_value_heads * c.head_dim,
        );
        let embed = get("model.embed_tokens.weight", &[v, h])?;
        let mut layers = Vec::new();
        for l in 0..c.num_hidden_layers {
            let p = format!("model.layers.{l}");
            layers.push(LayerWeights {
                input_norm: get(&format!("{p}.input_layernorm.weight"), &[h])?,
                wq: get(&format!("{p}.self_attn.q_proj.weight"), &[qd, h])?,
                wk: get(&format!("{p}.self_attn.k_proj.weight"), &[kd, h])?,
                wv: get(&format!("{p}.self_attn.v_proj.weight"), &[kd, h])?,
                wo: get(&format!("{p}.self_attn.o_proj.weight"), &[h, qd])?,
                post_norm: get(&format!("{p}.post_attention_layernorm.weight"), &[h])?,
                w_gate: get(&format!("{p}.mlp.gate_proj.weight"), &[i, h])?,
                w_up: get(&format!("{p}.mlp.up_proj.weight"), &[i, h])?,
                w_down: get(&format!("{p}.mlp.down_proj.weight"), &[h, i])?,
            });
        }
        let norm = get("model.norm.weight", &[h])?;
        let lm_head = if c.tie_word_embeddings {
            None
        } else {
            Some(get("lm_head.weight", &[v, h])?)
        };
        Ok(Weights {
            embed,
            layers,
            norm,
            lm_head,
            bytes,
            copied_bytes,
            map,
        })
    }

    /// Tells the kernel the checkpoint's pages are not needed now, after
    /// the matrices were quantized into copies: the float32 matrices are
    /// never read again, so their pages leave the resident set (the few
    /// read later, the embedding rows of the tokens and the norms, come
    /// back from the file on their first read). A hint: an error is
    /// ignored, as the pages would only stay resident.
    pub fn release_pages(&self) {
        // SAFETY: the map is a read-only mapping of a file, so dropping
        // its pages loses nothing: a later read faults them in again from
        // the file, with the same contents.
        let _ = unsafe {
            self.map
                .unchecked_advise(memmap2::UncheckedAdvice::DontNeed)
        };
    }
}

/// One decoder layer's matrices, quantized ([`crate::quant`]).
pub struct QuantLayer {
    pub wq: QMatrix,
    pub wk: QMatrix,
    pub wv: QMatrix,
    pub wo: QMatrix,
    pub w_gate: QMatrix,
    pub w_up: QMatrix,
    pub w_down: QMatrix,
}

/// The decoder's matrices quantized at load: every layer's and the
/// `lm_head` (a copy of the embeddings when they are tied: the embedding
/// lookup keeps reading the float32 table, one row a token).
pub struct Quantized {
    pub quant: Quant,
    pub layers: Vec<QuantLayer>,
    pub lm_head: QMatrix,
    /// `[0, 4]` as `(1, 1, 2, 1)` uint8: the shifts of Q4_0's low and high
    /// nibbles (`layer_q4`'s `nibble`).
    pub nibble: Tensor,
    /// Bytes read per generated token: the quantized matrices and the
    /// float32 norms.
    pub bytes: usize,
}

impl Weights {
    /// These weights with every matrix replaced by the float32 values its
    /// quantization as `quant` stands for ([`crate::quant::round_trip`]);
    /// the norms and the embedding table stay as they are. The float32
    /// functions on these compute what the quantized functions compute.
    pub fn round_tripped(&self, quant: Quant) -> Result<Weights, String> {
        let rt = |w: &Tensor, name: String| crate::quant::round_trip(w, quant, &name);
        let mut layers = Vec::with_capacity(self.layers.len());
        for (i, l) in self.layers.iter().enumerate() {
            let name = |w: &str| format!("layer {i} {w}");
            layers.push(LayerWeights {
                input_norm: l.input_norm.clone(),
                wq: rt(&l.wq, name("q_proj"))?,
                wk: rt(&l.wk, name("k_proj"))?,
                wv: rt(&l.wv, name("v_proj"))?,
                wo: rt(&l.wo, name("o_proj"))?,
                post_norm: l.post_norm.clone(),
                w_gate: rt(&l.w_gate, name("gate_proj"))?,
                w_up: rt(&l.w_up, name("up_proj"))?,
                w_down: rt(&l.w_down, name("down_proj"))?,
            });
        }
        Ok(Weights {
            embed: self.embed.clone(),
            layers,
            norm: self.norm.clone(),
            lm_head: Some(rt(self.lm_head(), "lm_head".into())?),
            bytes: self.bytes,
            copied_bytes: self.copied_bytes,
            map: self.map.clone(),
        })
    }

    /// The matrices quantized as `quant` (Q8 or Q4), each checked to have
    /// an input axis that is a multiple of [`crate::quant::GROUP`].
    pub fn quantize(&self, quant: Quant) -> Result<Quantized, String> {
        let mut bytes = self.norm.as_bytes().len();
        let mut q = |w: &Tensor, name: String| -> Result<QMatrix, String> {
            let m = crate::quant::quantize(w, quant, &name)?;
            bytes += m.bytes();
            Ok(m)
        };
        let mut layers = Vec::with_capacity(self.layers.len());
        for (i, l) in self.layers.iter().enumerate() {
            let name = |w: &str| format!("layer {i} {w}");
            layers.push(QuantLayer {
                wq: q(&l.wq, name("q_proj"))?,
                wk: q(&l.wk, name("k_proj"))?,
                wv: q(&l.wv, name("v_proj"))?,
                wo: q(&l.wo, name("o_proj"))?,
                w_gate: q(&l.w_gate, name("gate_proj"))?,
                w_up: q(&l.w_up, name("up_proj"))?,
                w_down: q(&l.w_down, name("down_proj"))?,
            });
        }
        let lm_head = q(self.lm_head(), "lm_head".into())?;
        for l in &self.layers {
            bytes += l.input_norm.as_bytes().len() + l.post_norm.as_bytes().len();
        }
        let nibble = Tensor::from_vec(&[1, 1, 2, 1], vec![0u8, 4]).map_err(|e| e.to_string())?;
        Ok(Quantized {
            quant,
            layers,
            lm_head,
            nibble,
            bytes,
        })
    }
}
