"""On the tile, Tensix threads that can run at the same time interleave one instruction at
a time, also inside MOP/REPLAY expansions (FedThread.lockstep, docs/tensix.md "The tile").

The hardware issues T0, T1 and T2 side by side; tt-llk's kernels rely on the resulting
order (transpose_dest_test on Wormhole B0 deadlocked while threads ran long slices).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tensix_llk_support import require_llk, tessera
from tensix_tile_support import boot_bh, manifest
from test_tile_board import EXIT, NOP, tensix_words, ttinsn


def _retirements(trace: str) -> list[str]:
    """The Tensix retirements of a text trace, in order: the agent's name, with ``*`` for
    an instruction of a REPLAY expansion (``t1*``)."""
    return [m.group(1) + ("*" if m.group(2) else "")
            for m in re.finditer(r"^(t[0-2])\s.*?(\(REPLAY\))?$", trace, flags=re.M)]


def _run_traced(tmp_path, cores: dict[str, str]) -> list[str]:
    path = manifest(tmp_path, "bh", cores)
    out = tmp_path / "trace.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "tensix,trace"
    done = subprocess.run([str(Path(sys.executable).parent / "tessera"), "run", str(path), "--trace", "text",
                           "--trace-out", str(out), "--max-steps", "100000"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return _retirements(out.read_text())


def test_two_busy_threads_alternate_instruction_by_instruction(tmp_path):
    # each core pushes 20 NOPs before its thread starts popping (the FIFO holds 29): both
    # threads are runnable together, so their retirements alternate
    order = _run_traced(tmp_path, {"brisc": boot_bh(0, 1) + EXIT,
                                   "trisc0": ttinsn(NOP) * 20 + EXIT,
                                   "trisc1": ttinsn(NOP) * 20 + EXIT})
    assert order.count("t0") == 20 and order.count("t1") == 20
    # after the first turn (one thread may have started while the other core still pushed)
    # no thread retires twice in a row while the other still has NOPs queued
    both = order[: 2 * min(order.count("t0"), order.count("t1"))]
    runs = [a for i, a in enumerate(both[1:], 1) if a == both[i - 1]]
    assert len(runs) <= 1, order


def test_a_replay_expansion_interleaves_with_the_other_thread(tmp_path):
    # T1 records four NOPs (REPLAY load, not executed) and replays them in one expansion;
    # T0 runs plain NOPs meanwhile: the expansion's NOPs alternate with T0's
    record, replay = tensix_words("REPLAY 0, 4, 0, 1\nREPLAY 0, 4, 0, 0")
    order = _run_traced(tmp_path, {"brisc": boot_bh(0, 1) + EXIT,
                                   "trisc0": ttinsn(NOP) * 12 + EXIT,
                                   "trisc1": ttinsn(record) + ttinsn(NOP) * 4 + ttinsn(replay) + EXIT})
    assert order.count("t1*") == 4       # the recorded NOPs retire once, from the expansion
    first, last = order.index("t1*"), len(order) - 1 - order[::-1].index("t1*")
    assert order[first:last + 1].count("t0") == 3, order   # one T0 NOP between each two of them


@pytest.mark.llk_build
@pytest.mark.slow
def test_wormhole_transpose_dest_of_four_tiles_runs_to_its_golden():
    """tt-llk's transpose_dest_test, 64x64 (four tiles in one Dest half): the unpacker's SrcB
    hand-over must land between the matrix unit's MOVA2Ds and its SETRWC."""
    require_llk()
    done = tessera("tensix", "check", "transpose_dest_test", "--chip", "wormhole_b0", "--dims", "64x64",
                   "--inputs", "both", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.rsplit(": ", 1)[1] for line in done.stdout.splitlines()] == ["pass", "pass"], done.stdout
