"""The coprocessor's L1 clients on L1's access ports and banks, in the tensix model.

WormholeB0/TensixTile/L1.md: a bank does one 128-bit access a cycle; a port's clients take
turns; a narrow write or an atomic blocks its port and bank five cycles.  Its port diagram
(tt-isa-documentation Diagrams/Src/L1.lua) puts each unpacker on four ports of its own
(#0 or #1, and #9-#11, shared by the two), packer 0 on #8, and ThCon, the mover's reads
and packer 2 behind port #2 with RISCV B, NC and T0.  A packer writes one row a cycle, an
unpacker reads ``l1_unpack_rows`` (4), the mover copies 8 rows per 11 cycles (Mover.md).

The model's cases drive :class:`~tessera_cycles.tensix_model.TileTimes` directly: a core
pushes at 0, its thread passes the instruction at 1 (``gate_latency``) and the unit starts
it there; its L1 accesses are what the Tensix plugin notes (``l1_note``: client, kind,
bytes or bit addresses).  Banks are 32 of 16-byte rows, so 0x1000, 0x1200 and 0x2000 are
bank 0 and 0x1010 bank 1.  The last cases run kernels, whose units leave the notes.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tessera_cycles
import tessera_cycles.plugin
import tessera_tensix.plugin
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_cycles.tensix_model import EXACT_ROWS, TensixParams, TileTimes
from tessera_tensix.arch import TENSIX_BH

UNPACK_OCC = TensixParams().unpack_cycles      # 16
THCON_OCC = TensixParams().thcon_cycles        # 3


def issue(tile: TileTimes, tid: int, mnemonic: str, unit: str, note=None) -> None:
    """Thread ``tid``'s core pushes ``mnemonic`` and the thread passes it, with ``note``."""
    core = tile.core(f"trisc{tid}")
    tile.push(core, (), tid)
    tile.l1_note = note
    tile.tensix(tid, mnemonic, unit, False, tile.threads[tid].entries + 1)
    tile.l1_note = None


def face(address: int, rows: int = 32) -> tuple:
    """An unpacker's note: BF16 datums (16 bits each) filling ``rows`` 16-byte rows."""
    bits = np.arange(address * 8, (address + 16 * rows) * 8, 16, dtype=np.int64)
    return (("unpacker0", "read", bits),)


def store(tile: TileTimes, core: str, address: int, at: int) -> None:
    c = tile.core(core)
    c.t = at
    tile.store_l1(c, (), address)


def load(tile: TileTimes, core: str, address: int, at: int) -> int:
    """A core's L1 load issued at ``at``: when its result is ready (8 later unhindered)."""
    c = tile.core(core)
    c.t = at
    tile.load(c, (), (5,), 8, address, 0, False, None, True)
    return c.ready[5]


# ------------------------------------------------------------------ an unpacker and a core

def test_an_unpacker_waits_for_the_bank_a_core_store_holds():
    # RISCV B stores at 0 to 0x1000: a read-modify-write of bank 0, cycles 0-4.  UNPACR
    # starts at 1 and reads 32 rows, four a cycle, dealt over ports #0, #9, #10, #11: row 0
    # (bank 0, port #0) waits to 5, holding port #0, so the port's other seven rows go 6..12
    # — done at 13, not 9 (1 + 31 // 4 + 1): four cycles late, the unit busy 16 + 4
    tile = TileTimes(TensixParams())
    store(tile, "brisc", 0x1000, 0)
    issue(tile, 0, "ttunpacr", "UNPACK", face(0x1000))
    th = tile.threads[0]
    assert th.waits["l1"] == 4
    assert th.done == 1 + UNPACK_OCC + 4
    assert tile.units["UNPACK"].busy == UNPACK_OCC + 4
    assert tile.l1.report()["unpacker0"] == {"instructions": 1, "rows": 32, "waited": 4}


def test_an_unpacker_and_a_core_on_other_banks_do_not_wait():
    # the same store to bank 20, and an UNPACR of 8 rows (banks 0-7): nothing in common
    tile = TileTimes(TensixParams())
    store(tile, "brisc", 0x1000 + 16 * 20, 0)
    issue(tile, 0, "ttunpacr", "UNPACK", face(0x1000, rows=8))
    assert tile.threads[0].waits["l1"] == 0 and tile.threads[0].done == 1 + UNPACK_OCC
    # the unpacker's rows take the banks they read, a cycle each: banks 0-3 at 1, 4-7 at 2 —
    # T1 loading bank 4 at 2 waits a cycle, bank 3 at 2 not
    assert load(tile, "trisc1", 0x1000 + 0x200 + 16 * 4, 2) == 2 + 1 + 8
    again = TileTimes(TensixParams())
    issue(again, 0, "ttunpacr", "UNPACK", face(0x1000, rows=8))
    assert load(again, "trisc1", 0x1000 + 0x200 + 16 * 3, 2) == 2 + 8


def test_a_core_load_waits_for_the_bank_an_unpacker_reads():
    # the UNPACR first: row 8 reads bank 8 at 3 (1 + 8 // 4); T1 loads another row of bank 8
    # at 3 from its own port: it gets the bank a cycle later, its data at 12, not 11
    tile = TileTimes(TensixParams())
    issue(tile, 0, "ttunpacr", "UNPACK", face(0x1000))
    assert load(tile, "trisc1", 0x1000 + 0x200 + 16 * 8, 3) == 12
    off = TileTimes(TensixParams(l1_coprocessor=False))
    issue(off, 0, "ttunpacr", "UNPACK", face(0x1000))
    assert load(off, "trisc1", 0x1000 + 0x200 + 16 * 8, 3) == 11


def test_packer_1_waits_for_unpacker_1_on_port_1():
    # unpacker 1's rows 0, 4 … 28 hold port #1 from 1 to 8; packer 1, behind the same port,
    # asks at 1 to write four rows (banks 16-19, which the unpacker reads at 5 and 6): first
    # come, first served — they go 9..12, done at 13, not 5.  Packer 0 (port #8) writing the
    # same rows does not wait.
    bits = np.arange(0x8000 * 8, (0x8000 + 512) * 8, 16, dtype=np.int64)
    for client, late in (("packer1", 8), ("packer0", 0)):
        tile = TileTimes(TensixParams())
        issue(tile, 0, "ttunpacr", "UNPACK", (("unpacker1", "read", bits),))
        issue(tile, 2, "ttpacr", "PACK", ((client, "write", (0x5100, 0x5140)),))
        assert tile.threads[2].waits["l1"] == late, client
        assert tile.l1.report()["unpacker1"]["waited"] == 0


# ------------------------------------------------------------------ ThCon and the cores' port

def test_thcon_waits_for_port_2_a_core_store_holds():
    # B's store holds port #2 (and bank 0) 0-4; LOADIND at 1 reads bank 1 through port #2:
    # it waits for the port to 5, done at 6, not 2 — the scalar unit busy 3 + 4
    tile = TileTimes(TensixParams())
    store(tile, "brisc", 0x2000, 0)
    issue(tile, 1, "ttloadind", "THCON", (("thcon", "read", (0x3010, 0x3020)),))
    assert tile.threads[1].waits["l1"] == 4 and tile.threads[1].done == 1 + THCON_OCC + 4
    # T2's store is behind port #3 and to bank 0: another port, another bank — no wait
    other = TileTimes(TensixParams())
    store(other, "trisc2", 0x2000, 0)
    issue(other, 1, "ttloadind", "THCON", (("thcon", "read", (0x3010, 0x3020)),))
    assert other.threads[1].waits["l1"] == 0 and other.threads[1].done == 1 + THCON_OCC


def test_an_atomic_holds_port_2_five_cycles_and_the_scalar_unit_with_it():
    # ATINCGET at 1: a read-modify-write, port #2 and bank 0 held 1-5 (L1.md: five cycles),
    # so the scalar unit is busy 5, not 3; T0 behind port #2 loads bank 1 at 2: granted at 6
    tile = TileTimes(TensixParams())
    issue(tile, 1, "ttatincget", "THCON", (("thcon", "rmw", (0x3000, 0x3010)),))
    assert tile.threads[1].done == 1 + 5
    assert load(tile, "trisc0", 0x4010, 2) == 6 + 8
    # a 128-bit STOREIND is a plain write: one cycle, within the scalar unit's three
    plain = TileTimes(TensixParams())
    issue(plain, 1, "ttstoreind", "THCON", (("thcon", "write", (0x3000, 0x3010)),))
    assert plain.threads[1].done == 1 + THCON_OCC
    assert load(plain, "trisc0", 0x4010, 2) == 2 + 8


def test_packer_2_shares_port_2_packer_0_does_not():
    # B's store holds port #2 0-4: packer 2's four rows (banks 1-4) wait for it, packer 0's
    # (port #8) do not
    for client, late in (("packer2", 4), ("packer0", 0)):
        tile = TileTimes(TensixParams())
        store(tile, "brisc", 0x2000, 0)
        issue(tile, 2, "ttpacr", "PACK", ((client, "write", (0x5010, 0x5050)),))
        assert tile.threads[2].waits["l1"] == late, client


# ------------------------------------------------------------------ the mover

def copy(rows: int, src: int = 0x10000, dst: int = 0x20000) -> tuple:
    return (("mover read", "read", (src, src + 16 * rows)), ("mover write", "write", (dst, dst + 16 * rows)))


def test_an_xmov_holds_the_mover_for_its_transfer_at_8_rows_per_11_cycles():
    # Mover.md: a copy reads and writes 8 rows per 11 cycles.  64 rows from 1: the last read
    # at 1 + 63 * 11 // 8 = 87, its write a cycle later, done at 89; the next XMOV waits
    # at the gate until the mover can start it (XMOV.md)
    tile = TileTimes(TensixParams())
    issue(tile, 0, "ttxmov", "XMOV", copy(64))
    th = tile.threads[0]
    assert th.done == 89 and th.waits["l1"] == 0
    issue(tile, 0, "ttxmov", "XMOV", copy(64, 0x30000, 0x40000))
    assert th.waits["unit"] == 89 - 2 and th.done == 89 + 88
    # a memset writes one row a cycle
    zero = TileTimes(TensixParams())
    issue(zero, 0, "ttxmov", "XMOV", (("mover write", "write", (0x20000, 0x20000 + 16 * 64)),))
    assert zero.threads[0].done == 1 + 64
    # without the clients booked, XMOV is the mover's one cycle
    off = TileTimes(TensixParams(l1_coprocessor=False))
    issue(off, 0, "ttxmov", "XMOV", copy(64))
    assert off.threads[0].done == 2


def test_a_core_behind_port_3_waits_for_the_movers_writes():
    # the copy's four writes go through port #3 (T1 and T2's) at 2, 3, 4 and 6 (a cycle
    # behind the reads, 8 per 11 cycles): T1's load at 2 to another bank finds the port
    # taken to 5 (first come, first served) and goes then
    tile = TileTimes(TensixParams())
    issue(tile, 0, "ttxmov", "XMOV", copy(4))
    assert load(tile, "trisc1", 0x6000 + 16 * 20, 2) == 5 + 8
    assert load(TileTimes(TensixParams()), "trisc1", 0x6000 + 16 * 20, 2) == 2 + 8


def test_a_long_transfer_is_timed_at_its_rate_without_booking_every_row():
    rows = 4096                       # 64 KiB: 16 times EXACT_ROWS
    tile = TileTimes(TensixParams())
    issue(tile, 0, "ttxmov", "XMOV", copy(rows))
    assert tile.threads[0].done == 2 + (rows - 1) * 11 // 8 + 1 and tile.threads[0].waits["l1"] == 0
    booked = sum(b.issued for b in tile.l1.banks.values())
    assert booked == 2 * EXACT_ROWS                      # the first rows' banks, not the rest
    port2 = tile.l1.ports[tile.l1.port_of["brisc"]]
    assert len(port2.starts) <= EXACT_ROWS               # the tail is one interval
    # a core behind port #2 asking in the tail waits for it (first come, first served)
    assert load(tile, "brisc", 0x7000, 1000) > 1000 + 8


# ------------------------------------------------------------------ switches and snapshots

def sequence(params: TensixParams, notes: bool) -> tuple:
    tile = TileTimes(params)
    store(tile, "brisc", 0x1000, 0)
    issue(tile, 0, "ttunpacr", "UNPACK", face(0x1000) if notes else None)
    issue(tile, 1, "ttatincget", "THCON", (("thcon", "rmw", (0x1000, 0x1010)),) if notes else None)
    issue(tile, 0, "ttxmov", "XMOV", copy(64) if notes else None)
    ready = load(tile, "trisc0", 0x1010, 3)
    return ready, [(th.done, dict(th.waits)) for th in tile.threads], {n: u.busy for n, u in tile.units.items()}


def test_switched_off_the_clients_change_nothing():
    base = sequence(TensixParams(), notes=False)
    assert sequence(TensixParams(l1_coprocessor=False), notes=True) == base
    assert sequence(TensixParams(l1_contention=False), notes=True) == sequence(
        TensixParams(l1_contention=False), notes=False)
    assert sequence(TensixParams(), notes=True) != base


@pytest.mark.parametrize("bad", [{"l1_unpack_rows": 0}, {"l1_unpack_rows": 5}, {"l1_coprocessor": 1}])
def test_bad_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        TensixParams(**bad)


def test_a_snapshot_from_before_the_clients_still_runs():
    tile = TileTimes(TensixParams())
    issue(tile, 0, "ttdmanop", "TDMA")
    del tile.l1_note
    for th in tile.threads:
        del th.waits["l1"]
    for name in ("threads", "unpack_rows", "rmw_cycles", "client_counts"):
        delattr(tile.l1, name)
    old = pickle.loads(pickle.dumps(tile))
    store(old, "brisc", 0x1000, 1)            # bank 0 held 1-5; the UNPACR starts at 2
    issue(old, 0, "ttunpacr", "UNPACK", face(0x1000))
    assert old.threads[0].waits["l1"] > 0 and old.l1.report()["unpacker0"]["rows"] == 32


# ------------------------------------------------------------------ kernels leave the notes

def host() -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_tensix.plugin, "tensix")
    h.register(tessera_cycles.plugin, "cycles")
    return h


def run(words: list[int], **config: object) -> dict:
    """Run ``words`` on T0 in direct mode under the model; the report."""
    m = Machine(TENSIX_BH, host=host(), config={"cycles": "tensix", **config})
    source = "".join(f".word {w:#010x}\n" for w in words) + "end\n"
    for address, blob in assemble(m.arch, source, base=0).segments:
        m.space.write_bytes(address, blob, force=True)
    m.set_entry(0)
    assert m.run(max_steps=100).reason == "halted"
    return tessera_cycles.report(m)


def SETDMAREG(value16: int, half: int) -> int:      # SETDMAREG.md: opcode 0x45
    return 0x45 << 24 | value16 << 8 | half


def LOADIND(size: int, result: int, addr: int) -> int:     # LOADIND.md: opcode 0x49, offset half 0
    return 0x49 << 24 | size << 22 | result << 6 | addr


def ATINCGET(width: int, inout: int, addr: int) -> int:    # ATINCGET.md: opcode 0x61
    return 0x61 << 24 | width << 14 | inout << 6 | addr


def test_scalar_unit_memory_ops_note_their_row():
    # GPR 1 = 0x100: L1 0x1000.  LOADIND reads its row, ATINCGET rewrites it (five cycles,
    # against the scalar unit's three: the kernel ends two cycles later than without)
    words = [SETDMAREG(0x100, 2), SETDMAREG(0, 3), LOADIND(1, 2, 1), ATINCGET(31, 3, 1)]
    on = run(words)
    assert on["l1_clients"]["thcon"] == {"instructions": 2, "rows": 2, "waited": 0}
    off = run(words, **{"cycles.l1_coprocessor": False})
    assert off["l1_clients"] == {} and on["agents"]["t0"]["cycles"] == off["agents"]["t0"]["cycles"] + 2


def test_an_xmov_notes_its_rows_and_the_thread_waits_for_the_mover():
    reg6 = "cfg.THCON_SEC0_REG6_"
    config = {reg6 + "Destination_address": 0x2000, reg6 + "Source_address": 0x1000,
              reg6 + "Buffer_size": 64, reg6 + "Transfer_direction": 3}    # copy 64 rows L1 to L1
    on = run([0x40 << 24], **config)
    assert on["l1_clients"]["mover read"]["rows"] == 64 and on["l1_clients"]["mover write"]["rows"] == 64
    off = run([0x40 << 24], **config, **{"cycles.l1_coprocessor": False})
    # XMOV passes at 0: its last read at 63 * 11 // 8, its write a cycle later, done a cycle
    # after that; without the clients booked, XMOV and end take a cycle each
    assert off["agents"]["t0"]["cycles"] == 2
    assert on["agents"]["t0"]["cycles"] == 63 * 11 // 8 + 2


def test_a_kernel_notes_what_its_unpackers_and_packer_read_and_write():
    # the direct-mode datacopy example: a 32x32 BF16 tile (2048 bytes, 128 rows) unpacked
    # from L1 and packed back
    ex = next(e for e in TENSIX_BH.examples if e.name == "datacopy")
    m = Machine(TENSIX_BH, host=host(), config={"cycles": "tensix"})
    program = assemble(m.arch, ex.source, base=ex.load_address)
    for address, blob in program.segments:
        m.space.write_bytes(address, blob, force=True)
    m.symbols.update(program.symbols)
    m.set_entry(program.entry if program.entry is not None else ex.load_address)
    result = m.run(max_steps=ex.max_steps)
    assert result.reason == "halted" and ex.check(m, result) is None
    clients = tessera_cycles.report(m)["l1_clients"]
    assert clients["unpacker0"]["rows"] == 128 and clients["packer0"]["rows"] == 128
