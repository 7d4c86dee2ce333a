"""The in-order model on a running RISC-V machine: what each retirement tells it.

:class:`RiscvInOrder` is the timing model ``tessera_timing_model`` hands the core. It
prices every instruction at one cycle (so each hart's own ``cycles`` counts its
instructions) and reads the clock from its pipelines: one
:class:`~tessera_cycles.inorder.InOrderPipeline` per hart, fed by an observer on every
instruction (``tessera_execute_observe``: the fast engine keeps its blocks) with

* the kind of instruction, from its row's timing class (``alu``, ``mul``, ``div``,
  ``load``, ``store``, ``amo``, ``branch``, ``jump`` — ``jal``, or ``jalr`` — ``csr``,
  ``system``);
* the registers it reads and writes, from ``Architecture.register_uses`` (asked once per
  decoded instruction; ``ecall``'s after each call); a row an extension adds, whose uses
  the table cannot tell, is modelled as a single-cycle operation without dependencies;
* its data accesses, from a journal watch over the main address space (every completed
  load, store and AMO appends its address and size: exact even for ``lw a0, 0(a0)``);
* for a conditional branch, whether it was taken: its condition evaluated on the source
  registers after it ran (a branch writes none), and its target for a predictor that
  looks at direction.

Nothing here changes architectural state: the conformance transparency check runs
every program with and without a model and compares the final states.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from tessera_cycles.live import model_state, register_model
from tessera_cycles.params import parse

__all__ = ["RiscvInOrder"]

#: row timing class -> the model's kind of instruction (jal/jalr told apart by mnemonic)
KINDS = {"alu": "alu", "mul": "mul", "div": "div", "load": "load", "store": "store", "amo": "amo",
         "branch": "branch", "jump": "jump", "csr": "csr", "system": "system", "trap": "system"}


#: the kinds that access data memory (their observers read the journal)
MEMORY_KINDS = frozenset({"load", "store", "amo"})


def _signed(xlen: int) -> Callable[[int], int]:
    top, span = 1 << (xlen - 1), 1 << xlen
    return lambda v: v - span if v & top else v


def _conditions(xlen: int) -> dict[str, Callable[[int, int], bool]]:
    s = _signed(xlen)
    return {"beq": operator.eq, "bne": operator.ne, "bltu": operator.lt, "bgeu": operator.ge,
            "blt": lambda a, b: s(a) < s(b), "bge": lambda a, b: s(a) >= s(b)}


def _branch(ins: Any) -> tuple[int, tuple[str, int, int]]:
    """A conditional branch's taken target and (mnemonic, rs1, rs2), its condition."""
    operands = ins.operands
    rs1, rs2 = operands.get("rs1", 0), operands.get("rs2", 0)
    return int(ins.address) + int(operands.get("boff", 0)), (ins.mnemonic, rs1, rs2)


class RiscvInOrder:
    """The ``inorder`` timing model of one machine (see the module doc)."""

    name = "inorder"

    def __init__(self, machine: Any, params: dict[str, Any]) -> None:
        from tessera_cycles.inorder import InOrderParams
        from tessera_cycles.inorder_batch import Instructions

        self.params = parse(InOrderParams, params)
        #: per hart, its pipeline: kept in the machine's extensions (``machine.ext["cycles"]``),
        #: so a snapshot keeps the counts and a restored machine's model goes on from them
        state = model_state(machine, self.name, {"pipelines": {}, "program": Instructions(self.params)})
        self.pipelines: dict[str, Any] = state["pipelines"]
        #: the decoded instructions the batched records name (kept with the pipelines)
        self.program: Any = state.setdefault("program", Instructions(self.params))
        self._sink: Callable[[Any], Any] = self._make_sink()
        #: the journal watch's list: (kind, address, size, value) of every completed data access
        self.journal: list[tuple[int, int, int, int]] = []
        self._conditions: dict[int, dict[str, Callable[[int, int], bool]]] = {}
        register_model(machine, self)

    # ------------------------------------------------------------------ the core's timing model

    def cycles(self, ins: Any) -> int:
        """One per instruction: a hart's own count is its instructions; the clock is the model's."""
        return 1

    def now(self, machine: Any) -> int:
        self.settle(machine)
        modelled = [p.cycles() for p in self.pipelines.values()]
        others = [a.cycles for a in machine.agents if a.name not in self.pipelines]
        return max([0, *modelled, *others])

    # ------------------------------------------------------------------ feeding the pipelines

    # ------------------------------------------------------------------ --trace perfetto

    def record_timeline(self) -> bool:
        """A Perfetto tracer starts (docs/hooks.md, timing models): sample the harts'
        counters from now on, as ``--cycles-trace`` does — unless a hart is already being
        timed (its counters were not sampled from the start): then decline."""
        if self.pipelines and self.samples is None:
            return False
        if self.samples is None:
            from tessera_cycles.timeline import Samples

            self.samples = Samples()
        return True

    def trace_events(self) -> list[dict[str, Any]]:
        """The sampled counters as Chrome trace events (IPC, I$/D$ misses, mispredictions)."""
        from tessera_cycles.timeline import sample_events

        return sample_events(self.samples, self.pipelines, "in-order") if self.samples is not None else []

    #: feed the pipelines batched records (:mod:`tessera_cycles.inorder_batch`) rather than
    #: one call per retirement; a model whose harts must be timed as they go (the tile
    #: model's engines read a hart's dispatch cycle) keeps the per-retirement pipeline
    batched = True

    def batching(self) -> bool:
        """Whether harts get batched pipelines: yes, unless ``--cycles-trace`` samples the
        counters as the harts go (the per-retirement pipeline is sampled then)."""
        return self.batched and self.samples is None

    def pipeline(self, agent: Any) -> Any:
        got = self.pipelines.get(agent.name)
        if got is None:
            if self.batching():
                from tessera_cycles.inorder_batch import BatchedPipeline

                got = BatchedPipeline(self.params, self.program, agent)
            else:
                from tessera_cycles.inorder import InOrderPipeline

                got = InOrderPipeline(self.params)
            self.pipelines[agent.name] = got
        return got

    def settle(self, machine: Any) -> None:
        """Time the records every batched pipeline holds (the clock or the report is read)."""
        agents = None
        for name, p in self.pipelines.items():
            if getattr(p, "tokens", None):
                if agents is None:
                    agents = {a.name: a for a in machine.agents}
                agent = agents.get(name)
                p.settle(agent, self._condition_table(agent.xlen) if agent is not None else None)

    def _condition_table(self, xlen: int) -> dict[str, Callable[[int, int], bool]]:
        table = self._conditions.get(xlen)
        if table is None:
            table = self._conditions[xlen] = _conditions(xlen)
        return table

    def _make_sink(self) -> Callable[[Any], Any]:
        """The one sink of every record this model asks for (one, so a compiled block
        consults it once per call, not once per instruction)."""
        pipelines = self.pipelines

        def sink(agent: Any) -> Any:
            p = pipelines.get(agent.name)
            if p is None:
                p = self.pipeline(agent)
            return p.sink()

        return sink

    def watches(self, space: Any) -> list[Any]:
        from tessera.memory import Watch

        return [Watch(0, space.limit, journal=self.journal)] if space.name == "main" else []

    #: ``--cycles-trace``: the counters sampled while the machine runs (None: not asked)
    samples: Any = None

    def observer(self, arch: Any, ins: Any) -> Callable[[Any, Any], None] | None:
        """The observer of one decoded instruction (asked when it enters the decode cache):
        a record operation when batching (see :meth:`batching`); else a call per
        retirement, with ``--cycles-trace`` wrapped to sample the counters."""
        if self.batching():
            return self._recorder(arch, ins)
        observe = self._observer(arch, ins)
        samples = self.samples
        if samples is None or observe is None:
            return observe
        pipelines, take = self.pipelines, samples.take

        def sampled(agent: Any, ins: Any) -> None:
            observe(agent, ins)
            pipeline = pipelines.get(agent.name)
            if pipeline is not None:
                take(agent.name, pipeline)

        return sampled

    def _recorder(self, arch: Any, ins: Any) -> Callable[[Any, Any], None]:
        """The record operation of one decoded instruction (:mod:`tessera_cycles.inorder_batch`)."""
        from tessera.engine.record import Record
        from tessera_cycles.inorder_batch import EXPLICIT, SHAPE_SHIFT, VALUE, id_token

        kind, reads, writes, dynamic = self._uses(arch, ins)
        pc = int(ins.address)
        target, condition = _branch(ins) if kind == "branch" else (pc, None)
        program, journal, sink = self.program, self.journal, self._sink
        explicit = dynamic is not None or len([r for r in reads if r]) > 2 or len([w for w in writes if w]) > 1
        base = id_token(program.add(pc, kind, () if explicit else reads, () if explicit else writes, target,
                                    condition))
        if explicit:
            def uses(agent: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
                if dynamic is None:
                    return reads, writes
                r, w = dynamic(agent)
                return tuple(i for f, i in r if f == "x"), tuple(i for f, i in w if f == "x")

            def observe_explicit(agent: Any, ins: Any) -> None:
                record, remember, shadows = sink(agent)
                r, w = uses(agent)
                record(base | program.shape(tuple(e[2] for e in journal)) << SHAPE_SHIFT | EXPLICIT)
                for group in (r, w):
                    remember(len(group))
                    for register in group:
                        remember(register)
                for e in journal:
                    remember(e[1])
                    remember(e[3])
                journal.clear()
                shadows["x"][:] = agent.regs["x"]

            return observe_explicit

        def accessed(register: Any, accesses: tuple[tuple[int, int], ...]) -> int:
            return base | program.shape(tuple(size for _w, size in accesses)) << SHAPE_SHIFT | (
                VALUE if register is not None else 0)

        def otherwise(agent: Any, changes: Any, complete: bool) -> None:
            record, remember, _shadows = sink(agent)
            record(base | program.shape(tuple(e[2] for e in journal)) << SHAPE_SHIFT)
            for e in journal:
                remember(e[1])
                remember(e[3])
            journal.clear()

        return Record(sink, base, lambda _file, _index: base | VALUE, otherwise, journal=journal,
                      accessed=accessed).observer()

    def _uses(self, arch: Any, ins: Any) -> tuple[str, tuple[int, ...], tuple[int, ...], Any]:
        """(kind, x sources, x destinations, uses known only after it ran or None)."""
        enc = ins.encoding
        kind = KINDS.get(enc.timing, "alu")
        if kind == "jump" and ins.mnemonic == "jalr":
            kind = "jalr"
        declare = getattr(arch, "register_uses", None)
        uses = declare(ins) if declare is not None else None
        dynamic = uses if callable(uses) else None
        reads: tuple[int, ...] = ()
        writes: tuple[int, ...] = ()
        if uses is not None and dynamic is None:
            reads = tuple(i for f, i in uses[0] if f == "x")
            writes = tuple(i for f, i in uses[1] if f == "x")
        return kind, reads, writes, dynamic

    def _observer(self, arch: Any, ins: Any) -> Callable[[Any, Any], None] | None:
        kind, reads, writes, dynamic = self._uses(arch, ins)
        pc = int(ins.address)
        journal = self.journal
        pipelines = self.pipelines
        if kind == "branch":
            target, (mnemonic, rs1, rs2) = _branch(ins)
            tests = self._condition_table

            def observe_branch(agent: Any, ins: Any) -> None:
                p = pipelines.get(agent.name) or self.pipeline(agent)
                x = agent.x
                p.retire(pc, "branch", reads, writes, (), tests(agent.xlen)[mnemonic](x[rs1], x[rs2]), target)

            return observe_branch

        if dynamic is not None:
            def observe_dynamic(agent: Any, ins: Any) -> None:
                p = pipelines.get(agent.name) or self.pipeline(agent)
                accesses = tuple((address, size) for _k, address, size, _v in journal)
                journal.clear()
                r, w = dynamic(agent)
                p.retire(pc, kind, tuple(i for f, i in r if f == "x"), tuple(i for f, i in w if f == "x"),
                         accesses, None, None)

            return observe_dynamic
        if kind in MEMORY_KINDS:
            def observe_memory(agent: Any, ins: Any) -> None:
                p = pipelines.get(agent.name) or self.pipeline(agent)
                if journal:
                    accesses = tuple((address, size) for _k, address, size, _v in journal)
                    journal.clear()
                else:
                    accesses = ()
                p.retire(pc, kind, reads, writes, accesses, None, None)

            return observe_memory
        # an instruction that makes no data access: its journal is empty, nothing to read
        retire_args = (pc, kind, reads, writes, (), None, None)

        def observe(agent: Any, ins: Any) -> None:
            p = pipelines.get(agent.name)
            if p is None:
                p = self.pipeline(agent)
            p.retire(*retire_args)

        return observe

    # ------------------------------------------------------------------ reporting

    def report(self, machine: Any) -> dict[str, Any]:
        """Per hart: the pipeline's report; and the machine's clock and model parameters."""
        import attrs

        self.settle(machine)
        agents = {name: p.report() for name, p in sorted(self.pipelines.items())}
        return {"model": self.name, "clock": int(machine.clock), "params": attrs.asdict(self.params),
                "agents": agents}
