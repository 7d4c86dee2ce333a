"""The mover: each Tensix tile's memcpy / memset engine, and TDMA-RISC's command interface to it.

Functional models: WormholeB0/TensixTile/Mover.md (the ``Mover`` function),
TensixCoprocessor/XMOV.md (how a Tensix thread instructs it), TDMA-RISC.md (how a RISC-V
core instructs it: ``CmdParams``, ``MovCmdBase``, ``EnqueueCmd``, ``StatusBits`` and the
command processor), STALLWAIT.md (block bit B4, condition C12; Blackhole C9).  Blackhole
has no mover page: its STALLWAIT, SoftReset and AutoTTSync pages show the same mover, so
the Wormhole model is used with Blackhole's L1 size, its backend-configuration layout
(``ConfigDualWrite`` after the two banks) and no RISCV NC instruction RAM (its memory
map has none).

The four directions (``Transfer_direction`` / ``xmov_direction_t``; "L0" is the page's
misnomer): 0 ``XMOV_L0_TO_L1`` zeroes L1; 1 ``XMOV_L1_TO_L0`` copies L1 to backend
configuration (destination 0..0xFFFF, at ``TENSIX_CFG_BASE``) or the RISCV NC
instruction RAM (0x40000..0x4FFFF); 2 ``XMOV_L0_TO_L0`` zeroes one of those; 3
``XMOV_L1_TO_L1`` copies within L1.  Other destinations of the "TO_L0" directions are
``NOWHERE``: the transfer runs and its writes are discarded.  Addresses and sizes are
bytes, multiples of 16 (XMOV and TDMA-RISC shift 16-byte units left by 4).  A transfer
is numpy block work: one read of L1, one write.

Undefined behaviour the page names stops the run with one line (a rule break; with
``--lenient`` the transfer does not happen): a "TO_L1" destination or an "L1_TO" source
at or beyond the end of L1, a "TO_L0" transfer crossing its 64 KiB region.

Choices where the pages are silent (also in docs/tensix.md, "Mover (XMOV)"):

* **The mover is never busy.**  A transfer completes when it is issued (this model is
  untimed, as every unit is), so XMOV never waits to start, STALLWAIT's mover condition
  (Wormhole C12, Blackhole C9) is always met and TDMA-RISC's ``mover_busy`` reads 0.
  Its L1 writes wake every thread waiting on L1 contents (ATCAS …).
* **A transfer running past the end of L1** (start inside, end beyond) is a rule break
  like one starting beyond it; leniently nothing is transferred.
* **Overlapping L1-to-L1 ranges** break a rule: the page's model is ``memcpy``, which is
  undefined for overlapping ranges, and the hardware's order of 16-byte reads and writes
  is not documented.  Leniently the copy reads the whole source before writing (the
  ``memmove`` result).
* **Backend configuration as a target**: offset ``o`` of ``TENSIX_CFG_BASE`` is
  ``Config[o // (4 * CFG_STATE_SIZE * 4)][...]`` word by word, in ascending order, with a
  configuration write's immediate effects (:func:`tessera_tensix.cfgregs.write_cfg`:
  global registers written in both banks, ``STATE_RESET_EN``, the PRNG seed); on
  Blackhole ``ConfigDualWrite`` follows the two banks and writes both.  ``ThreadConfig``
  and whatever follows it (the pages name "some RISCV control registers" there) are not
  modelled: a transfer touching them stops naming the first such address, before any
  write.
* **RISCV NC instruction RAM** (Wormhole): not modelled in direct mode, which has no
  RISC-V core; a transfer to it stops naming the address.  Issue 17 attaches the RAM's
  bytes (:meth:`Mover.attach_iram`); a transfer beyond the attached RAM stops likewise.
  On Blackhole the 0x40000..0x4FFFF target is a rule break; leniently its writes are
  discarded as for ``NOWHERE``.
* XMOV's two operands (``TT_XMOV(0, 0)``) are not read by its functional model and are
  ignored.

TDMA-RISC (the RISC-V side, wired to MMIO in issue 17): :meth:`Mover.tdma_write` and
:meth:`Mover.tdma_read` implement the mover's registers at 0xFFB11000..0xFFB11014 and
0xFFB1102C for a named RISC-V core (``B``, ``T0``, ``T1``, ``T2``, ``NC``).  The command
processor runs a command as soon as it is enqueued, so the queue is always empty
(``StatusBits`` reads 0x428: queue empty, parameter queue empty, capacity 4) and the
``ParameterCredits`` hardware bug cannot be reached.  A compact mover command takes
``MovCmdBase`` of the core that enqueued it; RISCV NC reads and writes RISCV T0's
``MovCmdBase`` (the page's read rule; its write would index past the array).  The
64/32-bit L1 write command (0x66) at an address not aligned to its size is a rule
break; leniently the address is rounded down (as the RISC-V cores do).  An unknown
command opcode is undefined (rule; leniently ignored).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tessera.control import Trap
from tessera_tensix.rules import RULE

MASK32 = 0xFFFF_FFFF

#: ``xmov_direction_t`` (Mover.md)
L0_TO_L1, L1_TO_L0, L0_TO_L0, L1_TO_L1 = 0, 1, 2, 3
DIRECTIONS = {L0_TO_L1: "XMOV_L0_TO_L1", L1_TO_L0: "XMOV_L1_TO_L0",
              L0_TO_L0: "XMOV_L0_TO_L0", L1_TO_L1: "XMOV_L1_TO_L1"}

#: where the "TO_L0" directions write (RISC-V addresses, BabyRISCV/README.md)
TENSIX_CFG_BASE = 0xFFEF_0000
MEM_NCRISC_IRAM_BASE = 0xFFC0_0000
IRAM_WINDOW = (0x4_0000, 0x4_FFFF)           # the mover's name for the NC instruction RAM
IRAM_BYTES = 16 * 1024                       # InstructionRAM.md

#: TDMA-RISC registers of the mover (TDMA-RISC.md's memory map)
XMOV_SRC_ADDR = 0xFFB1_1000
XMOV_DST_ADDR = 0xFFB1_1004
XMOV_SIZE = 0xFFB1_1008
XMOV_DIRECTION = 0xFFB1_100C
COMMAND_ADDR = 0xFFB1_1010
STATUS = 0xFFB1_1014
XMOV_L1_BASE_ADDR = 0xFFB1_102C
REGISTERS = frozenset({XMOV_SRC_ADDR, XMOV_DST_ADDR, XMOV_SIZE, XMOV_DIRECTION, COMMAND_ADDR, STATUS,
                       XMOV_L1_BASE_ADDR})
#: the RISC-V cores of a tile, as TDMA-RISC names them; ``MovCmdBase`` has the first four
CLIENTS = ("B", "T0", "T1", "T2", "NC")
QUEUE_CAPACITY = 4
#: TDMA-RISC command opcodes (``Cmd & 0xFF``)
CMD_MOVE, CMD_WAIT, CMD_L1_WRITE, CMD_NOP = 0x40, 0x46, 0x66, 0x89

#: ``broken(text)``: stop the run naming the rule (raises), or return True to continue leniently
Broken = Callable[[str], bool]


class Mover:
    """The mover's state (``core.unit("mover")``): what it has done, the attached NC
    instruction RAM, and TDMA-RISC's mover registers."""

    def __init__(self, core: Any = None) -> None:
        self.transfers = 0
        self.last: dict[str, Any] | None = None
        #: the RISCV NC instruction RAM's bytes (a writable uint8 array), once issue 17 attaches it
        self.iram: np.ndarray | None = None
        self.cmd_params = [0, 0, 0, 0]                    # TDMA-RISC CmdParams
        self.mov_cmd_base = [0, 0, 0, 0]                  # MovCmdBase of RISCV B, T0, T1, T2
        self.commands = 0

    # ------------------------------------------------------------------ status
    @property
    def busy(self) -> bool:
        """``Mover.IsBusy()``: never — a transfer completes when it is issued."""
        return False

    def attach_iram(self, ram: np.ndarray) -> None:
        """Give the mover the RISCV NC instruction RAM's bytes (a writable uint8 array,
        e.g. a numpy view of the RAM region issue 17 maps at ``MEM_NCRISC_IRAM_BASE``)."""
        if ram.dtype != np.uint8 or ram.ndim != 1:
            raise TypeError(f"the instruction RAM must be a 1-D uint8 array, not {ram.dtype} {ram.shape}")
        self.iram = ram

    def state(self) -> dict[str, Any]:
        return {"busy": self.busy, "transfers": self.transfers, "last": self.last,
                "tdma": {"cmd_params": [f"{v:#010x}" for v in self.cmd_params],
                         "mov_cmd_base": {c: f"{v:#010x}" for c, v in zip(CLIENTS[:4], self.mov_cmd_base, strict=True)},
                         "commands": self.commands},
                "iram_attached": self.iram is not None}

    # ------------------------------------------------------------------ transfers
    def transfer(self, core: Any, dst: int, src: int, count: int, direction: int, *,
                 who: str, broken: Broken, word: int = 0) -> None:
        """``Mover(dst, src, count, direction)`` (Mover.md), byte addresses and size.

        ``who`` names the requester in stops (``ttxmov``, ``TDMA-RISC command …``);
        ``broken`` decides on undefined behaviour; ``word`` is the trap value of a stop.
        """
        dst, src = dst & MASK32, src & MASK32
        if (dst | src | count) & 15 or not 0 <= count or direction not in DIRECTIONS:
            raise ValueError(f"mover transfer dst={dst:#x} src={src:#x} count={count:#x} "
                             f"direction={direction}: the mover works in aligned 16-byte units")
        size = core.l1.size
        name = DIRECTIONS[direction]
        if direction in (L0_TO_L1, L1_TO_L1):
            if dst >= size:
                broken(f"{name}: destination {dst:#x} is beyond L1 ({size // 1024} KiB; undefined behaviour)")
                return
            if dst + count > size:
                broken(f"{name}: {count:#x} bytes at {dst:#x} run past the end of L1 ({size:#x})")
                return
            target, offset = "l1", dst
        else:
            target, offset = _target(dst)
            if target in ("cfg", "iram") and offset + count > 0x1_0000:
                broken(f"{name}: {count:#x} bytes at {dst:#x} cross the end of its 64 KiB region "
                       "(undefined behaviour)")
                return
            if target == "iram" and core.chip == "bh":
                if broken(f"{name}: destination {dst:#x} is the RISCV NC instruction RAM, which Blackhole "
                          "does not have"):
                    target = "nowhere"
        if direction in (L1_TO_L0, L1_TO_L1):
            if src >= size:
                broken(f"{name}: source {src:#x} is beyond L1 ({size // 1024} KiB; undefined behaviour)")
                return
            if src + count > size:
                broken(f"{name}: {count:#x} bytes at {src:#x} run past the end of L1 ({size:#x})")
                return
            if direction == L1_TO_L1 and count and src < dst + count and dst < src + count:
                broken(f"{name}: the source {src:#x}..{src + count:#x} and destination "
                       f"{dst:#x}..{dst + count:#x} overlap (memcpy: undefined behaviour)")
            data = core.l1.read(src, count, who)          # the whole source first (memmove when lenient)
        else:
            data = np.zeros(count, dtype=np.uint8)
        if target == "l1":
            if count:
                core.l1.write(offset, data, who)
        elif target == "cfg":
            _write_config(core, offset, data, who, word)
        elif target == "iram":
            self._write_iram(offset, data, who, word)
        self.transfers += 1
        self.last = {"direction": name, "dst": f"{dst:#x}", "src": f"{src:#x}", "bytes": count,
                     "target": target}

    def _write_iram(self, offset: int, data: np.ndarray, who: str, word: int) -> None:
        if not len(data):
            return
        address = MEM_NCRISC_IRAM_BASE + offset
        if self.iram is None:
            raise Trap(RULE, word, name=f"{who}: the RISCV NC instruction RAM ({address:#010x}) is not "
                                        "modelled in direct mode", word=word)
        end = offset + len(data)
        if end > len(self.iram):
            first = MEM_NCRISC_IRAM_BASE + max(offset, len(self.iram))
            raise Trap(RULE, word, name=f"{who}: {first:#010x} is beyond the {len(self.iram) // 1024} KiB RISCV "
                                        "NC instruction RAM", word=word)
        self.iram[offset:end] = data

    # ------------------------------------------------------------------ TDMA-RISC
    def tdma_write(self, core: Any, address: int, value: int, client: str) -> bool:
        """A RISC-V ``sw`` of ``value`` to TDMA-RISC register ``address`` by core ``client``
        (``B``, ``T0``, ``T1``, ``T2``, ``NC``).  False when ``address`` is not one of the
        mover's registers (the packers' and unpackers' TDMA-RISC registers are theirs)."""
        value &= MASK32
        if address in (XMOV_SRC_ADDR, XMOV_DST_ADDR, XMOV_SIZE, XMOV_DIRECTION):
            self.cmd_params[(address - XMOV_SRC_ADDR) // 4] = value
        elif address == COMMAND_ADDR:
            self.enqueue(core, value, client)
        elif address == XMOV_L1_BASE_ADDR:
            self.mov_cmd_base[_base_slot(client)] = value
        elif address != STATUS:                           # STATUS: a write has no effect
            return False
        return True

    def tdma_read(self, core: Any, address: int, client: str) -> int | None:
        """A RISC-V ``lw`` of TDMA-RISC register ``address`` by core ``client``; None when
        ``address`` is not one of the mover's registers."""
        if address == STATUS:
            return self.status_bits()
        if address == XMOV_L1_BASE_ADDR:
            return self.mov_cmd_base[_base_slot(client)]
        if address in REGISTERS:
            return 0                                      # the parameter and command registers read 0
        return None

    def status_bits(self) -> int:
        """``StatusBits()``: bit 0 mover busy, 2 queue full, 3 queue empty, 4 parameter
        queue full, 5 parameter queue empty, 15:8 remaining capacity — here always idle."""
        return 1 << 3 | 1 << 5 | QUEUE_CAPACITY << 8 | int(self.busy)

    def enqueue(self, core: Any, cmd: int, client: str) -> None:
        """``EnqueueCmd(cmd)`` and, at once, the command processor's handling of it."""
        cmd &= MASK32
        compact = bool(cmd >> 31)
        params = (0, 0, 0, 0) if compact else tuple(self.cmd_params)
        who = f"TDMA-RISC command {cmd:#010x} from RISCV {client}"
        broken = _lenient_or_stop(core, who, cmd)
        self.commands += 1
        opcode = cmd & 0xFF
        if opcode == CMD_MOVE:
            if compact:
                src = self.mov_cmd_base[_base_slot(client)] + ((cmd >> 8) & 0xFF)
                dst, count = (cmd >> 16) & 0xFF, (cmd >> 24) & 0x3F
                direction = L1_TO_L1 if (cmd >> 30) & 1 else L1_TO_L0
            else:
                src, dst, count, direction = params[0], params[1], params[2] & 0xFFFF, params[3] & 3
            self.transfer(core, (dst << 4) & MASK32, (src << 4) & MASK32, count << 4, direction,
                          who=who, broken=broken, word=cmd)
        elif opcode == CMD_L1_WRITE:
            self._l1_write_command(core, cmd, params, broken, who)
        elif opcode not in (CMD_WAIT, CMD_NOP):           # the mover is never busy: a wait is done
            broken(f"opcode {opcode:#04x} is not a TDMA-RISC command (undefined behaviour)")

    def _l1_write_command(self, core: Any, cmd: int, params: tuple[int, ...], broken: Broken, who: str) -> None:
        if cmd >> 31:
            broken("the L1 write command has no compact form (undefined behaviour)")
            return
        if cmd & 0x600 != 0x600:
            broken("the L1 write command needs bits 10:9 set (undefined behaviour)")
            return
        dst, size = params[0], 8 if cmd & 0x100 else 4
        if dst >= core.l1.size:
            broken(f"L1 write destination {dst:#x} is beyond L1 ({core.l1.size // 1024} KiB; undefined behaviour)")
            return
        if dst % size and not broken(f"L1 write destination {dst:#x} is not {size}-byte aligned"):
            return
        value = params[3] << 32 | params[2] if size == 8 else params[2]
        core.l1.write(dst - dst % size, value.to_bytes(size, "little"), who)


def mover(core: Any) -> Mover:
    """The core's mover (created on first use)."""
    return core.unit("mover", Mover)


def l1_note(dst: int, src: int, count: int, direction: int) -> tuple[tuple[str, str, tuple[int, int]], ...]:
    """The L1 note (:mod:`tessera_tensix.l1`) of a transfer: the L1 range its read
    connection reads and the one its write connection writes, as far as the direction
    touches L1 (Mover.md: one connection for each; "TO_L0" writes go elsewhere)."""
    dst, src = dst & MASK32, src & MASK32
    reads = (("mover read", "read", (src, src + count)),) if direction in (L1_TO_L0, L1_TO_L1) and count else ()
    writes = (("mover write", "write", (dst, dst + count)),) if direction in (L0_TO_L1, L1_TO_L1) and count else ()
    return reads + writes


def _target(dst: int) -> tuple[str, int]:
    """Where a "TO_L0" destination writes: ``("cfg", offset)``, ``("iram", offset)`` or
    ``("nowhere", dst)``."""
    if dst <= 0xFFFF:
        return "cfg", dst
    if IRAM_WINDOW[0] <= dst <= IRAM_WINDOW[1]:
        return "iram", dst - IRAM_WINDOW[0]
    return "nowhere", dst


def config_layout(core: Any) -> tuple[int, int]:
    """``(bank_bytes, modelled_bytes)`` of the backend configuration at ``TENSIX_CFG_BASE``:
    the size of one ``Config`` bank, and where the part the mover can write ends (two banks,
    plus Blackhole's ``ConfigDualWrite``)."""
    from tessera_tensix.cfgregs import register_map

    bank = register_map(core.chip).cfg_words * 4
    return bank, bank * (3 if core.chip == "bh" else 2)


def _write_config(core: Any, offset: int, data: np.ndarray, who: str, word: int) -> None:
    """Write ``data`` to the backend configuration at ``TENSIX_CFG_BASE + offset``."""
    from tessera_tensix.cfgregs import write_cfg

    if not len(data):
        return
    bank_bytes, limit = config_layout(core)
    if offset + len(data) > limit:
        first = TENSIX_CFG_BASE + max(offset, limit)
        raise Trap(RULE, word, name=f"{who}: the mover's write to {first:#010x} (ThreadConfig or beyond the "
                                    "backend configuration banks) is not modelled", word=word)
    words = np.ascontiguousarray(data).view("<u4")
    for i, value in enumerate(words.tolist()):
        at = offset + 4 * i
        bank, index = divmod(at, bank_bytes)
        if bank == 2:                                     # Blackhole ConfigDualWrite
            write_cfg(core, 0, index // 4, value)
            write_cfg(core, 1, index // 4, value)
        else:
            write_cfg(core, bank, index // 4, value)


def _base_slot(client: str) -> int:
    """``MovCmdBase``'s index for ``client`` (RISCV NC uses RISCV T0's)."""
    if client not in CLIENTS:
        raise ValueError(f"unknown RISC-V core {client!r} (one of {', '.join(CLIENTS)})")
    return 1 if client == "NC" else CLIENTS.index(client)


def _lenient_or_stop(core: Any, who: str, cmd: int) -> Broken:
    """The ``broken`` of a TDMA-RISC command: stop naming it, or continue when lenient."""
    def broken(text: str) -> bool:
        if core.config.lenient:
            return True
        raise Trap(RULE, cmd, name=f"{who}: {text}", word=cmd)
    return broken
