//! `llama-peers DIR [--prompt-ids 1,2,3 | --prompt-len N] [--new-tokens 64]
//! [--rounds 3] [--python PYTHON]`: greedy generation on one Hugging Face checkpoint by
//! the llama example (relax-rs), by candle-transformers' Llama, and, with
//! `--python` (a venv with torch and transformers), by PyTorch eager
//! (`scripts/llama_torch_decode.py`), in interleaved rounds of one run.
//!
//! Prints each one's prefill and decode tokens/s (best round), relax-rs's
//! ratio to each peer, decode's share of the bandwidth bound (a copy of the
//! weights' bytes timed in the same run), prefill's flops per second and
//! their share of the FMA peak (measured in the same rounds by the peers
//! benchmark's `limits::measure`), and whether each peer's ids equal
//! relax-rs's. `--prompt-len N` makes a prompt of `N` ids, for timing a
//! long prefill.

use candle_core::{DType, Device, Tensor};
use candle_transformers::models::llama as candle_llama;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One engine's result: the new ids, and the best prefill and decode
/// seconds over the rounds.
struct Run {
    ids: Vec<u32>,
    prefill: f64,
    decode: f64,
}

impl Run {
    fn best(&mut self, ids: Vec<u32>, prefill: f64, decode: f64) {
        self.ids = ids;
        self.prefill = self.prefill.min(prefill);
        self.decode = self.decode.min(decode);
    }
}

fn argmax(v: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best as u32
}

struct Candle {
    model: candle_llama::Llama,
    config: candle_llama::Config,
    device: Device,
}

impl Candle {
    fn load(dir: &Path) -> Result<Candle, String> {
        let text = std::fs::read(dir.join("config.json")).map_err(|e| e.to_string())?;
        let config: candle_llama::LlamaConfig =
            serde_json::from_slice(&text).map_err(|e| format!("config.json: {e}"))?;
        let config = config.into_config(false);
        let device = Device::Cpu;
        // SAFETY: the checkpoint is only read while mapped.
        let vb = unsafe {
            candle_nn::VarBuilder::from_mmaped_safetensors(
                &[dir.join("model.safetensors")],
                DType::F32,
                &device,
            )
        }
        .map_err(|e| e.to_string())?;
        let model = candle_llama::Llama::load(vb, &config).map_err(|e| e.to_string())?;
        Ok(Candle {
            model,
            config,
            device,
        })
    }

    /// Greedy generation; the ids and the prefill and decode seconds.
    fn generate(
        &self,
        prompt: &[u32],
        new_tokens: usize,
    ) -> candle_core::Result<(Vec<u32>, f64, f64)> {
        let mut cache = candle_llama::Cache::new(true, DType::F32, &self.config, &self.device)?;
        let step = |tokens: &[u32], pos: usize, cache: &mut candle_llama::Cache| {
            let input = Tensor::new(tokens, &self.device)?.unsqueeze(0)?;
            let logits = self.model.forward(&input, pos, cache)?;
            logits.squeeze(0)?.to_vec1::<f32>()
        };
        let start = Instant::now();
        let mut logits = step(prompt, 0, &mut cache)?;
        let prefill = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let mut ids = Vec::with_capacity(new_tokens);
        for i in 0..new_tokens {
            let t = argmax(&logits);
            ids.push(t);
            if i + 1 < new_tokens {
                logits = step(&[t], prompt.len() + i, &mut cache)?;
            }
        }
        Ok((ids, prefill, start.elapsed().as_secs_f64()))
    }
}

/// PyTorch eager through `scripts/llama_torch_decode.py`: its JSON line.
fn torch(
    python: &str,
    dir: &Path,
    prompt: &[u32],
    new_tokens: usize,
) -> Result<(Vec<u32>, f64, f64), String> {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../scripts/llama_torch_decode.py");
    let ids: Vec<String> = prompt.iter().map(|t| t.to_string()).collect();
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(dir)
        .args([
            "--prompt-ids",
            &ids.join(","),
            "--new-tokens",
            &new_tokens.to_string(),
        ])
        .output()
        .map_err(|e| format!("{python} {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("{}: {e}", script.display()))?;
    let ids = v["ids"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_u64().map(|t| t as u32))
                .collect()
        })
        .unwrap_or_default();
    Ok((
        ids,
        v["prefill"].as_f64().unwrap_or(f64::NAN),
        v["decode"].as_f64().unwrap_or(f64::NAN),
    ))
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let usage = "usage: llama-peers DIR [--prompt-ids 1,2,3 | --prompt-len N] [--new-tokens 64] [--rounds 3] [--python PYTHON]";
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let (mut prompt, mut new_tokens, mut rounds, mut python) =
        (vec![1u32, 2, 3], 64usize, 3usize, None);
    let mut prompt_len = None;
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value; {usage}"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--prompt-ids" => {
                prompt = value
                    .split(',')
                    .map(|t| t.trim().parse::<u32>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| bad(&e))?
            }
            "--prompt-len" => prompt_len = Some(value.parse::<usize>().map_err(|e| bad(&e))?),
            "--new-tokens" => new_tokens = value.parse().map_err(|e| bad(&e))?,
            "--rounds" => rounds = value.parse().map_err(|e| bad(&e))?,
            "--python" => python = Some(value),
            _ => return Err(format!("unknown flag {flag}; {usage}")),
        }
    }
    if new_tokens < 2 || rounds == 0 {
        return Err("--new-tokens must be at least 2 and --rounds at least 1".into());
    }
    let mut relax = llama::Llama::load(&dir)?;
    if let Some(n) = prompt_len {
        // Spread over the vocabulary, the same ids on every run.
        let vocab = relax.config.vocab_size;
        prompt = (0..n).map(|i| ((i * 7919 + 13) % vocab) as u32).collect();
    }
    let candle = Candle::load(&dir)?;
    let fresh = || Run {
        ids: Vec::new(),
        prefill: f64::INFINITY,
        decode: f64::INFINITY,
    };
    let (mut r, mut c, mut t) = (fresh(), fresh(), fresh());
    let mut bound = f64::INFINITY;
    let mut peak = (0.0, String::new());
    for _ in 0..rounds {
        let (ids, p, d) = relax.generate(&prompt, new_tokens, &mut llama::Sampler::greedy())?;
        r.best(ids, p, d);
        let (ids, p, d) = candle
            .generate(&prompt, new_tokens)
            .map_err(|e| format!("candle: {e}"))?;
        c.best(ids, p, d);
        if let Some(py) = &python {
            let (ids, p, d) = torch(py, &dir, &prompt, new_tokens)?;
            t.best(ids, p, d);
        }
        bound = bound.min(llama::bandwidth::copy_seconds(relax.weight_bytes(), 3));
        let limits = peers::limits::measure();
        if limits.flops > peak.0 {
            peak = (limits.flops, limits.how);
        }
    }
    let steps = (new_tokens - 1) as f64;
    let n = prompt.len() as f64;
    println!(
        "{}: {} prompt tokens, {new_tokens} new, best of {rounds} interleaved rounds; weights {:.1} MB; bandwidth bound {:.1} tokens/s",
        dir.display(),
        prompt.len(),
        relax.weight_bytes() as f64 / 1e6,
        1.0 / bound
    );
    println!("| engine | prefill tokens/s | decode tokens/s | share of the bound | relax-rs tokens/s ÷ this | same ids as relax-rs |");
    println!("|---|---|---|---|---|---|");
    let row = |name: &str, run: &Run| {
        if run.decode.is_finite() {
            println!(
                "| {name} | {:.1} | {:.1} | {:.2} | {:.2} | {} |",
                n / run.prefill,
                steps / run.decode,
                bound * steps / run.decode,
                run.decode / r.decode,
                if run.ids == r.ids {
                    "yes".to_string()
                } else {
                    let at = run
                        .ids
                        .iter()
                        .zip(&r.ids)
                        .position(|(a, b)| a != b)
                        .unwrap_or(run.ids.len().min(r.ids.len()));
                    format!("no, from step {at}")
                }
            );
        }
    };
    row("relax-rs (llama example)", &r);
    row("candle-transformers", &c);
    row("PyTorch eager", &t);
    let flops = relax.config.prefill_flops(prompt.len());
    println!(
        "prefill: {:.2} GFLOP (Config::prefill_flops); FMA peak {:.1} GFLOPS ({}, best of the rounds)",
        flops / 1e9,
        peak.0 / 1e9,
        peak.1
    );
    for (name, run) in [
        ("relax-rs", &r),
        ("candle-transformers", &c),
        ("PyTorch eager", &t),
    ] {
        if run.prefill.is_finite() {
            println!(
                "  {name}: {:.1} GFLOPS, {:.2} of the peak",
                flops / run.prefill / 1e9,
                flops / run.prefill / peak.0
            );
        }
    }
    Ok(())
}
