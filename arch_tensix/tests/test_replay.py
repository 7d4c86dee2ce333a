"""The replay expander: the buffer by hand from REPLAY.md, and REPLAY in kernels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tensix_ctl_support import SFPIADD
from tensix_expander_support import (
    MOP,
    MOP_CFG,
    REPLAY,
    SEMPOST,
    SEMWAIT,
    addg,
    inc,
    lane0,
    mulg,
    run,
    template0_cfg,
    template1_cfg,
)
from tensix_table_support import machine, tessera

from tessera.errors import UnhandledTrap
from tessera_tensix.mop import expander_of
from tessera_tensix.replay import SIZE, ReplayBuffer, buffer_of, playback

CHIPS = ["bh", "wh"]


# ------------------------------------------------------------------ the buffer
def test_playback_wraps_and_count_zero_means_64():
    buf = [100 + i for i in range(SIZE)]
    assert playback(buf, 30, 4) == [130, 131, 100, 101]
    assert playback(buf, 5, 0) == [100 + (5 + i) % 32 for i in range(64)]
    assert playback(buf, 31, 63)[-1] == 100 + (31 + 62) % 32


def test_take_records_then_ends_the_load():
    r = ReplayBuffer()
    assert not r.loading and r.take(7)               # not loading: passes through
    r.load(30, 3, execute=False)
    assert [r.take(w) for w in (1, 2, 3)] == [False, False, False]
    assert not r.loading and (r.words[30], r.words[31], r.words[0]) == (1, 2, 3)
    assert r.take(4) and r.words[1] == 0
    r.load(0, 0, execute=True)                       # 64 words: the second 32 overwrite the first
    assert all(r.take(w) for w in range(1000, 1064))
    assert not r.loading and r.words == list(range(1032, 1064))


def test_the_kernel_end_is_not_recorded():
    r = ReplayBuffer()
    r.load(4, 2, execute=False)
    assert r.take(0) and r.loading and r.words[4] == 0
    assert r.state() == {"buffer": ["0x00000000"] * 32, "loading": True, "execute": False,
                         "next_entry": 4, "left": 2}


# ------------------------------------------------------------------ in kernels
@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("execute", [0, 1])
def test_load_then_replay_repeats_sfpiadd(chip, execute):
    m = run([REPLAY(0, 3, execute, 1), inc(1, 1), inc(1, 2), inc(1, 4),
             REPLAY(0, 3, 0, 0), REPLAY(0, 3, 0, 0)], chip)
    assert lane0(m, 1) == 7 * (2 + execute)
    assert buffer_of(m.agent("t0")).words[:4] == [inc(1, 1), inc(1, 2), inc(1, 4), 0]


@pytest.mark.parametrize("chip", CHIPS)
def test_replay_slices_wrap_in_order(chip):
    # entry 31: GPR1 += 1, entry 0: GPR1 *= 3 (order-sensitive)
    m = run([REPLAY(31, 2, 0, 1), addg(1, 1), mulg(1, 3),
             REPLAY(31, 2, 0, 0), REPLAY(0, 1, 0, 0), REPLAY(31, 1, 0, 0)], chip)
    assert m.agent("t0").gpr[1] == ((0 + 1) * 3) * 3 + 1


@pytest.mark.parametrize("chip", CHIPS)
def test_count_zero_loads_and_replays_64(chip):
    m = run([REPLAY(0, 0, 0, 1)] + [inc(1, 1)] * 64 + [REPLAY(7, 0, 0, 0)], chip)
    assert lane0(m, 1) == 64


@pytest.mark.parametrize("chip", CHIPS)
def test_mop_output_is_recorded_and_mop_cfg_is_not(chip):
    cfg = template1_cfg(1, 6, loop=inc(1, 1))
    m = run([REPLAY(0, 4, 0, 1), MOP_CFG(5), MOP(1, 0, 0), REPLAY(0, 4, 0, 0)], chip, mop_cfg=cfg)
    t0 = m.agent("t0")
    assert lane0(m, 1) == 2 + 4                      # 4 of the 6 recorded, 2 executed; then 4
    assert buffer_of(t0).words[:5] == [inc(1, 1)] * 4 + [0] and not buffer_of(t0).loading
    assert expander_of(t0).mask_hi == 5


@pytest.mark.parametrize("chip", CHIPS)
def test_replay_in_a_mop_expands_before_the_mops_next_word(chip):
    cfg = template1_cfg(2, 1, start=REPLAY(0, 1, 0, 0), loop=mulg(1, 2), end0=addg(1, 3))
    m = run([REPLAY(0, 1, 0, 1), addg(1, 1), MOP(1, 0, 0)], chip, mop_cfg=cfg)
    # per outer iteration: +1 (the replay), *2, +3
    assert m.agent("t0").gpr[1] == ((0 + 1) * 2 + 3 + 1) * 2 + 3


@pytest.mark.parametrize("chip", CHIPS)
def test_a_load_started_by_a_mop_records_the_rest_of_its_output(chip):
    cfg = template0_cfg(a0=REPLAY(0, 2, 1, 1), a1=inc(1, 1), a2=inc(1, 2), a3=inc(1, 4), has_a123=True)
    m = run([MOP(0, 0, 0), REPLAY(0, 2, 0, 0)], chip, mop_cfg=cfg)
    assert lane0(m, 1) == 7 + 3
    assert buffer_of(m.agent("t0")).words[:3] == [inc(1, 1), inc(1, 2), 0]


def _two_threads(chip: str, t0: list[int]) -> object:
    """``t0`` on T0; T1 waits for sem 1, sets L1 = 77 and posts sem 0."""
    t1 = [SEMWAIT(SFPU_BLOCK, 0b10, 1), inc(1, 77), SEMPOST(0b01), 0]
    m = machine(t0 + [0] * (16 - len(t0)) + t1, chip, threads=2)
    m.agent("t1").pc = 0x40
    assert m.run(max_steps=10_000).exit_code == 0
    return m


SFPU_BLOCK = 1 << 8
#: posts sem 1, counts in GPR1, waits for sem 0 (blocking the vector unit), L2 = L1
WAITING = [SEMPOST(0b10), addg(1, 1), SEMWAIT(SFPU_BLOCK, 0b01, 1), SFPIADD(0, 1, 2, 5)]


@pytest.mark.parametrize("chip", CHIPS)
def test_a_wait_inside_a_replay_resumes_it(chip):
    m = _two_threads(chip, [REPLAY(0, 4, 0, 1), *WAITING, REPLAY(0, 4, 0, 0), 0])
    assert m.agent("t0").gpr[1] == 1                 # replayed once, resumed after the wait
    assert lane0(m, 2) == 77


@pytest.mark.parametrize("chip", CHIPS)
def test_a_wait_while_loading_with_execute_records_once(chip):
    m = _two_threads(chip, [REPLAY(0, 5, 1, 1), *WAITING, inc(3, 1), 0])
    t0 = m.agent("t0")
    assert t0.gpr[1] == 1 and lane0(m, 2) == 77 and lane0(m, 3) == 1
    assert buffer_of(t0).words[:6] == [*WAITING, inc(3, 1), 0] and not buffer_of(t0).loading


# ------------------------------------------------------------------ rules
def test_replaying_an_entry_never_loaded_stops():
    with pytest.raises(UnhandledTrap, match=r"replay buffer entry 5 holds 0x00000000.*was it loaded"):
        run([REPLAY(0, 1, 0, 1), inc(1, 1), REPLAY(5, 2, 0, 0)])
    m = run([REPLAY(0, 1, 0, 1), inc(1, 1), REPLAY(31, 3, 0, 0)], lenient=True)
    assert lane0(m, 1) == 1                           # entries 31 and 1 dropped


def test_a_replay_while_loading_stops_or_is_recorded():
    words = [REPLAY(0, 2, 0, 1), REPLAY(4, 1, 0, 0), inc(1, 1), REPLAY(1, 1, 0, 0)]
    with pytest.raises(UnhandledTrap, match=r"REPLAY while the replay buffer is loading \(2 more"):
        run(words, "wh")
    m = run(words, "wh", lenient=True)
    assert buffer_of(m.agent("t0")).words[:2] == [REPLAY(4, 1, 0, 0), inc(1, 1)]
    assert lane0(m, 1) == 1


def test_replaying_a_replay_word_stops():
    for lenient in (False, True):
        m = machine([REPLAY(0, 2, 0, 0), 0], "bh", lenient=lenient)
        buffer_of(m.agent("t0")).words[:2] = [REPLAY(4, 1, 0, 0), inc(1, 1)]   # as a lenient load leaves it
        if lenient:
            assert m.run(max_steps=100).exit_code == 0 and lane0(m, 1) == 1
        else:
            with pytest.raises(UnhandledTrap, match=f"entry 0 holds {REPLAY(4, 1, 0, 0):#010x}, a REPLAY, "
                                                    "which would pass the replay expander"):
                m.run(max_steps=100)


def test_kernel_ending_mid_load_ends_the_thread():
    m = run([REPLAY(3, 5, 0, 1), inc(1, 1)])
    state = m.agent("t0").frontend.state()["replay"]
    assert state["loading"] and state["left"] == 4 and state["buffer"][3] == f"{inc(1, 1):#010x}"
    assert lane0(m, 1) == 0


def test_replay_through_tessera_run(tmp_path: Path):
    source = tmp_path / "replay.s"
    source.write_text("ttreplay 0,2,0,1\nsfpiadd L1,L1,1,5\nsfpiadd L1,L1,2,5\n"
                      "ttreplay 0,2,0,0\nttreplay 0,2,0,0\nend\n")
    out = tessera("run", "--arch", "tensix-wh", str(source), "--dump-state", "json")
    assert out.returncode == 0, out.stderr
    t0 = json.loads(out.stdout)["agents"]["t0"]
    assert t0["core"]["sfpu"]["lreg"][1][0] == "0x00000006"
    assert t0["frontend"]["replay"]["buffer"][:3] == ["0x79001115", "0x79002115", "0x00000000"]
