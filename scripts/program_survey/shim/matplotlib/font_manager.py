"""No-op matplotlib.font_manager stand-in."""
from matplotlib.pyplot import __getattr__  # noqa: F401
