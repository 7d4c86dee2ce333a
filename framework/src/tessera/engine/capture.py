"""The compiled form of the record operation: observers the fast engine inlines.

An execute-observe observer (``tessera_execute_observe``) is a Python call after
every retirement: about 25 ns before it does anything, which dwarfs the 40–50 ns a
translated instruction costs.  A *record-keeping* observer — one that only notes,
per retirement, whether one register changed and its new value — can instead be
compiled into the block.  Plugins ask for that through the public
:mod:`tessera.engine.record` (``Record(...).observer()``), which builds the observer
and, once it knows what the instruction writes, attaches a :class:`Capture` to it
as ``observer.capture``.  When the block translator can prove that the instruction
changes no register other than ``capture.register`` (:func:`static_writes`), it
emits, right after the instruction::

    value = <register file>[index]
    if value != shadow[index]:        # shadow: the sink's copy of that register file
        shadow[index] = value
        record(capture.changed)
        remember(value)
    else:
        record(capture.unchanged)

where ``record, remember, shadows = capture.sink(agent)`` is evaluated once per
call of the block (``shadow = shadows[file]``).  With no register
(``register=None``) only ``record(capture.unchanged)`` remains.  Everywhere else —
the step engine, stepped instructions, a block translated for another agent class,
an instruction whose writes are not known — the observer itself is called, and it
does exactly the same, so results never depend on the engine (the conformance
check ``engine-equivalence`` compares them).

An observer built by hand may carry a ``Capture`` too, as long
as it keeps the two rules :mod:`tessera.engine.record` keeps for its own:

* the observer computes its register from :func:`static_writes` for the agent's
  class (the same analysis the translator runs) and sets ``capture`` only for
  instructions it writes one register or none;
* ``sink`` returns the same lists the observer appends to, and may be called at
  any time; a long-running looping block calls it again at least every
  :data:`LOOP_CAP` iterations, so the sink can bound what accumulates.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from tessera.engine import inline

#: A block with captures runs at most this many iterations of its loop per call, so
#: the sink is consulted (and can write out what accumulated) regularly.
LOOP_CAP = 1024

#: ``sink(agent) -> (record, remember, shadows)``: two appenders and the per-file shadows.
Sink = Callable[[Any], tuple[Callable[[Any], Any], Callable[[Any], Any], Mapping[str, list[Any]]]]

_LITERAL = (int, str, bytes)


@attrs.frozen
class Capture:
    """What a record-keeping observer does per retirement (see the module docstring).

    ``register`` is ``(file, index)`` or ``None``; ``changed`` and ``unchanged`` are
    the tokens recorded (ints, strings or bytes: they become literals in the block);
    ``agent_class`` the class of agent ``register`` was worked out for — blocks
    translated for another class call the observer instead.
    """

    sink: Sink
    register: tuple[str, int] | None
    changed: Any
    unchanged: Any
    agent_class: type

    def signature(self) -> tuple[Any, ...]:
        """What a translation using this capture depends on (besides the sink it calls)."""
        return (self.register, type(self.changed).__name__, self.changed, type(self.unchanged).__name__,
                self.unchanged, id(self.agent_class))

    def usable(self, writes: frozenset[tuple[str, int]] | None, agent: Any) -> bool:
        """May a block translated for ``agent`` inline this capture, given the instruction's writes?"""
        if writes is None or agent is None or type(agent) is not self.agent_class:
            return False
        if not (isinstance(self.changed, _LITERAL) and isinstance(self.unchanged, _LITERAL)):
            return False
        return writes <= ({self.register} if self.register is not None else set())


def capture_of(observer: Any) -> Capture | None:
    """The observer's :class:`Capture`, if it has a well-formed one."""
    cap = getattr(observer, "capture", None)
    return cap if isinstance(cap, Capture) else None


# --------------------------------------------------------------------------- static writes

_WRITES: dict[tuple[Any, ...], tuple[frozenset[tuple[str, int]] | None, list[Any]]] = {}
_MAX_WRITES = 16384


def static_writes(ins: Any, agent: Any) -> frozenset[tuple[str, int]] | None:
    """The registers ``ins`` may write when ``agent`` (or one of its class) executes it.

    ``(file, index)`` pairs, proven from the instruction's semantic function
    specialised for this instruction exactly as the fast engine inlines it; ``None``
    when unknown (the function calls something, indexes a register file with a
    variable, cannot be inlined, or the entry carries execute-instrument callbacks
    or a breakpoint, which may do anything).  Cached process-wide per semantic
    function, operand values and agent class.
    """
    if not getattr(ins, "blockable", True):
        return None
    from tessera.engine.blocks import instruction_key, regfile_names, semantic

    fn = semantic(ins)
    arch = getattr(agent, "arch", None)
    regfiles = {rf.name for rf in getattr(arch, "register_files", ()) if rf.storage}
    names = regfile_names(regfiles, agent)
    part, held = instruction_key(ins)
    key = (part, id(type(agent)), tuple(sorted(names.items())))
    got = _WRITES.get(key)
    if got is not None:
        return got[0]
    ctx = inline.Context(inline.Binder(), names, set(), agent)
    writes: frozenset[tuple[str, int]] | None = None
    try:
        stmts = inline.specialise(fn, ins, 0, ctx, last=True)
        if stmts is not None:
            writes = inline.register_writes(stmts, ctx)
    except Exception:  # noqa: BLE001 - the analysis must never break a run: unknown
        writes = None
    if len(_WRITES) >= _MAX_WRITES:
        _WRITES.clear()
    _WRITES[key] = (writes, held + [type(agent)])  # held: no id in the key is reused
    return writes


# --------------------------------------------------------------------------- code generation


class SinkNames:
    """The locals a block binds for the sinks of its captures (one set per distinct sink)."""

    def __init__(self, binder: inline.Binder) -> None:
        self.binder = binder
        self.sinks: list[tuple[str, Any, str]] = []    # (prefix, sink, plugin)
        self._prefix: dict[tuple[int, int], str] = {}
        self.files: dict[str, set[str]] = {}

    def prefix(self, sink: Any, plugin: str) -> str:
        # a bound method is a new object each time it is looked up: key it by what it binds
        key = (id(getattr(sink, "__self__", None)), id(getattr(sink, "__func__", sink)))
        p = self._prefix.get(key)
        if p is None:
            p = self._prefix[key] = f"C{len(self.sinks)}"
            self.sinks.append((p, sink, plugin))
            self.files[p] = set()
        return p

    def prologue(self) -> list[tuple[list[ast.stmt], int]]:
        """Per sink: the statements binding its locals, and the sink's index."""
        out = []
        for n, (p, sink, _plugin) in enumerate(self.sinks):
            fn = self.binder.bind("SINK", sink)
            stmts: list[ast.stmt] = [ast.Assign(
                [ast.Tuple([ast.Name(f"{p}_rec", ast.Store()), ast.Name(f"{p}_val", ast.Store()),
                            ast.Name(f"{p}_sh", ast.Store())], ast.Store())],
                ast.Call(ast.Name(fn, ast.Load()), [ast.Name("cpu", ast.Load())], []))]
            for rf in sorted(self.files[p]):
                stmts.append(ast.Assign([ast.Name(f"{p}_{rf}", ast.Store())],
                                        ast.Subscript(ast.Name(f"{p}_sh", ast.Load()), ast.Constant(rf),
                                                      ast.Load())))
            out.append((stmts, n))
        return out


def value_name(prefix: str, k: int) -> str:
    """The local holding the captured register's value after instruction ``k``."""
    return f"c_{prefix}_{k}"


def fuse_store(stmts: list[ast.stmt], register: tuple[str, int], name: str) -> bool:
    """Let the instruction's own final store provide the captured value.

    ``R_x[5] = expr`` (or through a local alias of ``R_x``) as the last statement
    becomes ``name = expr; R_x[5] = name``, so the capture need not read the
    register back.  ``False`` (nothing changed) when the statements do not end so.
    """
    if not stmts or not isinstance(stmts[-1], ast.Assign):
        return False
    last = stmts[-1]
    if len(last.targets) != 1 or not isinstance(last.targets[0], ast.Subscript):
        return False
    target = last.targets[0]
    base, index = target.value, target.slice
    rf, wanted = register
    if not (isinstance(index, ast.Constant) and index.value == wanted and type(index.value) is int
            and isinstance(base, ast.Name)):
        return False
    aliases = {f"R_{rf}"} | {s.targets[0].id for s in stmts
                             if isinstance(s, ast.Assign) and len(s.targets) == 1
                             and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Name)
                             and s.value.id == f"R_{rf}"}
    if base.id not in aliases:
        return False
    keep = ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], last.value), last)
    store = ast.copy_location(ast.Assign([target], ast.Name(name, ast.Load())), last)
    stmts[-1:] = [keep, store]
    return True


def statements(cap: Capture, k: int, prefix: str, names: SinkNames, used: set[str], *,
               loaded: bool = False) -> list[ast.stmt]:
    """The inline form of ``cap`` after the ``k``-th instruction of a block (``loaded``:
    :func:`fuse_store` already put the register's value in :func:`value_name`)."""
    rec = ast.Name(f"{prefix}_rec", ast.Load())
    if cap.register is None:
        return [ast.Expr(ast.Call(rec, [ast.Constant(cap.unchanged)], []))]
    rf, index = cap.register
    used.add(rf)
    names.files[prefix].add(rf)
    value = value_name(prefix, k)
    shadow = ast.Subscript(ast.Name(f"{prefix}_{rf}", ast.Load()), ast.Constant(index), ast.Load())
    load: list[ast.stmt] = [] if loaded else [
        ast.Assign([ast.Name(value, ast.Store())],
                   ast.Subscript(ast.Name(f"R_{rf}", ast.Load()), ast.Constant(index), ast.Load()))]
    return load + [
        ast.If(ast.Compare(ast.Name(value, ast.Load()), [ast.NotEq()], [shadow]),
               [ast.Assign([ast.Subscript(ast.Name(f"{prefix}_{rf}", ast.Load()), ast.Constant(index),
                                          ast.Store())], ast.Name(value, ast.Load())),
                ast.Expr(ast.Call(rec, [ast.Constant(cap.changed)], [])),
                ast.Expr(ast.Call(ast.Name(f"{prefix}_val", ast.Load()), [ast.Name(value, ast.Load())], []))],
               [ast.Expr(ast.Call(rec, [ast.Constant(cap.unchanged)], []))]),
    ]
