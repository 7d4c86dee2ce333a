"""Any program either runs, traps, faults, hits its budget, deadlocks or halts: the engine
never fails with an exception outside the Tessera hierarchy."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tessera.errors import TesseraError

from .conftest import TOY, new_machine, prog

HANDLER_AT = 0x1000
HANDLER = prog(("csrr", dict(rd=1, csr=2)), ("halt", dict(rd=1)), base=HANDLER_AT)

# Mostly words with a defined opcode (so operands, not just the illegal trap, are
# exercised), some completely random; small register values make addresses hit
# memory, devices and sync objects.
opcode_words = st.builds(lambda opc, rest: (opc << 26) | rest,
                         st.integers(0, len(TOY.encodings) + 2), st.integers(0, (1 << 26) - 1))
any_words = st.integers(0, 0xFFFF_FFFF)
programs = st.lists(st.one_of(opcode_words, opcode_words, any_words), min_size=1, max_size=24)
registers = st.lists(st.sampled_from([0, 1, 4, 0x100, 0x2_0000, 0x3_0000, 0xFFFF_FFFC, 0x7FFF_FFFF]),
                     min_size=15, max_size=15)
OUTCOMES = {"halted", "budget", "trap", "breakpoint"}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(code=programs, regs=registers, cores=st.sampled_from([1, 2]), tvec=st.booleans(),
       stop_on_trap=st.booleans())
def test_random_words_never_escape_the_error_hierarchy(code, regs, cores, tvec, stop_on_trap):
    data = b"".join(w.to_bytes(4, "little") for w in code)
    m = new_machine(data, cores=cores)
    m.space.write_bytes(HANDLER_AT, HANDLER)
    for cpu in m.cpus:
        cpu.r[1:] = regs
        cpu.c[0] = HANDLER_AT if tvec else 0
    try:
        r = m.run(max_steps=200, raise_on_budget=False, stop_on_trap=stop_on_trap)
    except TesseraError as err:
        text = str(err)
        assert text and "\n" not in text
        assert isinstance(err.exit_code, int)
    else:
        assert r.reason in OUTCOMES
        assert r.steps <= 200
    # whatever happened, the machine is still consistent enough to hash and snapshot
    assert len(m.state_hash()) == 64
    assert m.snapshot()
