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
    sequence_kernels,
    stack_kernels,
    staleness_kernels,
    state_kernels,
    summary_kernels,
    tensor_array_kernels,
    training_kernels,
)
