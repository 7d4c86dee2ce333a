"""Hardware threads: CR0 enables, deterministic fine-grained interleaving, HARTID dispatch."""

from __future__ import annotations

from sys_support import CODE, addi, bne, bra, csr, ld, ldi, load, machine, st

COUNTER = 0x2000


def counting_program(n, enable=0x3):
    """Every thread: HARTID != 0 → worker; t0 first writes CR0 = ``enable``.

    worker: n times { r3 = mem[COUNTER]; r3 += 1; mem[COUNTER] = r3 } — a racy
    read-modify-write, so the final count shows exactly how the threads interleaved.
    """
    return [
        csr(0, 1, 0, 0x3001),          # +0  r1 = HARTID (thread number)
        bne(1, 0, 18),                 # +6  → worker at +24
        ldi(2, enable),                # +12
        csr(1, 0, 2, 0x3000),          # +18 CR0 = enable
        ldi(5, n),                     # +24 worker
        ld(3, 0, COUNTER),             # +30 loop
        addi(3, 3, 1),                 # +36
        st(3, 0, COUNTER),             # +42
        addi(5, 5, -1),                # +48
        bne(5, 0, -24),                # +54 → loop
        bra(0),                        # +60 done
    ]


def run_counting(n, enable=0x3, **config):
    m = machine(**config)
    load(m, CODE, counting_program(n, enable))
    m.set_entry(CODE)
    result = m.run(max_steps=100_000)
    return m, result, m.space.read(COUNTER, 4)


def test_only_thread0_runs_at_reset():
    m, result, count = run_counting(10, enable=0x1)
    assert result.reason == "halted" and count == 10
    assert [a.instret for a in m.agents[1:]] == [0, 0, 0]
    assert [a.status for a in m.agents] == ["halted", "waiting", "waiting", "waiting"]


def test_cr0_write_starts_thread1_and_the_interleaving_is_deterministic():
    runs = [run_counting(50) for _ in range(3)]
    counts = {count for _, _, count in runs}
    hashes = {m.state_hash() for m, _, _ in runs}
    assert len(counts) == 1 and len(hashes) == 1
    count = counts.pop()
    # both threads ran all their iterations, and the racy updates interleaved
    assert runs[0][0].agents[1].r[5] == 0 and runs[0][0].agents[1].status == "halted"
    assert 50 <= count < 100


def test_interleaving_is_fine_grained_round_robin():
    # t1 starts right after t0's CR0 write; from then on they alternate instruction by
    # instruction, so each load sees the other thread's store of the previous round
    m, result, count = run_counting(50)
    t0, t1 = m.agents[0], m.agents[1]
    assert t0.instret == 4 + 1 + 5 * 50 + 1
    assert t1.instret == 2 + 1 + 5 * 50 + 1
    assert count == run_counting(50)[2]


def test_four_threads_all_run():
    m, result, count = run_counting(20, enable=0xF)
    assert result.reason == "halted"
    assert all(a.status == "halted" and a.r[5] == 0 for a in m.agents)
    assert 20 <= count < 80


def test_same_result_however_the_run_is_split():
    def final(chunk):
        m = machine()
        load(m, CODE, counting_program(30))
        m.set_entry(CODE)
        while m.run(max_steps=chunk, raise_on_budget=False).reason != "halted":
            pass
        return m.space.read(COUNTER, 4), m.total_steps, m.state_hash()

    assert final(100_000) == final(1) == final(13)


def test_thread_disabling_itself_parks_and_the_run_ends():
    m = machine(reset_cr0=0x3)
    t0, t1 = m.agents[0], m.agents[1]
    load(m, CODE, [csr(0, 1, 0, 0x3001), bne(1, 0, 18), ldi(2, 0x2), csr(1, 0, 2, 0x3000),
                   addi(9, 9, 1), bra(0)])
    m.set_entry(CODE)
    result = m.run(max_steps=1000)
    assert result.reason == "halted"
    # t0 stopped right after its CR0 write; disabled, it no longer keeps the run alive
    assert t0.daemon and t0.pc == CODE + 24 and t0.r[9] == 0 and t0.status != "halted"
    assert t1.status == "halted" and t1.r[9] == 1 and not t1.daemon


def test_snapshot_restore_continues_identically():
    m = machine()
    load(m, CODE, counting_program(40))
    m.set_entry(CODE)
    m.run(max_steps=57, raise_on_budget=False)
    from tessera.machine import Machine
    clone = Machine.restore(m.snapshot(), architectures=[m.arch])  # a test-only description
    m.run(max_steps=100_000)
    clone.run(max_steps=100_000)
    assert clone.space.read(COUNTER, 4) == m.space.read(COUNTER, 4)
    assert clone.state_hash() == m.state_hash()
