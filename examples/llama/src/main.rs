//! `llama <checkpoint dir> --prompt-ids 1,2,3 [--new-tokens 64] [--top-k K]
//! [--top-p P] [--temperature T] [--seed S]`: generates and prints the new
//! token ids and the prefill and decode throughput, and decode's share of
//! the bandwidth bound timed in the same run (`bandwidth.rs`).

use llama::{Llama, Sampler};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: llama <checkpoint dir> --prompt-ids 1,2,3 [--new-tokens N] [--top-k K] [--top-p P] [--temperature T] [--seed S]")?;
    let (mut prompt, mut new_tokens) = (None, 64usize);
    let (mut top_k, mut top_p, mut temperature, mut seed) = (None, None, 1.0f32, 0u64);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--prompt-ids" => {
                prompt = Some(
                    value
                        .split(',')
                        .map(|t| t.trim().parse::<u32>())
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|e| bad(&e))?,
                )
            }
            "--new-tokens" => new_tokens = value.parse().map_err(|e| bad(&e))?,
            "--top-k" => top_k = Some(value.parse().map_err(|e| bad(&e))?),
            "--top-p" => top_p = Some(value.parse().map_err(|e| bad(&e))?),
            "--temperature" => temperature = value.parse().map_err(|e| bad(&e))?,
            "--seed" => seed = value.parse().map_err(|e| bad(&e))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let prompt = prompt.ok_or("--prompt-ids is required")?;
    let mut model = Llama::load(std::path::Path::new(&dir))?;
    let mut sampler = if top_k.is_some() || top_p.is_some() {
        Sampler::new(top_k.unwrap_or(0), top_p.unwrap_or(1.0), temperature, seed)
    } else {
        Sampler::greedy()
    };
    let (ids, prefill, decode) = model.generate(&prompt, new_tokens, &mut sampler)?;
    let text: Vec<String> = ids.iter().map(|t| t.to_string()).collect();
    println!("{}", text.join(","));
    eprintln!(
        "prefill: {} tokens in {:.3} ms ({:.1} tokens/s); decode: {} tokens in {:.3} ms ({:.1} tokens/s); weights {:.1} MB",
        prompt.len(),
        prefill * 1e3,
        prompt.len() as f64 / prefill,
        new_tokens.saturating_sub(1),
        decode * 1e3,
        new_tokens.saturating_sub(1) as f64 / decode,
        model.weight_bytes() as f64 / 1e6
    );
    // The bound: each decoded token reads every weight once, no faster
    // than a copy of as many bytes, timed now (the bandwidth of a shared
    // machine moves from minute to minute).
    let copy = llama::bandwidth::copy_seconds(model.weight_bytes(), 5);
    if new_tokens > 1 {
        let rate = new_tokens.saturating_sub(1) as f64 / decode;
        eprintln!(
            "bandwidth bound: {:.1} tokens/s (a copy of the weights' bytes in {:.3} ms, {:.1} GB/s); decode at {:.2} of it",
            1.0 / copy,
            copy * 1e3,
            model.weight_bytes() as f64 / copy / 1e9,
            rate * copy
        );
    }
    Ok(())
}
