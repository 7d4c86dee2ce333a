"""A journal of a machine's memory writes, and a refusal of accesses that must not be repeated (check mode).

Check mode (:mod:`tessera.engine.check`) runs a block, undoes what it did and repeats
it by stepping.  Memory is too big to copy per block, so its writes are journalled
instead: a :class:`MemoryTap` is installed, only for the length of one run, as
instance attributes of the regions of every address space (so snapshots and the
normal engines never see it).  RAM and ROM writes append ``(region, offset, old
bytes)`` and go through; :meth:`MemoryTap.undo` writes the old bytes back, newest
first, through ``RAM.poke`` (so decoded code they overlap is dropped, as for any
write).  A device access (MMIO) and an access to memory a plugin watches have effects
outside the machine's state: they raise :class:`Unrepeatable` *before* anything
happens, and check mode has the run loop step that instruction once, for real.
"""

from __future__ import annotations

import types
from typing import Any

from tessera.memory.regions import MMIO, RAM, Watched

__all__ = ["MemoryTap", "Unrepeatable", "memory_diff"]

_NONE = object()


class Unrepeatable(BaseException):
    """Raised by the tap before an access that must happen exactly once.

    A ``BaseException`` so that semantics catching ``Exception`` cannot swallow it.
    """

    def __init__(self, region: Any, access: str, offset: Any) -> None:
        super().__init__(access)
        self.region = region
        self.access = access
        self.address = region.start + offset if isinstance(offset, int) else region.start

    def describe(self) -> str:
        what = "device" if isinstance(getattr(self.region, "inner", self.region), MMIO) else "watched memory"
        return f"accesses {what} {self.region.name!r} ({self.access} at {self.address:#x})"


class MemoryTap:
    """Journals the RAM and ROM writes of ``machine``'s address spaces; refuses device and watched accesses."""

    _DEVICE_METHODS = ("read", "write", "read_bytes", "write_bytes", "poke")
    _WATCHED_METHODS = ("read", "write")

    def __init__(self, machine: Any) -> None:
        self.machine = machine
        self.log: list[tuple[Any, int, bytes]] = []
        self._plan: list[tuple[Any, str, Any, Any]] = []
        self._planned_for: list[Any] = []
        self._installed = False

    def mark(self) -> int:
        return len(self.log)

    def install(self) -> None:
        """Put the journalling and refusing methods on the regions (until :meth:`uninstall`)."""
        if self._installed:
            return
        layout = [space.regions for space in self.machine.spaces.values()]
        if len(layout) != len(self._planned_for) or any(a is not b for a, b in zip(layout, self._planned_for,
                                                                                     strict=False)):
            self._planned_for = layout
            self._plan = self._make_plan()
        for region, name, wrapper, _previous in self._plan:
            region.__dict__[name] = wrapper
        self._installed = True
        self._refresh_windows()  # blocks must not write the journalled RAM directly

    def uninstall(self) -> None:
        if not self._installed:
            return
        for region, name, _wrapper, previous in self._plan:
            if previous is _NONE:
                region.__dict__.pop(name, None)
            else:
                region.__dict__[name] = previous
        self._installed = False
        self._refresh_windows()

    def _refresh_windows(self) -> None:
        """Let each space choose its RAM window again (:meth:`AddressSpace.refresh_window
        <tessera.memory.space.AddressSpace.refresh_window>`): none is direct while journalled."""
        for space in self.machine.spaces.values():
            space.refresh_window()

    def _make_plan(self) -> list[tuple[Any, str, Any, Any]]:
        plan: list[tuple[Any, str, Any, Any]] = []
        for space in self.machine.spaces.values():
            for mapped in space.regions:
                base = mapped.inner if isinstance(mapped, Watched) else mapped
                targets: list[tuple[Any, str, Any]] = []
                if mapped is not base:
                    targets += [(mapped, name, _refuse(mapped, name)) for name in self._WATCHED_METHODS]
                if isinstance(base, MMIO):
                    targets += [(base, name, _refuse(base, name)) for name in self._DEVICE_METHODS]
                elif isinstance(base, RAM):
                    targets += [(base, "write", self._journal_write(base)), (base, "poke", self._journal_poke(base))]
                plan += [(region, name, wrapper, region.__dict__.get(name, _NONE))
                         for region, name, wrapper in targets]
        return plan

    def _journal_write(self, region: Any) -> Any:
        inner = region.__dict__.get("write") or types.MethodType(type(region).write, region)
        data, log = region.data, self.log

        def write(offset: int, size: int, value: int) -> None:
            log.append((region, offset, bytes(data[offset:offset + size])))
            inner(offset, size, value)
        return write

    def _journal_poke(self, region: Any) -> Any:
        inner = region.__dict__.get("poke") or types.MethodType(type(region).poke, region)
        data, log = region.data, self.log

        def poke(offset: int, blob: bytes) -> None:
            log.append((region, offset, bytes(data[offset:offset + len(blob)])))
            inner(offset, blob)
        return poke

    def undo(self, mark: int) -> None:
        """Write back the bytes every write since ``mark`` overwrote, newest first."""
        log = self.log
        while len(log) > mark:
            region, offset, old = log.pop()
            RAM.poke(region, offset, old)

    def forget(self, mark: int) -> None:
        """Keep the writes since ``mark`` (they are the run's), dropping their journal entries."""
        del self.log[mark:]

    def effect(self, mark: int) -> dict[tuple[Any, int], tuple[int, int]]:
        """``(region, offset) -> (byte before, byte now)`` for every byte written since ``mark``."""
        first: dict[tuple[Any, int], int] = {}
        for region, offset, old in self.log[mark:]:
            for i, byte in enumerate(old):
                first.setdefault((region, offset + i), byte)
        return {(region, offset): (old, region.data[offset]) for (region, offset), old in first.items()}


def _refuse(region: Any, access: str) -> Any:
    def refuse(offset: Any = None, *_args: Any, **_kw: Any) -> Any:
        raise Unrepeatable(region, access, offset)
    return refuse


def memory_diff(fast: dict[tuple[Any, int], tuple[int, int]],
                step: dict[tuple[Any, int], tuple[int, int]]) -> tuple[str, int, int] | None:
    """The lowest byte two runs from the same memory left different: ``(where, byte, byte)``."""
    if fast == step:
        return None
    differing = []
    for key in fast.keys() | step.keys():
        before = (fast.get(key) or step[key])[0]
        a = fast[key][1] if key in fast else before
        b = step[key][1] if key in step else before
        if a != b:
            region, offset = key
            differing.append((region.start + offset, region.name, region, a, b))
    if not differing:
        return None
    address, _name, region, a, b = min(differing, key=lambda d: (d[0], d[1]))
    space = getattr(region.space, "name", "")
    where = f"memory byte {address:#010x}" + (f" (address space {space})" if space and space != "main" else "")
    return where, a, b
