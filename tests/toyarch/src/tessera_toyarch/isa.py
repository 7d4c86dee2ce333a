"""The toy ISA: one encoding table, from which everything else is generated.

Word layout (32-bit, little-endian): opcode in bits 31:26; ``rd`` 25:22, ``rs1``
21:18, ``rs2`` 17:14, a signed 14-bit ``imm`` in 13:0; ``li`` has a signed 22-bit
immediate; branches a signed word offset in 13:0; ``jmp`` one in 25:0.
Register ``r0`` reads zero.  Control registers ``tvec``, ``epc``, ``cause``: when
``tvec`` is non-zero a trap saves the PC in ``epc``, the cause in ``cause`` and
jumps to ``tvec``; ``eret`` returns.  Undecodable words take trap cause 2.
"""

from __future__ import annotations

from tessera.control import Trap
from tessera.errors import MemoryFault
from tessera.isa import Architecture, Encoding, Example, Field, MemoryRegionSpec, RegisterFile
from tessera_toyarch.board import SETTINGS, build
from tessera_toyarch.semantics import REGISTRY

OPC = 0xFC00_0000
ILLEGAL_CAUSE = 2
LOAD_FAULT_CAUSE = 5
STORE_FAULT_CAUSE = 7
FETCH_FAULT_CAUSE = 1


def op(n: int) -> int:
    return n << 26


def illegal(word: int, address: int) -> Trap:
    return Trap(ILLEGAL_CAUSE, word, name="illegal instruction", word=word)


def memory_trap(fault: MemoryFault) -> Trap:
    cause = {"fetch": FETCH_FAULT_CAUSE, "read": LOAD_FAULT_CAUSE}.get(fault.access, STORE_FAULT_CAUSE)
    return Trap(cause, fault.address or 0, name=f"{fault.access} fault")


def take_trap(cpu, trap: Trap) -> bool:
    tvec = cpu.c[0]
    if not tvec:
        return False
    cpu.c[1] = cpu.pc
    cpu.c[2] = trap.cause
    cpu.pc = tvec
    return True


def dump(cpu) -> dict:
    return {"core_id": cpu.core_id}


#: rows name their semantic function; the engine binds it when it decodes (tessera.isa.registry)
REF = REGISTRY.ref
R = "{rd}, {rs1}, {rs2}"
ENCODINGS = (
    Encoding("nop", op(0), OPC, "", REF("nop")),
    Encoding("add", op(1), OPC | 0x3FFF, R, REF("add"), "alu"),
    Encoding("sub", op(2), OPC | 0x3FFF, R, REF("sub"), "alu"),
    Encoding("mul", op(3), OPC | 0x3FFF, R, REF("mul"), "mul"),
    Encoding("addi", op(4), OPC, "{rd}, {rs1}, {imm}", REF("addi"), "alu"),
    Encoding("li", op(5), OPC, "{rd}, {limm}", REF("li"), "alu"),
    Encoding("ld", op(6), OPC, "{rd}, {imm}({rs1})", REF("ld"), "mem"),
    Encoding("st", op(7), OPC, "{rd}, {imm}({rs1})", REF("st"), "mem"),
    Encoding("beq", op(8), OPC, "{rd}, {rs1}, {boff}", REF("beq"), "branch", {"branch"}),
    Encoding("bne", op(9), OPC, "{rd}, {rs1}, {boff}", REF("bne"), "branch", {"branch"}),
    Encoding("jmp", op(10), OPC, "{joff}", REF("jmp"), "branch", {"jump"}),
    Encoding("cid", op(11), OPC | 0x3F_FFFF, "{rd}", REF("cid"), "alu"),
    Encoding("sem.wait", op(12), OPC | 0x3FF_FF00, "{sem}", REF("sem_wait"), "sync", {"sync", "wait"}),
    Encoding("sem.post", op(13), OPC | 0x3FF_FF00, "{sem}", REF("sem_post"), "sync", {"sync"}),
    Encoding("bar", op(14), 0xFFFF_FFFF, "", REF("bar"), "sync", {"sync", "wait"}),
    Encoding("dma.start", op(15), OPC | 0x3FFF, R, REF("dma_start"), "sync", {"sync"}),
    Encoding("dma.wait", op(16), OPC | 0x3F_FFFF, "{rd}", REF("dma_wait"), "sync", {"sync", "wait"}),
    Encoding("halt", op(17), OPC | 0x3F_FFFF, "{rd}", REF("halt"), "alu", {"halt"}),
    Encoding("csrr", op(18), OPC | 0x3_FFFC, "{rd}, {csr}", REF("csrr"), "alu"),
    Encoding("csrw", op(19), OPC | 0x3C0_3FFC, "{csr}, {rs1}", REF("csrw"), "alu"),
    Encoding("eret", op(20), 0xFFFF_FFFF, "", REF("eret"), "branch", {"jump", "trap"}),
    Encoding("ecall", op(21), 0xFFFF_FFFF, "", REF("ecall"), "alu", {"trap"}),
)

FIELDS = (
    Field("rd", "25:22", kind="reg", regfile="r"),
    Field("rs1", "21:18", kind="reg", regfile="r"),
    Field("rs2", "17:14", kind="reg", regfile="r"),
    Field("imm", "13:0", kind="imm", signed=True),
    Field("limm", "21:0", kind="imm", signed=True),
    Field("boff", "13:0", kind="pcrel", scale=2),
    Field("joff", "25:0", kind="pcrel", scale=2),
    Field("sem", "7:0", kind="uimm"),
    Field("csr", "1:0", kind="enum", names=("tvec", "epc", "cause")),
)

REGISTERS = (
    RegisterFile("r", 16, 32, aliases={"zero": 0, "sp": 15}, zero=0),
    RegisterFile("c", 3, 32, names=("tvec", "epc", "cause")),
)

RAM_BASE, RAM_SIZE = 0x0000_0000, 0x1_0000
ROM_BASE, ROM_SIZE = 0x0002_0000, 0x1000
CONSOLE_BASE = 0x0003_0000

EXAMPLE = """\
# Two cores: core 0 sums 1..100 into `result` and posts sem0;
# core 1 waits for sem0, copies the result with the DMA engine,
# prints "ok" on the console and halts with the low byte of the sum.
_start:
        cid   r1
        bne   r1, r0, consumer
producer:
        li    r2, 100          # counter
        li    r3, 0            # sum
loop:   add   r3, r3, r2
        addi  r2, r2, -1
        bne   r2, r0, loop
        li    r4, result
        st    r3, 0(r4)
        sem.post 0
        halt  r0
consumer:
        sem.wait 0
        li    r5, copy
        li    r6, result
        li    r7, 4
        dma.start r5, r6, r7     # copy 4 bytes result -> copy
        li    r8, 1
        dma.wait r8              # wait for 1 completed DMA
        ld    r9, 0(r5)
        li    r10, 0x30000       # console
        li    r11, 'o'
        st    r11, 0(r10)
        li    r11, 'k'
        st    r11, 0(r10)
        li    r11, 10
        st    r11, 0(r10)
        halt  r9
        .align 4
result: .word 0
copy:   .word 0
"""


def check_example(machine, result) -> str | None:
    copy = machine.symbols.get("copy")
    got = machine.space.read(copy, 4)
    if got != 5050:
        return f"copy holds {got}, expected 5050"
    if machine.agent("core1").exit_code != 5050 & 0xFFFF_FFFF:
        return f"core1 exit code {machine.agent('core1').exit_code}, expected 5050"
    return None


TOY = Architecture(
    name="toy",
    description="Test-only toy ISA: 2 cores, semaphores, barrier, DMA engine, console",
    word_bits=32,
    endian="little",
    address_bits=32,
    register_files=REGISTERS,
    fields=FIELDS,
    encodings=ENCODINGS,
    memory_map=(
        MemoryRegionSpec("ram", RAM_BASE, RAM_SIZE, "ram", "rwx"),
        MemoryRegionSpec("rom", ROM_BASE, ROM_SIZE, "rom", "rx"),
    ),
    timing={"default": 1, "alu": 1, "mul": 3, "mem": 2, "branch": 1, "sync": 1},
    capabilities={"multi-agent", "sync", "traps", "async-engine", "mmio"},
    elf_machine=0x7A01,
    elf_class=32,
    reset_pc=0,
    quantum=64,
    build=build,
    illegal=illegal,
    take_trap=take_trap,
    memory_trap=memory_trap,
    dump=dump,
    cli_flags={"no-echo": ("echo", False, "do not copy console output to stdout")},
    settings=SETTINGS,
    control_flow="flags",  # each row above declares its branch/jump/trap/halt/wait flags
    examples=(Example("producer-consumer", "two cores, a semaphore, a DMA engine and the console",
                      EXAMPLE, load_address=0, max_steps=100_000, check=check_example),),
)
