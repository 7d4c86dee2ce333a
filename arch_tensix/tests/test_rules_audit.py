"""The scheduling rules of :mod:`tessera_tensix.hazards` and the audit table of docs/tensix.md.

Each rule: a kernel that breaks it stops the run with one line naming the thread, the
instruction (and its address) and the rule; with ``lenient`` the kernel runs on and ends
as the same kernel spaced out correctly does (the documented "as if the hazard were
absent"); the correctly spaced kernel runs clean.  Pages: SFPLOAD.md / SFPLOADMACRO.md
(Dest read-after-write), WRCFG.md, CFGSHIFTMASK.md, RDCFG.md (Blackhole), SFPMAD.md and
its family, SFPSHFT2.md, SFPCONFIG.md (Wormhole B0 / Blackhole A0 instruction pages).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from tensix_ctl_support import SFPIADD, SFPLOADMACRO, SFPSHFT2
from tensix_dest_support import sfpload
from tensix_expander_support import MOP, template1_cfg
from tensix_mad_support import (
    SFPADDI,
    SFPCONFIG,
    SFPLOADI,
    SFPLUT,
    SFPLUTFP32,
    SFPMAD,
    SFPMOV,
    SFPMULI,
    SFPNOP,
)
from tensix_matrix_support import mvmul
from tensix_srcab_support import mova2d, setdvalid
from tensix_sync_support import seminit, sempost, semwait, stallwait
from tensix_unit_support import CFGSHIFTMASK, RDCFG, WRCFG, machine, set_gpr

from tessera.errors import UnhandledTrap
from tessera_tensix import cfgregs
from tessera_tensix.matrixbanks import src_from_bf16
from tessera_tensix.mop import expander_of

CHIPS = ("bh", "wh")
NOP = 0x0200_0000
#: STALLWAIT's matrix-unit condition ("an instruction in the FPU pipeline") per chip
FPU = {"wh": 1 << 7, "bh": 1 << 4}
B6, B8 = 1 << 6, 1 << 8
REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "arch_tensix" / "src" / "tessera_tensix"


def stop(m, pattern: str) -> str:
    """Run ``m``; it must stop with one line matching ``pattern`` (a regex); the line."""
    with pytest.raises(UnhandledTrap) as info:
        m.run(max_steps=2000)
    text = str(info.value)
    assert "\n" not in text
    assert re.search(pattern, text), text
    return text


def clean(m):
    assert m.run(max_steps=2000).exit_code == 0
    return m.agent("t0")


# ------------------------------------------------------------------ Dest read-after-write
def _dest_machine(chip: str, *kernels: list[int], **config):
    """SrcA bank 0 row 0 = BF16 1.0 .. 16.0 for MOVA2D; ``kernels[i]`` on Ti."""
    m = machine(chip, *kernels, **config)
    core = m.agent("t0").core
    core.srca.rows[0, 0] = src_from_bf16(np.array([0x3F80 + 0x80 * i for i in range(16)], dtype=np.uint32))
    return m


def _move_then_load(chip: str, between: list[int], writer: int | None = None) -> list[int]:
    return [setdvalid(1, 1), mova2d(chip, 0, 0) if writer is None else writer, *between,
            sfpload(0, 0, 0, 0, chip=chip)]


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("gap", [0, 1, 2])
def test_a_vector_read_too_soon_after_a_matrix_write_stops(chip, gap):
    m = _dest_machine(chip, _move_then_load(chip, [NOP] * gap))
    stop(m, rf"unhandled trap: sfpload: reads Dest rows 0\.\.3, which MOVA2D at 0x4 wrote with {gap} "
            rf"instructions? between; at least 3 must come between .*\(agent t0, pc {8 + 4 * gap:#010x}")


@pytest.mark.parametrize("chip", CHIPS)
def test_three_instructions_between_are_enough_and_lenient_reads_the_new_rows(chip):
    spaced = clean(_dest_machine(chip, _move_then_load(chip, [NOP] * 3)))
    want = spaced.core.sfpu.lreg[0].copy()
    assert want.any()                                       # the row MOVA2D wrote, not zeros
    lenient = clean(_dest_machine(chip, _move_then_load(chip, []), lenient=True))
    assert np.array_equal(lenient.core.sfpu.lreg[0], want)


@pytest.mark.parametrize("chip", CHIPS)
def test_the_window_is_per_row_and_covers_the_matrix_arithmetic(chip):
    # MVMUL writes Dest rows 0..7: a read of rows 8..11 is far enough away, 4..7 is not
    clean(_dest_machine(chip, [setdvalid(1, 1), mvmul(chip, 0), sfpload(0, 0, 0, 8, chip=chip)]))
    stop(_dest_machine(chip, [setdvalid(1, 1), mvmul(chip, 0), sfpload(0, 0, 0, 4, chip=chip)]),
         r"sfpload: reads Dest rows 4\.\.7, which MVMUL at 0x4 wrote with 0 instructions between")


@pytest.mark.parametrize("chip", CHIPS)
def test_stallwait_on_the_matrix_unit_for_the_vector_unit_ends_the_window(chip):
    clean(_dest_machine(chip, _move_then_load(chip, [stallwait(B8, FPU[chip])])))
    # blocking only the matrix unit (B6) does not hold the SFPLOAD back
    stop(_dest_machine(chip, _move_then_load(chip, [stallwait(B6, FPU[chip])])),
         r"sfpload: reads Dest rows 0\.\.3, which MOVA2D at 0x4 wrote with 1 instruction between")


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("loops, ok", [(2, False), (3, True)])
def test_instructions_a_mop_issues_count_one_by_one(chip, loops, ok):
    m = _dest_machine(chip, _move_then_load(chip, [MOP(1, 0, 0)]))
    expander_of(m.agent("t0")).program(template1_cfg(1, loops, loop=SFPNOP()))
    if ok:
        clean(m)
    else:
        stop(m, r"which MOVA2D at 0x4 wrote with 2 instructions between")


@pytest.mark.parametrize("chip", CHIPS)
def test_sfploadmacro_reads_dest_under_the_same_rule(chip):
    words = [setdvalid(1, 1), mova2d(chip, 0, 0), SFPLOADMACRO(0, 0, 0, 0, 0, 0)]
    stop(_dest_machine(chip, words), r"sfploadmacro: reads Dest rows 0\.\.3, which MOVA2D at 0x4")


@pytest.mark.parametrize("chip", CHIPS)
def test_another_threads_write_is_not_counted(chip):
    # T0 moves and posts; T1 waits for the post and loads at once: their distance is the
    # threads' synchronisation (timing), not the rule's instruction count
    m = _dest_machine(chip, [seminit(1, 0, 2), setdvalid(1, 1), mova2d(chip, 0, 0), sempost(2)],
                      [semwait(B8, 2, 1), sfpload(0, 0, 0, 0, chip=chip)])
    assert m.run(max_steps=2000).exit_code == 0
    assert m.agent("t1").core.sfpu.lreg[0].any()


# ------------------------------------------------------------------ WRCFG / CFGSHIFTMASK / RDCFG
def _srca_format_word(chip: str, fmt: int) -> tuple[int, int]:
    """(register index, value) setting ALU_FORMAT_SPEC_REG0_SrcA to ``fmt``."""
    rmap = cfgregs.register_map(chip)
    index = rmap.cfg_index["ALU_FORMAT_SPEC_REG0_SrcA"]
    shift = next(s for n, s, _m in rmap.cfg[index] if n == "ALU_FORMAT_SPEC_REG0_SrcA")
    return index, fmt << shift


def _wrcfg_then_move(chip: str, between: list[int]) -> list[int]:
    index, value = _srca_format_word(chip, 1)                 # FP16: MOVA2D's style changes
    return [*set_gpr(1, value), setdvalid(1, 1), WRCFG(1, 0, index), *between, mova2d(chip, 0, 0)]


@pytest.mark.parametrize("chip", CHIPS)
def test_the_instruction_right_after_wrcfg_must_not_consume_it(chip):
    text = stop(_dest_machine(chip, _wrcfg_then_move(chip, [])),
                r"unhandled trap: ttmova2d: reads configuration field ALU_FORMAT_SPEC_REG0_SrcA, which the "
                r"WRCFG right before \(at 0xc\) writes; .*WRCFG\.md.*\(agent t0, pc 0x00000010")
    assert "must not consume what it writes" in text
    spaced = clean(_dest_machine(chip, _wrcfg_then_move(chip, [NOP])))
    lenient = clean(_dest_machine(chip, _wrcfg_then_move(chip, []), lenient=True))
    assert np.array_equal(lenient.core.dest.bits[0], spaced.core.dest.bits[0])
    assert spaced.core.dest.bits[0].any()


@pytest.mark.parametrize("chip", CHIPS)
def test_a_configuration_unit_instruction_right_after_wrcfg_is_exempt(chip):
    index, value = _srca_format_word(chip, 1)
    t = clean(machine(chip, [*set_gpr(1, value), WRCFG(1, 0, index), RDCFG(2, index)]))
    assert t.gpr[2] == value


@pytest.mark.parametrize("chip", CHIPS)
def test_wrcfg_issued_by_a_mop_watches_the_instruction_after_the_mop(chip):
    index, value = _srca_format_word(chip, 1)
    m = _dest_machine(chip, [*set_gpr(1, value), setdvalid(1, 1), MOP(1, 0, 0), mova2d(chip, 0, 0)])
    expander_of(m.agent("t0")).program(template1_cfg(1, 1, loop=WRCFG(1, 0, index)))
    stop(m, r"ttmova2d: reads configuration field ALU_FORMAT_SPEC_REG0_SrcA, which the WRCFG right before")


def test_cfgshiftmask_watches_the_next_instruction_too():
    index, _ = _srca_format_word("bh", 1)
    words = [setdvalid(1, 1), CFGSHIFTMASK(0, 0, 3, 0, 0, index), mova2d("bh", 0, 0)]
    stop(_dest_machine("bh", words), r"ttmova2d: reads configuration field .*CFGSHIFTMASK right before.*CFGSHIFTMASK\.md")
    clean(_dest_machine("bh", words[:2] + [NOP] + words[2:]))


@pytest.mark.parametrize("chip", CHIPS)
def test_blackhole_rdcfg_result_is_not_ready_for_the_next_instruction(chip):
    index, value = _srca_format_word(chip, 1)
    words = [*set_gpr(1, value), WRCFG(1, 0, index), NOP, RDCFG(2, index), WRCFG(2, 0, index)]
    if chip == "wh":                                         # Wormhole's RDCFG blocks its thread
        clean(machine(chip, words, strict_rdcfg=True))
        return
    # checked only with strict_rdcfg: the vendor's own matmul kernels break it (docs/tensix.md)
    assert clean(machine(chip, words)).gpr[2] == value
    stop(machine(chip, words, strict_rdcfg=True),
         r"ttwrcfg: reads GPR 2, which the RDCFG right before \(at 0x10\) writes; .*RDCFG\.md")
    spaced = clean(machine(chip, words[:-1] + [stallwait(1 << 7, 0), words[-1]], strict_rdcfg=True))
    lenient = clean(machine(chip, words, lenient=True, strict_rdcfg=True))
    assert lenient.gpr[2] == spaced.gpr[2] == value


# ------------------------------------------------------------------ the vector unit's next cycle
WRITERS = {                                                  # word, the LReg it writes
    "SFPMAD": (SFPMAD(1, 2, 3, 4, 0), 4), "SFPADDI": (SFPADDI(0x3F80, 4, 0), 4),
    "SFPMULI": (SFPMULI(0x4000, 4, 0), 4), "SFPLUT": (SFPLUT(4, 0), 4),
    "SFPLUTFP32": (SFPLUTFP32(4, 0), 4),
}


def _mad_kernel(writer: int, between: list[int], reader: int) -> list[int]:
    return [SFPLOADI(1, 0, 0x4040), SFPLOADI(2, 0, 0x3F00), SFPLOADI(3, 0, 0x3F80), SFPLOADI(4, 0, 0x4000),
            writer, *between, reader]


@pytest.mark.parametrize("name", WRITERS)
def test_wormhole_mad_results_are_not_readable_on_the_next_cycle(name):
    writer, vd = WRITERS[name]
    reader = SFPMOV(vd, 7, 0)                                # reads VC = the result
    stop(machine("wh", _mad_kernel(writer, [], reader)),
         rf"{name.lower()}: the next instruction, SFPMOV at 0x14, reads LReg\[{vd}\], which this {name} writes; "
         rf"on Wormhole software must keep them a cycle apart \({name}\.md.*\(agent t0, pc 0x00000010")
    spaced = clean(machine("wh", _mad_kernel(writer, [SFPNOP()], reader)))
    lenient = clean(machine("wh", _mad_kernel(writer, [], reader), lenient=True))
    assert np.array_equal(lenient.core.sfpu.lreg[7], spaced.core.sfpu.lreg[7])
    clean(machine("wh", _mad_kernel(writer, [], SFPMOV(1, 7, 0))))   # another register: fine
    clean(machine("bh", _mad_kernel(writer, [], reader)))          # Blackhole stalls by itself


def test_a_mad_issued_by_a_mop_looks_at_the_word_after_the_mop():
    m = machine("wh", _mad_kernel(MOP(1, 0, 0), [], SFPMOV(4, 7, 0)))
    expander_of(m.agent("t0")).program(template1_cfg(1, 1, loop=SFPMAD(1, 2, 3, 4, 0)))
    stop(m, r"sfpmad: the next instruction, SFPMOV at 0x14, reads LReg\[4\]")


@pytest.mark.parametrize("mod1, reader, ok", [
    (3, SFPMAD(2, 5, 5, 6, 0), False),                       # SHFLROR1 VD=2, then a read of L2
    (3, SFPMAD(5, 5, 5, 6, 0), True),                        # ... a read of another register
    (3, SFPMOV(1, 7, 0), False),                             # ... SFPMOV: on the page's list
    (2, SFPIADD(1, 5, 6, 1), False),                         # SHFLROR1_AND_COPY4, then a listed one
    (2, SFPMAD(5, 5, 5, 6, 0), True),                        # ... an unlisted one reading L5
    (2, SFPLOADI(2, 0, 0x3F80), False),                      # ... one writing L2
    (4, SFPNOP(), True),
])
def test_wormhole_sfpshft2_shuffles_restrict_the_next_cycle(mod1, reader, ok):
    words = [SFPLOADI(1, 0, 0x4040), SFPSHFT2(0, 1, 2, mod1), reader]
    if ok:
        clean(machine("wh", words))
    else:
        stop(machine("wh", words), rf"sfpshft2: the next instruction \(at 0x8\) breaks a rule: .*Mod1={mod1}.*SFPSHFT2\.md")
        clean(machine("wh", words, lenient=True))
    clean(machine("bh", words))                              # Blackhole stalls by itself


@pytest.mark.parametrize("chip", CHIPS)
def test_the_instruction_after_a_backdoor_switch_may_see_either_value(chip):
    # LaneConfig.DISABLE_BACKDOOR_LOAD set, then cleared: an SFPLOADI with VD = 12 right
    # after the second SFPCONFIG is a backdoor template load only if it sees the new value
    words = [SFPCONFIG(2, 15, 1), SFPNOP(), SFPCONFIG(0, 15, 1), SFPLOADI(12, 0, 0x3F80)]
    stop(machine(chip, words), r"sfpconfig: changes LaneConfig.DISABLE_BACKDOOR_LOAD, and the next "
                               r"instruction, SFPLOADI at 0xc with VD=12, might see the old or the new value")
    spaced = clean(machine(chip, words[:3] + [SFPNOP()] + words[3:]))
    lenient = clean(machine(chip, words, lenient=True))
    assert np.array_equal(lenient.core.sfpu.template, spaced.core.sfpu.template)
    assert (spaced.core.sfpu.template[0] == SFPLOADI(12, 0, 0x3F80)).all()


# ------------------------------------------------------------------ the audit table
def _audit_rows() -> list[list[str]]:
    """The rows of the table under docs/tensix.md's "Every rule" heading."""
    text = (REPO / "docs" / "tensix.md").read_text()
    start = text.index("### Every rule")
    section = text[start:text.index("\n### ", start + 1)]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| unit")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[1:] if not set(row) <= set("|-")]


def _sources() -> str:
    return "\n".join(p.read_text() for p in sorted(PACKAGE.rglob("*.py")))


def test_the_audit_table_lists_only_rules_the_package_has():
    rows = _audit_rows()
    assert len(rows) > 60
    sources = _sources()
    missing = []
    for row in rows:
        texts = re.findall(r"`([^`]+)`", row[2])
        assert texts, row
        missing += [t for t in texts if t not in sources]
    assert missing == []


def test_every_rule_text_in_the_package_is_in_the_audit_table():
    # every rules.broken (or unit-level broken / _undefined) call that passes a string
    # literal has one of the table's quoted texts within its first few lines
    quoted = [t for row in _audit_rows() for t in re.findall(r"`([^`]+)`", row[2])]
    calls = re.compile(r"(?:rules\.broken\([^,()]+,\s*[^,()]+,\s*|(?<![.\w])broken\(\s*|self\.broken\(\s*"
                       r"|_undefined\([^,()]+,\s*[^,()]+,\s*|_broken\([^,()]+,\s*[^,()]+,\s*[^,()]+,\s*)\(?(f?[\"'])")
    uncovered = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        for match in calls.finditer(text):
            window = text[match.start(1):match.start(1) + 320]
            literal = re.match(r"f?([\"'])(.*?)\1", window)
            words = re.sub(r"\{[^}]*\}", "", literal.group(2)) if literal else window
            if len(words) < 25:                              # a pass-through: f"{text} (undefined …)"
                continue
            if not any(t in window for t in quoted):
                line = text.count("\n", 0, match.start()) + 1
                uncovered.append(f"{path.name}:{line}")
    assert uncovered == []
