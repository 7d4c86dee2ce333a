"""The bundled example kernel, and the list of instructions direct mode must execute."""

from __future__ import annotations

import pytest
from tensix_table_support import machine, need_semantics, words

from tessera.cli.demo import run_example
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.examples import EXAMPLES, EXAMPLES_WH, EXP_RECIP, EXP_WH, dest_fp32, expected
from tessera_tensix.isa import ISSUE5
from tessera_tensix.semantics import REGISTRY

#: Issue 5: every Blackhole SFPU instruction, ZEROACC, the seed-000 scalar-unit GPR
#: instructions, and the END pseudo-instruction of the all-zero word.
ISSUE5_INSTRUCTIONS = [
    "SFPLOAD", "SFPLOADI", "SFPSTORE", "SFPLUT", "SFPMULI", "SFPADDI", "SFPDIVP2", "SFPEXEXP",
    "SFPEXMAN", "SFPIADD", "SFPSHFT", "SFPSETCC", "SFPMOV", "SFPABS", "SFPAND", "SFPOR", "SFPNOT",
    "SFPLZ", "SFPSETEXP", "SFPSETMAN", "SFPMAD", "SFPADD", "SFPMUL", "SFPPUSHC", "SFPPOPC",
    "SFPSETSGN", "SFPENCC", "SFPCOMPC", "SFPTRANSP", "SFPXOR", "SFP_STOCH_RND", "SFPNOP", "SFPCAST",
    "SFPCONFIG", "SFPSWAP", "SFPLOADMACRO", "SFPSHFT2", "SFPLUTFP32", "SFPLE", "SFPGT", "SFPMUL24",
    "SFPARECIP", "ZEROACC", "ADDDMAREG", "SUBDMAREG", "MULDMAREG", "BITWOPDMAREG", "SHIFTDMAREG",
    "CMPDMAREG", "SETDMAREG", "FLUSHDMA", "END",
]


def test_table_every_issue5_instruction_has_semantics():
    assert set(ISSUE5_INSTRUCTIONS) == ISSUE5
    missing = [name for name in ISSUE5_INSTRUCTIONS if REGISTRY.lookup(name) is None]
    assert missing == []


def test_table_example_assembles_and_ends_with_end():
    assert [e.name for e in EXAMPLES] == ["exp-recip", "datacopy", "eltwise-add", "matmul"]  # test_demos.py: the others
    assert TENSIX_BH.examples == EXAMPLES and TENSIX_WH.examples == EXAMPLES_WH and EXAMPLES_WH[0] == EXP_WH
    program = words(EXP_RECIP.source)
    assert program[-1] == 0 and len(program) == 20
    program = words(EXP_WH.source, TENSIX_WH)
    assert program[-1] == 0 and len(program) == 15      # (3 SFPNOPs: Wormhole's MAD results)


@pytest.mark.parametrize("arch, example", [(TENSIX_BH, EXP_RECIP), (TENSIX_WH, EXP_WH)],
                         ids=["bh-exp-recip", "wh-exp"])
def test_table_example_runs_and_passes_its_check(arch, example):
    need_semantics("SFPLOADI", "SFPSTORE", "SFPLOAD", "SFPMAD")
    ok, summary = run_example(None, arch, example)
    assert ok, summary
    assert "halted" in summary


def test_table_example_check_detects_wrong_results():
    need_semantics("SFPLOADI", "SFPSTORE", "SFPLOAD", "SFPMAD")
    m = machine(EXP_RECIP.source)
    result = m.run(max_steps=EXP_RECIP.max_steps)
    assert EXP_RECIP.check(m, result) is None
    e, r = expected()
    assert abs(dest_fp32(m.tensix.dest, 3, 14) - e) < 1e-6 and abs(dest_fp32(m.tensix.dest, 3, 15) - r) < 1e-5
    m.tensix.dest.bits[8 + 2, 6] ^= 0x40           # one mantissa bit of an exp result
    assert "Dest[2][6]" in EXP_RECIP.check(m, result)
    m.tensix.dest.bits[8 + 2, 6] ^= 0x40
    m.tensix.dest.bits[1, 3] ^= 0x0100             # a reciprocal result
    assert "Dest[1][3]" in EXP_RECIP.check(m, result)
