"""The baby RISC-V cores' windows onto the tile: mailboxes, PCBufs, Manual TTSync, Tensix
semaphores, GPRs, backend configuration and TDMA-RISC (tessera_tensix.tile.mailboxes,
.pcbufs, .regwindows), on Blackhole and Wormhole B0, with programs assembled here."""

from __future__ import annotations

import numpy as np
import pytest
from tensix_tile_support import arch_of, host, image

import tessera
from tessera.errors import Deadlock, MemoryFault
from tessera.isa.asm import assemble
from tessera.loaders import place
from tessera.machine import Machine
from tessera_tensix.cfgregs import register_map
from tessera_tensix.tile import memmap

CHIPS = ("bh", "wh")
START = {"brisc": 0x0, "trisc0": 0x8000, "trisc1": 0x9000, "trisc2": 0xA000}
RESULTS = 0x2_0000                       # L1 words the programs store what they saw to
MAILBOX = memmap.TENSIX_MAILBOX0_BASE
PC_BUF = memmap.PC_BUF_BASE
GPR = memmap.REGFILE_BASE
CFG = memmap.TENSIX_CFG_BASE
TDMA = memmap.RISCV_TDMA_REGS_START_ADDR


class SyncLog:
    """Records every sync event: (kind, object, agent, value)."""

    TESSERA_API_VERSION = 1

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str | None, object]] = []

    @tessera.hookimpl
    def tessera_sync_event(self, machine, event):
        self.events.append((event.kind, event.obj, event.agent, event.value))

    def waits(self, agent: str) -> list[str]:
        """What ``agent`` parked for, in order."""
        return [str(value) for kind, _obj, who, value in self.events if kind == "wait" and who == agent]


def tensix(chip: str, source: str) -> list[int]:
    """Tensix instruction words assembled by the Tensix plugin's assembler."""
    from tessera_tensix.arch import TENSIX_BH, TENSIX_WH

    blob = assemble(TENSIX_WH if chip == "wh" else TENSIX_BH, source + "\n").segments[0][1]
    return np.frombuffer(blob, dtype="<u4").tolist()


def push(chip: str, source: str) -> str:
    """``.ttinsn`` words pushing ``source``'s Tensix instructions (one a line)."""
    return "".join(f".word {((w << 2) | (w >> 30)) & 0xFFFF_FFFF:#x}\n" for w in tensix(chip, source))


def boot(chip: str, *triscs: int) -> str:
    """RISCV B releases T<i> for each i in ``triscs`` at START: the reset-pc override is a
    tile-control register on Blackhole and a backend-configuration field on Wormhole (so
    the Wormhole boot itself goes through TENSIX_CFG_BASE)."""
    held = sum(1 << (12 + i) for i in range(3) if i not in triscs)
    if chip == "bh":
        base, pcs, override = 0xFFB1_2000, (0x228, 0x22C, 0x230), 0x234
    else:
        rmap = register_map("wh")
        base = CFG
        pcs = tuple(4 * rmap.cfg_index[f"TRISC_RESET_PC_SEC{i}_PC"] for i in range(3))
        override = 4 * rmap.cfg_index["TRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en"]
    lines = [f"li t0, {base:#x}"]
    for i, offset in enumerate(pcs):
        lines += [f"li t1, {START[f'trisc{i}']:#x}", f"sw t1, {offset}(t0)"]
    lines += ["li t1, 7", f"sw t1, {override}(t0)", "li t0, 0xFFB12000", f"li t1, {held:#x}", "sw t1, 0x1B0(t0)"]
    return "\n".join(lines) + "\n"


def delay(label: str, n: int = 400) -> str:
    return f"li t3, {n}\n{label}:\naddi t3, t3, -1\nbnez t3, {label}\n"


def exit_with(reg: str = "x0") -> str:
    return f"mv a0, {reg}\nli a7, 93\necall\n"


def tensix_sync() -> str:
    """tt-llk's ``tensix_sync()``: a store then a load of CoprocessorDoneCheck
    (``PC_BUF_BASE + 4``), which returns once the core's Tensix thread is idle; the
    ``and`` consumes the loaded value as the vendor's code does (clobbers t3)."""
    return f"li t3, {PC_BUF:#x}\nsw x0, 4(t3)\nlw t3, 4(t3)\nand x0, x0, t3\n"


def run(chip: str, cores: dict[str, str], log: SyncLog | None = None, config: dict | None = None, **limits):
    """A tile of ``chip`` (machine ``config``: e.g. ``tcfg.NAME`` presets for every Tensix
    thread) with each core's program at its START; runs it."""
    h = host()
    if log is not None:
        h.register(log, "synclog")
    m = Machine(arch_of(chip), host=h, config=config)
    for core, source in cores.items():
        for address, blob in image(chip, source, START[core]):
            place(m, address, blob, what=core)
    limits.setdefault("max_steps", 300_000)
    return m, m.run(**limits)


def results(m: Machine, n: int) -> list[int]:
    return [m.space.read(RESULTS + 4 * i, 4) for i in range(n)]


def store(reg: str, index: int) -> str:
    """Store ``reg`` to result word ``index`` (t6 holds RESULTS)."""
    return f"li t6, {RESULTS:#x}\nsw {reg}, {4 * index}(t6)\n"


# ------------------------------------------------------------------------------ mailboxes
@pytest.mark.parametrize("chip", CHIPS)
def test_mailbox_ping_pong_parks_the_reader_until_the_value_arrives(chip):
    log = SyncLog()
    m, result = run(chip, {
        # B releases T0 and waits for its "ready" (window 1 read: T0 to B), sends 41 to T0
        # (window 1 write: B to T0) and waits for the answer
        "brisc": boot(chip, 0) + f"li t0, {MAILBOX + 0x1000:#x}\nlw a1, 0(t0)\nli t1, 41\nsw t1, 0(t0)\n"
                 "lw a2, 0(t0)\nadd a1, a1, a2\n" + exit_with("a1"),
        # T0 says ready through window 0 (T0 to B), pops from window 0 (B to T0), adds one, answers
        "trisc0": f"li t0, {MAILBOX:#x}\nli t1, 1\nsw t1, 0(t0)\nlw t1, 0(t0)\naddi t1, t1, 1\nsw t1, 0(t0)\n"
                  + exit_with()}, log)
    assert result.reason == "halted"
    assert m.agent("brisc").exit_code == 1 + 42
    assert log.waits("trisc0") == ["mailbox B to T0 to receive a value (empty)"]
    assert set(log.waits("brisc")) == {"mailbox T0 to B to receive a value (empty)"}


@pytest.mark.parametrize("chip", CHIPS)
def test_mailbox_query_and_the_self_mailbox(chip):
    # B to B is window 0 of RISCV B both ways; +4 asks whether a value waits
    m, result = run(chip, {"brisc": f"li t0, {MAILBOX:#x}\nlw a1, 4(t0)\nli t1, 7\nsw t1, 0(t0)\nli t1, 9\n"
                                    "sw t1, 0(t0)\nlw a2, 4(t0)\nlw a3, 0(t0)\nlw a4, 0(t0)\nlw a5, 4(t0)\n"
                                    + store("a1", 0) + store("a2", 1) + store("a3", 2) + store("a4", 3)
                                    + store("a5", 4) + exit_with()})
    assert result.reason == "halted"
    assert results(m, 5) == [0, 1, 7, 9, 0]


@pytest.mark.parametrize("chip", CHIPS)
def test_four_values_in_a_writers_mailboxes_block_its_next_write(chip):
    # B queues 1, 2 for T1 (never released) and 3, 4 for T0: its fifth value waits for
    # room although B to T0 holds only two; T0 takes three values once it is ready
    log = SyncLog()
    m, result = run(chip, {
        "brisc": boot(chip, 0) + f"li t0, {MAILBOX + 0x1000:#x}\nli t2, {MAILBOX + 0x2000:#x}\n" + "".join(
            f"li t1, {v}\nsw t1, 0({reg})\n" for v, reg in ((1, "t2"), (2, "t2"), (3, "t0"), (4, "t0"), (5, "t0")))
                 + exit_with(),
        "trisc0": delay("t") + f"li t0, {MAILBOX:#x}\nlw a1, 0(t0)\nlw a2, 0(t0)\nlw a3, 0(t0)\n"
                  "add a1, a1, a2\nadd a1, a1, a3\n" + exit_with("a1")}, log)
    assert result.reason == "halted"
    assert m.agent("trisc0").exit_code == 3 + 4 + 5
    assert log.waits("brisc") == ["room in the mailboxes B writes (they hold 4 values together: "
                                  "B to T0: 2, B to T1: 2)"]
    assert m.sync["mailboxes from B"].state()["mailboxes"] == {"B to T1": ["0x1", "0x2"]}


@pytest.mark.parametrize("chip", CHIPS)
def test_a_full_mailbox_nobody_reads_is_a_deadlock_naming_it(chip):
    with pytest.raises(Deadlock) as err:
        run(chip, {"brisc": f"li t0, {MAILBOX:#x}\n" + "sw t0, 0(t0)\n" * 5 + exit_with()})
    assert "brisc waits for mailbox B to B to have room (4 values queued)" in str(err.value)


@pytest.mark.parametrize("chip", CHIPS)
def test_popping_an_empty_mailbox_forever_is_a_deadlock_naming_the_core_and_mailbox(chip):
    # T1 reads window 1 (T0 to T1); T0 never writes
    with pytest.raises(Deadlock) as err:
        run(chip, {"brisc": boot(chip, 1) + exit_with(),
                   "trisc1": f"li t0, {MAILBOX + 0x1000:#x}\nlw t1, 0(t0)\n" + exit_with()})
    text = str(err.value)
    assert "trisc1 waits for mailbox T0 to T1 to receive a value (empty)" in text
    assert "\n" not in text and err.value.exit_code == 71


def test_soft_reset_empties_the_mailboxes_a_core_writes():
    # T0 sends 7 to B and spins; B sees it queued, puts T0 back in reset: the value is gone
    m, result = run("bh", {
        "brisc": boot("bh", 0) + f"li t0, {MAILBOX + 0x1000:#x}\nwait:\nlw a1, 4(t0)\nbeqz a1, wait\n"
                 "li t2, 0xFFB12000\nli t1, 0x7000\nsw t1, 0x1B0(t2)\nlw a2, 4(t0)\n"
                 + store("a1", 0) + store("a2", 1) + exit_with(),
        "trisc0": f"li t0, {MAILBOX:#x}\nli t1, 7\nsw t1, 0(t0)\nspin:\nj spin\n"})
    assert result.reason == "halted"
    assert results(m, 2) == [1, 0]
    assert m.agent("trisc0").wait_reason == "trisc0 is held in soft reset"


def test_a_snapshot_taken_while_a_core_waits_on_a_mailbox_resumes():
    # B waits for T0's value; the machine is saved mid-wait and the restored one finishes
    m, result = run("bh", {"brisc": boot("bh", 0) + f"li t0, {MAILBOX + 0x1000:#x}\nlw a1, 0(t0)\n" + exit_with("a1"),
                           "trisc0": delay("d", 50) + f"li t0, {MAILBOX:#x}\nli t1, 5\nsw t1, 0(t0)\n" + exit_with()},
                    max_steps=40, raise_on_budget=False)
    assert result.reason == "budget"
    assert m.agent("brisc").wait_reason == "mailbox T0 to B to receive a value (empty)"
    restored = Machine.restore(m.snapshot(), host=host())
    assert restored.run(max_steps=10_000).reason == "halted"
    assert restored.agent("brisc").exit_code == 5


# ---------------------------------------------------------------- PCBufs, TTSync, semaphores
def blocked_setdmareg(chip: str, sem: int, gpr: int, value: int) -> str:
    """Push SEMWAIT while semaphore ``sem`` is 0 (as it is after reset), blocking
    everything, then a SETDMAREG of ``gpr``'s low half: it waits until someone posts."""
    return push(chip, f"SEMWAIT 0x1FF, {1 << sem}, 1\nSETDMAREG 0, {value:#x}, 0, {2 * gpr}")


def post_later(sem: int, label: str) -> str:
    """T<i>'s code that posts Tensix semaphore ``sem`` through PC_BUF_BASE + 0x20 after a while."""
    return delay(label, 600) + f"li t0, {PC_BUF + 0x20 + 4 * sem:#x}\nsw x0, 0(t0)\n" + exit_with()


@pytest.mark.parametrize("chip", CHIPS)
def test_pcbuf_hands_values_to_a_trisc_and_brisc_waits_until_it_is_done(chip):
    log = SyncLog()
    m, result = run(chip, {
        # B hands 1, 2, 3 to T0, then reads its end of PCBuf[0]: that returns once T0 has
        # taken them all, waits reading again, and Tensix T0 is idle; then B reads T0's
        # GPR 3 (which the last pushed instruction set) and hands T0 a last value
        "brisc": boot(chip, 0, 1) + f"li t0, {PC_BUF:#x}\n" + "".join(f"li t1, {v}\nsw t1, 0(t0)\n" for v in (1, 2, 3))
                 + "lw t2, 0(t0)\n" + f"li t4, {GPR:#x}\nlw a1, 12(t4)\n" + "li t1, 7\nsw t1, 0(t0)\n"
                 + exit_with("a1"),
        "trisc0": f"li t0, {PC_BUF:#x}\nlw a1, 0(t0)\nlw a2, 0(t0)\nlw a3, 0(t0)\nadd a1, a1, a2\n"
                  "add a1, a1, a3\nsw a1, 0(t0)\n"            # a store to its end is discarded
                  + blocked_setdmareg(chip, 0, 3, 0x55) + "lw a2, 0(t0)\nadd a1, a1, a2\n" + exit_with("a1"),
        "trisc1": post_later(0, "p")}, log)
    assert result.reason == "halted"
    assert m.agent("brisc").exit_code == 0x55
    assert m.agent("trisc0").exit_code == 1 + 2 + 3 + 7
    brisc_waits = log.waits("brisc")
    assert any("Tensix T0 to be idle (RISCV B reads PCBuf[0])" in w for w in brisc_waits)
    assert "PCBuf[0] (RISCV B to T0) to receive a value (empty)" in log.waits("trisc0")


def test_a_full_pcbuf_blocks_riscv_b():
    log = SyncLog()
    m, result = run("bh", {
        "brisc": boot("bh", 2) + f"li t0, {PC_BUF + 0x2_0000:#x}\n" + "".join(f"li t1, {v}\nsw t1, 0(t0)\n"
                                                                           for v in range(1, 18)) + exit_with(),
        "trisc2": delay("d") + f"li t0, {PC_BUF:#x}\nli a1, 0\n" + "lw t1, 0(t0)\nadd a1, a1, t1\n" * 17
                  + exit_with("a1")}, log)
    assert result.reason == "halted"
    assert m.agent("trisc2").exit_code == sum(range(1, 18)) & 0xFF
    assert log.waits("brisc") == ["PCBuf[2] (RISCV B to T2) to have room (16 values queued)"]


def test_pcbuf_override_answers_an_empty_read_and_busy_releases_the_checks():
    # OverrideEn with OverrideValue 0x2A for PCBuf[1]: T1's read of the empty FIFO returns
    # it; OverrideBusy also lets CoprocessorDoneCheck return while T1 is blocked
    bits = (1 | 2 | 0x2A << 2) << 10
    m, result = run("bh", {
        "brisc": f"li t0, 0xFFB12000\nli t1, {bits:#x}\nsw t1, 0x90(t0)\n" + boot("bh", 1) + exit_with(),
        "trisc1": f"li t0, {PC_BUF:#x}\nlw a1, 0(t0)\n" + blocked_setdmareg("bh", 4, 1, 1)
                  + "lw a2, 4(t0)\n" + store("a1", 0) + f"li t1, {PC_BUF + 0x20 + 16:#x}\nsw x0, 0(t1)\n"
                  + exit_with()})
    assert result.reason == "halted"
    assert results(m, 1) == [0x2A]


@pytest.mark.parametrize("chip", CHIPS)
def test_coprocessor_done_check_waits_for_the_pushed_instructions(chip):
    log = SyncLog()
    m, result = run(chip, {
        "brisc": boot(chip, 0, 1) + exit_with(),
        # tensix_sync(): store then load CoprocessorDoneCheck; then T0's GPR 4 through REGFILE_BASE
        "trisc0": blocked_setdmareg(chip, 2, 4, 0x66) + f"li t0, {PC_BUF:#x}\nsw x0, 4(t0)\nlw t1, 4(t0)\n"
                  "and x0, x0, t1\n" + f"li t0, {GPR:#x}\nlw a1, 16(t0)\n" + exit_with("a1"),
        "trisc1": post_later(2, "p")}, log)
    assert result.reason == "halted"
    assert m.agent("trisc0").exit_code == 0x66
    assert set(log.waits("trisc0")) == {"Tensix T0 to finish every instruction trisc0 pushed (CoprocessorDoneCheck)"}


@pytest.mark.parametrize("chip", CHIPS)
def test_mop_expander_done_check_waits_for_a_queued_mop(chip):
    # MopCfg[3] (template 0's InsnA0) sets GPR 6; a MOP queued behind a held SETDMAREG;
    # mop_sync() must wait until it is expanded before MopCfg[3] changes to set GPR 8;
    # tensix_sync() then orders the GPR loads after both MOPs' instructions
    log = SyncLog()
    set6, set8 = tensix(chip, "SETDMAREG 0, 0x11, 0, 12\nSETDMAREG 0, 0x22, 0, 16")
    mop_cfg = f"li t2, {memmap.TENSIX_MOP_CFG_BASE:#x}\n"
    m, result = run(chip, {
        "brisc": boot(chip, 0, 1) + exit_with(),
        "trisc0": mop_cfg + f"li t1, {set6:#x}\nsw t1, 12(t2)\n" + blocked_setdmareg(chip, 3, 5, 1)
                  + push(chip, "MOP 0, 0, 0") + f"li t0, {PC_BUF:#x}\nsw x0, 8(t0)\nlw t1, 8(t0)\nand x0, x0, t1\n"
                  + f"li t1, {set8:#x}\nsw t1, 12(t2)\n" + push(chip, "MOP 0, 0, 0") + tensix_sync()
                  + f"li t0, {GPR:#x}\nlw a1, 24(t0)\nlw a2, 32(t0)\nadd a1, a1, a2\n" + exit_with("a1"),
        "trisc1": post_later(3, "p")}, log)
    assert result.reason == "halted"
    assert m.agent("trisc0").exit_code == 0x11 + 0x22
    assert any("MOPExpanderDoneCheck" in w and "1 queued" in w for w in log.waits("trisc0"))


@pytest.mark.parametrize("chip", CHIPS)
def test_semaphores_through_pc_buf_base_meet_sempost_and_semget(chip):
    # Tensix T0 posts semaphore 5 three times; T0's core polls it through PC_BUF_BASE + 0x34,
    # then decrements it once with a store of 1 and increments it with a store of 0 twice
    m, result = run(chip, {
        "brisc": boot(chip, 0) + exit_with(),
        "trisc0": push(chip, "SEMINIT 15, 0, 0x20\nSEMPOST 0x20\nSEMPOST 0x20\nSEMPOST 0x20")
                  + f"li t0, {PC_BUF + 0x20 + 4 * 5:#x}\npoll:\nlw a1, 0(t0)\nli t1, 3\nbne a1, t1, poll\n"
                  "li t1, 1\nsw t1, 0(t0)\nlw a2, 0(t0)\nsw x0, 0(t0)\nsw x0, 0(t0)\nlw a3, 0(t0)\n"
                  + store("a1", 0) + store("a2", 1) + store("a3", 2) + exit_with()})
    assert result.reason == "halted"
    assert results(m, 3) == [3, 2, 4]
    from tessera_tensix.syncunit import SyncUnit

    assert m.ext["tensix"].unit("sync", SyncUnit).value[5] == 4


def test_semaphore_window_ends_after_eight_semaphores():
    with pytest.raises(MemoryFault, match="past the 8 Tensix semaphores"):
        run("bh", {"brisc": boot("bh", 0) + exit_with(),
                   "trisc0": f"li t0, {PC_BUF + 0x40:#x}\nlw a1, 0(t0)\n" + exit_with()})


# ------------------------------------------------------------------- GPRs and configuration
@pytest.mark.parametrize("chip", CHIPS)
def test_gprs_round_trip_between_riscv_and_tensix(chip):
    # RISCV B writes T1's GPR 10 (GPRs[1][10]); T1 reads it, writes GPR 12 and has WRCFG copy
    # it to Config[0][20]; stores Config[0][21] and has RDCFG copy it to GPR 13; byte lanes.
    # Each pushed copy is read back after tensix_sync(), as a kernel must (nothing else
    # orders a TRISC's loads after the instructions it pushed)
    m, result = run(chip, {
        "brisc": f"li t0, {GPR + 4 * (64 + 10):#x}\nli t1, 0xCAFE1234\nsw t1, 0(t0)\n" + boot(chip, 1) + exit_with(),
        "trisc1": f"li t0, {GPR:#x}\nli t5, {CFG:#x}\nlw a1, 40(t0)\nli t1, 0xABCDEF\nsw t1, 48(t0)\n"
                  + push(chip, "WRCFG 12, 0, 20") + tensix_sync() + "lw a2, 80(t5)\n"
                  + "li t1, 0x5A5A1234\nsw t1, 84(t5)\n" + push(chip, "RDCFG 13, 21") + tensix_sync() + "lw a3, 52(t0)\n"
                  + "li t1, 0x11112222\nsw t1, 56(t0)\nli t1, 0x3333\nsh t1, 58(t0)\nlw a4, 56(t0)\nlbu a5, 57(t0)\n"
                  + "".join(store(r, i) for i, r in enumerate(("a1", "a2", "a3", "a4", "a5"))) + exit_with()})
    assert result.reason == "halted"
    assert results(m, 5) == [0xCAFE1234, 0xABCDEF, 0x5A5A1234, 0x3333_2222, 0x22]
    assert m.ext["tensix"].threads[1].gpr[10] == 0xCAFE1234


@pytest.mark.parametrize("chip", CHIPS)
def test_config_banks_and_thread_config_through_tensix_cfg_base(chip):
    rmap = register_map(chip)
    bank = rmap.cfg_words * 4
    tcfg = bank * (3 if chip == "bh" else 2)
    stride = 16 if chip == "wh" else 4
    index = rmap.tcfg_index["ADDR_MOD_AB_SEC0_SrcAIncr"]
    entry = CFG + tcfg + stride * index                       # ThreadConfig[0][index]
    m, result = run(chip, {
        # Config[1][20] by RISCV B; read back, and Config[0][20] is untouched
        "brisc": f"li t0, {CFG:#x}\nli t1, {CFG + bank:#x}\nli t2, 0x600DF00D\nsw t2, 80(t1)\n"
                 "lw a1, 80(t1)\nlw a2, 80(t0)\nlhu a3, 82(t1)\n" + store("a1", 0) + store("a2", 1) + store("a3", 2)
                 + boot(chip, 0) + exit_with(),
        # T0's SETC16 is seen in ThreadConfig[0] once tensix_sync() says it ran; a RISC-V
        # store there does nothing
        "trisc0": push(chip, f"SETC16 {index}, 0xBEEF") + tensix_sync() + f"li t0, {entry:#x}\nlw a1, 0(t0)\n"
                  "li t1, 1\nsw t1, 0(t0)\nlhu a2, 0(t0)\n" + store("a1", 3) + store("a2", 4) + exit_with()})
    assert result.reason == "halted"
    assert results(m, 5) == [0x600DF00D, 0, 0x600D, 0xBEEF, 0xBEEF]
    from tessera_tensix.cfgregs import read_cfg

    assert read_cfg(m.ext["tensix"], 1, 20) == 0x600DF00D


def test_blackhole_config_dual_write_writes_both_banks():
    bank = register_map("bh").cfg_words * 4
    m, result = run("bh", {"brisc": f"li t0, {CFG:#x}\nli t1, {CFG + 2 * bank:#x}\nli t2, 0x1234\nsw t2, 80(t1)\n"
                                    f"lw a1, 80(t0)\nli t0, {CFG + bank:#x}\nlw a2, 80(t0)\nlw a3, 80(t1)\n"
                                    + store("a1", 0) + store("a2", 1) + store("a3", 2) + exit_with()})
    assert result.reason == "halted"
    assert results(m, 3) == [0x1234, 0x1234, 0x1234]


@pytest.mark.parametrize("program, message", [
    (f"li t0, {CFG:#x}\nsh t0, 80(t0)\n", "backend configuration takes only sw"),
    (f"li t0, {CFG + 0xF000:#x}\nlw t1, 0(t0)\n", "is past ThreadConfig"),
    (f"li t0, {TDMA + 0x400:#x}\nlw t1, 0(t0)\n", "0xffb11400 is not a TDMA-RISC register"),
    (f"li t0, {TDMA + 0x30:#x}\nlw t1, 0(t0)\n", "does not model those FIFOs"),
])
def test_bad_accesses_to_the_register_windows_are_one_line_faults(program, message):
    with pytest.raises(MemoryFault) as err:
        run("bh", {"brisc": program + exit_with()})
    assert message in str(err.value) and "agent brisc" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("chip", CHIPS)
def test_tdma_risc_registers(chip):
    # the mover's L1 base and L1-write command, the packers' scalers and SetRegBase
    m, result = run(chip, {"brisc": f"li t0, {TDMA:#x}\n"
                                    "li t1, 0x1230\nsw t1, 0x2C(t0)\nlw a1, 0x2C(t0)\nlw a2, 0x14(t0)\n"
                                    "li t1, 0x30000\nsw t1, 0(t0)\nli t1, 0xFEEDBEEF\nsw t1, 8(t0)\n"
                                    "li t1, 0x666\nsw t1, 0x10(t0)\n"
                                    "li t1, 0x1FFFFFF\nsw t1, 0x28(t0)\nlw a3, 0x28(t0)\n"
                                    "li t1, 0x5\nsw t1, 0x3C(t0)\nlw a4, 0x3C(t0)\n"
                                    "li t1, 0x6554AB\nsw t1, 0x38(t0)\nlw a5, 0x38(t0)\n"
                                    + "".join(store(r, i) for i, r in enumerate(("a1", "a2", "a3", "a4", "a5")))
                                    + exit_with()})
    assert result.reason == "halted"
    status = 1 << 3 | 1 << 5 | 4 << 8                  # idle mover, empty queues, capacity 4
    # CLK_GATE_HYST keeps its raw bits; SetScaler(0, 5) then reads back in ScalarsAndStatus;
    # MetadataFIFOStatus is PackRegAddrRaw << 8 with all four metadata FIFOs empty (0b01 each)
    assert results(m, 5) == [0x1230, status, 0x01FF007F, 0x5, 0x6554AB55]
    assert m.space.read(0x30000, 4) == 0xFEEDBEEF
    from tessera_tensix.pack import packers

    state = packers(m.ext["tensix"])
    assert state.set_reg_hi_scaler == [0x5, 0, 0, 0x1FF]
    # SetPackRegAddr(0x6554AB): mid 0xAB / 0x155 from bits 9:0 / 19:10, hi 2 / 1 from 21:20 / 23:22
    assert state.set_reg_base[:2] == [0x80000 + 0x2AC, 0x40000 + 0x554]


AUTO_TTSYNC = {"tcfg.TENSIX_TRISC_SYNC_TrackTensixInstructions": 1, "tcfg.TENSIX_TRISC_SYNC_TrackGPR": 1}


@pytest.mark.parametrize("chip, config, waits", [
    ("bh", AUTO_TTSYNC, True),                             # Auto TTSync tracking GPRs
    ("bh", None, False),                                   # the bits clear (power-on)
    ("bh", {"tcfg.TENSIX_TRISC_SYNC_TrackTensixInstructions": 1,
            "tcfg.TENSIX_TRISC_SYNC_TrackGlobalCfg": 1}, False),   # tracking another resource
    ("wh", None, False),                                   # Wormhole has no Auto TTSync
], ids=["bh-auto-ttsync", "bh-off", "bh-tracks-cfg-only", "wh"])
def test_a_triscs_gpr_load_waits_for_its_pushed_instructions_only_with_auto_ttsync(chip, config, waits):
    # T0 stores 0xAAAA5555 to its GPR 20, pushes a SETDMAREG of GPR 20's low half that waits
    # for a semaphore T1 posts later, then loads GPR 20 at once.  With Auto TTSync tracking
    # GPRs the load waits until Tensix T0 is idle and sees 0xAAAA0077; otherwise it runs at
    # once, as the hardware's would race, and sees the value from before the SETDMAREG
    log = SyncLog()
    m, result = run(chip, {
        "brisc": boot(chip, 0, 1) + exit_with(),
        "trisc0": f"li t0, {GPR:#x}\nli t1, 0xAAAA5555\nsw t1, 80(t0)\n" + blocked_setdmareg(chip, 6, 20, 0x77)
                  + "lw a1, 80(t0)\n" + store("a1", 0) + exit_with(),
        "trisc1": post_later(6, "p")}, log, config)
    assert result.reason == "halted"
    ttsync = ("Tensix T0 to finish the instructions trisc0 pushed before its load from REGFILE_BASE+0x50 "
              "(TTSync)")
    if waits:
        assert results(m, 1) == [0xAAAA0077]
        assert set(log.waits("trisc0")) == {ttsync}
    else:
        assert results(m, 1) == [0xAAAA5555]
        assert log.waits("trisc0") == []
    assert m.ext["tensix"].threads[0].gpr[20] == 0xAAAA0077          # the SETDMAREG ran in the end


def test_auto_ttsync_enabled_by_setc16_orders_only_the_tracked_resource():
    # T0 enables Auto TTSync for backend configuration only (SETC16 of TENSIX_TRISC_SYNC:
    # TrackTensixInstructions | TrackGlobalCfg; tensix_sync() makes sure it ran), stores
    # 0xAAAA5555 to GPR 20, pushes SEMWAIT / SETDMAREG GPR 20 := 0x77 / WRCFG GPR 20 to
    # Config[0][20], then loads GPR 20 (untracked: at once, the old value) and Config[0][20]
    # (tracked: waits for the WRCFG and sees the new value)
    rmap = register_map("bh")
    index = rmap.tcfg_index["TENSIX_TRISC_SYNC_TrackGlobalCfg"]
    bits = {name: lsb for name, lsb, _width in rmap.tcfg[index]}
    enable = 1 << bits["TENSIX_TRISC_SYNC_TrackTensixInstructions"] | 1 << bits["TENSIX_TRISC_SYNC_TrackGlobalCfg"]
    log = SyncLog()
    m, result = run("bh", {
        "brisc": boot("bh", 0, 1) + exit_with(),
        "trisc0": push("bh", f"SETC16 {index}, {enable:#x}") + tensix_sync()
                  + f"li t0, {GPR:#x}\nli t1, 0xAAAA5555\nsw t1, 80(t0)\n"
                  + push("bh", "SEMWAIT 0x1FF, 128, 1\nSETDMAREG 0, 0x77, 0, 40\nWRCFG 20, 0, 20")
                  + f"lw a1, 80(t0)\nli t5, {CFG:#x}\nlw a2, 80(t5)\n" + store("a1", 0) + store("a2", 1)
                  + exit_with(),
        "trisc1": post_later(7, "p")}, log)
    assert result.reason == "halted"
    assert results(m, 2) == [0xAAAA5555, 0xAAAA0077]
    assert set(log.waits("trisc0")) == {
        "Tensix T0 to finish every instruction trisc0 pushed (CoprocessorDoneCheck)",
        "Tensix T0 to finish the instructions trisc0 pushed before its load from TENSIX_CFG_BASE+0x50 (TTSync)"}


def test_setting_the_pcbuf_override_releases_cores_already_waiting():
    # T0 waits in tensix_sync() behind a held SETDMAREG, RISCV B in its read of PCBuf[0],
    # T2 in a load of its empty PCBuf; later T1 stores RISCV_DEBUG_REG_TRISC_PC_BUF_OVERRIDE:
    # OverrideEn + OverrideBusy for PCBuf[0] (B's read and CoprocessorDoneCheck return) and
    # OverrideEn with OverrideValue 0x2A for PCBuf[2] (T2's load returns it)
    bits = 0b11 | (1 | 0x2A << 2) << 20
    log = SyncLog()
    m, result = run("bh", {
        "brisc": boot("bh", 0, 1, 2) + f"li t0, {PC_BUF:#x}\nlw a1, 0(t0)\nli a1, 2\n" + store("a1", 1)
                 + exit_with(),
        "trisc0": blocked_setdmareg("bh", 5, 9, 0x99) + tensix_sync() + "li t1, 1\n" + store("t1", 0)
                  + f"li t1, {PC_BUF + 0x20 + 4 * 5:#x}\nsw x0, 0(t1)\n" + exit_with(),
        "trisc1": delay("d", 600) + f"li t0, 0xFFB12000\nli t1, {bits:#x}\nsw t1, 0x90(t0)\n" + exit_with(),
        "trisc2": f"li t0, {PC_BUF:#x}\nlw a1, 0(t0)\n" + store("a1", 2) + exit_with()}, log)
    assert result.reason == "halted"
    assert results(m, 3) == [1, 2, 0x2A]
    assert set(log.waits("trisc0")) == {"Tensix T0 to finish every instruction trisc0 pushed (CoprocessorDoneCheck)"}
    assert log.waits("trisc2") == ["PCBuf[2] (RISCV B to T2) to receive a value (empty)"]
    assert any("(RISCV B reads PCBuf[0])" in w for w in log.waits("brisc"))
    assert m.ext["tensix"].threads[0].gpr[9] == 0x99                  # T0's post let it run
