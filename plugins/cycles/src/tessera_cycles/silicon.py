"""Blackhole silicon measurements, shipped as comparison data for the cycle models.

Why this exists: issue 19 asks for cycle models checked against silicon.  The only public
measurements are the ``tensixbench`` (Tensix coprocessor instruction throughput) and
``riscvbench`` (baby RISC-V front end) CSVs of PyPI ``wolfpine`` 2.2 (BSD-3-Clause,
upstream github.com/mesham/tt-sim), copied unmodified into ``data/silicon/`` next to
their licence (``LICENSE.wolfpine``) and a ``PROVENANCE.md`` with each file's sha256.
They are third-party test data: nothing here charges a cycle.

Each file is a block of ``#`` comment lines -- prose saying what was measured and which
configurations are artefacts, plus ``key=value`` tokens (``device=``, ``unroll=``,
``variants=``, ...) -- then a CSV with one row per raw point::

    phase,variant,probe_id,probe,unit,active_threads,thread,n,unroll,cycles

A probe repeats a loop of ``unroll`` instructions ``n`` times, so cycles grow linearly in
``n`` and the least-squares :func:`slope` over the points cancels every fixed cost; the
slope divided by ``unroll`` is cycles per instruction, and subtracting the empty-loop
control (``loop_overhead``) first removes the loop's own branch and counter
(:meth:`Dataset.cycles_per_instruction`).  Burst probes (riscvbench phases ``q`` and
``s``) label points by burst length instead and are not linear through their knee.

The loader is strict: anything it cannot read unambiguously raises :class:`ValueError`
naming the file and the line.  Only the standard library and attrs are imported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["Dataset", "Value", "datasets", "load", "parse", "r_squared", "slope"]

#: a converted CSV cell
Value = str | int | float

#: where the files live, relative to the package (package data)
PACKAGE = "tessera_cycles"
DATA_DIR = ("data", "silicon")

#: columns that hold counts in both benchmarks: a cell there that is not an integer is a
#: malformed file, not a string to carry along
INT_COLUMNS = frozenset({"probe_id", "active_threads", "thread", "n", "unroll", "cycles"})

#: the empty-body control loop both benchmarks subtract from every slope probe
CONTROL_PROBE = "loop_overhead"

_INT = re.compile(r"-?\d+")
_FLOAT = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(\S+)")
#: punctuation prose puts around a token: backticks, brackets, quotes, a full stop (``n=1024.``)
_WRAP_LEAD = "`('\""
_WRAP_TRAIL = "`)'\".,;:"


@attrs.frozen(eq=False)
class Dataset:
    """One measurement file: its comment header, the ``key=value`` tokens found in it, and
    its rows with numbers converted.

    ``meta`` holds every token of every comment line; where prose repeats a key with a
    different value the later line wins, so the benchmark's own configuration line (the
    last comment line) has the final say.  ``record`` holds that last line's tokens only.
    """

    name: str
    header: tuple[str, ...]
    meta: dict[str, str]
    record: dict[str, str]
    columns: tuple[str, ...]
    rows: tuple[dict[str, Value], ...]

    def rows_where(self, **eq: Value) -> list[dict[str, Value]]:
        """The rows whose cells equal every given ``column=value``, in file order."""
        unknown = sorted(set(eq) - set(self.columns))
        if unknown:
            raise ValueError(f"{self.name}: no column {', '.join(unknown)} (columns: {', '.join(self.columns)})")
        return [row for row in self.rows if all(row[k] == v for k, v in eq.items())]

    def values(self, column: str, **eq: Value) -> list[Value]:
        """The distinct values of ``column`` among the rows matching ``eq``, in first-seen order."""
        if column not in self.columns:
            raise ValueError(f"{self.name}: no column {column}")
        return list(dict.fromkeys(row[column] for row in self.rows_where(**eq)))

    def cycles_per_instruction(self, probe: str, *, subtract_control: bool = False, **eq: Value) -> float:
        """Cycles per instruction of ``probe``: slope of cycles over ``n``, over ``unroll``.

        ``eq`` must pin one series (typically ``phase``, ``variant`` and ``thread``).  With
        ``subtract_control`` the slope of :data:`CONTROL_PROBE` in the same series is taken
        off first -- the benchmarks' own reported figure, ``(slope - control) / unroll``.
        """
        rows = self._series(probe, eq)
        unroll = _one_int(self.name, rows, "unroll")
        per_block, _ = slope(rows)
        if subtract_control:
            per_block -= slope(self._series(CONTROL_PROBE, eq))[0]
        return per_block / unroll

    def _series(self, probe: str, eq: Mapping[str, Value]) -> list[dict[str, Value]]:
        rows = self.rows_where(probe=probe, **eq)
        if not rows:
            raise ValueError(f"{self.name}: no rows for probe {probe} where {dict(eq)}")
        ns = [row["n"] for row in rows]
        if len(set(ns)) != len(ns):
            raise ValueError(f"{self.name}: probe {probe} where {dict(eq)} is more than one series "
                             f"(repeated n); pin phase, variant and thread")
        return rows


def datasets() -> list[str]:
    """The shipped measurement files, by name (``load`` takes these)."""
    return sorted(p.name for p in _directory().iterdir() if p.name.endswith(".csv"))


def load(name: str) -> Dataset:
    """Read the shipped file ``name`` (one of :func:`datasets`)."""
    known = datasets()
    if name not in known:
        raise ValueError(f"no silicon dataset {name!r}; known: {', '.join(known)}")
    return parse(_directory().joinpath(name).read_text(encoding="utf-8"), name)


def parse(text: str, name: str) -> Dataset:
    """Parse one file's text; ``name`` only labels errors and the result."""
    header: list[str] = []
    meta: dict[str, str] = {}
    record: dict[str, str] = {}
    columns: tuple[str, ...] | None = None
    rows: list[dict[str, Value]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{name}, line {number}"
        if line.startswith("#"):
            if columns is not None:
                raise ValueError(f"{where}: comment line after the data began")
            comment = _comment(line, where)
            header.append(comment)
            record = _tokens(comment)
            meta.update(record)
        elif not line.strip():
            raise ValueError(f"{where}: blank line")
        elif columns is None:
            columns = _columns(line, where)
        else:
            rows.append(_row(line, columns, where))
    if columns is None:
        raise ValueError(f"{name}: no column header line")
    if not rows:
        raise ValueError(f"{name}: no data rows")
    return Dataset(name, tuple(header), meta, record, columns, tuple(rows))


def slope(rows: Sequence[Mapping[str, Value]], x: str = "n", y: str = "cycles") -> tuple[float, float]:
    """Least-squares slope and intercept of ``y`` over ``x`` (needs two distinct ``x``)."""
    xs, ys = _numbers(rows, x), _numbers(rows, y)
    if len(set(xs)) < 2:
        raise ValueError(f"a slope needs at least two distinct {x} values, got {sorted(set(xs))}")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((a - mx) ** 2 for a in xs)
    s = sum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True)) / sxx
    return s, my - s * mx


def r_squared(rows: Sequence[Mapping[str, Value]], x: str = "n", y: str = "cycles") -> float:
    """Coefficient of determination of the :func:`slope` fit (the benchmarks gate on 0.99)."""
    s, c = slope(rows, x, y)
    xs, ys = _numbers(rows, x), _numbers(rows, y)
    my = sum(ys) / len(ys)
    total = sum((b - my) ** 2 for b in ys)
    residual = sum((b - (s * a + c)) ** 2 for a, b in zip(xs, ys, strict=True))
    return 1.0 if total == 0 else 1.0 - residual / total


def _directory() -> Traversable:
    return resources.files(PACKAGE).joinpath(*DATA_DIR)


def _comment(line: str, where: str) -> str:
    if line == "#":
        return ""
    if not line.startswith("# "):
        raise ValueError(f"{where}: comment line does not start with '# '")
    return line[2:]


def _tokens(comment: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for word in comment.split():
        match = _TOKEN.fullmatch(word.lstrip(_WRAP_LEAD).rstrip(_WRAP_TRAIL))
        if match:
            found[match[1]] = match[2]
    return found


def _columns(line: str, where: str) -> tuple[str, ...]:
    columns = tuple(cell.strip() for cell in line.split(","))
    if any(not c for c in columns):
        raise ValueError(f"{where}: empty column name in {line!r}")
    if len(set(columns)) != len(columns):
        raise ValueError(f"{where}: repeated column name in {line!r}")
    return columns


def _row(line: str, columns: tuple[str, ...], where: str) -> dict[str, Value]:
    cells = line.split(",")
    if len(cells) != len(columns):
        raise ValueError(f"{where}: {len(cells)} fields where the header has {len(columns)}")
    row: dict[str, Value] = {}
    for column, cell in zip(columns, cells, strict=True):
        if not cell:
            raise ValueError(f"{where}: empty {column}")
        value = _convert(cell)
        if column in INT_COLUMNS and not isinstance(value, int):
            raise ValueError(f"{where}: {column} is {cell!r}, not an integer")
        row[column] = value
    return row


def _convert(cell: str) -> Value:
    if _INT.fullmatch(cell):
        return int(cell)
    if _FLOAT.fullmatch(cell):
        return float(cell)
    return cell


def _numbers(rows: Iterable[Mapping[str, Value]], column: str) -> list[float]:
    out: list[float] = []
    for row in rows:
        value = row.get(column)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{column} is {value!r}, not a number")
        out.append(float(value))
    return out


def _one_int(name: str, rows: Sequence[Mapping[str, Value]], column: str) -> int:
    values = {row[column] for row in rows}
    if len(values) != 1:
        raise ValueError(f"{name}: {column} differs within one series: {sorted(map(str, values))}")
    (value,) = values
    if not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name}: {column} is {value!r}, not a positive integer")
    return value
