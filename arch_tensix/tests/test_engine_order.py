"""The fast engine retires the coprocessor's threads in exactly the step engine's order.

Regression: when a barrel run of the fast engine ended with every slot parking (T1 and
T2 each waited at once) after one of them had woken T0, the scheduler gave T0 a
one-step slice from its stale list of runnable agents, where stepping gives the only
runnable thread its solo quantum: T0's END retired after T1's expansion instead of
before it (conformance check engine-equivalence on the eltwise-add example).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tessera_tensix.arch import TENSIX_BH, TENSIX_WH


def _trace(tmp_path: Path, arch: str, source: str, engine: str) -> str:
    src = tmp_path / "k.s"
    src.write_text(source)
    out = tmp_path / f"{engine}.txt"
    script = Path(sys.executable).parent / "tessera"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env.update(TESSERA_PLUGINS="tensix,trace", TESSERA_ENGINE=engine, TESSERA_BLOCK_HOT="2")
    res = subprocess.run([str(script), "run", "--arch", arch, str(src), "--trace", "text",
                          "--trace-out", str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    return out.read_text()


@pytest.mark.parametrize("record", [TENSIX_BH, TENSIX_WH], ids=["tensix", "tensix-wh"])
@pytest.mark.parametrize("name", ["eltwise-add", "datacopy", "matmul"])
def test_both_engines_retire_the_demo_kernels_in_one_order(tmp_path, record, name):
    (example,) = [e for e in record.examples if e.name == name]
    step = _trace(tmp_path, record.name, example.source, "step")
    fast = _trace(tmp_path, record.name, example.source, "fast")
    assert step.count("\n") > 50
    assert fast == step
