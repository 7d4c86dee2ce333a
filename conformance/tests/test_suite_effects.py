"""The ``tool-effect`` check: what a case's tool options do, compared with the run without them.

A case's ``expect`` alone cannot tell an injection that changed the result from one that
never fired, nor catch an armed injector that disturbs the run on its own: every other
check compares runs made with the same options.  These tests run the suite on fake
injectors (``fakes/fakeeffects.py``) that are wrong in exactly those ways.
"""

from __future__ import annotations

PLUGINS = {"good": "fakeplugins:good"}


def test_cases_marked_changes_and_transparent_pass_for_a_correct_injector(run_suite):
    run = run_suite({**PLUGINS, "fi": "fakeeffects:good_effects"}, "-k", "tool_effect or cases")
    assert run.returncode == 0, run.output
    got = {c.target: c.outcome for c in run.of("fi") if c.check == "tool-effect"}
    assert got == {"fi:tiny:fi-changes-the-sum": "passed", "fi:tiny:fi-armed-never-fires": "passed"}
    # the generic cases check still judges their expectations
    assert run.outcome("cases", "fi:tiny:fi-changes-the-sum").outcome == "passed"


def test_a_fault_that_never_fires_fails_changes_although_its_expectation_holds(run_suite):
    run = run_suite({**PLUGINS, "fi": "fakeeffects:dud"}, "-k", "tool_effect or cases")
    assert run.returncode == 1, run.output
    assert run.outcome("cases", "fi:tiny:fi-claims-a-change").outcome == "passed"   # 12 as expected ...
    dud = run.outcome("tool-effect", "fi:tiny:fi-claims-a-change")                  # ... but unchanged
    assert dud.outcome == "failed"
    assert ("case 'fi-claims-a-change' of tiny (from plugin fi) with its tool options (--fi-at 1022), on the "
            "step engine, ends as without them") in dud.message
    assert "a case marked 'changes' must end differently" in dud.message


def test_an_armed_injector_that_disturbs_the_run_fails_transparent(run_suite):
    run = run_suite({**PLUGINS, "fi": "fakeeffects:leaky"}, "-k", "tool_effect or determinism or engine_equivalence")
    assert run.returncode == 1, run.output
    # runs with the same options agree with each other: only the comparison without them sees it
    assert run.outcome("determinism", "good:tiny:fi-armed-never-fires").outcome == "passed"
    assert run.outcome("engine-equivalence", "good:tiny:fi-armed-never-fires").outcome == "passed"
    leak = run.outcome("tool-effect", "fi:tiny:fi-armed-never-fires")
    assert leak.outcome == "failed"
    assert "on the step engine, ends in another state than without them (agents.core0.registers.r[0]: 1 vs 0)" \
        in leak.message


def test_both_engines_are_compared(run_suite):
    run = run_suite({**PLUGINS, "fi": "fakeeffects:fast_only"}, "-k", "tool_effect")
    assert run.returncode == 1, run.output
    armed = run.outcome("tool-effect", "fi:tiny:fi-armed-never-fires")
    assert armed.outcome == "failed" and "on the fast engine, ends in another state than without them" in armed.message
    flip = run.outcome("tool-effect", "fi:tiny:fi-changes-the-sum")
    assert flip.outcome == "failed"
    assert "on the fast engine it ends in another state than on the step engine" in flip.message


def test_a_change_only_the_case_check_can_see_counts_as_a_change(run_suite):
    # the marks live in machine.ext, outside machine.state(): the two runs hash alike, but the
    # case's check holds with the option and fails without it
    run = run_suite({**PLUGINS, "fi": "fakeeffects:marker"}, "-k", "tool_effect or cases")
    assert run.returncode == 0, run.output
    assert run.outcome("cases", "fi:tiny:fi-marks-the-add").outcome == "passed"
    assert run.outcome("tool-effect", "fi:tiny:fi-marks-the-add").outcome == "passed"


def test_malformed_effect_keys_fail_the_case(run_suite):
    run = run_suite({**PLUGINS, "fi": "fakeeffects:malformed"}, "-k", "cases or tool_effect")
    assert not [c for c in run.of("fi") if c.check == "tool-effect"]   # malformed cases are not compared
    both = run.outcome("cases", "fi:tiny:fi-both")
    assert both.outcome == "failed" and "either 'changes'" in both.message and "not both" in both.message
    bare = run.outcome("cases", "fi:tiny:fi-no-options")
    assert bare.outcome == "failed" and "the case gives none" in bare.message
    word = run.outcome("cases", "fi:tiny:fi-not-a-bool")
    assert word.outcome == "failed" and "'transparent' must be true or false, not 'yes'" in word.message
