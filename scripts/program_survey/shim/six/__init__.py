"""Minimal six stand-in (six.moves.xrange / urllib)."""
from . import moves  # noqa
