"""PyTorch eager greedy decoding of a Hugging Face Llama checkpoint, timed:
the peer `examples/llama/peers` runs beside relax-rs and candle.

    python3 scripts/llama_torch_decode.py DIR --prompt-ids 1,2,3 --new-tokens 64

Prints one JSON line: the new ids, and the prefill and decode seconds
(prefill: the prompt's forward pass; decode: the remaining new tokens, one
forward pass each over the KV cache, as `generate` runs them). Threads: the
machine's cores, as torch defaults.
"""

import argparse
import json
import time

import torch
from transformers import LlamaForCausalLM


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--prompt-ids", default="1,2,3")
    ap.add_argument("--new-tokens", type=int, default=64)
    args = ap.parse_args()
    model = LlamaForCausalLM.from_pretrained(args.dir, torch_dtype=torch.float32).eval()
    prompt = torch.tensor([[int(t) for t in args.prompt_ids.split(",")]])
    ids = []
    with torch.inference_mode():
        # One warm-up pass, then the timed one.
        model(prompt, use_cache=True)
        start = time.perf_counter()
        out = model(prompt, use_cache=True)
        prefill = time.perf_counter() - start
        past = out.past_key_values
        start = time.perf_counter()
        for i in range(args.new_tokens):
            t = int(out.logits[0, -1].argmax())
            ids.append(t)
            if i + 1 < args.new_tokens:
                out = model(torch.tensor([[t]]), past_key_values=past, use_cache=True)
                past = out.past_key_values
        decode = time.perf_counter() - start
    print(json.dumps({"ids": ids, "prefill": prefill, "decode": decode}))


if __name__ == "__main__":
    main()
