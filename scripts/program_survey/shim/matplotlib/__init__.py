"""No-op matplotlib stand-in (the survey machine has none)."""
from matplotlib.pyplot import _Noop


def use(*a, **k):
    pass


def __getattr__(name):
    return _Noop()
