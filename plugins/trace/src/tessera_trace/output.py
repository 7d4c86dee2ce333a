"""Where a trace goes: a buffered, size-limited writer.

Formats hand it text in two ways: strings appended to :attr:`Output.buf` (a plain
list, so appending is one C call; every element is whole lines), joined into one
large write now and then, and finished bytes through :meth:`Output.put` (the text
format's :class:`~tessera_trace.ledger.Ledger` formats thousands of records at
once).  ``before`` — the ledger's ``drain`` — runs before anything else is queued
or written, so records and notes stay in order.  The size limit is enforced at
those writes, never per record: when a chunk would pass the limit, the part up to
the last complete line that fits is written, then the format's note saying where
the trace was cut, and everything after that is dropped (the run goes on).
Records are one line each in every format, so a cut trace stays parsable.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from typing import IO, Any

from tessera.errors import ConfigError
from tessera.logs import get_logger

log = get_logger("tessera.trace")  # structlog is imported only if a message is shown

#: Default ``--trace-limit``: 1 GiB.
DEFAULT_LIMIT = 1 << 30


def open_target(target: Any) -> tuple[IO[Any], bool, str]:
    """``(stream, we_own_it, description)`` for a path, ``"-"`` (stdout) or an open stream.

    An unwritable path (missing directory, a directory, no permission) is a
    :class:`ConfigError` naming it, raised before anything runs.
    """
    if target == "-":
        return sys.stdout, False, "stdout"
    if isinstance(target, str | bytes | os.PathLike):
        path = os.fsdecode(target)
        if os.path.isdir(path):
            raise ConfigError(f"cannot write trace to {path}: it is a directory")
        try:
            return open(path, "wb"), True, path  # closed by Output.close
        except OSError as exc:
            raise ConfigError(f"cannot write trace to {path}: {exc.strerror or exc}") from None
    if not hasattr(target, "write"):
        raise ConfigError(f"trace output {target!r} is neither a path nor a writable stream")
    return target, False, getattr(target, "name", type(target).__name__)


class Output:
    """A size-limited sink for one trace; ``note(lines, bytes)`` renders the cut note."""

    def __init__(self, target: Any, limit: int, note: Callable[[int, int, int], str]) -> None:
        if limit <= 0:
            raise ConfigError("--trace-limit must be positive")
        self.stream, self.owned, self.name = open_target(target)
        self.text = isinstance(self.stream, io.TextIOBase)
        self.limit = limit
        self.note = note
        self.buf: list[str] = []
        self.written = 0          # bytes written, notes included
        self.lines = 0            # complete lines written before any cut
        self.cut = False
        self.closed = False
        self.failed: str | None = None
        self.on_cut: Callable[[], None] | None = None
        #: called before text is queued or written: whoever holds records writes them first
        self.before: Callable[[], None] | None = None

    def _raw(self, data: bytes | bytearray) -> None:
        if self.failed is not None:
            return
        try:
            if self.text:
                self.stream.write(bytes(data).decode("utf-8", "replace"))
            else:
                self.stream.write(data)
        except (OSError, ValueError) as exc:
            self._fail(exc)
            return
        self.written += len(data)

    def _fail(self, exc: Exception) -> None:
        """The output broke (a closed pipe, a full disk): stop tracing, keep the run going.

        A reader that went away (``--trace-out - | head``) is normal and silent;
        anything else is one warning line.
        """
        self.failed = f"{type(exc).__name__}: {exc}"
        self.cut = True
        if not isinstance(exc, BrokenPipeError):
            log.warning("trace output failed; the run goes on untraced", output=self.name, error=self.failed)
        if self.on_cut is not None:
            self.on_cut()

    def flush(self) -> None:
        """Write what the observers appended, up to the limit."""
        if self.before is not None:
            self.before()
        self._flush_text()

    def _flush_text(self) -> None:
        buf = self.buf
        if not buf:
            return
        data = "".join(buf).encode("utf-8", "backslashreplace")
        buf.clear()
        self._emit(data)

    def put(self, data: bytes | bytearray, lines: int | None = None) -> None:
        """Write finished lines (``lines`` of them, if known), after the text queued before them."""
        self._flush_text()
        self._emit(data, lines)

    def _emit(self, data: bytes | bytearray, lines: int | None = None) -> None:
        if self.cut or self.closed or not data:
            return
        if lines is None:
            lines = data.count(b"\n")
        room = self.limit - self.written
        if len(data) <= room:
            self._raw(data)
            self.lines += lines
            return
        end = data.rfind(b"\n", 0, room) + 1     # whole lines only; 0 when none fits
        if end:
            self._raw(data[:end])
            self.lines += data.count(b"\n", 0, end)
        self._raw(self.note(self.lines, self.written, self.limit).encode("utf-8"))
        self.cut = True
        if self.on_cut is not None:
            self.on_cut()

    def add(self, text: str) -> None:
        """Queue text (notes, events, a report: any number of whole lines) in record order."""
        if text:
            if self.before is not None:
                self.before()
            self.buf.append(text)

    def write_now(self, text: str) -> None:
        """Write ``text`` past the buffer and the limit (headers, footers, final reports)."""
        self.flush()
        if not self.closed and not self.cut:
            self._raw(text.encode("utf-8", "backslashreplace"))
            self.lines += text.count("\n")

    def sync(self) -> None:
        """Flush the buffer and the stream, so the file is complete up to now."""
        self.flush()
        if not self.closed and self.failed is None:
            try:
                self.stream.flush()
            except (OSError, ValueError) as exc:
                self._fail(exc)

    def close(self, footer: str = "") -> None:
        if self.closed:
            return
        self.flush()
        if footer:
            self._raw(footer.encode("utf-8", "backslashreplace"))
        self.closed = True
        try:
            if self.owned:
                self.stream.close()
            else:
                self.stream.flush()
        except (OSError, ValueError):
            pass
