"""Datasets for the demo: scikit-learn's bundled digits (no download) and MNIST from the
standard IDX files when the user has them.

Wrong paths and corrupt files raise `DatasetError` with a message meant for a person, never
a traceback from deep inside NumPy.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import struct

import numpy as np

_IMAGES_MAGIC = 2051
_LABELS_MAGIC = 2049
_MNIST_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}


class DatasetError(Exception):
    """A dataset could not be found or read; the message says which file and why."""


@dataclasses.dataclass(frozen=True)
class Dataset:
    """Features float32 [n, d] scaled to [0, 1] and int64 labels [n], train and test."""

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    num_classes: int = 10

    @property
    def num_features(self) -> int:
        """Features per example."""
        return int(self.x_train.shape[1])


def load_digits(seed: int = 0) -> Dataset:
    """scikit-learn's 8x8 digits (1,797 images), scaled to [0, 1], stratified 80/20 split
    with a fixed seed."""
    from sklearn.datasets import load_digits as sk_digits
    from sklearn.model_selection import train_test_split

    data = sk_digits()
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=0.2, random_state=seed, stratify=y
    )
    return Dataset("digits", x_tr, y_tr, x_te, y_te)


def _find(data_dir: str, stem: str) -> str:
    for candidate in (stem, stem + ".gz", stem.replace("-idx", ".idx")):
        path = os.path.join(data_dir, candidate)
        if os.path.isfile(path):
            return path
    raise DatasetError(
        f"MNIST file {stem}[.gz] not found in {data_dir!r}; expected the standard files "
        f"{', '.join(_MNIST_FILES.values())} (optionally gzipped)"
    )


def _read_bytes(path: str) -> bytes:
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise DatasetError(f"cannot read {path}: {e}") from None


def read_idx(path: str, expect_magic: int) -> np.ndarray:
    """Parses one IDX file (big-endian header: magic, dimension sizes; then uint8 data).

    Raises:
      DatasetError: wrong magic number, truncated file, or unreadable file.
    """
    raw = _read_bytes(path)
    if len(raw) < 8:
        raise DatasetError(f"{path} is too short to be an IDX file ({len(raw)} bytes)")
    magic = struct.unpack(">I", raw[:4])[0]
    if magic != expect_magic:
        raise DatasetError(
            f"{path} is not an IDX {'image' if expect_magic == _IMAGES_MAGIC else 'label'} "
            f"file (magic number {magic}, expected {expect_magic})"
        )
    ndim = magic & 0xFF
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise DatasetError(f"{path} is corrupt: truncated header ({len(raw)} bytes)")
    dims = struct.unpack(f">{ndim}I", raw[4:header])
    need = int(np.prod(dims))
    if len(raw) - header != need:
        raise DatasetError(
            f"{path} is corrupt: header announces {need} values of shape {dims} but "
            f"{len(raw) - header} bytes follow"
        )
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(dims)


def load_mnist(data_dir: str) -> Dataset:
    """MNIST from `data_dir` (`train-images-idx3-ubyte[.gz]` etc.), pixels scaled to [0, 1].

    Raises:
      DatasetError: missing directory or files, corrupt files, mismatched counts.
    """
    if not os.path.isdir(data_dir):
        raise DatasetError(f"MNIST data directory {data_dir!r} does not exist")
    images = {k: read_idx(_find(data_dir, v), _IMAGES_MAGIC)
              for k, v in _MNIST_FILES.items() if k.endswith("images")}
    labels = {k: read_idx(_find(data_dir, v), _LABELS_MAGIC)
              for k, v in _MNIST_FILES.items() if k.endswith("labels")}
    for split in ("train", "test"):
        n_img, n_lab = len(images[f"{split}_images"]), len(labels[f"{split}_labels"])
        if n_img != n_lab:
            raise DatasetError(f"MNIST {split} set has {n_img} images but {n_lab} labels")

    def flat(a: np.ndarray) -> np.ndarray:
        return (a.reshape(len(a), -1) / 255.0).astype(np.float32)

    return Dataset("mnist", flat(images["train_images"]),
                   labels["train_labels"].astype(np.int64), flat(images["test_images"]),
                   labels["test_labels"].astype(np.int64))


def load(name: str, data_dir: str | None = None, seed: int = 0) -> Dataset:
    """`digits` or `mnist` (which needs `data_dir`).

    Raises:
      DatasetError: unknown name, or the MNIST errors above.
    """
    if name == "digits":
        return load_digits(seed)
    if name == "mnist":
        if not data_dir:
            raise DatasetError("--data mnist needs --data-dir DIR with the MNIST IDX files")
        return load_mnist(data_dir)
    raise DatasetError(f"unknown dataset {name!r}; use digits or mnist")


def batches(ds: Dataset, batch_size: int, seed: int):
    """Endless shuffled minibatches (x float32 [batch, d], y int64 [batch])."""
    rng = np.random.default_rng(seed)
    n = len(ds.x_train)
    while True:
        order = rng.permutation(n)
        for start in range(0, n - batch_size + 1, batch_size):
            idx = order[start : start + batch_size]
            yield ds.x_train[idx], ds.y_train[idx]
