"""``tessera demo --arch tensix-tile``: the coprocessor examples, driven by the baby RISC-V cores.

Each example is one of the direct-mode kernels of :mod:`tessera_tensix.examples.coprocessor`
(``datacopy.s``, ``eltwise_add.s``, ``matmul.s`` and their Wormhole files) run the way a
real kernel runs on a tile: its three thread sections become the programs of RISCV T0,
T1 and T2, which store the thread's nine ``MopCfg`` words to ``TENSIX_MOP_CFG_BASE``,
push every Tensix word of the section as a ``.ttinsn`` word (a store to
``INSTRN_BUF_BASE`` for a word ``.ttinsn`` cannot carry), wait for their thread with
``tensix_sync`` (CoprocessorDoneCheck) and exit.  RISCV B releases them from soft reset
(they start at their fixed pcs: 0x6000, 0xA000, 0xE000) and exits.  The inputs sit in
L1 at the kernels' offsets; the checks are the direct-mode examples' own.

The fourth example is the vendor's own code: tt-llk's ``eltwise_unary_datacopy_test``
(Float16_b, one tile) as ``tessera tensix build`` compiles it, shipped prebuilt in
``tessera_tensix/tile/prebuilt/<chip>/`` (its README says how it was built, with the
tt-llk licence beside it) so the demo needs no download or compiler.  It is loaded as
``tessera run prebuilt/<chip>/run.toml`` loads it, and its check compares the result in
L1 with the manifest's golden.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera.isa import Example
from tessera_tensix.examples import coprocessor as cp

#: where RISCV T0..T2 leave soft reset (SoftReset.md)
STARTS = (0x6000, 0xA000, 0xE000)
LABELS = ("unpack", "math", "pack")


def _image(program: Any) -> np.ndarray:
    image = bytearray()
    for address, blob in program.segments:
        image.extend(b"\0" * max(0, address + len(blob) - len(image)))
        image[address:address + len(blob)] = blob
    return np.frombuffer(bytes(image) + bytes(-len(image) % 4), dtype="<u4")


def _words(words: np.ndarray, start: int) -> list[int]:
    """The section's words from ``start`` up to its END (the all-zero word)."""
    end = start // 4
    while end < words.size and words[end]:
        end += 1
    return [int(w) for w in words[start // 4:end]]


def _push(word: int) -> str:
    if word >= 0xC000_0000:   # .ttinsn carries only values below 0xC0000000
        return f"    li t1, {word:#x}\n    sw t1, 0(t2)\n"
    return f"    .word {((word << 2) | (word >> 30)) & 0xFFFF_FFFF:#010x}   # push {word:#010x}\n"


def trisc_program(start: int, words: list[int], mop: list[int] | None) -> str:
    """RISCV T<i>'s code: program MopCfg, push ``words``, tensix_sync, exit."""
    lines = [f".org {start:#x}", "    li t2, 0xFFE40000          # INSTRN_BUF_BASE"]
    if mop:
        lines.append("    li t0, 0xFFB80000          # TENSIX_MOP_CFG_BASE")
        for i, w in enumerate(mop):
            lines += [f"    li t1, {w:#x}", f"    sw t1, {4 * i}(t0)"]
    text = "\n".join(lines) + "\n" + "".join(_push(w) for w in words)
    return text + """    li t0, 0xFFE80000          # PC_BUF_BASE: tensix_sync (CoprocessorDoneCheck)
    sw zero, 4(t0)
    lw t1, 4(t0)
    andi t1, t1, 0
    li a7, 93
    li a0, 0
    ecall
"""


BRISC = """
    li t0, 0xFFB12000          # RISCV_DEBUG_REG_SOFT_RESET_0: release T0..T2
    sw zero, 0x1B0(t0)
    li a7, 93
    li a0, 0
    ecall
"""


def tile_source(kernel: Any, chip: str) -> str:
    """The tile program of direct-mode ``kernel`` (a CoprocessorExample) with its inputs."""
    from tessera.isa.asm import assemble
    from tessera_tensix.arch import TENSIX_BH, TENSIX_WH

    program = assemble(TENSIX_WH if chip == "wh" else TENSIX_BH, kernel.text, file=kernel.kernel)
    image = _image(program)
    parts = [f"# {kernel.kernel} on a tile: RISCV B releases T0..T2, which push its thread sections\n", BRISC]
    for start, label in zip(STARTS, LABELS):
        mop_at = program.symbols.get(f"{label}_mop")
        mop = [int(w) for w in image[mop_at // 4:mop_at // 4 + 9]] if mop_at is not None else None
        parts.append(trisc_program(start, _words(image, program.symbols[label]), mop))
    parts.append("# ---- the inputs, in L1 (tile order, BF16)\n")
    for name, matrix in kernel.inputs.items():
        bits = cp.bf16_bits(cp.tilize(matrix)).astype("<u2").tobytes()
        words = np.frombuffer(bits, dtype="<u4")
        parts.append(f".org {kernel.layout[name]:#x}\n")
        parts += [".word " + ", ".join(f"{int(w):#010x}" for w in words[i:i + 8]) + "\n"
                  for i in range(0, words.size, 8)]
    return "".join(parts)


#: the directory of the prebuilt tt-llk kernel of each chip (under ``tessera_tensix/tile/prebuilt``)
PREBUILT = {"bh": "blackhole", "wh": "wormhole_b0"}


def check_golden(machine: Any, result: Any) -> str | None:
    """The prebuilt kernel ran to its end and every output equals its golden (the first
    differing element otherwise, as ``tessera run`` reports it)."""
    from tessera.errors import CheckFailed
    from tessera_tensix.tile import kernel

    if result.reason != "halted":
        return f"the kernel did not finish: the run ended {result.reason} ({result.detail})"
    manifest = machine.ext.get("tensix_kernel")
    if manifest is None or not any(t.golden for t in manifest.outputs):
        return "no kernel manifest with a golden was loaded"
    for tensor in manifest.outputs:
        if tensor.golden:
            try:
                kernel.check(tensor, kernel.read_output(machine.ext["tensix"].l1, tensor),
                             np.load(tensor.golden, allow_pickle=False))
            except CheckFailed as exc:
                return str(exc)
    return None


def llk_example(chip: str) -> Example:
    """tt-llk's ``eltwise_unary_datacopy_test``, prebuilt for ``chip``, with its input and golden."""
    return Example(name="llk-datacopy", description="tt-llk's eltwise_unary_datacopy_test (Float16_b, 1 tile), "
                   "compiled by `tessera tensix build`: RISCV B boots, T0..T2 unpack, copy and pack; res = A",
                   program=f"tessera_tensix:tile/prebuilt/{PREBUILT[chip]}/run.toml", max_steps=1_000_000,
                   check=check_golden)


def examples(chip: str) -> tuple[Example, ...]:
    out = []
    for example in cp.examples(chip):
        check: Any = example.check   # an ExampleCheck: it holds its kernel
        out.append(Example(name=example.name, description=example.description.replace(
            "three threads", "RISCV T0..T2 push three threads"), source=tile_source(check.kernel, chip),
            max_steps=200_000, check=check))
    out.append(llk_example(chip))
    return tuple(out)
