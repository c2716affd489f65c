"""`tf.contrib.rnn`: the TF 1.x contrib names of the RNN cells and functions (explicit
re-exports of `tensorweave.ops.rnn_cell_impl` and `tensorweave.ops.rnn`)."""

from tensorweave.ops.rnn import (
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    static_bidirectional_rnn,
    static_rnn,
)
from tensorweave.ops.rnn_cell_impl import (
    BasicLSTMCell,
    BasicRNNCell,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
    MultiRNNCell,
    RNNCell,
)
from tensorweave.ops.rnn_cell_wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper

__all__ = [
    "BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell",
    "LSTMCell", "LSTMStateTuple", "MultiRNNCell", "RNNCell", "ResidualWrapper",
    "bidirectional_dynamic_rnn", "dynamic_rnn", "static_bidirectional_rnn", "static_rnn",
]
