"""The instruction-driven agent: fetch → decode cache → run.

The inner loop is the per-instruction path of the whole emulator, so it is kept to
a dict look-up, one call and a few local-variable updates.  Everything else —
decoding, timing, instrumentation, breakpoints — was settled when the cache entry
was filled (see :mod:`tessera.engine.fill`).  Control signals (trap, halt,
wait, stop) leave the loop through exceptions, which cost nothing until raised.

Between slices ``agent.pc`` is the address of the next instruction to execute.
Inside a slice the loop keeps the PC in a local; semantics use ``ins.address``.
"""

from __future__ import annotations

from typing import Any

from tessera.control import ControlSignal, Halt, StopRequest, Trap, WaitFor, Yield
from tessera.engine.agent import HALTED, Agent
from tessera.engine.blocks import BlockExit
from tessera.errors import ConfigError, MemoryFault, PluginError, TesseraError, UnhandledTrap

_INF = float("inf")
_RESERVED = {"name", "arch", "space", "pc", "regs", "status", "cycles", "instret", "machine"}


class CpuAgent(Agent):
    """A processor core (hart, hardware thread) executing an architecture's instructions.

    Register files are lists of ints, available both as ``agent.regs[name]`` and as
    the attribute ``agent.<name>`` (``cpu.x[ins.rd]``).  Architectures that need more
    state subclass this and create the subclass from their ``build`` function.
    """

    kind = "cpu"

    def __init__(self, name: str, arch: Any, space: Any, *, pc: int | None = None,
                 **kw: Any) -> None:
        super().__init__(name, **kw)
        self.arch = arch
        self.space = space
        self.pc = arch.reset_pc if pc is None else pc
        self.next_pc = self.pc
        self.resume_pc: int | None = None
        self.regs: dict[str, list[int]] = {}
        for rf in arch.register_files:
            if not rf.storage:
                continue
            if rf.name in _RESERVED or rf.name in self.__dict__:
                raise ConfigError(f"register file name {rf.name!r} clashes with an agent attribute")
            regs = [0] * rf.count
            self.regs[rf.name] = regs
            setattr(self, rf.name, regs)
        self._filler: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_filler"] = None
        for name in self.regs:  # aliases of regs[...] are restored from it
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name, regs in self.regs.items():
            setattr(self, name, regs)

    def prepare(self, machine: Any) -> None:
        super().prepare(machine)
        self._filler = machine.decode_filler(self.arch, self.space)

    # ------------------------------------------------------------------ execution

    def run_slice(self, limit: int, cycle_limit: float = _INF) -> int:  # noqa: C901 - to split (issue 14 §5)
        """Execute up to ``limit`` steps (instructions retired plus traps taken).

        ``self.pc``, ``self.cycles`` and ``self.instret`` are exact whenever this
        returns or raises, so a stopped run can be inspected, snapshotted or resumed.
        """
        filler = self._filler
        cache = filler.cache
        fill = filler.fill
        engine = self.machine.engine if self.machine is not None else "step"
        fast = engine != "step"
        blocks = cache.blocks
        if engine == "check":  # the same loop, each block call checked against stepping
            from tessera.engine.check import blocks_for
            blocks = blocks_for(self, filler)
        build = filler.blocks.build
        self.space.current_agent = self
        pc = self.pc
        cycles = self.cycles
        n = 0
        ins: Any = None
        while True:
            k = 0
            room = limit - n
            try:
                if fast:
                    while k < room and cycles < cycle_limit:
                        b = blocks.get(pc)
                        if b is not None and k + b.n <= room and cycles + b.guard < cycle_limit:
                            try:
                                if b.loop:  # as many whole iterations as the budgets allow
                                    budget = (room - k) // b.n
                                    if budget > b.cap:  # blocks with captures: see tessera.engine.capture
                                        budget = b.cap
                                    if cycle_limit != _INF and b.cycles:
                                        budget = min(budget, -(-(cycle_limit - cycles - b.guard) // b.cycles))
                                    pc, it = b.fn(self, int(budget))
                                    cycles += b.cycles * it
                                    k += b.n * it
                                    continue
                                pc = b.fn(self)
                            except BaseException as exc:  # commit exactly the instructions before it
                                if isinstance(exc, BlockExit):  # its own code was overwritten
                                    whole, part = divmod(exc.count, b.n)
                                    k += exc.count
                                    cycles += b.cycles * whole + b.prefix[part]
                                    pc = exc.pc
                                    continue
                                where = b.locate(exc)
                                if where is None:  # an asynchronous signal outside the block
                                    raise
                                j, it, plugin = where
                                ins = b.ins[j]
                                pc = ins.address
                                cycles += b.cycles * it + b.prefix[j]
                                k += b.n * it + j
                                if plugin is not None and not isinstance(exc, ControlSignal | TesseraError):
                                    # an observer or capture sink raised: named as the step path's guard does
                                    raise PluginError(f"observer callback raised {type(exc).__name__}: {exc} "
                                                      f"(at {ins.mnemonic})", plugin=plugin, pc=ins.address,
                                                      agent=self.name) from exc
                                if ins.observers and isinstance(exc, Halt | Yield):
                                    for ob in ins.observers:  # it retired: observers see it
                                        ob(self, ins)
                                raise
                            cycles += b.cycles
                            k += b.n
                        else:  # one step: cold code, a step-only PC, or a block too big for the budget
                            ins = cache.get(pc)
                            if ins is None:
                                ins = fill(pc)
                            elif b is None and build(pc, self) is not None:
                                continue  # just translated: run the block
                            r = ins.run(self, ins)
                            pc = ins.next if r is None else r
                            cycles += ins.cycles
                            k += 1
                else:
                    while k < room and cycles < cycle_limit:
                        ins = cache.get(pc)
                        if ins is None:
                            ins = fill(pc)
                        r = ins.run(self, ins)
                        pc = ins.next if r is None else r
                        cycles += ins.cycles
                        k += 1
                self._commit(pc, cycles, k)
                return n + k
            except Trap as trap:
                self._commit(pc, cycles, k)
                self._take_trap(trap)
            except WaitFor as w:
                self._commit(pc, cycles, k)
                self.park(w.obj, w.reason)
                return n + k
            except Yield as y:  # the instruction retired; the slice (and the turn) ends here
                self._commit(y.next_pc, cycles + ins.cycles, k + 1)
                self.yielded = True
                return n + k + 1
            except Halt as h:  # the halting instruction retires: count it and charge its cycles
                self._commit(pc, cycles + ins.cycles, k + 1)
                self.status = HALTED
                self.exit_code = h.exit_code
                return n + k + 1
            except StopRequest:
                self._commit(pc, cycles, k)
                raise
            except MemoryFault as fault:
                self._commit(pc, cycles, k)
                mapped = self.arch.memory_trap(fault) if self.arch.memory_trap is not None else None
                if mapped is None:
                    raise fault.with_context(agent=self.name, pc=pc) from None
                self._take_trap(mapped)
            except TesseraError as err:
                self._commit(pc, cycles, k)
                raise err.with_context(agent=self.name, pc=pc) from None
            except BrokenPipeError:  # the reader of our output went away: not a plugin bug
                self._commit(pc, cycles, k)
                raise
            except Exception as exc:  # a bug in semantics: name the plugin
                self._commit(pc, cycles, k)
                plugin = self.machine.plugin_of_arch if self.machine is not None else None
                ins = cache.get(pc)
                what = ins.mnemonic if ins is not None else "instruction"
                raise PluginError(f"semantics of {what} raised {type(exc).__name__}: {exc}",
                                  plugin=plugin, agent=self.name, pc=pc) from exc
            # a trap was taken: it counts as one step; continue at the handler
            n += k + 1
            self.traps += 1
            pc, cycles = self.pc, self.cycles
            if n >= limit or self.status == HALTED:
                return n

    def _take_trap(self, trap: Trap) -> None:
        """Report ``trap`` (``tessera_trap``, ``stop_on_trap``), let the architecture take it,
        then report that (``tessera_trap_taken``).

        ``self.pc`` is the trapping instruction's address; the architecture's ``take_trap``
        moves the agent to its handler.  If it declines (or has none) the run stops with
        :class:`UnhandledTrap` naming the agent, the pc and the instruction word.
        """
        if self.machine is not None:
            self.machine.notify_trap(self, trap)
        take = self.arch.take_trap
        try:
            taken = take is not None and take(self, trap)
        except Halt as h:  # the architecture stops the agent instead (e.g. a double fault)
            self.status = HALTED
            self.exit_code = h.exit_code
            return
        if taken:
            self.cycles += self.arch.timing.get("trap", 1)  # trap entry is not free
            if self.machine is not None:
                self.machine.notify_trap_taken(self, trap)
            return
        word = trap.info.get("word")
        if word is None and self._filler is not None:
            ins = self._filler.cache.get(self.pc)
            word = ins.word if ins is not None else None
        raise UnhandledTrap(f"{trap.name} (cause {trap.cause}, value {trap.tval:#x}) and no handler",
                            cause=trap.cause, agent=self.name, pc=self.pc, word=word)

    def deliver_trap(self, trap: Trap) -> None:
        """Deliver ``trap`` to this agent at an instruction boundary, from outside the engine loop.

        For what an architecture raises between instructions rather than from one: an
        interrupt, a single-step or debug event (its ``run_slice`` override, before or
        after calling the engine's).  The trap is handled exactly as the engine handles
        one an instruction raises: reported to the ``tessera_trap`` listeners (a run with
        ``stop_on_trap`` stops here with :class:`~tessera.control.StopRequest`, the trap
        not taken), taken by the architecture's ``take_trap`` (which moves the agent to
        its handler, or halts it), reported to ``tessera_trap_taken``, and counted in
        ``self.traps``.  If the architecture does not take it, this raises
        :class:`~tessera.errors.UnhandledTrap`.  ``self.pc`` must be where the agent
        resumes (the interrupted instruction); the caller counts the trap as one step of
        its slice.
        """
        self._take_trap(trap)
        self.traps += 1

    def _commit(self, pc: int, cycles: int, retired: int) -> None:
        self.pc = pc
        self.cycles = cycles
        self.instret += retired

    def step(self) -> int:
        """Execute exactly one step (for single-stepping); returns steps used (0 if parked)."""
        return self.run_slice(1)

    # ------------------------------------------------------------------ state

    def state(self) -> dict[str, Any]:
        base = super().state()
        base["pc"] = self.pc
        base["registers"] = {name: list(vals) for name, vals in self.regs.items()}
        if self.arch.dump is not None:
            base.update(self.arch.dump(self))
        return base
