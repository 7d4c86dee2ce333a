"""The conformance suite on a real architecture: the test-only toy (with its cases and declarations).

The toy is not distributed, so no tox environment checks it; this test does, with
the suite's default budgets.  The other architecture plugins are checked by
`pytest --pyargs tessera_conformance` and the `conformance*` tox environments.
"""

from __future__ import annotations

import subprocess
import sys

from suite_support import _cases, suite_env


def test_suite_toy_passes(tmp_path):
    env = suite_env({}, allow="toy")
    env.pop("TESSERA_EXTRA_PLUGINS")
    xml = tmp_path / "toy.xml"
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "tessera_conformance", "-p", "no:cacheprovider", "-q",
           "--tessera-plugin", "toy", f"--junitxml={xml}"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "toy (tessera-toyarch 0.1.0, API 1): ok" in proc.stdout
    cases = _cases(xml)
    outcomes = {(c.check, c.target): c.outcome for c in cases}
    for name in ("add", "memory", "console", "trap-handled", "load-fault", "barrier", "deadlock", "endless"):
        assert outcomes[("cases", f"toy:toy:{name}")] == "passed"
    assert outcomes[("random-programs", "toy:toy")] == "passed"  # unknown semaphores trap (fixed)
    widths = {target: outcome for (check, target), outcome in outcomes.items() if check == "register-width"}
    assert len(widths) == 9 and set(widths.values()) == {"passed"}, widths  # the example and 8 cases
    assert outcomes[("deadlock", "toy:toy")] == "passed"
