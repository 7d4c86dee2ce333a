"""Copies of a machine's live state that can be put back in place and compared (for check mode).

Check mode (:mod:`tessera.engine.check`) runs a block, rolls the machine back and runs
the same instructions again by stepping, so it needs the state as it was — without
pickling the machine, and without replacing any object: a block binds register files
once per call (``R_x = cpu.x``), architectures alias them (``self.gpr = self.r``),
and agents refer to each other.  A :class:`Snapshot` therefore copies the *contents*
of every container reachable from some roots (the agents, the sync objects, the
plugins' machine state) and writes them back into the same objects.

What is state: lists, dicts, sets, deques, byte arrays, numpy arrays, ``random``
generators, tuples (for what they hold), and plain objects (their ``__dict__`` and
slots) — agents and sync objects included.  Frozen ``attrs`` and ``dataclasses``
records (table rows, commands) are values: compared with ``==``, never walked.  What
is not state: the machine, address spaces and regions (memory is journalled
separately, see :mod:`tessera.engine.memtap`), decoded instructions, blocks, the
architecture, functions and classes, the core's other machinery and the standard
library's I/O, logging and threading objects.  Those are references, compared by
identity (or ``==``, if their class defines it).
"""

from __future__ import annotations

import math
from array import array
from collections import deque
from enum import Enum
from typing import Any

from tessera.engine.agent import Agent
from tessera.engine.blocks import Block
from tessera.isa.description import Architecture
from tessera.isa.instruction import Instruction
from tessera.memory.regions import Region
from tessera.memory.space import AddressSpace
from tessera.sync import SyncObject

__all__ = ["Snapshot", "diff"]

LEAF, OPAQUE, LIST, DICT, OBJECT, SLOTTED, NDARRAY, BUFFER, DEQUE, SET, TUPLE, RANDOM = range(12)
_KINDS: dict[type, int] = {}
_SLOTS: dict[type, tuple[str, ...]] = {}
#: types seen to be leaves or opaque references: a container holding only these has no children
_FLAT: set[type] = {int, bool, str, float, bytes, type(None)}
MISSING = object()
#: packages whose objects are machinery, never architectural state
_OPAQUE_PACKAGES = frozenset({"tessera", "builtins", "logging", "structlog", "io", "_io", "threading", "_thread",
                              "socket", "subprocess", "click", "pluggy", "importlib", "weakref", "_weakref",
                              "types", "abc", "typing", "functools", "os", "pathlib", "tempfile", "rich"})
_CORE_OPAQUE = (AddressSpace, Region, Architecture, Instruction, Block)


def kind(t: type) -> int:
    """How a value of type ``t`` is copied: a leaf, an opaque reference, or a container of some kind."""
    got = _KINDS.get(t)
    if got is None:
        got = _KINDS[t] = _classify(t)
        if got <= OPAQUE:
            _FLAT.add(t)
    return got


def _classify(t: type) -> int:
    if issubclass(t, int | float | complex | str | bytes | frozenset | range | Enum) or t is type(None):
        return LEAF
    if issubclass(t, list):
        return LIST
    if issubclass(t, dict):
        return DICT
    if issubclass(t, tuple):
        return TUPLE
    if issubclass(t, set):
        return SET
    if issubclass(t, deque):
        return DEQUE
    if issubclass(t, bytearray | array):
        return BUFFER
    module = (getattr(t, "__module__", None) or "").split(".")[0]
    if module == "numpy":
        if t.__name__ == "ndarray":
            return NDARRAY
        return LEAF if hasattr(t, "tobytes") else OPAQUE  # scalars: compared by their bytes
    if module == "random" and hasattr(t, "getstate") and hasattr(t, "setstate"):
        return RANDOM
    if issubclass(t, Agent | SyncObject | BaseException):  # state, although the core defines them
        return SLOTTED if _slots(t) else OBJECT
    if issubclass(t, _CORE_OPAQUE) or module in _OPAQUE_PACKAGES or issubclass(t, type):
        return OPAQUE
    if _frozen_record(t):  # an immutable record (a table row, a command): compared by value
        return LEAF
    if _slots(t):
        return SLOTTED
    return OBJECT if t.__dictoffset__ else OPAQUE


def _frozen_record(t: type) -> bool:
    """A frozen ``attrs`` or ``dataclasses`` class: its instances cannot be changed in place."""
    if hasattr(t, "__attrs_attrs__"):
        return getattr(t.__setattr__, "__name__", "") == "_frozen_setattrs"
    params = getattr(t, "__dataclass_params__", None)
    return bool(getattr(params, "frozen", False))


def _slots(t: type) -> tuple[str, ...]:
    got = _SLOTS.get(t)
    if got is None:
        names: list[str] = []
        for cls in t.__mro__:
            declared = cls.__dict__.get("__slots__", ())
            for name in (declared,) if isinstance(declared, str) else declared:
                if name not in ("__dict__", "__weakref__") and name not in names:
                    names.append(name)
        got = _SLOTS[t] = tuple(names)
    return got


class Snapshot:
    """A copy of everything reachable from ``roots`` that is state, restorable in place.

    ``entries`` maps ``id(object)`` to ``(object, kind, saved, nested)``: the
    container's contents as they were (a shallow copy whose elements are leaves or
    live child objects, themselves entries) and whether any element is such a child.
    """

    __slots__ = ("entries", "fresh")

    def __init__(self, roots: list[Any], entries: dict[int, tuple[Any, int, Any, bool]] | None = None) -> None:
        self.entries: dict[int, tuple[Any, int, Any, bool]] = {} if entries is None else entries
        #: for :meth:`changes`: the keys of objects that were not in the copy compared with
        self.fresh: set[int] = set()
        _walk(list(roots), self.entries, {})

    def changes(self) -> Snapshot:
        """What differs now from this copy: the containers whose contents changed, copied as
        they are now, and the new containers they hold (not in this copy at all).

        Cheaper than a new snapshot when a run changed little, which is the rule.
        """
        known = self.entries
        changed: dict[int, tuple[Any, int, Any, bool]] = {}
        for key, (obj, k, saved, _nested) in known.items():
            if not _unchanged(obj, k, saved):
                changed[key] = _entry(obj, k)
        fresh = [child for _obj, k, saved, nested in list(changed.values()) if nested
                 for child in _children(k, saved)
                 if type(child) not in _FLAT and id(child) not in known and _holds_state(child)]
        before = set(changed)
        _walk(fresh, changed, known)
        result = Snapshot([], changed)
        result.fresh = changed.keys() - before
        return result

    def equal_changes(self, other: Snapshot) -> bool:
        """Two :meth:`changes` of the same copy: the same objects changed, to equal contents?

        New objects (a list a sync object replaced) are compared by contents, where they sit.
        ``False`` does not mean different (a NaN, say): let :func:`diff` decide then.
        """
        ea, eb = self.entries, other.entries
        if ea.keys() == eb.keys():
            try:
                if all(_unchanged_copy(k, saved, eb[key][2]) for key, (_obj, k, saved, _n) in ea.items()):
                    return True
            except Exception:  # noqa: BLE001 - an uncomparable value counts as changed
                return False
        changed = ea.keys() - self.fresh
        if changed != eb.keys() - other.fresh:
            return False
        return diff(self, other, [("", ea[key][0]) for key in changed]) is None

    def overlay(self, changes: Snapshot) -> Snapshot:
        """This copy with ``changes`` applied: the state a run left, for :func:`diff`."""
        return Snapshot([], {**self.entries, **changes.entries})

    def restore(self) -> None:
        """Put every copied container's contents back (in place: identities are kept)."""
        for obj, k, saved, _nested in self.entries.values():
            if k == LIST:
                obj[:] = saved
            elif k == OBJECT:
                d = obj.__dict__
                d.clear()
                d.update(saved)
            elif k == DICT:
                dict.clear(obj)
                dict.update(obj, saved)
            elif k == NDARRAY:
                if obj.shape == saved.shape and obj.flags.writeable:
                    obj[...] = saved
            elif k == SLOTTED:
                _restore_slots(obj, saved)
            elif k == BUFFER:
                obj[:] = saved
            elif k == DEQUE:
                obj.clear()
                obj.extend(saved)
            elif k == SET:
                obj.clear()
                obj.update(saved)
            elif k == RANDOM:
                obj.setstate(saved)

    def same(self, other: Snapshot) -> bool:
        """The quick test of two copies: the same objects, with equal contents (see :meth:`changes`)."""
        ea, eb = self.entries, other.entries
        if ea.keys() != eb.keys():
            return False
        try:
            return all(_unchanged_copy(k, saved, eb[key][2]) for key, (_obj, k, saved, _n) in ea.items())
        except Exception:  # noqa: BLE001 - an uncomparable value counts as changed
            return False


def _copy(obj: Any, k: int) -> Any:
    """The contents of container ``obj`` (of kind ``k``) as they are now."""
    if k == LIST or k == DEQUE:
        return list(obj)
    if k == OBJECT:
        return obj.__dict__.copy()
    if k == DICT:
        return dict.copy(obj)
    if k == NDARRAY:
        return obj.copy()
    if k == TUPLE:
        return obj
    if k == SLOTTED:
        return (obj.__dict__.copy() if hasattr(obj, "__dict__") else None,
                tuple(getattr(obj, name, MISSING) for name in _slots(type(obj))))
    if k == BUFFER:
        return obj[:]
    if k == SET:
        return set(obj)
    return obj.getstate()  # RANDOM


def _children(k: int, saved: Any) -> Any:
    """The elements of copied contents that may be containers themselves."""
    if k == LIST or k == DEQUE or k == TUPLE:
        return saved
    if k == OBJECT or k == DICT:
        return saved.values()
    if k == SLOTTED:
        return [*(saved[0].values() if saved[0] is not None else ()), *saved[1]]
    if k == NDARRAY and saved.dtype.hasobject:
        return saved.ravel().tolist()
    return ()


def _entry(obj: Any, k: int) -> tuple[Any, int, Any, bool]:
    saved = _copy(obj, k)
    children = _children(k, saved)
    nested = bool(children) and not set(map(type, children)) <= _FLAT and any(map(_holds_state, children))
    return obj, k, saved, nested


def _holds_state(value: Any) -> bool:
    """Is ``value`` a container to copy?  (A tuple of leaves is a leaf: compared by value.)"""
    k = kind(type(value))
    if k == TUPLE:
        return not set(map(type, value)) <= _FLAT and any(map(_holds_state, value))
    return k > OPAQUE


def _walk(stack: list[Any], entries: dict[int, tuple[Any, int, Any, bool]],
          known: dict[int, Any]) -> None:
    """Copy the containers reachable from ``stack`` into ``entries``, except those in ``known``."""
    kinds, flat = _KINDS, _FLAT
    while stack:
        obj = stack.pop()
        key = id(obj)
        if key in entries or key in known:
            continue
        t = type(obj)
        k = kinds.get(t)
        if k is None:
            k = kind(t)
        if k <= OPAQUE:  # a leaf or an opaque reference as a root: nothing to copy
            continue
        saved = _copy(obj, k)
        children = _children(k, saved)
        nested = False
        if children and not set(map(type, children)) <= flat:
            for child in children:
                ck = kinds.get(type(child))
                if ck is None:
                    ck = kind(type(child))
                if ck > OPAQUE and (ck != TUPLE or _holds_state(child)):
                    stack.append(child)
                    nested = True
        entries[key] = (obj, k, saved, nested)


def _unchanged(obj: Any, k: int, saved: Any) -> bool:
    """Does live ``obj`` still hold ``saved``?  Lists compare types too (register files: 1 is not True)."""
    try:
        if k == LIST:
            return saved == obj and list(map(type, saved)) == list(map(type, obj))
        if k == OBJECT:
            return bool(saved == obj.__dict__)
        if k == DICT or k == BUFFER or k == SET:
            return bool(saved == obj)
        if k == NDARRAY:
            return bool(obj.shape == saved.shape and obj.dtype == saved.dtype and obj.tobytes() == saved.tobytes())
        if k == TUPLE:
            return True
        if k == DEQUE:
            return saved == list(obj)
        return bool(_copy(obj, k) == saved)  # SLOTTED, RANDOM
    except Exception:  # noqa: BLE001 - an uncomparable value counts as changed
        return False


def _unchanged_copy(k: int, a: Any, b: Any) -> bool:
    """Two copies of one container's contents: equal (lists: types too)?"""
    if k == NDARRAY:
        return bool(a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes())
    if k == LIST or k == DEQUE:
        return a == b and list(map(type, a)) == list(map(type, b))
    return bool(a == b)


def _restore_slots(obj: Any, saved: tuple[dict[str, Any] | None, tuple[Any, ...]]) -> None:
    d, values = saved
    if d is not None:
        obj.__dict__.clear()
        obj.__dict__.update(d)
    for name, value in zip(_slots(type(obj)), values, strict=True):
        if value is MISSING:
            if hasattr(obj, name):
                object.__delattr__(obj, name)
        else:
            object.__setattr__(obj, name, value)


def same_leaf(a: Any, b: Any) -> bool:
    """Equal values of the same type (floats and numpy scalars bit for bit)."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b):
        return False
    if t is float:
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b) or (a != a and b != b)
    if hasattr(a, "tobytes") and hasattr(a, "dtype"):
        return bool(a.dtype == b.dtype and a.tobytes() == b.tobytes())
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - a value whose == raises is a difference
        return False


def _flat_equal(a: Any, b: Any) -> bool:
    """Two sequences of leaves: equal values and types (the common case, at C speed)."""
    try:
        if a != b:
            return False
    except Exception:  # noqa: BLE001 - a value whose == raises is a difference
        return False
    return list(map(type, a)) == list(map(type, b))


class _Path:
    """Where a value sits, rendered only when a difference is reported: ``core1.x[10]``."""

    __slots__ = ("parent", "key", "how")

    def __init__(self, parent: _Path | None, key: Any, how: str) -> None:
        self.parent, self.key, self.how = parent, key, how

    def __str__(self) -> str:
        parts: list[str] = []
        node: _Path | None = self
        while node is not None:
            if node.how == "root":
                parts.append(str(node.key))
            elif node.how == "attr":
                parts.append(f".{node.key}")
            elif node.how == "item":
                parts.append(f"[{node.key!r}]")
            else:
                parts.append(f"[{node.key}]")
            node = node.parent
        return "".join(reversed(parts))


def diff(a: Snapshot, b: Snapshot, roots: list[tuple[str, Any]]) -> tuple[str, Any, Any] | None:
    """The first difference between two copies of the same named roots: ``(where, in a, in b)``.

    Walks both copies side by side from the roots in order, depth first, so the
    first root's differences (the checked agent's registers) are found first.
    """
    if a.same(b):
        return None
    ea_all, eb_all = a.entries, b.entries
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[_Path, Any, Any]] = [(_Path(None, name, "root"), obj, obj) for name, obj in reversed(roots)]
    while stack:
        path, xa, xb = stack.pop()
        ea, eb = ea_all.get(id(xa)), eb_all.get(id(xb))
        if ea is None or eb is None:
            if ea is not eb or not same_leaf(xa, xb):
                return str(path), xa, xb
            continue
        pair = (id(xa), id(xb))
        if pair in seen:
            continue
        seen.add(pair)
        k, sa, sb = ea[1], ea[2], eb[2]
        if k != eb[1] or type(xa) is not type(xb):
            return f"{path} (type)", type(xa).__name__, type(xb).__name__
        found = _diff_contents(k, path, sa, sb, ea[3] or eb[3], stack)
        if found is not None:
            return found
    return None


def _diff_contents(k: int, path: _Path, sa: Any, sb: Any, nested: bool,
                   stack: list[tuple[_Path, Any, Any]]) -> tuple[str, Any, Any] | None:
    """Compare one container's two copies; push the pairs of elements still to compare."""
    if k in (LIST, DEQUE, TUPLE):
        if not nested and _flat_equal(sa, sb):
            return None
        if len(sa) != len(sb):
            return f"{path} (length)", len(sa), len(sb)
        stack.extend((_Path(path, i, "index"), sa[i], sb[i]) for i in range(len(sa) - 1, -1, -1))
        return None
    if k in (OBJECT, DICT):
        if not nested and sa.keys() == sb.keys() and _flat_equal(list(sa.values()), list(sb.values())):
            return None
        how = "attr" if k == OBJECT else "item"
        for key in sa.keys() ^ sb.keys():
            return str(_Path(path, key, how)), sa.get(key, "(absent)"), sb.get(key, "(absent)")
        stack.extend((_Path(path, key, how), sa[key], sb[key]) for key in reversed(list(sa)))
        return None
    if k == SLOTTED:
        (da, va), (db, vb) = sa, sb
        stack.extend((_Path(path, f"<slot {i}>", "attr"), x, y) for i, (x, y) in enumerate(zip(va, vb, strict=True)))
        if da is not None and db is not None:
            stack.extend((_Path(path, key, "attr"), da.get(key), db.get(key)) for key in da.keys() | db.keys())
        return None
    if k == NDARRAY:
        return _diff_arrays(path, sa, sb, stack)
    if k == BUFFER:
        if sa == sb:
            return None
        if len(sa) != len(sb):
            return f"{path} (length)", len(sa), len(sb)
        i = next(i for i in range(len(sa)) if sa[i] != sb[i])
        return str(_Path(path, i, "index")), sa[i], sb[i]
    if sa != sb:
        return str(path), sa, sb
    return None


def _diff_arrays(path: _Path, sa: Any, sb: Any, stack: list[tuple[_Path, Any, Any]]) -> tuple[str, Any, Any] | None:
    if sa.shape != sb.shape or sa.dtype != sb.dtype:
        return f"{path} (shape)", f"{sa.dtype}{list(sa.shape)}", f"{sb.dtype}{list(sb.shape)}"
    if sa.dtype.hasobject:
        fa, fb = sa.ravel().tolist(), sb.ravel().tolist()
        stack.extend((_Path(path, i, "index"), fa[i], fb[i]) for i in range(len(fa) - 1, -1, -1))
        return None
    if sa.tobytes() == sb.tobytes():
        return None
    positions = list(zip(*(axis.tolist() for axis in (sa != sb).nonzero()), strict=True)) if sa.ndim else [()]
    for index in positions:
        u, v = sa[index], sb[index]
        if not same_leaf(u, v):
            return str(_Path(path, ", ".join(map(str, index)), "index")), u, v
    return str(path), sa, sb  # only NaN payloads or signed zeros differ
