"""Which chips tt-llk's own tests run a kernel on (tessera_tensix.llk.vendorchips), and the build
refusing a kernel for a chip the vendor skips: one line, exit status 80, not a compiler error.

The reading is checked on vendor-style test modules written here (conftest markers, pytestmark,
chip skipifs, in-body skips, kernels named through module constants); it must answer only when
certain.  One case (marked ``llk_build``) runs the command on tt-llk's real tests; it stops
before compiling anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tensix_llk_support import require_llk, tessera

from tessera.errors import ConfigError
from tessera_tensix.llk import build, vendorchips
from tessera_tensix.llk.vendorchips import UnsupportedChip, chips_of

HEAD = "import pytest\nfrom conftest import skip_for_blackhole, skip_for_wormhole, blackhole_only\n"


def python_tests(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "python_tests"
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(HEAD + text)
    return root


def test_a_marker_on_every_test_that_uses_a_kernel_excludes_its_chip(tmp_path):
    root = python_tests(tmp_path, {
        "test_a.py": "@skip_for_blackhole\ndef test_a():\n    TestConfig('sources/a_test.cpp')\n",
        "perf_a.py": "@skip_for_blackhole\ndef test_perf_a():\n    run('sources/a_test.cpp')\n",
    })
    verdict = chips_of(root, "a_test")
    assert verdict is not None and not verdict.supports("blackhole") and verdict.supports("wormhole_b0")
    line = verdict.refusal("blackhole")
    assert line == ("tt-llk's own tests run a_test on wormhole_b0 only, not on blackhole "
                    "(tests/python_tests/perf_a.py, test_a.py: skip_for_blackhole); --force-chip builds it anyway")


def test_one_test_that_runs_on_the_chip_is_enough(tmp_path):
    """unpack_A_test's comprehensive test skips Blackhole, its targeted one does not."""
    root = python_tests(tmp_path, {"test_u.py": (
        "PARAMS = generate(testnames=['sources/u_test.cpp'])\n"
        "@skip_for_blackhole\n@parametrize('p', PARAMS)\ndef test_wide(p):\n    pass\n"
        "def test_targeted():\n    TestConfig('sources/u_test.cpp')\n")})
    verdict = chips_of(root, "u_test")
    assert verdict is not None and verdict.supports("blackhole")
    assert {t.function for t in verdict.tests} == {"test_wide", "test_targeted"}


def test_module_marks_skipifs_and_body_skips_count(tmp_path):
    root = python_tests(tmp_path, {
        "test_m.py": "pytestmark = [blackhole_only, pytest.mark.skip(reason='flaky')]\n"
                     "def test_m():\n    TestConfig('sources/m_test.cpp')\n",
        "test_s.py": "@pytest.mark.skipif(get_chip_architecture() != ChipArchitecture.WORMHOLE, reason='x')\n"
                     "def test_s():\n    TestConfig('sources/s_test.cpp')\n",
        "test_b.py": "def test_b():\n    if get_chip_architecture() != ChipArchitecture.BLACKHOLE:\n"
                     "        pytest.skip('BH only')\n    TestConfig('sources/b_test.cpp')\n",
        "test_both.py": "@pytest.mark.skipif(TestConfig.CHIP_ARCH not in (ChipArchitecture.BLACKHOLE, "
                        "ChipArchitecture.WORMHOLE), reason='x')\ndef test_both():\n    TestConfig('sources/both_test.cpp')\n",
    })
    assert chips_of(root, "m_test").chips == {"blackhole"}                  # the plain skip is not about chips
    assert chips_of(root, "s_test").chips == {"wormhole_b0"}
    assert chips_of(root, "b_test").chips == {"blackhole"}
    assert chips_of(root, "both_test").chips == {"blackhole", "wormhole_b0"}
    assert "pytest.skip on quasar/wormhole_b0" in chips_of(root, "b_test").refusal("wormhole_b0")


def test_skips_that_are_not_pure_chip_tests_do_not_exclude(tmp_path):
    """A skip for one format on one chip leaves the kernel supported there."""
    root = python_tests(tmp_path, {"test_f.py": (
        "def test_f(fmt):\n    if get_chip_architecture() == ChipArchitecture.WORMHOLE and fmt == 'Fp8':\n"
        "        pytest.skip('no Fp8 on WH')\n    TestConfig('sources/f_test.cpp')\n")})
    assert chips_of(root, "f_test").chips == vendorchips.ALL


def test_no_verdict_when_a_use_cannot_be_tied_to_a_test(tmp_path):
    """A kernel named by a helper module, a class or no test at all gets None: the build then
    goes ahead as before instead of refusing on a guess."""
    root = python_tests(tmp_path, {
        "test_h.py": "@skip_for_blackhole\ndef test_h():\n    TestConfig('sources/h_test.cpp')\n",
        "helpers/runner.py": "DRIVER = 'sources/h_test.cpp'\n",
        "test_c.py": "@skip_for_blackhole\ndef test_c():\n    TestConfig('sources/c_test.cpp')\n"
                     "class TestMore:\n    def test_x(self):\n        TestConfig('sources/c_test.cpp')\n",
        "test_doc.py": '"""sources/d_test.cpp is described here."""\n'
                       "@skip_for_blackhole\ndef test_d():\n    TestConfig('sources/d_test.cpp')\n",
    })
    assert chips_of(root, "h_test") is None
    assert chips_of(root, "c_test") is None
    assert chips_of(root, "nobody_test") is None
    assert chips_of(root, "d_test").chips == {"wormhole_b0", "quasar"}    # a docstring is not a use


def test_a_helper_another_test_module_imports_gives_no_verdict(tmp_path):
    """test_topk_xl_unfused_macro.py imports helpers from test_topk_xl.py: a kernel named in a
    helper of an imported module may be run by tests that never name it."""
    root = python_tests(tmp_path, {
        "test_base.py": "@skip_for_blackhole\ndef test_base():\n    _run()\n"
                        "def _run():\n    TestConfig('sources/i_test.cpp')\n",
        "test_more.py": "from test_base import _run\ndef test_more():\n    _run()\n",
    })
    assert chips_of(root, "i_test") is None
    (root / "test_more.py").write_text(HEAD + "def test_more():\n    pass\n")
    vendorchips._chips_of.cache_clear()
    assert chips_of(root, "i_test").chips == {"wormhole_b0", "quasar"}


def test_module_level_lists_filled_in_loops_are_followed(tmp_path):
    """test_unpack_A_sdpa.py builds its parameter list in a module-level loop over another list."""
    root = python_tests(tmp_path, {"test_l.py": (
        "base = list(generate(testnames=['sources/l_test.cpp']))\nall_params = []\n"
        "for b in base:\n    all_params.append(b)\n"
        "@blackhole_only\n@parametrize('p', all_params)\ndef test_l(p):\n    TestConfig(p)\n")})
    assert chips_of(root, "l_test").chips == {"blackhole"}


def test_the_refusal_is_a_configuration_error_with_its_own_exit_status(tmp_path):
    root = python_tests(tmp_path, {"test_r.py": "@blackhole_only\ndef test_r():\n    TestConfig('sources/r_test.cpp')\n"})
    with pytest.raises(UnsupportedChip) as info:
        build.require_chip(root, "r_test", "wormhole_b0")
    assert isinstance(info.value, ConfigError) and info.value.exit_code == 80 != ConfigError.exit_code
    assert str(info.value).startswith("unsupported chip: tt-llk's own tests run r_test on blackhole only")
    build.require_chip(root, "r_test", "blackhole")          # supported: nothing raised
    build.require_chip(root, "nobody_test", "blackhole")     # no verdict: nothing raised


@pytest.mark.llk_build
def test_the_build_refuses_or_asks_in_one_line_before_compiling(tmp_path):
    """On tt-llk's real tests: a Wormhole-only kernel for Blackhole is exit 80; a kernel that
    reads a parameter with no default is exit 64 naming it and the vendor's values; neither
    leaves a compiler log behind."""
    require_llk()
    wh_only = tessera("tensix", "build", "unpack_a_bcast_eltwise_test", "--chip", "blackhole",
                      "-o", str(tmp_path / "a"), "--offline")
    assert wh_only.returncode == 80, wh_only.stderr
    assert wh_only.stderr.count("\n") == 1 and "skip_for_blackhole" in wh_only.stderr
    assert wh_only.stderr.startswith("tessera: unsupported chip: tt-llk's own tests run unpack_a_bcast_eltwise_test "
                                     "on wormhole_b0 only, not on blackhole")
    missing = tessera("tensix", "build", "pack_rows_test", "--chip", "wormhole_b0", "-o", str(tmp_path / "b"),
                      "--offline")
    assert missing.returncode == 64 and missing.stderr.count("\n") == 1, missing.stderr
    assert "reads params.NUM_ROWS_TO_PACK, which has no default: give it with --param NUM_ROWS_TO_PACK=N" \
        in missing.stderr and "test_pack_rows.py passes 1, 16, 50, 64" in missing.stderr
    assert not (tmp_path / "a" / "build").exists() and not (tmp_path / "b" / "build").exists()
