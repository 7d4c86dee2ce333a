"""``tessera tensix check``: tt-llk kernels built here, run on the tile and compared with numpy goldens.

The encodings, layouts and goldens are checked without a compiler; the end-to-end cases
(marked ``llk_build``) need what ``tessera tensix build`` needs and cost a build and a
run each (about 10-30 s), so there are only a few: the full matrix is
``tessera tensix check --matrix`` (docs/tensix-llk.md).
"""

from __future__ import annotations

import numpy as np
import pytest
from tensix_llk_support import require_llk, tessera

from tessera_tensix.llk import check, goldens
from tessera_tensix.llk.kernels import Options

# ------------------------------------------------------------------ encodings and layouts (no compiler)


def test_bfp8_b_stores_shared_exponents_then_sign_magnitude_mantissas():
    values = np.zeros(1024)
    values[:4] = [1.0, 0.5, -0.25, 0.0]
    raw = goldens.ENCODINGS["Bfp8_b"].encode(values)
    assert len(raw) == 1088
    assert raw[0] == 127 and raw[1] == 0                     # block 0: exponent of 1.0; block 1 all zeros
    assert list(raw[64:68]) == [64, 32, 0x80 | 16, 0]        # 1.0 = 64/64, 0.5 = 32/64, -0.25, +0
    assert np.array_equal(goldens.ENCODINGS["Bfp8_b"].decode(raw), values)


def test_bfp8_b_rounds_small_members_of_a_block_to_its_exponent():
    values = np.zeros(1024)
    values[:2] = [4.0, 0.01]                                  # unit 4/64: 0.01 rounds to 0
    assert goldens.ENCODINGS["Bfp8_b"].quantize(values)[:2].tolist() == [4.0, 0.0]


def test_integers_are_sign_magnitude():
    assert goldens.ENCODINGS["Int8"].encode(np.array([-5.0, 5.0, -127.0])) == bytes([0x85, 0x05, 0xFF])
    raw = goldens.ENCODINGS["Int32"].encode(np.array([-1.0]))
    assert int.from_bytes(raw, "little") == 0x8000_0001
    assert goldens.ENCODINGS["Int32"].decode(raw).tolist() == [-1.0]


def test_tilize_puts_faces_in_order_and_untilize_inverts_it():
    m = np.arange(64 * 96, dtype=np.float64).reshape(64, 96)
    flat = goldens.tilize(m)
    assert flat[37] == m[2, 5]            # face 0, row 2, column 5
    assert flat[256] == m[0, 16]          # face 1 starts at column 16
    assert flat[512] == m[16, 0]          # face 2 starts at row 16
    assert flat[1024] == m[0, 32]         # the second tile is the next one in the tile-row
    assert flat[3 * 1024] == m[32, 0]     # then the next tile-row
    assert np.array_equal(goldens.untilize(flat, (64, 96)), m)


def test_transposing_faces_and_within_faces_is_the_tile_transpose():
    t = np.arange(1024, dtype=np.float64).reshape(32, 32)
    assert np.array_equal(goldens.transpose_tile(t, faces=True, within=True), t.T)
    within = goldens.transpose_tile(t, faces=False, within=True)
    assert np.array_equal(within[:16, 16:], t[:16, 16:].T)   # face 1 stays where it is


def test_reduce_golden_puts_row_sums_in_column_zero():
    tile = np.arange(1024, dtype=np.float64).reshape(32, 32)
    out = goldens._reduce_tile(tile, "row", "sum")
    assert np.array_equal(out[:, 0], tile.sum(axis=1)) and not out[:, 1:].any()


def test_compare_names_the_first_differing_element_and_the_faces():
    want = np.zeros(1024)
    got = want.copy()
    got[300] = 2.0
    line = goldens.compare(got, want, atol=0, rtol=0, layout="tiles", dims=(32, 32), pcc=False)
    assert line is not None and line.startswith("element 300 (tile 0, face 1, row 2, column 12) is 2.0, expected 0.0")
    assert "per face 0/1/0/0" in line
    assert goldens.compare(want, want, atol=0, rtol=0, layout="tiles", dims=(32, 32), pcc=False) is None


def test_matrix_covers_the_vendor_formats_and_lists_unbuildable_kernels():
    cases = list(check.matrix_cases(("blackhole", "wormhole_b0")))
    names = {(c.kernel, c.chip, c.input_format, c.op) for c in cases}
    assert ("eltwise_binary_test", "wormhole_b0", "Int8", "add") in names
    assert ("eltwise_binary_test", "blackhole", "Int8", "mul") not in names
    assert ("transpose_dest_test", "blackhole", "Int32", None) in names
    assert {c.kernel for c in cases} >= {*goldens.KERNELS, *goldens.UNBUILDABLE}
    matmuls = [c for c in cases if c.kernel == "matmul_test"]
    assert {c.params["KT_DIM"] for c in matmuls} == {1, 2} and all(c.dims is None for c in matmuls)


def test_a_matrix_row_shows_each_input_mode():
    opts = Options(kernel="eltwise_binary_test", chip="blackhole", input_format="Float32", op="mul", dims=(64, 64),
                   dest_acc=True)
    outcome = check.Outcome("x", (check.Verdict("integer", True), check.Verdict("random", False, "element 3 ...")),
                            seconds=12.4)
    assert check.table_row(opts, outcome) == ("| eltwise_binary_test | mul | blackhole | Float32->Float32 (32-bit Dest) "
                                              "| 64x64 HiFi4 | pass | FAIL: element 3 ... | 12 |")


@pytest.mark.parametrize("args, message", [
    (["no_such_kernel"], "has no golden for 'no_such_kernel'"),
    (["pack_test", "--format", "UInt16"], "format 'UInt16': tessera tensix check has no L1 encoding"),
    (["pack_test", "pack_test"], "takes one KERNEL"),
])
def test_bad_requests_are_one_line_configuration_errors(args, message):
    done = tessera("tensix", "check", *args)
    assert done.returncode == 64
    assert done.stderr.count("\n") == 1 and message in done.stderr


# ------------------------------------------------------------------ built and run (compiler and cache needed)


@pytest.mark.llk_build
@pytest.mark.parametrize("args", [
    ["eltwise_unary_datacopy_test", "--dims", "64x64", "--inputs", "both"],
    ["eltwise_binary_test", "--op", "mul", "--format", "Bfp8_b", "--chip", "wormhole_b0"],
    ["pack_untilize_test", "--format", "Int32", "--dims", "32x64", "--inputs", "random"],
])
def test_kernels_match_their_goldens(args):
    require_llk()
    done = tessera("tensix", "check", *args, "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines and all(line.endswith(": pass") for line in lines)
    assert len(lines) == (2 if "both" in args else 1)


@pytest.mark.llk_build
def test_the_kept_run_manifest_repeats_the_check_and_catches_a_corrupted_input(tmp_path):
    require_llk()
    done = tessera("tensix", "check", "pack_test", "--format", "Float16", "-o", str(tmp_path), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert tessera("run", str(tmp_path / "run-integer.toml"), "--max-steps", "50000000").returncode == 0
    blob = bytearray((tmp_path / "A-integer.bin").read_bytes())
    want = np.frombuffer(bytes(blob[2 * 40:2 * 41]), "<f2")[0]
    blob[2 * 40:2 * 41] = np.float16(want + 1).tobytes()      # element 40: tile 0, face 0, row 2, column 8
    (tmp_path / "A-integer.bin").write_bytes(bytes(blob))
    rerun = tessera("run", str(tmp_path / "run-integer.toml"), "--max-steps", "50000000")
    assert rerun.returncode == 79
    assert "element 40 (tile 0, face 0, row 2, column 8)" in rerun.stderr
