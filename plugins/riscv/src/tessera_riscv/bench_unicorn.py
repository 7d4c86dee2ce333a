"""The ``mark`` workload's ceiling: the same ELF in Unicorn, QEMU's JIT as a library.

Unicorn (``pip install unicorn``; in ``requirements-dev.txt``, which
``requirements-bench.txt`` includes) translates RISC-V to host machine code, so it is
the ceiling a Python engine is measured against, not a peer it should match.  Its
RV32 mode runs the program's memory image — the loadable segments as a Tessera
machine loaded them, read back through the public ``space.read_bytes`` — with the
stack pointer at the top of the same 1 MiB of RAM.  An interrupt hook serves the two
Linux system calls mark.c makes: ``write`` (the bytes are kept, like Tessera's
``riscv_io``) and ``exit`` (the emulation stops).  A code hook on ``mark_warm`` alone
stops the run once there, so the rest is timed as steady state exactly as on
Tessera's engines.

Unicorn does not count instructions without a hook on every block, which would
slow it down many times over, so :meth:`UnicornMark.count` runs the program once,
untimed, with a block hook (every instruction is 4 bytes: RV32IM has no compressed
instructions) and the timed runs reuse the counts; the workload checks them against
what Tessera's engines retired.
"""

from __future__ import annotations

import importlib.metadata
import time
from typing import Any

import attrs

from tessera.bench.model import BenchFailure, Skip

INSTALL = "pip install unicorn (requirements-dev.txt has it)"
SYS_WRITE, SYS_EXIT = 64, 93
NOWHERE = 0xFFFF_FFFF  # emu_start's `until`: no RV32 instruction lives at an odd address


def unicorn_version() -> str | None:
    """The installed unicorn's version, or ``None``."""
    try:
        return importlib.metadata.version("unicorn")
    except importlib.metadata.PackageNotFoundError:
        return None


def import_unicorn() -> Any:
    """The ``unicorn`` module, or :class:`Skip` (the one-line note) when it is missing or broken."""
    try:
        import unicorn
    except ImportError:
        raise Skip(f"unicorn is not installed, so there is no ratio to it: {INSTALL}") from None
    except Exception as exc:  # noqa: BLE001 - a broken install is a note, not a failure
        raise Skip(f"unicorn does not import ({type(exc).__name__}: {exc}): {INSTALL}") from None
    return unicorn


@attrs.frozen
class MemoryImage:
    """A loaded program as plain data: where to start, what bytes go where, the symbols."""

    entry: int
    segments: tuple[tuple[int, bytes], ...]
    symbols: dict[str, int]
    ram: int


@attrs.define
class UnicornOutcome:
    """One timed run: seconds before and after the warm-up stop, what the program did."""

    warmup_seconds: float
    steady_seconds: float
    exit_code: int
    stdout: bytes
    result: int


class UnicornMark:
    """Runs a :class:`MemoryImage` in Unicorn, stopping once at ``warm_symbol``."""

    def __init__(self, image: MemoryImage, warm_symbol: str = "mark_warm") -> None:
        self.unicorn = import_unicorn()
        from unicorn import riscv_const

        self.rc = riscv_const
        self.image = image
        self.warm = image.symbols[warm_symbol]
        self._counts: tuple[int, int] | None = None

    # ---- one emulator, its hooks

    def _emulator(self, state: dict[str, Any]) -> Any:
        uc_mod, rc = self.unicorn, self.rc
        uc = uc_mod.Uc(uc_mod.UC_ARCH_RISCV, uc_mod.UC_MODE_RISCV32)
        uc.mem_map(0, self.image.ram)
        for address, data in self.image.segments:
            uc.mem_write(address, data)
        uc.reg_write(rc.UC_RISCV_REG_SP, self.image.ram - 16)

        def system_call(uc: Any, intno: int, _data: Any) -> None:
            number = uc.reg_read(rc.UC_RISCV_REG_A7)
            if number == SYS_WRITE:  # the PC is already past the ecall
                buf, count = uc.reg_read(rc.UC_RISCV_REG_A1), uc.reg_read(rc.UC_RISCV_REG_A2)
                state["stdout"].extend(uc.mem_read(buf, count))
                uc.reg_write(rc.UC_RISCV_REG_A0, count)
            elif number == SYS_EXIT:
                state["exit"] = uc.reg_read(rc.UC_RISCV_REG_A0) & 0xFF
                uc.emu_stop()
            else:
                state["error"] = f"interrupt {intno}, a7={number}"
                uc.emu_stop()

        def warm(uc: Any, address: int, size: int, _data: Any) -> None:
            if not state["warmed"]:
                state["warmed"] = True
                uc.emu_stop()

        uc.hook_add(uc_mod.UC_HOOK_INTR, system_call)
        uc.hook_add(uc_mod.UC_HOOK_CODE, warm, begin=self.warm, end=self.warm)
        return uc

    def _start(self, uc: Any, pc: int, state: dict[str, Any]) -> None:
        try:
            uc.emu_start(pc, NOWHERE)
        except self.unicorn.UcError as exc:
            raise BenchFailure(f"unicorn stopped at {uc.reg_read(self.rc.UC_RISCV_REG_PC):#x}: {exc}") from exc
        if state.get("error"):
            raise BenchFailure(f"unicorn: unexpected {state['error']}")

    # ---- counting (untimed) and timed runs

    def count(self) -> tuple[int, int]:
        """``(instructions before mark_warm, instructions in all)``, counted once with a block hook."""
        if self._counts is None:
            state: dict[str, Any] = {"stdout": bytearray(), "exit": None, "warmed": False}
            blocks = [0, 0, 0]   # instructions so far; the last block's address and size

            def block(uc: Any, address: int, size: int, _data: Any) -> None:
                blocks[0] += size // 4
                blocks[1], blocks[2] = address, size // 4

            uc = self._emulator(state)
            uc.hook_add(self.unicorn.UC_HOOK_BLOCK, block)
            self._start(uc, self.image.entry, state)
            if not state["warmed"]:
                raise BenchFailure("unicorn never reached mark_warm")
            # the block starting at mark_warm was counted on entry, but the stop came before
            # its first instruction: resuming enters (and counts) it again
            if blocks[1] == self.warm:
                blocks[0] -= blocks[2]
            warm = blocks[0]
            self._start(uc, uc.reg_read(self.rc.UC_RISCV_REG_PC), state)
            self._counts = (warm, blocks[0])
        return self._counts

    def run(self, result_address: int) -> UnicornOutcome:
        """One timed run on a fresh emulator (its translations included, as on Tessera)."""
        state: dict[str, Any] = {"stdout": bytearray(), "exit": None, "warmed": False}
        uc = self._emulator(state)
        start = time.perf_counter()
        self._start(uc, self.image.entry, state)
        middle = time.perf_counter()
        if not state["warmed"]:
            raise BenchFailure("unicorn never reached mark_warm")
        self._start(uc, uc.reg_read(self.rc.UC_RISCV_REG_PC), state)
        end = time.perf_counter()
        if state["exit"] is None:
            raise BenchFailure("unicorn stopped before the program's exit call")
        result = int.from_bytes(uc.mem_read(result_address, 4), "little")
        return UnicornOutcome(middle - start, end - middle, state["exit"], bytes(state["stdout"]), result)


__all__ = ["MemoryImage", "UnicornMark", "UnicornOutcome", "import_unicorn", "unicorn_version"]
