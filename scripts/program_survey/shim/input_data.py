"""Offline stand-in for tensorflow.examples.tutorials.mnist.input_data.

sklearn's bundled 8x8 digits, resized (nearest neighbour) to 28x28 and repeated to
MNIST-like set sizes, float32 in [0, 1]; labels uint8 or one-hot float64 like the original.
"""
import collections

import numpy as np
from sklearn.datasets import load_digits


class _Arr(np.ndarray):
    """ndarray with NumPy 1's tostring() (removed in NumPy 2), for old programs."""

    def tostring(self, order="C"):
        return self.tobytes(order)


Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


class DataSet:
    def __init__(self, images, labels, reshape=True):
        if images.dtype == np.uint8:
            images = images.view(_Arr)
        self._images = images if reshape else images.reshape(-1, 28, 28, 1)
        self.images_shape = self._images.shape
        self._labels = labels
        self._num_examples = images.shape[0]
        self._epochs_completed = 0
        self._index_in_epoch = 0

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        start = self._index_in_epoch
        if start + batch_size > self._num_examples:
            self._epochs_completed += 1
            perm = np.random.permutation(self._num_examples)
            self._images = self._images[perm]
            self._labels = self._labels[perm]
            start = 0
        self._index_in_epoch = start + batch_size
        return (self._images[start:start + batch_size],
                self._labels[start:start + batch_size])


def _digits(one_hot):
    d = load_digits()
    idx = (np.arange(28) * 8) // 28
    img = (d.images[:, idx][:, :, idx] / 16.0).astype(np.float32).reshape(-1, 784)
    lab = d.target.astype(np.uint8)
    if one_hot:
        lab = np.eye(10)[lab]
    return img, lab


def read_data_sets(train_dir="", fake_data=False, one_hot=False, dtype=None,
                   reshape=True, validation_size=200, seed=None, source_url=None):
    validation_size = min(validation_size, 200)  # the digits are 1,797 images, not 70,000
    img, lab = _digits(one_hot)
    if str(getattr(dtype, "name", dtype)) == "uint8":
        img = np.round(img * 255).astype(np.uint8).view(_Arr)
    rng = np.random.RandomState(0)
    p = rng.permutation(len(img))
    img, lab = img[p], lab[p]
    test = DataSet(img[:300], lab[:300], reshape)
    val = DataSet(img[300:300 + validation_size], lab[300:300 + validation_size], reshape)
    tr_i, tr_l = img[300 + validation_size:], lab[300 + validation_size:]
    train = DataSet(np.concatenate([tr_i] * 4), np.concatenate([tr_l] * 4), reshape)
    return Datasets(train=train, validation=val, test=test)
