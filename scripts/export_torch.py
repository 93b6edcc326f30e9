"""Real architectures exported from PyTorch with torch's defaults, as
ONNX backend test cases with PyTorch's own outputs as the oracle.

Each model is exported the way a PyTorch user does it today:
`torch.onnx.export(model, args, path, dynamic_shapes=...)` with the
dynamo exporter (torch's default), its default opset, and the weights in the
side file `model.onnx.data` that the exporter writes. Batch (and, for the
transformers, sequence) axes are dynamic. Weights are random and seeded;
batch norms get random statistics and affine parameters, so that no output
is degenerate (torchvision zero-initializes some, and a fresh running
variance of 1 makes every batch norm an identity).

For each model it writes, in ONNX's backend-test layout:

    OUT/<name>/model.onnx
    OUT/<name>/model.onnx.data
    OUT/<name>/test_data_set_<k>/input_<i>.pb
    OUT/<name>/test_data_set_<k>/output_0.pb

with one data set per (batch, sequence length) pair, each from one call of
the PyTorch model, so that one compiled executable is checked at several
shapes:

    cargo run --release -p relax-onnx --example onnx_backend -- OUT

It prints each model's export time. Besides the classifiers and the
transformers, LR-ASPP (a segmentation model) checks `Resize` to a size
taken from another tensor's `Shape`. Run it from a venv with torch,
torchvision, transformers and onnxscript (the PyPI wheels run on the CPU;
about 6 GB):

    python3 scripts/export_torch.py OUT [NAME ...]

`NAME` picks models (see MODELS); `--tiny-decoder DIR` writes only the
two-layer Llama decoder (hidden size 64) that the tests commit.
"""

import os
import sys
import time

import numpy as np
import onnx
import torch
from onnx import numpy_helper

SEED = 0


def randomize_norms(model, gen):
    """Random statistics and affine parameters for every batch norm, and
    random values for any parameter torchvision or transformers set to all
    zeros (residual-branch gammas, heads)."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
            if m.weight is not None:
                m.weight.data.copy_(torch.rand(n, generator=gen) + 0.5)
                m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)
    for p in model.parameters():
        if p.numel() > 0 and bool((p == 0).all()):
            p.data.copy_(torch.randn(p.shape, generator=gen) * 0.02)


def vision(name):
    import torchvision

    def make():
        kwargs = {"weights": None}
        if name in ("googlenet", "inception_v3"):
            kwargs["aux_logits"] = False
            kwargs["init_weights"] = True
        return getattr(torchvision.models, name)(**kwargs)

    size = 224

    def inputs(batch, _seq, gen):
        return (torch.randn(batch, 3, size, size, generator=gen),)

    return make, inputs, ["x"], {"x": {0: "batch"}}, [(1, None), (2, None)]


def segmentation(name):
    """A torchvision segmentation model: its `out` map, which it resizes to
    the input's height and width (`interpolate(size=x.shape[-2:])`)."""
    import torchvision

    class Out(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)["out"]

    def make():
        return Out(
            getattr(torchvision.models.segmentation, name)(
                weights=None, weights_backbone=None
            )
        )

    def inputs(batch, _seq, gen):
        return (torch.randn(batch, 3, 224, 224, generator=gen),)

    return make, inputs, ["x"], {"x": {0: "batch"}}, [(1, None), (2, None)]


def hf(kind):
    import transformers as tf

    def make():
        if kind == "bert":
            cfg = tf.BertConfig(
                vocab_size=1000,
                hidden_size=128,
                num_hidden_layers=2,
                num_attention_heads=4,
                intermediate_size=256,
                max_position_embeddings=256,
            )
            return tf.BertModel(cfg, add_pooling_layer=False)
        if kind == "gpt2":
            cfg = tf.GPT2Config(
                vocab_size=1000, n_embd=128, n_layer=2, n_head=4, n_positions=256
            )
            return tf.GPT2LMHeadModel(cfg)
        if kind in ("llama", "tiny_llama"):
            small = kind == "tiny_llama"
            cfg = tf.LlamaConfig(
                vocab_size=256 if small else 1000,
                hidden_size=64 if small else 128,
                intermediate_size=128 if small else 256,
                num_hidden_layers=2,
                num_attention_heads=4,
                num_key_value_heads=2,
                max_position_embeddings=256,
            )
            return tf.LlamaForCausalLM(cfg)
        raise ValueError(kind)

    class Logits(torch.nn.Module):
        """The model's main output only (logits or the last hidden state),
        without a KV cache."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids):
            out = self.inner(input_ids=input_ids, use_cache=False, return_dict=True)
            return out[0]

    vocab = 256 if kind == "tiny_llama" else 1000

    def inputs(batch, seq, gen):
        return (torch.randint(0, vocab, (batch, seq), generator=gen),)

    shapes = [(1, 16), (2, 128)] if kind != "tiny_llama" else [(1, 5), (2, 12)]
    return (
        lambda: Logits(make()),
        inputs,
        ["input_ids"],
        {"input_ids": {0: "batch", 1: "seq"}},
        shapes,
    )


MODELS = {
    "resnet18": lambda: vision("resnet18"),
    "resnet50": lambda: vision("resnet50"),
    "mobilenet_v2": lambda: vision("mobilenet_v2"),
    "mobilenet_v3_small": lambda: vision("mobilenet_v3_small"),
    "efficientnet_b0": lambda: vision("efficientnet_b0"),
    "regnet_y_400mf": lambda: vision("regnet_y_400mf"),
    "shufflenet_v2_x1_0": lambda: vision("shufflenet_v2_x1_0"),
    "googlenet": lambda: vision("googlenet"),
    "mnasnet0_5": lambda: vision("mnasnet0_5"),
    "convnext_tiny": lambda: vision("convnext_tiny"),
    "vit_b_16": lambda: vision("vit_b_16"),
    "swin_t": lambda: vision("swin_t"),
    "lraspp_mobilenet_v3_large": lambda: segmentation("lraspp_mobilenet_v3_large"),
    "bert": lambda: hf("bert"),
    "gpt2": lambda: hf("gpt2"),
    "llama": lambda: hf("llama"),
}


def export(name, spec, out):
    make, inputs, input_names, axes, shapes = spec
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    model = make().eval()
    with torch.no_grad():
        randomize_norms(model, gen)
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    # Export at the largest shape: torch.export specializes an axis whose
    # example size is 1.
    batch, seq = shapes[-1]
    args = inputs(batch, seq or 1, gen)
    dims = {}
    dynamic = {}
    for arg_name, arg_axes in axes.items():
        dynamic[arg_name] = {
            axis: dims.setdefault(dim, torch.export.Dim(dim, min=1, max=4096))
            for axis, dim in arg_axes.items()
        }
    start = time.time()
    # torch's defaults: the dynamo exporter, its opset, external data.
    torch.onnx.export(
        model,
        args,
        path,
        input_names=input_names,
        output_names=["output"],
        dynamic_shapes=dynamic,
    )
    took = time.time() - start
    # The exporter writes `model.onnx.data` beside the model.
    onnx.checker.check_model(path)
    for k, (batch, seq) in enumerate(shapes):
        args = inputs(batch, seq or 1, gen)
        with torch.no_grad():
            want = model(*args)
        data = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(data, exist_ok=True)
        for i, a in enumerate(args):
            t = numpy_helper.from_array(a.numpy(), input_names[i])
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(t.SerializeToString())
        t = numpy_helper.from_array(want.numpy(), "output")
        with open(os.path.join(data, "output_0.pb"), "wb") as f:
            f.write(t.SerializeToString())
    print(f"{name}: exported in {took:.1f} s, shapes {shapes}")


def main():
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--tiny-decoder":
        export("tiny_llama", hf("tiny_llama"), args[1])
        return
    if not args:
        sys.exit(__doc__)
    out, names = args[0], args[1:] or list(MODELS)
    for name in names:
        try:
            export(name, MODELS[name](), out)
        except Exception as e:  # keep going: report every model
            print(f"{name}: export failed: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
