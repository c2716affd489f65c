import gzip
import struct

import numpy as np
import pytest

from tensorweave.deploy.datasets import DatasetError, load, load_mnist, read_idx


def _write_idx(path, arr, magic, gz=False):
    header = struct.pack(">I", magic) + struct.pack(f">{arr.ndim}I", *arr.shape)
    data = header + arr.astype(np.uint8).tobytes()
    if gz:
        with gzip.open(str(path) + ".gz", "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)


def _fake_mnist(tmp_path, gz=False, n_train=6, n_test=4):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 255, (n_train, 28, 28))
    _write_idx(tmp_path / "train-images-idx3-ubyte", images, 2051, gz)
    _write_idx(tmp_path / "train-labels-idx1-ubyte", rng.integers(0, 10, (n_train,)), 2049, gz)
    test_images = rng.integers(0, 255, (n_test, 28, 28))
    _write_idx(tmp_path / "t10k-images-idx3-ubyte", test_images, 2051, gz)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte", rng.integers(0, 10, (n_test,)), 2049, gz)


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_idx_files_load(tmp_path, gz):
    _fake_mnist(tmp_path, gz)
    ds = load_mnist(str(tmp_path))
    assert ds.x_train.shape == (6, 784) and ds.x_test.shape == (4, 784)
    assert ds.x_train.dtype == np.float32 and 0.0 <= ds.x_train.min() <= ds.x_train.max() <= 1.0
    assert ds.y_train.dtype == np.int64


def test_digits_split_is_fixed_and_scaled():
    a, b = load("digits"), load("digits")
    assert a.x_train.shape == (1437, 64) and a.x_test.shape == (360, 64)
    np.testing.assert_array_equal(a.y_test, b.y_test)
    assert a.x_train.max() <= 1.0


def test_errors_are_clear(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load_mnist(str(tmp_path / "missing"))
    with pytest.raises(DatasetError, match="not found"):
        load_mnist(str(tmp_path))
    bad = tmp_path / "bad"
    bad.write_bytes(struct.pack(">I", 2051) + struct.pack(">3I", 10, 28, 28) + b"\x00" * 5)
    with pytest.raises(DatasetError, match="corrupt"):
        read_idx(str(bad), 2051)
    with pytest.raises(DatasetError, match="magic number"):
        read_idx(str(bad), 2049)
    with pytest.raises(DatasetError, match="needs --data-dir"):
        load("mnist")
    _fake_mnist(tmp_path, n_train=6)
    _write_idx(tmp_path / "train-labels-idx1-ubyte", np.zeros(5), 2049)
    with pytest.raises(DatasetError, match="6 images but 5 labels"):
        load_mnist(str(tmp_path))
