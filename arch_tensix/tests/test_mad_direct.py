"""Direct mode end to end: a kernel of arithmetic, LUT, conversion and move words run by
``tessera run --arch tensix`` (the real decoder, engine and board) leaves the same LRegs
and PRNG states as the semantic functions executed one by one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from tensix_mad_support import (
    SFP_STOCH_RND,
    SFPADDI,
    SFPARECIP,
    SFPCAST,
    SFPLOADI,
    SFPLUTFP32,
    SFPMAD,
    SFPMOV,
    SFPMUL24,
    SFPMULI,
    SFPNOP,
    Thread,
    execute,
    f2u,
    u2f,
)

KERNEL = [
    SFPLOADI(0, 0, 0xBFC0),          # L0 = -1.5 (BF16)
    SFPLOADI(1, 1, 0x3555),          # L1 = FP16 0.333 (FLOATA)
    SFPLOADI(2, 2, 0x1234),          # L2 = 0x1234
    SFPLOADI(2, 8, 0x4040),          # L2 upper half = 3.0's top
    SFPMAD(0, 1, 10, 3, 0),          # L3 = L0·L1 + 1
    SFPMAD(3, 3, 0, 4, 3),           # L4 = -(L3·L3) - L0
    SFPADDI(0x3F00, 4, 0),           # L4 += 0.5
    SFPMULI(0x4100, 4, 2),           # L4 = 8 · -L4
    SFPNOP(),
    SFPARECIP(0, 3, 5, 2),           # L5 = ~exp(L3)
    SFP_STOCH_RND(1, 0, 4, 4, 6, 7), # L6 = int16(L4), stochastic
    SFPCAST(6, 7, 1),                # L7 = fp32(L6), RNS
    SFPMOV(9, 6, 8),                 # L6 = PRNG
    SFPMUL24(5, 0, 9, 1, 1),         # L1 = upper product of mantissas
    SFPLUTFP32(2, 0),                # L2 = FP32 table on |L3|
    SFPMOV(4, 0, 1),                 # L0 = -L4
]


def _in_process() -> np.ndarray:
    t = Thread()
    for i, w in enumerate(KERNEL):
        execute(t, w, 4 * i)
    return t.sfpu.lreg[:8].copy(), t.sfpu.prng.copy()


def test_kernel_through_tessera_run(tmp_path: Path):
    kernel = tmp_path / "kernel.hex"
    kernel.write_text("".join(f"{w:#010x}\n" for w in KERNEL) + "0x00000000\n")
    out = subprocess.run(
        [sys.executable, "-c", "from tessera.cli.main import main; main()", "run", "--arch", "tensix",
         str(kernel), "--dump-state", "json"],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout)
    sfpu = state["agents"]["t0"]["core"]["sfpu"]
    got = np.array([[int(x, 16) for x in row] for row in sfpu["lreg"][:8]], dtype=np.uint32)
    want, prng = _in_process()
    assert (got == want).all()
    assert sfpu["prng"] == [int(v) for v in prng]
    # checked by hand: FLOATA 0x3555 = 0x3EAAA000; L3 = -1.5·that + 1 is exact in FP32
    assert int(want[1][0]) != 0x3EAAA000                  # L1 was overwritten by SFPMUL24
    assert int(want[3][0]) == f2u(1.0 - 1.5 * u2f(0x3EAAA000))
