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
from tessera.engine.blocks import EXIT_BITS, EXIT_MASK, NEVER, BlockExit
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
    #: does the agent fetch its instructions from memory at its pc, each one's successor
    #: where the previous one went?  False for an agent *fed* instructions by another
    #: (a Tensix thread of a tile, fed by its RISC-V core's pushes): its instructions'
    #: addresses say where each was pushed from, and no control flow links them — tools
    #: and checks that follow the pc from one instruction to the next skip such agents
    fetches = True
    #: is ``pc`` a *block entry* — reached by a control transfer, a block's end, a trap or
    #: a wait — rather than by falling through mid-block?  The fast engine counts visits
    #: towards translating a block only at entries (see ``_block_loop``)
    at_entry = True

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
    #
    # A slice is one or more *loops*, each running from ``self.pc`` until its budget
    # ends or an exception leaves it: the step loop (one decode-cache entry at a time)
    # or the block loop (translated blocks, stepping where there is no block).  Each
    # loop keeps the PC, the cycle count and the steps taken in locals — attribute
    # writes per instruction would cost more than the instruction — and commits them
    # to the agent when it ends: normally at its end, or in :meth:`_settle` when an
    # exception leaves it.  A trap taken there counts as a step and the slice goes on
    # with a new loop at the handler.

    def run_slice(self, limit: int, cycle_limit: float = _INF) -> int:
        """Execute up to ``limit`` steps (instructions retired plus traps taken).

        ``self.pc``, ``self.cycles`` and ``self.instret`` are exact whenever this
        returns or raises, so a stopped run can be inspected, snapshotted or resumed.
        """
        machine = self.machine
        engine = machine.engine if machine is not None else "step"
        if engine == "step":
            blocks = None
        elif engine == "fast":
            blocks = self._filler.cache.blocks
        else:
            blocks = self._checked_blocks()
        self.space.current_agent = self
        n = 0
        while True:
            if blocks is None:
                k, trapped = self._step_loop(limit - n, cycle_limit)
            else:
                k, trapped = self._block_loop(limit - n, cycle_limit, blocks)
                if trapped:  # a trap handler's first instruction is a block entry
                    self.at_entry = True
            n += k
            if not trapped or n >= limit or self.status == HALTED:
                return n

    def _checked_blocks(self) -> Any:
        """The block table of ``--engine check``: a view of the decode cache's blocks whose
        calls are each repeated by stepping and compared (:mod:`tessera.engine.check`)."""
        from tessera.engine.check import blocks_for

        return blocks_for(self, self._filler)

    def _step_loop(self, room: int, cycle_limit: float) -> tuple[int, bool]:
        """The step engine: up to ``room`` instructions, one decode-cache entry each.

        This is the reference behaviour the fast engine must reproduce, so it is the
        plainest loop there is.  Returns ``(steps used, trap taken)``.
        """
        filler = self._filler
        cache = filler.cache
        fill = filler.fill
        pc = self.pc
        cycles = self.cycles
        k = 0
        ins: Any = None
        try:
            while k < room and cycles < cycle_limit:
                ins = cache.get(pc)
                if ins is None:
                    ins = fill(pc)
                r = ins.run(self, ins)
                pc = ins.next if r is None else r
                cycles += ins.cycles
                k += 1
        except Exception as exc:  # noqa: BLE001 - every exception is settled: commit, then act or re-raise
            return self._settle(exc, pc, cycles, k, ins)
        self._commit(pc, cycles, k)
        return k, False

    def _block_loop(self, room: int, cycle_limit: float, blocks: Any) -> tuple[int, bool]:
        """The fast engine: translated blocks where there are any, single steps elsewhere.

        A block runs only if it fits whole into the step and cycle budgets, so a
        budget ends exactly where stepping would end it; a looping block runs as
        many whole iterations as the budgets allow.  Cold code, step-only PCs and
        blocks too big for what is left are stepped (and counted towards making
        the code hot, see :mod:`tessera.engine.blocks`).  Returns ``(steps used,
        trap taken)``.
        """
        filler = self._filler
        cache = filler.cache
        fill = filler.fill
        builder = filler.blocks
        build = builder.build
        visits = builder.visits
        hot = builder.hot
        pc = self.pc
        cycles = self.cycles
        k = 0
        ins: Any = None
        entry = self.at_entry
        try:
            while k < room and cycles < cycle_limit:
                b = blocks.get(pc)
                if b is not None and k + b.n <= room and cycles + b.guard < cycle_limit:
                    entry = True
                    try:
                        if b.loop:  # as many whole iterations as the budgets allow
                            budget = (room - k) // b.n
                            if budget > b.cap:  # blocks with captures: see tessera.engine.capture
                                budget = b.cap
                            if cycle_limit != _INF and b.cycles:
                                budget = min(budget, -(-(cycle_limit - cycles - b.guard) // b.cycles))
                            pc, it = b.fn(self, int(budget))
                            if pc < 0:  # a side exit in iteration `it`: see blocks.side_exit
                                pc, j = -pc >> EXIT_BITS, -pc & EXIT_MASK
                                it -= 1
                                cycles += b.prefix[j]
                                k += j
                            cycles += b.cycles * it
                            k += b.n * it
                            continue
                        pc = b.fn(self)
                    except BaseException as exc:  # noqa: BLE001 - re-raised: commit exactly what ran before it
                        pc, cycles, k, ins, signal = self._unwind(b, exc, pc, cycles, k, ins)
                        if signal is None:
                            continue
                        raise signal  # noqa: B904 - signal is exc itself, or chained to it
                    if pc < 0:  # left at a side exit after `j` instructions (blocks.side_exit)
                        pc, j = -pc >> EXIT_BITS, -pc & EXIT_MASK
                        cycles += b.prefix[j]
                        k += j
                        continue
                    cycles += b.cycles
                    k += b.n
                else:  # one step: cold code, a step-only PC, or a block too big for the budget
                    ins = cache.get(pc)
                    if ins is None:
                        ins = fill(pc)
                    elif b is None and entry:  # count a visit here; translate once it is hot
                        seen = visits.get(pc, 0) + 1
                        if seen < hot:
                            visits[pc] = seen
                        elif build(pc, self) is not None:
                            continue  # just translated: run the block
                    r = ins.run(self, ins)
                    if r is None:
                        pc = ins.next
                        # only a step-only PC's successor is an entry: falling through from
                        # cold code or from the first steps of a block too big for the budget
                        # lands mid-block, where counting visits would translate needless blocks
                        entry = b is not None and b.n == NEVER
                    else:
                        pc = r
                        entry = True
                    cycles += ins.cycles
                    k += 1
        except Exception as exc:  # noqa: BLE001 - every exception is settled: commit, then act or re-raise
            self.at_entry = True
            return self._settle(exc, pc, cycles, k, ins)
        self._commit(pc, cycles, k)
        self.at_entry = entry
        return k, False

    def _unwind(self, b: Any, exc: BaseException, pc: int, cycles: int, k: int,
                ins: Any) -> tuple[int, int, int, Any, BaseException | None]:
        """Where a block call that raised ``exc`` stopped: ``(pc, cycles, k, ins, signal)``.

        A block runs many instructions in one call, so when it raises, the loop's
        position is that of the block's start; this moves it to the instruction that
        raised (:meth:`Block.locate <tessera.engine.blocks.Block.locate>`), so the
        commit is exactly what stepping would have committed.  ``signal`` is what the
        loop raises next: ``exc`` itself; a :class:`PluginError` (chained to it) when
        an observer or capture sink raised, named as the step path's guard names it;
        or ``None`` for :class:`BlockExit` (the block's own code was overwritten: the
        loop carries on from where it left).  Never raises, so the loop's locals are
        always updated before anything leaves it.
        """
        if isinstance(exc, BlockExit):
            whole, part = divmod(exc.count, b.n)
            return exc.pc, cycles + b.cycles * whole + b.prefix[part], k + exc.count, ins, None
        where = b.locate(exc)
        if where is None:  # an asynchronous signal outside the block
            return pc, cycles, k, ins, exc
        j, it, plugin = where
        ins = b.ins[j]
        pc = ins.address
        cycles += b.cycles * it + b.prefix[j]
        k += b.n * it + j
        if plugin is not None and not isinstance(exc, ControlSignal | TesseraError):
            error = PluginError(f"observer callback raised {type(exc).__name__}: {exc} (at {ins.mnemonic})",
                                plugin=plugin, pc=ins.address, agent=self.name)
            error.__cause__ = exc
            return pc, cycles, k, ins, error
        if ins.observers and isinstance(exc, Halt | Yield):
            try:
                for ob in ins.observers:  # it retired: observers see it
                    ob(self, ins)
            except BaseException as failed:  # noqa: BLE001 - handed to the loop, which raises it
                return pc, cycles, k, ins, failed
        return pc, cycles, k, ins, exc

    def _settle(self, exc: Exception, pc: int, cycles: int, k: int, ins: Any) -> tuple[int, bool]:
        """Commit on exception: make the agent exact for what ended a loop, then act on it.

        ``pc``, ``cycles`` and ``k`` are the loop's position before the instruction
        that raised ``exc`` (``ins``).  A halting or yielding instruction retires, so
        it is counted and charged; anything else leaves it unretired.  Then a trap is
        taken (returns ``(k + 1, True)``: one more step, and the slice continues at
        the handler), a wait parks the agent, and errors get the agent and PC as
        context; a semantic function's own bug becomes a :class:`PluginError` naming
        the plugin.  Returns ``(steps used, trap taken)`` or raises.
        """
        if isinstance(exc, Halt):  # the halting instruction retires: count it and charge its cycles
            self._commit(pc, cycles + ins.cycles, k + 1)
            self.status = HALTED
            self.exit_code = exc.exit_code
            return k + 1, False
        if isinstance(exc, Yield):  # the instruction retired; the slice (and the turn) ends here
            self._commit(exc.next_pc, cycles + ins.cycles, k + 1)
            self.yielded = True
            return k + 1, False
        self._commit(pc, cycles, k)
        if isinstance(exc, Trap):
            self._take_trap(exc)
            self.traps += 1
            return k + 1, True
        if isinstance(exc, WaitFor):
            self.park(exc.obj, exc.reason)
            return k, False
        if isinstance(exc, StopRequest | BrokenPipeError):  # BrokenPipe: our reader went away, no bug
            raise exc
        if isinstance(exc, MemoryFault):
            mapped = self.arch.memory_trap(exc) if self.arch.memory_trap is not None else None
            if mapped is None:
                raise exc.with_context(agent=self.name, pc=pc) from None
            self._take_trap(mapped)
            self.traps += 1
            return k + 1, True
        if isinstance(exc, TesseraError):
            raise exc.with_context(agent=self.name, pc=pc) from None
        plugin = self.machine.plugin_of_arch if self.machine is not None else None
        failed = self._filler.cache.get(pc)
        what = failed.mnemonic if failed is not None else "instruction"
        raise PluginError(f"semantics of {what} raised {type(exc).__name__}: {exc}",
                          plugin=plugin, agent=self.name, pc=pc) from exc

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

    def boundary_quiet(self) -> bool:
        """May this agent run instructions ahead of its turn now (a barrel run)?

        True when nothing would happen at its next instruction boundaries except
        instructions: no interrupt to take, no debug event, no gate.  The default is
        true only for agents that do not override :meth:`run_slice` (whose overrides
        handle exactly such boundary events); an architecture whose agents do
        overrides this too, saying when its boundaries are quiet
        (:mod:`tessera.machine.barrel`).
        """
        return type(self).run_slice is CpuAgent.run_slice

    # ------------------------------------------------------------------ state

    def state(self) -> dict[str, Any]:
        base = super().state()
        base["pc"] = self.pc
        base["registers"] = {name: list(vals) for name, vals in self.regs.items()}
        if self.arch.dump is not None:
            base.update(self.arch.dump(self))
        return base
