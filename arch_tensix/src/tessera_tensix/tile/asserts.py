"""A baby core's ``ebreak``: tt-llk's LLK_ASSERT failing, reported with where it failed.

tt-llk's test builds define ``ENABLE_LLK_ASSERT`` and ``ENV_LLK_INFRA``, under which
``LLK_ASSERT(cond, msg)`` (``common/llk_assert.h``) executes ``ebreak`` when ``cond`` is
false; a few tt-llk headers also call ``__builtin_trap()``, which gcc compiles to
``ebreak`` as well.  The vendor firmware installs no trap handler (``mtvec`` stays 0),
so the breakpoint exception (RISC-V privileged spec, ``mcause`` 3) stops the run as an
:class:`~tessera.errors.UnhandledTrap` — exit status 68, as before — and
:func:`breakpoint_error` gives it a message that says what happened instead of
``breakpoint (cause 3 ...) and no handler``: the core, the failed assertion's source
text when the ELF's line information leads to it, the function and ``file:line``
(and the kernel's own line it was inlined into), from :mod:`.sourcepos`.
"""

from __future__ import annotations

import re
from typing import Any

from tessera.errors import UnhandledTrap
from tessera_tensix.tile.sourcepos import Place, locate

_ASSERT = re.compile(r"^\s*(LLK_ASSERT|LLK_PANIC)\s*\(")


def elf_of(hart: Any) -> str | None:
    """The ELF the kernel manifest loaded into ``hart`` (None for a run of one ELF)."""
    machine = getattr(hart, "machine", None)
    manifest = machine.ext.get("tensix_kernel") if machine is not None else None
    cores = getattr(manifest, "cores", None) or {}
    return cores.get(hart.name)


def describe(core: str, place: Place | None) -> str:
    """The report's reason: what stopped ``core`` and where."""
    if place is None:
        return (f"{core} stopped at an ebreak: the kernel's LLK_ASSERT failed (tt-llk's LLK_ASSERT and "
                "__builtin_trap stop a core this way; no debug information says which)")
    inner, outer = place.inner, place.outer
    where = inner.where
    around = f" in {inner.function}" if inner.function else ""
    if len(place.frames) > 1 and outer.function and (outer.where or outer.function != inner.function):
        where += f", inlined into {outer.function}" + (f" at {outer.where}" if outer.where else "")
    where = f" ({where})" if where else ""
    statement = place.statement()
    if statement and _ASSERT.match(statement):
        text = statement.rstrip(";")
        text = text if len(text) <= 160 else text[:157] + "..."
        return f"{core}: the kernel's LLK_ASSERT failed: {text}{around}{where}"
    if statement and "__builtin_trap" in statement:
        return f"{core}: the kernel reached __builtin_trap(){around}{where}"
    return f"{core} stopped at an ebreak (how tt-llk's LLK_ASSERT fails){around}{where}"


def take_trap(hart: Any, trap: Any) -> bool:
    """The tile's ``Architecture.take_trap``: the RISC-V plugin's (enter the handler at
    ``mtvec``); a breakpoint no handler takes — the vendor firmware installs none, so this
    is tt-llk's failed LLK_ASSERT — stops the run with :func:`breakpoint_error`'s report."""
    from tessera_riscv.traps import BREAKPOINT
    from tessera_riscv.traps import take_trap as riscv_take_trap

    if riscv_take_trap(hart, trap):
        return True
    if trap.cause != BREAKPOINT:
        return False        # the engine reports it as any unhandled trap
    raise breakpoint_error(hart, trap)


def breakpoint_error(hart: Any, trap: Any) -> UnhandledTrap:
    """The unhandled breakpoint ``trap`` of ``hart`` as an LLK_ASSERT report (same class and
    exit status as any unhandled trap)."""
    pc = hart.pc
    word = trap.info.get("word")
    if word is None:
        word = int.from_bytes(hart.space.read_bytes(pc, 4), "little")
    return UnhandledTrap(describe(hart.name, locate(elf_of(hart), pc)), cause=trap.cause, agent=hart.name,
                         pc=pc, word=word)
