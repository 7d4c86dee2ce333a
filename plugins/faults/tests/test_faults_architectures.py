"""Faults on rfPhoenix (threads interleaved one instruction at a time, vector lanes) and
Tensix (LRegs and Dest, structures of no agent): the same run on every engine, and the
fault lands where the spec says."""

from __future__ import annotations

import numpy as np
import pytest
from faults_support import host, inject, outcome

from tessera.isa.asm import assemble
from tessera.machine import Machine

#: t0 starts t1 (CR0); each sums a countdown and stores the sum: t0 40..1, t1 30..1
TWO_THREADS = """
        csrrd   r1, r0, hartid
        andi    r1, r1, 15
        bne     r1, r0, second
        ldi     r2, 3
        csrrw   r0, r2, cr0
        ldi     r5, 40
        ldi     r6, 0
loop0:  add     r6, r6, r5
        addi    r5, r5, -1
        bne     r5, r0, loop0
        ldi     r3, 0xFFFC0000
        st.t    r6, 0[r3]
done0:  bra     done0
second: ldi     r5, 30
        ldi     r6, 0
loop1:  add     r6, r6, r5
        addi    r5, r5, -1
        bne     r5, r0, loop1
        ldi     r3, 0xFFFC0004
        st.t    r6, 0[r3]
done1:  bra     done1
"""


def phoenix(engine):
    h = host()
    arch = h.architecture("phoenix")
    machine = Machine(arch, host=h, config={"dram": 0x100000, "threads": 2}, engine=engine)
    program = assemble(arch, TWO_THREADS, base=arch.reset_pc)
    for address, data in program.segments:
        machine.space.write_bytes(address, data, force=True)
    machine.symbols.update(program.symbols)
    return machine


def sums(machine):
    return machine.space.read(0xFFFC0000, 4), machine.space.read(0xFFFC0004, 4)


@pytest.mark.parametrize(("spec", "changed"), [
    ("target=t1.r6,model=stuck1,bit=8,at=pc:loop1#3@t1,window=20", (820, None)),   # flushed mid-barrel
    ("target=t0.v[2,1],bit=4,at=retired:50@t1", (820, 465)),                     # a lane: no effect here
    ("model=zero,at=class:alu#9@t1", (820, None)),
    ("model=skip,at=retired:20@t1", (820, None)),
    ("target=t0.insn,bit=0,at=pc:loop0#5@t0", (None, ...)),         # an illegal word: t0 traps
])
def test_rfphoenix_threads(spec, changed):
    clean = phoenix("fast")
    outcome(clean)
    assert sums(clean) == (820, 465)
    runs = set()
    for engine in ("step", "fast", "check"):
        machine = phoenix(engine)
        record = inject(machine, spec)
        got = outcome(machine)
        runs.add((got, machine.state_hash(), sums(machine), repr(sorted(record.items()))))
    assert len(runs) == 1
    ((_got, _hash, faulty, _record),) = runs
    for want, have, reference in zip(changed, faulty, sums(clean)):   # None: differs; ...: either
        assert want is ... or (have == want if want is not None else have != reference)


def test_a_class_trigger_on_a_vector_load_hits_one_lane_of_its_destination():
    source = """
        ldi     r1, 0xFFFC0000
        ldi     r2, 0x11111111
        st.t    r2, 8[r1]
        ld.t    v1, 0[r1]
done:   bra     done
"""
    h = host()
    arch = h.architecture("phoenix")
    machine = Machine(arch, host=h, config={"dram": 0x100000, "threads": 1, "lanes": 4})
    for address, data in assemble(arch, source, base=arch.reset_pc).segments:
        machine.space.write_bytes(address, data, force=True)
    record = inject(machine, "model=flip,bit=0,seed=3,at=class:mem#2")   # the store, then the vector load
    outcome(machine)
    vr = machine.agent("t0").vr
    want = np.array([0, 0, 0x11111111, 0], dtype=np.uint32)
    flipped = np.nonzero(vr[1] != want)[0].tolist()
    assert len(flipped) == 1 and record["target"] == f"t0.v[1,{flipped[0]}]"
    assert int(vr[1, flipped[0]]) ^ int(want[flipped[0]]) == 1 and int(vr.sum()) != 0


HALF = """
        sfploadi L0,16128,0        # L0 = 0.5 in every lane
        sfpstore 0,L0,3,7          # Dest[0:4, even columns] = 0.5 (FP32)
        end
"""


def tensix(engine):
    h = host()
    arch = h.architecture("tensix")
    machine = Machine(arch, host=h, engine=engine)
    for address, data in assemble(arch, HALF).segments:
        machine.space.write_bytes(address, data, force=True)
    return machine


@pytest.mark.parametrize("spec", ["target=sfpu.lreg[0,5],bit=30,at=retired:1",
                                  "model=flip,bit=29,seed=1,at=class:sfpu#1"])
def test_tensix_an_lreg_lane_fault_reaches_dest(spec):
    clean = tensix("step")
    outcome(clean)
    results = []
    for engine in ("step", "fast"):
        machine = tensix(engine)
        record = inject(machine, spec)
        outcome(machine)
        results.append((machine.ext["tensix"].dest.bits.tobytes(), record["target"]))
    assert results[0] == results[1]
    dest = np.frombuffer(results[0][0], dtype=np.uint16).reshape(1024, 16)
    changed = np.argwhere(dest != clean.ext["tensix"].dest.bits)
    assert 1 <= len(changed) <= 2                                 # one lane: one FP32 datum in Dest
    assert results[0][1].startswith("sfpu.lreg[0,")
