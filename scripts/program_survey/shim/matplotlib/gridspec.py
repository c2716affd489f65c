"""No-op matplotlib.gridspec stand-in."""
from matplotlib.pyplot import __getattr__  # noqa: F401
