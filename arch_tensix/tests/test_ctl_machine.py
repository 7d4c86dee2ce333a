"""The ctl instructions through the real decoder, engine and board (and the CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tensix_ctl_support import (
    ADDDMAREG,
    BITWOPDMAREG,
    CMPDMAREG,
    FLUSHDMA,
    MULDMAREG,
    OPCODES,
    SETDMAREG,
    SFPABS,
    SFPAND,
    SFPCOMPC,
    SFPCONFIG,
    SFPDIVP2,
    SFPENCC,
    SFPEXEXP,
    SFPEXMAN,
    SFPGT,
    SFPIADD,
    SFPLE,
    SFPLOADMACRO,
    SFPLZ,
    SFPNOT,
    SFPOR,
    SFPPOPC,
    SFPPUSHC,
    SFPSETCC,
    SFPSETEXP,
    SFPSETMAN,
    SFPSETSGN,
    SFPSHFT,
    SFPSHFT2,
    SFPSHFT2_IMM,
    SFPSWAP,
    SFPTRANSP,
    SFPXOR,
    SHIFTDMAREG,
    SUBDMAREG,
    Thread,
    execute,
)

from tessera.errors import UnhandledTrap
from tessera.isa import Decoder
from tessera.machine import Machine

arch = pytest.importorskip("tessera_tensix.arch")
TENSIX_BH = arch.TENSIX_BH

ALL_WORDS = [
    SFPIADD(0x7FF, 1, 2, 1), SFPSHFT(0xFFC, 3, 4, 7), SFPAND(5, 1, 2, 1), SFPOR(6, 1, 2, 0),
    SFPXOR(3, 4), SFPNOT(5, 6), SFPABS(1, 2, 1), SFPLZ(3, 4, 10), SFPEXEXP(1, 2, 3),
    SFPEXMAN(1, 2, 1), SFPSETEXP(0x80, 1, 2, 1), SFPSETMAN(0xABC, 1, 2, 1), SFPSETSGN(1, 1, 2, 1),
    SFPDIVP2(0x7F, 3, 4, 1), SFPSETCC(1, 2, 0, 1), SFPENCC(3, 0, 10), SFPPUSHC(0, 5),
    SFPPOPC(0, 12), SFPCOMPC(), SFPGT(1, 2, 9), SFPLE(3, 4, 6), SFPSWAP(1, 2, 9), SFPTRANSP(),
    SFPSHFT2(2, 1, 3, 5), SFPSHFT2_IMM(0xFF3, 4), SFPCONFIG(0xBEEF, 15, 3),
    SFPLOADMACRO(3, 1, 2, 7, 0x155, 1), ADDDMAREG(1, 2, 3, 4), SUBDMAREG(0, 5, 6, 7),
    MULDMAREG(0, 8, 9, 10), BITWOPDMAREG(1, 2, 11, 12, 13), SHIFTDMAREG(0, 1, 14, 15, 16),
    CMPDMAREG(1, 2, 17, 18, 19), SETDMAREG(0, 0xBEEF, 0x41), FLUSHDMA(5),
]


def _vendor_name(mnemonic: str) -> str:
    name = mnemonic.upper()
    return name[2:] if name.startswith("TT") else name


@pytest.mark.parametrize("word", ALL_WORDS, ids=lambda w: OPCODES[w >> 24])
def test_decoder_dispatches_to_ctl_semantics(word):
    """The table decodes our independently encoded words as the intended instruction."""
    from tessera_tensix.semantics import REGISTRY

    ins = Decoder(TENSIX_BH).decode(word, 0)
    name = OPCODES[word >> 24]
    assert _vendor_name(ins.mnemonic) == name
    assert ins.encoding.semantics == REGISTRY.ref(name)
    assert ins.encoding.semantics.resolve() is REGISTRY[name]


def _machine(words: list[int], **config) -> Machine:
    m = Machine(TENSIX_BH, config=config)
    m.space.write_bytes(0, b"".join(w.to_bytes(4, "little") for w in words + [0]))
    return m


KERNEL = [
    SFPCONFIG(0x0000, 11, 1),                              # L11 = -1.0 (immediate default)
    SFPIADD(0x00F, 15, 1, 1 | 4),                          # L1 = 2L + 15
    SFPIADD(0xFE0, 15, 2, 1 | 4),                          # L2 = 2L - 32
    SFPENCC(3, 0, 10),
    SFPPUSHC(),
    SFPSETCC(0, 2, 0, 0),                                  # if (L2 < 0)
    SFPPUSHC(),
    SFPIADD(0xFF0, 1, 0, 1 | 8),                           #   flag = (L1 - 16 >= 0) among them
    SFPPOPC(0, 3),                                         #   flags = flags && top
    SFPSHFT(3, 1, 3, 1 | 4),                               #   L3 = L1 << 3
    SFPPOPC(),
    SFPCOMPC(),                                            # else
    SFPLZ(2, 3, 0),                                        #   L3 = clz(L2)
    SFPPOPC(),
    SFPSWAP(2, 1, 1),                                      # L1 = min, L2 = max
    SFPTRANSP(),
    SFPSHFT2(0, 3, 5, 3),                                  # L5 = ror8(L3)
    SFPGT(1, 2, 8),                                        # L2 = (L2 > L1) ? -1 : 0
    SETDMAREG(0, 0x1234, 6), SETDMAREG(0, 0x8000, 7),      # GPR3 = 0x80001234
    ADDDMAREG(1, 4, 63, 3), SHIFTDMAREG(1, 1, 5, 4, 4), CMPDMAREG(0, 0, 6, 5, 4),
    FLUSHDMA(0),
]


def _expected() -> Thread:
    t = Thread()
    for i, w in enumerate(KERNEL):
        execute(t, w, 4 * i)
    return t


def test_kernel_in_a_machine_matches_semantics():
    m = _machine(KERNEL)
    result = m.run(max_steps=1000)
    assert result.exit_code == 0
    t0 = m.agent("t0")
    want = _expected()
    assert (t0.core.sfpu.lreg == want.sfpu.lreg).all()
    assert (t0.core.sfpu.lane_flags == want.sfpu.lane_flags).all()
    assert t0.gpr == want.gpr
    assert t0.gpr[3] == 0x8000_1234 and t0.gpr[4] == 0x8000_1273
    assert t0.gpr[5] == 0x0800_0127 and t0.gpr[6] == 1
    assert int(t0.core.sfpu.lreg[11][0]) == 0xBF80_0000


def _tessera(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from tessera.cli.main import main; main()", *args],
                          capture_output=True, text=True, timeout=120)


def test_simt_kernel_through_tessera_run(tmp_path: Path):
    source = tmp_path / "simt.s"
    source.write_text("""
        # if (x < 0) L2 = x + 100 else L2 = x - 100, in the vendor's syntax
        sfpiadd L1,L15,0xFF0,5
        sfpencc 3,10
        sfppushc 0
        sfpsetcc L1,0,0
        sfpiadd L2,L1,0x064,5
        sfpcompc
        sfpiadd L2,L1,0xF9C,5
        sfppopc 0
        end
    """)
    out = _tessera("run", "--arch", "tensix", str(source), "--dump-state", "json")
    assert out.returncode == 0, out.stderr
    sfpu = json.loads(out.stdout)["agents"]["t0"]["core"]["sfpu"]
    l2 = [int(x, 16) for x in sfpu["lreg"][2]]
    x = [2 * L - 16 for L in range(32)]
    assert l2 == [(v + 100 if v < 0 else v - 100) & 0xFFFF_FFFF for v in x]
    assert sfpu["flag_stack_depth"] == 0 and all(sfpu["use_lane_flags"])


def test_stack_overflow_stops_with_instruction_address_and_rule(tmp_path: Path):
    source = tmp_path / "deep.s"
    source.write_text("        sfppushc 0\n" * 9 + "        end\n")
    out = _tessera("run", "--arch", "tensix", str(source))
    assert out.returncode != 0
    assert "sfppushc: flag stack overflow" in out.stderr
    assert "pc 0x00000020" in out.stderr and "0x87000000" in out.stderr
    lenient = _tessera("run", "--arch", "tensix", str(source), "--lenient", "--dump-state", "json")
    assert lenient.returncode == 0, lenient.stderr
    assert json.loads(lenient.stdout)["agents"]["t0"]["core"]["sfpu"]["flag_stack_depth"] == 8


def test_pop_underflow_and_loadmacro_via_cli(tmp_path: Path):
    source = tmp_path / "pop.s"
    source.write_text("        sfpnop\n        sfppopc 0\n        end\n")
    out = _tessera("run", "--arch", "tensix", str(source))
    assert out.returncode != 0 and "sfppopc: flag stack underflow" in out.stderr
    assert "pc 0x00000004" in out.stderr
    source.write_text("        SFPLOADMACRO 0, 0, 0, 0\n        end\n")   # empty sequence: a load
    out = _tessera("run", "--arch", "tensix", str(source), "--dump-state", "json")
    assert out.returncode == 0, out.stderr
    units = json.loads(out.stdout)["agents"]["t0"]["core"]["units"]
    assert units["loadmacro"] == {"owner": "t0", "pending": []}


def test_scalar_gprs_in_dump_state(tmp_path: Path):
    kernel = tmp_path / "gpr.hex"
    words = [SETDMAREG(0, 0xFFFF, 2), SETDMAREG(0, 0x0001, 3), MULDMAREG(0, 2, 1, 1),
             SUBDMAREG(1, 3, 1, 1), 0]                    # GPR3 = GPR1 - 1
    kernel.write_text("".join(f"{w:#010x}\n" for w in words))
    out = _tessera("run", "--arch", "tensix", str(kernel), "--dump-state", "json")
    assert out.returncode == 0, out.stderr
    gpr = json.loads(out.stdout)["agents"]["t0"]["gpr"]
    assert gpr[1] == 0x1_FFFF and gpr[2] == 0xFFFF * 0xFFFF and gpr[3] == 0x1_FFFE


def test_predication_state_survives_a_snapshot():
    m = _machine([SFPENCC(3, 0, 10), SFPPUSHC(), SFPSETCC(0, 15, 0, 6)])
    m.run(max_steps=3, raise_on_budget=False)
    back = Machine.restore(m.snapshot())
    t0 = back.agent("t0")
    assert [bool(x) for x in t0.core.sfpu.lane_flags] == [L == 0 for L in range(32)]
    assert len(t0.core.sfpu.flag_stack) == 1
    assert np.array_equal(t0.core.sfpu.flag_stack[0][0], np.ones(32, dtype=bool))
    t0.core.sfpu.lreg[1] = 7                               # the restored copy is independent
    assert int(m.agent("t0").core.sfpu.lreg[1][0]) == 0


def test_wormhole_machine_runs_the_ctl_deltas():
    wh = arch.TENSIX_WH
    words = [SFPIADD(0x064, 15, 1, 5),                      # L1 = 2L + 100
             SFPSHFT2(0, 1, 2, 3),                          # L2 = ror8(L1); remembers L1
             SFPSHFT2(0, 15, 3, 4),                         # L3 = shr8(L15), column 0 from the bug
             SFPPUSHC()]
    m = Machine(wh, config={})
    m.space.write_bytes(0, b"".join(w.to_bytes(4, "little") for w in words + [0]))
    assert m.run(max_steps=100).exit_code == 0
    sfpu = m.agent("t0").core.sfpu
    l1 = [2 * L + 100 for L in range(32)]
    assert [int(x) for x in sfpu.lreg[3]] == [2 * (L - 1) if L & 7 else l1[L + 7] for L in range(32)]
    assert len(sfpu.flag_stack) == 1
    m = Machine(wh, config={})
    m.space.write_bytes(0, b"".join(w.to_bytes(4, "little") for w in [SFPPUSHC(), SFPPUSHC(0, 3), 0]))
    with pytest.raises(UnhandledTrap, match="not defined on Wormhole"):
        m.run(max_steps=100)
