"""Writes the training split of scikit-learn's digits data set for the
training example (`cargo run --release --example train_digits`).

The split is the one `scripts/train_digits.py` trained the main example's
weights on (80%, stratified, seed 0), so the held-out images in
`examples/data/x_test.bin` stay unseen. Pixels are stored as they ship,
integers 0-16 (one byte each; the example divides by 16), labels as one
byte each.

Run once, offline:  python3 scripts/digits_train_set.py  (numpy, scikit-learn)
"""

import os

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "examples", "data")


def main() -> None:
    digits = load_digits()
    x = digits.data.astype(np.uint8)
    y = digits.target.astype(np.uint8)
    x_train, x_test, y_train, _ = train_test_split(
        x, y, test_size=0.2, random_state=0, stratify=y
    )
    # The held-out half must be the one the main example reads.
    held_out = np.fromfile(os.path.join(OUT, "x_test.bin"), dtype="<f4").reshape(-1, 64)
    assert np.array_equal(held_out, (x_test / 16.0).astype(np.float32))
    x_train.tofile(os.path.join(OUT, "x_train.u8"))
    y_train.tofile(os.path.join(OUT, "y_train.u8"))
    print(f"wrote {len(y_train)} training images")


if __name__ == "__main__":
    main()
