"""Trains the MLP of the main example on scikit-learn's digits data set.

The data set ships with scikit-learn (8x8 images, 10 classes, 1797 samples),
so nothing is downloaded. The network is the seed's MLP with 64 inputs:
x (n, 64) -> matmul w0.T (64 -> 128) + b0 -> relu -> matmul w1.T (128 -> 10) + b1.

Run once, offline:  python3 scripts/train_digits.py
It writes little-endian raw files to examples/data/ (shapes in
examples/data/README.md) and prints the held-out accuracy. The example reads
them; it never trains or downloads anything.
"""

import os

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "examples", "data")


def main() -> None:
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=0, stratify=y
    )

    rng = np.random.default_rng(0)
    w0 = (rng.standard_normal((128, 64)) * np.sqrt(2.0 / 64)).astype(np.float32)
    b0 = np.zeros(128, np.float32)
    w1 = (rng.standard_normal((10, 128)) * np.sqrt(2.0 / 128)).astype(np.float32)
    b1 = np.zeros(10, np.float32)
    params = [w0, b0, w1, b1]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr, beta1, beta2, eps = 1e-3, 0.9, 0.999, 1e-8

    step = 0
    for epoch in range(60):
        order = rng.permutation(len(x_train))
        for start in range(0, len(order), 32):
            idx = order[start : start + 32]
            xb, yb = x_train[idx], y_train[idx]
            h_pre = xb @ w0.T + b0
            h = np.maximum(h_pre, 0)
            logits = h @ w1.T + b1
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            d_logits = p
            d_logits[np.arange(len(yb)), yb] -= 1
            d_logits /= len(yb)
            g_w1 = d_logits.T @ h
            g_b1 = d_logits.sum(axis=0)
            d_h = d_logits @ w1 * (h_pre > 0)
            g_w0 = d_h.T @ xb
            g_b0 = d_h.sum(axis=0)
            step += 1
            for i, g in enumerate([g_w0, g_b0, g_w1, g_b1]):
                m[i] = beta1 * m[i] + (1 - beta1) * g
                v[i] = beta2 * v[i] + (1 - beta2) * g * g
                m_hat = m[i] / (1 - beta1**step)
                v_hat = v[i] / (1 - beta2**step)
                params[i] -= (lr * m_hat / (np.sqrt(v_hat) + eps)).astype(np.float32)

    logits = np.maximum(x_test @ w0.T + b0, 0) @ w1.T + b1
    accuracy = float((logits.argmax(axis=1) == y_test).mean())
    print(f"held-out accuracy: {accuracy:.4f} on {len(y_test)} images")

    os.makedirs(OUT, exist_ok=True)
    for name, array in [
        ("w0", w0), ("b0", b0), ("w1", w1), ("b1", b1),
        ("x_test", x_test), ("y_test", y_test),
    ]:
        array.astype(array.dtype.newbyteorder("<")).tofile(os.path.join(OUT, f"{name}.bin"))


if __name__ == "__main__":
    main()
