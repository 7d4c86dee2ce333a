"""The in-order model batched: retirements recorded as tokens, timed by a compiled kernel.

Calling :meth:`~tessera_cycles.inorder.InOrderPipeline.retire` after every retirement
costs about a microsecond of Python (an observer call, then the pipeline's
bookkeeping): five times what the fast engine spends running the instruction.  So on
a RISC-V machine the ``inorder`` model does not call anything per retirement.  Its
observers are the core's record operation (:class:`tessera.engine.record.Record`),
which the fast engine compiles into its blocks as one list append of a constant
token (plus the addresses of a load or store); the tokens pile up per hart and
:func:`advance`, a numba kernel, applies exactly the rules of
:class:`~tessera_cycles.inorder.InOrderPipeline` to a whole batch of them when the
core consults the sink (once per block call, at least every ``LOOP_CAP`` loop
iterations), when the clock is read, and when the report is made.

A record is a token — ``id << 16 | shape << 2 | value << 1 | explicit`` — then values:

* ``id`` names the decoded instruction in the model's :class:`Instructions` table
  (its pc, kind, source and destination registers, branch target);
* ``value``: the register it changed follows (the record operation remembers it; the
  model does not need it);
* ``shape`` (0: none) indexes the table of access shapes, the sizes of the data
  accesses whose (address, data) pairs follow;
* ``explicit``: an instruction whose register uses are known only after it ran
  (``ecall``) records them itself: the number of sources, the sources, the number of
  destinations, the destinations, before the accesses.

A conditional branch writes no register, so its direction is read from the record
after it: taken when the next instruction to retire is at its target.  (The
per-retirement pipeline evaluates the condition instead; the two differ only when an
interrupt is taken right after a branch.)  A branch that is the last record so far
waits for its successor, unless the clock is read or the report made then: it is
decided by its condition on the hart's registers, which the branch did not change.

Both engines produce the same records (the step engine calls the observer, which
appends the same tokens), so reports do not depend on the engine; the kernel's
results equal the per-retirement pipeline's on the same stream (tested).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from tessera_cycles.inorder import _KINDS, _STALL_NAMES, InOrderParams, kind_table
from tessera_cycles.predictor import PREDICTORS

__all__ = ["EXPLICIT", "SHAPE_SHIFT", "VALUE", "BatchedPipeline", "Instructions", "advance", "id_token"]

_LOW = 16                 # bits of a token below the instruction id
SHAPE_SHIFT = 2
_SHAPE_MASK = (1 << (_LOW - SHAPE_SHIFT)) - 1
VALUE = 2          # a changed register's value follows the token
EXPLICIT = 1       # the record gives its register uses itself
_UNDECIDED = -1
_MASK = (1 << 64) - 1

# st: the pipeline's scalars (see InOrderPipeline.__init__)
_BASE, _CONTROL, _CAUSE, _COUNT = range(4)
# cache statistics and geometry, one int64 row per cache
_C_ACCESSES, _C_HITS, _C_MISSES, _C_MRU_LO, _C_MRU_END, _C_SHIFT, _C_SETMASK, _C_WAYS, _C_PENALTY, _C_LINE, \
    _C_ON = range(11)
_PREDICTOR_CODES = {"not-taken": 0, "btfn": 1, "bimodal": 2}
_DATA, _LOAD_USE, _MUL_DIV, _BRANCH, _JUMP, _ICACHE, _DCACHE = range(7)


@njit(cache=True)
def _cache_access(lines: Any, n: Any, c: Any, address: int, size: int) -> int:  # pragma: no cover - compiled
    """:meth:`tessera_cycles.cache.Cache.access` on arrays: ``lines[set]`` LRU first."""
    c[_C_ACCESSES] += 1
    shift = c[_C_SHIFT]
    number = address >> shift
    first = number
    last = (address + size - 1) >> shift
    stall = 0
    while number <= last:
        s = number & c[_C_SETMASK]
        cnt = n[s]
        if cnt > 0 and lines[s, cnt - 1] == number:
            c[_C_HITS] += 1
        else:
            k = -1
            for j in range(cnt):
                if lines[s, j] == number:
                    k = j
                    break
            if k >= 0:
                for j in range(k, cnt - 1):
                    lines[s, j] = lines[s, j + 1]
                lines[s, cnt - 1] = number
                c[_C_HITS] += 1
            else:
                c[_C_MISSES] += 1
                stall += c[_C_PENALTY]
                if cnt >= c[_C_WAYS]:
                    for j in range(cnt - 1):
                        lines[s, j] = lines[s, j + 1]
                    lines[s, cnt - 1] = number
                else:
                    lines[s, cnt] = number
                    n[s] = cnt + 1
        number += 1
    if last >= first:
        c[_C_MRU_LO] = last << shift
        c[_C_MRU_END] = c[_C_MRU_LO] + c[_C_LINE]
    return stall


@njit(cache=True)
def _fetch(lines: Any, n: Any, c: Any, pc: int) -> int:  # pragma: no cover - compiled
    """The I-cache stall of fetching ``pc`` (the most recent line's hits counted in place)."""
    if not c[_C_ON]:
        return 0
    if c[_C_MRU_LO] <= pc and pc + 4 <= c[_C_MRU_END]:
        c[_C_ACCESSES] += 1
        c[_C_HITS] += 1
        return 0
    return _cache_access(lines, n, c, pc, 4)


@njit(cache=True)
def _data(values: Any, w: int, count: int, off: int, sizes: Any, lines: Any, n: Any,
          c: Any) -> int:  # pragma: no cover - compiled
    """The D-cache stall of ``count`` accesses whose (address, data) pairs start at ``values[w]``."""
    stall = 0
    for j in range(count):
        address = values[w + 2 * j]
        size = sizes[off + j]
        if not c[_C_ON]:
            continue
        if c[_C_MRU_LO] <= address and address + size <= c[_C_MRU_END]:
            c[_C_ACCESSES] += 1
            c[_C_HITS] += 1
        else:
            stall += _cache_access(lines, n, c, address, size)
    return stall


@njit(cache=True)
def _charge(stalls: Any, producer: Any, st: Any, base: int, extra: int, source: int) -> None:  # pragma: no cover
    """``InOrderPipeline._charge``: the cycles an instruction waited beyond ``base``."""
    if source >= 0:
        stalls[_DATA] += extra
        code = producer[source]
        if code:
            stalls[code] += extra
        return
    own = st[_CONTROL] - base
    if own > 0:
        stalls[st[_CAUSE]] += own
        extra -= own
    stalls[_ICACHE] += extra


@njit(cache=True)
def _mispredicted(pred: Any, bht: Any, pc: int, target: int, taken: int) -> bool:  # pragma: no cover
    """Predict the branch at ``pc``, count it, learn its direction; whether it was wrong."""
    pred[3] += 1
    code = pred[0]
    index = (pc >> 2) & pred[1]
    if code == 0:
        guess = 0
    elif code == 1:
        guess = 1 if target <= pc else 0
    else:
        guess = 1 if bht[index] >= 2 else 0
    if code == 2:
        counter = bht[index]
        if taken:
            if counter < 3:
                bht[index] = counter + 1
        elif counter > 0:
            bht[index] = counter - 1
    if guess != taken:
        pred[4] += 1
        return True
    return False


@njit(cache=True)
def _explicit(values: Any, w: int, reads: Any, writes: Any) -> Any:  # pragma: no cover - compiled
    """An explicit record's register uses: (sources, destinations, next value index)."""
    nr = values[w]
    for j in range(nr):
        reads[j] = values[w + 1 + j]
    w += 1 + nr
    nw = values[w]
    for j in range(nw):
        writes[j] = values[w + 1 + j]
    return nr, nw, w + 1 + nw


@njit(cache=True)
def advance(tokens: Any, values: Any, final_taken: int, table: Any, kinds: Any, shape_off: Any, shape_n: Any,
            shape_size: Any, st: Any, ready: Any, producer: Any, stalls: Any, ic_lines: Any, ic_n: Any, ic: Any,
            dc_lines: Any, dc_n: Any, dc: Any, bht: Any, pred: Any) -> Any:  # pragma: no cover - compiled
    """Apply the pipeline's rules (:meth:`InOrderPipeline.retire
    <tessera_cycles.inorder.InOrderPipeline.retire>`) to the records in ``tokens``/``values``.

    Returns (records consumed, values consumed): all of them, except a trailing branch
    whose direction is not known (``final_taken`` is -1; else 0 or 1 decides it).
    ``table[id]`` = (pc, kind, source 1, source 2, destination, target) with -1 for no
    register; ``kinds[kind]`` = (latency, producer class, redirect, cause, is a branch).
    ``pred`` = (predictor code, table mask, branch penalty, predictions, mispredictions).
    """
    count = tokens.shape[0]
    v = 0
    i = 0
    reads = np.empty(256, np.int64)
    writes = np.empty(256, np.int64)
    while i < count:
        tok = tokens[i]
        row = table[tok >> _LOW]
        pc = row[0]
        kind = row[1]
        redirect = kinds[kind, 2]
        taken = 0
        if kinds[kind, 4]:
            if i + 1 < count:
                taken = 1 if table[tokens[i + 1] >> _LOW, 0] == row[5] else 0
            elif final_taken >= 0:
                taken = final_taken
            else:
                break
        w = v + 1 if tok & VALUE else v
        if tok & EXPLICIT:
            nr, nw, w = _explicit(values, w, reads, writes)
        else:
            nr = 0
            for r in (row[2], row[3]):
                if r >= 0:
                    reads[nr] = r
                    nr += 1
            nw = 0
            if row[4] >= 0:
                writes[0] = row[4]
                nw = 1

        fetch = _fetch(ic_lines, ic_n, ic, pc)
        base = st[_BASE]
        ex = max(st[_CONTROL] + fetch, base)
        source = -1
        for j in range(nr):
            at = ready[reads[j]]
            if at > ex:
                ex = at
                source = reads[j]
        if ex > base:
            _charge(stalls, producer, st, base, ex - base, source)
        dstall = 0
        shape = (tok >> SHAPE_SHIFT) & _SHAPE_MASK
        if shape:
            dstall = _data(values, w, shape_n[shape], shape_off[shape], shape_size, dc_lines, dc_n, dc)
            w += 2 * shape_n[shape]
            stalls[_DCACHE] += dstall
        at = ex + kinds[kind, 0] + dstall
        for j in range(nw):
            r = writes[j]
            if r:
                ready[r] = at
                producer[r] = kinds[kind, 1]
        if kinds[kind, 4] and _mispredicted(pred, bht, pc, row[5], taken):
            redirect = pred[2]
        ex += 1
        st[_BASE] = ex + dstall
        st[_CONTROL] = ex + redirect
        st[_CAUSE] = kinds[kind, 3]
        st[_COUNT] += 1
        v = w
        i += 1
    return i, v


class Instructions:
    """The decoded instructions the records name, and the shapes of their accesses.

    Kept in the machine's extensions with the pipelines, so the records a snapshot
    holds still name the right rows when it is restored."""

    def __init__(self, params: InOrderParams) -> None:
        self.rows: list[tuple[int, int, int, int, int, int]] = []
        self.conditions: list[Any] = []     # per row: (mnemonic, rs1, rs2) of a branch, else None
        self.shapes: dict[tuple[int, ...], int] = {(): 0}
        table = kind_table(params)
        self.kinds = np.array([table[k] for k in _KINDS], dtype=np.int64)
        self._array: Any = None
        self._shape_arrays: Any = None

    def add(self, pc: int, kind: str, reads: tuple[int, ...], writes: tuple[int, ...], target: int,
            condition: Any = None) -> int:
        """A row for one decoded instruction (at most two sources and one destination
        are taken from it; an ``explicit`` record gives its own); its id."""
        r = [x for x in reads if x] + [-1, -1]
        w = [x for x in writes if x] + [-1]
        self.rows.append((pc, _KINDS.index(kind), r[0], r[1], w[0], target))
        self.conditions.append(condition)
        self._array = None
        return len(self.rows) - 1

    def shape(self, sizes: tuple[int, ...]) -> int:
        """The index of an access shape (the sizes of an instruction's accesses, in order)."""
        got = self.shapes.get(sizes)
        if got is None:
            got = self.shapes[sizes] = len(self.shapes)
            if got > _SHAPE_MASK:
                raise ValueError(f"cycles: more than {_SHAPE_MASK} access shapes")
            self._shape_arrays = None
        return got

    def arrays(self) -> tuple[Any, Any, Any, Any]:
        """(rows, shape offsets, shape lengths, sizes) as the kernel takes them."""
        if self._array is None or len(self._array) != len(self.rows):
            self._array = np.array(self.rows, dtype=np.int64).reshape(-1, 6)
        if self._shape_arrays is None:
            by_index = sorted(self.shapes.items(), key=lambda kv: kv[1])
            lengths = [len(s) for s, _i in by_index]
            offsets = np.cumsum([0, *lengths[:-1]]).astype(np.int64)
            sizes = np.array([x for s, _i in by_index for x in s] or [0], dtype=np.int64)
            self._shape_arrays = (offsets, np.array(lengths, dtype=np.int64), sizes)
        return (self._array, *self._shape_arrays)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_array"] = state["_shape_arrays"] = None
        return state


def id_token(ident: int) -> int:
    """The token of a record of instruction ``ident`` with no value and no access."""
    return ident << _LOW


def _cache_row(on: bool, size: int, ways: int, line: int, penalty: int) -> tuple[Any, Any, Any]:
    sets = size // (ways * line)
    row = np.zeros(11, dtype=np.int64)
    row[_C_MRU_LO], row[_C_MRU_END] = 1, 0
    row[_C_SHIFT], row[_C_SETMASK], row[_C_WAYS] = line.bit_length() - 1, sets - 1, ways
    row[_C_PENALTY], row[_C_LINE], row[_C_ON] = penalty, line, int(on)
    shape = (sets, ways) if on else (1, 1)
    return np.zeros(shape, dtype=np.int64), np.zeros(shape[0], dtype=np.int64), row


class BatchedPipeline:
    """One hart's in-order pipeline fed with records (see the module docstring).

    :meth:`sink` is the record operation's sink for the hart; :meth:`settle` times what
    accumulated; :meth:`cycles` and :meth:`report` answer as
    :class:`~tessera_cycles.inorder.InOrderPipeline`'s do, after settling.
    """

    #: records kept before the sink times them (bounded memory between block calls)
    BATCH = 1 << 14

    def __init__(self, params: InOrderParams, program: Instructions, agent: Any) -> None:
        self.params = params
        self.program = program
        self.tokens: list[int] = []
        self.values: list[int] = []
        #: the record operation's shadow of the hart's x registers
        self.shadows: dict[str, list[int]] = {"x": list(agent.regs["x"])}
        self.st = np.array([3, 3, _BRANCH, 0], dtype=np.int64)
        self.ready = np.zeros(32, dtype=np.int64)
        self.producer = np.zeros(32, dtype=np.int64)
        self.stalls = np.zeros(len(_STALL_NAMES), dtype=np.int64)
        p = params
        self.ic_lines, self.ic_n, self.ic = _cache_row(p.caches, p.icache_size, p.icache_ways, p.icache_line,
                                                      p.miss_penalty)
        self.dc_lines, self.dc_n, self.dc = _cache_row(p.caches, p.dcache_size, p.dcache_ways, p.dcache_line,
                                                      p.miss_penalty)
        self.bht = np.ones(p.bht_entries, dtype=np.int64)
        self.pred = np.array([_PREDICTOR_CODES[p.predictor], p.bht_entries - 1, p.branch_penalty, 0, 0],
                             dtype=np.int64)
        self._sink: Any = None

    def sink(self) -> tuple[Callable[[Any], Any], Callable[[Any], Any], dict[str, list[int]]]:
        """The hart's (record, remember, shadows), timing the records when they are many."""
        if len(self.tokens) >= self.BATCH:
            self.settle(None)     # a trailing branch waits for its successor
        got = self._sink
        if got is None:
            got = self._sink = (self.tokens.append, self.values.append, self.shadows)
        return got  # type: ignore[no-any-return]

    def settle(self, agent: Any, tests: dict[str, Callable[[int, int], bool]] | None = None) -> None:
        """Time every record so far; with ``agent`` and the branch ``tests`` (mnemonic ->
        condition), a trailing branch too (its condition on the hart's registers decides
        it), else it waits for its successor."""
        tokens = self.tokens
        if not tokens:
            return
        final = _UNDECIDED
        if agent is not None and tests is not None:
            condition = self.program.conditions[tokens[-1] >> _LOW]
            if condition is not None:
                mnemonic, rs1, rs2 = condition
                x = agent.x
                final = int(bool(tests[mnemonic](x[rs1], x[rs2])))
        rows, offsets, lengths, sizes = self.program.arrays()
        try:
            values = np.array(self.values, dtype=np.uint64).astype(np.int64)
        except (OverflowError, TypeError, ValueError):   # only the addresses matter; the rest may be anything
            values = np.array([v & _MASK if isinstance(v, int) else 0 for v in self.values],
                              dtype=np.uint64).astype(np.int64)
        done, used = advance(np.array(tokens, dtype=np.int64), values, final, rows, self.program.kinds,
                             offsets, lengths, sizes, self.st, self.ready, self.producer, self.stalls,
                             self.ic_lines, self.ic_n, self.ic, self.dc_lines, self.dc_n, self.dc, self.bht,
                             self.pred)
        del tokens[:done]
        del self.values[:used]

    def cycles(self) -> int:
        """Cycles until the last timed instruction leaves WB; 0 before the first."""
        return int(self.st[_BASE]) + 1 if self.st[_COUNT] else 0

    def report(self) -> dict[str, Any]:
        """The same record as :meth:`InOrderPipeline.report <tessera_cycles.inorder.InOrderPipeline.report>`."""
        cycles = self.cycles()
        count = int(self.st[_COUNT])
        p = self.params
        predictions, misses = int(self.pred[3]), int(self.pred[4])
        return {
            "instructions": count,
            "cycles": cycles,
            "cpi": cycles / count if count else 0.0,
            "stalls": {name: int(n) for name, n in zip(_STALL_NAMES, self.stalls, strict=True)},
            "icache": _stats("icache", p.icache_size, p.icache_ways, p.icache_line, self.ic) if p.caches else None,
            "dcache": _stats("dcache", p.dcache_size, p.dcache_ways, p.dcache_line, self.dc) if p.caches else None,
            "predictor": {"name": PREDICTORS[p.predictor].name, "predictions": predictions,
                          "mispredictions": misses,
                          "accuracy": 1.0 - misses / predictions if predictions else 1.0},
        }

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_sink"] = None
        return state


def _stats(name: str, size: int, ways: int, line: int, row: Any) -> dict[str, Any]:
    hits, misses = int(row[_C_HITS]), int(row[_C_MISSES])
    touched = hits + misses
    return {"name": name, "size": size, "ways": ways, "line": line, "accesses": int(row[_C_ACCESSES]),
            "hits": hits, "misses": misses, "hit_rate": hits / touched if touched else 1.0}
