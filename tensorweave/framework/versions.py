"""Build and version constants of the `tf` namespace (follows `tensorflow/python/framework/
versions.py`).

tensorweave implements TensorFlow 1.15's graph API, so `VERSION` names that API version
(tensorweave's own version is `tensorweave.__version__`); the build constants describe this
pure-Python build: no C++ compiler, no C++ ABI, not a monolithic build.
"""

from __future__ import annotations

import platform

#: The TensorFlow API version tensorweave follows (TF 1.15).
VERSION = "1.15.0"
#: tensorweave's own version, in place of TensorFlow's git describe.
GIT_VERSION = "tensorweave-0.1.0"
#: The compiler of the Python that runs tensorweave (there is no C++ build).
COMPILER_VERSION = platform.python_compiler()
#: The C++ ABI flag of a C++ build; 0 (there is none).
CXX11_ABI_FLAG = 0
#: The C++ standard of a C++ build (`__cplusplus`); 0 (there is none).
CXX_VERSION = 0
#: Whether the build is monolithic; 0.
MONOLITHIC_BUILD = 0
#: The `GraphDef.versions.producer` tensorweave writes (see `Graph.graph_def_versions`).
GRAPH_DEF_VERSION = 27
#: The oldest consumer version that can read tensorweave's GraphDefs.
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
#: The oldest producer version whose GraphDefs tensorweave reads.
GRAPH_DEF_VERSION_MIN_PRODUCER = 0

__all__ = [
    "COMPILER_VERSION", "CXX11_ABI_FLAG", "CXX_VERSION", "GIT_VERSION", "GRAPH_DEF_VERSION",
    "GRAPH_DEF_VERSION_MIN_CONSUMER", "GRAPH_DEF_VERSION_MIN_PRODUCER", "MONOLITHIC_BUILD",
    "VERSION",
]
