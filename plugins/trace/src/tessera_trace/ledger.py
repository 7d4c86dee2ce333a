"""The commit-log formats' record buffer: tokens and values now, text in bulk later.

Formatting one line per retirement in Python — the numbers, the string building —
costs several times what executing the instruction does.  So a retirement only
appends a small integer *token* (which line of which instruction: with or without
its register effect) and, when a register changed, the register's value.  The fast
engine does even that without calling anything (the core's record operation,
:mod:`tessera.engine.record`).
Every :data:`DRAIN_AT` records the ledger turns them into bytes at once:

* hex values (``--trace text``): the tokens' pre-encoded lines are joined, then all
  the hex digits are written with a handful of numpy operations
  (``int.to_bytes(...).hex()`` on the whole array of values, scattered into the
  placeholders the lines leave for them);
* anything else (decimal values, a record index — ``--trace jsonl``): a numpy object
  array holds each record's pieces (head, index, text, value, tail) in order, filled
  column by column, and is joined once.

A record's line is ``head [index] prefix [value suffix]`` and a newline, where the
head is the agent's (:meth:`Format.head`), the index the record's position in the
filtered stream (for indexed formats), and prefix, value width and suffix the
token's.  A ledger holds the records of one agent at a time; when another agent
retires, what is held is written out first, so records stay in retirement order.
Records whose text is unusual (several registers, memory accesses) are stored as
finished text (token :data:`LITERAL`, the text after the index).

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
#: records held before they are written out (about 150 KiB of text: stays in cache)
DRAIN_AT = 2048
_WIDTHS = (1, 2, 4, 8)  # register widths (bytes) the hex bulk path formats; others go the exact way


def encode(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")


def _objects(items: list[Any]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


_PADDED = _objects([f"{i:03d}" for i in range(1000)])   # the last three digits of a number >= 1000
_UNPADDED = _objects([str(i) for i in range(1000)])     # a number below 1000


class _Table:
    """The pre-encoded hex-format lines of one agent: ``head + text`` per token, and their lengths."""

    __slots__ = ("head", "lines", "lengths")

    def __init__(self, head: bytes) -> None:
        self.head = head
        self.lines = _objects([b""])   # numpy: gathered by token in one step
        self.lengths = np.zeros(1, dtype=np.int64)


class Ledger:
    """Tokens and values of one agent's records, written to ``out`` in bulk.

    ``token(prefix, nbytes, suffix)`` registers a line.  Callers append tokens to
    :attr:`ids` and values to :attr:`values` (through :attr:`record` and
    :attr:`remember`) after :meth:`enter` made sure the ledger holds their agent's
    records.  ``hexed``: values are written in hex as wide as their register
    (``nbytes``), else in decimal; ``indexed``: each record carries its index, the
    first one ``first``.
    """

    def __init__(self, out: Any, *, hexed: bool = True, indexed: bool = False, first: int = 0) -> None:
        self.out = out
        self.hexed = hexed
        self.indexed = indexed
        #: the index of the next record written out
        self.index = first
        self.ids: list[int] = []
        self.values: list[Any] = []
        self.lits: list[str] = []
        self.record: Callable[[int], None] = self.ids.append
        self.remember: Callable[[Any], None] = self.values.append
        self.prefixes: list[str] = [""]
        self.suffixes: list[str] = [""]
        self.widths: list[int] = [0]
        self._widths = np.zeros(1, dtype=np.uint8)
        self._prefixes = _objects([""])
        self._ends = _objects([""])          # suffix + newline (or just the newline)
        self._tails = np.zeros(1, dtype=np.int64)   # the suffixes' lengths in bytes
        self.tables: dict[str, _Table] = {}
        #: the agent whose records are held, and its tracer state
        self.agent: Any = None
        self.state: Any = None

    # ------------------------------------------------------------------ tokens

    def token(self, prefix: str, nbytes: int = 0, suffix: str = "") -> int:
        """A new token: the line ``prefix`` [+ a value of a ``nbytes``-byte register + ``suffix``]."""
        self.prefixes.append(prefix)
        self.widths.append(nbytes)
        self.suffixes.append(suffix if nbytes else "")
        return len(self.prefixes) - 1

    def _refresh(self) -> None:
        if len(self._widths) < len(self.widths):
            self._widths = np.array(self.widths, dtype=np.uint8)
            self._prefixes = _objects(self.prefixes)
            self._ends = _objects([s + "\n" for s in self.suffixes])
            self._tails = np.array([len(encode(s)) for s in self.suffixes], dtype=np.int64)

    def _table(self, head: str) -> _Table:
        table = self.tables.get(head)
        if table is None:
            table = self.tables[head] = _Table(encode(head))
        have = len(table.lines)
        if have < len(self.prefixes):
            new = [table.head + encode(p) + b"\0" * (2 * w) + encode(s) + b"\n"
                   for p, w, s in zip(self.prefixes[have:], self.widths[have:], self.suffixes[have:],
                                      strict=True)]
            table.lines = np.concatenate([table.lines, _objects(new)])
            table.lengths = np.concatenate([table.lengths, np.fromiter(map(len, new), np.int64, len(new))])
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
        self._refresh()
        try:
            data = self._hex(head) if self.hexed and not self.indexed else self._pieces(head)
        except (OverflowError, TypeError, ValueError):
            data = self._exact(head)
        count = len(ids)
        self.index += count
        ids.clear()
        self.values.clear()
        self.lits.clear()
        self.out.put(data, count)

    def _hex(self, head: str) -> bytearray:
        """Hex values, no index: join the pre-encoded lines, scatter the digits."""
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
        # where each value's digits end: the line's end, less its suffix and newline
        ends = lengths.cumsum()
        if self._tails.any():
            ends -= self._tails[tokens]
        ends = ends.compress(valued)
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

    def _pieces(self, head: str) -> bytes:
        """Any format: each record's pieces in a row of an object array, joined once."""
        n = len(self.ids)
        tokens = np.frombuffer(array("I", self.ids), dtype=np.uint32)
        column = 3 if self.indexed else 1
        rows = np.empty((n, column + 3), dtype=object)
        rows[:, 0] = head
        if self.indexed:  # consecutive numbers: thousands (a few distinct ones) and the rest
            high, low = np.divmod(np.arange(self.index, self.index + n, dtype=np.int64), 1000)
            h0 = int(high[0])
            rows[:, 1] = _objects([str(h) if h else "" for h in range(h0, int(high[-1]) + 1)])[high - h0]
            rows[:, 2] = np.where(high == 0, _UNPADDED[low], _PADDED[low])
        rows[:, column] = self._prefixes[tokens]
        rows[:, column + 1] = ""
        if self.values:
            valued = np.flatnonzero(self._widths[tokens])
            if len(valued) != len(self.values):
                raise ValueError("values and valued records out of step")
            if self.hexed:
                widths = self._widths[tokens[valued]].tolist()
                rows[valued, column + 1] = [hex_digits(v, w) for v, w in zip(self.values, widths, strict=True)]
            else:
                rows[valued, column + 1] = list(map(str, self.values))
        rows[:, column + 2] = self._ends[tokens]
        if self.lits:
            where = np.flatnonzero(tokens == LITERAL)
            if len(where) != len(self.lits):
                raise ValueError("literal records and texts out of step")
            rows[where, column] = self.lits
            rows[where, column + 2] = ""
        return encode("".join(rows.ravel().tolist()))

    def _exact(self, head: str) -> bytes:
        """The same text one record at a time, for values the bulk paths cannot take."""
        out: list[str] = []
        values = iter(self.values)
        lits = iter(self.lits)
        for i, token in enumerate(self.ids):
            out.append(head)
            if self.indexed:
                out.append(str(self.index + i))
            if token == LITERAL:
                out.append(next(lits))
                continue
            out.append(self.prefixes[token])
            w = self.widths[token]
            if w:
                v = next(values)
                out.append(hex_digits(v, w) if self.hexed else str(v))
                out.append(self.suffixes[token])
            out.append("\n")
        return encode("".join(out))
