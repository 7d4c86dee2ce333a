"""What a case's tool options do to its run: the ``tool-effect`` check (docs/conformance.md).

A case's ``expect`` pins the state a run *with* its ``tool_options`` ends in, but not
that the options had anything to do with it: a fault injector whose fault never
fires passes a case whose expectation happens to be the untouched result, and one
that disturbs a run while merely armed passes every check that compares runs made
with the same options (determinism, snapshot, engine-equivalence).  So a case may say
what its options must do, compared with the same run without them:

* ``"changes": True`` — the run must end differently: another outcome (reason, exit
  code, error), other output, another final state apart from timing (registers, PCs,
  memory, sync objects, steps), or a different verdict of the case's own ``expect``,
  ``stdout`` and ``check`` (which hold with the options — the ``cases`` check — so
  they must fail without them).  The verdict is what sees state that
  ``machine.state()`` leaves out, such as Tensix's Dest, which only a case's ``check``
  reads.  The runs with the options on the two engines must also agree with each other
  (outcome and state hash), so the injection lands at the same point on both.
* ``"transparent": True`` — the run must end identically: the same outcome and output,
  the same ``state_hash()`` — steps, cycles, the clock, registers, PCs, memory, sync
  objects and the scheduler's position — and the same verdict of the case's
  expectations.  This is how an injector that is armed but never triggered (a trigger
  past the program's end, an address never executed) is checked to cost nothing.

"Without them" is the same program, on a host with the same plugins, configured with
every option the case names at its default (what ``tessera run`` passes when the
option is not given); the session's other ``--tessera-tool-option`` values apply to
both runs.  Each comparison is made on the step and on the fast engine, with blocks
translated at a PC's second visit (as ``engine-equivalence`` does), so the fast
engine runs the case's loops as translated blocks around whatever the tool
instruments.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from tessera.machine import Machine
from tessera_conformance.check_runs import EQUIVALENCE_HOT
from tessera_conformance.discovery import Suite
from tessera_conformance.programs import Outcome, Program, check_expectations, run
from tessera_conformance.runs import ProgramBroken, architectural_digest, build, state_difference, state_of

ENGINES = ("step", "fast")


def _fail(message: str) -> None:
    pytest.fail(message, pytrace=False)


@attrs.define(eq=False)
class Ending:
    """How one run ended, in the terms the comparisons use."""

    machine: Machine
    outcome: Outcome
    hash: str
    architectural: str
    #: what the case's own expectations say of the run (empty: they hold)
    verdict: list[str]

    @property
    def signature(self) -> tuple[Any, ...]:
        return self.outcome.signature()

    @property
    def detail(self) -> str:
        return self.outcome.detail

    @property
    def stdout(self) -> bytes:
        return self.outcome.stdout

    def difference(self, other: Ending, other_name: str) -> str:
        """Where this ending first differs from ``other`` (named ``other_name``), for messages."""
        if self.signature != other.signature:
            return f"ends with {self.detail!r}; {other_name}: {other.detail!r}"
        if self.stdout != other.stdout:
            return f"prints {self.stdout!r}; {other_name}: {other.stdout!r}"
        if self.hash != other.hash:
            a, b = state_of(self.machine), state_of(other.machine)
            return (f"ends in another state than {other_name} "
                    f"({state_difference(a, b) if a != b else 'memory differs'})")
        return (f"the case's expectations judge it {_verdict(self.verdict)}; {other_name}: "
                f"{_verdict(other.verdict)}")


def _verdict(wrong: list[str]) -> str:
    return "as expected" if not wrong else "wrong: " + "; ".join(wrong)


@contextlib.contextmanager
def hot_blocks() -> Iterator[None]:
    """Translate blocks at a PC's second visit while the runs are made (``EQUIVALENCE_HOT``)."""
    saved = os.environ.get("TESSERA_BLOCK_HOT")
    os.environ["TESSERA_BLOCK_HOT"] = str(EQUIVALENCE_HOT)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TESSERA_BLOCK_HOT", None)
        else:
            os.environ["TESSERA_BLOCK_HOT"] = saved


def without_options(suite: Suite, program: Program) -> Program:
    """``program`` with every tool option its case names set back to the option's default."""
    return attrs.evolve(program, run_options=suite.tool_options.defaults(program.run_options))


def ending(suite: Suite, program: Program, engine: str) -> Ending:
    """Run ``program`` (configured with its tool options) on ``engine`` to its end."""
    machine = build(suite, program)
    machine.set_engine(engine)
    outcome = run(machine, program.max_steps)
    try:
        verdict = check_expectations(program, machine, outcome)
    except Exception as exc:  # noqa: BLE001 - a case's check meeting a run it did not expect
        verdict = [f"the case's check raised {type(exc).__name__}: {exc}"]
    return Ending(machine, outcome, machine.state_hash(), architectural_digest(machine), verdict)


def test_tool_effect(effect_target, conformance_suite):
    """A case marked ``changes`` ends differently with its tool options than without them, one
    marked ``transparent`` identically — on the step and on the fast engine."""
    suite, program = conformance_suite, effect_target.payload
    bare = without_options(suite, program)
    given = suite.tool_options.describe(program.run_options) or "all at their defaults"
    label = f"{program.label()} (from plugin {program.provider}) with its tool options ({given})"
    runs: dict[str, tuple[Ending, Ending]] = {}
    try:
        with hot_blocks():
            for engine in ENGINES:
                runs[engine] = (ending(suite, program, engine), ending(suite, bare, engine))
    except ProgramBroken as exc:
        _fail(str(exc))
    for engine, (with_options, without) in runs.items():
        if program.effect == "transparent":
            same = (with_options.signature == without.signature and with_options.stdout == without.stdout
                    and with_options.hash == without.hash and with_options.verdict == without.verdict)
            if not same:
                _fail(f"{label}, on the {engine} engine, {with_options.difference(without, 'without them')}; "
                      "a case marked 'transparent' must end identically (outcome, output, steps, cycles, "
                      "registers, memory, and the case's expectations)")
        else:
            changed = (with_options.signature != without.signature or with_options.stdout != without.stdout
                       or with_options.architectural != without.architectural
                       or with_options.verdict != without.verdict)
            if not changed:
                alike = "hold on both runs" if not without.verdict else "fail alike on both runs"
                _fail(f"{label}, on the {engine} engine, ends as without them ({with_options.detail!r}, the "
                      f"same output and final state apart from timing, and the case's expectations {alike}); "
                      "a case marked 'changes' must end differently")
    if program.effect == "changes":
        step, fast = runs["step"][0], runs["fast"][0]
        if (step.signature != fast.signature or step.stdout != fast.stdout or step.hash != fast.hash
                or step.verdict != fast.verdict):
            _fail(f"{label}: on the fast engine it {fast.difference(step, 'on the step engine')}; the "
                  "options must change the run the same way on both")
