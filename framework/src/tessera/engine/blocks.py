"""The fast engine: straight-line runs of decoded instructions translated into one function.

A *block* starts at a PC and runs through consecutive decode-cache entries until an
instruction that may transfer control (its row carries a control flag,
:data:`tessera.isa.CONTROL_FLAGS`, or its semantic function can return a PC), an
instruction that must run alone (an execute-hook ``before``/``after`` callback may
redirect it, or a breakpoint sits there), an entry that is not cached yet, or
:data:`MAX_LENGTH` instructions.  :mod:`tessera.engine.inline` turns each
instruction into statements; the block is compiled once and called as
``block(agent) -> next_pc``.  The engine charges the block's instruction count and
cycles after it returns, so the budget is checked once per block — and a block runs
only when it fits the remaining step and cycle budget entirely; otherwise the
engine steps one instruction at a time, which is also how single-stepping works.

Exactness when something happens mid-block comes for free on the fast path: every
statement of the ``k``-th instruction carries line number ``FIRST_LINE + k``, so the
traceback of a trap, halt, wait or stop tells which instruction raised it, and the
engine commits exactly the instructions before it (:meth:`Block.locate`).

Blocks are built only from instructions that have run once (their decode-cache
entries exist) and only at a PC reached :data:`HOT` times, so the fast engine never
fetches or decodes ahead of execution, and cold code is not compiled for nothing.
A write to any byte of a block's code drops its entries from the decode cache, which
marks the block *stale*; a block checks that flag after every instruction that could
write memory and leaves early (:class:`BlockExit`) so the rest is fetched anew.
"""

from __future__ import annotations

import ast
import os
import sys
import time
import types
from typing import Any

from tessera.engine import capture, inline, memops, private
from tessera.isa.description import CONTROL_FLAGS
from tessera.logs import get_logger

log = get_logger("tessera.engine")  # structlog is imported only if a message is shown

MAX_LENGTH = 64
SIDE_EXITS = 3   # forward conditional branches a block goes on through (TESSERA_SUPERBLOCKS)
#: a block leaving early at a side exit (a taken branch in the middle of a superblock)
#: returns ``-(target << EXIT_BITS | j)``: the target PC and the ``j`` instructions retired
EXIT_BITS = 7
EXIT_MASK = (1 << EXIT_BITS) - 1
#: visits of a block entry before a block is compiled there (TESSERA_BLOCK_HOT).  A block
#: costs a few milliseconds to translate (tens, the first time a process meets its
#: semantic functions) and saves well under a microsecond an instruction, so only code
#: entered this often can pay for it: 16 made programs of a few hundred thousand
#: instructions slower on the fast engine than stepping
HOT = 256
FIRST_LINE = 10  # line of instruction 0; the prologue is on line 1
OBSERVER_LINE = 1_000_000  # observer i of instruction k: OBSERVER_LINE + k * MAX_OBSERVERS + i
MAX_OBSERVERS = 64
SINK_LINE = 900_000  # the prologue's call of capture sink n (see tessera.engine.capture)
NEVER = 1 << 62  # the length of a non-block: it never fits a budget, so the engine steps
MAX_CACHED = 4096  # translations kept process-wide (see BlockBuilder._key)
_CODE_CACHE: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_LITERALS = (int, bool, str, float, bytes, type(None))
_BOUND = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, tuple, frozenset)
#: per-machine wrappers of an entry: keyed through the observers' plugins instead
_PER_MACHINE = frozenset({"run", "installed", "observers", "observer_calls"})


_BRANCH = frozenset({"branch"})


class _Cut(Exception):  # a signal inside the translator, not an error
    """The branch at ``index`` of a block being translated cannot be a side exit."""

    def __init__(self, index: int) -> None:
        self.index = index


def side_exit(target: int, retired: int) -> int:
    """What a block returns when it leaves at a side exit: see :data:`EXIT_BITS`."""
    return -(target << EXIT_BITS | retired)


def side_exits(stmts: list[ast.stmt], ins: Any, k: int) -> list[ast.stmt] | None:
    """The statements of the branch ``ins`` (``k``-th of its block, specialised as if last)
    with falling through made structure and every taken return a side exit; ``None``
    when it cannot be one (a return that is not a constant PC, a backward target)."""
    targets = [n.value.value for n in inline.walk(ast.Module(body=stmts, type_ignores=[]))
               if isinstance(n, ast.Return)
               and isinstance(n.value, ast.Constant) and type(n.value.value) is int]
    returns = sum(1 for n in inline.walk(ast.Module(body=stmts, type_ignores=[])) if isinstance(n, ast.Return))
    if len(targets) != returns or any(t <= ins.address and t != ins.next for t in targets):
        return None
    result = f"t_L{k}"
    try:
        flat = inline.eliminate_returns(stmts, result)
    except inline.Reject:
        return None
    return _SideExits(result, ins.next, k + 1).rewrite(flat)


class _SideExits(ast.NodeTransformer):
    """``t = <fall-through PC or None>`` → nothing; ``t = <other PC>`` → the side exit."""

    def __init__(self, name: str, fallthrough: int, retired: int) -> None:
        self.name, self.fallthrough, self.retired = name, fallthrough, retired
        self.unknown = False

    def rewrite(self, stmts: list[ast.stmt]) -> list[ast.stmt] | None:
        module = ast.Module(body=stmts, type_ignores=[])
        self.visit(module)
        inline._fill_empty(module)
        return None if self.unknown else module.body

    def visit_Assign(self, node: ast.Assign) -> Any:
        target = node.targets[0] if len(node.targets) == 1 else None
        if not (isinstance(target, ast.Name) and target.id == self.name):
            return self.generic_visit(node)
        value = node.value
        if not isinstance(value, ast.Constant) or not (value.value is None or type(value.value) is int):
            self.unknown = True
            return node
        if value.value is None or value.value == self.fallthrough:
            return None
        return ast.copy_location(ast.Return(ast.Constant(side_exit(value.value, self.retired))), node)

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id == self.name:
            self.unknown = True
        return node


class BlockExit(Exception):
    """Raised by a block whose code was just overwritten: ``count`` instructions retired."""

    def __init__(self, count: int, pc: int) -> None:
        self.count = count
        self.pc = pc


class Block:
    """One translated run of instructions (or, with ``n == NEVER``, a PC that is stepped)."""

    __slots__ = ("start", "fn", "code", "n", "cycles", "guard", "prefix", "ins", "stale", "inlined",
                 "source", "loop", "cap", "sinks", "captured", "deps", "private")

    def __init__(self, start: int, ins: list[Any]) -> None:
        self.start = start
        self.ins = ins
        self.n = len(ins) if ins else NEVER
        cycles = [i.cycles for i in ins]
        self.prefix = [sum(cycles[:j]) for j in range(len(ins) + 1)]
        self.cycles = self.prefix[-1] if ins else 0
        #: the block may start only if ``clock + guard < cycle_limit``: exactly when stepping
        #: would execute every instruction (each starts while the clock is under the limit)
        self.guard = self.prefix[-2] if ins else 0
        self.stale = False
        self.fn: Any = None
        self.code: Any = None
        self.inlined = 0
        self.source = ""
        #: a block whose last instruction may branch back to its start loops inside its
        #: function: ``fn(agent, budget) -> (next_pc, iterations)``, at most ``budget`` times
        self.loop = False
        #: the most iterations per call (blocks with captures: their sinks are consulted per call)
        self.cap = NEVER
        #: the plugins of the capture sinks the prologue calls, in order
        self.sinks: tuple[str, ...] = ()
        #: observers inlined as captures rather than called
        self.captured = 0
        #: values outside the instructions the translation baked in (:class:`inline.Dependency`)
        self.deps: tuple[Any, ...] = ()
        #: touches only its agent's registers (:mod:`tessera.engine.private`): a barrel
        #: scheduler may run it ahead of the agent's turn (:mod:`tessera.machine.barrel`)
        self.private = False

    def locate(self, exc: BaseException) -> tuple[int, int, str | None] | None:
        """``(index, iterations, plugin)``: the instruction of this block during which
        ``exc`` was raised, how many whole iterations a looping block had completed
        before, and the plugin whose observer (or capture sink) raised it (``None``:
        the instruction itself); ``None`` when the block's code was not running."""
        tb = exc.__traceback__
        code = self.code
        while tb is not None:
            if tb.tb_frame.f_code is code:
                line = tb.tb_lineno or FIRST_LINE
                plugin = None
                if line >= OBSERVER_LINE:
                    line, observer = divmod(line - OBSERVER_LINE, MAX_OBSERVERS)
                    plugin = self.ins[max(0, min(line, len(self.ins) - 1))].observer_calls[observer][1]
                    line += FIRST_LINE
                elif line >= SINK_LINE:   # before any instruction ran
                    plugin, line = self.sinks[line - SINK_LINE], FIRST_LINE
                j = max(0, min(line - FIRST_LINE, len(self.ins) - 1))
                return j, (tb.tb_frame.f_locals.get("it", 1) - 1) if self.loop else 0, plugin
            tb = tb.tb_next
        return None  # not raised by the block's code (e.g. Ctrl-C landing just before the call)

    def __repr__(self) -> str:
        if self.n == NEVER:
            return f"<step-only {self.start:#x}>"
        return (f"<block {self.start:#x} n={self.n} inlined={self.inlined}"
                f"{f' captured={self.captured}' if self.captured else ''}{' stale' if self.stale else ''}>")


class BlockBuilder:
    """Builds and caches the blocks of one decode cache (one architecture in one address space)."""

    def __init__(self, cache: Any, regfiles: set[str]) -> None:
        self.cache = cache
        self.blocks: dict[int, Block] = cache.blocks
        self.regfiles = regfiles
        self.visits: dict[int, int] = {}
        #: blocks inline the agent's methods, so they are built for one agent class; if
        #: agents of another class share this cache, method inlining is switched off
        self.agent_class: type | None = None
        self.mixed = False
        self._namespace: dict[str, Any] = {}
        self._code: Any = None
        self._held: list[Any] = []
        #: keep each block's generated Python as ``block.source`` (debugging the translator)
        self.keep_source = bool(os.environ.get("TESSERA_BLOCK_SOURCE"))
        #: compiling costs about a millisecond a block, so only code run this often is translated
        self.hot = hot_threshold()
        #: each distinct value blocks baked in, and the blocks (by start) that baked it in:
        #: what :meth:`revalidate` checks, once per value however many blocks share it
        self._watched: dict[tuple[Any, ...], tuple[Any, dict[int, Block]]] = {}
        #: blocks translated (or taken from the process-wide code cache) and the seconds
        #: that took: what ``Machine.engine_stats`` reports
        self.translated = 0
        self.translate_seconds = 0.0
        #: side exits a block may have: it goes on through that many forward conditional
        #: branches (``TESSERA_SUPERBLOCKS``; 0: blocks end at every branch)
        self.superblocks = _env_int("TESSERA_SUPERBLOCKS", SIDE_EXITS)

    def build(self, pc: int, agent: Any = None) -> Block | None:
        """The block at ``pc``, translated now; ``None`` (step this time) when ``pc`` is not
        cached yet.  The run loop counts the visits (``visits``, ``hot``) and calls this
        once a PC is hot."""
        cache = self.cache
        if agent is not None and type(agent) is not self.agent_class:
            if self.agent_class is None:
                self.agent_class = type(agent)
            elif not self.mixed:  # rebuild everything without the first class's methods
                self.mixed = True
                for block in list(self.blocks.values()):
                    block.stale = True
                self.blocks.clear()
                cache.block_members.clear()
        first = cache.get(pc)
        if first is None:
            return None
        self.visits.pop(pc, None)
        if not first.blockable:
            return self._register(Block(pc, []), [pc])
        run = self._run_from(pc)
        block = Block(pc, run)
        t0 = time.perf_counter()
        try:
            while True:
                try:
                    self._compile(block, None if self.mixed else agent)
                    break
                except _Cut as cut:  # that branch cannot be a side exit: the block ends there
                    run = run[:cut.index + 1]
                    block = Block(pc, run)
        except Exception as exc:  # noqa: BLE001 - a translator bug: stay correct, step here
            log.warning("block translation failed; stepping instead", pc=hex(pc), error=str(exc))
            return self._register(Block(pc, []), [pc])
        finally:
            self.translated += 1
            self.translate_seconds += time.perf_counter() - t0
        return self._register(block, [i.address for i in run])

    def _run_from(self, pc: int) -> list[Any]:
        """The instructions of the block at ``pc``: a *superblock* through forward branches.

        A control transfer ends the block — except a conditional branch (control flag
        ``branch`` alone) with no observer, which becomes a *side exit* when the code
        after it is cached: the block goes on along the fall-through path and leaves
        early only when the branch is taken (``_translate`` cuts the block there instead
        if the branch turns out to be indirect or backward: a backward branch to the
        start keeps a loop inside one call).  Fewer, longer blocks mean fewer returns to
        the run loop, which costs more than most instructions.
        """
        cache = self.cache
        run: list[Any] = []
        address = pc
        exits = 0
        while len(run) < MAX_LENGTH:
            ins = cache.get(address)
            if ins is None or not ins.blockable:
                break
            run.append(ins)
            # a declared control flag ends the block; so, as a safety net, does code that
            # may return a PC without one (tessera.semantics.flag_disagreements reports it)
            control = ins.encoding.flags & CONTROL_FLAGS
            if control or inline.terminal(semantic(ins)):
                exits += 1
                if control != _BRANCH or ins.observer_calls or exits > self.superblocks:
                    break
            address = ins.next
        return run

    def _register(self, block: Block, addresses: list[int]) -> Block:
        self.blocks[block.start] = block
        members = self.cache.block_members
        for a in addresses:
            members.setdefault(a, []).append(block)
        for dep in block.deps:
            key = (dep.kind, id(dep.holder), dep.name, id(dep.value))  # the entry keeps both alive
            self._watched.setdefault(key, (dep, {}))[1][block.start] = block
        return block

    def _compile(self, block: Block, agent: Any) -> None:
        key = self._key(block, agent)
        cached = _CODE_CACHE.get(key)
        if cached is not None and not inline.unchanged(cached[8]):
            cached = None  # a global, closure variable or method it baked in has changed since
        if cached is not None:
            code, stored, name, loop, inlined, source, shape = cached[:7]
            block.deps = cached[8]
            namespace = {n: _resolve(block, kind, v) for n, kind, v in stored}
            exec(code, namespace)  # noqa: S102 - the same translation, bound to this machine's objects
            block.fn = namespace[name]
            block.code = block.fn.__code__
            block.loop, block.inlined, block.source = loop, inlined, source
            block.cap, block.sinks, block.captured, block.private = shape
            return
        self._translate(block, agent)
        if key is not None and block.fn is not None:
            observers = {id(ob): (j, idx) for j, i in enumerate(block.ins)
                         for idx, (ob, _p) in enumerate(i.observer_calls)}
            sinks = {id(cap.sink): (j, idx) for j, i in enumerate(block.ins)
                     for idx, (ob, _p) in enumerate(i.observer_calls)
                     if (cap := capture.capture_of(ob)) is not None}
            recipes: list[tuple[str, str, Any]] = []
            for n, v in self._namespace.items():
                k = next((j for j, i in enumerate(block.ins) if i is v), -1)
                if v is block:
                    recipes.append((n, "block", None))
                elif k >= 0:
                    recipes.append((n, "ins", k))
                elif id(v) in observers:  # this machine's observer of the same instruction
                    recipes.append((n, "observer", observers[id(v)]))
                elif id(v) in sinks:      # this machine's capture sink of the same observer
                    recipes.append((n, "sink", sinks[id(v)]))
                else:
                    recipes.append((n, "value", v))
            if len(_CODE_CACHE) >= MAX_CACHED:
                _CODE_CACHE.clear()
            # the entry keeps alive every object whose id is in the key, so no id is reused
            _CODE_CACHE[key] = (self._code, recipes, block.fn.__name__, block.loop, block.inlined,
                                block.source, (block.cap, block.sinks, block.captured, block.private),
                                self._held,
                                block.deps)

    def _key(self, block: Block, agent: Any) -> tuple[Any, ...]:
        """What the translation of ``block`` depends on, for the process-wide code cache.

        Literal operand values, and the identity of every object the translation binds
        by identity (semantic functions, bound helpers); plus the agent class and the
        register-file names, and each observer's plugin and capture.  Machines running
        the same code at the same addresses — tests, benchmarks, parameter sweeps —
        translate it once.
        """
        held: list[Any] = [type(agent)]
        parts: list[Any] = [block.start, id(type(agent)), self.mixed, self.keep_source,
                            tuple(sorted(regfile_names(self.regfiles, agent).items()))]
        for ins in block.ins:
            part, more = instruction_key(ins)
            held.extend(more)
            observers = []
            for ob, plugin in ins.observer_calls:
                cap = capture.capture_of(ob)
                if cap is not None:
                    held.append(cap.agent_class)
                observers.append((plugin, cap.signature() if cap is not None else None))
            parts.append((part, tuple(observers)))
        self._held = held
        return tuple(parts)

    def _translate(self, block: Block, agent: Any) -> None:
        binder = inline.Binder()
        used: set[str] = set()
        ctx = inline.Context(binder, regfile_names(self.regfiles, agent), used, agent)
        body: list[ast.stmt] = []
        last = len(block.ins) - 1
        block_name = binder.bind("B", block)
        exit_name = binder.bind("BlockExit", BlockExit)
        sinks = capture.SinkNames(binder)
        placer = _Placer(block.start)  # every statement of the body goes through it
        for k, ins in enumerate(block.ins):
            fn = semantic(ins)
            side = k != last and (bool(ins.encoding.flags & CONTROL_FLAGS) or inline.terminal(fn))
            stmts = inline.specialise(fn, ins, k, ctx, last=k == last or side)
            if side:  # a branch in the middle of a superblock (see _run_from)
                stmts = side_exits(stmts, ins, k) if stmts is not None else None
                if stmts is None:
                    raise _Cut(k)
            # loads and stores of plain RAM inline, testing for stale code only where they may
            # write (not when observers follow the instruction: the test comes after them)
            setattr(ctx, memops.STALE_EXIT, None if k == last or ins.observer_calls
                    else (block_name, exit_name, k + 1, ins.next))
            stmts = memops.rewrite(stmts, ctx, fn)
            writes = None
            if stmts is None:
                stmts = self._call(fn, ins, k, binder, last=k == last)
            else:
                block.inlined += 1
                if agent is not None and any(capture.capture_of(ob) for ob, _p in ins.observer_calls):
                    # the same analysis the observer's capture was made from (cached)
                    writes = capture.static_writes(ins, agent)
            writing = placer.place(stmts, FIRST_LINE + k)  # and inline.may_write(stmts)
            after: list[ast.stmt] = []
            fused = False
            for idx, (ob, plugin) in enumerate(ins.observer_calls):
                cap = capture.capture_of(ob)
                if cap is not None and cap.usable(writes, None if self.mixed else agent):
                    prefix = sinks.prefix(cap.sink, plugin)
                    loaded = (not fused and cap.register is not None
                              and capture.fuse_store(stmts, cap.register, capture.value_name(prefix, k)))
                    fused = fused or loaded
                    got = capture.statements(cap, k, prefix, sinks, used, loaded=loaded)
                    block.captured += 1
                else:  # called; it could write memory, like any call
                    got = [ast.Expr(ast.Call(ast.Name(binder.bind("O", ob), ast.Load()),
                                             [ast.Name("cpu", ast.Load()),
                                              ast.Name(binder.bind("I", ins), ast.Load())], []))]
                    writing = True
                placer.place(got, OBSERVER_LINE + k * MAX_OBSERVERS + idx)  # a raising observer is named
                after.extend(got)
            if after:
                if k == last and stmts and isinstance(stmts[-1], ast.Return):
                    stmts = _observe_before_returns(stmts, after)
                else:
                    stmts.extend(after)
            if k != last and writing:
                check = ast.If(
                    test=ast.Attribute(ast.Name(block_name, ast.Load()), "stale", ast.Load()),
                    body=[ast.Raise(ast.Call(ast.Name(exit_name, ast.Load()),
                                             [ast.Constant(k + 1), ast.Constant(ins.next)], []), None)],
                    orelse=[])
                placer.place([check], FIRST_LINE + k)
                stmts.append(check)
            body.extend(stmts)
        block.private = private.is_private(body, None if self.mixed else agent)
        loop = placer.loops()  # _loops_to(body, block.start), found while placing
        if loop:
            body = _make_loop(body, block.start, block.n)
            block.loop = True
        prologue: list[ast.stmt] = [
            ast.Assign([ast.Name(f"R_{rf}", ast.Store())],
                       ast.Attribute(ast.Name("cpu", ast.Load()), rf, ast.Load()))
            for rf in sorted(used)]
        prologue.extend(memops.prologue(ctx))  # the RAM window, if an access was made inline
        for stmt in prologue:
            _place(stmt, 1)
        for stmts, n in sinks.prologue():
            for stmt in stmts:
                _place(stmt, SINK_LINE + n)
            prologue.extend(stmts)
        if sinks.sinks:
            block.sinks = tuple(plugin for _p, _sink, plugin in sinks.sinks)
            block.cap = capture.LOOP_CAP
        fn_def = ast.FunctionDef(
            name=f"block_{block.start:x}",
            args=ast.arguments(posonlyargs=[], args=[ast.arg("cpu")] + ([ast.arg("budget")] if loop else []),
                               kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=prologue + body, decorator_list=[], returns=None,
            **({"type_params": []} if sys.version_info >= (3, 12) else {}))  # type: ignore[arg-type]
        _place(fn_def, 1, shallow=True)
        _place(fn_def.args, 1)
        module = _fix_locations(ast.Module(body=[fn_def], type_ignores=[]))
        if self.keep_source:
            block.source = ast.unparse(module)
        namespace = binder.namespace
        self._namespace = dict(namespace)
        try:
            code = self._code = compile(module, f"<tessera block {block.start:#x}>", "exec")
            exec(code, namespace)  # noqa: S102 - the same translation, bound to this machine's objects
        except Exception as exc:  # a translator bug: stay correct, step here
            raise RuntimeError(f"block at {block.start:#x} failed to compile: {type(exc).__name__}: {exc}") \
                from exc
        block.fn = namespace[fn_def.name]
        block.code = block.fn.__code__
        unique = {(d.kind, id(d.holder), d.name): d for d in ctx.deps}
        block.deps = tuple(unique.values())

    def revalidate(self) -> int:
        """Drop the blocks whose baked-in globals, closure variables or methods changed.

        Called when a run starts (:meth:`tessera.machine.Machine.run`): a value changed
        between two runs of one machine is seen by the next run, as stepping sees it.
        Each distinct value is checked once (``_watched``, filled by :meth:`_register`),
        so a run costs the few globals the blocks share, not a walk over every block:
        a debugger running one step at a time pays that at every step.
        Returns how many blocks were dropped (they are translated again when hot)."""
        changed = [key for key, (dep, _blocks) in self._watched.items() if not dep.holds()]
        found: dict[int, Block] = {}
        for key in changed:
            for block in self._watched.pop(key)[1].values():
                if self.blocks.get(block.start) is block:  # replaced or dropped ones are gone already
                    found[id(block)] = block
        stale = list(found.values())
        members = self.cache.block_members
        for block in stale:
            block.stale = True
            if self.blocks.get(block.start) is block:
                del self.blocks[block.start]
            for ins in block.ins:
                kept = [b for b in members.get(ins.address, ()) if b is not block]
                if kept:
                    members[ins.address] = kept
                else:
                    members.pop(ins.address, None)
        return len(stale)

    @staticmethod
    def _call(fn: Any, ins: Any, k: int, binder: inline.Binder, *, last: bool) -> list[ast.stmt]:
        """Statements calling ``fn(cpu, ins)`` for an instruction that is not inlined.

        ``fn`` is bound as a constant of the block: a sealed instruction's function
        never changes (rows are bound before the entry is sealed, see ``fill``).
        """
        insname = binder.bind("I", ins)
        target = ast.Name(binder.bind("S", fn), ast.Load())
        call = ast.Call(target, [ast.Name("cpu", ast.Load()), ast.Name(insname, ast.Load())], [])
        if not last:
            return [ast.Expr(call)]
        r = f"r_L{k}"
        return [ast.Assign([ast.Name(r, ast.Store())], call),
                ast.Return(ast.IfExp(ast.Compare(ast.Name(r, ast.Load()), [ast.Is()], [ast.Constant(None)]),
                                     ast.Constant(ins.next), ast.Name(r, ast.Load())))]


def _resolve(block: Block, kind: str, value: Any) -> Any:
    """A namespace entry of a cached translation, for this block's machine."""
    if kind == "block":
        return block
    if kind == "ins":
        return block.ins[value]
    if kind == "observer":
        j, idx = value
        return block.ins[j].observer_calls[idx][0]
    if kind == "sink":
        j, idx = value
        return block.ins[j].observer_calls[idx][0].capture.sink
    return value


def semantic(ins: Any) -> Any:
    """What a block runs for ``ins``: its semantic function — or, if the semantics rebound
    ``ins.run`` since the fill (a lazily resolved function), the function it chose."""
    run = ins.run
    return ins.semantic if run is ins.installed else run



def regfile_names(regfiles: set[str], agent: Any) -> dict[str, str]:
    """Agent attributes that are register files: their names, and aliases of the same list."""
    names = {rf: rf for rf in regfiles}
    regs = getattr(agent, "regs", None)
    if agent is not None and isinstance(regs, dict):
        by_id = {id(v): k for k, v in regs.items() if k in regfiles}
        for attr, value in vars(agent).items():
            if isinstance(value, list) and id(value) in by_id:
                names.setdefault(attr, by_id[id(value)])
    return names


def instruction_key(ins: Any) -> tuple[tuple[Any, ...], list[Any]]:
    """``(key, held)``: what translating ``ins`` depends on, and the objects whose ids are in it.

    Literal operand values and the identity of every object a translation binds by
    identity (the semantic function, bound helpers).  Whoever stores the key keeps
    ``held`` alive with it, so no id in it can be reused.
    """
    fn = semantic(ins)
    held: list[Any] = [fn]
    items: list[Any] = []
    for k, v in ins.__dict__.items():
        if k in _PER_MACHINE:
            continue
        if isinstance(v, _LITERALS):
            items.append((k, type(v).__name__, v))
        elif isinstance(v, _BOUND):
            held.append(v)
            items.append((k, id(v)))
    return (id(fn), type(ins).__name__, tuple(sorted(items, key=lambda t: t[0]))), held


def _loops_to(body: list[ast.stmt], start: int) -> bool:
    """Does the block return its own start address (a loop), with no return inside a loop?

    The definition :class:`_Placer` computes while it places the statements (one walk
    fewer per block); kept as the reference it is tested against."""
    found = False
    for n in inline.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(n, ast.For | ast.While | ast.AsyncFor):
            if any(isinstance(m, ast.Return | ast.Continue | ast.Break) for m in inline.walk(n)):
                return False
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Constant) and n.value.value == start:
            found = True
    return found


class _LoopReturns(ast.NodeTransformer):
    """``return pc`` → ``return (pc, it)``, continuing first when ``pc`` is the block's start
    and budget remains; ``BlockExit(count, pc)`` adds the whole iterations before it."""

    def __init__(self, start: int, n: int) -> None:
        self.start, self.n = start, n

    def visit_Return(self, node: ast.Return) -> Any:
        it = ast.Name("it", ast.Load())
        more = ast.Compare(it, [ast.Lt()], [ast.Name("budget", ast.Load())])
        value = node.value
        if isinstance(value, ast.Constant):
            out: list[ast.stmt] = []
            if value.value == self.start:
                out.append(ast.If(more, [ast.Continue()], []))
            out.append(ast.Return(ast.Tuple([value, it], ast.Load())))
            return [ast.copy_location(s, node) for s in out]
        assert value is not None
        rv = ast.Name("r_loop", ast.Load())
        again = ast.BoolOp(ast.And(), [ast.Compare(rv, [ast.Eq()], [ast.Constant(self.start)]), more])
        return [ast.copy_location(s, node) for s in (
            ast.Assign([ast.Name("r_loop", ast.Store())], value),
            ast.If(again, [ast.Continue()], []),
            ast.Return(ast.Tuple([rv, it], ast.Load())))]

    def visit_Raise(self, node: ast.Raise) -> Any:
        exc = node.exc
        if (isinstance(exc, ast.Call) and exc.args and isinstance(exc.args[0], ast.Constant)
                and isinstance(exc.func, ast.Name) and exc.func.id.startswith("BlockExit")):
            whole = ast.BinOp(ast.BinOp(ast.Name("it", ast.Load()), ast.Sub(), ast.Constant(1)), ast.Mult(),
                              ast.Constant(self.n))
            exc.args[0] = ast.BinOp(whole, ast.Add(), exc.args[0])
        return node


def _rewrite_statements(stmts: list[ast.stmt], rewrite: _LoopReturns) -> list[ast.stmt]:
    """``rewrite.visit(ast.Module(stmts)).body``, visiting statements only: a return or
    raise is a statement, never inside an expression, so the expressions
    :class:`ast.NodeTransformer` would also walk through can be skipped.  ``stmts`` is
    rewritten in place, as the transformer does."""
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ast.Return):
            out.extend(rewrite.visit_Return(s))
        elif isinstance(s, ast.Raise):
            out.append(rewrite.visit_Raise(s))
        else:
            _rewrite_inside(s, rewrite)
            out.append(s)
    stmts[:] = out
    return stmts


def _rewrite_inside(node: ast.AST, rewrite: _LoopReturns) -> None:
    """:func:`_rewrite_statements` on the statement lists inside ``node`` (``if`` and loop bodies,
    ``except`` clauses ...)."""
    for field in node._fields:
        v = getattr(node, field, None)
        if type(v) is list and v:
            if isinstance(v[0], ast.stmt):
                _rewrite_statements(v, rewrite)
            else:
                for item in v:
                    if isinstance(item, ast.AST) and not isinstance(item, ast.expr):
                        _rewrite_inside(item, rewrite)


def _make_loop(body: list[ast.stmt], start: int, n: int) -> list[ast.stmt]:
    """Run the block body repeatedly while it branches back to its start and budget remains.

    Every ``return pc`` becomes ``return (pc, it)``; a return of the start address
    first continues the loop if fewer than ``budget`` iterations ran.  A block exit
    after a code write counts the whole iterations before it.
    """
    rewritten = _rewrite_statements(body, _LoopReturns(start, n))
    first_line = rewritten[0].lineno if rewritten else FIRST_LINE
    bump = ast.AugAssign(ast.Name("it", ast.Store()), ast.Add(), ast.Constant(1))
    init = ast.Assign([ast.Name("it", ast.Store())], ast.Constant(0))
    loop = ast.While(ast.Constant(True), [bump] + rewritten, [])
    for node in (bump, init):
        _place(node, first_line)
    _place(loop, first_line, shallow=True)
    return [init, loop]


def _observe_before_returns(stmts: list[ast.stmt], after: list[ast.stmt]) -> list[ast.stmt]:
    """Put the observers' statements ``after`` before every ``return`` of the block's last instruction."""
    module = _ObserveFirst(after).visit(ast.Module(body=stmts, type_ignores=[]))
    return list(module.body)


class _ObserveFirst(ast.NodeTransformer):
    """``return v`` → evaluate ``v``, run the observers' statements, return it."""

    def __init__(self, after: list[ast.stmt]) -> None:
        self.after = after

    def visit_Return(self, node: ast.Return) -> Any:
        observe = inline.clone(self.after)  # each copy keeps its observer's line
        if node.value is None or isinstance(node.value, ast.Constant):
            return [*observe, node]
        keep = ast.copy_location(ast.Assign([ast.Name("r_obs", ast.Store())], node.value), node)
        back = ast.copy_location(ast.Return(ast.Name("r_obs", ast.Load())), node)
        for n in (keep, back):
            _place(n, node.lineno)
        return [keep, *observe, back]


def _place(node: ast.AST, line: int, *, shallow: bool = False) -> None:
    """Give ``node`` (and its children) line ``line``: the line says which instruction raised."""
    for n in ([node] if shallow else inline.walk(node)):
        if "lineno" in n._attributes:
            d = n.__dict__
            d["lineno"] = d["end_lineno"] = line
            d["col_offset"] = 0
            d["end_col_offset"] = 1


_LOOPS = (ast.For, ast.While, ast.AsyncFor)
_ESCAPES = (ast.Return, ast.Continue, ast.Break)


class _Placer:
    """Places a block's statements on their lines (:func:`_place`), and in the same pass
    notes what :func:`inline.may_write` and :func:`_loops_to` would find in them.

    Every statement of the block's body passes through :meth:`place` before the body
    is complete (observers' statements copied before a ``return`` are copies of placed
    ones), so :meth:`loops` is :func:`_loops_to` of the body without another walk.
    """

    __slots__ = ("start", "returns_start", "escapes")

    def __init__(self, start: int) -> None:
        self.start = start
        self.returns_start = False  # a ``return <start>``
        self.escapes = False        # a loop with a return, continue or break inside

    def place(self, stmts: list[ast.stmt], line: int) -> bool:
        """Put ``stmts`` on ``line``; could they write memory (``inline.may_write``)?"""
        calls = False
        pure = inline.PURE_CALLS
        raised: set[int] = set()  # calls building a raised exception: the block leaves anyway
        for stmt in stmts:
            for n in inline.walk(stmt):  # breadth first: a raise before the calls in it
                if n._attributes:  # all four position attributes, or none
                    d = n.__dict__
                    d["lineno"] = d["end_lineno"] = line
                    d["col_offset"] = 0
                    d["end_col_offset"] = 1
                    if isinstance(n, ast.Call):
                        f = n.func
                        if not ((isinstance(f, ast.Name) and f.id in pure) or id(n) in raised
                                or memops.is_guarded(n)):  # memops tests for stale code itself
                            calls = True
                    elif isinstance(n, ast.Raise):
                        if n.exc is not None:
                            raised.update(id(c) for c in inline.walk(n.exc) if isinstance(c, ast.Call))
                    elif isinstance(n, ast.Return):
                        if isinstance(n.value, ast.Constant) and n.value.value == self.start:
                            self.returns_start = True
                    elif isinstance(n, _LOOPS):
                        if any(isinstance(m, _ESCAPES) for m in inline.walk(n)):
                            self.escapes = True
        return calls

    def loops(self) -> bool:
        """Does the block return its own start address, with no return inside a loop?"""
        return self.returns_start and not self.escapes


def _fix_locations(root: ast.Module) -> ast.Module:
    """:func:`ast.fix_missing_locations`, with the same result, in one pass without generators:
    a node without a position takes its parent's (most have theirs from :func:`_place`)."""
    stack: list[tuple[ast.AST, int, int, int, int]] = [(root, 1, 0, 1, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, lineno, col, end_lineno, end_col = pop()
        d = node.__dict__
        if node._attributes:
            attributes = node._attributes
            if "lineno" in attributes:
                if "lineno" in d:
                    lineno = d["lineno"]
                else:
                    d["lineno"] = lineno
            if "end_lineno" in attributes:
                if d.get("end_lineno") is None:
                    d["end_lineno"] = end_lineno
                else:
                    end_lineno = d["end_lineno"]
            if "col_offset" in attributes:
                if "col_offset" in d:
                    col = d["col_offset"]
                else:
                    d["col_offset"] = col
            if "end_col_offset" in attributes:
                if d.get("end_col_offset") is None:
                    d["end_col_offset"] = end_col
                else:
                    end_col = d["end_col_offset"]
        for field in node._fields:
            v = d.get(field)
            if v is None:
                continue
            if type(v) is list:
                for item in v:
                    if type(item) not in _BARE and isinstance(item, ast.AST):
                        push((item, lineno, col, end_lineno, end_col))
            elif type(v) not in _BARE and isinstance(v, ast.AST):
                push((v, lineno, col, end_lineno, end_col))
    return root


#: node classes with neither fields nor positions (``Load``, ``Add`` ...): nothing to fix in them
_BARE = frozenset(c for c in vars(ast).values()
                  if isinstance(c, type) and issubclass(c, ast.AST) and not c._fields and not c._attributes)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        return max(0, int(raw)) if raw else default
    except ValueError:
        return default


def hot_threshold() -> int:
    """Visits of a PC before a block is compiled there: ``TESSERA_BLOCK_HOT``, else :data:`HOT`."""
    raw = os.environ.get("TESSERA_BLOCK_HOT", "").strip()
    try:
        return max(1, int(raw)) if raw else HOT
    except ValueError:
        return HOT
