"""NumPy kernels, one module per op family; importing this package registers them all."""

from tensorweave.kernels import (  # noqa: F401
    array_kernels,
    array_kernels_index,
    control_flow_kernels,
    data_flow_kernels,
    io_kernels,
    logging_kernels,
    math_kernels,
    nn_conv_kernels,
    nn_kernels,
    random_kernels,
    sendrecv_kernels,
    staleness_kernels,
    state_kernels,
    summary_kernels,
    training_kernels,
)
# ruff: noqa: I001  (one import per line, so parallel additions merge)
from tensorweave.kernels import dataset_kernels  # noqa: F401
from tensorweave.kernels import dataset_readers  # noqa: F401
from tensorweave.kernels import decode_kernels  # noqa: F401
from tensorweave.kernels import image_kernels  # noqa: F401
from tensorweave.kernels import iterator_kernels  # noqa: F401
from tensorweave.kernels import parsing_kernels  # noqa: F401
from tensorweave.kernels import reader_kernels  # noqa: F401
