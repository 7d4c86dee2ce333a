"""The conformance suite run end to end on fake plugins (see conftest.py and fakes/).

Each test runs ``pytest --pyargs tessera_conformance`` in a subprocess and reads the
JUnit XML it writes: every test case names its plugin, check and target.
"""

from __future__ import annotations

import subprocess
import sys

from suite_support import QUICK, suite_env

ARCH_CHECKS = {"architecture", "control-flags", "round-trip", "random-words", "random-programs", "examples", "cases",
               "determinism", "snapshot", "engine-equivalence", "register-width", "budget", "memory-fault", "execute-hooks", "memory-hooks",
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
    # the command imports the package before pytest starts: no "cannot be rewritten" warning
    assert "PytestAssertRewriteWarning" not in proc.stdout + proc.stderr
    assert "warning" not in proc.stdout.lower()
    help_text = subprocess.run([sys.executable, "-c", "from tessera.cli.main import main; main()",
                                "conformance", "--help"], env=env, capture_output=True, text=True).stdout
    assert "--plugin NAME" in help_text and "--deep" in help_text and "--tool-option NAME=VALUE" in help_text


def test_tessera_conformance_passes_tool_options(tmp_path):
    env = suite_env({"good": "fakeplugins:good", "fi": "fakeplugins:undeclared_injector"}, allow="conformance")
    cmd = [sys.executable, "-c", "from tessera.cli.main import main; main()", "conformance", "--plugin", "fi",
           "--tool-option", "fi-at=0x4", *QUICK, "-k", "transparency and sum"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL   transparency fi:tiny:sum: Failed: with fi enabled (--fi-at 4)" in proc.stdout
    assert "(tool options in every run: --fi-at 4)" in proc.stdout
    assert "PytestAssertRewriteWarning" not in proc.stdout + proc.stderr


# --------------------------------------------------------------------------- tool options


def test_tool_options_reach_the_tool_under_the_suite(run_suite):
    # Without its option the injector does nothing, so even undeclared it is transparent ...
    idle = run_suite({"good": "fakeplugins:good", "fi": "fakeplugins:undeclared_injector"}, "-k", "transparency")
    assert idle.returncode == 0, idle.output
    assert {c.outcome for c in idle.of("fi")} == {"passed"}
    # ... and with --fi-at 0x4 (after `add r1, r2` of the sum) the suite sees the injection
    run = run_suite({"good": "fakeplugins:good", "fi": "fakeplugins:undeclared_injector"}, "-k", "transparency",
                    "--tessera-tool-option", "fi-at=0x4")
    assert run.returncode == 1, run.output
    flipped = run.outcome("transparency", "fi:tiny:sum")
    assert flipped.outcome == "failed"
    assert "with fi enabled (--fi-at 4), example 'sum' of tiny ended with" in flipped.message
    assert "exit code 13" in flipped.message                     # 12 with bit 0 flipped
    assert run.outcome("transparency", "fi:tiny:endless").outcome == "passed"  # never reaches 0x4
    assert "(tool options in every run: --fi-at 4)" in run.output


def test_a_declared_injector_is_checked_for_reproducible_injections_and_its_cases(run_suite):
    run = run_suite({"good": "fakeplugins:good", "fi": "fakeplugins:fault_injector"},
                    "--tessera-tool-option=--fi-at=4")  # (a value starting with - needs the = form)
    assert run.returncode == 0, run.output
    # its case declares the option and the state the injection leaves: 13, not 12
    assert run.outcome("cases", "fi:tiny:fi-flips-the-sum").outcome == "passed"
    assert run.outcome("cases", "fi:tiny:fi-idle").outcome == "passed"
    # the case runs with the injector configured in every generic check, on both engines
    for check in ("determinism", "snapshot", "engine-equivalence", "register-width", "execute-hooks"):
        assert run.outcome(check, "good:tiny:fi-flips-the-sum").outcome == "passed", check
    # transparency does not apply; tool-determinism runs every other program twice, injected
    skipped = run.outcome("transparency", "fi:tiny:sum")
    assert skipped.outcome == "skipped" and "tool-determinism checks it instead" in skipped.message
    assert {c.target for c in run.of("fi") if c.check == "tool-determinism"} == {
        "fi:tiny:sum", "fi:tiny:sum-state", "fi:tiny:endless", "fi:tiny:fetch-fault"}
    assert all(c.outcome == "passed" for c in run.of("fi") if c.check == "tool-determinism")


def test_the_expected_injection_is_what_the_case_checks(run_suite, tmp_path):
    # the same injector, but the case expects the untouched sum: the suite sees the flip
    run = run_suite({"good": "fakeplugins:good", "fi": "fakeplugins:wrong_expectation_injector"},
                    "-k", "cases")
    wrong = run.outcome("cases", "fi:tiny:fi-expects-no-flip")
    assert wrong.outcome == "failed" and "exit code 13, expected 12" in wrong.message


def test_a_nondeterministic_injector_fails_tool_determinism(run_suite):
    run = run_suite({"good": "fakeplugins:good", "fi": "fakeplugins:coin_flipper"}, "-k", "tool_determinism",
                    "--tessera-tool-option", "fi-at=0x4")
    assert run.returncode == 1, run.output
    got = run.outcome("tool-determinism", "fi:tiny:sum")
    assert got.outcome == "failed" and "with fi enabled (--fi-at 4), example 'sum' of tiny" in got.message


def test_bad_tool_options_are_reported(run_suite):
    run = run_suite({"good": "fakeplugins:good", "fi": "fakeplugins:bad_case_injector"}, "-k", "cases")
    value = run.outcome("cases", "fi:tiny:fi-bad-value")
    assert value.outcome == "failed"
    assert "tool option 'fi_at': Invalid value for '--fi-at': 'twelve' is not an address" in value.message
    unknown = run.outcome("cases", "fi:tiny:fi-unknown")
    assert unknown.outcome == "failed" and "tool option '--fi-when': no plugin has it" in unknown.message
    # on the command line, an option nobody has is a usage error before anything runs
    usage = run_suite({"good": "fakeplugins:good", "fi": "fakeplugins:fault_injector"},
                      "--tessera-tool-option", "fi-when=4")
    assert usage.returncode == 4 and usage.cases == []
    assert ("--tessera-tool-option fi-when=4: no plugin has an option 'fi-when' "
            "(options of tessera run from plugins: --fi-at (fi))") in usage.output
    bad = run_suite({"good": "fakeplugins:good", "fi": "fakeplugins:fault_injector"},
                    "--tessera-tool-option", "fi-at=twelve")
    assert bad.returncode == 4 and "'twelve' is not an address" in bad.output


def test_the_trace_plugin_traces_while_the_suite_checks_it(run_suite, tmp_path):
    # a real tool: with --trace jsonl it writes a trace of every run and must change nothing
    out = tmp_path / "trace.jsonl"
    run = run_suite({"good": "fakeplugins:good", "trace": "tessera_trace.plugin"}, "-k", "transparency",
                    "--tessera-tool-option", "trace=jsonl", "--tessera-tool-option", f"trace-out={out}")
    assert run.returncode == 0, run.output
    assert {c.outcome for c in run.of("trace")} == {"passed"} and len(run.of("trace")) == 4
    assert f"(tool options in every run: --trace jsonl --trace-out {out})" in run.output
    lines = out.read_text().splitlines()
    assert lines and all(line.startswith("{") for line in lines)  # the last program's trace


# --------------------------------------------------------------------------- register width


def test_register_width_catches_seeded_semantic_bugs(run_suite):
    run = run_suite({"seeded": "fakeplugins:seeded"}, "-k", "register_width or cases or engine_equivalence")
    assert run.returncode == 1, run.output
    # the final states the cases expect are fine: nothing but the width check notices
    assert {c.outcome for c in run.of("seeded") if c.check in ("cases", "engine-equivalence")} == {"passed"}
    carry = run.outcome("register-width", "seeded:toy-seeded:carry")
    assert carry.outcome == "failed"
    assert "core0 r[3] = 0x100000000, wider than 32 bits after add at 0xc" in carry.message
    borrow = run.outcome("register-width", "seeded:toy-seeded:borrow")
    assert borrow.outcome == "failed"
    assert "core0 r[2] = -1 (negative; a 32-bit register holds 0 .. 0xffffffff) after sub at 0x4" in borrow.message
    assert run.outcome("register-width", "seeded:toy-seeded:fine").outcome == "passed"
    # alone (without engine-equivalence's runs to ride on) it runs the program itself
    alone = run_suite({"seeded": "fakeplugins:seeded"}, "-k", "register_width and carry")
    assert alone.outcome("register-width", "seeded:toy-seeded:carry").outcome == "failed"
