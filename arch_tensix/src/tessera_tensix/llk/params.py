"""The parameters a tt-llk test kernel takes from its build header, and which form each takes.

A kernel in ``tests/sources`` reads its parameters either as compile-time constants
(``tilize_en``, ``MATH_FIDELITY``, ``ELTWISE_BINARY_OP`` ...) or as fields of the
``RuntimeParams`` struct that ``trisc.cpp`` copies from L1 before ``run_kernel``
(``params.TILE_CNT``, ``params.buffer_A`` ...).  The harness's Python test decides
which, per kernel; here it is read from the kernel's own text: a name the source
reads as ``params.NAME`` is a runtime field, a known name it uses bare is a constant.
:data:`VOCABULARY` lists the names the harness defines, with their C++ type and a
default; a kernel that needs a name outside it, or one whose harness default is only a
placeholder (no default here), gets it from ``--param NAME=VALUE`` — a build without it
stops with :class:`MissingParameter` rather than compiling the kernel with 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tessera.errors import ConfigError

#: C++ scalar types a runtime field may have, with (size, alignment) on rv32 ilp32
SCALARS = {"std::uint32_t": 4, "int": 4, "bool": 1, "unsigned": 4}


class MissingParameter(ConfigError):
    """A kernel reads a parameter no default and no ``--param`` gives (exit status 64)."""

    def __init__(self, kernel: str, name: str, *, known: bool, runtime: bool, hint: str = "") -> None:
        self.kernel, self.name, self.known, self.runtime = kernel, name, known, runtime
        what = f"params.{name}" if runtime else name
        why = "which has no default" if known else "which tessera does not know"
        value = "N" if runtime else "VALUE"
        super().__init__(f"{kernel} reads {what}, {why}: give it with --param {name}={value}"
                         + (f" ({hint})" if hint else ""))

    def with_hint(self, hint: str) -> MissingParameter:
        """The same error, naming what the vendor's tests pass."""
        return MissingParameter(self.kernel, self.name, known=self.known, runtime=self.runtime, hint=hint)


@dataclass(frozen=True)
class Param:
    """One parameter: its C++ type, its default, and (for enums) the scope a short value goes in."""

    name: str
    ctype: str
    default: int | bool | str | None = None
    scope: str = ""     # "ckernel::MathFidelity::" lets --param MATH_FIDELITY=HiFi4 stand for the full name

    def cpp(self, value: object) -> str:
        """``value`` as a C++ expression of this parameter's type."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        text = str(value)
        if self.scope and "::" not in text:
            return self.scope + text
        return text


def _ints(ctype: str, names: str, default: int | bool) -> list[Param]:
    return [Param(n, ctype, default) for n in names.split()]


_U32, _INT, _BOOL = "std::uint32_t", "int", "bool"
#: every parameter name the harness's build headers define (test_variant_parameters.py), in field order
VOCABULARY: dict[str, Param] = {p.name: p for p in [
    *_ints(_U32, "TILE_CNT LOOP_FACTOR", 1),
    Param("DST_INDEX", _INT, 0),
    *_ints(_U32, "num_faces num_faces_A num_faces_B", 4),
    *_ints(_INT, "NUM_BLOCKS INPUT_NUM_BLOCKS OUTPUT_NUM_BLOCKS", 1),
    *_ints(_U32, "NUM_TILES_IN_BLOCK INPUT_NUM_TILES_IN_BLOCK OUTPUT_NUM_TILES_IN_BLOCK", 1),
    *_ints(_U32, "FULL_RT_DIM FULL_CT_DIM BLOCK_CT_DIM BLOCK_RT_DIM", 1),
    *_ints(_U32, "RT_DIM CT_DIM KT_DIM", 1),
    *_ints(_BOOL, "UNPACK_TRANSPOSE_FACES UNPACK_TRANSPOSE_WITHIN_FACE NARROW_TILE", False),
    *_ints(_INT, "num_faces_r_dim_A num_faces_r_dim_B num_faces_c_dim_A num_faces_c_dim_B", 2),
    *_ints(_INT, "in0_face_r_dim in0_face_c_dim in1_face_r_dim in1_face_c_dim", 16),
    *_ints(_U32, "TEST_FACE_R_DIM TEST_FACE_C_DIM", 16),
    *_ints(_U32, "in0_tile_r_dim in0_tile_c_dim in1_tile_r_dim in1_tile_c_dim", 32),
    *_ints(_BOOL, "PARTIAL_FACE_A PARTIAL_FACE_PACK PARTIAL_FACE_B PARTIAL_FACE_MATH IS_REDUCE_TO_ONE", False),
    *_ints(_INT, "INPUT_TILE_CNT OUTPUT_TILE_CNT", 1),
    # no default: the harness's 0 is a placeholder every test that uses them replaces (a
    # kernel divides by SRCA_REUSE_COUNT; _llk_pack_rows_init_ asserts 1 <= NUM_ROWS_TO_PACK <= 64)
    Param("SRCA_REUSE_COUNT", _INT),
    *_ints(_INT, "RELU_CONFIG L1_ACC", 0),
    Param("NUM_ROWS_TO_PACK", _U32),
    *_ints(_U32, "ZERO_POINT NUM_GUARD_TILES MAX_POOL_CHUNK CONFIGURE_TEST_RUN_IDX", 0),
    Param("CHUNK_SIZE", _U32, 1),
    # the harness's SFPU_TILE_INDICES: src0 0, src1 1, dst 0
    Param("SRC0_TILE_IDX", _U32, 0), Param("SRC1_TILE_IDX", _U32, 1), Param("DST_TILE_IDX", _U32, 0),
    Param("VALID_SCORES", "unsigned", 32),
    Param("INJECT_NEGATIVE_ZERO", "unsigned", 0),
    # compile-time only (types the struct cannot hold, or the harness never passes at run time)
    Param("tilize_en", _BOOL, False),
    Param("PERF_RUN_TYPE", "auto", "L1_TO_L1", "PerfRunType::"),
    Param("MATH_FIDELITY", "ckernel::MathFidelity", "LoFi", "ckernel::MathFidelity::"),
    Param("ELTWISE_BINARY_OP", "auto", "ELWADD", "ckernel::EltwiseBinaryType::"),
    Param("BROADCAST_TYPE", "auto", "NONE", "ckernel::BroadcastType::"),
    Param("BCAST_DIM", "auto", "NONE", "ckernel::BroadcastType::"),
    Param("REUSE_DEST_TYPE", "auto", "NONE", "ckernel::EltwiseBinaryReuseDestType::"),
    Param("DATA_COPY_TYPE", "auto", "A2D", "ckernel::DataCopyType::"),
    Param("STOCHASTIC_RND", "auto", "None", "ckernel::StochRndType::"),
    Param("REDUCE_DIM", "auto", "REDUCE_ROW", "ckernel::ReduceDim::"),
    Param("POOL_TYPE", "auto", "SUM", "ckernel::PoolType::"),
    Param("dest_sync", "auto", "SyncHalf", "ckernel::DstSync::"),
    Param("VECTOR_MODE", "auto", "RC", "ckernel::VectorMode::"),
    Param("SFPU_UNARY_OPERATION", "auto", "typecast", "SfpuType::"),
    Param("TYPECAST_IN_FORMAT", "auto", "Float16_b", "DataFormat::"),
    Param("TYPECAST_OUT_FORMAT", "auto", "Float16_b", "DataFormat::"),
    *_ints(_BOOL, "ACC_TO_DEST MATH_TRANSPOSE_FACES APPROX_MODE FAST_MODE CLAMP_NEGATIVE STABLE_SORT "
                  "FUSED_SORT disable_src_zero_flag ENABLE_2X_FORMAT ENABLE_DIRECT_INDEXING ADD_TOP_ROW "
                  "TO_FROM_INT8 IS_MAX_OP USE_RUNTIME", False),
    Param("THROTTLE_LEVEL", _INT, 0),
    Param("ITERATIONS", _INT, 8),
    Param("TILE_DST_CT_OFFSET", _U32, 0),
    Param("PACK_NUM_TILES", _U32, 1),
    Param("REINIT_MODE", _INT, 0),
]}

#: the fields every RuntimeParams starts with (tile sizes in 16-byte L1 units), then formats and buffers
FIXED_FIELDS = ("TILE_SIZE_PACK", "TILE_SIZE_UNPACK_A", "TILE_SIZE_UNPACK_B")
#: operand buffers a kernel may read, in the order the harness lays them out in L1
BUFFERS = ("buffer_A", "buffer_B", "buffer_S", "buffer_T", "buffer_C", "buffer_Res")

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_IDENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")
_FIELD = re.compile(r"\bparams\s*\.\s*([A-Za-z_]\w*)")
_INCLUDE = re.compile(r'#\s*include\s*"([^"]+)"')
_INCLUDE_LINE = re.compile(r"#\s*include[^\n]*")
_DEFINES = re.compile(r"#\s*define\s+(\w+)|\b(?:constexpr|const)\b[^;=(){}]*?\b(\w+)\s*(?:=|\{)")


@dataclass(frozen=True)
class Usage:
    """What a kernel's text reads: runtime fields, bare names, names it defines itself."""

    fields: frozenset[str]
    names: frozenset[str]
    defined: frozenset[str]
    runtime_formats: bool

    @property
    def constants(self) -> list[str]:
        """Vocabulary names the header must define as constants, in vocabulary order."""
        return [n for n in VOCABULARY if n in self.names and n not in self.fields and n not in self.defined]

    @property
    def runtime(self) -> list[str]:
        """``params.`` fields other than the fixed ones, formats and buffers, in vocabulary order
        (names outside the vocabulary last, alphabetically)."""
        special = set(FIXED_FIELDS) | set(BUFFERS) | {"formats"}
        known = [n for n in VOCABULARY if n in self.fields]
        return known + sorted(self.fields - set(VOCABULARY) - special)

    @property
    def buffers(self) -> list[str]:
        return [b for b in BUFFERS if b in self.fields or b in self.names]


def scan(source: Path, include_dirs: tuple[Path, ...]) -> Usage:
    """Read ``source`` and the files it includes with quotes from its own folder or ``include_dirs``
    (transitively): the harness's headers and, for kernels that wrap another, that kernel."""
    texts, seen, todo = [], set(), [source]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            text = _COMMENT.sub(" ", path.read_text(errors="replace"))
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
        texts.append(text)
        for name in _INCLUDE.findall(text):
            todo.extend(d / name for d in (path.parent, *include_dirs) if (d / name).is_file())
    text = _INCLUDE_LINE.sub(" ", "\n".join(texts))
    fields = frozenset(_FIELD.findall(text))
    defined = frozenset(m.group(1) or m.group(2) for m in _DEFINES.finditer(text) if _global(text, m.start()))
    runtime_formats = "formats" in fields and "RUNTIME_FORMATS" not in text
    return Usage(fields=fields - ({"formats"} if not runtime_formats else set()),
                 names=frozenset(_IDENT.findall(text)), defined=defined - fields,
                 runtime_formats=runtime_formats)


def _global(text: str, pos: int) -> bool:
    """True when ``pos`` is outside every brace and parenthesis: a file-scope definition, not a
    function's local or a parameter's default."""
    before = text[:pos]
    return before.count("{") == before.count("}") and before.count("(") == before.count(")")


def parse_assignment(text: str) -> tuple[str, int | bool | str]:
    """``NAME=VALUE`` of ``--param``: integers (0x.. too), true/false, else the text as C++."""
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_]\w*", name) or not value:
        raise ConfigError(f"--param {text!r}: write NAME=VALUE (VALUE an integer, true/false or a C++ name)")
    if value.lower() in ("true", "false"):
        return name, value.lower() == "true"
    try:
        return name, int(value, 0)
    except ValueError:
        return name, value
