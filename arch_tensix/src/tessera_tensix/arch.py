"""The Tensix architecture records: Blackhole (``tensix``) and Wormhole (``tensix-wh``)."""

from __future__ import annotations

from typing import Any

from tessera.isa import Architecture
from tessera_tensix import isa
from tessera_tensix.board import build
from tessera_tensix.config import settings
from tessera_tensix.timing import TIMING


def dump(thread: Any) -> dict[str, Any]:
    out = thread.state_extra()
    if thread.tid == 0:  # the shared vector unit and config once, with thread 0
        out["core"] = thread.core.state()
    return out


def _arch(name: str, chip: str, description: str) -> Architecture:
    tables = isa.tables(chip)
    return Architecture(
        name=name,
        description=description,
        word_bits=32,
        endian="little",
        address_bits=32,
        register_files=(),
        fields=tables.fields,
        encodings=tables.encodings,
        timing=TIMING,
        # bulk-data: the unpackers, packers and mover read and write L1 in bulk (whole
        # tiles), which memory watches do not see (docs/tensix.md, docs/conformance.md)
        capabilities={"sfpu", "dest", "direct-mode", "sync", "multi-agent", "bulk-data"},
        reset_pc=0,
        # direct mode runs Tensix words, not the RISC-V code of a baby-core ELF
        # (EM_RISCV): only EM_NONE ELFs load (docs/tensix.md "ELF files")
        elf_machine=0,
        elf_class=32,
        quantum=1,
        solo_quantum=4096,
        build=build,
        illegal=tables.illegal,
        dump=dump,
        examples=tables.examples,
        assembler=tables.assembler,
        disassembler=tables.disassembler,
        # Tensix threads never branch: the rows declare the control flow (END halts,
        # STALLWAIT & co. wait), checked against the semantic functions by the
        # control-flags conformance check
        control_flow="flags",
        cli_options={"dest-in": ("dest_in", "load Dest (1024x16 uint16 .npy) before the run"),
                     "dest-out": ("dest_out", "save Dest (.npy) when the run ends"),
                     "l1": ("l1", "load L1 from .npy: ADDR[:FORMAT]=FILE"),
                     "l1-out": ("l1_out", "save L1 to .npy when the run ends: ADDR:SHAPE:FORMAT=FILE")},
        cli_flags={"lenient": ("lenient", True, "continue with hardware-like behaviour where a rule is broken")},
        settings=settings(chip),
    )


TENSIX_BH = _arch("tensix", "bh", "Tenstorrent Tensix (Blackhole): SFPU, Dest, scalar unit; direct mode")
TENSIX_WH = _arch("tensix-wh", "wh", "Tenstorrent Tensix (Wormhole B0 variant)")
