"""The whole-coprocessor examples of ``tessera demo --arch tensix``: a BF16 datacopy, an
eltwise add and a 32x32x32 matmul, each checked against numpy.

The kernels are the files ``datacopy.s``, ``eltwise_add.s`` and ``matmul.s`` of this
package (Blackhole; ``datacopy_wh.s``, ``eltwise_add_wh.s``, ``matmul_wh.s`` for Wormhole
B0): three thread sections (``unpack:``, ``math:``, ``pack:``) with their MOP
programming, the configuration written by the kernel itself, and one L1 layout (the
``.equ IN_A``, ``IN_B``, ``OUT`` of each file: input tiles at 0x10000 and 0x11000, the
output at 0x12000).  From the command line they read their inputs from ``--l1`` and the
result is saved with ``--l1-out`` (docs/tensix.md, "Examples").

``tessera demo`` builds machines without configuration, so it cannot pass ``--l1``: an
example's source is its kernel followed by its inputs as data directives at direct
mode's L1 address (``.org L1_BASE + IN_A`` and ``.word`` lines), which the demo loads as
it loads the kernel words.  The inputs come from a seeded generator, so every run checks
the same tiles.

Tiles are stored in L1 in tile order, as tt-llk stores them: four 16x16 faces (rows
0-15 x columns 0-15, rows 0-15 x columns 16-31, rows 16-31 x 0-15, rows 16-31 x 16-31),
each row-major.  :func:`tilize` and :func:`untilize` convert.

What each check compares (exactly; it returns the first element that differs):

* datacopy — the output tile holds the input's BF16 bits;
* eltwise add — each element is ``float32(a) + float32(b)`` rounded to BF16, nearest
  even (the matrix unit rounds the sum to FP32, then to the BF16 Dest);
* matmul — integer-valued inputs in -8..8, so every product and partial sum is exact:
  the FP32 output equals numpy's ``a @ b``.  (With arbitrary floats each MVMUL rounds its
  16-term dot product to FP32 once and Dest adds the partial results in FP32, so the
  result is within a few FP32 ulps of ``sum |a||b|`` of a float64 product; the tests
  check that with a tolerance.)
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import numpy as np

from tessera.isa import Example

TILE = 32
#: the L1 byte offsets every kernel file declares (``.equ`` lines)
LAYOUT_NAMES = ("IN_A", "IN_B", "OUT")


def kernel_source(name: str) -> str:
    """The text of kernel file ``name`` (``datacopy.s`` …) of this package."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def equ(source: str, name: str) -> int:
    """The value of ``.equ NAME, value`` in a kernel's text (a plain number)."""
    m = re.search(rf"^\.equ\s+{re.escape(name)}\s*,\s*(0x[0-9a-fA-F]+|\d+)", source, re.M)
    if m is None:
        raise KeyError(f"the kernel declares no .equ {name}")
    return int(m.group(1), 0)


def tilize(matrix: np.ndarray) -> np.ndarray:
    """A 32x32 matrix in tile order (four 16x16 faces, each row-major), as 32x32."""
    return np.asarray(matrix).reshape(2, 16, 2, 16).transpose(0, 2, 1, 3).reshape(TILE, TILE)


def untilize(tile: np.ndarray) -> np.ndarray:
    """The 32x32 matrix of a tile stored in tile order (the inverse of :func:`tilize`)."""
    return np.asarray(tile).reshape(2, 2, 16, 16).transpose(0, 2, 1, 3).reshape(TILE, TILE)


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """float values -> BF16 bit patterns, rounded to nearest even (``--l1 ADDR:bf16``)."""
    from tessera_tensix.l1io import to_bf16_bits

    return to_bf16_bits(values)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    """BF16 bit patterns -> float32."""
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)


def l1_directives(offset: int, data: bytes) -> str:
    """Assembly that places ``data`` at L1 byte ``offset`` of a direct-mode machine."""
    from tessera_tensix.board import L1_BASE

    if len(data) % 4:
        data += bytes(4 - len(data) % 4)
    words = np.frombuffer(data, dtype="<u4")
    lines = [f".org {L1_BASE + offset:#x}"]
    for i in range(0, words.size, 8):
        lines.append(".word " + ", ".join(f"{int(w):#010x}" for w in words[i:i + 8]))
    return "\n".join(lines) + "\n"


def _l1(machine: Any) -> Any:
    return machine.ext["tensix"].l1


def _first_difference(got: np.ndarray, want: np.ndarray, what: str) -> str | None:
    bad = np.argwhere(~((got == want) | (np.isnan(got) & np.isnan(want))))
    if bad.size == 0:
        return None
    r, c = (int(i) for i in bad[0])
    return (f"{what}[{r}][{c}] = {got[r, c]!r}, expected {want[r, c]!r} "
            f"({len(bad)} of {got.size} elements differ)")


class CoprocessorExample:
    """One kernel file, its inputs and the numpy answer its output must equal."""

    def __init__(self, kernel: str, inputs: dict[str, np.ndarray], out_format: str) -> None:
        self.kernel = kernel
        self.text = kernel_source(kernel)
        self.layout = {name: equ(self.text, name) for name in LAYOUT_NAMES if f".equ {name}," in self.text}
        self.inputs = inputs                      # "IN_A"/"IN_B" -> 32x32 float32 (BF16 values)
        self.out_format = out_format              # "bf16" or "fp32"

    def source(self) -> str:
        """The kernel followed by its inputs (BF16, tile order) as L1 data directives."""
        parts = [self.text, "\n# ---- the example's inputs, placed in L1 (tile order, BF16)\n"]
        for name, matrix in self.inputs.items():
            bits = bf16_bits(tilize(matrix)).astype("<u2")
            parts.append(l1_directives(self.layout[name], bits.tobytes()))
        return "".join(parts)

    def output(self, machine: Any) -> np.ndarray:
        """The output tile read from L1, as a 32x32 float32 matrix."""
        l1 = _l1(machine)
        if self.out_format == "bf16":
            tile = bf16_values(l1.read_as(self.layout["OUT"], "<u2", TILE * TILE))
        else:
            tile = l1.read_as(self.layout["OUT"], "<f4", TILE * TILE).astype(np.float32)
        return untilize(tile.reshape(TILE, TILE))

    def check_with(self, want: np.ndarray, machine: Any, result: Any) -> str | None:
        if result.exit_code != 0:
            return f"exit status {result.exit_code} ({result.detail})"
        return _first_difference(self.output(machine), want, "C")


_RNG = np.random.default_rng(16)


def _bf16_normal(scale: float = 1.0) -> np.ndarray:
    return bf16_values(bf16_bits(_RNG.standard_normal((TILE, TILE)) * scale))


def _small_integers() -> np.ndarray:
    return _RNG.integers(-8, 9, (TILE, TILE)).astype(np.float32)


#: the demos' inputs (the same for both chips)
COPY_IN = {"IN_A": _bf16_normal(4.0)}
ADD_IN = {"IN_A": _bf16_normal(), "IN_B": _bf16_normal(8.0)}
MATMUL_IN = {"IN_A": _small_integers(), "IN_B": _small_integers()}


def expected_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ELWADD of BF16 tiles into a BF16 Dest: the FP32 sum rounded to BF16 (nearest even)."""
    return bf16_values(bf16_bits(a.astype(np.float32) + b.astype(np.float32)))


def expected_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in float64, rounded once to float32 (exact for the small integers)."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


class ExampleCheck:
    """An example's check: its kernel's output tile against ``want``.  A class rather
    than a closure so the architecture record, which holds it, pickles (a snapshot of a
    machine holds the record)."""

    def __init__(self, name: str, kernel: CoprocessorExample, want: np.ndarray) -> None:
        self.__name__ = self.__qualname__ = f"check_{name.replace('-', '_')}"
        self.kernel = kernel
        self.want = want

    def __call__(self, machine: Any, result: Any) -> str | None:
        return self.kernel.check_with(self.want, machine, result)


def _example(name: str, description: str, kernel: CoprocessorExample, want: np.ndarray) -> Example:
    return Example(name=name, description=description, source=kernel.source(), max_steps=10_000,
                   check=ExampleCheck(name, kernel, want))


def examples(chip: str) -> tuple[Example, ...]:
    """The three examples of ``chip`` (``bh``: ``datacopy.s`` …; ``wh``: ``datacopy_wh.s`` …)."""
    suffix = "_wh" if chip == "wh" else ""
    copy = CoprocessorExample(f"datacopy{suffix}.s", COPY_IN, "bf16")
    add = CoprocessorExample(f"eltwise_add{suffix}.s", ADD_IN, "bf16")
    matmul = CoprocessorExample(f"matmul{suffix}.s", MATMUL_IN, "fp32")
    return (
        _example("datacopy", "three threads: unpack a 32x32 BF16 tile to SrcA, MOVA2D to Dest, pack to L1",
                 copy, COPY_IN["IN_A"]),
        _example("eltwise-add", "three threads: unpack two BF16 tiles to SrcA/SrcB, ELWADD into Dest, pack the sum",
                 add, expected_sum(ADD_IN["IN_A"], ADD_IN["IN_B"])),
        _example("matmul", "three threads: 32x32x32 BF16 matmul, MVMUL from a MOP and the replay buffer, FP32 out",
                 matmul, expected_product(MATMUL_IN["IN_A"], MATMUL_IN["IN_B"])),
    )


EXAMPLES = examples("bh")
EXAMPLES_WH = examples("wh")
DATACOPY_EXAMPLE, ELTWISE_ADD_EXAMPLE, MATMUL_EXAMPLE = EXAMPLES
