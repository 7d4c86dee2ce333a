"""Data formats of a kernel build and how the stages' formats follow from input and output.

A tt-llk test kernel is configured with thirteen formats (``FormatConfig``): what
the unpackers read from L1 and write to SrcA/SrcB, what math works in, what the
packer reads from Dest and writes to L1.  The harness derives them from the input
format, the output format and the Dest mode; :func:`infer` does the same here, by the
rules the harness applies on Wormhole and Blackhole (32-bit L1 input unpacked to a
19-bit source format, an exponent-B input packed to Float16 needs a 32-bit Dest, and so on).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tessera.errors import ConfigError

#: name -> (bytes of a 32x32 tile in L1, integer?, exponent family B?)
FORMATS: dict[str, tuple[int, bool, bool]] = {
    "Float32": (4096, False, True), "Float16": (2048, False, False), "Float16_b": (2048, False, True),
    "Tf32": (3072, False, True), "Bfp8": (1088, False, False), "Bfp8_b": (1088, False, True),
    "Bfp4_b": (576, False, True), "Bfp2_b": (320, False, True), "Int32": (4096, True, False),
    "UInt32": (4096, True, False), "UInt16": (2048, True, False), "Int8": (1024, True, False),
    "UInt8": (1024, True, False), "Fp8_e4m3": (1024, False, False),
}
#: formats a user may give for L1 (the others only appear inside the pipeline)
L1_FORMATS = ("Float16_b", "Float16", "Float32", "Bfp8_b", "Int32", "UInt32", "UInt16", "Int8", "UInt8",
              "Fp8_e4m3")
#: tensix_types.h DataFormat values (the same on both chips; Fp8_e4m3 is Blackhole's)
ENUM = {"Float32": 0, "Float16": 1, "Bfp8": 2, "Tf32": 4, "Float16_b": 5, "Bfp8_b": 6, "Bfp4_b": 7,
        "Int32": 8, "UInt16": 9, "Int8": 14, "Bfp2_b": 15, "UInt32": 24, "Fp8_e4m3": 26, "UInt8": 30}
_32BIT = ("Float32", "Int32", "UInt32")


@dataclass(frozen=True)
class FormatConfig:
    """The thirteen formats, named as the vendor's ``FormatConfig`` fields (and in its order)."""

    unpack_A_src: str
    unpack_B_src: str
    unpack_S_src: str
    unpack_A_dst: str
    unpack_B_dst: str
    unpack_S_dst: str
    math: str
    sfpu_src: str
    sfpu_dst: str
    pack_src: str
    pack_dst: str
    pack_S_src: str
    pack_S_dst: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def check(name: str, chip: str) -> str:
    """``name`` when it is an L1 format of ``chip``; one-line error otherwise."""
    allowed = [f for f in L1_FORMATS if not (f == "Fp8_e4m3" and chip != "blackhole")]
    if name not in allowed:
        raise ConfigError(f"format {name!r} is not an L1 format of {chip}: use one of {', '.join(allowed)}")
    return name


def tile_bytes(name: str, faces: int = 4) -> int:
    """Bytes of one tile of ``faces`` 16x16 faces in L1."""
    return FORMATS[name][0] * faces // 4


def is_32bit(name: str) -> bool:
    return name in _32BIT


def exponent_b(name: str) -> bool:
    return FORMATS[name][2]


def needs_32bit_dest(src: str, dst: str) -> bool:
    """An exponent-B input (not Float32) packed to Float16 passes through a 32-bit Dest."""
    return exponent_b(src) and src != "Float32" and dst == "Float16"


def infer(src: str, dst: str, *, dest_acc: bool, unpack_to_dest: bool, chip: str, src_b: str | None = None,
          same: bool = False) -> FormatConfig:
    """The pipeline's formats for input ``src`` (and ``src_b``), output ``dst`` and the Dest mode.

    ``same`` keeps every stage in the input format (the harness's
    ``disable_format_inference``, used by kernels that test one format end to end).
    """
    src_b = src_b or src
    if same:
        pack = dst if dest_acc and not is_32bit(src) and is_32bit(dst) else src
        return FormatConfig(src, src_b, src, src, src_b, src, src, src, src, pack, dst, pack, dst)
    unpack_a = _unpack_dst(src, dst, dest_acc, unpack_to_dest)
    unpack_b = _unpack_dst(src_b, dst, dest_acc, unpack_to_dest)
    family_a, family_b = _downstream(unpack_a), _downstream(unpack_b)
    if exponent_b(family_a) != exponent_b(family_b) or (
            (FORMATS[family_a][1] or FORMATS[family_b][1]) and family_a != family_b):
        raise ConfigError(f"input formats {src} and {src_b} cannot meet in one math format")
    math = "Float16" if family_a == "Fp8_e4m3" else family_a
    pack = _pack_src(dst, math, dest_acc, unpack_to_dest, chip)
    if dst == "Fp8_e4m3":
        pack = "Float16_b" if exponent_b(math) else "Float16"
    return FormatConfig(src, src_b, src, unpack_a, unpack_b, unpack_a, math, math, math, pack, dst, pack, dst)


def _unpack_dst(src: str, dst: str, dest_acc: bool, unpack_to_dest: bool) -> str:
    """What the unpacker writes: Float32 goes to SrcA/B as Tf32 (32-bit Dest) or a 16-bit float."""
    if src in ("Bfp4_b", "Bfp2_b"):
        return src
    if src == "Float32" and not unpack_to_dest:
        if dest_acc:
            return "Tf32"
        return "Float16_b" if exponent_b(dst) else "Float16"
    return src


def _downstream(unpacked: str) -> str:
    return "Bfp8_b" if unpacked in ("Bfp4_b", "Bfp2_b") else unpacked


def _pack_src(dst: str, unpacked: str, dest_acc: bool, unpack_to_dest: bool, chip: str) -> str:
    """What the packer reads from Dest, given what reached it."""
    if chip == "wormhole_b0" and dest_acc and dst == "Float16":
        return "Float32"
    if unpacked == "Float32" and not unpack_to_dest:
        return dst if dest_acc or (exponent_b(dst) and dst != "Float32") else unpacked
    if unpacked == "Float16" and dst == "Bfp8_b" and not dest_acc:
        return "Bfp8"
    if not dest_acc and needs_32bit_dest(unpacked, dst):
        return "Float32" if chip == "wormhole_b0" else dst
    if dst in ("Bfp4_b", "Bfp2_b"):
        return "Float32" if dest_acc else "Float16_b"
    return dst if dest_acc else unpacked
