"""Support for the differential tests (``test_diff_*.py``): Tessera against qemu-user and Unicorn.

* building the C programs of ``programs/`` (``programs/build.py``) once per session;
* running an ELF under ``qemu-riscv32``/``qemu-riscv64`` user mode and under Tessera
  (in process, or through the ``tessera run`` command);
* reasons to skip when the cross compiler, qemu or Unicorn is not installed (CI
  installs all three, so the tests run there);
* a first-difference description for readable failure messages.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"


def _load_build():
    spec = importlib.util.spec_from_file_location("tessera_riscv_diff_build", PROGRAMS / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


build = _load_build()


# ---- what is installed -------------------------------------------------------------

def qemu_problem(xlen: int) -> str | None:
    name = f"qemu-riscv{xlen}"
    if shutil.which(name) is None:
        return f"{name} is not installed (apt-get install qemu-user)"
    return None


def toolchain_problem() -> str | None:
    return build.toolchain_problem()


def skip_unless_toolchain(xlen: int | None = None) -> None:
    import pytest

    problem = toolchain_problem()
    for x in ((32, 64) if xlen is None else (xlen,)):
        problem = problem or qemu_problem(x)
    if problem:
        if os.environ.get("TESSERA_REQUIRE_DIFF_TOOLS") == "1":  # CI: missing tools are a failure
            pytest.fail(f"differential tests required but {problem}")
        pytest.skip(problem)


def riscv_arch(xlen: int) -> Any:
    """The plugin's ``RV32IM`` or ``RV64IM`` architecture record."""
    import tessera_riscv

    return tessera_riscv.RV64IM if xlen == 64 else tessera_riscv.RV32IM


# ---- running ----------------------------------------------------------------------

@dataclass
class Outcome:
    """What a program did: its output and exit status (and how many instructions, if known)."""

    stdout: bytes
    stderr: bytes
    exit_code: int | None
    steps: int | None = None
    detail: str = ""


def run_qemu(elf: str | os.PathLike, xlen: int, timeout: float = 60) -> Outcome:
    proc = subprocess.run([f"qemu-riscv{xlen}", str(elf)], capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return Outcome(proc.stdout, proc.stderr, proc.returncode)


def make_machine(xlen: int, config: dict | None = None) -> Any:
    from tessera.machine import Machine

    return Machine(riscv_arch(xlen), host=None, config={"echo": False, **(config or {})})


def run_tessera(elf: str | os.PathLike, xlen: int, *, config: dict | None = None,
                max_steps: int = 50_000_000) -> Outcome:
    """Load ``elf`` into a fresh machine (no plugin host) and run it to the end."""
    from tessera.errors import TesseraError
    from tessera.loaders import load_elf

    machine = make_machine(xlen, config)
    load_elf(machine, str(elf))
    try:
        result = machine.run(max_steps=max_steps)
    except TesseraError as exc:      # a stop (illegal instruction, fault, budget): report it
        io = machine.riscv_io
        hart = machine.agent("hart0")
        return Outcome(bytes(io.stdout), bytes(io.stderr), None, None,
                       f"tessera stopped: {type(exc).__name__}: {exc} (pc {hart.pc:#x})")
    io = machine.riscv_io
    return Outcome(bytes(io.stdout), bytes(io.stderr), result.exit_code, result.steps,
                   f"{result.reason} after {result.steps} steps")


def tessera_command() -> list[str]:
    script = Path(sys.executable).parent / "tessera"
    if script.exists():
        return [str(script)]
    found = shutil.which("tessera")
    return [found] if found else [sys.executable, "-m", "tessera.cli.main"]


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env.pop("PYTHONPATH", None)
    env["TESSERA_PLUGINS"] = "riscv"
    return env


def run_tessera_cli(elf: str | os.PathLike, *args: str, timeout: float = 120) -> Outcome:
    """``tessera run ELF`` as a separate process: the architecture comes from the ELF."""
    proc = subprocess.run([*tessera_command(), "run", str(elf), *args], capture_output=True,
                          timeout=timeout, env=cli_env(), stdin=subprocess.DEVNULL)
    return Outcome(proc.stdout, proc.stderr, proc.returncode)


# ---- readable differences ----------------------------------------------------------

def first_difference(expected: bytes, actual: bytes, context: int = 3) -> str:
    """Where two outputs first differ, line by line, for an assertion message."""
    if expected == actual:
        return "identical"
    exp_lines = expected.decode("latin-1").splitlines(keepends=True)
    act_lines = actual.decode("latin-1").splitlines(keepends=True)
    for i, (e, a) in enumerate(zip(exp_lines, act_lines)):
        if e != a:
            lo = max(0, i - context)
            shown = "".join(f"    {line!r}\n" for line in exp_lines[lo:i])
            return (f"first difference at line {i + 1}:\n{shown}"
                    f"  qemu:    {e!r}\n  tessera: {a!r}")
    return (f"one output is a prefix of the other: qemu {len(expected)} bytes, "
            f"tessera {len(actual)} bytes; qemu continues {expected[len(actual):][:200]!r}"
            if len(expected) > len(actual) else
            f"tessera wrote {len(actual) - len(expected)} more bytes: {actual[len(expected):][:200]!r}")


def compare(reference: Outcome, tessera: Outcome, what: str) -> None:
    """Assert equal stdout, stderr and exit status, explaining the first difference."""
    assert tessera.stdout == reference.stdout, (
        f"{what}: stdout differs ({tessera.detail}): "
        + first_difference(reference.stdout, tessera.stdout))
    assert tessera.stderr == reference.stderr, (
        f"{what}: stderr differs: qemu {reference.stderr[:300]!r}, tessera {tessera.stderr[:300]!r}")
    assert tessera.exit_code == reference.exit_code, (
        f"{what}: exit status differs: qemu {reference.exit_code}, tessera {tessera.exit_code} "
        f"({tessera.detail})")


# ---- random instruction streams -----------------------------------------------------
#
# Blocks of random straight-line code (with forward branches and jumps only, so every
# block ends) in GNU assembler syntax with numeric register names, which both GNU as
# and Tessera's assembler read.  x3 is reserved: it points at the centre of a data
# area and no instruction writes it, so loads, stores and atomics stay in
# [x3 - AREA_HALF, x3 + AREA_HALF).

BASE_REG = 3
AREA_HALF = 512

ALU_R = ("add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and")
ALU_R_W = ("addw", "subw", "sllw", "srlw", "sraw")
ALU_I = ("addi", "slti", "sltiu", "xori", "ori", "andi")
SHIFT_I = ("slli", "srli", "srai")
SHIFT_I_W = ("slliw", "srliw", "sraiw")
MUL_DIV = ("mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu")
MUL_DIV_W = ("mulw", "divw", "divuw", "remw", "remuw")
LOADS = {"lb": 1, "lh": 2, "lw": 4, "lbu": 1, "lhu": 2}
LOADS_64 = {"ld": 8, "lwu": 4}
STORES = {"sb": 1, "sh": 2, "sw": 4}
STORES_64 = {"sd": 8}
AMO_OPS = ("amoswap", "amoadd", "amoxor", "amoand", "amoor", "amomin", "amomax", "amominu", "amomaxu")
AMO_ORDER = ("", "", "", ".aq", ".rl", ".aqrl")
BRANCHES = ("beq", "bne", "blt", "bge", "bltu", "bgeu")
ZB_R = ("sh1add", "sh2add", "sh3add", "andn", "orn", "xnor", "max", "maxu", "min", "minu", "rol", "ror")
ZB_R_64 = ("add.uw", "sh1add.uw", "sh2add.uw", "sh3add.uw", "rolw", "rorw")
ZB_UNARY = ("clz", "ctz", "cpop", "sext.b", "sext.h", "zext.h", "orc.b", "rev8")
ZB_UNARY_64 = ("clzw", "ctzw", "cpopw")


def special_values(xlen: int) -> list[int]:
    mask = (1 << xlen) - 1
    vals = [0, 1, 2, 3, 7, 0x7F, 0x80, 0xFF, 0x7FF, 0x800, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000,
            0xFFFF_FFFF, 31, 32, 33, 63, 64]
    vals += [(1 << (xlen - 1)), (1 << (xlen - 1)) - 1, mask, mask - 1, mask ^ 0x7FF]
    if xlen == 64:
        vals += [0x1_0000_0000, 0xFFFF_FFFF_8000_0000, 0x0000_0001_FFFF_FFFF, 0xFEDC_BA98_7654_3210]
    return [v & mask for v in vals]


def random_value(rng, xlen: int) -> int:
    mask = (1 << xlen) - 1
    kind = rng.random()
    if kind < 0.35:
        return rng.choice(special_values(xlen))
    if kind < 0.55:
        return rng.randint(-100, 100) & mask
    if kind < 0.7 and xlen == 64:
        v = rng.getrandbits(32)
        return (v - (1 << 32) if v >> 31 else v) & mask     # a sign-extended word
    return rng.getrandbits(xlen)


def random_block(rng, xlen: int, length: int, *, label: str = "L", bitmanip: bool = False,
                 atomics: bool = True, branches: bool = True, memory: bool = True,
                 misaligned: bool = False, avoid: tuple[str, ...] = ()) -> list[str]:
    """``length`` random instructions (plus labels) for ``xlen``; see the module comment.

    ``avoid`` lists mnemonics left out (``ctzw`` against qemu 7.2, which gets it wrong
    when only the upper word is non-zero).
    """
    regs = [r for r in range(32) if r != BASE_REG]
    rv64 = xlen == 64
    lines: list[list[str]] = [[] for _ in range(length + 1)]   # lines[i]: text before slot i
    body: list[list[str]] = []
    labels: dict[int, str] = {}
    interior: set[int] = set()             # slots inside a multi-instruction group

    def rd():
        return f"x{rng.choice(regs) if rng.random() > 0.03 else 0}"

    def rs():
        return f"x{rng.randrange(32)}"

    def target(i):
        dest = min(length, i + rng.randint(1, 8))
        labels.setdefault(dest, f"{label}_{dest}")
        return labels[dest]

    def imm12():
        return rng.choice([rng.randint(-2048, 2047), rng.randint(-16, 16), -2048, 2047, -1, 0])

    def mem_offset(size):
        off = rng.randrange(-AREA_HALF, AREA_HALF - 8)
        if not (misaligned and rng.random() < 0.2):
            off -= off % size
        return off

    kinds = ["alu_r", "alu_i", "shift_i", "muldiv", "upper"]
    weights = [6, 5, 3, 4, 1]
    if memory:
        kinds += ["load", "store"]
        weights += [3, 3]
    if atomics and memory:
        kinds.append("amo")
        weights.append(2)
    if branches:
        kinds += ["branch", "jal", "jalr"]
        weights += [2, 1, 1]
    if bitmanip:
        kinds += ["zb_r", "zb_unary", "zb_imm"]
        weights += [4, 3, 2]
    kinds.append("fence")
    weights.append(0.2)

    i = 0
    while i < length:
        kind = rng.choices(kinds, weights)[0]
        out: list[str] = []
        if kind == "alu_r":
            op = rng.choice(ALU_R + (ALU_R_W if rv64 else ()))
            out.append(f"{op} {rd()}, {rs()}, {rs()}")
        elif kind == "alu_i":
            op = rng.choice(ALU_I + (("addiw",) if rv64 else ()))
            out.append(f"{op} {rd()}, {rs()}, {imm12()}")
        elif kind == "shift_i":
            if rv64 and rng.random() < 0.4:
                out.append(f"{rng.choice(SHIFT_I_W)} {rd()}, {rs()}, {rng.randrange(32)}")
            else:
                out.append(f"{rng.choice(SHIFT_I)} {rd()}, {rs()}, {rng.randrange(xlen)}")
        elif kind == "muldiv":
            op = rng.choice(MUL_DIV + (MUL_DIV_W if rv64 else ()))
            out.append(f"{op} {rd()}, {rs()}, {rs()}")
        elif kind == "upper":
            out.append(f"{rng.choice(('lui', 'auipc'))} {rd()}, {rng.choice([0, 1, 0x80000, 0xFFFFF, rng.randrange(1 << 20)])}")
        elif kind == "load":
            ops = {**LOADS, **(LOADS_64 if rv64 else {})}
            op = rng.choice(sorted(ops))
            out.append(f"{op} {rd()}, {mem_offset(ops[op])}(x{BASE_REG})")
        elif kind == "store":
            ops = {**STORES, **(STORES_64 if rv64 else {})}
            op = rng.choice(sorted(ops))
            out.append(f"{op} {rs()}, {mem_offset(ops[op])}(x{BASE_REG})")
        elif kind == "amo":
            width = rng.choice("wd") if rv64 else "w"
            size = 4 if width == "w" else 8
            addr = rng.choice([r for r in regs if r != 0])
            off = rng.randrange(-AREA_HALF, AREA_HALF - 8)
            off -= off % size
            out.append(f"addi x{addr}, x{BASE_REG}, {off}")
            out.append(f"{rng.choice(AMO_OPS)}.{width}{rng.choice(AMO_ORDER)} {rd()}, {rs()}, (x{addr})")
        elif kind == "branch":
            out.append(f"{rng.choice(BRANCHES)} {rs()}, {rs()}, {target(i + 1)}")
        elif kind == "jal":
            out.append(f"jal {rd()}, {target(i + 1)}")
        elif kind == "jalr":
            # auipc t, 0 ; jalr rd, 12(t) ; <skipped> : jumps over one instruction
            t = rng.choice([r for r in regs if r != 0])
            link = rd()
            out.append(f"auipc x{t}, 0")
            out.append(f"jalr {link}, 12(x{t})")
            out.append(f"addi x{t}, x{t}, 1")
        elif kind == "zb_r":
            op = rng.choice(ZB_R + (ZB_R_64 if rv64 else ()))
            out.append(f"{op} {rd()}, {rs()}, {rs()}")
        elif kind == "zb_unary":
            op = rng.choice([op for op in ZB_UNARY + (ZB_UNARY_64 if rv64 else ()) if op not in avoid])
            out.append(f"{op} {rd()}, {rs()}")
        elif kind == "zb_imm":
            forms = [("rori", xlen)] + ([("roriw", 32), ("slli.uw", 64)] if rv64 else [])
            op, limit = rng.choice(forms)
            out.append(f"{op} {rd()}, {rs()}, {rng.randrange(limit)}")
        elif kind == "fence":
            out.append(rng.choice(["fence iorw, iorw", "fence rw, rw", "fence r, w"]))
        if i + len(out) > length:
            continue
        for k, text in enumerate(out):
            if k:
                interior.add(i)
            body.append([text])
            i += 1
    for slot, name in labels.items():
        while slot in interior:            # never branch into the middle of a group
            slot += 1
        lines[slot].append(f"{name}:")
    text: list[str] = []
    for slot in range(length):
        text += lines[slot]
        text += body[slot]
    text += lines[length]
    return text


# ---- random blocks as a bare ELF for qemu-user and Tessera ----------------------------

@dataclass
class RandomProgram:
    """Blocks of random code wrapped so that each dumps its registers and data area."""

    xlen: int
    blocks: list[list[str]]            # the random instructions of each block
    inits: list[list[int]]             # 32 initial register values per block (x0, x3 unused)
    area: bytes                        # the initial data area (2 * AREA_HALF bytes)

    @property
    def record_size(self) -> int:      # bytes each block writes: 32 registers + the area
        return 32 * self.xlen // 8 + 2 * AREA_HALF

    def assembly(self) -> str:
        w = self.xlen // 8
        ld, sx = ("ld", "sd") if self.xlen == 64 else ("lw", "sw")
        word = ".dword" if self.xlen == 64 else ".word"
        dump = AREA_HALF                                   # registers dumped at x3 + AREA_HALF
        out = ["  .option norelax", "  .text", "  .globl _start", "_start:"]
        for b, block in enumerate(self.blocks):
            out.append(f"  la x{BASE_REG}, area")
            out.append(f"  la x31, init{b}")
            out += [f"  {ld} x{r}, {r * w}(x31)" for r in range(1, 32) if r not in (BASE_REG, 31)]
            out.append(f"  {ld} x31, {31 * w}(x31)")
            out.append(f"block{b}:")
            out += [line if line.endswith(":") else f"  {line}" for line in block]
            out.append(f"end{b}:")
            out += [f"  {sx} x{r}, {dump + r * w}(x{BASE_REG})" for r in range(32)]
            out += ["  li a7, 64", "  li a0, 1", f"  addi a1, x{BASE_REG}, {-AREA_HALF}",
                    f"  li a2, {2 * AREA_HALF + 32 * w}", "  ecall"]
        out += ["  li a7, 93", "  li a0, 0", "  ecall", "  .data", "  .balign 16"]
        for b, init in enumerate(self.inits):
            out.append(f"init{b}:")
            out += [f"  {word} {v:#x}" for v in init]
        out += ["  .balign 16", "area_lo:"]
        out += [f"  .byte {', '.join(str(x) for x in self.area[i:i + 16])}"
                for i in range(0, len(self.area), 16)]
        out += [f"  .set area, area_lo + {AREA_HALF}", f"  .zero {32 * w + 64}", ""]
        return "\n".join(out)

    def describe_difference(self, expected: bytes, actual: bytes) -> str:
        """Which block first differs, in which registers/bytes, and that block's code."""
        size, w = self.record_size, self.xlen // 8
        for b in range(len(self.blocks)):
            e, a = expected[b * size:(b + 1) * size], actual[b * size:(b + 1) * size]
            if e == a:
                continue
            notes = []
            if len(a) < size:
                notes.append(f"tessera's output ends inside this block ({len(a)} of {size} bytes)")
            area_e, area_a = e[:2 * AREA_HALF], a[:2 * AREA_HALF]
            regs_e, regs_a = e[2 * AREA_HALF:], a[2 * AREA_HALF:]
            for r in range(32):
                re_, ra = regs_e[r * w:(r + 1) * w], regs_a[r * w:(r + 1) * w]
                if re_ != ra:
                    notes.append(f"x{r}: qemu {int.from_bytes(re_, 'little'):#x}, "
                                 f"tessera {int.from_bytes(ra, 'little'):#x}" if len(ra) == w else f"x{r}: missing")
            for i in range(min(len(area_e), len(area_a))):
                if area_e[i] != area_a[i]:
                    notes.append(f"data byte x3{i - AREA_HALF:+d}: qemu {area_e[i]:#04x}, tessera {area_a[i]:#04x}")
                    break
            init = ", ".join(f"x{r}={v:#x}" for r, v in enumerate(self.inits[b]) if r not in (0, BASE_REG))
            code = "\n".join(f"    {line}" for line in self.blocks[b])
            return (f"block {b} differs (xlen {self.xlen}):\n  " + "\n  ".join(notes[:12])
                    + f"\n  initial registers: {init}\n  code:\n{code}")
        if len(actual) != len(expected):
            return f"outputs differ in length: qemu {len(expected)}, tessera {len(actual)}"
        return "identical"


def random_program(seed: int, xlen: int, blocks: int = 30, length: int = 60, **kinds: Any) -> RandomProgram:
    import random

    rng = random.Random(seed * 1000 + xlen)
    code = [random_block(rng, xlen, length, label=f"b{b}", **kinds) for b in range(blocks)]
    inits = [[0] + [random_value(rng, xlen) for _ in range(31)] for _ in range(blocks)]
    area = bytes(rng.getrandbits(8) for _ in range(2 * AREA_HALF))
    return RandomProgram(xlen, code, inits, area)


def build_random_elf(prog: RandomProgram, path: Path, march: str) -> Path:
    """Assemble and link ``prog`` with the cross compiler (no runtime: plain _start)."""
    src = path.with_suffix(".S")
    src.write_text(prog.assembly())
    mabi = "lp64" if prog.xlen == 64 else "ilp32"
    proc = subprocess.run([build.GCC, f"-march={march}", f"-mabi={mabi}", "-nostdlib", "-static",
                           "-Wl,--no-relax", "-o", str(path), str(src)],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"assembling {src} failed:\n{proc.stderr[-3000:]}")
    return path
