"""Def/use of the golden run's registers: which faults need no run after their trigger.

A transient fault in a register changes one value.  If the golden run never *reads* that
register again before writing it, nothing the program does can depend on the fault:

* the next access is a write → the fault is overwritten, the machine is the golden run's
  from there on: **masked** (``pruned = "overwritten"``);
* there is no access at all → the program runs exactly as the golden run did and ends with
  the register still wrong: **latent** (``pruned = "unread"``), when the outputs cannot see
  registers (no ``[outputs] structures``, no checker: those may read any state).

Running such an injection to its end gives the same outcome; knowing it from the golden
run saves the run — and most faults in a register file land in registers that are dead at
that moment (a program keeps a few live values in 32 registers).  The pruning is
conservative by construction: only the registers the architecture says an instruction
reads count as reads, so ``Architecture.register_uses`` must over-approximate reads
(``None`` for an instruction with implicit operands counts as reading every register of
its agent), and writes count only for executions that completed (an observer runs after
the semantics, never after a trap; a trap counts as reading everything).  ``[run] prune =
false`` turns it off; the tests compare every fault's outcome with and without.

:func:`record_liveness` makes a third golden run with an observer on every instruction
(the ``tessera_execute_observe`` hook: the fast engine keeps its blocks) that numbers each
agent's instructions and appends the number to the lists of the registers it reads and
writes.  Per register the events become *segments*: sorted instruction numbers ``ends``
with a kind — a run of reads merged into its last one, every write-only event kept — so
the first segment end at or after the injection's instruction number tells the answer
(:func:`classify_dead`).  Instruction numbers are the agent's own (``instret`` at the
injection), so the record holds whatever the interleaving of several agents; the run
checks that every tracked agent's count is its ``instret`` at the end, and keeps nothing
for an agent where it is not.
"""

from __future__ import annotations

import time
import weakref
from array import array
from collections.abc import Mapping
from typing import Any

import numpy as np

from tessera.batch import captured_output
from tessera.errors import TesseraError
from tessera_faults.campaign.config import Campaign

__all__ = ["LIVENESS", "VALUE_MODELS", "Liveness", "Recorder", "classify_dead", "record_liveness", "wanted"]

#: machines whose instructions a :class:`Recorder` observes (the plugin's hooks ask here)
LIVENESS: weakref.WeakKeyDictionary[Any, Recorder] = weakref.WeakKeyDictionary()
#: the models whose fault is one changed value (what pruning can decide)
VALUE_MODELS = ("flip", "random", "zero")
_READ, _WRITE = 1, 0


class Recorder:
    """Numbers each agent's completed instructions and records the registers they use."""

    def __init__(self) -> None:
        #: per agent, its completed instructions so far (a one-item list: observers share it)
        self.counts: dict[str, list[int]] = {}
        self.reads: dict[tuple[str, str, int], array[int]] = {}
        self.writes: dict[tuple[str, str, int], array[int]] = {}
        #: instruction numbers of an agent that may read anything (unknown operands, traps)
        self.barriers: dict[str, array[int]] = {}
        self.files: dict[str, tuple[tuple[str, int], ...]] = {}

    def observer(self, arch: Any, ins: Any) -> Any:
        """The observer for one decoded instruction (``None``: its architecture declares no uses).

        It runs after every completed execution, so it is kept small: per agent it caches
        the agent's counter and the lists it appends to (one agent runs a decoded entry
        at a time, and an entry is shared only by agents of one architecture)."""
        declare = getattr(arch, "register_uses", None)
        if declare is None:
            return None
        uses = declare(ins)
        if uses is None:
            def unknown(agent: Any, ins: Any) -> None:
                counter = self._counter(agent)
                self.barriers[agent.name].append(counter[0])
                counter[0] += 1

            return unknown
        if callable(uses):  # which registers depends on state: ask after each execution
            dynamic = uses

            def observe_dynamic(agent: Any, ins: Any) -> None:
                counter = self._counter(agent)
                i = counter[0]
                counter[0] = i + 1
                reads, writes = dynamic(agent)
                for lists, regs in ((self.reads, reads), (self.writes, writes)):
                    for file, index in regs:
                        lists.setdefault((agent.name, file, index), array("q")).append(i)

            return observe_dynamic
        reads, writes = uses
        reads = tuple(dict.fromkeys(reads))  # rs1 = rs2 reads one register once
        writes = tuple(dict.fromkeys(writes))
        cache: dict[str, tuple[list[int], tuple[Any, ...]]] = {}

        def observe(agent: Any, ins: Any) -> None:
            got = cache.get(agent.name)
            if got is None:
                got = cache[agent.name] = self._lists(agent, reads, writes)
            counter, lists = got
            i = counter[0]
            counter[0] = i + 1
            for events in lists:
                events.append(i)

        return observe

    def _counter(self, agent: Any) -> list[int]:
        counter = self.counts.get(agent.name)
        if counter is None:
            self._agent(agent)
            counter = self.counts[agent.name] = [0]
        return counter

    def _lists(self, agent: Any, reads: tuple[Any, ...], writes: tuple[Any, ...]) -> tuple[list[int], tuple[Any, ...]]:
        name = agent.name
        lists = [self.reads.setdefault((name, f, i), array("q")) for f, i in reads]
        lists += [self.writes.setdefault((name, f, i), array("q")) for f, i in writes]
        return self._counter(agent), tuple(lists)

    def _agent(self, agent: Any) -> None:
        if agent.name not in self.files:
            self.files[agent.name] = tuple((rf.name, rf.count) for rf in agent.arch.register_files if rf.storage)
            self.barriers.setdefault(agent.name, array("q"))

    def trap(self, agent: Any) -> None:
        """``agent`` trapped: its instruction read who knows what (a barrier at its number)."""
        if agent.name in self.files or getattr(agent.arch, "register_uses", None) is not None:
            at = self._counter(agent)[0]
            self.barriers[agent.name].append(at)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` for what is mostly sorted already (appended in order): a sort and a mask."""
    values = np.sort(values, kind="stable")
    if len(values) < 2:
        return values
    keep = np.empty(len(values), bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _segments(reads: np.ndarray, writes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segment ends and kinds of one register's events (the module doc)."""
    reads, writes = _sorted_unique(reads), _sorted_unique(writes)
    writes = writes[~np.isin(writes, reads, assume_unique=True)]
    events = np.concatenate([reads, writes])
    kinds = np.concatenate([np.full(len(reads), _READ, np.uint8), np.full(len(writes), _WRITE, np.uint8)])
    order = np.argsort(events, kind="stable")
    events, kinds = events[order], kinds[order]
    keep = np.ones(len(events), bool)
    keep[:-1] = ~((kinds[:-1] == _READ) & (kinds[1:] == _READ))
    return events[keep], kinds[keep]


class Liveness:
    """The segments of every tracked register, as plain bytes (what workers get)."""

    def __init__(self, files: Mapping[str, tuple[list[bytes], list[bytes]]], seconds: float = 0.0) -> None:
        #: ``"AGENT.FILE"`` (the fault target's name) → per index, (ends as int64, kinds as uint8)
        self.files = dict(files)
        self.seconds = seconds

    def shared(self) -> dict[str, Any]:
        return {name: {"ends": ends, "kinds": kinds} for name, (ends, kinds) in self.files.items()}

    def describe(self) -> dict[str, Any]:
        return {"structures": sorted(self.files), "seconds": round(self.seconds, 6),
                "segments": sum(len(e) // 8 for ends, _ in self.files.values() for e in ends)}

    @classmethod
    def from_recorder(cls, recorder: Recorder, machine: Any, seconds: float = 0.0) -> Liveness:
        files: dict[str, tuple[list[bytes], list[bytes]]] = {}
        empty = np.zeros(0, np.int64)
        for name, regfiles in recorder.files.items():
            agent = machine.agent(name)
            if recorder.counts.get(name, [0])[0] != int(agent.instret):
                continue  # its instructions were not numbered as it counts them: nothing kept
            barrier = np.frombuffer(recorder.barriers.get(name, array("q")), np.int64)
            for file, count in regfiles:
                ends_list, kinds_list = [], []
                for index in range(count):
                    r = recorder.reads.get((name, file, index))
                    w = recorder.writes.get((name, file, index))
                    reads = np.concatenate([np.frombuffer(r, np.int64) if r is not None else empty, barrier])
                    ends, kinds = _segments(reads, np.frombuffer(w, np.int64) if w is not None else empty)
                    ends_list.append(ends.astype(np.int64).tobytes())
                    kinds_list.append(kinds.tobytes())
                files[f"{name}.{file}"] = (ends_list, kinds_list)
        return cls(files, seconds)


def classify_dead(entry: Mapping[str, Any], index: int, at: int) -> tuple[str, int | None]:
    """What the golden run does next with register ``index`` of one tracked structure
    (``entry`` from :meth:`Liveness.shared`) from the agent's instruction number ``at``:
    ``("read", n)``, ``("overwritten", n)`` (instruction ``n`` writes it first) or
    ``("unread", None)`` (never accessed again)."""
    ends = np.frombuffer(entry["ends"][index], np.int64)
    j = int(np.searchsorted(ends, at, side="left"))
    if j == len(ends):
        return "unread", None
    kind = entry["kinds"][index][j]
    return ("read" if kind == _READ else "overwritten"), int(ends[j])


def wanted(campaign: Campaign) -> bool:
    """Can pruning decide any of this campaign's faults (``[run] prune`` and a one-value model)?"""
    return campaign.prune and (any(m.model in VALUE_MODELS for m in campaign.models) or bool(campaign.faults))


def record_liveness(payload: Mapping[str, Any], host: Any, steps: int) -> Liveness | None:
    """The third golden run (module doc); ``None`` when no agent's architecture declares
    ``register_uses`` or the run differs from the golden run (``steps``)."""
    from tessera_faults.campaign.golden import _run, build_machine

    machine = build_machine(payload, host)
    if not any(getattr(cpu.arch, "register_uses", None) is not None for cpu in machine.cpus):
        return None
    recorder = Recorder()
    LIVENESS[machine] = recorder
    machine.flush_caches()
    t0 = time.perf_counter()
    try:
        with captured_output():
            result = _run(machine, payload)
    except TesseraError:
        return None  # the golden run ended cleanly twice: a third that does not has nothing to tell
    finally:
        LIVENESS.pop(machine, None)
    if int(result.steps) != steps:
        return None
    return Liveness.from_recorder(recorder, machine, time.perf_counter() - t0)
