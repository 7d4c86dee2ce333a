"""SETRWC and INCRWC (RWCs.md, SETRWC.md, INCRWC.md), including SETRWC's bank hand-over.

Kernels run on direct-mode machines of both chips, on the engine the environment selects
(run again with TESSERA_ENGINE=step); expected counters are worked out by hand from the
functional models.
"""

from __future__ import annotations

import pytest
from tensix_srcab_support import CHIPS, core, incrwc, machine, mova2d, setdvalid, setrwc
from tensix_sync_support import SRCA_MATRIX, SRCA_UNPACK, stallwait

from tessera.errors import UnhandledTrap
from tessera_tensix.srcab import MATRIX, UNPACKERS


def _rwc(chip: str, program: list[int], start: dict[str, int] | None = None, **config) -> dict[str, int]:
    m = machine(chip, [program], **config)
    if start:
        m.agent("t0").rwc.update(start)
    m.run()
    return m.agent("t0").rwc


@pytest.mark.parametrize("chip", CHIPS)
def test_setrwc_sets_the_selected_counters_and_their_cr(chip):
    start = {"srca": 9, "srca_cr": 9, "srcb": 9, "srcb_cr": 9, "dst": 99, "dst_cr": 99, "fidelity": 3}
    rwc = _rwc(chip, [setrwc(srca=5, srcb=6, dst=7, set_a=1, set_dst=1)], start)
    assert (rwc["srca"], rwc["srca_cr"]) == (5, 5)
    assert (rwc["srcb"], rwc["srcb_cr"]) == (9, 9)            # not selected
    assert (rwc["dst"], rwc["dst_cr"]) == (7, 7)
    assert rwc["fidelity"] == 3
    rwc = _rwc(chip, [setrwc(set_fid=1, set_b=1, srcb=15)], start)
    assert rwc["fidelity"] == 0 and rwc["srcb"] == 15


@pytest.mark.parametrize("chip", CHIPS)
def test_setrwc_cr_forms_add_to_the_cr_counter_or_the_counter(chip):
    start = {"srca": 40, "srca_cr": 60, "srcb": 1, "srcb_cr": 2, "dst": 1000, "dst_cr": 500}
    rwc = _rwc(chip, [setrwc(srca_cr=1, srca=7, set_a=1, srcb_cr=1, srcb=3, set_b=1)], start)
    assert (rwc["srca"], rwc["srca_cr"]) == (3, 3)            # (60 + 7) & 63
    assert (rwc["srcb"], rwc["srcb_cr"]) == (5, 5)
    rwc = _rwc(chip, [setrwc(dst_cr=1, dst=8, set_dst=1)], start)
    assert (rwc["dst"], rwc["dst_cr"]) == (508, 508)
    # DstCtoCr adds to Dst (not Dst_Cr), takes precedence, and needs no Dst bit; 10 bits wrap
    rwc = _rwc(chip, [setrwc(dst_ctocr=1, dst_cr=1, dst=15)], start)
    assert (rwc["dst"], rwc["dst_cr"]) == (1015, 1015)
    rwc = _rwc(chip, [setrwc(dst_ctocr=1, dst=15)], {"dst": 1020})
    assert (rwc["dst"], rwc["dst_cr"]) == (11, 11)


@pytest.mark.parametrize("chip", CHIPS)
def test_incrwc(chip):
    start = {"srca": 62, "srca_cr": 10, "srcb": 5, "srcb_cr": 20, "dst": 100, "dst_cr": 200}
    rwc = _rwc(chip, [incrwc(srca=3, srcb=4, dst=5)], start)
    assert (rwc["srca"], rwc["srcb"], rwc["dst"]) == (1, 9, 105)
    assert (rwc["srca_cr"], rwc["srcb_cr"], rwc["dst_cr"]) == (10, 20, 200)
    rwc = _rwc(chip, [incrwc(srca_cr=1, srca=3, dst_cr=1, dst=15, srcb=1)], start)
    assert (rwc["srca"], rwc["srca_cr"]) == (13, 13)
    assert (rwc["dst"], rwc["dst_cr"]) == (215, 215)
    assert (rwc["srcb"], rwc["srcb_cr"]) == (6, 20)


@pytest.mark.parametrize("chip", CHIPS)
def test_setrwc_clr_a_gives_the_bank_back_and_flips(chip):
    m = machine(chip, [[setdvalid(1, 1), setdvalid(1, 1), setrwc(flip_a=1), setrwc(flip_b=1, flip_a=1)]])
    m.run()
    c = core(m)
    assert c.srca.allowed == [UNPACKERS, UNPACKERS] and c.srca.matrix_bank == 0
    assert c.srcb.allowed == [UNPACKERS, MATRIX] and c.srcb.matrix_bank == 1


@pytest.mark.parametrize("chip", CHIPS)
def test_clr_dvalid_disable_keeps_the_bank_but_still_flips(chip):
    m = machine(chip, [[setdvalid(1), setrwc(flip_a=1)]])
    m.agent("t0").tcfg.set("CLR_DVALID_SrcA_Disable", 1)
    m.run()
    c = core(m)
    assert c.srca.allowed == [MATRIX, UNPACKERS] and c.srca.matrix_bank == 1


@pytest.mark.parametrize("chip", CHIPS)
def test_a_bank_sequence_between_unpack_and_math_threads(chip):
    """T0 fills both banks (SETDVALID twice) and then waits (STALLWAIT on "SrcA bank of the
    unpacker is not the unpackers'") for the matrix unit to return bank 0; T1 waits until
    it owns a bank, moves it to Dest and returns it with SETRWC CLR_A."""
    unpack = [setdvalid(1), setdvalid(1), stallwait(1 << 3 | 1, SRCA_UNPACK[chip]), setdvalid(1)]
    math = [stallwait(1 << 6, SRCA_MATRIX[chip]), mova2d(chip, 0, 0), setrwc(flip_a=1)]
    m = machine(chip, [unpack, math])
    c = core(m)
    c.srca.rows[0, 0] = 0x3F << 11 | 0x7F        # any cell; Dest must receive it
    m.run()
    assert all(m.agent(t).status == "halted" for t in ("t0", "t1"))
    # bank 0 went back to the unpackers (CLR_A) and was given again by T0's third SETDVALID
    assert c.srca.allowed == [MATRIX, MATRIX]
    assert c.srca.matrix_bank == 1 and c.srca.unpacker_bank == 1
    assert c.dest.bits[0, 0] == 0x3F7F


@pytest.mark.parametrize("chip", CHIPS)
def test_setrwc_reserved_bits_break_a_rule(chip):
    m = machine(chip, [[setrwc(set_a=1, srca=1) | 1 << 4]])
    with pytest.raises(UnhandledTrap, match="reserved bits"):
        m.run()
    assert _rwc(chip, [setrwc(set_a=1, srca=1) | 1 << 4], lenient=True)["srca"] == 1
