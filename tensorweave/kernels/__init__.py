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
    nn_conv_nd_kernels,
    nn_extra_kernels,
    nn_fractional_kernels,
    nn_kernels,
    nn_misc_kernels,
    random_kernels,
    sendrecv_kernels,
    staleness_kernels,
    state_kernels,
    summary_kernels,
    training_kernels,
    training_kernels_extra,
)
