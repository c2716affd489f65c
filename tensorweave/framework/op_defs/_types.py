"""TensorFlow's type sets, as spelled in the attr specs of the op definitions here."""

FLOATS = "half, float, double"
COMPLEX = "complex64, complex128"
REAL_NUMBER = f"{FLOATS}, int32, int64, uint8, int16, int8, uint16, uint32, uint64"
NUMBER = f"{REAL_NUMBER}, {COMPLEX}"
INTEGERS = "int8, int16, int32, int64, uint8, uint16, uint32, uint64"
INDEX = "{int32, int64}"
