//! The committed tiny checkpoint (`tests/data/tiny`, written by
//! `scripts/llama_checkpoints.py --train 300`, trained so that its logits
//! are as peaked as a real model's): greedy generation reproduces
//! transformers' 64 ids for each prompt.

use llama::{Llama, Sampler};
use std::path::Path;

fn fixture() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny"))
}

fn ids(v: &serde_json::Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap() as u32)
        .collect()
}

#[test]
fn greedy_generation_equals_transformers() {
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
            .unwrap();
    let mut model = Llama::load(fixture()).unwrap();
    let cases = expected["greedy"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for case in cases {
        let prompt = ids(&case["prompt"]);
        let want = ids(&case["new_ids"]);
        assert_eq!(want.len(), 64);
        let (got, _, _) = model.generate(&prompt, 64, &mut Sampler::greedy()).unwrap();
        assert_eq!(got, want, "prompt {prompt:?}");
    }
}

#[test]
fn the_weights_are_read_in_place_from_the_memory_map() {
    let config = llama::Config::load(&fixture().join("config.json")).unwrap();
    let w = llama::Weights::load(&fixture().join("model.safetensors"), &config).unwrap();
    assert!(w.bytes > 0);
    assert_eq!(w.copied_bytes, 0);
    // A mapped tensor is shared with the map: never unique, never written.
    assert!(!w.embed.is_unique());
    assert!(!w.layers[0].wq.is_unique());
}

#[test]
fn decoding_token_by_token_equals_one_prefill() {
    // The cache path (decode) and the prompt path (prefill) agree: the
    // logits after prefilling [a, b, c] equal those after prefilling [a]
    // and decoding b, then c.
    let mut model = Llama::load(fixture()).unwrap();
    let whole = model.forward(&[5, 6, 7]).unwrap();
    model.reset().unwrap();
    model.forward(&[5]).unwrap();
    model.forward(&[6]).unwrap();
    let stepwise = model.forward(&[7]).unwrap();
    for (a, b) in whole.iter().zip(&stepwise) {
        assert!((a - b).abs() <= 1e-4 * (1.0 + a.abs()), "{a} vs {b}");
    }
}

#[test]
fn sampling_is_seeded() {
    let mut model = Llama::load(fixture()).unwrap();
    let mut run = |seed| {
        let mut s = Sampler::new(20, 0.9, 1.0, seed);
        model.generate(&[1, 2, 3], 16, &mut s).unwrap().0
    };
    let (a, b) = (run(11), run(11));
    assert_eq!(a, b);
    assert!(a.iter().all(|&t| t < 256));
}

#[test]
fn bad_input_is_an_error() {
    let mut model = Llama::load(fixture()).unwrap();
    let e = model.forward(&[256]).unwrap_err();
    assert!(e.contains("not below the vocabulary size 256"), "{e}");
    model.reset().unwrap();
    let e = model.forward(&vec![1; 257]).unwrap_err();
    assert!(e.contains("exceed max_position_embeddings = 256"), "{e}");
}

#[test]
fn a_configuration_no_module_was_compiled_for_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("llama-bad-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = std::fs::read_to_string(fixture().join("config.json"))
        .unwrap()
        .replace("\"hidden_size\": 64", "\"hidden_size\": 96");
    std::fs::write(dir.join("config.json"), config).unwrap();
    let e = Llama::load(&dir).err().unwrap();
    assert!(
        e.contains("no compiled module has this configuration"),
        "{e}"
    );
    assert!(e.contains("[96, 4, 2, 16, 128, 256]"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn text_prompts_tokenize_and_generate_as_in_transformers() {
    // `expected.json`'s `text` cases: the ids Hugging Face's tokenizer gave
    // each prompt, transformers' 64 greedy ids, and their decoded text.
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
            .unwrap();
    let mut model = Llama::load(fixture()).unwrap();
    let cases = expected["text"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let tok = model
            .tokenizer
            .as_ref()
            .expect("the fixture has tokenizer.json");
        let prompt = tok.encode(text).unwrap();
        assert_eq!(prompt, ids(&case["prompt"]), "{text:?}");
        let (got, _, _) = model.generate(&prompt, 64, &mut Sampler::greedy()).unwrap();
        assert_eq!(got, ids(&case["new_ids"]), "{text:?}");
        let tok = model.tokenizer.as_ref().unwrap();
        assert_eq!(
            tok.decode(&got).unwrap(),
            case["new_text"].as_str().unwrap()
        );
    }
}

#[test]
fn quantized_decode_agrees_with_float32_on_95_percent_of_steps() {
    // Teacher-forced over every prompt of `expected.json`: the argmax of
    // each step's logits against the float32 greedy id (which equals
    // transformers', `greedy_generation_equals_transformers`).
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
            .unwrap();
    for quant in [llama::Quant::Q8, llama::Quant::Q4] {
        let mut model = Llama::load_quantized(fixture(), quant).unwrap();
        assert_eq!(model.quant(), quant);
        let (mut agree, mut steps) = (0, 0);
        for kind in ["greedy", "text"] {
            for case in expected[kind].as_array().unwrap() {
                let want = ids(&case["new_ids"]);
                agree += model.top1_agreement(&ids(&case["prompt"]), &want).unwrap();
                steps += want.len();
            }
        }
        eprintln!("{quant:?}: top-1 agrees on {agree} of {steps} steps");
        assert_eq!(steps, 5 * 64);
        // The fixture is trained (300 steps on its tokenizer's corpus), so
        // its top logits stand apart as a real model's do: Q8_0 agrees on
        // every step and Q4_0 on 316 of 320. (On a random checkpoint, whose
        // top two logits are close, Q4_0's rounding flips about half.)
        assert!(agree * 100 >= 95 * steps, "{quant:?}: {agree} of {steps}");
    }
}

#[test]
fn quantized_weights_are_fewer_bytes() {
    let f32 = Llama::load(fixture()).unwrap();
    let q8 = Llama::load_quantized(fixture(), llama::Quant::Q8).unwrap();
    let q4 = Llama::load_quantized(fixture(), llama::Quant::Q4).unwrap();
    // Matrices at 1.125 and 0.625 bytes a weight against 4 (the float32
    // count also holds the embedding table).
    assert!(
        q8.weight_bytes() * 3 < f32.weight_bytes(),
        "{}",
        q8.weight_bytes()
    );
    assert!(
        q4.weight_bytes() * 5 < q8.weight_bytes() * 3,
        "{}",
        q4.weight_bytes()
    );
}

#[test]
fn quantized_kernels_compute_what_their_dequantized_weights_say() {
    // The quantized functions (the dequantize fused into each matmul) on
    // Q8_0/Q4_0 weights against the float32 functions on the float32
    // values those weights stand for: equal up to float32 rounding, over a
    // prefill and 16 decode steps. What the quantized model loses against
    // float32 is then the format's rounding, not the kernels'.
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
            .unwrap();
    let case = &expected["greedy"][0];
    let (prompt, next) = (ids(&case["prompt"]), ids(&case["new_ids"]));
    for quant in [llama::Quant::Q8, llama::Quant::Q4] {
        let mut q = Llama::load_quantized(fixture(), quant).unwrap();
        let mut r = Llama::load(fixture())
            .unwrap()
            .round_tripped(quant)
            .unwrap();
        let steps = std::iter::once(prompt.clone()).chain(next[..16].iter().map(|&t| vec![t]));
        for (step, tokens) in steps.enumerate() {
            let (a, b) = (q.forward(&tokens).unwrap(), r.forward(&tokens).unwrap());
            let scale = b.iter().fold(0f32, |m, x| m.max(x.abs()));
            let diff = a
                .iter()
                .zip(&b)
                .fold(0f32, |m, (x, y)| m.max((x - y).abs()));
            assert!(
                diff <= 1e-4 * scale + 1e-6,
                "{quant:?} step {step}: logits differ by {diff} (largest {scale})"
            );
        }
    }
}
