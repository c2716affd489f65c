"""No-op matplotlib.patches stand-in."""
from matplotlib.pyplot import __getattr__  # noqa: F401
