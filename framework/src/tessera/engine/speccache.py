"""The template cache: one specialisation per semantic function and shape of operands.

Specialising an instruction (:func:`tessera.engine.inline.specialise_now`) is most of
what translating a block costs: renaming, folding, inlining calls and cleaning up,
each a walk over the tree, for every instruction of every block.  Yet most of that
work does not depend on the instruction's operand values: ``addi a0, a0, 1`` and
``addi s1, sp, -16`` go through exactly the same steps, and their statements differ
only in the literals that came from ``ins.rd``, ``ins.rs1`` and ``ins.imm``.

So a specialisation is *recorded* once — made on a private binder, with every literal
that came from an instruction field marked as that field — and then *copied* for
each instruction that takes the same path, with the fields' values put in and the
names renamed into the block.  The copy is exactly what specialising that
instruction would have made (``tests/core/test_translation_cache.py`` checks it
against :func:`~tessera.engine.inline.specialise_now` on real programs):

* **The same path.**  Making the statements looks at a field's value only when it
  folds it: a test on it (``if ins.rd:`` looks whether it is true), arithmetic on
  it, a comparison of two facts.  The recording notes, per field read, how much
  was looked at (:data:`~tessera.engine.inline.TYPE`, ``TRUTH`` or ``VALUE``); a
  field bound by identity (a function, a tuple) is keyed by identity.  Another
  instruction reuses the recording only if its fields agree on exactly that, so it
  would have made every decision the same way.
* **The same outside values.**  Globals, closure variables and agent methods read
  while recording (:class:`~tessera.engine.inline.Dependency`), names found missing
  (a builtin, an unknown name), and the agent's own attributes that hide methods
  are checked before each reuse; the register files and the agent's class are part
  of the key.
* **The same names.**  The recording binds objects and numbers its locals privately;
  a copy replays the binds on the block's binder in the same order, so the block
  names them exactly as a fresh specialisation would, and renumbers the locals into
  the sites a fresh specialisation would have used.  ``r_L<k>`` (a terminal
  instruction's returned value) becomes the instruction's own index; should that
  meet a local of the same name (a function with a local ``r`` at that very site)
  the instruction is specialised afresh, as before.

What the copy leaves for later is the block's own work (placing lines, observers,
memory accesses, the stale checks), which happens on the copied statements.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
from typing import Any

from tessera.engine.inline import (
    _MISSING,
    _SIMPLE,
    BOUND_FIELDS,
    FIELD,
    TRUTH,
    TYPE,
    Binder,
    Context,
    specialise_now,
)

__all__ = ["specialise", "clear", "size", "MAX_ENTRIES"]

#: recordings kept process-wide (all are dropped when the limit is reached)
MAX_ENTRIES = 8192
#: the first site a recording numbers its locals from: far above any block's own sites
SITE_BASE = 1_000_000_000
#: the instruction index a recording uses for ``r_L<k>``: no site can produce it
RECORDED_K = SITE_BASE - 1
_SITE_LOCAL = re.compile(r"(.*)_L(\d+)$")
_INS = object()    # a bind of the instruction itself (replayed with the instruction being translated)
_BOUND = object()  # signature of a field bound by identity is (_BOUND, id)
_RUNTIME = object()  # a field that is neither a literal nor bound: read when the block runs

#: (function, code, last, register files, agent class) -> [(fields looked at, {signature: entry})]
_GROUPS: dict[tuple[Any, ...], list[tuple[tuple[tuple[str, int], ...], dict[tuple[Any, ...], _Entry]]]] = {}
_count = 0


def clear() -> None:
    """Forget every recording (tests; the code cache has its own :data:`tessera.engine.blocks._CODE_CACHE`)."""
    global _count
    _GROUPS.clear()
    _count = 0


def size() -> int:
    """Recordings kept now."""
    return _count


class _Field:
    """The mark on a literal made from one instruction field while recording."""

    __slots__ = ("levels", "attr")

    def __init__(self, levels: dict[str, int], attr: str) -> None:
        self.levels, self.attr = levels, attr

    def look(self, how: int) -> None:
        if how > self.levels[self.attr]:
            self.levels[self.attr] = how


class Recorder:
    """What one recording depended on, filled in by :mod:`tessera.engine.inline` as it goes."""

    def __init__(self) -> None:
        #: field -> how much of its value was looked at (a field read at all is at least TYPE)
        self.levels: dict[str, int] = {}
        self._marks: dict[str, _Field] = {}
        #: dependencies that must still hold (including those of a rejected specialisation)
        self.guards: list[Any] = []
        #: ``(module globals, name, present)``: names looked up there and whether they were found
        self.present: list[tuple[dict[str, Any], str, bool]] = []
        #: ``(attribute, in the agent's own dict, what the class has or None)``: method lookups
        self.probes: list[tuple[str, bool, Any]] = []
        #: the sites of locals named ``r`` (``r_L<site>``, which ``r_L<k>`` could meet), folded away or not
        self.r_sites: set[int] = set()
        self.cacheable = True

    def read(self, attr: str, value: Any) -> None:
        self.levels.setdefault(attr, TYPE)
        if attr == "next" and not isinstance(value, _SIMPLE):
            self.cacheable = False  # a fall-through that is no literal: leave it to specialise_now

    def mark(self, attr: str) -> _Field:
        got = self._marks.get(attr)
        if got is None:
            got = self._marks[attr] = _Field(self.levels, attr)
        return got


class _RecordingBinder(Binder):
    """A private binder that remembers, in order, what it bound first."""

    def __init__(self, ins: Any) -> None:
        super().__init__()
        self.sites = itertools.count(SITE_BASE)
        self.ins = ins
        self.log: list[tuple[str, str, Any]] = []

    def bind(self, hint: str, value: Any) -> str:
        before = len(self._ids)
        name = super().bind(hint, value)
        if len(self._ids) != before:
            self.log.append((name, hint, _INS if value is self.ins else value))
        return name


#: node classes whose instances carry nothing but their class (``Load``, ``Add``, ``Eq`` ...):
#: copies share them, as :func:`ast.parse`'s trees do; nothing changes them in place
_SHARED = (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)


class _Entry:
    """One recording: the statements with marked field literals, and how to copy them into a block."""

    __slots__ = ("body", "binds", "sites", "locals", "used", "deps", "guards", "present", "probes",
                 "fields", "r_sites", "held", "plan", "shared", "tops")

    def __init__(self, body: list[ast.stmt] | None, binder: _RecordingBinder, ctx: Context,
                 rec: Recorder, held: list[Any]) -> None:
        self.body = body
        self.binds = binder.log
        self.sites = next(binder.sites) - SITE_BASE
        self.used = frozenset(ctx.used)
        self.deps = tuple(ctx.deps)
        self.guards = tuple(rec.guards) + self.deps
        self.present = tuple(rec.present)
        self.probes = tuple(rec.probes)
        self.held = held  # the fields bound by identity: their ids are in the signature
        self.locals: list[tuple[str, str, int]] = []
        self.r_sites = frozenset(site - SITE_BASE for site in rec.r_sites)
        self.fields: tuple[str, ...] = ()
        #: the copy, flattened: one step per node, children before parents (see :meth:`copy`)
        self.plan: list[tuple[type[ast.AST], dict[str, Any], tuple[tuple[str, Any], ...], str | None, str | None]] = []
        #: what copies share: singleton-like nodes and list items that are no nodes
        self.shared: list[Any] = []
        self.tops: tuple[int, ...] = ()
        if body is not None:
            self._scan(body)
            self.tops = tuple(self._flatten(s) for s in body)

    def _scan(self, body: list[ast.stmt]) -> None:
        """Find the renamed locals and the marked field literals (and drop the recorder from them)."""
        fields: set[str] = set()
        seen: set[str] = set()
        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Constant):
                    mark = n.__dict__.get(FIELD)
                    if mark is not None:
                        attr = mark if isinstance(mark, str) else mark.attr
                        setattr(n, FIELD, attr)  # the recorder is not kept
                        fields.add(attr)
                elif isinstance(n, ast.Name) and n.id not in seen:
                    seen.add(n.id)
                    m = _SITE_LOCAL.match(n.id)
                    if m is not None and int(m.group(2)) >= SITE_BASE:
                        self.locals.append((n.id, m.group(1), int(m.group(2)) - SITE_BASE))
        self.fields = tuple(sorted(fields))

    def _flatten(self, node: ast.AST) -> int:
        """Add the steps that copy ``node``; its index in the copy's list of nodes."""
        if isinstance(node, _SHARED):
            self.shared.append(node)
            return -len(self.shared)
        base: dict[str, Any] = {}
        fix: list[tuple[str, Any]] = []
        for key, v in node.__dict__.items():
            if key == FIELD:
                continue
            base[key] = v  # keeps the attributes' order; children are put in place by the copy
            if isinstance(v, _SHARED):
                continue
            if isinstance(v, ast.AST):
                fix.append((key, self._flatten(v)))
            elif type(v) is list:
                fix.append((key, tuple(self._flatten(i) if isinstance(i, ast.AST) else self._share(i) for i in v)))
        rename = None
        field = None
        if type(node) is ast.Name:
            rename = node.id
        elif type(node) is ast.Constant:
            field = node.__dict__.get(FIELD)
        self.plan.append((type(node), base, tuple(fix), rename, field))
        return len(self.plan) - 1

    def _share(self, item: Any) -> int:
        self.shared.append(item)
        return -len(self.shared)

    def copy(self, names: dict[str, str], values: dict[str, Any]) -> list[ast.stmt]:
        """A fresh copy of the statements, names renamed by ``names``, field literals from ``values``.

        Every node is new except the shared singletons; each step makes one node from
        its recorded attributes and the nodes already made (index ``i``; a negative
        index is a shared object)."""
        built: list[Any] = []
        shared = self.shared
        add = built.append
        for cls, base, fix, rename, field in self.plan:
            node = cls.__new__(cls)
            d = node.__dict__
            d.update(base)
            for key, ref in fix:
                if type(ref) is int:
                    d[key] = built[ref] if ref >= 0 else shared[-1 - ref]
                else:
                    d[key] = [built[i] if i >= 0 else shared[-1 - i] for i in ref]
            if rename is not None:
                d["id"] = names.get(rename, rename)
            elif field is not None:
                d["value"] = values[field]
            add(node)
        return [built[i] for i in self.tops]

    def holds(self, agent: Any) -> bool:
        """Is every outside value this recording read still what it was (for this agent)?"""
        for dep in self.guards:
            if not dep.holds():
                return False
        for namespace, name, present in self.present:
            if (name in namespace) is not present:
                return False
        if self.probes:
            own = getattr(agent, "__dict__", {})
            for attr, in_dict, found in self.probes:
                if (attr in own) is not in_dict:
                    return False
                if not in_dict and found is not None \
                        and inspect.getattr_static(type(agent), attr, _MISSING) is not found:
                    return False
        return True


def _signature(ins: Any, spec: tuple[tuple[str, int], ...]) -> tuple[Any, ...]:
    """What decides the path of a specialisation that looked at ``spec`` of ``ins``'s fields."""
    out: list[Any] = []
    for attr, level in spec:
        value = getattr(ins, attr, _MISSING)
        if value is _MISSING:
            out.append(_MISSING)
        elif isinstance(value, _SIMPLE):
            kind = type(value)
            if level == TYPE:
                out.append(kind)
            elif level == TRUTH:
                out.append((kind, bool(value)))
            else:  # VALUE; repr tells -0.0 from 0.0 (a folded constant would show it)
                out.append((kind, value, repr(value)) if kind is float else (kind, value))
        elif isinstance(value, BOUND_FIELDS):
            out.append((_BOUND, id(value)))
        else:
            out.append(_RUNTIME)
    return tuple(out)


def _group_key(fn: Any, ctx: Context, last: bool) -> tuple[Any, ...]:
    regfiles = ctx.regfiles_key
    if regfiles is None:
        regfiles = ctx.regfiles_key = tuple(sorted(ctx.regfiles.items()))
    return (fn, fn.__code__, last, regfiles, type(ctx.agent))


def specialise(fn: Any, ins: Any, k: int, ctx: Context, last: bool) -> list[ast.stmt] | None:
    """:func:`tessera.engine.inline.specialise` for a function that has a template."""
    key = _group_key(fn, ctx, last)
    group = _GROUPS.get(key)
    if group is not None:
        for spec, table in group:
            sig = _signature(ins, spec)
            entry = table.get(sig)
            if entry is not None:
                if entry.holds(ctx.agent):
                    return _copy_into(entry, fn, ins, k, ctx, last)
                del table[sig]  # a global or method it read has changed: record it again
                _forget(1)
                break
    entry, spec = _record(fn, ins, ctx, last)
    if entry is None:
        return specialise_now(fn, ins, k, ctx, last=last)
    _store(key, spec, _signature(ins, spec), entry)
    return _copy_into(entry, fn, ins, k, ctx, last)


def _record(fn: Any, ins: Any, ctx: Context, last: bool) -> tuple[_Entry | None, tuple[tuple[str, int], ...]]:
    binder = _RecordingBinder(ins)
    private = Context(binder, ctx.regfiles, set(), ctx.agent)
    rec = private.recorder = Recorder()
    body = specialise_now(fn, ins, RECORDED_K, private, last=last)
    if not rec.cacheable:
        return None, ()
    spec = tuple(sorted(rec.levels.items()))
    held = [v for attr, _l in spec if isinstance(v := getattr(ins, attr, None), BOUND_FIELDS)]
    return _Entry(body, binder, private, rec, held), spec


def _store(key: tuple[Any, ...], spec: tuple[tuple[str, int], ...], sig: tuple[Any, ...], entry: _Entry) -> None:
    global _count
    if _count >= MAX_ENTRIES:
        clear()
    group = _GROUPS.setdefault(key, [])
    table = next((t for known, t in group if known == spec), None)
    if table is None:
        table = {}
        group.append((spec, table))
    if sig not in table:
        _count += 1
    table[sig] = entry


def _forget(n: int) -> None:
    global _count
    _count -= n


def _copy_into(entry: _Entry, fn: Any, ins: Any, k: int, ctx: Context, last: bool) -> list[ast.stmt] | None:
    """The recording's statements for ``ins`` as the ``k``-th instruction, bound into ``ctx``."""
    binder = ctx.binder
    first = next(binder.sites)
    if last and k - first in entry.r_sites:  # `r_L<k>` could meet a local `r`: specialise afresh
        binder.sites = itertools.count(first)
        return specialise_now(fn, ins, k, ctx, last=last)
    binder.sites = itertools.count(first + entry.sites)
    names = {private: binder.bind(hint, ins if value is _INS else value) for private, hint, value in entry.binds}
    for private, base, j in entry.locals:
        names[private] = f"{base}_L{first + j}"
    names[f"r_L{RECORDED_K}"] = f"r_L{k}"
    ctx.used.update(entry.used)
    if entry.body is None:
        return None
    ctx.deps.extend(entry.deps)
    values = {attr: getattr(ins, attr) for attr in entry.fields}
    return entry.copy(names, values)
