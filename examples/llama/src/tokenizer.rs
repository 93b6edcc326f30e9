//! Text in and out: a checkpoint's `tokenizer.json`, read by Hugging Face's
//! `tokenizers` crate (the library transformers' fast tokenizers wrap), so
//! text becomes the same ids as in Python, and ids the same text.
//!
//! A checkpoint without `tokenizer.json` runs on ids only.

use crate::Error;
use std::path::Path;

/// A loaded `tokenizer.json`.
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
}

impl Tokenizer {
    /// `dir/tokenizer.json`, or `None` when the checkpoint has none.
    pub fn load(dir: &Path) -> Result<Option<Tokenizer>, Error> {
        let path = dir.join("tokenizer.json");
        if !path.exists() {
            return Ok(None);
        }
        let inner = tokenizers::Tokenizer::from_file(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Some(Tokenizer { inner }))
    }

    /// The ids of `text`, with the special tokens the tokenizer's
    /// post-processor adds (a BOS token, say), as transformers'
    /// `tokenizer(text)` gives them.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, Error> {
        let enc = self
            .inner
            .encode(text, true)
            .map_err(|e| format!("encoding {text:?}: {e}"))?;
        Ok(enc.get_ids().to_vec())
    }

    /// The text of `ids`, special tokens skipped, as transformers'
    /// `tokenizer.decode(ids, skip_special_tokens=True)`. Bytes that are
    /// not UTF-8 become U+FFFD, as in Python.
    pub fn decode(&self, ids: &[u32]) -> Result<String, Error> {
        self.inner
            .decode(ids, true)
            .map_err(|e| format!("decoding {} ids: {e}", ids.len()))
    }
}
