"""Writes a small synthetic text8.zip (Zipf-distributed words, no download)."""
import os
import tempfile
import zipfile

import numpy as np

BASE = ("the of and one zero in a to is two nine three four five six seven eight for "
        "as was by that with on are from his it an be or which at american britain "
        "going hardware computer system first new would its also have has").split()


def make(path=None, n_words=400000):
    path = path or os.path.join(tempfile.gettempdir(), "survey_text8_v2.zip")
    if os.path.exists(path):
        return path
    rng = np.random.RandomState(0)
    vocab = BASE + [f"w{i}" for i in range(52000)]  # > the 50000 words word2vec_basic keeps
    p = 1.0 / np.arange(1, len(vocab) + 1)
    words = rng.choice(len(vocab), size=n_words, p=p / p.sum())
    # Every word at least once, so the 50000 most common words all exist.
    text = " ".join([vocab[i] for i in words] + vocab)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("text8", text)
    return path
