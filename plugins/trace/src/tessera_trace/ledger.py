"""The text format's record buffer: tokens and values now, text in bulk later.

Formatting one line per retirement in Python — the hex digits, the string building
— costs several times what executing the instruction does.  So a retirement only
appends a small integer *token* (which line of which instruction: with or without
its register effect) and, when a register changed, the register's value.  The fast
engine does even that without calling anything (:mod:`tessera.engine.capture`).
Every few thousand records the ledger turns them into bytes at once: it joins the
tokens' pre-encoded lines, then writes all the hex digits with a handful of numpy
operations (``int.to_bytes(...).hex()`` on the whole array of values, scattered into
the placeholders the lines leave for them).

A ledger holds the records of one agent at a time (the line prefix — the agent's
name — is part of the pre-encoded lines); when another agent retires, what is held
is written out first, so records stay in retirement order.  Records whose text is
unusual (several registers, memory accesses) are stored as finished text
(token :data:`LITERAL`).

Values that are not plain integers in range of their register's width (a plugin
that stores negative numbers, floats, numpy scalars) send the batch through an
exact per-record path; the result is the same text, just slower.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tessera_trace.effects import hex_digits

#: the token of a record stored as finished text (in :attr:`Ledger.lits`)
LITERAL = 0
#: records held before they are written out
DRAIN_AT = 2048
_WIDTHS = (1, 2, 4, 8)  # register widths (bytes) the bulk path formats; others go the exact way


def encode(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")


class _Table:
    """The pre-encoded lines of one agent: ``head + text`` per token, and their lengths."""

    __slots__ = ("head", "lines", "lengths")

    def __init__(self, head: bytes) -> None:
        self.head = head
        self.lines = np.array([b""], dtype=object)   # numpy: gathered by token in one step
        self.lengths = np.zeros(1, dtype=np.int64)


class Ledger:
    """Tokens and values of one agent's records, written to ``out`` in bulk.

    ``token(prefix, nbytes)`` registers a line: ``prefix`` then, when ``nbytes`` is
    not zero, the value of a register that wide in hex, then a newline.  Callers
    append tokens to :attr:`ids` and values to :attr:`values` (through
    :attr:`record` and :attr:`remember`) after :meth:`enter` made sure the ledger
    holds their agent's records.
    """

    def __init__(self, out: Any) -> None:
        self.out = out
        self.ids: list[int] = []
        self.values: list[Any] = []
        self.lits: list[str] = []
        self.record: Callable[[int], None] = self.ids.append
        self.remember: Callable[[Any], None] = self.values.append
        self.prefixes: list[str] = [""]
        self.widths: list[int] = [0]
        self._widths = np.zeros(1, dtype=np.uint8)
        self.tables: dict[str, _Table] = {}
        #: the agent whose records are held, and its tracer state
        self.agent: Any = None
        self.state: Any = None

    # ------------------------------------------------------------------ tokens

    def token(self, prefix: str, nbytes: int = 0) -> int:
        """A new token for the line ``prefix`` [+ a value of ``nbytes`` bytes in hex] + newline."""
        self.prefixes.append(prefix)
        self.widths.append(nbytes)
        return len(self.prefixes) - 1

    def _table(self, head: str) -> _Table:
        table = self.tables.get(head)
        if table is None:
            table = self.tables[head] = _Table(encode(head))
        have = len(table.lines)
        if have < len(self.prefixes):
            new = [table.head + encode(p) + b"\0" * (2 * w) + b"\n"
                   for p, w in zip(self.prefixes[have:], self.widths[have:], strict=True)]
            lines = np.empty(len(new), dtype=object)
            lines[:] = new
            table.lines = np.concatenate([table.lines, lines])
            table.lengths = np.concatenate([table.lengths, np.fromiter(map(len, new), np.int64, len(new))])
        if len(self._widths) < len(self.widths):
            self._widths = np.array(self.widths, dtype=np.uint8)
        return table

    # ------------------------------------------------------------------ agents

    def enter(self, agent: Any, state: Any) -> None:
        """From now on records are ``agent``'s (whose tracer state is ``state``)."""
        if self.ids:
            self.drain()
        self.agent = agent
        self.state = state

    # ------------------------------------------------------------------ writing out

    def drain(self) -> None:
        """Write the held records out (in order, before anything written after)."""
        ids = self.ids
        if not ids:
            return
        head = self.state.head if self.state is not None else ""
        try:
            data = self._bulk(head)
        except (OverflowError, TypeError, ValueError):
            data = self._exact(head)
        count = len(ids)
        ids.clear()
        self.values.clear()
        self.lits.clear()
        self.out.put(data, count)

    def _bulk(self, head: str) -> bytearray:
        table = self._table(head)
        tokens = np.frombuffer(array("I", self.ids), dtype=np.uint32)  # unsigned: the fast conversion
        pieces = table.lines[tokens].tolist()
        lengths = None
        if self.lits:
            where = np.flatnonzero(tokens == LITERAL).tolist()
            if len(where) != len(self.lits):
                raise ValueError("literal records and texts out of step")
            hb = table.head
            for p, text in zip(where, self.lits, strict=True):
                pieces[p] = hb + encode(text)
            if self.values:
                lengths = table.lengths[tokens]
                lengths[where] = [len(pieces[p]) for p in where]
        data = bytearray().join(pieces)
        if not self.values:
            return data
        if lengths is None:
            lengths = table.lengths[tokens]
        widths = self._widths[tokens]
        valued = widths != 0
        ends = lengths.cumsum().compress(valued)
        widths = widths.compress(valued)
        values = np.frombuffer(array("Q", self.values), dtype=np.uint64)  # raises unless 0 <= v < 2**64
        if len(values) != len(ends):
            raise ValueError("values and valued records out of step")
        buf = np.frombuffer(data, dtype=np.uint8)
        w0 = int(widths[0])
        kinds = [w0] if bool((widths == w0).all()) else np.unique(widths).tolist()
        for w in kinds:
            if w not in _WIDTHS:
                raise ValueError(f"no bulk path for {w}-byte registers")
            if len(kinds) == 1:
                v, e = values, ends
            else:
                sel = widths == w
                v, e = values[sel], ends[sel]
            if w < 8 and bool((v >> np.uint64(8 * w)).any()):
                raise OverflowError("a value wider than its register")
            digits = np.frombuffer(v.astype(f">u{w}").tobytes().hex().encode("ascii"), dtype=np.uint8)
            # every 2w-byte window of the output as a row: one row per value is written
            rows = as_strided(buf, shape=(len(buf) - 2 * w + 1, 2 * w), strides=(1, 1), writeable=True)
            rows[e - (1 + 2 * w)] = digits.reshape(-1, 2 * w)
        return data

    def _exact(self, head: str) -> bytearray:
        """The same text one record at a time, for values the bulk path cannot take."""
        hb = encode(head)
        out = bytearray()
        values = iter(self.values)
        lits = iter(self.lits)
        for token in self.ids:
            if token == LITERAL:
                out += hb + encode(next(lits))
                continue
            w = self.widths[token]
            out += hb + encode(self.prefixes[token])
            if w:
                out += encode(hex_digits(next(values), w))
            out += b"\n"
        return out
