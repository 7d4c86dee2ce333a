"""Loads and stores of plain RAM inline in translated blocks.

A semantic function loads with ``agent.space.read(address, N)`` and stores with
``agent.space.write(address, N, value)``; once inlined into a block (see
:mod:`tessera.engine.inline`) each access is still two or three Python calls
(the space, the region, ``int.from_bytes``).  This pass rewrites every such call
whose size ``N`` is a literal into a test against the space's
:class:`~tessera.memory.space.RamWindow` — the one region of plain RAM blocks may
touch directly — and a ``struct`` unpack or pack of the region's bytes when the
access lies inside it::

    v = space.read(a, 4)
    # becomes
    v = (mw.u4(mw.data, o)[0] if 0 <= (o := a - mw.start) <= mw.last4
         else mw.jr4(o) if 0 <= o <= mw.jlast4
         else cpu.space.read(o + mw.start, 4))

The middle branch is for a window carrying a *journal* (a journal watch covering
its region, :class:`~tessera.memory.watch.Watch` with ``journal=``): its plain limits
are negative and ``jlast<N>`` hold the region's, so the block calls the window's
``jr<N>``/``jw<N>``, which make the access and append the tuple the watch's wrapper
appends on the step path — the value loaded, or the stored value masked to its
size, after the store and its code-page test (:class:`~tessera.memory.space.RamWindow`).
That is one call per access, as fast as spelling the append out inline (measured)
and much smaller to translate: every block carries this branch, journal or not,
and spelled out it made translating the ``mark`` program 25 % slower.  Without a
journal ``jlast<N>`` are negative: an access in the window costs what it did
before journals existed, one outside it one more compare before the call.  Which
branch runs is decided at each access from the window, so one translation serves
journalled and unjournalled machines alike, and a journal set or removed in the
middle of a block applies to the next access.

Everything else takes the original call (the last ``else``): other regions, ROM, devices,
watched memory, unmapped addresses, accesses crossing the window's end — so
faults, device effects and watch callbacks are exactly what they were, raised by
the same statement on the same line (the line tells the engine which instruction
of the block raised, see :meth:`tessera.engine.blocks.Block.locate`).  A store in
the window also makes the self-modifying-code test of
:meth:`RAM.write <tessera.memory.regions.RAM.write>`: when a page it wrote holds
decoded code, the region's invalidation runs, the block is marked stale and
leaves after the instruction, as before.

The block's *stale test* (``if B.stale: raise BlockExit(...)``, which the builder
puts after an instruction that may have written memory) is made here, inside the
branches that may write: after the code-page invalidation, the journalled access
and the original call, never on the plain path — a load from the window cannot
invalidate code, and a store only when its page holds code.  So the calls this
pass makes are marked (:func:`guarded`; the ``struct`` calls :func:`pure`) and the
builder does not test after the instruction for them.  A load that is the whole
value of an assignment, ``v = space.read(A, N)`` (every RISC-V load), becomes an
``if`` statement for that; a load inside a larger expression stays an expression
and keeps the builder's test.

The window is never baked into a translation: translations are shared between
machines (the process-wide code cache), so the block reads ``cpu.space.window``
once per call, in its prologue (:func:`prologue`), into the local ``mw``; and the
space changes that object *in place* whenever its regions are mapped, watched or
unwatched, so an access always tests the current window — a watch set by a device
or observer in the middle of a block applies to the block's next access.  A space
without a window (an architecture's translating view, such as rfPhoenix's thread
view) yields an empty one, which matches no address.
"""

from __future__ import annotations

import ast
import copy
import inspect
import os
import types
from typing import Any

from tessera.engine import inline
from tessera.memory.regions import CODE_PAGE_BITS
from tessera.memory.space import RamWindow

__all__ = ["WINDOW", "EMPTY", "STALE_EXIT", "enabled", "may_access", "rewrite", "prologue", "pure", "guarded",
           "window_call", "is_pure", "is_guarded"]

#: the block local holding the executing agent's window
WINDOW = "mw"
#: the window of a space that has none (never opened; shared by every block)
EMPTY = RamWindow()
#: ``TESSERA_INLINE_MEMORY=0`` keeps every access a call (to measure, or to rule this pass out)
_ON = os.environ.get("TESSERA_INLINE_MEMORY", "1").strip() not in ("0", "no", "off", "false")
_FLAG = "memory_window"  # set on the translation's inline.Context when the prologue is needed
_STRUCT_SIZES = (2, 4, 8)
#: the inline.Context attribute that says where the block leaves when an access of the
#: instruction being rewritten invalidated the block: ``(block name, BlockExit name, count,
#: next pc)`` bound by the block builder, or ``None`` for a block's last instruction
STALE_EXIT = "stale_exit"
#: the mark this pass leaves on the calls it makes (an attribute of the ``ast.Call``)
_MARK = "tessera_memops"


def pure(call: ast.Call) -> ast.Call:
    """Mark ``call`` as one that touches neither registers nor memory outside the window's
    bytes (a ``struct`` pack or unpack): no stale test follows it, and registers held in
    locals (:mod:`tessera.engine.regcache`) stay valid across it."""
    setattr(call, _MARK, "pure")
    return call


def guarded(call: ast.Call) -> ast.Call:
    """Mark ``call`` as one whose possible code write this pass follows with the block's
    stale test itself, in the branch that makes the call (:data:`STALE_EXIT`): the block
    builder need not test after the whole instruction.  It may still do anything else."""
    setattr(call, _MARK, "guarded")
    return call


def window_call(call: ast.Call) -> ast.Call:
    """Mark ``call`` as a call of the window's own methods (a journalled access, the
    code-page invalidation): :func:`guarded`, and touching no register either."""
    setattr(call, _MARK, "window")
    return call


def is_pure(node: ast.AST) -> bool:
    """Touches no register (:func:`pure`, or a :func:`window_call`)?"""
    return getattr(node, _MARK, None) in ("pure", "window", "quiet")


def _quiet(call: ast.Call) -> ast.Call:
    """A window method call the builder still tests after: touches no register, may write."""
    setattr(call, _MARK, "quiet")
    return call


def is_guarded(node: ast.AST) -> bool:
    """Pure, or followed by its own stale test: never a reason for the instruction's test."""
    return getattr(node, _MARK, None) in ("pure", "window", "guarded")
_METHODS = frozenset({"read", "write"})


def enabled(ctx: Any) -> bool:
    """Rewrite the accesses of this translation?  Only if the translating agent's space
    has a window (a view without one would gain nothing), unless no agent is known."""
    if not _ON:
        return False
    agent = ctx.agent
    if agent is None:
        return True
    return isinstance(getattr(getattr(agent, "space", None), "window", None), RamWindow)


def rewrite(stmts: list[ast.stmt] | None, ctx: Any, fn: Any = None) -> list[ast.stmt] | None:
    """``stmts`` (one instruction's specialised statements) with their RAM accesses inline.

    ``fn``: the semantic function they were specialised from; when its source shows
    that no access can be among them (:func:`may_access`) they are not looked at.
    ``None`` (an instruction that is called, not inlined) stays ``None``.
    """
    if stmts is None or not enabled(ctx) or (fn is not None and not may_access(fn, ctx.agent)):
        return stmts
    rewriter = _Accesses(ctx, _aliases(stmts))
    out: list[ast.stmt] = []
    for s in stmts:
        out.extend(rewriter.statement(s))
    if rewriter.count:
        setattr(ctx, _FLAG, True)
    if rewriter.holes and rewriter.where is not None:
        out = _test_stale(out, rewriter.where)
    return out


def _test_stale(stmts: list[ast.stmt], where: tuple[str, str, int, int]) -> list[ast.stmt]:
    """Fill the *holes* the accesses left where they may have written code: the block's
    stale test goes there, after the rest of the instruction — which therefore moves into
    every branch of the access (a statement or two: a load's register write).

    Only an instruction with one access, at its top level, is done so; for any other
    (an atomic read-modify-write, an access under a condition) the holes are dropped and
    the calls unmarked, and the block builder tests after the whole instruction as before.
    """
    at = [i for i, s in enumerate(stmts) if any(_is_hole(n) for n in inline.walk(s))]
    if len(at) == 1 and not _has_access(stmts[at[0] + 1:]) and _holes_at_ends(stmts[at[0]]):
        i = at[0]
        tail = stmts[i + 1:]
        _sink(stmts[i], tail, _stale_test(where))
        return stmts[:i + 1]
    for s in stmts:  # give the test back to the builder
        for n in inline.walk(s):
            mark = getattr(n, _MARK, None)
            if mark == "guarded":
                setattr(n, _MARK, None)
            elif mark == "window":
                setattr(n, _MARK, "quiet")
    return _drop_holes(stmts)


def _is_hole(node: ast.AST) -> bool:
    return getattr(node, _MARK, None) == "hole"


def _has_access(stmts: list[ast.stmt]) -> bool:
    return any(getattr(n, _MARK, None) is not None for s in stmts for n in inline.walk(s))


def _holes_at_ends(stmt: ast.stmt) -> bool:
    """Is every hole in ``stmt`` the last statement of its list, or inside the last ``if`` of it?"""
    def ok(body: list[ast.stmt]) -> bool:
        for j, s in enumerate(body):
            inside = any(_is_hole(n) for n in inline.walk(s))
            if not inside:
                continue
            if j != len(body) - 1:
                return False
            if not _is_hole(s) and not (isinstance(s, ast.If) and ok(s.body) and ok(s.orelse)):
                return False
        return True
    return ok([stmt])


def _sink(stmt: ast.stmt, tail: list[ast.stmt], test: ast.stmt) -> None:
    """Make every path through ``stmt`` (an ``if`` tree of one access) end with ``tail``,
    and the paths through a hole with ``tail`` and then ``test``."""
    assert isinstance(stmt, ast.If)
    for field in ("body", "orelse"):
        body: list[ast.stmt] = getattr(stmt, field)
        last = body[-1] if body else None
        if last is not None and _is_hole(last):
            body[-1:] = [*inline.clone(tail), inline.clone(test)]
        elif isinstance(last, ast.If) and any(_is_hole(n) for n in inline.walk(last)):
            _sink(last, tail, test)
        else:
            body.extend(inline.clone(tail))


def _drop_holes(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out = []
    for s in stmts:
        if _is_hole(s):
            continue
        for field in ("body", "orelse"):
            if isinstance(getattr(s, field, None), list):
                setattr(s, field, _drop_holes(getattr(s, field)))
        out.append(s)
    return out


def _stale_test(where: tuple[str, str, int, int]) -> ast.stmt:
    """``if B.stale: raise BlockExit(count, pc)``: the block's test after an instruction that wrote memory."""
    block, exit_, count, pc = where
    return ast.If(ast.Attribute(_name(block), "stale", ast.Load()),
                  [ast.Raise(ast.Call(_name(exit_), [ast.Constant(count), ast.Constant(pc)], []), None)], [])


_MAY: dict[tuple[Any, type], bool] = {}


def may_access(fn: Any, agent: Any) -> bool:
    """Could ``fn``, specialised and inlined for ``agent``'s class, contain a ``read`` or
    ``write`` call?  Answered from the source of ``fn`` and of the helpers and agent
    methods it calls (what :mod:`tessera.engine.inline` may inline), once per function
    and agent class; ``True`` whenever unsure.  Most instructions (arithmetic, branches)
    are thus never walked: translating must stay cheap."""
    key = (fn, type(agent))
    got = _MAY.get(key)
    if got is None:
        got = _MAY[key] = _calls_access(fn, None if agent is None else type(agent), inline.MAX_DEPTH + 1, True)
    return got


def _calls_access(fn: Any, agent_class: type | None, depth: int, top: bool) -> bool:
    t = inline.template(fn)
    if t is None:
        return not top  # a top-level one was not inlined (no statements); a helper stays a call
    if depth <= 0:
        return True
    agent_param = t.params[0] if top and t.params else None
    code = fn.__code__
    cells = dict(zip(code.co_freevars, fn.__closure__ or (), strict=True))
    for n in ast.walk(ast.Module(body=t.body, type_ignores=[])):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        target: Any = None
        if isinstance(f, ast.Attribute):
            if f.attr in _METHODS:
                return True
            if not isinstance(f.value, ast.Name) or f.value.id in t.local_names:
                continue  # a method of something else: stays a call of that name
            if f.value.id == agent_param or (not top and f.value.id in t.params):
                if agent_class is None:
                    return True
                try:
                    target = inspect.getattr_static(agent_class, f.attr)
                except AttributeError:
                    continue
            elif f.value.id in t.params:
                return True  # e.g. a function held by the instruction: it may be inlined
        elif isinstance(f, ast.Name):
            name = f.id
            if name in cells:
                try:
                    target = cells[name].cell_contents
                except ValueError:
                    continue
            else:
                target = fn.__globals__.get(name)
        if isinstance(target, types.FunctionType) and _calls_access(target, agent_class, depth - 1, False):
            return True
    return False


def prologue(ctx: Any) -> list[ast.stmt]:
    """The block's first statements if it accesses memory inline: ``mw = <its window>``."""
    if not getattr(ctx, _FLAG, False):
        return []
    empty = ctx.binder.bind("NoWindow", EMPTY)
    space = ast.Attribute(ast.Name("cpu", ast.Load()), "space", ast.Load())
    got = ast.Call(ast.Name("getattr", ast.Load()), [space, ast.Constant("window"), ast.Name(empty, ast.Load())], [])
    return [ast.Assign([ast.Name(WINDOW, ast.Store())], got)]


# --------------------------------------------------------------------------- recognising accesses


def _is_space(node: ast.expr) -> bool:
    """``cpu.space``: the executing agent's space."""
    return (isinstance(node, ast.Attribute) and node.attr == "space" and isinstance(node.value, ast.Name)
            and node.value.id == "cpu" and isinstance(node.ctx, ast.Load))


def _aliases(stmts: list[ast.stmt]) -> set[str]:
    """Locals that are ``cpu.space``: assigned it once, at the top level, and never anything else."""
    found = {s.targets[0].id for s in stmts
             if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
             and _is_space(s.value)}
    if not found:
        return found
    stores: dict[str, int] = {}
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and n.id in found and not isinstance(n.ctx, ast.Load):
                stores[n.id] = stores.get(n.id, 0) + 1
    return {name for name in found if stores.get(name) == 1}


def _size(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value > 0:
        return node.value
    return None


def _atom(node: ast.expr) -> bool:
    """Cheap and free of effects: may be evaluated in either branch without a temporary."""
    if isinstance(node, ast.Constant | ast.Name):
        return True
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Constant))


def _name(n: str, store: bool = False) -> ast.Name:
    return ast.Name(n, ast.Store() if store else ast.Load())


def _w(field: str) -> ast.Attribute:
    return ast.Attribute(_name(WINDOW), field, ast.Load())


def _in_window(offset: ast.expr, size: int, journal: bool = False) -> ast.Compare:
    """``0 <= offset <= mw.last<N>`` (``mw.span - N`` for other sizes); with ``journal``,
    the journalled window's limits ``mw.jlast<N>`` (``mw.jspan - N``)."""
    j = "j" if journal else ""
    limit: ast.expr = (_w(f"{j}last{size}") if size in (1, 2, 4, 8)
                       else ast.BinOp(_w(f"{j}span"), ast.Sub(), ast.Constant(size)))
    return ast.Compare(ast.Constant(0), [ast.LtE(), ast.LtE()], [offset, limit])


def _address(offset: str) -> ast.expr:
    """The access's own address again, for the slow path: ``o + mw.start``."""
    return ast.BinOp(_name(offset), ast.Add(), _w("start"))


def _journalled(write: bool, offset: str, size: int, *value: ast.expr) -> ast.Call:
    """``mw.jr4(o)`` / ``mw.jw4(o, v)`` (``mw.jread(o, N)`` / ``mw.jwrite(o, N, v)`` for sizes
    other than 1, 2, 4 and 8): the access in a journalled window, with its journal entry."""
    if size in (1, 2, 4, 8):
        return ast.Call(_w(f"jw{size}" if write else f"jr{size}"), [_name(offset), *value], [])
    return ast.Call(_w("jwrite" if write else "jread"), [_name(offset), ast.Constant(size), *value], [])


class _Accesses:
    """Rewrites the reads (anywhere in an expression) and writes (as statements) of one instruction."""

    def __init__(self, ctx: Any, aliases: set[str]) -> None:
        self.ctx = ctx
        self.aliases = aliases
        self.count = 0
        #: where the block leaves when this instruction invalidated it (:data:`STALE_EXIT`)
        self.where: tuple[str, str, int, int] | None = getattr(ctx, STALE_EXIT, None)
        self.holes = 0

    def _temp(self, what: str) -> str:
        # no `_<digits>` or `_L<digits>` suffix: cannot meet a bound name or a renamed local
        return f"m{what}{next(self.ctx.binder.sites)}x"

    def _access(self, node: ast.AST, method: str, nargs: int) -> int | None:
        """The size of ``<space>.<method>(address, N[, value])`` with literal ``N``, else ``None``."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method
                and len(node.args) == nargs and not node.keywords
                and not any(isinstance(a, ast.Starred) for a in node.args)):
            return None
        target = node.func.value
        if not (_is_space(target) or (isinstance(target, ast.Name) and target.id in self.aliases)):
            return None
        return _size(node.args[1])

    # ------------------------------------------------------------------ statements

    def statement(self, s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, ast.Expr):
            size = self._access(s.value, "write", 3)
            if size is not None:
                return self._store(s.value, size)  # type: ignore[arg-type]
        elif (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
            size = self._access(s.value, "read", 2)
            if size is not None:  # ``v = space.read(A, N)``: the statement form, checked only when slow
                return self._load_statement(s.targets[0], s.value, size)  # type: ignore[arg-type]
        for field in s._fields:
            value = getattr(s, field, None)
            if isinstance(value, ast.expr):
                setattr(s, field, self.expression(value))
            elif isinstance(value, list) and value:
                if isinstance(value[0], ast.stmt):  # body, orelse, finalbody
                    setattr(s, field, [t for child in value for t in self.statement(child)])
                elif isinstance(value[0], ast.excepthandler):
                    for h in value:
                        h.body = [t for child in h.body for t in self.statement(child)]
                else:
                    value[:] = [self.expression(v) if isinstance(v, ast.expr) else v for v in value]
        return [s]

    def _store(self, call: ast.Call, size: int) -> list[ast.stmt]:
        """``space.write(A, N, V)`` → in the window: pack, then the code-page test; in a
        journalled window the same and the journal entry; else the call."""
        self.count += 1
        address, _n, value = (self.expression(a) for a in call.args)
        pre: list[ast.stmt] = []
        if not _atom(value) and not isinstance(address, ast.Constant):  # A is evaluated before V, as in the call
            a = self._temp("a")
            pre.append(ast.Assign([_name(a, True)], address))
            address = _name(a)
        if not _atom(value):
            v = self._temp("v")
            pre.append(ast.Assign([_name(v, True)], value))
            value = _name(v)
        o = self._temp("o")
        offset = ast.NamedExpr(_name(o, True), ast.BinOp(address, ast.Sub(), _w("start")))
        mask = (1 << (8 * size)) - 1
        plain = [self._put(o, size, ast.BinOp(value, ast.BitAnd(), ast.Constant(mask))), self._smc(o, size)]
        journalled = ast.Expr(self.guard(_journalled(True, o, size, copy.deepcopy(value)), window=True))
        slow = ast.Expr(self.guard(ast.Call(call.func, [_address(o), ast.Constant(size), copy.deepcopy(value)], [])))
        return [*pre, ast.If(_in_window(offset, size), plain,
                             [ast.If(_in_window(_name(o), size, journal=True),
                                     [journalled, *self._stale()], [slow, *self._stale()])])]

    def _stale(self) -> list[ast.stmt]:
        """A *hole* where this access may have written code: :func:`_test_stale` puts the
        block's stale test there (none when the builder does not want one here)."""
        if self.where is None:
            return []
        self.holes += 1
        hole = ast.Pass()
        setattr(hole, _MARK, "hole")
        return [hole]

    def guard(self, call: ast.Call, window: bool = False) -> ast.Call:
        """:func:`guarded` (or, for the window's own methods, :func:`window_call`) when this
        pass makes the stale test for the instruction; else the window's calls are still
        known to touch no register."""
        if window:
            return window_call(call) if self.where is not None else _quiet(call)
        return call if self.where is None else guarded(call)

    def _load_statement(self, target: ast.Name, call: ast.Call, size: int) -> list[ast.stmt]:
        """``v = space.read(A, N)`` → ``if <in the window>: v = <unpack> elif <journalled>:
        v = mw.jr<N>(o) else: v = <the call>`` and the stale test after the call alone: a
        load from the window or its journal writes nothing."""
        self.count += 1
        o = self._temp("o")
        address = self.expression(call.args[0])
        offset = ast.NamedExpr(_name(o, True), ast.BinOp(address, ast.Sub(), _w("start")))
        slow = self.guard(ast.Call(call.func, [_address(o), ast.Constant(size)], []))
        store = ast.Name(target.id, ast.Store())
        return [ast.If(_in_window(offset, size), [ast.Assign([store], self._unpack(o, size))],
                       [ast.If(_in_window(_name(o), size, journal=True),
                               [ast.Assign([copy.copy(store)], self.guard(_journalled(False, o, size), window=True))],
                               [ast.Assign([copy.copy(store)], slow), *self._stale()])])]

    @staticmethod
    def _put(o: str, size: int, value: ast.expr) -> ast.stmt:
        """Store ``value`` (already masked to ``size`` bytes) at offset ``o`` of the window's data."""
        data = _w("data")
        if size == 1:
            return ast.Assign([ast.Subscript(data, _name(o), ast.Store())], value)
        if size in _STRUCT_SIZES:
            return ast.Expr(pure(ast.Call(_w(f"p{size}"), [data, _name(o), value], [])))
        end = ast.BinOp(_name(o), ast.Add(), ast.Constant(size))
        packed = pure(ast.Call(ast.Attribute(value, "to_bytes", ast.Load()), [ast.Constant(size), _w("endian")], []))
        return ast.Assign([ast.Subscript(data, ast.Slice(_name(o), end), ast.Store())], packed)

    def _smc(self, o: str, size: int) -> ast.stmt:
        """The test RAM.write makes: does a page written hold decoded code?  (N <= a page: two ends)"""
        first = ast.Compare(ast.BinOp(_name(o), ast.RShift(), ast.Constant(CODE_PAGE_BITS)), [ast.In()], [_w("code")])
        pages: ast.expr = first
        if size > 1:
            last = ast.BinOp(ast.BinOp(_name(o), ast.Add(), ast.Constant(size - 1)), ast.RShift(),
                             ast.Constant(CODE_PAGE_BITS))
            pages = ast.BoolOp(ast.Or(), [first, ast.Compare(last, [ast.In()], [_w("code")])])
            if size > 1 << CODE_PAGE_BITS:
                pages = ast.Constant(True)
        written = self.guard(ast.Call(_w("written"), [_name(o), ast.Constant(size)], []), window=True)
        return ast.If(pages, [ast.Expr(written), *self._stale()], [])

    # ------------------------------------------------------------------ expressions

    def expression(self, node: ast.expr) -> ast.expr:
        """``node`` with every ``space.read(A, N)`` in it rewritten (innermost first); a plain
        recursion over the fields, several times cheaper than an ``ast.NodeTransformer``."""
        if isinstance(node, ast.Name | ast.Constant | ast.Lambda):  # a lambda: its own scope
            return node
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, ast.expr):
                new = self.expression(value)
                if new is not value:
                    setattr(node, field, new)
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    if isinstance(v, ast.expr):
                        value[i] = self.expression(v)
                    elif isinstance(v, ast.keyword):
                        v.value = self.expression(v.value)
        if isinstance(node, ast.Call):
            size = self._access(node, "read", 2)
            if size is not None:
                return self.load(node, size)
        return node

    def load(self, call: ast.Call, size: int) -> ast.expr:
        """``space.read(A, N)`` → ``<unpack> if 0 <= (o := A - mw.start) <= mw.last<N> else
        mw.jr<N>(o) if 0 <= o <= mw.jlast<N> else <the call>``."""
        self.count += 1
        o = self._temp("o")
        offset = ast.NamedExpr(_name(o, True), ast.BinOp(call.args[0], ast.Sub(), _w("start")))
        slow = ast.Call(call.func, [_address(o), ast.Constant(size)], [])
        return ast.IfExp(_in_window(offset, size), self._unpack(o, size),
                         ast.IfExp(_in_window(_name(o), size, journal=True), _quiet(_journalled(False, o, size)), slow))

    @staticmethod
    def _unpack(o: str, size: int) -> ast.expr:
        """The ``size``-byte value at offset ``o`` of the window's data."""
        data = _w("data")
        if size == 1:
            return ast.Subscript(data, _name(o), ast.Load())
        if size in _STRUCT_SIZES:
            return ast.Subscript(pure(ast.Call(_w(f"u{size}"), [data, _name(o)], [])), ast.Constant(0), ast.Load())
        end = ast.BinOp(_name(o), ast.Add(), ast.Constant(size))
        return pure(ast.Call(ast.Attribute(_name("int"), "from_bytes", ast.Load()),
                            [ast.Subscript(data, ast.Slice(_name(o), end), ast.Load()), _w("endian")], []))
