"""Direct mode end to end: ``tessera asm``, ``tessera disasm`` and ``tessera run --arch tensix``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tensix_table_support import dis, need_semantics, tessera, words

from tessera_tensix.arch import TENSIX_BH

KERNEL = """\
# y = x*x + 1 over Dest rows 0..3, even columns (FP32)
        ttzeroacc 1,0,0,0,4        # 16-row clear of rows 64..79 (not touched below)
        sfpload L0,0,3,7
        sfpmad L1,L0,L0,L10,0      # L10 = 1.0
        sfpstore 0,L1,3,7
        SFPLOAD 2, 3, 7, 0         # the macro spelling: reload into L2
        end
"""


def _dest_with_x() -> tuple[np.ndarray, np.ndarray]:
    """Dest holding x = 1 + k/64 (FP32) in Dst32b rows 0..3, even columns; and x."""
    x = (1 + np.arange(32, dtype=np.float32) / 64).astype(np.float32)
    bits = np.zeros((1024, 16), dtype=np.uint16)
    u = x.view(np.uint32)
    hi = (u >> 16).astype(np.uint32)
    cell = (hi & 0x8000) | ((hi & 0x7F) << 8) | ((hi >> 7) & 0xFF)      # shuffled BF16 half
    for lane in range(32):
        row, col = lane >> 3, 2 * (lane & 7)
        bits[row, col] = cell[lane]
        bits[row + 8, col] = u[lane] & 0xFFFF
    return bits, x


def _fp32(bits: np.ndarray, row: int, col: int) -> np.uint32:
    h = int(bits[row, col])
    b = (h & 0x8000) | ((h & 0xFF) << 7) | ((h >> 8) & 0x7F)
    return np.uint32((b << 16) | int(bits[row + 8, col]))


def test_table_cli_asm_then_disasm(tmp_path):
    src = tmp_path / "k.s"
    src.write_text(KERNEL)
    out = tmp_path / "k.bin"
    res = tessera("asm", "--arch", "tensix", str(src), "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == b"".join(w.to_bytes(4, "little") for w in words(KERNEL))
    res = tessera("disasm", "--arch", "tensix", str(out))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert [line.split()[2] for line in lines] == ["ttzeroacc", "sfpload", "sfpmad", "sfpstore",
                                                   "sfpload", "end"]
    hexed = tmp_path / "k.hex"
    res = tessera("asm", "--arch", "tensix", str(src), "--format", "words", "-o", str(hexed))
    assert res.returncode == 0, res.stderr
    assert [int(x, 16) for x in hexed.read_text().split()] == words(KERNEL)


@pytest.mark.skipif(getattr(TENSIX_BH, "disassembler", None) is None,
                    reason="the framework has no Architecture.disassembler hook yet: tessera disasm "
                           "prints the generic text")
def test_table_cli_disasm_prints_the_vendor_text(tmp_path):
    res = tessera("disasm", "--arch", "tensix", "--word", "850a0100", "--word", "b2290101",
                  "--word", "79800211")
    assert res.returncode == 0, res.stderr
    texts = [line.split(None, 2)[2] for line in res.stdout.strip().splitlines()]
    assert texts == ["sfpadd L0,L10,L0,L1,0", "ttsetc16 41,257", "sfpiadd L1,L2,0x800,1"]
    assert texts == [dis(0x850A0100), dis(0xB2290101), dis(0x79800211)]


@pytest.mark.parametrize("fmt", ["s", "hex"])
def test_table_cli_run_with_dest_in_dest_out_and_dump_state(tmp_path, fmt):
    need_semantics("ZEROACC", "SFPLOAD", "SFPSTORE", "SFPMAD")
    kernel = tmp_path / f"k.{fmt}"
    if fmt == "s":
        kernel.write_text(KERNEL)
    else:
        kernel.write_text("\n".join(f"{w:08x}" for w in words(KERNEL)) + "\n")
    bits, x = _dest_with_x()
    np.save(tmp_path / "in.npy", bits)
    res = tessera("run", "--arch", "tensix", str(kernel), "--dest-in", str(tmp_path / "in.npy"),
                  "--dest-out", str(tmp_path / "out.npy"), "--dump-state", "json")
    assert res.returncode == 0, res.stderr
    out = np.load(tmp_path / "out.npy")
    assert out.shape == (1024, 16) and out.dtype == np.uint16
    want = (x * x + np.float32(1)).astype(np.float32).view(np.uint32)
    got = np.array([_fp32(out, lane >> 3, 2 * (lane & 7)) for lane in range(32)], dtype=np.uint32)
    assert np.all(np.abs(got.astype(np.int64) - want.astype(np.int64)) <= 1)   # FMA_BH vs numpy
    assert np.array_equal(out[16:], bits[16:])                                 # nothing else written
    state = json.loads(res.stdout)
    lreg = state["agents"]["t0"]["core"]["sfpu"]["lreg"]
    assert len(lreg) == 17 and len(lreg[0]) == 32
    assert [int(v, 16) for v in lreg[1]] == [int(v, 16) for v in lreg[2]] == [int(v) for v in got]
    assert [int(v, 16) for v in lreg[0]] == [int(v) for v in x.view(np.uint32)]


def test_table_cli_run_stops_on_an_undefined_word_naming_it(tmp_path):
    kernel = tmp_path / "bad.hex"
    kernel.write_text("8f000000\n06000000\n00000000\n")
    res = tessera("run", "--arch", "tensix", str(kernel))
    assert res.returncode != 0
    assert "undefined encoding 0x06000000: opcode 0x06 is not a Blackhole Tensix instruction" in res.stderr
    assert "pc 0x00000004" in res.stderr


def test_table_cli_run_stops_on_reserved_bits_unless_lenient(tmp_path):
    need_semantics("SFPNOP")
    kernel = tmp_path / "rsv.hex"
    kernel.write_text("8f000100\n00000000\n")     # sfpnop with bit 8 set
    res = tessera("run", "--arch", "tensix", str(kernel))
    assert res.returncode != 0
    assert "sfpnop: reserved bits 0x000100 are set" in res.stderr
    res = tessera("run", "--arch", "tensix", str(kernel), "--lenient")
    assert res.returncode == 0, res.stderr


def test_table_cli_run_out_of_scope_instruction(tmp_path):
    kernel = tmp_path / "conv3s1.s"
    kernel.write_text("ttconv3s1 0,0,0,0\nend\n")
    res = tessera("run", "--arch", "tensix", str(kernel))
    assert res.returncode != 0
    assert "ttconv3s1: not supported in direct mode yet (CONV3S1, MATH unit)" in res.stderr


def test_table_cli_demo_runs_the_example():
    need_semantics("SFPLOADI", "SFPSTORE", "SFPLOAD", "SFPMAD")
    res = tessera("demo", "--arch", "tensix")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "tensix/exp-recip: ok" in res.stdout
