"""Dest through the command line: --dest-in / --dest-out .npy, LRegs in --dump-state,
rule violations on undefined rows (and --lenient), config presets, the mapped window."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


def tessera(*args: str) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "tensix"
    return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def dest_in(tmp_path):
    rng = np.random.default_rng(11)
    data = rng.integers(0, 1 << 16, (1024, 16), dtype=np.uint16)
    path = tmp_path / "in.npy"
    np.save(path, data)
    return path, data


def _kernel(tmp_path, text: str) -> str:
    path = tmp_path / "k.s"
    path.write_text(text)
    return str(path)


def test_dest_in_copy_and_dest_out(tmp_path, dest_in):
    src, data = dest_in
    out = tmp_path / "out.npy"
    kernel = _kernel(tmp_path, "sfpload L0,0,6,7\nsfpstore 66,L0,6,7\nend\n")
    res = tessera("run", "--arch", "tensix", kernel, "--dest-in", str(src), "--dest-out", str(out),
                  "--dump-state", "json")
    assert res.returncode == 0, res.stderr
    got = np.load(out)
    want = data.copy()
    want[64:68, 1::2] = data[0:4, 0::2]                   # UINT16: raw cells, even → odd columns
    assert np.array_equal(got, want)
    state = json.loads(res.stdout)
    lreg0 = state["agents"]["t0"]["core"]["sfpu"]["lreg"][0]
    assert [int(v, 16) for v in lreg0] == [int(data[lane >> 3, 2 * (lane & 7)]) for lane in range(32)]


def test_fp32_tile_through_dest(tmp_path):
    """Dest prepared with the Dst32b FP32 layout, negated by SFPSTORE of -x … via SFPMAD-free ops:
    load FP32, store as FP32 into the next Dst32b rows; the values survive bit-exactly."""
    from tessera_tensix.dest import Dest

    d = Dest()
    x = np.linspace(-3, 3, 64, dtype=np.float32).reshape(4, 16)
    d.write_fp32(x, row0=0)
    src = tmp_path / "fp.npy"
    np.save(src, d.bits)
    out = tmp_path / "out.npy"
    kernel = _kernel(tmp_path, "sfpload L1,0,3,7\nsfpstore 8,L1,3,7\n"
                               "sfpload L1,2,3,7\nsfpstore 10,L1,3,7\nend\n")
    res = tessera("run", "--arch", "tensix", kernel, "--dest-in", str(src), "--dest-out", str(out))
    assert res.returncode == 0, res.stderr
    e = Dest()
    e.bits[:] = np.load(out)
    assert np.array_equal(e.read_fp32(4, row0=8), x)


def test_undefined_row_read_stops_with_one_line(tmp_path):
    kernel = _kernel(tmp_path, "zeroacc 3,0,0,0,0\nsfpload L0,0,2,7\nend\n")
    res = tessera("run", "--arch", "tensix", kernel)
    assert res.returncode == 68
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "sfpload" in lines[0].lower() and "undefined" in lines[0] and "pc 0x00000004" in lines[0]


def test_undefined_row_read_is_zero_when_lenient(tmp_path, dest_in):
    src, _ = dest_in
    kernel = _kernel(tmp_path, "zeroacc 3,0,0,0,0\nsfpload L0,0,6,7\nend\n")
    res = tessera("run", "--arch", "tensix", kernel, "--lenient", "--dest-in", str(src),
                  "--dump-state", "json")
    assert res.returncode == 0, res.stderr
    lreg0 = json.loads(res.stdout)["agents"]["t0"]["core"]["sfpu"]["lreg"][0]
    assert {int(v, 16) for v in lreg0} == {0}


def test_config_preset_reaches_the_remap(tmp_path, dest_in):
    src, data = dest_in
    kernel = _kernel(tmp_path, "sfpload L0,8,6,7\nend\n")
    res = tessera("run", "--arch", "tensix", kernel, "--dest-in", str(src), "--dump-state", "json",
                  "--set", "cfg.DEST_ACCESS_CFG_remap_addrs=1")
    assert res.returncode == 0, res.stderr
    lreg0 = json.loads(res.stdout)["agents"]["t0"]["core"]["sfpu"]["lreg"][0]
    assert int(lreg0[0], 16) == int(data[32, 0])          # Adj16(8) = 32 with remap_addrs


def test_bad_dest_in_shape_is_a_config_error(tmp_path):
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((10, 16), dtype=np.uint16))
    kernel = _kernel(tmp_path, "end\n")
    res = tessera("run", "--arch", "tensix", kernel, "--dest-in", str(bad))
    assert res.returncode != 0
    assert "1024" in res.stderr


def test_assembly_of_dest_instructions(tmp_path):
    kernel = _kernel(tmp_path, "sfpload L3,36,2,5\nsfpstore 100,L1,3,7\nzeroacc 1,1,0,2,3\nend\n")
    out = tmp_path / "k.hex"
    res = tessera("asm", "--arch", "tensix", kernel, "-o", str(out), "--format", "words")
    assert res.returncode == 0, res.stderr
    words = [int(w, 16) for w in out.read_text().split() if w.strip()]
    assert words[0] == (0x70 << 24) | (3 << 20) | (2 << 16) | (5 << 13) | 36
    assert words[1] == (0x72 << 24) | (1 << 20) | (3 << 16) | (7 << 13) | 100
    assert words[2] == (0x10 << 24) | (1 << 19) | (1 << 18) | (2 << 14) | 3


def test_disassembly_names_the_vendor_mnemonics():
    for word, text in ((0x7032A024, "sfpload"), (0x72137064, "sfpstore"), (0x100C8003, "zeroacc")):
        res = tessera("disasm", "--arch", "tensix", "--word", hex(word))
        assert res.returncode == 0, res.stderr
        assert text in res.stdout and f"{word:08x}" in res.stdout
