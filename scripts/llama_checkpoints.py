"""Random-weight Llama checkpoints, saved exactly as Hugging Face saves them,
with transformers' greedy continuations as the oracle for examples/llama.

    /work/venv/bin/python scripts/llama_checkpoints.py OUT_DIR [--fixture DIR] [--train STEPS]

Writes OUT_DIR/{tiny,small,base}/ (`config.json` + `model.safetensors`,
float32, from `LlamaForCausalLM(config).save_pretrained`) and beside each an
`expected.json`: for each fixed prompt (token ids), the 64 ids transformers'
greedy `generate` appends. `--fixture DIR` also writes the tiny checkpoint
there (the committed test fixture of examples/llama). Weights are seeded, so
a rerun reproduces the same files.

Each checkpoint also gets a `tokenizer.json`: a byte-level BPE (the kind
Llama 3 and GPT-2 use) trained by Hugging Face's `tokenizers` on the
docstrings of a fixed list of standard-library modules, with at most the
model's vocabulary. `expected.json`'s `text` cases record, for fixed text
prompts, the ids the tokenizer gives, the 64 greedy ids, and their decoded
text, so the Rust side checks its tokenizer and generation together.

`--train STEPS` trains each model for STEPS steps of next-token prediction
on that corpus before saving it (random weights otherwise). A random
model's top two logits are close, so a quantized model's top-1 flips on
rounding noise; a trained one's are as far apart as a real model's, which
is what `llama --check --quant q8|q4` should be judged on.
"""

import argparse
import json
import os

import importlib
import inspect

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM

NEW_TOKENS = 64

SIZES = {
    # A CI fixture: a few hundred KB.
    "tiny": dict(
        vocab_size=256,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        rope_theta=10000.0,
        tie_word_embeddings=False,
    ),
    # Grouped-query attention (8 heads share 2 KV heads), untied embeddings.
    "small": dict(
        vocab_size=4096,
        hidden_size=512,
        intermediate_size=1408,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=2,
        max_position_embeddings=512,
        rope_theta=500000.0,
        tie_word_embeddings=False,
    ),
    # 75M parameters (vocabulary 32000), for throughput figures; tied embeddings (as
    # Llama 3.2 1B).
    "base": dict(
        vocab_size=32000,
        hidden_size=768,
        intermediate_size=2048,
        num_hidden_layers=8,
        num_attention_heads=12,
        num_key_value_heads=4,
        max_position_embeddings=512,
        rope_theta=10000.0,
        tie_word_embeddings=True,
    ),
}

PROMPTS = {
    "tiny": [[1, 2, 3], [7], [200, 13, 99, 45, 0, 255, 17]],
    "small": [[1, 2, 3], [4000], [17, 402, 3391, 8, 8, 1024, 77, 2, 5, 600, 4095]],
    "base": [[1, 2, 3], [31999, 5, 17, 12000]],
}


TEXT_PROMPTS = ["The quick brown fox", "Return the number of items in a sequence."]

# The tokenizer's training text: docstrings of the standard library, which
# the interpreter carries (no download), in a fixed order.
CORPUS_MODULES = [
    "argparse", "collections", "csv", "datetime", "decimal", "fractions", "functools",
    "heapq", "itertools", "json", "logging", "os", "pathlib", "random", "re", "shutil",
    "statistics", "string", "textwrap", "typing", "unittest", "urllib.parse", "zipfile",
]


def corpus():
    for name in CORPUS_MODULES:
        module = importlib.import_module(name)
        yield inspect.getdoc(module) or ""
        for _, obj in sorted(vars(module).items()):
            doc = inspect.getdoc(obj) if callable(obj) else None
            if doc:
                yield doc


def train_tokenizer(vocab_size):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    return tok


def train(model, tok, steps, seed, batch=8, length=128):
    """`steps` of AdamW on next-token prediction over the tokenized
    corpus, so that the model's logits are as peaked as a trained model's
    (a random model's top two logits are close, and a quantized model's
    top-1 then flips on noise)."""
    ids = torch.tensor([i for doc in corpus() for i in tok.encode(doc + "\n").ids])
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    model.train()
    for step in range(steps):
        starts = torch.randint(0, len(ids) - length - 1, (batch,), generator=gen)
        x = torch.stack([ids[s : s + length] for s in starts])
        loss = model(input_ids=x, labels=x).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0 or step == steps - 1:
            print(f"  step {step}: loss {loss.item():.3f}", flush=True)
    model.eval()


def build(name, out, seed, train_steps=0):
    torch.manual_seed(seed)
    config = LlamaConfig(
        rms_norm_eps=1e-5,
        hidden_act="silu",
        attention_bias=False,
        mlp_bias=False,
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
        torch_dtype="float32",
        **SIZES[name],
    )
    model = LlamaForCausalLM(config).eval()
    # The default init (std 0.02) makes a random model repeat one token
    # forever; weights of std 1.6/sqrt(fan_in) give varied continuations
    # with clear argmax winners.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 1.6 / p.shape[1] ** 0.5)
            else:
                p.uniform_(0.8, 1.2)
    tok = train_tokenizer(config.vocab_size)
    if train_steps:
        train(model, tok, train_steps, seed)
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    cases = []
    for prompt in PROMPTS[name]:
        ids = torch.tensor([prompt], dtype=torch.long)
        with torch.no_grad():
            gen = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=NEW_TOKENS,
                min_new_tokens=NEW_TOKENS,
                do_sample=False,
                pad_token_id=0,
            )
        cases.append({"prompt": prompt, "new_ids": gen[0, len(prompt):].tolist()})
    tok.save(os.path.join(out, "tokenizer.json"))
    text_cases = []
    for text in TEXT_PROMPTS:
        prompt = tok.encode(text).ids
        ids = torch.tensor([prompt], dtype=torch.long)
        with torch.no_grad():
            gen = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=NEW_TOKENS,
                min_new_tokens=NEW_TOKENS,
                do_sample=False,
                pad_token_id=0,
            )
        new_ids = gen[0, len(prompt):].tolist()
        text_cases.append(
            {"text": text, "prompt": prompt, "new_ids": new_ids, "new_text": tok.decode(new_ids)}
        )
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"new_tokens": NEW_TOKENS, "greedy": cases, "text": text_cases}, f, indent=1)
        f.write("\n")
    print(name, out, sum(p.numel() for p in model.parameters()), "parameters")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--fixture")
    ap.add_argument("--sizes", default="tiny,small,base")
    ap.add_argument(
        "--train",
        type=int,
        default=0,
        metavar="STEPS",
        help="train each model for STEPS steps on the tokenizer's corpus before saving",
    )
    args = ap.parse_args()
    for i, name in enumerate(args.sizes.split(",")):
        build(name, os.path.join(args.out, name), 1234 + i, args.train)
        if name == "tiny" and args.fixture:
            build(name, args.fixture, 1234 + i, args.train)


if __name__ == "__main__":
    main()
