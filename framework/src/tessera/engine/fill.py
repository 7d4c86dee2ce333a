"""Filling the decode cache: fetch, decode (plugins first), time, weave, cache.

This runs once per address (until the code there is written), so everything that
would be costly per instruction happens here instead: the decode hook family is
consulted, the timing model prices the instruction, execute-hook callbacks and
breakpoints are woven into ``ins.run``.  An instruction nobody instruments keeps
its bare semantic function, which is why an unsubscribed hook family costs nothing
per instruction.

The hook implementations arrive resolved (:class:`~tessera.types.HookCall` lists from
:meth:`Machine.hook_calls <tessera.machine.Machine.hook_calls>`): the engine calls
plugins but does not know the plugin host, which sits above it.
"""

from __future__ import annotations

from typing import Any

from tessera.control import ControlSignal, Halt, StopRequest, Yield
from tessera.engine.blocks import BlockBuilder
from tessera.engine.decodecache import DecodeCache
from tessera.errors import ConfigError, PluginError, TesseraError
from tessera.isa.instruction import Instruction, seal, unseal
from tessera.isa.registry import SemanticRef, resolve
from tessera.types import HookCall


def _guard(cb: Any, plugin: str, where: str) -> Any:
    """Name the plugin when one of its callbacks raises (signals pass through)."""

    def guarded(agent: Any, ins: Instruction) -> Any:
        try:
            return cb(agent, ins)
        except (ControlSignal, TesseraError):
            raise
        except Exception as exc:
            raise _failed(exc, where, plugin, agent, ins) from exc

    return guarded


def _failed(exc: Exception, where: str, plugin: str, agent: Any, ins: Instruction) -> PluginError:
    """The error a plugin's callback raising ``exc`` becomes."""
    return PluginError(f"{where} callback raised {type(exc).__name__}: {exc} "
                       f"(at {ins.mnemonic})", plugin=plugin, pc=ins.address,
                       agent=getattr(agent, "name", None))


def weave(semantics: Any, befores: list[Any], afters: list[Any]) -> Any:
    """Wrap ``semantics`` with before/after callbacks (see ``tessera_execute_instrument``)."""

    def run(agent: Any, ins: Instruction) -> Any:
        for before in befores:
            redirect = before(agent, ins)
            if redirect is not None:
                agent.next_pc = redirect
                return redirect
        r = semantics(agent, ins)
        if afters:
            agent.next_pc = ins.next if r is None else r
            for after in afters:
                after(agent, ins)
            return agent.next_pc
        return r

    return run


def observe(inner: Any, observers: tuple[Any, ...], raw: tuple[tuple[Any, str], ...] = ()) -> Any:
    """Call ``observers`` after ``inner`` retires the instruction (see ``tessera_execute_observe``).

    An instruction that halts its agent or ends its slice (``Halt``, ``Yield``) has
    retired too, so observers see it; one that traps has not.  With one observer whose
    unguarded callable and plugin are given (``raw``) its guard is made here, inline:
    one call fewer for every retirement the step path runs (a tracer's whole cold code).
    """
    if len(observers) == 1 and len(raw) == 1:
        guarded = observers[0]
        ((ob, plugin),) = raw

        def run_one(agent: Any, ins: Instruction) -> Any:
            try:
                r = inner(agent, ins)
            except (Halt, Yield):
                guarded(agent, ins)
                raise
            try:
                ob(agent, ins)
            except (ControlSignal, TesseraError):
                raise
            except Exception as exc:
                raise _failed(exc, "observer", plugin, agent, ins) from exc
            return r

        return run_one

    def run(agent: Any, ins: Instruction) -> Any:
        try:
            r = inner(agent, ins)
        except (Halt, Yield):
            for ob in observers:
                ob(agent, ins)
            raise
        for ob in observers:
            ob(agent, ins)
        return r

    return run


def breakpoint_wrapper(inner: Any) -> Any:
    """Stop before the instruction runs, unless the agent is resuming from exactly here."""

    def run(agent: Any, ins: Instruction) -> Any:
        if agent.resume_pc == ins.address:
            agent.resume_pc = None
            return inner(agent, ins)
        raise StopRequest("breakpoint", ins.address)

    return run


def _no_semantics(agent: Any, ins: Instruction) -> Any:
    raise ConfigError(f"instruction {ins.mnemonic} has no semantic function", pc=ins.address)


class DecodeFiller:
    """Fills one decode cache (one architecture in one address space) for a machine."""

    def __init__(self, machine: Any, arch: Any, space: Any) -> None:
        self.machine = machine
        self.arch = arch
        self.space = space
        self.size = arch.word_bytes
        self.decoder = machine.decoder(arch)
        self.cache = space.decode_cache(arch.name, DecodeCache)
        self.decode_hooks: list[HookCall] = machine.hook_calls("tessera_decode")
        self.instrumenters: list[HookCall] = machine.hook_calls("tessera_execute_instrument")
        self.observe_hooks: list[HookCall] = machine.hook_calls("tessera_execute_observe")
        self.timing = machine.timing
        self.breakpoints = machine.breakpoints
        regfiles = {rf.name for rf in arch.register_files if rf.storage}
        self.blocks = BlockBuilder(self.cache, regfiles)
        self._variants: dict[Any, tuple[Any, ...]] = {}  # row → its declared variants, resolved

    def decode(self, word: int, pc: int) -> Instruction:
        for impl in self.decode_hooks:
            try:
                ins = impl(machine=self.machine, arch=self.arch, word=word, address=pc)
            except (ControlSignal, TesseraError):
                raise
            except Exception as exc:
                raise PluginError(f"tessera_decode raised {type(exc).__name__}: {exc}",
                                  plugin=impl.plugin_name, pc=pc, word=word) from exc
            if ins is not None:
                return ins
        return self.decoder.decode(word, pc)

    def peek(self, address: int) -> int | None:
        """The instruction word at ``address``, or ``None`` if it cannot be fetched."""
        try:
            return self.space.fetch(address, self.size)[0]
        except TesseraError:
            return None

    def _ask(self, impl: HookCall, hook: str, ins: Instruction, pc: int, word: int) -> Any:
        """Call an execute-family hook for ``ins``; a raising plugin is named."""
        try:
            return impl(machine=self.machine, arch=self.arch, ins=ins)
        except Exception as exc:
            raise PluginError(f"{hook} raised {type(exc).__name__}: {exc}",
                              plugin=impl.plugin_name, pc=pc, word=word) from exc

    def _check_swap(self, ins: Instruction, pc: int, word: int) -> None:
        """``refine`` changed the function: it must be one the row declares (Encoding.variants)."""
        enc = ins.encoding
        allowed = self._variants.get(enc)
        if allowed is None:
            allowed = self._variants[enc] = tuple(resolve(fn) for _, fn in enc.variants)
        if not any(ins.run is fn for fn in allowed):
            name = getattr(ins.run, "__qualname__", None) or repr(ins.run)
            raise PluginError(f"{self.arch.name}: refine made {enc.mnemonic} run {name}, which its row "
                              "does not declare; list it in the row's variants and install it with "
                              "tessera.isa.swap", plugin=self.arch.name, pc=pc, word=word)

    def instrument(self, ins: Instruction, run: Any) -> Any:
        """``run`` (``ins``'s semantic function) wrapped with the before/after callbacks the
        ``tessera_execute_instrument`` hooks want for ``ins``, or ``run`` itself when none do.

        The engine calls it for every instruction it fills; an architecture whose agents
        execute instructions that are not fetched from memory (a coprocessor thread fed
        by its host core's pushes) calls it once per decoded instruction, so tools see
        those retire like any other."""
        befores, afters = [], []
        for impl in self.instrumenters:
            got = self._ask(impl, "tessera_execute_instrument", ins, ins.address, ins.word)
            if got is None:
                continue
            if not (isinstance(got, tuple | list) and len(got) == 2):
                raise PluginError(f"tessera_execute_instrument returned {type(got).__name__}; "
                                  "it must return None or a (before, after) pair",
                                  plugin=impl.plugin_name, pc=ins.address, word=ins.word)
            before, after = got
            if before is not None:
                befores.append(_guard(before, impl.plugin_name, "before"))
            if after is not None:
                afters.append(_guard(after, impl.plugin_name, "after"))
        return weave(run, befores, afters) if befores or afters else run

    def fill(self, pc: int) -> Instruction:
        word, region = self.space.fetch(pc, self.size)
        ins = unseal(self.decode(word, pc))  # a decode hook may hand back an entry filled before
        run = ins.run
        if type(run) is SemanticRef:  # the row names its function: bind it once, here
            ins.run = run = run.resolve()
        if self.arch.refine is not None:
            self.arch.refine(ins, self.peek)
            if ins.run is not run and ins.run is not None:
                self._check_swap(ins, pc, word)
        try:
            ins.cycles = int(self.timing.cycles(ins))
        except Exception as exc:
            raise PluginError(f"timing model failed to price {ins.mnemonic}: {type(exc).__name__}: {exc}",
                              plugin=self.machine.timing_plugin, pc=pc, word=word) from exc
        run = ins.run or _no_semantics
        ins.semantic = run  # what the block filler inlines (tessera.engine.blocks)
        ins.blockable = True  # False when callbacks may redirect, or a breakpoint stops here
        observers: list[Any] = []
        raw: list[tuple[Any, str]] = []
        for impl in self.observe_hooks:
            got = self._ask(impl, "tessera_execute_observe", ins, pc, word)
            if got is None:
                continue
            if not callable(got):
                raise PluginError(f"tessera_execute_observe returned {type(got).__name__}; "
                                  "it must return None or a callable", plugin=impl.plugin_name,
                                  pc=pc, word=word)
            observers.append(_guard(got, impl.plugin_name, "observer"))
            raw.append((got, impl.plugin_name))
        ins.observers = tuple(observers)
        ins.observer_calls = tuple(raw)  # unguarded: blocks call these (exceptions mapped by line)
        if self.instrumenters:
            woven = self.instrument(ins, run)
            if woven is not run:
                run = woven
                ins.blockable = False
        if observers:
            run = observe(run, ins.observers, ins.observer_calls)
        if self.breakpoints and pc in self.breakpoints:
            run = breakpoint_wrapper(run)
            ins.blockable = False
        ins.run = ins.installed = run
        seal(ins)  # read-only from here on: blocks fold its fields as constants
        if region.cacheable and pc + ins.span <= region.end:
            self.cache.add(pc, ins.span, ins)
            self.space.mark_code(region, pc, ins.span)
        return ins
