"""The extension point: other plugins add instructions, devices and agents to a RISC-V hart.

A :class:`RiscvExtension` bundles

* ``fields`` and ``encodings`` — extra :class:`~tessera.isa.Field` and
  :class:`~tessera.isa.Encoding` rows, typically in the custom-0..3 major opcodes
  (:data:`~tessera_riscv.encoding.CUSTOM_0` …) or, for a coprocessor whose words are
  pushed through the host's instruction stream (Tensix), words whose low two bits are
  not ``11``.  Rows may use the base fields (``rd``, ``rs1``, ``rs2``, ``imm`` …) by name.
  Their semantic functions get the hart (``hart.x``, ``hart.space``, ``hart.machine``)
  and the decoded instruction (``ins.address``, operands), exactly like the base ones,
  and may block the hart by raising :class:`~tessera.control.WaitFor` through a sync
  object (``machine.sync["q"].push(hart, value)`` on a full FIFO parks the hart);
* ``build(machine)`` — called after the board is built (the hart is ``machine.agent("hart0")``)
  to add agents and sync objects;
* ``devices`` — ``(name, start, size, device)`` MMIO windows; ``device`` is a device object
  (copied for each machine) or a factory ``device(machine)``;
* ``timing`` — extra timing classes for the rows (``{"acc": 2}``);
* ``settings`` — the extension's own configuration keys, a
  :class:`~tessera.settings.Settings` whose keys start with ``<name>.``; the core then
  checks them like the base keys.  Without it, keys ``<name>.*`` pass through unchecked
  for the extension's ``build`` to read.

:func:`make_arch` composes extensions with the base table of one XLEN into an
:class:`~tessera.isa.Architecture`; a row that can match the same word as another
row (of the base table or of another extension) is a :class:`~tessera.errors.ConfigError`
naming both.  Configuration keys starting with ``<extension name>.`` are left to the
extension (the board refuses other unknown keys).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from tessera.errors import ConfigError
from tessera.isa import Architecture, Encoding, Field
from tessera.settings import Settings
from tessera_riscv import encoding, fields, traps, uses
from tessera_riscv.board import build, build_board
from tessera_riscv.config import riscv_settings
from tessera_riscv.hart import dump, dump_text

EM_RISCV = 0xF3


@attrs.frozen
class RiscvExtension:
    """Instructions, devices and agents another plugin adds to the RISC-V host."""

    name: str
    fields: tuple[Field, ...] = attrs.field(default=(), converter=tuple)
    encodings: tuple[Encoding, ...] = attrs.field(default=(), converter=tuple)
    build: Callable[[Any], None] | None = None
    devices: tuple[tuple[str, int, int, Any], ...] = attrs.field(default=(), converter=tuple)
    timing: Mapping[str, int] = attrs.field(factory=dict)
    settings: Settings | None = None

    def __attrs_post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").replace("-", "").isalnum():
            raise ConfigError(f"extension name {self.name!r} must be alphanumeric (with _ -)")
        if self.settings is not None:
            for s in self.settings.all_settings():
                if not s.name.startswith(f"{self.name}."):
                    raise ConfigError(f"extension {self.name}: setting {s.name!r} must start with "
                                      f"'{self.name}.'")
        for dev in self.devices:
            if len(dev) != 4:
                raise ConfigError(f"extension {self.name}: a device is (name, start, size, device), "
                                  f"not {dev!r}")


class ExtendedBoard:
    """``Architecture.build`` of a composed architecture (a class, so the record pickles)."""

    def __init__(self, extensions: tuple[RiscvExtension, ...]) -> None:
        self.extensions = extensions

    def __call__(self, machine: Any) -> None:
        build_board(machine, self.extensions)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExtendedBoard) and other.extensions == self.extensions

    def __hash__(self) -> int:
        return hash(tuple(e.name for e in self.extensions))

    def __repr__(self) -> str:
        return f"ExtendedBoard({', '.join(e.name for e in self.extensions)})"


def _describe(owner: str, enc: Encoding) -> str:
    return f"{owner} row {enc.mnemonic!r} (match {enc.match:#010x}, mask {enc.mask:#010x})"


def _overlap(a: Encoding, b: Encoding) -> bool:
    """Can one word match both rows?"""
    return not (a.match ^ b.match) & a.mask & b.mask


def compose(xlen: int, extensions: Iterable[RiscvExtension]) -> tuple[tuple[Field, ...],
                                                                      tuple[Encoding, ...]]:
    """The fields and encodings of the base table plus ``extensions``, checked for clashes.

    Each extension row gains the ``misaligned-fetch`` variant every RISC-V row declares
    (:func:`tessera_riscv.encoding.with_fetch_trap`): fetched from an address that is
    not 4-byte aligned, any instruction takes the instruction-address-misaligned trap.
    """
    field_list = list(fields.fields(xlen))
    by_name = {f.name: ("the base table", f) for f in field_list}
    rows: list[tuple[str, Encoding]] = [("the base table", e) for e in encoding.encodings(xlen)]
    names = set()
    for ext in extensions:
        if ext.name in names:
            raise ConfigError(f"extension {ext.name!r} is given twice")
        names.add(ext.name)
        owner = f"extension {ext.name}"
        for f in ext.fields:
            seen = by_name.get(f.name)
            if seen is not None:
                if seen[1] != f:
                    raise ConfigError(f"{owner}: field {f.name!r} differs from the field of that name "
                                      f"in {seen[0]}")
                continue
            by_name[f.name] = (owner, f)
            field_list.append(f)
        for enc in ext.encodings:
            for other_owner, other in rows:
                if _overlap(enc, other):
                    raise ConfigError(f"{_describe(owner, enc)} conflicts with "
                                      f"{_describe(other_owner, other)}: both match word "
                                      f"{enc.match | other.match:#010x}")
            rows.append((owner, encoding.with_fetch_trap(enc)))
    return tuple(field_list), tuple(enc for _, enc in rows)


def make_arch(name: str, xlen: int, extensions: Iterable[RiscvExtension] = (),
              **overrides: Any) -> Architecture:
    """An RV32IM/RV64IM (+ Zicsr, Zba, Zbb, Zaamo) architecture with ``extensions``.

    ``overrides`` replace fields of the :class:`~tessera.isa.Architecture` record
    (``description``, ``quantum``, ``examples`` …); ``timing`` is merged into the base
    timing classes rather than replacing them.
    """
    if xlen not in (32, 64):
        raise ConfigError(f"xlen must be 32 or 64, not {xlen}")
    exts = tuple(extensions)
    for ext in exts:
        if not isinstance(ext, RiscvExtension):
            raise ConfigError(f"{ext!r} is not a RiscvExtension")
    field_list, rows = compose(xlen, exts)
    timing = dict(encoding.TIMING)
    for ext in exts:
        timing.update(ext.timing)
    timing.update(overrides.pop("timing", {}))
    described = f"RISC-V RV{xlen}IM + Zicsr, Zba, Zbb, Zaamo; machine mode, Linux-numbered system calls"
    if exts:
        described += "; extensions: " + ", ".join(e.name for e in exts)
    capabilities = {"traps", "interrupts", "mmio", "syscalls", "zicsr", "zba", "zbb", "zaamo"}
    if exts:
        capabilities.add("extensions")
    values: dict[str, Any] = dict(
        name=name,
        description=described,
        word_bits=32,
        endian="little",
        address_bits=xlen,
        register_files=(fields.register_file(xlen),),
        fields=field_list,
        encodings=rows,
        timing=timing,
        capabilities=capabilities,
        elf_machine=EM_RISCV,
        elf_class=xlen,
        reset_pc=0x10000,
        quantum=1024,
        build=ExtendedBoard(exts) if exts else build,
        illegal=traps.illegal,
        take_trap=traps.take_trap,
        memory_trap=traps.memory_trap,
        dump=dump,
        dump_text=dump_text,
        refine=encoding.refine,
        register_uses=uses.register_uses,  # base rows exactly; system and extension rows: unknown
        control_flow="flags",  # rows declare branch/jump/trap/halt/wait (tessera_riscv.semantics.*.ROWS)
        comment_chars="#",
        assembler="tessera_riscv.asm:RiscvAssembler",
        settings=riscv_settings(xlen, exts),
        cli_flags={"trap-misaligned": ("misaligned", "trap",
                                       "misaligned loads and stores trap (mcause 4/6)"),
                   "no-syscalls": ("syscalls", False, "ecall traps (mcause 11) instead of being a "
                                   "system call"),
                   "no-echo": ("echo", False, "do not copy the program's output to stdout/stderr")},
    )
    unknown = set(overrides) - {f.name for f in attrs.fields(Architecture)}
    if unknown:
        raise ConfigError(f"make_arch: unknown Architecture field(s) {', '.join(sorted(unknown))}")
    values.update(overrides)
    return Architecture(**values)
