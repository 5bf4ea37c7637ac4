#!/usr/bin/python3
"""Writes the digits data infer-quantize's tests and models/README.md use, from the same
split tools/train_digits_model.py trained models/digits_cnn.onnx on (scikit-learn's
digits, pixels / 16, stratified 80/20 train/test split, seed 1234):

    models/digits_test_images.npy       the 360 held-out images, float32 [360,1,8,8]
    models/digits_test_labels.npy       their labels, int64 [360]
    models/digits_calibration/train_<k>.npy
                                        the first 128 training images in 4 batches of 32,
                                        float32 [32,1,8,8]: calibration inputs

Run from the repository root (needs scikit-learn, e.g. Debian's python3-sklearn; the
files are committed, so nothing else needs it):

    /usr/bin/python3 tools/infer-quantize/make_digits_data.py

It checks that the held-out images begin with models/digits_samples.npy, so the split is
the model's own, and writes nothing else.
"""

import os
import sys

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 1234  # tools/train_digits_model.py's
CALIBRATION_FILES = 4
CALIBRATION_BATCH = 32

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "models")


def main():
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    x_train, x_test, _, y_test = train_test_split(x, y, test_size=0.2, stratify=y, random_state=SEED)
    shipped = np.load(os.path.join(MODELS, "digits_samples.npy"))
    if not np.array_equal(x_test[:len(shipped)], shipped):
        sys.exit("error: this split does not reproduce models/digits_samples.npy")
    np.save(os.path.join(MODELS, "digits_test_images.npy"), np.ascontiguousarray(x_test, np.float32))
    np.save(os.path.join(MODELS, "digits_test_labels.npy"), np.ascontiguousarray(y_test, np.int64))
    folder = os.path.join(MODELS, "digits_calibration")
    os.makedirs(folder, exist_ok=True)
    for k in range(CALIBRATION_FILES):
        batch = x_train[k * CALIBRATION_BATCH:(k + 1) * CALIBRATION_BATCH]
        np.save(os.path.join(folder, f"train_{k}.npy"), np.ascontiguousarray(batch, np.float32))
    print(f"wrote {len(x_test)} held-out images and labels, {CALIBRATION_FILES} x {CALIBRATION_BATCH} "
          f"calibration images")


if __name__ == "__main__":
    main()
