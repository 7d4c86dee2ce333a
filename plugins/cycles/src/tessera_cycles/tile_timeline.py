"""``--cycles-trace FILE`` for the ``tile`` model: its engines' operations and its harts'
stalls as a Perfetto (Chrome trace-event) file, or a value change dump.

The data is a :class:`~tessera_cycles.tile_model.TileTimeline` (recorded only when the
option is given) and the harts' sampled counters (:class:`~tessera_cycles.timeline.Samples`).
Everything is in the model's time: one cycle is 1 µs on the timeline.

Process ``tile engines``, per hart (in name order):

* ``hart0 tile stall``: a span for each ``t_wait`` / successful ``try_wait`` that held the
  hart, from the cycle the word would have left EX to the completion it waited for;
* per engine that ran something (``LSU``, ``TMA``, ``MMA``, ``ALU``): ``hart0 MMA`` — a span
  per operation from the cycle the engine starts it to the cycle it completes, named by
  its form (``tmma.bf16_fp32``), with the dispatch cycle, the cycles it queued, its busy
  cycles and latency and what it was priced on (bytes, K …) in ``args``.  An engine is
  pipelined — the next operation starts once the previous one's busy cycles are over,
  its latency overlaps — so overlapping operations go to further lanes ``hart0 MMA #2``,
  … (each lane's spans are disjoint);  ``hart0 MMA busy`` — the cycles each operation
  kept the engine itself busy: serial, never overlapping.

Process ``counters``: per hart ``ipc``, ``I$ misses``, ``D$ misses``, ``mispredictions`` per
interval of :data:`~tessera_cycles.timeline.SAMPLE_EVERY` retirements (as the ``inorder``
model's), and per engine ``queue hart0 MMA`` (operations dispatched, not yet started) and
``outstanding hart0 MMA`` (dispatched, not yet completed: what a ``t_wait`` waits for).

A ``.vcd`` file gets per hart a 1-bit ``stall``, per engine a 1-bit ``busy`` and integers
``queue`` and ``outstanding``; one time unit is one cycle (pyvcd).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tessera_cycles.tile_model import ENGINES
from tessera_cycles.timeline import COUNTERS_PID, UNITS_PID, _event, dump, sample_counters

__all__ = ["events", "lanes", "write", "write_perfetto", "write_vcd"]

#: what each engine's price is computed from (the ``CostModel`` method's arguments)
PRICED_ON = {"lsu": ("space", "bytes"), "tma": ("bytes", "targets"), "mma": ("in_bits", "k", "count"),
             "alu": ("rows", "sfu")}


def _track(hart: str, unit: str) -> str:
    return f"{hart} {unit.upper()}"


def lanes(spans: list[tuple[int, int]]) -> list[int]:
    """The lane of each ``(start, end)`` span: the first lane whose last span ended by its start
    (spans in start order), so the spans of one lane never overlap."""
    ends: list[int] = []
    out = []
    for start, end in spans:
        lane = next((i for i, e in enumerate(ends) if e <= start), len(ends))
        if lane == len(ends):
            ends.append(end)
        else:
            ends[lane] = end
        out.append(lane)
    return out


def _levels(changes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``(time, +1/-1)`` changes -> the level after each time that changed (ties: the -1 first)."""
    out: list[tuple[int, int]] = []
    level = 0
    for t, delta in sorted(changes):
        level += delta
        if out and out[-1][0] == t:
            out[-1] = (t, level)
        else:
            out.append((t, level))
    return out


def _engines(timeline: Any) -> dict[tuple[str, str], list[tuple[Any, ...]]]:
    """The operations per (hart, engine), in start order; harts by name, engines in report order."""
    per: dict[tuple[str, str], list[tuple[Any, ...]]] = defaultdict(list)
    for op in timeline.ops:
        per[op[0], op[1]].append(op)
    order = {u: i for i, u in enumerate(ENGINES)}
    return {k: sorted(per[k], key=lambda op: (op[4], op[3]))
            for k in sorted(per, key=lambda k: (k[0], order.get(k[1], len(order)), k[1]))}


def _queues(ops: list[tuple[Any, ...]]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """An engine's ``queue`` and ``outstanding`` levels over time."""
    queue = [(op[3], 1) for op in ops] + [(op[4], -1) for op in ops]
    outstanding = [(op[3], 1) for op in ops] + [(op[7], -1) for op in ops]
    return _levels(queue), _levels(outstanding)


def events(timeline: Any, samples: Any = None, harts: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The trace events (dicts) of ``timeline``, with the counters ``samples`` took of
    ``harts`` (the pipelines by hart name) when given."""
    out: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": UNITS_PID, "args": {"name": "tile engines (tile model time)"}},
        {"name": "process_name", "ph": "M", "pid": COUNTERS_PID, "args": {"name": "counters (tile model time)"}}]
    tids: dict[str, int] = {}

    def tid(track: str) -> int:
        got = tids.get(track)
        if got is None:
            got = tids[track] = len(tids) + 1
            out.append({"name": "thread_name", "ph": "M", "pid": UNITS_PID, "tid": got, "args": {"name": track}})
            out.append({"name": "thread_sort_index", "ph": "M", "pid": UNITS_PID, "tid": got,
                        "args": {"sort_index": got}})
        return got

    stalls: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for hart, what, since, until in timeline.stalls:
        stalls[hart].append((what, since, until))
    per_engine = _engines(timeline)
    for hart in sorted({h for h, _u in per_engine} | set(stalls)):
        for what, since, until in stalls.get(hart, []):
            out.append({"name": what, "cat": "stall", "ph": "X", "pid": UNITS_PID, "tid": tid(f"{hart} tile stall"),
                        "ts": since, "dur": until - since, "args": {"cycles": until - since}})
        for (h, unit), ops in per_engine.items():
            if h != hart:
                continue
            track = _track(hart, unit)
            placed = lanes([(op[4], op[7]) for op in ops])
            for op, lane in zip(ops, placed):
                _h, _u, name, dispatch, start, busy, latency, done, priced = op
                args = {"dispatch": dispatch, "queued": start - dispatch, "busy": busy, "latency": latency,
                        "done": done, **dict(zip(PRICED_ON.get(unit, ()), priced))}
                out.append({"name": name, "cat": "operation", "ph": "X", "pid": UNITS_PID,
                            "tid": tid(track if lane == 0 else f"{track} #{lane + 1}"), "ts": start,
                            "dur": done - start, "args": args})
            busy_tid = tid(f"{track} busy")
            for _h, _u, name, dispatch, start, busy, *_rest in ops:
                out.append({"name": name, "cat": "busy", "ph": "X", "pid": UNITS_PID, "tid": busy_tid, "ts": start,
                            "dur": busy, "args": {"dispatch": dispatch}})
    if samples is not None and harts:
        out += sample_counters(samples, harts)
    for (hart, unit), ops in per_engine.items():
        queue, outstanding = _queues(ops)
        for label, levels in (("queue", queue), ("outstanding", outstanding)):
            for t, level in levels:
                out.append({"name": f"{label} {_track(hart, unit)}", "ph": "C", "pid": COUNTERS_PID, "ts": t,
                            "args": {"operations": level}})
    return out


def write_perfetto(timeline: Any, samples: Any, harts: dict[str, Any], path: str) -> None:
    """Write the timeline and counters to ``path`` as a trace-event JSON object."""
    dump(path, "tile model cycles", [_event(**ev) for ev in events(timeline, samples, harts)])


def write_vcd(timeline: Any, path: str) -> None:
    """Write the timeline to ``path`` as a value change dump (needs pyvcd)."""
    from vcd import VCDWriter

    changes: list[tuple[int, int, tuple[str, str], int]] = []     # (time, order, (scope, signal), value)
    harts = sorted({op[0] for op in timeline.ops} | {s[0] for s in timeline.stalls})
    for hart, _what, since, until in timeline.stalls:
        changes.append((until, 0, (hart, "stall"), 0))       # ends before a stall starting then
        changes.append((since, 1, (hart, "stall"), 1))
    per_engine = _engines(timeline)
    for (hart, unit), ops in per_engine.items():
        scope = f"{hart}.{unit}"
        for op in ops:
            start, busy = op[4], op[5]
            changes.append((start + busy, 0, (scope, "busy"), 0))
            changes.append((start, 1, (scope, "busy"), 1))
        queue, outstanding = _queues(ops)
        changes += [(t, 2, (scope, "queue"), level) for t, level in queue]
        changes += [(t, 2, (scope, "outstanding"), level) for t, level in outstanding]
    changes.sort(key=lambda c: (c[0], c[1]))
    with open(path, "w", encoding="utf-8") as fh, VCDWriter(fh, timescale="1 ns", comment="tessera-cycles: tile "
                                                             "model time, one time unit = one cycle") as writer:
        signals = {}
        for hart in harts:
            signals[hart, "stall"] = writer.register_var(f"tile.{hart}", "stall", "wire", size=1, init=0)
        for hart, unit in per_engine:
            scope = f"{hart}.{unit}"
            signals[scope, "busy"] = writer.register_var(f"tile.{scope}", "busy", "wire", size=1, init=0)
            for name in ("queue", "outstanding"):
                signals[scope, name] = writer.register_var(f"tile.{scope}", name, "integer", size=16, init=0)
        for t, _order, key, value in changes:
            writer.change(signals[key], t, value)


def write(timeline: Any, samples: Any, harts: dict[str, Any], path: str) -> None:
    """``--cycles-trace`` with the tile model: VCD for a ``.vcd`` file, Perfetto JSON otherwise."""
    if path.lower().endswith(".vcd"):
        write_vcd(timeline, path)
    else:
        write_perfetto(timeline, samples, harts, path)
