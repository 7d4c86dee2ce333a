"""Fault targets: the storage of a live machine a fault can change, entry by entry.

A target is one structure — a register file of one agent, a RAM region, a vector
register file lane by lane, Tensix's Dest — with a ``shape`` (its entries, as rows ×
columns …), the ``bits`` of each entry, and ``read(index)`` / ``write(index, value)``
on the flat entry index.  The generic ones come from the architecture description and
the machine built from it:

* ``AGENT.FILE`` (kind ``register``): every register file of every CPU agent that has
  storage (``RegisterFile.storage``), entries named as the assembler names them; the
  hard-wired zero register and read-only registers are listed but never faulted;
* ``mem.REGION`` (kind ``memory``; ``mem.SPACE.REGION`` outside the main space): every
  RAM region, one entry per byte, indexed by address;
* ``AGENT.insn`` (kind ``decode``): the instruction word the agent fetches next, as
  the decoder sees it — a fault here corrupts that one execution, not memory.

Architecture plugins add their own structures (vector lanes, accumulator cells,
CSRs) through the ``tessera_fault_targets(machine)`` hook: a list of dicts with the
keys of :data:`HOOK_KEYS` (docs/faults.md, docs/hooks.md).  It takes the machine, not
the architecture, because sizes are settings (rfPhoenix's ``lanes``) and ``read`` /
``write`` act on the live objects of that machine.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from tessera.errors import ConfigError, PluginError
from tessera.settings import format_size, parse_int

#: Kinds of the generic targets and of the repository's architectures' own; a plugin
#: may name others.  ``memory`` and ``decode`` targets are never an instruction's
#: destination (see :mod:`tessera_faults.triggers`).
KINDS = ("register", "csr", "lanes", "array", "memory", "decode")

#: What ``tessera_fault_targets`` items may hold: required, then optional keys.
HOOK_REQUIRED = ("name", "kind", "bits", "read", "write")
HOOK_OPTIONAL = ("shape", "entries", "agent", "doc", "names", "aliases", "exclude", "values")
HOOK_KEYS = HOOK_REQUIRED + HOOK_OPTIONAL

_NAME = re.compile(r"[A-Za-z_][\w.\-]*$")
_TEXT = re.compile(r"\s*([^\[\]\s]+?)\s*(?:\[([^\]]*)\])?\s*$")


@attrs.frozen(eq=False)
class Target:
    """One faultable structure of a machine (see the module doc)."""

    name: str
    kind: str
    shape: tuple[int, ...]
    bits: int
    read: Callable[[int], int]
    write: Callable[[int, int], None]
    agent: str | None = None
    doc: str = ""
    #: entry names (a register file's), and further names for entries
    names: tuple[str, ...] = ()
    aliases: Mapping[str, int] = attrs.field(factory=dict)
    #: entries that hold no state a fault could change (a hard-wired zero)
    exclude: frozenset[int] = frozenset()
    #: memory: the address of entry 0 (indices are written as addresses)
    base: int | None = None
    #: every entry at once, for comparing before and after an instruction
    values: Callable[[], Sequence[int]] | None = None
    #: the plugin that supplied it
    plugin: str = "faults"

    @property
    def entries(self) -> int:
        return math.prod(self.shape)

    @property
    def local(self) -> str:
        """The name without its agent (``x`` of ``hart0.x``)."""
        prefix = f"{self.agent}."
        return self.name[len(prefix):] if self.agent and self.name.startswith(prefix) else self.name

    def size_text(self) -> str:
        """``32 × 32 bits``, ``64×16 × 32 bits``; memory in bytes (``256M bytes``)."""
        if self.kind == "memory" and self.bits == 8:
            return f"{format_size(self.entries)} bytes"
        return f"{'×'.join(str(n) for n in self.shape)} × {self.bits} bits"

    def label(self, index: int) -> str:
        """How an entry is written: ``hart0.x[5]`` (and ``a0`` after it), ``mem.ram[0x100]``, ``dest[3,7]``."""
        if self.base is not None:
            return f"{self.name}[{self.base + index:#x}]"
        if len(self.shape) == 1:
            return f"{self.name}[{index}]"
        return f"{self.name}[{','.join(str(i) for i in self.unravel(index))}]"

    def unravel(self, index: int) -> tuple[int, ...]:
        out = []
        for n in reversed(self.shape):
            out.append(index % n)
            index //= n
        return tuple(reversed(out))

    def ravel(self, coords: Sequence[int], text: str) -> int:
        """The flat index of ``coords`` (one per dimension; an address for memory)."""
        if self.base is not None:
            if len(coords) != 1:
                raise ConfigError(f"target {text}: a memory entry is one address")
            index = coords[0] - self.base
            if not 0 <= index < self.entries:
                raise ConfigError(f"target {text}: address {coords[0]:#x} is outside {self.name} "
                                  f"({self.base:#x}..{self.base + self.entries - 1:#x})")
            return index
        if len(coords) == 1 and len(self.shape) > 1:  # a flat index
            coords = self.unravel(coords[0]) if 0 <= coords[0] < self.entries else (coords[0],) * len(self.shape)
        if len(coords) != len(self.shape):
            raise ConfigError(f"target {text}: {self.name} has {len(self.shape)} dimensions "
                              f"({self.size_text()}), not {len(coords)}")
        index = 0
        for i, (c, n) in enumerate(zip(coords, self.shape)):
            if not 0 <= c < n:
                raise ConfigError(f"target {text}: index {c} of dimension {i} is outside 0..{n - 1}")
            index = index * n + c
        return index

    def entry_index(self, name: str) -> int | None:
        """The index of an entry called ``name`` (a register name or alias), or ``None``."""
        key = name.lower()
        for i, n in enumerate(self.names):
            if n.lower() == key:
                return i
        for alias, i in self.aliases.items():
            if alias.lower() == key:
                return i
        return None

    def snapshot(self) -> list[int]:
        """Every entry's value now (``values`` when the supplier gave it)."""
        if self.values is not None:
            got = self.values()
            return [int(v) for v in (got.tolist() if hasattr(got, "tolist") else got)]
        return [self.read(i) for i in range(self.entries)]

    def describe(self) -> dict[str, Any]:
        """JSON-able: what ``tessera faults targets --json`` prints."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "agent": self.agent,
                               "shape": list(self.shape), "entries": self.entries, "bits": self.bits,
                               "plugin": self.plugin, "doc": self.doc}
        if self.base is not None:
            out["base"] = self.base
        if self.exclude:
            out["exclude"] = sorted(self.exclude)
        return out


# ------------------------------------------------------------------ the generic targets


def register_targets(machine: Any) -> list[Target]:
    """One target per register file with storage, per CPU agent."""
    out = []
    for agent in machine.cpus:
        for rf in agent.arch.register_files:
            if not rf.storage or rf.name not in agent.regs:
                continue
            regs, width = agent.regs[rf.name], rf.width
            exclude = set(rf.read_only)
            if rf.zero is not None:
                exclude.add(rf.zero)
            out.append(Target(
                f"{agent.name}.{rf.name}", "register", (rf.count,), width,
                read=_list_read(regs), write=_list_write(regs, width), agent=agent.name,
                doc=f"register file {rf.name} of {agent.name}", names=tuple(rf.names),
                aliases=dict(rf.aliases), exclude=frozenset(exclude), values=regs.copy))
    return out


def _list_read(regs: list[int]) -> Callable[[int], int]:
    return regs.__getitem__


def _list_write(regs: list[int], bits: int) -> Callable[[int, int], None]:
    mask = (1 << bits) - 1

    def write(index: int, value: int) -> None:
        regs[index] = value & mask

    return write


def memory_targets(machine: Any) -> list[Target]:
    """One target per RAM region of every address space (bytes, indexed by address)."""
    out = []
    for space_name, space in machine.spaces.items():
        for region in space.describe():
            if region["kind"] != "ram":
                continue
            prefix = "mem." if space_name == "main" else f"mem.{space_name}."
            start = region["start"]
            out.append(Target(
                prefix + region["name"], "memory", (region["size"],), 8,
                read=_byte_read(space, start), write=_byte_write(space, start),
                doc=f"RAM {region['name']} of address space {space_name}, "
                    f"{start:#x}..{start + region['size'] - 1:#x}", base=start))
    return out


def _byte_read(space: Any, start: int) -> Callable[[int], int]:
    def read(index: int) -> int:
        return space.read_bytes(start + index, 1)[0]

    return read


def _byte_write(space: Any, start: int) -> Callable[[int, int], None]:
    def write(index: int, value: int) -> None:
        space.write_bytes(start + index, bytes([value & 0xFF]), force=True)  # drops code decoded there

    return write


def decode_targets(machine: Any) -> list[Target]:
    """Per CPU agent, the instruction word it fetches next (one entry of the word's bits)."""
    out = []
    for agent in machine.cpus:
        out.append(Target(
            f"{agent.name}.insn", "decode", (1,), agent.arch.word_bits,
            read=_next_word(agent), write=_not_written, agent=agent.name,
            doc=f"the instruction word {agent.name} decodes next (corrupts that execution only)"))
    return out


def _next_word(agent: Any) -> Callable[[int], int]:
    def read(index: int) -> int:
        return int(agent.space.fetch(agent.pc, agent.arch.word_bytes)[0])

    return read


def _not_written(index: int, value: int) -> None:
    raise ConfigError("the instruction word at decode is corrupted by the injector, not written")


# ------------------------------------------------------------------ plugins' targets


def plugin_targets(machine: Any) -> list[Target]:
    """What the plugins' ``tessera_fault_targets`` hooks add (checked; a bad item is a PluginError)."""
    host = getattr(machine, "host", None)
    if host is None:
        return []
    out = []
    for plugin, items in host.call_each("tessera_fault_targets", isolate=False, machine=machine):
        for item in items or ():
            out.append(from_hook(item, plugin))
    return out


def from_hook(item: Any, plugin: str) -> Target:
    """A :class:`Target` from one item a ``tessera_fault_targets`` hook returned."""
    if not isinstance(item, Mapping):
        raise PluginError(f"tessera_fault_targets returned {type(item).__name__}, not a dict", plugin=plugin)
    missing = [k for k in HOOK_REQUIRED if k not in item]
    unknown = sorted(set(item) - set(HOOK_KEYS))
    name = item.get("name")
    if missing or unknown:
        what = f"misses {', '.join(missing)}" if missing else f"has unknown keys {', '.join(unknown)}"
        raise PluginError(f"fault target {name!r} {what}", plugin=plugin)
    if not isinstance(name, str) or not _NAME.match(name):
        raise PluginError(f"fault target name {name!r} is not a name (letters, digits, _ . -)", plugin=plugin)
    shape = item.get("shape", (item["entries"],) if "entries" in item else None)
    try:
        shape = tuple(int(n) for n in shape)  # type: ignore[union-attr]
        bits = int(item["bits"])
    except (TypeError, ValueError):
        raise PluginError(f"fault target {name}: shape (or entries) and bits must be whole numbers",
                          plugin=plugin) from None
    if not shape or min(shape) < 1 or not 1 <= bits <= 4096:
        raise PluginError(f"fault target {name}: needs entries >= 1 and 1..4096 bits", plugin=plugin)
    if not (callable(item["read"]) and callable(item["write"])):
        raise PluginError(f"fault target {name}: read and write must be callables", plugin=plugin)
    return Target(name, str(item["kind"]), shape, bits, read=item["read"], write=item["write"],
                  agent=item.get("agent"), doc=str(item.get("doc", "")),
                  names=tuple(item.get("names", ())), aliases=dict(item.get("aliases", {})),
                  exclude=frozenset(item.get("exclude", ())), values=item.get("values"), plugin=plugin)


# ------------------------------------------------------------------ all of them, and names


def targets_of(machine: Any) -> dict[str, Target]:
    """Every fault target of ``machine`` by name: registers, plugins' structures, memory, decode."""
    out: dict[str, Target] = {}
    for target in register_targets(machine) + plugin_targets(machine) + memory_targets(machine) \
            + decode_targets(machine):
        if target.name in out:
            other = out[target.name]
            raise PluginError(f"fault target {target.name} is supplied by both {other.plugin} and "
                              f"{target.plugin}", plugin=target.plugin)
        out[target.name] = target
    return out


@attrs.frozen
class Entry:
    """A resolved target text: the structure, and the entry when the text names one."""

    target: Target
    index: int | None = None

    def label(self) -> str:
        return self.target.label(self.index) if self.index is not None else self.target.name


def resolve(machine: Any, text: str, agent: str | None = None,
            targets: Mapping[str, Target] | None = None) -> Entry:
    """The target (and entry) ``text`` names, on ``machine``.

    ``NAME`` or ``NAME[I]`` / ``NAME[I,J]`` (``mem.ram[0x100]``: an address), ``NAME[ENTRY]``
    (an entry's name: ``hart0.csr[mstatus]``), ``mem[ADDR]`` (the RAM region holding ADDR),
    a register by name (``hart0.a0``, ``x5``), or a
    name without its agent (``x[5]``, ``insn``), which means ``agent``'s — the fault's
    agent, else the first CPU agent.  Anything else is a :class:`ConfigError`.
    """
    targets = targets_of(machine) if targets is None else targets
    found = _TEXT.match(text or "")
    if found is None:
        raise ConfigError(f"target {text!r}: write NAME, NAME[INDEX] or a register name")
    base, index_text = found.group(1), found.group(2)
    agent = agent or (machine.cpus[0].name if machine.cpus else None)
    target = targets.get(base)
    if target is None and agent is not None:
        target = targets.get(f"{agent}.{base}")
    if target is not None and index_text is not None and target.names:
        named = target.entry_index(index_text.strip())  # an entry's name before a program symbol
        if named is not None:
            return Entry(target, named)
    coords = _coords(text, index_text, machine.symbols) if index_text is not None else None
    if target is None and base == "mem" and coords:
        target = _memory_at(targets, coords[0], text)
    if target is not None:
        return Entry(target, None if coords is None else target.ravel(coords, text))
    if coords is None:
        owner, _, reg = base.rpartition(".")
        for t in targets.values():
            if t.agent == (owner or agent) and t.names:
                i = t.entry_index(reg)
                if i is not None:
                    return Entry(t, i)
    raise ConfigError(f"unknown fault target {text!r} on {machine.arch.name} "
                      f"(see tessera faults targets --arch {machine.arch.name})")


def _coords(text: str, index_text: str, symbols: Mapping[str, int]) -> tuple[int, ...]:
    """Numbers separated by commas; a symbol of the loaded program (``msg``, ``msg+3``) is one too."""
    out = []
    for part in index_text.split(","):
        name, plus, offset = part.strip().partition("+")
        try:
            out.append(parse_int(part))
            continue
        except ValueError:
            pass
        try:
            out.append(int(symbols[name.strip()]) + (parse_int(offset) if plus else 0))
        except (KeyError, ValueError):
            raise ConfigError(f"target {text}: the index must be numbers (or symbols) separated by "
                              "commas") from None
    return tuple(out)


def _memory_at(targets: Mapping[str, Target], address: int, text: str) -> Target:
    for t in targets.values():
        if t.kind == "memory" and t.name.count(".") == 1 and t.base is not None \
                and t.base <= address < t.base + t.entries:
            return t
    raise ConfigError(f"target {text}: no RAM of the main address space holds {address:#x}")
