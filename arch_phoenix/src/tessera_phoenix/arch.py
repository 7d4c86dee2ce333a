"""The rfPhoenix :class:`~tessera.isa.Architecture` record, assembled from its parts."""

from __future__ import annotations

from typing import Any

from tessera.isa import Architecture, CacheSpec
from tessera_phoenix import exceptions
from tessera_phoenix.board import build
from tessera_phoenix.config import settings
from tessera_phoenix.dumptext import dump_text
from tessera_phoenix.encoding import ENCODINGS, refine
from tessera_phoenix.examples import EXAMPLES
from tessera_phoenix.fields import FIELDS
from tessera_phoenix.registers import GPR, REG, RESET_IP
from tessera_phoenix.timing import TIMING


def dump(thread: Any) -> dict[str, Any]:
    return thread.snapshot_state()


def _assembler() -> type:
    from tessera_phoenix.asm import PhoenixAssembler

    return PhoenixAssembler


PHOENIX = Architecture(
    name="phoenix",
    description="Robert Finch's rfPhoenix GPGPU core: 48-bit ISA, 4 hardware threads, vectors, MMU",
    word_bits=48,
    endian="little",
    address_bits=32,
    register_files=(GPR, REG),
    fields=FIELDS,
    encodings=ENCODINGS,
    timing=TIMING,
    capabilities={"multi-agent", "vectors", "traps", "mmu", "fp32"},
    reset_pc=RESET_IP,
    # no official e_machine exists: only ELFs naming no machine (EM_NONE) load
    # (docs/phoenix.md "Programs"); --any-elf-machine forces others
    elf_machine=0,
    elf_class=32,
    quantum=1,
    solo_quantum=1024,
    build=build,
    illegal=exceptions.illegal,
    take_trap=exceptions.take_trap,
    memory_trap=exceptions.memory_trap,
    dump=dump,
    dump_text=dump_text,
    refine=refine,
    control_flow="flags",  # encoding.py's rows declare branch/jump/trap/halt flags
    examples=EXAMPLES,
    assembler=_assembler(),
    comment_chars=";",
    # spec 5.2 (timing only: the functional emulator has one coherent memory)
    caches=(CacheSpec("L1I", 32 * 1024, 4, 32, latency=2, policy="4-way, 256 sets"),
            CacheSpec("L1D", 64 * 1024, 4, 32, latency=2, policy="4-way, write-back (HDL modified bit)")),
    cli_flags={"no-pma": ("pma", False, "disable PMA checks, same as --set pma=false")},
    settings=settings(),
)
