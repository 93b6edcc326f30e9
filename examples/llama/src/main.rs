//! `llama <checkpoint dir> (--prompt TEXT | --prompt-ids 1,2,3) [--new-tokens 64]
//! [--top-k K] [--top-p P] [--temperature T] [--seed S] [--quant f32|q8|q4]`: generates and
//! prints the new token ids (and their text, when the checkpoint has a
//! `tokenizer.json`), the prefill and decode throughput, decode's share
//! of the bandwidth bound timed in the same run (`bandwidth.rs`), and the
//! resident memory after loading and after generating beside the weights'
//! and the caches' bytes (`memory.rs`).
//!
//! `--prompt` needs the checkpoint's `tokenizer.json`; `--prompt-ids` runs
//! on any checkpoint.
//!
//! `llama <checkpoint dir> --check` instead replays the checkpoint's
//! `expected.json` (written by `scripts/llama_checkpoints.py`: transformers'
//! greedy ids for each prompt, and for text prompts the tokenizer's ids and
//! the decoded text) and says which prompts match.
//!
//! With `RELAX_PROFILE=1` in the environment it also prints where each
//! decode step's time went, kernel by kernel.
//!
//! `--quant q8` or `q4` quantizes the matrices at load (Q8_0, Q4_0:
//! `quant.rs`); the bound is then that of the quantized bytes. With
//! `--check`, a quantized model is held to transformers' greedy ids by
//! top-1 agreement instead: each prompt is prefilled and then fed the
//! expected ids one by one, and each step's argmax is compared with the
//! expected id (float32 reproduces those ids exactly); it fails below 95%.

use llama::{Llama, Quant, Sampler};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: llama <checkpoint dir> (--prompt TEXT | --prompt-ids 1,2,3) [--new-tokens N] [--top-k K] [--top-p P] [--temperature T] [--seed S] [--quant f32|q8|q4], or llama <checkpoint dir> --check [--quant f32|q8|q4]")?;
    let mut rest: Vec<String> = args.collect();
    let mut quant = Quant::F32;
    if let Some(at) = rest.iter().position(|a| a == "--quant") {
        let value = rest.get(at + 1).ok_or("--quant needs a value")?;
        quant = value.parse()?;
        rest.drain(at..at + 2);
    }
    if rest == ["--check"] {
        return match quant {
            Quant::F32 => check(std::path::Path::new(&dir)),
            q => check_quantized(std::path::Path::new(&dir), q),
        };
    }
    let mut args = rest.into_iter();
    let (mut prompt, mut text, mut new_tokens) = (None, None, 64usize);
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
            "--prompt" => text = Some(value),
            "--new-tokens" => new_tokens = value.parse().map_err(|e| bad(&e))?,
            "--top-k" => top_k = Some(value.parse().map_err(|e| bad(&e))?),
            "--top-p" => top_p = Some(value.parse().map_err(|e| bad(&e))?),
            "--temperature" => temperature = value.parse().map_err(|e| bad(&e))?,
            "--seed" => seed = value.parse().map_err(|e| bad(&e))?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let mut model = Llama::load_quantized(std::path::Path::new(&dir), quant)?;
    let prompt = match (prompt, &text, &model.tokenizer) {
        (Some(_), Some(_), _) => return Err("give --prompt or --prompt-ids, not both".into()),
        (Some(ids), None, _) => ids,
        (None, Some(text), Some(tok)) => tok.encode(text)?,
        (None, Some(_), None) => {
            return Err(format!(
                "--prompt needs {dir}/tokenizer.json, which is missing: give --prompt-ids"
            ))
        }
        (None, None, _) => return Err("--prompt or --prompt-ids is required".into()),
    };
    let mut sampler = if top_k.is_some() || top_p.is_some() {
        Sampler::new(top_k.unwrap_or(0), top_p.unwrap_or(1.0), temperature, seed)
    } else {
        Sampler::greedy()
    };
    let loaded = llama::memory::Resident::now();
    let (ids, prefill, decode) = model.generate(&prompt, new_tokens, &mut sampler)?;
    let id_text: Vec<String> = ids.iter().map(|t| t.to_string()).collect();
    println!("{}", id_text.join(","));
    if let Some(tok) = &model.tokenizer {
        println!("{}", tok.decode(&ids)?);
    }
    eprintln!(
        "prefill: {} tokens in {:.3} ms ({:.1} tokens/s); decode: {} tokens in {:.3} ms ({:.1} tokens/s); weights ({:?}) {:.1} MB",
        prompt.len(),
        prefill * 1e3,
        prompt.len() as f64 / prefill,
        new_tokens.saturating_sub(1),
        decode * 1e3,
        new_tokens.saturating_sub(1) as f64 / decode,
        model.quant(),
        model.weight_bytes() as f64 / 1e6
    );
    let profile = model.profile();
    if !profile.is_empty() {
        // RELAX_PROFILE: where each decode step's time went.
        let steps = new_tokens.saturating_sub(1).max(1) as f64;
        let total: f64 = profile.iter().map(|k| k.total.as_secs_f64()).sum();
        eprintln!(
            "decode profile: {:.3} ms a token in kernels, {:.3} ms a token outside them",
            total * 1e3 / steps,
            (decode - total).max(0.0) * 1e3 / steps
        );
        for k in profile.iter().take(16) {
            eprintln!(
                "  {:>8.3} ms/token {:>5.1}% {:>6} calls  {}",
                k.total.as_secs_f64() * 1e3 / steps,
                100.0 * k.total.as_secs_f64() / total,
                k.calls,
                k.name
            );
        }
    }
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
    if let (Some(before), Some(after)) = (loaded, llama::memory::Resident::now()) {
        let mb = |b: usize| b as f64 / 1e6;
        eprintln!(
            "resident memory: {:.1} MB anonymous and {:.1} MB of mapped files after loading, {:.1} and {:.1} after generating; the weights {:.1} MB ({:.1} MB of them copied or quantized, the rest mapped), the caches {:.1} MB",
            mb(before.anon),
            mb(before.file),
            mb(after.anon),
            mb(after.file),
            mb(model.weight_bytes()),
            mb(model.copied_weight_bytes()),
            mb(model.cache_bytes())
        );
    }
    Ok(())
}

/// `--check`: every prompt of `dir/expected.json` against transformers'
/// recorded output; an `Err` when any differs.
fn check(dir: &std::path::Path) -> Result<(), String> {
    let (expected, path) = read_expected(dir)?;
    let ids = |v: &serde_json::Value| ids_of(v, &path);
    let mut model = Llama::load(dir)?;
    let (mut matched, mut total) = (0, 0);
    let none = Vec::new();
    for (kind, cases) in [("ids", &expected["greedy"]), ("text", &expected["text"])] {
        for case in cases.as_array().unwrap_or(&none) {
            total += 1;
            let mut prompt = ids(&case["prompt"])?;
            let mut ok = true;
            if let (Some(text), Some(tok)) = (case["text"].as_str(), &model.tokenizer) {
                let encoded = tok.encode(text)?;
                ok &= encoded == prompt;
                prompt = encoded;
            }
            let want = ids(&case["new_ids"])?;
            let (got, _, _) = model.generate(&prompt, want.len(), &mut Sampler::greedy())?;
            ok &= got == want;
            if let (Some(text), Some(tok)) = (case["new_text"].as_str(), &model.tokenizer) {
                ok &= tok.decode(&got)? == text;
            }
            let first_diff = got.iter().zip(&want).position(|(a, b)| a != b);
            println!(
                "{kind} prompt {prompt:?}: {}",
                match (ok, first_diff) {
                    (true, _) => format!("{} ids match", want.len()),
                    (false, Some(i)) => format!("differs from step {i}"),
                    (false, None) => "the tokenizer's ids or text differ".into(),
                }
            );
            matched += usize::from(ok);
        }
    }
    println!("{matched} of {total} prompts match transformers");
    if matched == total {
        Ok(())
    } else {
        Err(format!("{} prompts differ", total - matched))
    }
}

/// `--check --quant q8|q4`: the top-1 agreement of the quantized model
/// with `dir/expected.json`'s greedy ids, teacher-forced (see the module
/// docs); an `Err` below 95% of the steps.
fn check_quantized(dir: &std::path::Path, quant: Quant) -> Result<(), String> {
    let (expected, path) = read_expected(dir)?;
    let ids = |v: &serde_json::Value| ids_of(v, &path);
    let mut model = Llama::load_quantized(dir, quant)?;
    let (mut agree, mut steps) = (0, 0);
    let none = Vec::new();
    for cases in [&expected["greedy"], &expected["text"]] {
        for case in cases.as_array().unwrap_or(&none) {
            let (prompt, want) = (ids(&case["prompt"])?, ids(&case["new_ids"])?);
            let a = model.top1_agreement(&prompt, &want)?;
            println!(
                "prompt {prompt:?}: top-1 agrees on {a} of {} steps",
                want.len()
            );
            agree += a;
            steps += want.len();
        }
    }
    let share = agree as f64 / steps.max(1) as f64;
    println!(
        "{quant:?}: top-1 agrees with float32 on {agree} of {steps} steps ({:.1}%)",
        100.0 * share
    );
    if share >= 0.95 {
        Ok(())
    } else {
        Err(format!(
            "{quant:?}: top-1 agreement {:.1}% is below 95%",
            100.0 * share
        ))
    }
}

/// `dir/expected.json` (transformers' recorded prompts and greedy ids) and
/// its path.
fn read_expected(dir: &std::path::Path) -> Result<(serde_json::Value, std::path::PathBuf), String> {
    let path = dir.join("expected.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let expected = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((expected, path))
}

/// A list of token ids of `expected.json` (at `path`, named in the error).
fn ids_of(v: &serde_json::Value, path: &std::path::Path) -> Result<Vec<u32>, String> {
    v.as_array()
        .and_then(|a| a.iter().map(|t| t.as_u64().map(|t| t as u32)).collect())
        .ok_or_else(|| format!("{}: expected a list of ids, found {v}", path.display()))
}
