"""``--cycles-trace FILE``: the tensix model's timeline as a Perfetto (Chrome trace-event) file.

Open it in https://ui.perfetto.dev or chrome://tracing.  Everything is in the model's
time — one cycle of the tile is 1 µs on the timeline — unlike ``--trace perfetto``,
whose tracks follow each agent's own instruction clock:

* process ``units``: one track per backend unit (MATH, SFPU, THCON, UNPACK, PACK …), an
  ``X`` span for each instruction while it keeps the unit busy, named by its mnemonic,
  with the issuing thread in ``args`` — the units the three threads share, side by side;
* process ``counters``: ``C`` counter tracks — ``fifo T<i>``, the instructions pushed to
  thread i and not yet through its wait gate (the FIFO's occupancy), and ``ipc T<i>``,
  the instructions thread i's gate let through to a unit in each window of ``WINDOW``
  cycles, divided by the window (the backend's issue rate per thread), and ``I$ misses
  <core>``, the baby core's instruction-cache misses in each window that has one.

One event per line, so the file stays readable by line-oriented tools.

A ``FILE`` ending in ``.vcd`` gets the same timeline as a value change dump
(:func:`write_vcd`, with pyvcd: ``pip install tessera-cycles[vcd]``) for a waveform
viewer (GTKWave, Surfer): per unit a 1-bit ``busy`` and an integer ``thread`` (the thread
whose instruction keeps it busy), per thread an integer ``fifo``; one time unit is one
cycle.

The in-order and barrel models' sampled counters are :class:`Samples` (:func:`write_samples`);
the ``tile`` model's timeline is :mod:`tessera_cycles.tile_timeline`, which uses
:func:`sample_counters` and :func:`dump` from here.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

__all__ = ["SAMPLE_EVERY", "Samples", "WINDOW", "dump", "event_dicts", "sample_counters", "sample_events", "write",
           "write_perfetto", "write_samples", "write_vcd"]

#: cycles per point of the IPC counters
WINDOW = 64
UNITS_PID, COUNTERS_PID = 1, 2


def _event(**fields: Any) -> str:
    return json.dumps(fields, separators=(",", ":"))


def events(timeline: Any) -> list[str]:
    """The trace events of ``timeline`` (a :class:`~tessera_cycles.tensix_model.Timeline`)."""
    out = [_event(name="process_name", ph="M", pid=UNITS_PID, args={"name": "units (tensix model time)"}),
           _event(name="process_name", ph="M", pid=COUNTERS_PID, args={"name": "counters"})]
    lanes: dict[str, int] = {}
    for unit, start, cycles, thread, mnemonic in timeline.spans:
        tid = lanes.get(unit)
        if tid is None:
            tid = lanes[unit] = len(lanes) + 1
            out.append(_event(name="thread_name", ph="M", pid=UNITS_PID, tid=tid, args={"name": unit}))
        out.append(_event(name=mnemonic, cat="unit", ph="X", pid=UNITS_PID, tid=tid, ts=start, dur=cycles,
                          args={"thread": f"T{thread}"}))
    # FIFO occupancy: +1 at a push, -1 when the entry passes the gate (ties: the pass first)
    changes = sorted([(t, 1, th) for th, t in timeline.pushes] + [(t, -1, th) for th, t in timeline.passes])
    level: Counter[int] = Counter()
    for t, delta, th in changes:
        level[th] += delta
        out.append(_event(name=f"fifo T{th}", ph="C", pid=COUNTERS_PID, ts=t, args={"entries": level[th]}))
    # IPC per thread: instructions that reached a unit, per window
    per_window: Counter[tuple[int, int]] = Counter()
    for _unit, start, _cycles, thread, _m in timeline.spans:
        per_window[thread, start // WINDOW] += 1
    for (thread, window), n in sorted(per_window.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        out.append(_event(name=f"ipc T{thread}", ph="C", pid=COUNTERS_PID, ts=window * WINDOW,
                          args={"ipc": round(n / WINDOW, 4)}))
    # instruction-cache misses per core, per window (a window without one is not written)
    missed: Counter[tuple[str, int]] = Counter((core, t // WINDOW) for core, t in getattr(timeline, "misses", ()))
    for (core, window), n in sorted(missed.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        out.append(_event(name=f"I$ misses {core}", ph="C", pid=COUNTERS_PID, ts=window * WINDOW,
                          args={"per window": n}))
    return out


def write_perfetto(timeline: Any, path: str) -> None:
    """Write ``timeline`` to ``path`` as a trace-event JSON object (``traceEvents``)."""
    dump(path, "tensix model cycles", events(timeline))


def write_vcd(timeline: Any, path: str) -> None:
    """Write ``timeline`` to ``path`` as a value change dump (needs pyvcd)."""
    from vcd import VCDWriter

    changes: list[tuple[int, int, str, str, int]] = []   # (time, order, scope, signal, value)
    units = sorted({unit for unit, *_rest in timeline.spans})
    for unit, start, cycles, thread, _m in timeline.spans:
        changes.append((start + cycles, 0, unit, "busy", 0))   # ends before a span starting then
        changes.append((start, 1, unit, "busy", 1))
        changes.append((start, 1, unit, "thread", thread))
    level: Counter[int] = Counter()
    for t, delta, th in sorted([(t, 1, th) for th, t in timeline.pushes] + [(t, -1, th) for th, t in timeline.passes]):
        level[th] += delta
        changes.append((t, 2, f"t{th}", "fifo", level[th]))
    changes.sort(key=lambda c: (c[0], c[1]))
    with open(path, "w", encoding="utf-8") as fh, VCDWriter(fh, timescale="1 ns", comment="tessera-cycles: tensix "
                                                             "model time, one time unit = one cycle") as writer:
        signals = {}
        for unit in units:
            signals[unit, "busy"] = writer.register_var(f"tensix.units.{unit}", "busy", "wire", size=1, init=0)
            signals[unit, "thread"] = writer.register_var(f"tensix.units.{unit}", "thread", "integer", size=2, init=0)
        for th in range(3):
            signals[f"t{th}", "fifo"] = writer.register_var(f"tensix.threads.t{th}", "fifo", "integer", size=8,
                                                            init=0)
        for t, _order, scope, name, value in changes:
            writer.change(signals[scope, name], t, value)


def write(timeline: Any, path: str) -> None:
    """``--cycles-trace``: VCD for a ``.vcd`` file, Perfetto JSON otherwise."""
    (write_vcd if path.lower().endswith(".vcd") else write_perfetto)(timeline, path)


#: retirements of one hart between two samples of the in-order model's counters
SAMPLE_EVERY = 256


class Samples:
    """The in-order model's counters, sampled per hart every :data:`SAMPLE_EVERY`
    retirements for ``--cycles-trace``: ``(cycle, instructions, I$ misses, D$ misses,
    mispredictions)`` — recorded only when asked (the observers are wrapped then)."""

    def __init__(self) -> None:
        self.points: dict[str, list[tuple[int, int, int, int, int]]] = {}
        self.left: dict[str, int] = {}

    def take(self, name: str, pipeline: Any) -> None:
        """Called after each retirement of hart ``name``: a sample every SAMPLE_EVERY."""
        left = self.left.get(name, SAMPLE_EVERY) - 1
        if left > 0:
            self.left[name] = left
            return
        self.left[name] = SAMPLE_EVERY
        self.sample(name, pipeline)

    def sample(self, name: str, pipeline: Any) -> None:
        rep = pipeline.report()
        self.points.setdefault(name, []).append((
            rep["cycles"], rep["instructions"], (rep.get("icache") or {}).get("misses", 0),
            (rep.get("dcache") or {}).get("misses", 0), (rep.get("predictor") or {}).get("mispredictions", 0)))


def sample_counters(samples: Samples, pipelines: dict[str, Any], pid: int = COUNTERS_PID) -> list[dict[str, Any]]:
    """The sampled counters as ``C`` trace events (dicts): per hart ``ipc``, ``I$ misses``,
    ``D$ misses`` and ``mispredictions`` per sample interval, at the interval's start
    cycle — after a last sample of each pipeline (the run's last partial interval)."""
    kept = {}
    for name, pipeline in pipelines.items():      # the run's last partial interval
        samples.sample(name, pipeline)
        rep = pipeline.report()                   # counters the model has (a barrel core: no predictor)
        kept[name] = {2: rep.get("icache") is not None, 3: rep.get("dcache") is not None,
                      4: rep.get("predictor") is not None}
    out: list[dict[str, Any]] = []
    for name, points in sorted(samples.points.items()):
        last = (0, 0, 0, 0, 0)
        for point in points:
            cycles = point[0] - last[0]
            if cycles <= 0:
                continue
            out.append({"name": f"ipc {name}", "ph": "C", "pid": pid, "ts": last[0],
                        "args": {"ipc": round((point[1] - last[1]) / cycles, 4)}})
            for label, index in (("I$ misses", 2), ("D$ misses", 3), ("mispredictions", 4)):
                if not kept.get(name, {}).get(index, True):
                    continue
                out.append({"name": f"{label} {name}", "ph": "C", "pid": pid, "ts": last[0],
                            "args": {"per interval": point[index] - last[index]}})
            last = point
    return out


def dump(path: str, clock: str, lines: list[str]) -> None:
    """Write trace-event lines to ``path`` as one JSON object, ``clock`` saying whose time it is."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('{"displayTimeUnit":"ns","otherData":{"tool":"tessera-cycles","clock":"' + clock
                 + ' (1 us on the timeline = 1 cycle)"},"traceEvents":[\n')
        fh.write(",\n".join(lines))
        fh.write("\n]}\n")


def write_samples(samples: Samples, pipelines: dict[str, Any], path: str) -> None:
    """The in-order model's counter tracks as Perfetto JSON: per hart ``ipc``, ``I$ misses``,
    ``D$ misses`` and ``mispredictions`` per sample interval, at the interval's end cycle."""
    out = [_event(name="process_name", ph="M", pid=COUNTERS_PID, args={"name": "counters (in-order model time)"})]
    out += [_event(**ev) for ev in sample_counters(samples, pipelines)]
    dump(path, "in-order model cycles", out)


def sample_events(samples: Samples, pipelines: dict[str, Any], model: str) -> list[dict[str, Any]]:
    """``--trace perfetto``'s tracks of a model that samples counters (``inorder``,
    ``barrel``): a ``counters`` process named for the model's time, then the counters."""
    head = {"name": "process_name", "ph": "M", "pid": COUNTERS_PID,
            "args": {"name": f"counters ({model} model time)"}}
    return [head, *sample_counters(samples, pipelines)]


def event_dicts(timeline: Any) -> list[dict[str, Any]]:
    """``--trace perfetto``'s tracks of the tensix model: :func:`events` as dicts."""
    return [json.loads(line) for line in events(timeline)]
