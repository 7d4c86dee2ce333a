"""Hardware queue instructions: only queue 15 (the IP trace) exists; machine mode only."""

from __future__ import annotations

import pytest
from sys_support import OPS, ins, pushq_word, queue_op, status_with, thread

from tessera.control import Trap
from tessera_phoenix import causes

PEEKQ, POPQ, STATQ, RESETQ = 8, 9, 11, 12


def run(t, name, word):
    OPS[name](t, ins(word))


def push(t, q, value, rb=6):
    t.wr(rb, value)
    run(t, "pushq", pushq_word(q, rb))


def stat(t, q=15):
    run(t, "statq", queue_op(STATQ, 1, q))
    return t.r[1]


def test_push_peek_pop_in_fifo_order():
    t = thread()
    for v in (0x10, 0x20, 0x30):
        push(t, 15, v)
    run(t, "peekq", queue_op(PEEKQ, 1, 15))
    assert t.r[1] == 0x10
    run(t, "popq", queue_op(POPQ, 2, 15))
    run(t, "popq", queue_op(POPQ, 3, 15))
    assert (t.r[2], t.r[3]) == (0x10, 0x20)
    assert list(t.shared.queues[15]) == [0x30]


def test_statq_empty_valid_and_count():
    t = thread()
    assert stat(t) == 1 << 31
    push(t, 15, 1)
    push(t, 15, 2)
    assert stat(t) == 1 << 30 | 2
    run(t, "resetq", queue_op(RESETQ, 0, 15))
    assert stat(t) == 1 << 31 and not t.shared.queues[15]


def test_statq_count_saturates_at_11_bits():
    t = thread()
    t.shared.queues[15].extend(range(5000))  # keeps the newest 2048
    assert len(t.shared.queues[15]) == 2048
    assert stat(t) == 1 << 30 | 0x7FF


def test_empty_queue_reads_zero():
    t = thread()
    t.r[1] = 99
    run(t, "popq", queue_op(POPQ, 1, 15))
    assert t.r[1] == 0


@pytest.mark.parametrize("q", [0, 3, 14])
def test_other_queues_read_zero_and_drop_pushes(q):
    t = thread()
    push(t, q, 0x55)
    for op, name in ((PEEKQ, "peekq"), (POPQ, "popq"), (STATQ, "statq")):
        t.r[1] = 99
        run(t, name, queue_op(op, 1, q))
        assert t.r[1] == 0
    run(t, "resetq", queue_op(RESETQ, 0, q))
    assert not t.shared.queues[15]
    assert list(t.shared.queues) == [15]


def test_queue_shared_by_all_threads_is_the_trace_queue():
    t = thread()
    push(t, 15, 7)
    other = t.machine.agents[1]
    run(other, "popq", queue_op(POPQ, 4, 15))
    assert other.r[4] == 7


@pytest.mark.parametrize("name,word", [
    ("peekq", queue_op(PEEKQ, 1, 15)), ("popq", queue_op(POPQ, 1, 15)),
    ("statq", queue_op(STATQ, 1, 15)), ("resetq", queue_op(RESETQ, 0, 15)),
    ("pushq", pushq_word(15, 6)),
])
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_queue_ops_are_machine_mode_only(name, word, mode):
    t = thread()
    t.shared.queues[15].append(0x77)
    t.status_stack[0] = status_with(mode)
    t.r[1] = 5
    with pytest.raises(Trap) as e:
        run(t, name, word)
    assert e.value.cause == causes.PRIV
    assert t.r[1] == 5 and list(t.shared.queues[15]) == [0x77]


def test_vector_destination_gets_value_in_enabled_lanes():
    t = thread(lanes=4)
    push(t, 15, 0xAB)
    t.r[9] = 0b0101
    word = queue_op(PEEKQ, 0x45, 15) | 9 << 42
    OPS["peekq"](t, ins(word, rt=0x45))
    assert list(t.vr[5]) == [0xAB, 0, 0xAB, 0]
