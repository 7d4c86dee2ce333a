"""A kernel parameter nothing gives is never compiled as 0: the build uses the value the kernel's
vendor test always passes when tessera knows it, else stops with one line naming the parameter,
``--param NAME=...`` and what tt-llk's tests pass (tessera_tensix.llk.params, .kernels,
.vendorvalues, .build.diagnose).  No compiler and no network: kernels and vendor tests are
written here in the shape of tt-llk's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tessera_tensix.llk import build, params, vendorvalues
from tessera_tensix.llk.kernels import Options, resolve
from tessera_tensix.llk.params import MissingParameter


def usage_of(tmp_path: Path, name: str, body: str) -> params.Usage:
    (tmp_path / f"{name}.cpp").write_text(f"void run_kernel(RUNTIME_PARAMETERS params) {{ {body} }}\n")
    return params.scan(tmp_path / f"{name}.cpp", ())


def vendor_tests(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "python_tests"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_placeholder_defaults_are_gone_from_the_vocabulary():
    """The harness's 0 for these is a placeholder its tests always replace (rows to pack must be
    1..64; a kernel divides by the reuse count): no default, so no silent 0."""
    for name in ("NUM_ROWS_TO_PACK", "SRCA_REUSE_COUNT"):
        assert params.VOCABULARY[name].default is None
    assert params.VOCABULARY["SRC1_TILE_IDX"].default == 1       # SFPU_TILE_INDICES: src1 is tile 1


def test_a_runtime_field_without_default_stops_the_resolve_naming_it(tmp_path):
    usage = usage_of(tmp_path, "pack_rows_test", "init(params.NUM_ROWS_TO_PACK, params.buffer_Res[0]);")
    with pytest.raises(MissingParameter) as info:
        resolve(Options(kernel="pack_rows_test"), usage)
    exc = info.value
    assert (exc.name, exc.known, exc.runtime, exc.exit_code) == ("NUM_ROWS_TO_PACK", True, True, 64)
    assert str(exc) == ("configuration error: pack_rows_test reads params.NUM_ROWS_TO_PACK, which has no default: "
                        "give it with --param NUM_ROWS_TO_PACK=N")
    res = resolve(Options(kernel="pack_rows_test", params={"NUM_ROWS_TO_PACK": 16}), usage)
    assert res.spec.runtime["NUM_ROWS_TO_PACK"] == 16


def test_a_compile_time_name_without_default_stops_too(tmp_path):
    """Used bare, the name would be a constexpr of build.h: it is asked for the same way."""
    usage = usage_of(tmp_path, "k", "f<SRCA_REUSE_COUNT>(params.TILE_CNT);")
    with pytest.raises(MissingParameter, match=r"k reads SRCA_REUSE_COUNT, which has no default: give it with "
                                               r"--param SRCA_REUSE_COUNT=VALUE$"):
        resolve(Options(kernel="k"), usage)
    res = resolve(Options(kernel="k", params={"SRCA_REUSE_COUNT": 4}), usage)
    assert res.spec.constants["SRCA_REUSE_COUNT"] == 4


def test_a_kernels_vendor_value_replaces_the_generic_default(tmp_path):
    """sdpa_bcast_col_srcb_reuse_test's test always passes 2 faces of 8 rows (its math asserts
    num_faces == 2); the generic 4 and 16 would trip it.  --param still wins."""
    usage = usage_of(tmp_path, "sdpa_bcast_col_srcb_reuse_test",
                     "mop(num_faces); unpack(params.in0_face_r_dim, params.buffer_A[0], params.buffer_Res[0]);")
    res = resolve(Options(kernel="sdpa_bcast_col_srcb_reuse_test"), usage)
    assert res.spec.constants["num_faces"] == vendorvalues.KERNEL_VALUES["sdpa_bcast_col_srcb_reuse_test"]["num_faces"]
    assert res.spec.runtime["in0_face_r_dim"] == 8
    forced = resolve(Options(kernel="sdpa_bcast_col_srcb_reuse_test", params={"num_faces": 4}), usage)
    assert forced.spec.constants["num_faces"] == 4
    other = resolve(Options(kernel="k2"), usage)          # any other kernel keeps the harness's default
    assert other.spec.constants["num_faces"] == 4


def test_the_values_a_kernels_vendor_tests_pass_are_read_from_them(tmp_path):
    """Literal lists in parametrize keywords and NAME(<literal>) calls, from the tests that name
    the kernel's source; tests of other kernels do not count."""
    root = vendor_tests(tmp_path, {
        "test_pack_rows.py": ("import pytest\n@parametrize(num_rows_to_pack=[1, 16, 50, 64])\n"
                              "def test_pack_rows(num_rows_to_pack):\n"
                              "    TestConfig('sources/pack_rows_test.cpp', runtimes=[NUM_ROWS_TO_PACK(num_rows_to_pack)])\n"),
        "test_guard.py": "def test_g():\n    TestConfig('sources/pack_rows_test.cpp', runtimes=[NUM_GUARD_TILES(0)])\n",
        "test_other.py": "def test_o():\n    TestConfig('sources/other_test.cpp', runtimes=[NUM_ROWS_TO_PACK(7)])\n",
    })
    values, files = vendorvalues.values_used(root, "pack_rows_test", "NUM_ROWS_TO_PACK")
    assert (values, files) == ([1, 16, 50, 64], ["test_guard.py", "test_pack_rows.py"])
    assert vendorvalues.values_used(root, "pack_rows_test", "NUM_GUARD_TILES")[0] == [0]
    assert vendorvalues.hint(root, "other_test", "NUM_ROWS_TO_PACK") == \
        "tt-llk's tests/python_tests/test_other.py passes 7"
    assert vendorvalues.hint(root, "other_test", "POLLUTER") == "see tt-llk's tests/python_tests/test_other.py"
    assert vendorvalues.hint(root, "nobody_test", "X") == ""
    exc = MissingParameter("pack_rows_test", "NUM_ROWS_TO_PACK", known=True, runtime=True)
    told = exc.with_hint(vendorvalues.hint(root, "pack_rows_test", "NUM_ROWS_TO_PACK"))
    assert str(told).endswith("--param NUM_ROWS_TO_PACK=N (tt-llk's tests/python_tests/test_guard.py, "
                              "test_pack_rows.py pass 1, 16, 50, 64)")


def test_a_compile_error_about_an_unknown_name_asks_for_it_with_the_vendors_values(tmp_path):
    """A name neither the vocabulary nor the kernel defines fails to compile: the one line
    names it, --param, and what the vendor's tests pass (the hint the build gives)."""
    log = ("/c/tt-llk/tests/sources/k_test.cpp:12:5: error: 'POLLUTER' was not declared in this scope\n")
    line = build.diagnose("k_test", "blackhole", "trisc0", log, tmp_path / "unpack.log",
                          hint=lambda name: f"tt-llk's tests pass {name.lower()}s")
    assert line == ("k_test needs the build-header parameter POLLUTER, which tessera does not know: give it with "
                    f"--param POLLUTER=VALUE (tt-llk's tests pass polluters; log {tmp_path / 'unpack.log'})")
    plain = build.diagnose("k_test", "blackhole", "trisc0", log, tmp_path / "unpack.log")
    assert "(see its test in tt-llk's tests/python_tests; log" in plain


def test_a_module_constant_passed_by_name_counts_as_its_value(tmp_path):
    """test_unpack_bcastA_B_uninit_restore.py passes SRCA_REUSE_COUNT(BCAST_SRCA_REUSE) with
    BCAST_SRCA_REUSE = 1 at module level."""
    root = vendor_tests(tmp_path, {"test_r.py": (
        "REUSE = 3\nOTHER = 'x'\n"
        "def test_r():\n    TestConfig('sources/r_test.cpp', runtimes=[SRCA_REUSE_COUNT(REUSE), ZERO_POINT(OTHER)])\n")})
    assert vendorvalues.values_used(root, "r_test", "SRCA_REUSE_COUNT")[0] == [3]
    assert vendorvalues.values_used(root, "r_test", "ZERO_POINT")[0] == []      # not a number: not a value
