"""Direct mode for the whole coprocessor: thread sections, L1 in and out of .npy files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


def tessera(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "tensix"
    if os.environ.get("TESSERA_ENGINE"):
        env["TESSERA_ENGINE"] = os.environ["TESSERA_ENGINE"]
    return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=120, cwd=cwd)


THREE = """\
unpack:
    sfploadi L0,16128,0     # 0.5
    end
math:
    sfploadi L1,16256,0     # 1.0
    end
pack:
    sfploadi L2,16384,0     # 2.0
    end
"""


@pytest.mark.parametrize("arch", ["tensix", "tensix-wh"])
def test_each_thread_starts_at_its_label(tmp_path, arch):
    src = tmp_path / "k.s"
    src.write_text(THREE)
    res = tessera("run", "--arch", arch, str(src), "--dump-state", "json")
    assert res.returncode == 0, res.stderr
    state = json.loads(res.stdout)
    agents = state["agents"]
    assert sorted(agents) == ["t0", "t1", "t2"]
    assert all(a["status"] == "halted" and a["instret"] == 2 for a in agents.values())
    lreg = agents["t0"]["core"]["sfpu"]["lreg"]
    assert (lreg[0][0], lreg[1][0], lreg[2][0]) == ("0x3f000000", "0x3f800000", "0x40000000")


def test_a_missing_section_leaves_its_thread_idle(tmp_path):
    src = tmp_path / "k.s"
    src.write_text("unpack:\n  sfploadi L0,16128,0\n  end\npack:\n  sfploadi L2,16384,0\n  end\n")
    state = json.loads(tessera("run", "--arch", "tensix", str(src), "--dump-state", "json").stdout)
    agents = state["agents"]
    assert agents["t1"]["instret"] == 0 and agents["t1"]["status"] == "halted"
    assert agents["t2"]["instret"] == 2


def test_sections_survive_asm_to_words_and_back(tmp_path):
    src = tmp_path / "k.s"
    src.write_text(THREE)
    words = tmp_path / "k.words"
    assert tessera("asm", "--arch", "tensix", str(src), "-o", str(words), "--format", "words").returncode == 0
    text = words.read_text().split()
    assert text[0] == "unpack:" and text[3] == "math:" and text[6] == "pack:"
    dis = tessera("disasm", "--arch", "tensix", str(words))
    assert dis.returncode == 0
    assert [line for line in dis.stdout.splitlines() if line.endswith(":")] == ["unpack:", "math:", "pack:"]
    state = json.loads(tessera("run", "--arch", "tensix", str(words), "--dump-state", "json").stdout)
    assert state["agents"]["t0"]["core"]["sfpu"]["lreg"][2][0] == "0x40000000"


def test_l1_in_and_out_round_trip_with_formats(tmp_path):
    a = (np.arange(32 * 32) % 256 - 128).astype(np.float32).reshape(32, 32)
    b = np.arange(16, dtype=np.int32) * -3
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    src = tmp_path / "k.s"
    src.write_text("end\n")
    res = tessera("run", "--arch", "tensix-wh", str(src),
                  "--l1", f"0x1000:bf16={tmp_path / 'a.npy'}", "--l1", f"0x8000={tmp_path / 'b.npy'}",
                  "--l1-out", f"0x1000:32x32:bf16={tmp_path / 'a_out.npy'}",
                  "--l1-out", f"0x8000:4x4:int32={tmp_path / 'b_out.npy'},0x1000:2:uint16={tmp_path / 'raw.npy'}")
    assert res.returncode == 0, res.stderr
    assert np.array_equal(np.load(tmp_path / "a_out.npy"), a)   # integers up to 256 are exact in BF16
    assert np.array_equal(np.load(tmp_path / "b_out.npy"), b.reshape(4, 4))
    raw = np.load(tmp_path / "raw.npy")
    assert raw.tolist() == [0xC300, 0xC2FE]                     # BF16 of -128, -127 in L1


@pytest.mark.parametrize("option, value, message", [
    ("--l1", "0x10=missing.npy", "cannot read missing.npy"),
    ("--l1", "nonsense", "expected ADDR[:FORMAT]=FILE.npy"),
    ("--l1", "0x10:bf17=x.npy", "unknown format 'bf17'"),
    ("--l1", "zz=x.npy", "'zz' is not an address"),
    ("--l1-out", "0x0:32=x.npy", "expected ADDR:SHAPE:FORMAT=FILE.npy"),
    ("--l1-out", "0x0:3y3:fp32=x.npy", "is not like 32x32"),
    ("--l1-out", "0x0:0x4:fp32=x.npy", "must be positive"),
    ("--l1-out", "0x16D000:64x64:fp32=x.npy", "do not fit in L1"),
])
def test_bad_l1_options_are_one_line_config_errors(tmp_path, option, value, message):
    src = tmp_path / "k.s"
    src.write_text("end\n")
    res = tessera("run", "--arch", "tensix-wh", str(src), option, value, cwd=tmp_path)
    assert res.returncode == 64, res.stderr
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.stderr


def test_l1_input_larger_than_l1_is_refused(tmp_path):
    np.save(tmp_path / "big.npy", np.zeros(1536 * 1024 // 4, dtype=np.float32))
    src = tmp_path / "k.s"
    src.write_text("end\n")
    res = tessera("run", "--arch", "tensix-wh", str(src), "--l1", f"0x0={tmp_path / 'big.npy'}")
    assert res.returncode == 64 and "do not fit in L1" in res.stderr
    # the same file fits Blackhole's larger L1
    assert tessera("run", "--arch", "tensix", str(src), "--l1", f"0x0={tmp_path / 'big.npy'}").returncode == 0


def _words(*words: int) -> str:
    return "".join(f"    .word {w:#010x}\n" for w in words)


def test_mop_labels_program_each_thread_s_mop_config(tmp_path):
    from tensix_expander_support import MOP, NOP, inc, template1_cfg

    # T1's MOP runs its loop word 3 x 2 times (+5 each), T2's once with its own config
    math_cfg = template1_cfg(3, 2, loop=inc(1, 5))
    pack_cfg = template1_cfg(1, 1, loop=inc(2, 7))
    src = tmp_path / "k.s"
    src.write_text("unpack:\n    end\nmath:\n" + _words(MOP(1, 0, 0)) + "    end\npack:\n"
                   + _words(MOP(1, 0, 0), MOP(1, 0, 0)) + "    end\nmath_mop:\n" + _words(*math_cfg)
                   + "pack_mop:\n" + _words(*pack_cfg))
    res = tessera("run", "--arch", "tensix", str(src), "--dump-state", "json")
    assert res.returncode == 0, res.stderr
    state = json.loads(res.stdout)
    lreg = state["agents"]["t0"]["core"]["sfpu"]["lreg"]
    assert int(lreg[1][0], 16) == 30 and int(lreg[2][0], 16) == 14
    assert NOP not in math_cfg[5:6]


def test_a_mop_label_too_close_to_the_end_of_memory_is_refused(tmp_path):
    src = tmp_path / "k.s"
    src.write_text("end\n.org 0x3fff8\nmop:\n.word 1\n")
    res = tessera("run", "--arch", "tensix", str(src))
    assert res.returncode == 64 and "label mop: cannot read the 9 MopCfg words" in res.stderr
