"""Support for the conformance suite's own tests: run the suite on fake plugins.

The suite runs in a subprocess (``python -m pytest --pyargs tessera_conformance``)
so each run discovers plugins afresh.  ``TESSERA_PLUGINS`` is set to an allow-list
that names no installed plugin, and the fakes of ``fakes/fakeplugins.py`` are
registered with ``TESSERA_EXTRA_PLUGINS``, so only they are checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import attrs

FAKES = Path(__file__).resolve().parent / "fakes"
#: Small budgets: the suite's own tests check behaviour, not coverage.
QUICK = ["--tessera-budget", "300", "--tessera-examples", "3", "--tessera-programs", "5"]


@attrs.define
class Case:
    name: str
    plugin: str
    check: str
    target: str
    outcome: str  # passed, failed, skipped, xfailed
    message: str


@attrs.define
class SuiteRun:
    returncode: int
    output: str
    cases: list[Case]

    def outcome(self, check: str, target: str) -> Case:
        found = [c for c in self.cases if c.check == check and c.target == target]
        assert len(found) == 1, f"{check} {target}: {found} in\n{self.output}"
        return found[0]

    def of(self, plugin: str) -> list[Case]:
        return [c for c in self.cases if c.plugin == plugin]


def _cases(xml: Path) -> list[Case]:
    out = []
    for tc in ET.parse(xml).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in tc.iter("property")}
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = tc.find(tag)
            if node is not None:
                outcome = {"failure": "failed", "error": "failed", "skipped": "skipped"}[tag]
                if tag == "skipped" and node.get("type") == "pytest.xfail":
                    outcome = "xfailed"
                message = (node.get("message") or "") + "\n" + (node.text or "")
                break
        out.append(Case(tc.get("name"), props.get("tessera_plugin", ""), props.get("tessera_check", ""),
                        props.get("tessera_target", ""), outcome, message))
    return out


def suite_env(plugins: dict[str, str], allow: str = "none-of-the-installed") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TESSERA_", "PYTEST_ADDOPTS"))}
    env["TESSERA_PLUGINS"] = allow
    env["TESSERA_EXTRA_PLUGINS"] = ",".join(f"{name}={spec}" for name, spec in plugins.items())
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(FAKES), env.get("PYTHONPATH")]))
    return env


def run_suite_in(tmp_path: Path, plugins: dict[str, str], *args: str) -> SuiteRun:
    """Run the suite on ``plugins`` (``{name: "module:attr"}``) with ``args``; parse its JUnit XML."""
    xml = tmp_path / "junit.xml"
    xml.unlink(missing_ok=True)  # a test may run the suite more than once
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "tessera_conformance", "-p", "no:cacheprovider",
           "-q", f"--junitxml={xml}", *QUICK, *args]
    proc = subprocess.run(cmd, cwd=tmp_path, env=suite_env(plugins), capture_output=True, text=True,
                          timeout=600)
    cases = _cases(xml) if xml.exists() else []
    return SuiteRun(proc.returncode, proc.stdout + proc.stderr, cases)
