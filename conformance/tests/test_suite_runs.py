"""The conformance suite run end to end on fake plugins (see conftest.py and fakes/).

Each test runs ``pytest --pyargs tessera_conformance`` in a subprocess and reads the
JUnit XML it writes: every test case names its plugin, check and target.
"""

from __future__ import annotations

import subprocess
import sys

from suite_support import QUICK, suite_env

ARCH_CHECKS = {"architecture", "round-trip", "random-words", "random-programs", "examples", "cases",
               "determinism", "snapshot", "engine-equivalence", "budget", "memory-fault", "execute-hooks", "memory-hooks",
               "timing", "deadlock"}


def test_suite_passes_a_good_architecture_and_a_good_tool(run_suite):
    run = run_suite({"good": "fakeplugins:good", "observer": "fakeplugins:observer"})
    assert run.returncode == 0, run.output
    assert {c.plugin for c in run.cases} - {""} == {"good", "observer"}
    good = run.of("good")
    assert ARCH_CHECKS | {"load", "api-version", "declarations", "hooks"} == {c.check for c in good}
    assert all(c.outcome == "passed" or c.outcome == "skipped" for c in good), run.output
    # every test id carries the plugin name; the n/a ones say why
    assert all("good" in c.name for c in good)
    assert run.outcome("round-trip", "good:tiny:2-st").outcome == "passed"
    assert run.outcome("cases", "good:tiny:fetch-fault").outcome == "passed"
    assert "neither 'sync' nor 'multi-agent'" in run.outcome("deadlock", "good:tiny").message
    # the tool is run against every reference program of every architecture
    tool = {c.target for c in run.of("observer") if c.check == "transparency"}
    assert tool == {"observer:tiny:sum", "observer:tiny:sum-state", "observer:tiny:endless",
                    "observer:tiny:fetch-fault"}
    assert all(c.outcome == "passed" for c in run.of("observer"))
    # the per-plugin summary at the end
    summary = run.output[run.output.index("Tessera conformance"):]
    assert "good ((module), API 1): ok" in summary
    assert "observer ((module), API 1): ok" in summary
    assert "n/a    deadlock good:tiny: tiny declares neither" in summary
    assert "toy: not checked (not in the allow-list)" in summary


def test_suite_reports_bad_plugins_by_name_and_checks_the_rest(run_suite):
    run = run_suite({
        "good": "fakeplugins:good",
        "broken": "no_such_fake_module",
        "future": "fakeplugins:future",
        "raising_archs": "fakeplugins:raising_archs",
        "raising_cases": "fakeplugins:raising_cases",
        "dup_one": "fakeplugins:dup_one",
        "dup_two": "fakeplugins:dup_two",
        "malformed": "fakeplugins:malformed",
    })
    assert run.returncode == 1, run.output
    failed = {(c.check, c.target): c.message for c in run.cases if c.outcome == "failed"}
    assert "import failed: ModuleNotFoundError" in failed[("load", "broken")]
    assert "targets plugin API 99" in failed[("load", "future")]
    assert "TESSERA_API_VERSION = 99" in failed[("api-version", "future")]
    assert "tessera_architectures raised RuntimeError: cannot describe myself" in failed[("load", "raising_archs")]
    assert "tessera_conformance_cases raised KeyError" in failed[("load", "raising_cases")]
    for dup in ("dup_one", "dup_two"):
        assert "'dup' is provided by dup_one and dup_two" in failed[("load", dup)]
    assert "malformed conformance case #0" in failed[("cases", "malformed:tiny-malformed:case0")]
    # nothing else failed: the good plugin and the sound parts of the others were checked
    assert set(failed) == {("load", "broken"), ("load", "future"), ("api-version", "future"),
                           ("load", "raising_archs"), ("load", "raising_cases"), ("load", "dup_one"),
                           ("load", "dup_two"), ("cases", "malformed:tiny-malformed:case0")}
    assert {c.check for c in run.of("good")} >= ARCH_CHECKS
    assert run.outcome("cases", "malformed:tiny-malformed:sum-state").outcome == "passed"
    summary = run.output[run.output.index("Tessera conformance"):]
    assert "broken ((module)): FAILED" in summary
    assert "good ((module), API 1): ok" in summary


def test_suite_catches_wrong_behaviour_and_honours_declarations(run_suite):
    run = run_suite({
        "leaky": "fakeplugins:leaky",
        "leaky_declared": "fakeplugins:leaky_declared",
        "flipper": "fakeplugins:flipper",
        "declared_flipper": "fakeplugins:declared_flipper",
        "crasher": "fakeplugins:crasher",
        "stale": "fakeplugins:stale",
        "slow_clock": "fakeplugins:slow_clock",
        "free_clock": "fakeplugins:free_clock",
    })
    assert run.returncode == 1, run.output
    assert all(c.outcome == "passed" for c in run.of("slow_clock"))  # timing is not architecture
    free = run.outcome("transparency", "free_clock:tiny-stale:sum")
    assert free.outcome == "failed" and "at zero cycles or less" in free.message
    leak = run.outcome("memory-hooks", "leaky:tiny-leaky:sum")
    assert leak.outcome == "failed" and "no watched store touched it" in leak.message
    declared = run.outcome("memory-hooks", "leaky_declared:tiny-leaky2:sum")
    assert declared.outcome == "xfailed" and "st bypasses the memory watches" in declared.message
    flip = run.outcome("transparency", "flipper:tiny-leaky:sum")
    assert flip.outcome == "failed" and "with flipper enabled" in flip.message
    skip = run.outcome("transparency", "declared_flipper:tiny-stale:sum")
    assert skip.outcome == "skipped" and "flips bit 0 of every li result" in skip.message
    crash = run.outcome("transparency", "crasher:tiny-stale:sum")
    assert crash.outcome == "failed" and "plugin crasher" in crash.message and "ZeroDivisionError" in crash.message
    xpass = run.outcome("determinism", "stale:tiny-stale:sum")
    assert xpass.outcome == "failed" and "XPASS(strict)" in xpass.message
    decl = run.outcome("declarations", "stale")
    assert decl.outcome == "failed"
    assert "'no-such-check' names no check" in decl.message
    assert "'round-trip:tiny-stale:9-*' matches none" in decl.message
    summary = run.output[run.output.index("Tessera conformance"):]
    assert "xfail  memory-hooks leaky_declared:tiny-leaky2:sum: declared by leaky_declared: st bypasses" in summary


def test_suite_narrows_to_named_plugins(run_suite):
    run = run_suite({"good": "fakeplugins:good", "observer": "fakeplugins:observer",
                     "broken": "no_such_fake_module"},
                    "--tessera-plugin", "good", "--tessera-plugin", "nosuch")
    assert {c.plugin for c in run.cases} - {""} == {"good", "nosuch"}  # "": checks with nothing to do
    missing = run.outcome("load", "nosuch")
    assert missing.outcome == "failed" and "no plugin named 'nosuch' is installed" in missing.message
    assert all(c.outcome in ("passed", "skipped") for c in run.of("good"))
    assert "(narrowed with --tessera-plugin to: good, nosuch)" in run.output


def test_tessera_conformance_command(tmp_path):
    env = suite_env({"good": "fakeplugins:good"}, allow="conformance")
    cmd = [sys.executable, "-c", "from tessera.cli.main import main; main()", "conformance", "--plugin",
           "good", "--junitxml", str(tmp_path / "out.xml"), *QUICK]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "good ((module), API 1): ok" in proc.stdout
    assert "good:tiny" in (tmp_path / "out.xml").read_text()
    help_text = subprocess.run([sys.executable, "-c", "from tessera.cli.main import main; main()",
                                "conformance", "--help"], env=env, capture_output=True, text=True).stdout
    assert "--plugin NAME" in help_text and "--deep" in help_text
