"""t_sync across threads, t_wait thresholds, deadlock reports, and timed mode's engines (tile.md 5.8, 9.3)."""

from __future__ import annotations

import pytest
from tile_support import EXIT, machine, run, tile_bytes

import tessera
from tessera.errors import Deadlock, UnhandledTrap
from tessera.plugins import PluginHost

TWO = {"tile.threads_per_pe": 2}


class Waits:
    """Records which agent parked on which sync object."""

    TESSERA_API_VERSION = 1

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    @tessera.hookimpl
    def tessera_sync_event(self, event):
        if event.kind == "wait":
            self.seen.append((event.agent, event.obj))


def _host(waits: Waits) -> PluginHost:
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(waits, "waits")
    return host


def test_t_sync_orders_threads():
    # thread 1 writes a flag before the barrier; thread 0 reads it after: it must see it
    waits = Waits()
    m = machine(f"""_start:
        tcsrr s0, tid
        la a1, flag
        bnez s0, writer
        tsync 0, 0b11
        ld a0, 0(a1)
        {EXIT}
writer: li t0, 1000
spin:   addi t0, t0, -1                 # make thread 1 late
        bnez t0, spin
        li t1, 42
        sd t1, 0(a1)
        tsync 0, 0b11
        li a0, 0
        {EXIT}
        .data
flag:   .quad 0
""", config=TWO, host=_host(waits))
    result = m.run(max_steps=100_000)
    assert result.exit_code == 42
    assert ("hart0", "pe0.tsync") in waits.seen


def test_nonblocking_arrive_and_mask_checks():
    m, result = run(f"""_start:
        tcsrr s0, tid
        bnez s0, t1
        tsync 3, 0b11, nonblk            # arrive only: thread 0 goes on at once
        li a0, 7
        {EXIT}
t1:     tsync 3, 0b11                    # thread 1 completes the barrier
        li a0, 0
        {EXIT}
""", config=TWO)
    assert result.exit_code == 7 and result.reason == "halted"
    with pytest.raises(UnhandledTrap, match=r"t_sync mask 0x2 leaves out the arriving member \(bit 0\)"):
        run(f"_start:\n        tsync 0, 0b10\n{EXIT}", config=TWO)
    with pytest.raises(UnhandledTrap, match="must name 1..2 members"):
        run(f"_start:\n        tsync 0, 0b111\n{EXIT}", config=TWO)


def test_nonblk_polarity_setting():
    m, result = run(f"_start:\n        tsync 3, 0b11\n        li a0, 5\n{EXIT}",
                    config={**TWO, "tile.t_sync_nonblk_polarity": "arrive-when-0"})
    assert result.reason == "halted" and result.exit_code == 5


def test_deadlock_names_the_barrier_and_who_is_missing():
    with pytest.raises(Deadlock) as info:
        run(f"""_start:
        tcsrr s0, tid
        bnez s0, quit                   # thread 1 exits without arriving
        tsync 1, 0b11
quit:   {EXIT}""", config=TWO)
    assert info.value.waits["hart0"] == ("t_sync barrier 1 of pe0.tsync: 1 of 2 arrived (mask 0x3; "
                                         "not yet: hart1)")


def test_cluster_scope_counts_one_arrival_per_pe():
    cfg = {"tile.threads_per_pe": 2, "tile.pes_per_cluster": 2}
    m, result = run(f"""_start:
        tcsrr s0, tid
        bnez s0, quit                   # one thread per PE takes part
        tsync 2, 0b11, scope=cluster
quit:   li a0, 0
        {EXIT}""", config=cfg)
    assert result.reason == "halted"
    assert m.sync["cluster0.tsync"].state()["barriers"]["2"]["generation"] == 1


def test_register_forms_of_t_sync():
    m, result = run(f"""_start:
        li t0, 4
        li t1, 3
        tsync t0, t1
        tsync t0                        # mask: every thread of the PE
        li a0, 0
        {EXIT}""", config=TWO)
    assert result.reason == "halted"
    assert m.sync["pe0.tsync"].state()["barriers"]["4"]["generation"] == 2


TIMED_LOADS = f"""_start:
        la a0, data
        tld.g.us t1, (a0)
        tld.g.us t2, (a0), 64
        tld.g.us t3, (a0), 128
        tcsrr s1, tgld_cnt              # 3 in timed mode: nothing has completed
        tcsrr s2, tstatus
        twait.mem ld=1                  # waits until at most one load is left
        tcsrr s3, tgld_cnt
        twait all
        tcsrr s4, tgld_cnt
        {EXIT}
        .data
        .align 6
data:   .space 2048
"""


def test_t_wait_thresholds_in_timed_mode():
    waits = Waits()
    m = machine(TIMED_LOADS, config={"tile.mode": "timed"}, host=_host(waits))
    m.space.write_bytes(m.symbols["data"], bytes(range(256)) * 8)
    assert m.run(max_steps=10_000).reason == "halted"
    h = m.agent("hart0")
    assert h.x[9] == 3 and h.x[18] == 0b111 and h.x[19] <= 1 and h.x[20] == 0
    assert ("hart0", "hart0.tile") in waits.seen
    assert tile_bytes(m, 3) == (bytes(range(256)) * 8)[128:1152]
    lsu = m.agent("hart0.lsu")
    assert lsu.instret == 3 and lsu.cycles >= 3 * 300          # priced by the cost model


def test_timed_and_eager_modes_compute_the_same():
    outs = []
    for mode in ("eager", "timed", "checker"):
        m = machine(TIMED_LOADS, config={"tile.mode": mode})
        m.space.write_bytes(m.symbols["data"], bytes(range(256)) * 8)
        m.run(max_steps=10_000)
        outs.append(b"".join(tile_bytes(m, i) for i in (1, 2, 3)))
    assert outs[0] == outs[1] == outs[2]


def test_timed_mode_queue_full_parks_the_hart():
    waits = Waits()
    body = "\n".join(f"        tld.g.us t{i}, (a0)" for i in range(4))
    m = machine(f"_start:\n        la a0, data\n{body}\n        twait all\n{EXIT}\n        .data\n"
                "        .align 6\ndata: .space 1024", config={"tile.mode": "timed", "tile.queue_depth": 2},
                host=_host(waits))
    assert m.run(max_steps=10_000).reason == "halted"
    assert ("hart0", "hart0.lsu.q") in waits.seen
    assert m.agent("hart0.lsu").instret == 4


def test_tmode_cannot_change_with_operations_outstanding():
    with pytest.raises(UnhandledTrap, match="tmode changes while tile operations are outstanding"):
        run(f"""_start:
        la a0, data
        tld.g.us t1, (a0)
        tcsrwi zero, tmode, 0
        {EXIT}
        .data
        .align 6
data:   .space 1024""", config={"tile.mode": "timed"})


def test_t_wait_tma_group_waits_in_timed_mode():
    m, result = run(f"""_start:
        la a0, data
        li t0, 64
        tmv.tx t8, t0, 0, ew=w
        tmv.vt v1, t8, 0
        li a1, 0x100
        tma.linear a1, a0, v1, dst=shared, group=7
        twait.tma 7
        tcsrr s1, tstatus
        {EXIT}
        .data
        .align 6
data:   .space 64, 3""", config={"tile.mode": "timed"})
    assert m.tile.pes[0].shmem.read_bytes(0x100, 64) == bytes([3]) * 64
    assert m.agent("hart0").x[9] & 1                    # tma_done
