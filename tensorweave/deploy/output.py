"""Merged task output: every line prefixed with its task (`[worker 1] `), never cut mid-line.

Colour (ANSI escape codes on the prefix only) is used when the stream is a terminal and
`NO_COLOR` is unset (https://no-color.org), or when forced with `color=True`.
"""

from __future__ import annotations

import os
import threading
from typing import BinaryIO, TextIO

# Bold bright colours; ps and workers draw from the same cycle in start order.
_PALETTE = ("36", "33", "32", "35", "34", "31", "96", "93", "92", "95", "94", "91")
_RESET = "\x1b[0m"


def want_color(stream: TextIO, color: bool | None) -> bool:
    """Whether to colour: `color` if given, else a terminal stream without `NO_COLOR`."""
    if color is not None:
        return color
    isatty = getattr(stream, "isatty", None)
    try:
        tty = bool(isatty and isatty())
    except ValueError:  # a closed stream
        tty = False
    return tty and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


class PrefixedWriter:
    """Writes whole lines from several tasks to one text stream, under one lock.

    Args:
      stream: text stream, e.g. `sys.stdout`.
      color: bool, colour the prefixes.
    """

    def __init__(self, stream: TextIO, color: bool = False):
        self._stream = stream
        self._color = color
        self._lock = threading.Lock()
        self._prefixes: dict[str, str] = {}

    def prefix(self, name: str) -> str:
        """`"[<name>] "`, coloured per name (each new name takes the next colour)."""
        with self._lock:
            return self._prefix_locked(name)

    def _prefix_locked(self, name: str) -> str:
        if name not in self._prefixes:
            text = f"[{name}]"
            if self._color:
                code = _PALETTE[len(self._prefixes) % len(_PALETTE)]
                text = f"\x1b[1;{code}m{text}{_RESET}"
            self._prefixes[name] = text + " "
        return self._prefixes[name]

    def write_line(self, name: str, line: str) -> None:
        """Writes `line` (one line, with or without its newline) with the task's prefix."""
        line = line.rstrip("\r\n")
        with self._lock:
            try:
                self._stream.write(f"{self._prefix_locked(name)}{line}\n")
                self._stream.flush()
            except (OSError, ValueError):  # closed or broken stream: keep the tasks going
                pass

    def message(self, text: str) -> None:
        """Writes the launcher's own line, `tensorweave launch: <text>`."""
        with self._lock:
            try:
                self._stream.write(f"tensorweave launch: {text}\n")
                self._stream.flush()
            except (OSError, ValueError):
                pass


def pump_lines(pipe: BinaryIO, name: str, writer: PrefixedWriter) -> None:
    """Copies a task's output pipe to `writer` line by line until EOF, then closes it.

    Bytes are decoded as UTF-8 (bad bytes replaced); a last line without newline still
    gets one. Meant to run on its own thread, one per task.
    """
    try:
        for raw in iter(pipe.readline, b""):
            writer.write_line(name, raw.decode("utf-8", errors="replace"))
    except (OSError, ValueError):  # the pipe was closed under us during cleanup
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass
