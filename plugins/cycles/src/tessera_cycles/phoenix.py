"""The barrel model on a running rfPhoenix machine: what each thread's retirement tells it.

:class:`PhoenixBarrel` is the ``barrel`` timing model for rfPhoenix (spec 6: one
instruction issued a clock, threads in turn, a per-thread scoreboard without forwarding).
It prices every instruction at one cycle for the threads' own counts and reads the clock
— which TICK reads — from one :class:`~tessera_cycles.barrel.BarrelPipeline` shared by
the core's threads, fed by an observer on every instruction with

* the kind, from the row's timing class (``alu``, ``vector``, ``mul``, ``fp``, ``mem`` …);
  a ``mem`` row that writes a register is a load, one that does not a store;
* the registers read and written, from the operand fields (spec 2.2): ``rt`` is the
  destination — read instead for stores, ``brk`` and ``pushq``, read and written by
  ``ret``; ``ra``, ``rb``, ``rc``, the lane mask and a branch's ``bra``/``brb`` are
  sources; ``call``/``bsr`` write the link register their ``lk`` names (lr1 = r57,
  lr2 = r58, spec 1.3).  A 7-bit specifier names ``r0``–``r63`` (T = 0) or ``v0``–``v63``
  (T = 1).  This is the model's reading of the operands, for timing only — rfPhoenix
  declares no ``register_uses``;
* its data accesses, from a journal watch over memory;
* whether it redirected its thread (a taken branch, a jump, a call or return, exception
  entry): seen when the thread's next instruction retires somewhere other than right after
  it — so each thread's last retirement reaches the model one instruction late, and is
  given to it as not redirecting when the run ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera_cycles.live import model_state, register_model
from tessera_cycles.params import parse

__all__ = ["PhoenixBarrel"]

#: link registers of call/bsr's lk field (spec 1.3: lr1 = r57, lr2 = r58)
LINK = {1: 57, 2: 58}
#: rows whose rt is a source, not a destination
RT_READ = frozenset({"st", "stx", "stcr", "stcrx", "brk"})
#: rows whose rt is read and written
RT_BOTH = frozenset({"ret"})
KINDS = {"alu": "alu", "vector": "vector", "branch": "branch", "csr": "csr", "sys": "sys", "nop": "nop",
         "mmu": "mmu", "fpmove": "fpmove", "mul": "mul", "fp": "fp", "fpest": "fpest", "mem": "mem",
         "cache": "mem", "rex": "rex", "trap": "sys", "default": "alu"}


def _reg(n: int) -> tuple[str, int]:
    return ("r", n) if n < 64 else ("v", n - 64)


def operand_uses(ins: Any) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    """(reads, writes) of one decoded rfPhoenix instruction, as the model reads them (module doc)."""
    ops = ins.operands
    names = ins.encoding.operand_names
    mnemonic = ins.mnemonic
    reads: list[tuple[str, int]] = []
    writes: list[tuple[str, int]] = []
    for field in ("ra", "rb", "rc"):
        if field in names:
            reads.append(_reg(int(ops[field])))
    for field in ("bra", "brb"):
        if field in names:
            reads.append(("r", int(ops[field])))
    if ops.get("mask"):
        reads.append(("r", int(ops["mask"])))
    if "rt" in names:
        rt = _reg(int(ops["rt"]))
        if mnemonic in RT_READ:
            reads.append(rt)
        elif mnemonic in RT_BOTH:
            reads.append(rt)
            writes.append(rt)
        else:
            writes.append(rt)
    if mnemonic in ("call", "bsr") and int(ops.get("lk", 0)) in LINK:
        writes.append(("r", LINK[int(ops["lk"])]))
    zero = ("r", 0)
    return (tuple(dict.fromkeys(r for r in reads if r != zero)),
            tuple(dict.fromkeys(w for w in writes if w != zero)))


class PhoenixBarrel:
    """The ``barrel`` timing model of one rfPhoenix machine (see the module doc)."""

    name = "barrel"

    def __init__(self, machine: Any, params: dict[str, Any]) -> None:
        from tessera_cycles.barrel import BarrelParams, BarrelPipeline

        self.params = parse(BarrelParams, params)
        #: the pipeline and, per thread, its retirement not yet fed (pc, size, kind, reads,
        #: writes, accesses, next pc): kept in ``machine.ext["cycles"]``, so snapshots keep them
        state = model_state(machine, self.name, {"pipeline": BarrelPipeline(self.params), "pending": {},
                                                 "threads": {}})
        self.pipeline = state["pipeline"]
        self.journal: list[tuple[int, int, int, int]] = []
        self.pending: dict[int, tuple[Any, ...]] = state["pending"]
        self.threads: dict[str, int] = state["threads"]
        self.machine = machine
        register_model(machine, self)

    def cycles(self, ins: Any) -> int:
        return 1

    def now(self, machine: Any) -> int:
        return int(self.pipeline.cycles())

    def watches(self, space: Any) -> list[Any]:
        from tessera.memory import Watch

        return [Watch(0, space.limit, journal=self.journal)] if space.name == "main" else []

    #: ``--cycles-trace``: the core's counters sampled while the machine runs (None: not asked)
    samples: Any = None

    def observer(self, arch: Any, ins: Any) -> Callable[[Any, Any], None] | None:
        self._observed = True
        reads, writes = operand_uses(ins)
        kind = KINDS.get(ins.encoding.timing, "alu")
        pc, size, after = int(ins.address), int(ins.size), int(ins.address) + int(ins.size)
        journal, pending, retire = self.journal, self.pending, self.pipeline.retire

        def observe(agent: Any, ins: Any) -> None:
            tid = getattr(agent, "tid", None)
            if tid is None:
                tid = self.threads.setdefault(agent.name, len(self.threads))
            if journal:
                accesses = tuple((address, n) for _k, address, n, _v in journal)
                journal.clear()
            else:
                accesses = ()
            before = pending.get(tid)
            if before is not None:
                retire(tid, before[0], before[1], before[2], before[3], before[4], before[5], pc != before[6])
            pending[tid] = (pc, size, kind, reads, writes, accesses, after)

        samples = self.samples
        if samples is None:
            return observe
        pipeline, take = self.pipeline, samples.take

        def sampled(agent: Any, ins: Any) -> None:   # --cycles-trace: the core's counters
            observe(agent, ins)
            take("core", pipeline)

        return sampled

    # ------------------------------------------------------------------ --trace perfetto

    def record_timeline(self) -> bool:
        """A Perfetto tracer starts: sample the core's counters, unless instructions were
        already decoded without sampling (their observers are made): then decline."""
        if self.samples is None:
            if self._observed:
                return False
            from tessera_cycles.timeline import Samples

            self.samples = Samples()
        return True

    def trace_events(self) -> list[dict[str, Any]]:
        """The sampled counters as Chrome trace events (the halted threads' last retirements fed)."""
        from tessera_cycles.timeline import sample_events

        if self.samples is None:
            return []
        self.flush(self.machine)
        return sample_events(self.samples, {"core": self.pipeline}, "barrel")

    _observed = False

    def flush(self, machine: Any) -> None:
        """Feed each halted thread's last retirement (it redirected nothing: its thread stopped)."""
        for agent in machine.agents:
            tid = getattr(agent, "tid", None)
            if tid is None or agent.status != "halted":
                continue
            before = self.pending.pop(tid, None)
            if before is not None:
                self.pipeline.retire(tid, before[0], before[1], before[2], before[3], before[4], before[5], False)
                self.pipeline.halt(tid)

    def report(self, machine: Any) -> dict[str, Any]:
        import attrs

        self.flush(machine)
        rep = self.pipeline.report()
        names = {getattr(a, "tid", None): a.name for a in machine.agents}
        threads = {names.get(t, f"t{t}"): r for t, r in sorted(rep.pop("threads", {}).items())}
        return {"model": self.name, "clock": int(machine.clock), "params": attrs.asdict(self.params),
                "core": rep, "agents": threads}
