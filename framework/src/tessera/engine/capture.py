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

Memory captures.  A request with a journal (``Record(..., journal=, accessed=)``)
records loads and stores too.  For an instruction whose only call is one memory
access made on every path on which it retires (:func:`static_effects`), the
observer's ``Capture`` carries that ``access`` (``(write, size)``), the shadowed
``files``, the ``observer`` itself and its ``ins``; its tokens are those of the
access with and without the register changed.  After the instruction the block
then checks that the journal holds one entry (the access) and, with the register's
shadow updated, that every shadowed file equals its shadow (one list comparison
each: a device may have changed another register), records the token, the
register's value and the entry's address and value, and empties the journal;
anything else restores the shadow and calls the observer, which compares
everything.  The journal comes from ``observer.journal`` in the block's prologue,
so a translation shared by machines uses each machine's own.
"""

from __future__ import annotations

import ast
import copy
import weakref
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
    #: a *memory* capture (see "Memory captures" in the module docstring): the instruction's one
    #: access ``(write, size)``, the files the sink shadows (all compared), the observer to call
    #: when the common case does not hold, and its instruction
    access: tuple[int, int] | None = None
    files: tuple[str, ...] = ()
    observer: Any = None
    ins: Any = None

    def signature(self) -> tuple[Any, ...]:
        """What a translation using this capture depends on (besides the sink it calls)."""
        return (self.register, type(self.changed).__name__, self.changed, type(self.unchanged).__name__,
                self.unchanged, id(self.agent_class), self.access, self.files)

    def usable(self, writes: frozenset[tuple[str, int]] | None, agent: Any) -> bool:
        """May a block translated for ``agent`` inline this capture, given the instruction's writes?

        A memory capture was made from the instruction's own analysis (:func:`static_effects`),
        which the register-only ``writes`` cannot show: only the agent and the tokens are checked.
        """
        if agent is None or type(agent) is not self.agent_class:
            return False
        if not (isinstance(self.changed, _LITERAL) and isinstance(self.unchanged, _LITERAL)):
            return False
        if self.access is not None:
            return self.observer is not None and self.ins is not None and bool(self.files)
        if writes is None:
            return False
        return writes <= ({self.register} if self.register is not None else set())


def capture_of(observer: Any) -> Capture | None:
    """The observer's :class:`Capture`, if it has a well-formed one."""
    cap = getattr(observer, "capture", None)
    return cap if isinstance(cap, Capture) else None


# --------------------------------------------------------------------------- static writes

_WRITES: dict[tuple[Any, ...], tuple[Any, list[Any]]] = {}
_MAX_WRITES = 16384
#: what :func:`static_effects` answers for an instruction without a memory access it can follow
_NO_EFFECTS: tuple[None, None] = (None, None)


def static_writes(ins: Any, agent: Any) -> frozenset[tuple[str, int]] | None:
    """The registers ``ins`` may write when ``agent`` (or one of its class) executes it.

    ``(file, index)`` pairs, proven from the instruction's semantic function
    specialised for this instruction exactly as the fast engine inlines it; ``None``
    when unknown (the function calls something, indexes a register file with a
    variable, cannot be inlined, or the entry carries execute-instrument callbacks
    or a breakpoint, which may do anything).  Cached process-wide per semantic
    function, operand values and agent class.
    """
    return _analysis(ins, agent)[0]


def static_effects(ins: Any, agent: Any) -> tuple[frozenset[tuple[str, int]] | None, tuple[int, int] | None]:
    """``(writes, access)`` of an instruction whose only call is one memory access.

    For an instruction :func:`static_writes` cannot answer because it loads or stores:
    when its statements (as for :func:`static_writes`) call nothing but one
    ``cpu.space.read(A, N)`` or ``cpu.space.write(A, N, V)`` with a literal size, made
    on every path on which the instruction retires (at the top level, after nothing
    that could return early), ``writes`` are the registers it may write besides and
    ``access`` is ``(write, N)`` (``write``: 1 for a store, 0 for a load).  Else
    ``(None, None)``.  Cached with :func:`static_writes`.
    """
    return _analysis(ins, agent)[1]


def _analysis(ins: Any, agent: Any) -> tuple[Any, Any]:
    """``(static_writes, static_effects)`` of ``ins`` for ``agent``'s class, cached."""
    if not getattr(ins, "blockable", True) or not hasattr(ins, "installed"):
        # (no ``installed``: not filled by the engine — an instruction an architecture
        # issued itself, Instruction.issued_by — so nothing is known of its writes)
        return None, _NO_EFFECTS
    from tessera.engine.blocks import instruction_key, regfile_names, semantic

    fn = semantic(ins)
    arch = getattr(agent, "arch", None)
    regfiles = {rf.name for rf in getattr(arch, "register_files", ()) if rf.storage}
    names = _names_of(regfiles, agent, regfile_names)
    part, held = instruction_key(ins)
    key = (part, id(type(agent)), names)
    got = _WRITES.get(key)
    if got is not None:
        return got[0]
    ctx = inline.Context(inline.Binder(), dict(names), set(), agent)
    writes: frozenset[tuple[str, int]] | None = None
    effects: Any = _NO_EFFECTS
    try:
        stmts = inline.specialise(fn, ins, 0, ctx, last=True)
        if stmts is not None:
            writes = inline.register_writes(stmts, ctx)
            if writes is None:
                effects = _memory_effects(stmts, ctx)
    except Exception:  # noqa: BLE001 - the analysis must never break a run: unknown
        writes, effects = None, _NO_EFFECTS
    if len(_WRITES) >= _MAX_WRITES:
        _WRITES.clear()
    _WRITES[key] = ((writes, effects), held + [type(agent)])  # held: no id in the key is reused
    return writes, effects


# the register-file names of the last agent asked about: working them out walks the
# agent's attributes, and a run asks for one agent over and over
_LAST_NAMES: list[Any] = [None, None, ()]


def _names_of(regfiles: set[str], agent: Any, regfile_names: Any) -> tuple[tuple[str, str], ...]:
    """``regfile_names(regfiles, agent)`` as a sorted tuple, remembered for the last agent
    while every alias it found still is the register list it was (a later alias is not
    seen: writes through it are unknown writes, which is safe)."""
    key = frozenset(regfiles)
    last_agent, last_key, names = _LAST_NAMES
    if agent is not None and last_agent is not None and last_agent() is agent and last_key == key:
        attrs, regs = vars(agent), getattr(agent, "regs", None)
        if isinstance(regs, dict) and all(attrs.get(a) is regs.get(f) for a, f in names if a != f):
            return names
    names = tuple(sorted(regfile_names(regfiles, agent).items()))
    try:
        ref = weakref.ref(agent) if agent is not None else None
    except TypeError:         # an agent that takes no weak reference: not remembered
        ref = None
    _LAST_NAMES[:] = [ref, key, names]
    return names


def _is_access(node: ast.AST) -> tuple[int, int] | None:
    """``(write, size)`` of ``cpu.space.read(A, N)`` / ``cpu.space.write(A, N, V)`` (literal ``N``), else ``None``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("read", "write") and not node.keywords
            and not any(isinstance(a, ast.Starred) for a in node.args)):
        return None
    target = node.func.value
    if not (isinstance(target, ast.Attribute) and target.attr == "space" and isinstance(target.value, ast.Name)
            and target.value.id == "cpu"):
        return None
    write = node.func.attr == "write"
    if len(node.args) != (3 if write else 2):
        return None
    size = node.args[1]
    if not (isinstance(size, ast.Constant) and type(size.value) is int and size.value > 0):
        return None
    return int(write), size.value


#: statements after which an access at the top level may not happen although the instruction retires
_EARLY_EXIT = (ast.Return, ast.Break, ast.Continue, ast.Try, ast.While, ast.For, ast.With, ast.AsyncFor,
               ast.AsyncWith, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
#: expressions whose parts are evaluated only sometimes (or elsewhere)
_CONDITIONAL = (ast.IfExp, ast.BoolOp, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def _memory_effects(stmts: list[ast.stmt], ctx: Any) -> tuple[Any, Any]:
    """:func:`static_effects` of specialised statements (``stmts`` are not changed)."""
    found: list[tuple[int, ast.Call, tuple[int, int]]] = []
    for t, s in enumerate(stmts):
        for n in ast.walk(s):
            access = _is_access(n)
            if access is not None:
                found.append((t, n, access))   # type: ignore[arg-type]
    if len(found) != 1:
        return _NO_EFFECTS
    t, call, access = found[0]
    top = stmts[t]
    if not isinstance(top, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Expr | ast.Return):
        return _NO_EFFECTS
    if any(isinstance(n, _EARLY_EXIT) for s in stmts[:t] for n in ast.walk(s)):
        return _NO_EFFECTS
    if _under(top, call, _CONDITIONAL):
        return _NO_EFFECTS
    # the statements with the access made harmless: what else they write is what they write
    copy = [c for c in (_without(s, call) for s in stmts) if c is not None]
    writes = inline.register_writes(copy, ctx)
    return (writes, access) if writes is not None else _NO_EFFECTS


def _under(root: ast.AST, target: ast.AST, kinds: tuple[type, ...]) -> bool:
    """Is ``target`` inside a node of ``kinds`` within ``root``?"""
    def visit(node: ast.AST, inside: bool) -> bool | None:
        if node is target:
            return inside
        inside = inside or isinstance(node, kinds)
        for child in ast.iter_child_nodes(node):
            got = visit(child, inside)
            if got is not None:
                return got
        return None
    return bool(visit(root, False))


def _without(stmt: ast.stmt, call: ast.Call) -> ast.stmt | None:
    """A copy of ``stmt`` with ``call`` replaced by ``0`` (``None``: the statement was the call)."""
    if isinstance(stmt, ast.Expr) and stmt.value is call:
        return None

    class Replace(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> Any:
            if node is call:
                return ast.copy_location(ast.Constant(0), node)
            self.generic_visit(node)
            return node

    if not any(n is call for n in ast.walk(stmt)):
        return stmt
    return Replace().visit(_copy_with(stmt, call))


def _copy_with(stmt: ast.stmt, call: ast.Call) -> ast.stmt:
    """A deep copy of ``stmt`` whose node standing for ``call`` is ``call`` itself (to be replaced)."""
    memo = {id(call): call}
    return copy.deepcopy(stmt, memo)


# --------------------------------------------------------------------------- code generation


class SinkNames:
    """The locals a block binds for the sinks of its captures (one set per distinct sink)."""

    def __init__(self, binder: inline.Binder) -> None:
        self.binder = binder
        self.sinks: list[tuple[str, Any, str]] = []    # (prefix, sink, plugin)
        self._prefix: dict[tuple[int, int], str] = {}
        self.files: dict[str, set[str]] = {}
        #: per sink: the locals holding memory captures' journals, and their observers' names
        self.journals: dict[str, list[tuple[str, str]]] = {}

    def prefix(self, sink: Any, plugin: str) -> str:
        # a bound method is a new object each time it is looked up: key it by what it binds
        key = (id(getattr(sink, "__self__", None)), id(getattr(sink, "__func__", sink)))
        p = self._prefix.get(key)
        if p is None:
            p = self._prefix[key] = f"C{len(self.sinks)}"
            self.sinks.append((p, sink, plugin))
            self.files[p] = set()
            self.journals[p] = []
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
            for local, observer in self.journals[p]:
                stmts.append(ast.Assign([ast.Name(local, ast.Store())],
                                        ast.Attribute(ast.Name(observer, ast.Load()), "journal", ast.Load())))
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
    if cap.access is not None:
        return _memory_statements(cap, k, prefix, names, used, loaded=loaded)
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


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _call(fn: str, *args: ast.expr) -> ast.stmt:
    return ast.Expr(ast.Call(_load(fn), list(args), []))


def _memory_statements(cap: Capture, k: int, prefix: str, names: SinkNames, used: set[str], *,
                       loaded: bool = False) -> list[ast.stmt]:
    """A memory capture after the ``k``-th instruction (see "Memory captures" in the module
    docstring): the common case inline, anything else through the observer::

        c = R_x[rd]                        # a load's register (none for a store)
        if len(J) == 1:                    # its one access, and nothing before it
            o = SH_x[rd]; SH_x[rd] = c
            if R_x == SH_x and ...:        # no other register changed (every shadowed file)
                m = J[0]
                if c != o: rec(CHANGED); val(c)
                else: rec(UNCHANGED)
                val(m[1]); val(m[3]); J.clear()
            else:
                SH_x[rd] = o; O(cpu, I)
        else:
            O(cpu, I)
    """
    binder = names.binder
    observer = binder.bind("O", cap.observer)
    ins = binder.bind("I", cap.ins)
    journal = f"{prefix}_j{k}"
    names.journals[prefix].append((journal, observer))
    for rf in cap.files:
        used.add(rf)
        names.files[prefix].add(rf)
    rec, val = f"{prefix}_rec", f"{prefix}_val"
    call_observer = _call(observer, _load("cpu"), _load(ins))
    same: ast.expr = ast.BoolOp(ast.And(), [ast.Compare(_load(f"R_{rf}"), [ast.Eq()], [_load(f"{prefix}_{rf}")])
                                            for rf in cap.files]) if len(cap.files) > 1 else \
        ast.Compare(_load(f"R_{cap.files[0]}"), [ast.Eq()], [_load(f"{prefix}_{cap.files[0]}")])
    entry = f"m_{prefix}_{k}"
    accesses: list[ast.stmt] = [
        ast.Assign([ast.Name(entry, ast.Store())], ast.Subscript(_load(journal), ast.Constant(0), ast.Load())),
        _call(val, ast.Subscript(_load(entry), ast.Constant(1), ast.Load())),
        _call(val, ast.Subscript(_load(entry), ast.Constant(3), ast.Load())),
        ast.Expr(ast.Call(ast.Attribute(_load(journal), "clear", ast.Load()), [], []))]
    one = ast.Compare(ast.Call(_load("len"), [_load(journal)], []), [ast.Eq()], [ast.Constant(1)])
    if cap.register is None:
        return [ast.If(ast.BoolOp(ast.And(), [one, same]),
                       [_call(rec, ast.Constant(cap.unchanged)), *accesses], [call_observer])]
    rf, index = cap.register
    value = value_name(prefix, k)
    old = f"o_{prefix}_{k}"
    shadow = f"{prefix}_{rf}"

    def shadow_at(store: bool = False) -> ast.Subscript:
        return ast.Subscript(_load(shadow), ast.Constant(index), ast.Store() if store else ast.Load())

    load: list[ast.stmt] = [] if loaded else [
        ast.Assign([ast.Name(value, ast.Store())], ast.Subscript(_load(f"R_{rf}"), ast.Constant(index), ast.Load()))]
    record = ast.If(ast.Compare(_load(value), [ast.NotEq()], [_load(old)]),
                    [_call(rec, ast.Constant(cap.changed)), _call(val, _load(value))],
                    [_call(rec, ast.Constant(cap.unchanged))])
    return load + [ast.If(one, [
        ast.Assign([ast.Name(old, ast.Store())], shadow_at()),
        ast.Assign([shadow_at(True)], _load(value)),
        ast.If(same, [record, *accesses], [ast.Assign([shadow_at(True)], _load(old)), call_observer]),
    ], [call_observer])]
