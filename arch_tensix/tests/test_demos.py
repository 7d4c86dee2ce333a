"""The whole-coprocessor examples of ``tessera demo --arch tensix`` and kernels like them.

* The three bundled kernels (datacopy, eltwise add, matmul; Blackhole ``*.s`` and
  Wormhole B0 ``*_wh.s``) pass their checks, in the demo and from the command line with
  ``--l1`` / ``--l1-out``; their checks catch a wrong element.
* A kernel written from the ISA pages alone (UNPACR of two BF16 tiles, ELWMUL in four
  fidelity phases, PACR), configured with ``--set``, gives numpy's product exactly.
* Kernels broken on purpose — a missing SetDatValid, a wrong semaphore — end in a
  deadlock report (exit status 71) naming what each thread waits for.

The oracle is numpy: exact for copies, for BF16 sums rounded as the matrix unit rounds
them (FP32, then BF16 nearest even), and for products of small integers; random floats
through the matmul are checked against a float64 product with the error bound of the
roundings the matrix unit does (see :func:`test_matmul_of_random_floats_is_within_its_rounding_bound`).
Whichever engine ``TESSERA_ENGINE`` names runs them.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tessera.cli.demo import run_example
from tessera.plugins import PluginHost
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.examples import EXAMPLES, EXAMPLES_WH, coprocessor
from tessera_tensix.examples.coprocessor import (
    bf16_bits,
    bf16_values,
    kernel_source,
    tilize,
    untilize,
)

KERNELS = Path(coprocessor.__file__).parent
ARCH = {"bh": TENSIX_BH, "wh": TENSIX_WH}
CLI_ARCH = {"bh": "tensix", "wh": "tensix-wh"}
#: (chip, example) of every coprocessor example
COPROCESSOR = [("bh", e) for e in EXAMPLES[1:]] + [("wh", e) for e in EXAMPLES_WH[1:]]
IN_A, IN_B, OUT = "0x10000", "0x11000", "0x12000"
CHIPS = ("bh", "wh")


@functools.cache
def default_host() -> PluginHost:
    """A host of this module's own (entry points + environment), as a fresh process has:
    the process-wide default may be one an in-process CLI test built with its own plugin
    selection, without the Tensix plugin whose hook starts the threads at their labels."""
    return PluginHost()


def kernel(name: str, chip: str) -> Path:
    """``KERNELS/name.s`` for Blackhole, ``name_wh.s`` for Wormhole B0."""
    return KERNELS / (f"{name}.s" if chip == "bh" else f"{name}_wh.s")


def tessera(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "tensix"
    if os.environ.get("TESSERA_ENGINE"):
        env["TESSERA_ENGINE"] = os.environ["TESSERA_ENGINE"]
    return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=120, cwd=cwd)


def run_kernel(tmp_path: Path, source: Path | str, inputs: dict[str, np.ndarray], out_format: str,
               *settings: str, chip: str = "bh") -> tuple[subprocess.CompletedProcess, np.ndarray | None]:
    """Run kernel file ``source`` with 32x32 BF16 inputs in tile order at their addresses;
    the output tile (32x32 matrix, untilized) or None when the run failed."""
    args = ["run", "--arch", CLI_ARCH[chip], str(source)]
    for address, matrix in inputs.items():
        path = tmp_path / f"in{address}.npy"
        np.save(path, tilize(matrix))
        args += ["--l1", f"{address}:bf16={path}"]
    out = tmp_path / "out.npy"
    args += ["--l1-out", f"{OUT}:32x32:{out_format}={out}", *settings]
    res = tessera(*args)
    return res, (untilize(np.load(out)) if res.returncode == 0 else None)


RNG = np.random.default_rng(1616)


def bf16_normal(scale: float = 1.0) -> np.ndarray:
    return bf16_values(bf16_bits(RNG.standard_normal((32, 32)) * scale))


def small_integers(bound: int = 8) -> np.ndarray:
    return RNG.integers(-bound, bound + 1, (32, 32)).astype(np.float32)


# --------------------------------------------------------------------------- the demo
@pytest.mark.parametrize("chip", CHIPS)
def test_the_demo_runs_the_three_coprocessor_examples(chip):
    res = tessera("demo", "--arch", CLI_ARCH[chip])
    assert res.returncode == 0, res.stdout + res.stderr
    for name in ("datacopy", "eltwise-add", "matmul"):
        assert re.search(rf"^-- {CLI_ARCH[chip]}/{name}: ok \(\d+ steps", res.stdout, re.M), res.stdout


def test_the_examples_are_bundled_with_both_chips():
    assert [e.name for e in EXAMPLES][1:] == ["datacopy", "eltwise-add", "matmul"]
    assert [e.name for e in EXAMPLES_WH][1:] == ["datacopy", "eltwise-add", "matmul"]
    assert TENSIX_BH.examples == EXAMPLES and TENSIX_WH.examples == EXAMPLES_WH
    assert "datacopy_wh.s" not in EXAMPLES[1].source and "Wormhole B0" in EXAMPLES_WH[1].source


@pytest.mark.parametrize("chip, example", COPROCESSOR, ids=lambda e: getattr(e, "name", e))
def test_each_example_passes_its_check(chip, example):
    ok, summary = run_example(default_host(), ARCH[chip], example)
    assert ok, summary
    assert summary.endswith("halted")


def _run_in_process(example, arch=TENSIX_BH):
    from tessera.isa.asm import assemble
    from tessera.loaders import place
    from tessera.machine import Machine

    machine = Machine(arch, host=default_host())
    program = assemble(arch, example.source)
    for address, blob in program.segments:
        place(machine, address, blob, what=example.name)
    machine.symbols.update(program.symbols)
    machine.set_entry(0)
    return machine, machine.run(max_steps=example.max_steps)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("index, fmt", [(1, "<u2"), (2, "<u2"), (3, "<u4")], ids=["datacopy", "add", "matmul"])
def test_each_check_names_a_wrong_element(chip, index, fmt):
    example = (EXAMPLES if chip == "bh" else EXAMPLES_WH)[index]
    machine, result = _run_in_process(example, ARCH[chip])
    assert example.check(machine, result) is None
    l1 = machine.ext["tensix"].l1
    # tile-order datum 16 * 16 + 3 is face 1, row 0, column 3: element [0][19]
    address = 0x12000 + (16 * 16 + 3) * np.dtype(fmt).itemsize
    word = int(l1.read_as(address, fmt, 1)[0])
    l1.write(address, np.array([word ^ 0x40 << (8 * np.dtype(fmt).itemsize - 16)], dtype=fmt))
    problem = example.check(machine, result)
    assert problem is not None and problem.startswith("C[0][19] = ") and "1 of 1024 elements differ" in problem


def test_the_kernels_share_one_l1_layout():
    for name in ("datacopy.s", "eltwise_add.s", "matmul.s", "datacopy_wh.s", "eltwise_add_wh.s", "matmul_wh.s"):
        text = kernel_source(name)
        assert coprocessor.equ(text, "IN_A") == 0x10000 and coprocessor.equ(text, "OUT") == 0x12000
        if not name.startswith("datacopy"):
            assert coprocessor.equ(text, "IN_B") == 0x11000
        for label in ("unpack:", "math:", "pack:", "unpack_mop:", "math_mop:", "pack_mop:"):
            assert re.search(rf"^{label}", text, re.M), (name, label)


# --------------------------------------------------------------------- the command line
@pytest.mark.parametrize("chip", CHIPS)
def test_datacopy_from_the_command_line(tmp_path, chip):
    a = bf16_normal(100.0)
    res, out = run_kernel(tmp_path, kernel("datacopy", chip), {IN_A: a}, "bf16", chip=chip)
    assert res.returncode == 0, res.stderr
    assert np.array_equal(out, a)


@pytest.mark.parametrize("chip", CHIPS)
def test_eltwise_add_from_the_command_line_rounds_as_the_matrix_unit(tmp_path, chip):
    a, b = bf16_normal(), bf16_normal(3.0)
    res, out = run_kernel(tmp_path, kernel("eltwise_add", chip), {IN_A: a, IN_B: b}, "bf16", chip=chip)
    assert res.returncode == 0, res.stderr
    assert np.array_equal(out, bf16_values(bf16_bits(a + b)))     # FP32 sum, then BF16 nearest even
    assert not np.array_equal(out, a + b)                          # (the rounding is visible)


@pytest.mark.parametrize("chip", CHIPS)
def test_matmul_of_small_integers_is_exact(tmp_path, chip):
    a, b = small_integers(), small_integers()
    res, out = run_kernel(tmp_path, kernel("matmul", chip), {IN_A: a, IN_B: b}, "fp32", chip=chip)
    assert res.returncode == 0, res.stderr
    assert np.array_equal(out, a @ b)


@pytest.mark.parametrize("chip", CHIPS)
def test_matmul_of_random_floats_is_within_its_rounding_bound(tmp_path, chip):
    """Each C[i][j] is the sum, in Dest (FP32), of 2 k-halves x 4 fidelity phases of MVMUL
    results, each a 16-term dot product rounded once to FP32: 16 roundings, each at most
    half an ulp of a value no larger than sum_k |a||b|.  So |C - C64| <= 16 * 2**-24 *
    (|A| @ |B|); numpy's float32 product would be held to the same kind of bound."""
    a, b = bf16_normal(), bf16_normal()
    res, out = run_kernel(tmp_path, kernel("matmul", chip), {IN_A: a, IN_B: b}, "fp32", chip=chip)
    assert res.returncode == 0, res.stderr
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = 16 * 2.0 ** -24 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    assert (np.abs(out - exact) <= bound).all()
    assert np.abs(out - exact).max() > 0                           # not exact: FP32 roundings happen


@pytest.mark.parametrize("chip", CHIPS)
def test_matmul_with_bf16_output(tmp_path, chip):
    """PACK_OUT = BF16: the FP32 Dest is rounded to BF16 (nearest, ties away from zero) on
    its way out; integer products up to 8 * 8 * 32 need more than BF16's 8 bits."""
    bf16_kernel = tmp_path / "matmul_bf16.s"
    text = kernel("matmul", chip).read_text()
    assert ".equ PACK_OUT, FP32 " in text
    bf16_kernel.write_text(text.replace(".equ PACK_OUT, FP32 ", ".equ PACK_OUT, BF16 "))
    a, b = small_integers(), small_integers()
    res, out = run_kernel(tmp_path, bf16_kernel, {IN_A: a, IN_B: b}, "bf16", chip=chip)
    assert res.returncode == 0, res.stderr
    exact = (a @ b).astype(np.float32).view(np.uint32).astype(np.uint64)
    want = bf16_values(((exact + 0x8000) >> 16).astype(np.uint16))
    assert np.array_equal(out, want)
    assert not np.array_equal(out, a @ b)


def test_the_kernels_survive_asm_to_words(tmp_path):
    words = tmp_path / "matmul.words"
    res = tessera("asm", "--arch", "tensix", str(KERNELS / "matmul.s"), "--format", "words", "-o", str(words))
    assert res.returncode == 0, res.stderr
    a, b = small_integers(4), small_integers(4)
    res, out = run_kernel(tmp_path, words, {IN_A: a, IN_B: b}, "fp32")
    assert res.returncode == 0, res.stderr
    assert np.array_equal(out, a @ b)


# ------------------------------------------------------------- a kernel from the pages
ELWMUL = """\
# ELWMUL of two BF16 tiles (Blackhole), from the ISA pages: UNPACR (FlipSrc hands each
# bank to the matrix unit), ELWMUL in four fidelity phases into an FP32 Dest, SETRWC
# giving the banks back, SEMPOST/SEMWAIT between math and pack, PACR from a MOP.
unpack:
    ttsetadcxx 3,255,0                      # both unpackers: datums 0..255 (face 0)
    ttunpacr 0,0,0,0,0,0,1,0,0,0,0,0,0      # A -> SrcA, FlipSrc
    ttunpacr 1,0,0,0,0,0,1,0,0,0,0,0,0      # B -> SrcB, FlipSrc
    ttsetadcxx 3,511,256                    # face 1
    ttunpacr 0,0,0,0,0,0,1,0,0,0,0,0,0
    ttunpacr 1,0,0,0,0,0,1,0,0,0,0,0,0
    ttsetadcxx 3,767,512                    # face 2 (waits for bank 0 to come back)
    ttunpacr 0,0,0,0,0,0,1,0,0,0,0,0,0
    ttunpacr 1,0,0,0,0,0,1,0,0,0,0,0,0
    ttsetadcxx 3,1023,768                   # face 3
    ttunpacr 0,0,0,0,0,0,1,0,0,0,0,0,0
    ttunpacr 1,0,0,0,0,0,1,0,0,0,0,0,0
    end
math:
    ttreplay 0,9,1,1                        # record one face and run it
    ttelwmul 0,0,0,0,0                      # rows 0-7, phases 0, 1, 2 (ADDR_MOD_0: phase + 1)
    ttelwmul 0,0,0,0,0
    ttelwmul 0,0,0,0,0
    ttelwmul 0,0,0,1,0                      # phase 3; ADDR_MOD_1: 8 rows on, phase 0
    ttelwmul 0,0,0,0,0                      # rows 8-15
    ttelwmul 0,0,0,0,0
    ttelwmul 0,0,0,0,0
    ttelwmul 0,0,0,1,0
    ttsetrwc 3,0,0,0,0,3                    # both banks back to the unpackers; SrcA = SrcB = 0
    ttreplay 0,9,0,0                        # faces 1, 2, 3
    ttreplay 0,9,0,0
    ttreplay 0,9,0,0
    ttsempost 2                             # semaphore 1: Dest is ready
    end
pack:
    ttsetadcxx 4,15,0                       # 16 datums per read interface
    ttsemwait 1,2,1                         # block the packers while semaphore 1 is 0
    ttmop 0,15,0x8000                       # 16 PACRs of 4 rows; the last (mask bit 15) closes
    end
pack_mop:
    .word 0, 0                              # template 0: (unused), no A1..A3, no B
    ttnop                                   # InsnB
    ttpacr 0,0,0,0,0,0,0,0,0,0,0,0          # InsnA0: 4 rows, ADDR_MOD_0 (Y += 4)
    ttnop
    ttnop
    ttnop
    ttpacr 0,0,0,0,0,0,0,0,0,0,0,1          # SkipA0: the same with Last
    ttnop                                   # SkipB
"""

ELWMUL_SETTINGS = {
    # unpackers: BF16 tiles of 1024 datums (X selects the face), A at 0x10000, B at 0x11000,
    # SrcA row 0 is output row 4 (64 BF16 datums = 128 bytes)
    "cfg.THCON_SEC0_REG0_TileDescriptor": 1024 << 16 | 1 << 4 | 5,
    "cfg.THCON_SEC1_REG0_TileDescriptor": 1024 << 16 | 1 << 4 | 5,
    "cfg.THCON_SEC0_REG2_Out_data_format": 5, "cfg.THCON_SEC1_REG2_Out_data_format": 5,
    "cfg.THCON_SEC0_REG3_Base_address": 0x10000 // 16 - 1, "cfg.THCON_SEC1_REG3_Base_address": 0x11000 // 16 - 1,
    "cfg.UNP0_ADDR_BASE_REG_1_Base": 128,
    # matrix unit: BF16 operands, FP32 Dest; ADDR_MOD_0 next phase, ADDR_MOD_1 next 8 rows
    "cfg.ALU_FORMAT_SPEC_REG0_SrcA": 5, "cfg.ALU_FORMAT_SPEC_REG1_SrcB": 5, "cfg.ALU_ACC_CTRL_Fp32_enabled": 1,
    "tcfg.ADDR_MOD_DST_SEC0_FidelityIncr": 1, "tcfg.ADDR_MOD_AB_SEC1_SrcAIncr": 8,
    "tcfg.ADDR_MOD_AB_SEC1_SrcBIncr": 8, "tcfg.ADDR_MOD_DST_SEC1_DestIncr": 8,
    "tcfg.ADDR_MOD_DST_SEC1_FidelityClear": 1,
    # packer: 32-bit Dest rows of 64 bytes, FP32 to L1 at 0x12000, no edge mask, no compression
    "cfg.PCK_EDGE_OFFSET_SEC0_mask": 0xFFFF, "cfg.THCON_SEC0_REG1_Disable_zero_compress": 1,
    "cfg.THCON_SEC0_REG1_L1_Dest_addr": 0x12000 // 16 - 1, "cfg.PCK_DEST_RD_CTRL_Read_32b_data": 1,
    "cfg.PCK0_ADDR_CTRL_XY_REG_0_Ystride": 64, "tcfg.ADDR_MOD_PACK_SEC0_YsrcIncr": 4,
}


def _settings(values: dict[str, int]) -> list[str]:
    return [arg for name, value in values.items() for arg in ("--set", f"{name}={value:#x}")]


def test_an_elwmul_kernel_from_the_isa_pages_gives_numpy_s_product(tmp_path):
    """BF16 x BF16 has at most 16 significant bits: the four fidelity phases' partial
    products sum exactly in an FP32 Dest, so the result is numpy's float32 product."""
    source = tmp_path / "elwmul.s"
    source.write_text(ELWMUL)
    a, b = bf16_normal(), bf16_normal(16.0)
    res, out = run_kernel(tmp_path, source, {IN_A: a, IN_B: b}, "fp32", *_settings(ELWMUL_SETTINGS))
    assert res.returncode == 0, res.stderr
    assert np.array_equal(out, a * b)


def test_the_elwmul_kernel_with_one_fidelity_phase_is_not_exact(tmp_path):
    """The same kernel with the phase never advancing (phase 0 four times) multiplies only
    the high mantissa bits: a check that the phases above really did the work."""
    source = tmp_path / "elwmul.s"
    source.write_text(ELWMUL)
    lofi = {**ELWMUL_SETTINGS, "tcfg.ADDR_MOD_DST_SEC0_FidelityIncr": 0}
    a, b = bf16_normal(), bf16_normal()
    res, out = run_kernel(tmp_path, source, {IN_A: a, IN_B: b}, "fp32", *_settings(lofi))
    assert res.returncode == 0, res.stderr
    assert not np.array_equal(out, a * b)


# --------------------------------------------------------------------- broken kernels
def _broken(tmp_path: Path, name: str, old: str, new: str, count: int = 1,
            chip: str = "bh") -> subprocess.CompletedProcess:
    text = kernel_source(name)
    assert text.count(old) == count, old
    source = tmp_path / name
    source.write_text(text.replace(old, new))
    a = small_integers()
    return run_kernel(tmp_path, source, {IN_A: a, IN_B: a}, "bf16", chip=chip)[0]


@pytest.mark.parametrize("chip", CHIPS)
def test_a_missing_setdvalid_deadlocks_naming_the_bank(tmp_path, chip):
    # the unpacker never hands SrcA over: MOVA2D waits for a bank the unpackers keep
    res = _broken(tmp_path, kernel("datacopy", chip).name, "UNPACR 0, 0b1, 0, 0, 0, 1, 1, 0,",
                  "UNPACR 0, 0b1, 0, 0, 0, 1, 0, 0,", chip=chip)
    assert res.returncode == 71, res.stderr
    line = res.stderr.strip()
    assert len(line.splitlines()) == 1 and line.startswith("tessera: deadlock: every agent is waiting")
    assert "t1 waits for T1 MOVA2D waits: SrcA bank 0 is owned by the unpackers" in line
    assert "t2 waits for T2 SEMWAIT MATH_PACK (sem 1) value 0 (B0 blocks PACR)" in line


def test_a_missing_setdvalid_in_eltwise_add_names_the_matrix_instruction(tmp_path):
    # unpacker 1 never hands SrcB over (LoopOp1, Loop0Last, Loop1Last): ELWADD waits for
    # SrcB, and the unpacker for the SrcA bank ELWADD has not given back
    res = _broken(tmp_path, "eltwise_add.s", "UNPACR 1, 0b1, 0, 0, 0, 1, 1,", "UNPACR 1, 0b1, 0, 0, 0, 1, 0,", 3)
    assert res.returncode == 71, res.stderr
    assert "t1 waits for T1 ELWADD waits: SrcB bank 0 is owned by the unpackers" in res.stderr
    assert "t0 waits for T0 UNPACR waits: SrcA bank 0 is owned by the matrix unit" in res.stderr


def test_a_wrong_semaphore_deadlocks_naming_it(tmp_path):
    # the packer waits on UNPACK_TO_DEST (semaphore 2), which nobody posts
    res = _broken(tmp_path, "datacopy.s", "SEMWAIT 0x1, MATH_PACK, 1", "SEMWAIT 0x1, 4, 1")
    assert res.returncode == 71, res.stderr
    assert "deadlock" in res.stderr
    assert "t2 waits for T2 SEMWAIT UNPACK_TO_DEST (sem 2) value 0 (B0 blocks PACR)" in res.stderr
    assert "t0 waits" not in res.stderr and "t1 waits" not in res.stderr    # those two finished


def test_a_semaphore_never_given_back_deadlocks_the_next_tile(tmp_path):
    # math initialises MATH_PACK with Max 0: its wait for a free Dest half never ends
    res = _broken(tmp_path, "matmul.s", "SEMINIT 2, 0, MATH_PACK", "SEMINIT 0, 0, MATH_PACK")
    assert res.returncode == 71, res.stderr
    assert "t1 waits for T1 SEMWAIT MATH_PACK (sem 1) value 0 = max" in res.stderr
    assert "t2 waits for T2 SEMWAIT MATH_PACK (sem 1) value 0 (B0 blocks PACR)" in res.stderr
