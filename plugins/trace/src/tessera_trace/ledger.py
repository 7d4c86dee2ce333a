"""The commit-log formats' record buffer: tokens and values now, text in bulk later.

Formatting one line per retirement in Python — the numbers, the string building —
costs several times what executing the instruction does.  So a retirement only
appends a small integer *token* (which line of which instruction: with or without
its register effect, with which memory accesses) and the numbers the line shows
(the register's new value, each access's address and value).  The fast engine does
even that without calling anything (the core's record operation,
:mod:`tessera.engine.record`).  Every :data:`DRAIN_AT` records the ledger turns them
into bytes at once:

* hex values (``--trace text``): the tokens' pre-encoded lines are joined, then all
  the hex digits are written with a handful of numpy operations
  (``int.to_bytes(...).hex()`` on the whole array of values, scattered into the
  placeholders the lines leave for them, wherever in the line they are);
* anything else (decimal values, a record index — ``--trace jsonl``): a numpy object
  array holds each record's pieces (head, index, text, value, tail) in order, filled
  column by column, and is joined once.

A token is a *template*: texts with holes between them, each hole a number written
in hex with a given number of digits (or in decimal).  A record's line is ``head
[index]``, then the token's texts with its values in the holes, then a newline; the
head is the agent's (:meth:`Format.head`), the index the record's position in the
filtered stream (for indexed formats).  A ledger holds the records of one agent at a
time; when another agent retires, what is held is written out first, so records stay
in retirement order.  Records whose text is unusual (several registers) are stored as
finished text (token :data:`LITERAL`, the text after the index).

Values that are not plain integers in range of their hole (a plugin that stores
negative numbers, floats, numpy scalars) send the batch through an exact per-record
path; the result is the same text, just slower.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tessera_trace.effects import ADDRESS, VALUE, hex_digits

__all__ = ["ADDRESS", "DRAIN_AT", "LITERAL", "VALUE", "Ledger"]

#: the token of a record stored as finished text (in :attr:`Ledger.lits`)
LITERAL = 0
#: records held before they are written out (about 150 KiB of text: stays in cache)
DRAIN_AT = 2048
#: the widths (bytes) numpy writes hex from; a hole of d digits uses the narrowest with 2 * width >= d
_WIDTHS = (1, 2, 4, 8)


def encode(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")


def _objects(items: list[Any]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


_PADDED = _objects([f"{i:03d}" for i in range(1000)])   # the last three digits of a number >= 1000
_UNPADDED = _objects([str(i) for i in range(1000)])     # a number below 1000


def _grow(old: np.ndarray, new: list[Any], dtype: Any) -> np.ndarray:
    """``old`` with ``new`` appended (object arrays keep their items as they are)."""
    tail = _objects(new) if dtype is object else np.array(new, dtype=dtype)
    return np.concatenate([old, tail])


class _Table:
    """The pre-encoded hex-format lines of one agent: ``head + text`` per token, and their lengths."""

    __slots__ = ("head", "lines", "lengths")

    def __init__(self, head: bytes) -> None:
        self.head = head
        self.lines = _objects([b""])   # numpy: gathered by token in one step
        self.lengths = np.zeros(1, dtype=np.int64)


class Ledger:
    """Tokens and values of one agent's records, written to ``out`` in bulk.

    ``token(prefix, nbytes, suffix)`` registers a line with at most one register
    value, :meth:`template` one with any number of holes.  Callers append tokens to
    :attr:`ids` and values to :attr:`values` (through :attr:`record` and
    :attr:`remember`) after :meth:`enter` made sure the ledger holds their agent's
    records.  ``hexed``: values are written in hex as wide as their hole, else in
    decimal; ``indexed``: each record carries its index, the first one ``first``.
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
        #: per token: its texts (one more than its holes) and its holes ``(digits, VALUE | ADDRESS)``
        self.texts: list[tuple[str, ...]] = [("",)]
        self.holes: list[tuple[tuple[int, int], ...]] = [()]
        # per token and per hole, as lists (appended as tokens are made) and as numpy
        # arrays (grown from the lists before a batch is written)
        self._lists: dict[str, list[Any]] = {
            "count": [0],        # holes of the token
            "first": [0],        # its first hole's position in the per-hole lists
            "simple": [True],    # at most one hole, a VALUE: what the object-array path writes
            "prefix": [""],      # its first text
            "end": ["\n"],       # what follows its hole (for one hole or none): its last text, the newline
            "from_end": [],      # per hole: bytes from where its digits start to the end of the line
            "digits": [],        # per hole: how many digits
        }
        self._arrays: dict[str, np.ndarray] = {
            "count": np.zeros(1, dtype=np.int64), "first": np.zeros(1, dtype=np.int64),
            "simple": np.ones(1, dtype=bool), "prefix": _objects([""]), "end": _objects(["\n"]),
            "from_end": np.zeros(0, dtype=np.int64), "digits": np.zeros(0, dtype=np.int64),
        }
        self._several = False    # some token has more than one hole
        self.tables: dict[str, _Table] = {}
        #: the agent whose records are held, and its tracer state
        self.agent: Any = None
        self.state: Any = None

    # ------------------------------------------------------------------ tokens

    def token(self, prefix: str, nbytes: int = 0, suffix: str = "") -> int:
        """A new token: the line ``prefix`` [+ a value of a ``nbytes``-byte register + ``suffix``]."""
        if not nbytes:
            return self.template((prefix,), ())
        return self.template((prefix, suffix), ((2 * nbytes, VALUE),))

    def template(self, texts: Sequence[str], holes: Sequence[tuple[int, int]]) -> int:
        """A new token: ``texts[0]``, then each hole's value and the next text.

        A hole is ``(digits, how)``: in hex, at least ``digits`` digits written as
        :func:`hex_digits` writes a value of ``digits // 2`` bytes (``VALUE``) or as
        ``format(value, "0<digits>x")`` (``ADDRESS``); in decimal ``str(value)``.
        """
        texts, holes = tuple(texts), tuple((int(d), int(how)) for d, how in holes)
        if len(texts) != len(holes) + 1 or any(d < 0 or (how == VALUE and d % 2) for d, how in holes):
            raise ValueError(f"a template has one text more than holes, each of a number of digits "
                             f"(an even one for a value): {texts!r}, {holes!r}")
        lists = self._lists
        lists["count"].append(len(holes))
        lists["first"].append(len(lists["digits"]))
        lists["simple"].append(len(holes) == 0 or (len(holes) == 1 and holes[0][1] == VALUE))
        lists["prefix"].append(texts[0])
        lists["end"].append((texts[-1] if holes else "") + "\n")
        after = 1                                   # the newline
        from_end: list[int] = []
        for (d, _how), text in zip(reversed(holes), reversed(texts[1:]), strict=True):
            after += len(encode(text)) + d
            from_end.append(after)
        lists["from_end"].extend(reversed(from_end))
        lists["digits"].extend(d for d, _how in holes)
        self._several = self._several or len(holes) > 1
        self.texts.append(texts)
        self.holes.append(holes)
        return len(self.texts) - 1

    def _refresh(self) -> None:
        """Bring the numpy arrays up to the tokens made since the last batch."""
        arrays, lists = self._arrays, self._lists
        have = len(arrays["count"])
        if have == len(lists["count"]):
            return
        for name in ("count", "first", "simple", "prefix", "end"):
            dtype = object if name in ("prefix", "end") else (bool if name == "simple" else np.int64)
            arrays[name] = _grow(arrays[name], lists[name][have:], dtype)
        held = len(arrays["digits"])
        for name in ("from_end", "digits"):
            arrays[name] = _grow(arrays[name], lists[name][held:], np.int64)

    def _table(self, head: str) -> _Table:
        table = self.tables.get(head)
        if table is None:
            table = self.tables[head] = _Table(encode(head))
        have = len(table.lines)
        if have < len(self.texts):
            new = []
            for texts, holes in zip(self.texts[have:], self.holes[have:], strict=True):
                line = bytearray(table.head)
                line += encode(texts[0])
                for (d, _how), text in zip(holes, texts[1:], strict=True):
                    line += b"\0" * d
                    line += encode(text)
                line += b"\n"
                new.append(bytes(line))
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
        arrays = self._arrays
        ends = lengths.cumsum()                 # where each line ends in `data`
        counts = arrays["count"][tokens]
        if self._several and int(counts.max()) > 1:   # a hole per value: its line's end, and which hole
            total = int(counts.sum())
            before = counts.cumsum() - counts
            hole = np.repeat(arrays["first"][tokens] - before, counts) + np.arange(total)
            starts = np.repeat(ends, counts) - arrays["from_end"][hole]
            digits = arrays["digits"][hole]
        else:
            valued = counts != 0
            hole = arrays["first"][tokens.compress(valued)]
            starts = ends.compress(valued) - arrays["from_end"][hole]
            digits = arrays["digits"][hole]
        values = np.frombuffer(array("Q", self.values), dtype=np.uint64)  # raises unless 0 <= v < 2**64
        if len(values) != len(starts):
            raise ValueError("values and holes out of step")
        buf = np.frombuffer(data, dtype=np.uint8)
        kinds = np.flatnonzero(np.bincount(digits)).tolist()   # the distinct widths (a handful)
        for d in kinds:
            if len(kinds) == 1:
                v, s = values, starts
            else:
                sel = digits == d
                v, s = values[sel], starts[sel]
            w = next((w for w in _WIDTHS if 2 * w >= d), 0) if d else 0
            if not w:
                raise ValueError(f"no bulk path for {d}-digit values")
            if d < 16 and bool((v >> np.uint64(4 * d)).any()):
                raise OverflowError("a value wider than its hole")
            digit_rows = np.frombuffer(v.astype(f">u{w}").tobytes().hex().encode("ascii"),
                                       dtype=np.uint8).reshape(-1, 2 * w)
            if d != 2 * w:
                digit_rows = digit_rows[:, 2 * w - d:]
            # every d-byte window of the output as a row: one row per value is written
            rows = as_strided(buf, shape=(len(buf) - d + 1, d), strides=(1, 1), writeable=True)
            rows[s] = digit_rows
        return data

    def _pieces(self, head: str) -> bytes:
        """Any format: each record's pieces in a row of an object array, joined once."""
        n = len(self.ids)
        tokens = np.frombuffer(array("I", self.ids), dtype=np.uint32)
        arrays = self._arrays
        if not bool(arrays["simple"][tokens].all()):
            raise ValueError("a template with several holes: the exact path writes it")
        column = 3 if self.indexed else 1
        rows = np.empty((n, column + 3), dtype=object)
        rows[:, 0] = head
        if self.indexed:  # consecutive numbers: thousands (a few distinct ones) and the rest
            high, low = np.divmod(np.arange(self.index, self.index + n, dtype=np.int64), 1000)
            h0 = int(high[0])
            rows[:, 1] = _objects([str(h) if h else "" for h in range(h0, int(high[-1]) + 1)])[high - h0]
            rows[:, 2] = np.where(high == 0, _UNPADDED[low], _PADDED[low])
        rows[:, column] = arrays["prefix"][tokens]
        rows[:, column + 1] = ""
        if self.values:
            valued = np.flatnonzero(arrays["count"][tokens])
            if len(valued) != len(self.values):
                raise ValueError("values and valued records out of step")
            if self.hexed:
                digits = arrays["digits"][arrays["first"][tokens[valued]]].tolist()
                rows[valued, column + 1] = [hex_digits(v, d // 2) for v, d in zip(self.values, digits, strict=True)]
            else:
                rows[valued, column + 1] = list(map(str, self.values))
        rows[:, column + 2] = arrays["end"][tokens]
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
        hexed = self.hexed
        for i, token in enumerate(self.ids):
            out.append(head)
            if self.indexed:
                out.append(str(self.index + i))
            if token == LITERAL:
                out.append(next(lits))
                continue
            texts = self.texts[token]
            out.append(texts[0])
            for (d, how), text in zip(self.holes[token], texts[1:], strict=True):
                v = next(values)
                if not hexed:
                    out.append(str(v))
                elif how == VALUE:
                    out.append(hex_digits(v, d // 2))
                else:
                    out.append(format(v, f"0{d}x"))
                out.append(text)
            out.append("\n")
        return encode("".join(out))
