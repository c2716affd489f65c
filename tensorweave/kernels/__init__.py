"""NumPy kernels, one module per op family; importing this package registers them all.

Every module that registers kernels is imported here, one per line (sorted, so that parallel
additions merge); no kernel module registers another as a side effect.
"""

import tensorweave.kernels.array_kernels  # noqa: F401
import tensorweave.kernels.array_kernels_index  # noqa: F401
import tensorweave.kernels.array_misc_kernels  # noqa: F401
import tensorweave.kernels.array_more_kernels  # noqa: F401
import tensorweave.kernels.complex_fft_kernels  # noqa: F401
import tensorweave.kernels.control_flow_kernels  # noqa: F401
import tensorweave.kernels.data_flow_kernels  # noqa: F401
import tensorweave.kernels.dataset_kernels  # noqa: F401
import tensorweave.kernels.dataset_readers  # noqa: F401
import tensorweave.kernels.decode_kernels  # noqa: F401
import tensorweave.kernels.fake_quant_kernels  # noqa: F401
import tensorweave.kernels.image_color_kernels  # noqa: F401
import tensorweave.kernels.image_kernels  # noqa: F401
import tensorweave.kernels.image_resize_kernels  # noqa: F401
import tensorweave.kernels.io_kernels  # noqa: F401
import tensorweave.kernels.iterator_kernels  # noqa: F401
import tensorweave.kernels.linalg_kernels  # noqa: F401
import tensorweave.kernels.logging_kernels  # noqa: F401
import tensorweave.kernels.math_kernels  # noqa: F401
import tensorweave.kernels.matmul_kernels  # noqa: F401
import tensorweave.kernels.misc_kernels  # noqa: F401
import tensorweave.kernels.nn_conv_kernels  # noqa: F401
import tensorweave.kernels.nn_conv_nd_kernels  # noqa: F401
import tensorweave.kernels.nn_extra_kernels  # noqa: F401
import tensorweave.kernels.nn_fractional_kernels  # noqa: F401
import tensorweave.kernels.nn_kernels  # noqa: F401
import tensorweave.kernels.nn_misc_kernels  # noqa: F401
import tensorweave.kernels.parsing_kernels  # noqa: F401
import tensorweave.kernels.print_kernels  # noqa: F401
import tensorweave.kernels.random_kernels  # noqa: F401
import tensorweave.kernels.random_more_kernels  # noqa: F401
import tensorweave.kernels.reader_kernels  # noqa: F401
import tensorweave.kernels.reduction_kernels  # noqa: F401
import tensorweave.kernels.resource_variable_kernels  # noqa: F401
import tensorweave.kernels.scatter_nd_kernels  # noqa: F401
import tensorweave.kernels.script_kernels  # noqa: F401
import tensorweave.kernels.segment_kernels  # noqa: F401
import tensorweave.kernels.sendrecv_kernels  # noqa: F401
import tensorweave.kernels.sparse_cross_kernels  # noqa: F401
import tensorweave.kernels.sparse_edit_distance  # noqa: F401
import tensorweave.kernels.sparse_kernels  # noqa: F401
import tensorweave.kernels.special_math_kernels  # noqa: F401
import tensorweave.kernels.stack_kernels  # noqa: F401
import tensorweave.kernels.staleness_kernels  # noqa: F401
import tensorweave.kernels.state_kernels  # noqa: F401
import tensorweave.kernels.string_kernels  # noqa: F401
import tensorweave.kernels.summary_kernels  # noqa: F401
import tensorweave.kernels.summary_media_kernels  # noqa: F401
import tensorweave.kernels.tensor_array_kernels  # noqa: F401
import tensorweave.kernels.training_kernels  # noqa: F401
import tensorweave.kernels.training_kernels_extra  # noqa: F401
