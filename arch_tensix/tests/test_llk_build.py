"""tt-llk kernel builds without the network or a compiler: formats, the build header, the runtime
arguments, the manifest, the cache and the command's one-line errors (tessera_tensix.llk)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tessera.errors import ConfigError
from tessera_tensix.llk import buildheader, cache, chips, elfinfo, formats, manifest, params, toolchain, wheel
from tessera_tensix.llk.kernels import Options, resolve

# A kernel in the shape of tt-llk's tests/sources (written for these tests): unpack reads its
# operands and shape at run time, math uses compile-time constants, pack writes buffer_Res.
KERNEL = """
#include "ckernel.h"
std::uint32_t unp_cfg_context = 0;
#ifdef LLK_TRISC_UNPACK
#include "params.h"
void run_kernel(RUNTIME_PARAMETERS params)
{
#if defined(RUNTIME_FORMATS) && !defined(SPEED_OF_LIGHT)
    const FormatConfig& formats = params.formats;
#endif
    const std::uint32_t num_faces = params.num_faces;   // a local copy of a runtime field
    for (std::uint32_t i = 0; i < params.TILE_CNT; i++) { unpack(params.buffer_A[i], params.buffer_B[i]); }
}
#endif
#ifdef LLK_TRISC_MATH
#include "params.h"
constexpr int LOCAL_ONLY = 3;   // defined here: never a header constant
void run_kernel(RUNTIME_PARAMETERS params)
{
    math<ELTWISE_BINARY_OP, MATH_FIDELITY, LOCAL_ONLY>(params.NUM_BLOCKS, params.UNPACK_TRANSPOSE_FACES, tilize_en);
}
#endif
#ifdef LLK_TRISC_PACK
#include "helper.h"
void run_kernel(RUNTIME_PARAMETERS params) { pack(params.buffer_Res[0], params.DST_INDEX); }
#endif
"""


@pytest.fixture
def usage(tmp_path: Path) -> params.Usage:
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "helper.h").write_text("inline void helper() { use(THROTTLE_LEVEL); }\n")
    (tmp_path / "k.cpp").write_text(KERNEL)
    return params.scan(tmp_path / "k.cpp", (inc,))


def test_scan_sorts_runtime_fields_from_constants(usage):
    assert usage.runtime == ["TILE_CNT", "DST_INDEX", "num_faces", "NUM_BLOCKS", "UNPACK_TRANSPOSE_FACES"]
    assert usage.buffers == ["buffer_A", "buffer_B", "buffer_Res"]
    # THROTTLE_LEVEL comes from the included helper; LOCAL_ONLY is the kernel's own; num_faces is a field
    assert usage.constants == ["tilize_en", "MATH_FIDELITY", "ELTWISE_BINARY_OP", "THROTTLE_LEVEL"]
    assert not usage.runtime_formats and "formats" not in usage.fields


def test_scan_sees_unguarded_runtime_formats(tmp_path):
    (tmp_path / "k.cpp").write_text("void run_kernel(RUNTIME_PARAMETERS params) { f(params.formats.math); }\n")
    got = params.scan(tmp_path / "k.cpp", ())
    assert got.runtime_formats and got.runtime == []


@pytest.mark.parametrize("chip, src, dst, dest_acc, want", [
    ("blackhole", "Float16_b", "Float16_b", False, ("Float16_b", "Float16_b", "Float16_b")),
    ("blackhole", "Float32", "Float32", True, ("Tf32", "Tf32", "Float32")),
    ("blackhole", "Float32", "Float16_b", False, ("Float16_b", "Float16_b", "Float16_b")),
    ("blackhole", "Float16_b", "Float16", True, ("Float16_b", "Float16_b", "Float16")),
    ("wormhole_b0", "Float16_b", "Float16", True, ("Float16_b", "Float16_b", "Float32")),
    ("blackhole", "Float16", "Bfp8_b", False, ("Float16", "Float16", "Bfp8")),
    ("wormhole_b0", "Int8", "Int8", False, ("Int8", "Int8", "Int8")),
    ("blackhole", "Float16_b", "Float32", True, ("Float16_b", "Float16_b", "Float32")),
])
def test_format_inference(chip, src, dst, dest_acc, want):
    got = formats.infer(src, dst, dest_acc=dest_acc, unpack_to_dest=False, chip=chip)
    assert (got.unpack_A_dst, got.math, got.pack_src) == want
    assert (got.unpack_A_src, got.pack_dst, got.sfpu_src) == (src, dst, want[1])


def test_format_inference_refuses_mixed_exponents_and_unknown_formats():
    with pytest.raises(ConfigError, match="cannot meet"):
        formats.infer("Float16", "Float16", dest_acc=False, unpack_to_dest=False, chip="blackhole",
                      src_b="Float16_b")
    with pytest.raises(ConfigError, match="not an L1 format of wormhole_b0"):
        formats.check("Fp8_e4m3", "wormhole_b0")


def test_resolve_splits_tiles_into_dest_blocks(usage):
    res = resolve(Options(kernel="k", tiles=16), usage)
    assert (res.values["TILE_CNT"], res.values["NUM_BLOCKS"], res.values["NUM_TILES_IN_BLOCK"]) == (16, 2, 8)
    wide = resolve(Options(kernel="k", input_format="Float32", dest_acc=True, tiles=16), usage)
    assert (wide.values["NUM_BLOCKS"], wide.values["NUM_TILES_IN_BLOCK"]) == (4, 4)   # a 32-bit Dest half holds 4
    with pytest.raises(ConfigError, match="cannot be split into blocks of 8"):
        resolve(Options(kernel="k", tiles=12), usage)


def test_resolve_lays_out_buffers_from_the_harness_base(usage):
    res = resolve(Options(kernel="k", tiles=3, input_format="Float32", output_format="Float16_b",
                          dest_acc=True), usage)
    a, b, out = res.spec.buffers
    assert (a.address, a.tile_bytes, a.tiles) == (chips.BUFFERS_BASE, 4096, 3)
    assert b.address == a.end and out.address == b.end and (out.tile_bytes, out.format) == (2048, "Float16_b")
    assert res.spec.tile_units == (128, 256, 256)
    assert [i.name for i in res.inputs] == ["A", "B"] and res.outputs[0].name == "res"


def test_resolve_matmul_operands_follow_rt_kt_ct(tmp_path):
    (tmp_path / "matmul_test.cpp").write_text(
        "void run_kernel(RUNTIME_PARAMETERS params) { mm(params.buffer_A[0], params.buffer_B[0], params.buffer_Res[0],"
        " params.RT_DIM, params.KT_DIM, params.CT_DIM, params.TILE_CNT); }\n")
    usage = params.scan(tmp_path / "matmul_test.cpp", ())
    res = resolve(Options(kernel="matmul_test", params={"RT_DIM": 2, "KT_DIM": 3, "CT_DIM": 2}), usage)
    assert [b.tiles for b in res.spec.buffers] == [6, 6, 4]
    assert res.values["TILE_CNT"] == 4
    with pytest.raises(ConfigError, match="takes its size from RT_DIM"):
        resolve(Options(kernel="matmul_test", tiles=4), usage)


def test_resolve_refuses_what_cannot_work(usage):
    with pytest.raises(ConfigError, match="needs a 32-bit Dest"):
        resolve(Options(kernel="k", input_format="Int32", dest_acc=False), usage)
    assert resolve(Options(kernel="k", input_format="Int32"), usage).spec.dest_acc
    with pytest.raises(ConfigError, match="does not use NOPE"):
        resolve(Options(kernel="k", params={"NOPE": 1}), usage)
    with pytest.raises(ConfigError, match="--op 'div' for eltwise_binary_test"):
        resolve(Options(kernel="eltwise_binary_test", op="div"), usage)
    with pytest.raises(ConfigError, match="multiples of 32"):
        resolve(Options(kernel="k", dims=(32, 40)), usage)


def test_resolve_asks_for_runtime_fields_it_does_not_know(tmp_path):
    (tmp_path / "k.cpp").write_text("void run_kernel(RUNTIME_PARAMETERS params) { f(params.SECRET); }\n")
    usage = params.scan(tmp_path / "k.cpp", ())
    with pytest.raises(ConfigError, match="give it with --param SECRET=N"):
        resolve(Options(kernel="k"), usage)
    res = resolve(Options(kernel="k", params={"SECRET": 7}), usage)
    assert res.spec.runtime == {"SECRET": 7}


def test_header_declares_what_the_runtime_block_holds(usage):
    res = resolve(Options(kernel="eltwise_binary_test", op="mul", tiles=2, math_fidelity="HiFi4"), usage)
    text = buildheader.header(res.spec)
    assert "constexpr auto ELTWISE_BINARY_OP = ckernel::EltwiseBinaryType::ELWMUL;" in text
    assert "constexpr ckernel::MathFidelity MATH_FIDELITY = ckernel::MathFidelity::HiFi4;" in text
    assert "constexpr FormatConfig formats = {static_cast<std::uint32_t>(DataFormat::Float16_b)" in text
    struct_text = text[text.index("struct RuntimeParams"):]
    order = ["TILE_SIZE_PACK;", "Operand buffer_A;", "Operand buffer_B;", "Operand buffer_Res;",
             "std::uint32_t TILE_CNT;", "int DST_INDEX;", "std::uint32_t num_faces;", "int NUM_BLOCKS;",
             "bool UNPACK_TRANSPOSE_FACES;"]
    assert [struct_text.index(f) for f in order] == sorted(struct_text.index(f) for f in order)
    blob = buildheader.runtime_block(res.spec)
    a, b, out = res.spec.buffers
    want = struct.pack("<9IIiIi?xxx", 128, 128, 128, a.address, 2048, b.address, 2048, out.address, 2048,
                       2, 0, 4, 1, False)
    assert blob == want


def test_runtime_formats_use_the_enum_values(tmp_path):
    (tmp_path / "k.cpp").write_text("void run_kernel(RUNTIME_PARAMETERS params) { f(params.formats.math); }\n")
    res = resolve(Options(kernel="k", input_format="Float16", output_format="Float32", dest_acc=True),
                  params.scan(tmp_path / "k.cpp", ()))
    text = buildheader.header(res.spec)
    assert "FormatConfig formats;" in text and "constexpr FormatConfig formats" not in text
    words = struct.unpack("<16I", buildheader.runtime_block(res.spec))
    assert words[3:16] == (1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0)   # Float16 = 1 ... Float32 = 0


def test_runtime_block_refuses_values_that_do_not_fit(tmp_path):
    (tmp_path / "k.cpp").write_text("void run_kernel(RUNTIME_PARAMETERS params) { f(params.DST_INDEX); }\n")
    usage = params.scan(tmp_path / "k.cpp", ())
    with pytest.raises(ConfigError, match="does not fit a int"):
        buildheader.runtime_block(resolve(Options(kernel="k", params={"DST_INDEX": 1 << 40}), usage).spec)
    with pytest.raises(ConfigError, match="give it an integer"):
        buildheader.runtime_block(resolve(Options(kernel="k", params={"DST_INDEX": "ELWADD"}), usage).spec)


def test_manifest_round_trips_through_toml(usage):
    res = resolve(Options(kernel="reduce_test", chip="wh", op="col-avg", tiles=2), usage)
    placement = {core: {"entry": 0x5000 + i, "loader_init_start": 0x9000} for i, core in
                 enumerate(manifest.CORE_FILES)}
    doc = tomllib.loads(manifest.render(res, placement, "gcc 12"))
    assert doc["chip"] == "wormhole_b0" and doc["kernel"] == "reduce_test"
    assert doc["cores"] == {"brisc": "brisc.elf", "trisc0": "unpack.elf", "trisc1": "math.elf", "trisc2": "pack.elf"}
    assert [i["name"] for i in doc["inputs"]] == ["A", "B"] and doc["outputs"][0]["name"] == "res"
    assert doc["inputs"][0]["address"] == chips.BUFFERS_BASE and doc["inputs"][1]["fill"] == 1 / 32
    assert doc["config"]["op"] == "col-avg" and doc["config"]["formats"]["pack_dst"] == "Float16_b"
    blob = buildheader.runtime_block(res.spec)
    assert doc["runtime_args"]["address"] == chips.RUNTIME_ARGS
    assert doc["runtime_args"]["words"] == list(struct.unpack(f"<{len(blob) // 4}I", blob))
    assert doc["boot"]["trisc_start_table"] == 0x16DFF0 and doc["boot"]["start_command"] == 3
    assert doc["placement"]["trisc2"]["entry"] == 0x5003


def test_cache_follows_tessera_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSERA_CACHE", str(tmp_path / "c"))
    assert cache.cache_root() == tmp_path / "c" / "llk" and (tmp_path / "c" / "llk").is_dir()
    assert not wheel.cached()
    with pytest.raises(ConfigError, match="not in the cache"):
        wheel.tt_metal(download=False)


def test_wheel_with_another_digest_is_refused(tmp_path):
    fake = tmp_path / wheel.WHEEL_NAME
    fake.write_bytes(b"not the wheel")
    with pytest.raises(ConfigError) as info:
        wheel.verify(fake)
    assert wheel.WHEEL_SHA256 in str(info.value) and "\n" not in str(info.value)


def test_missing_compiler_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv("TESSERA_RISCV_GXX", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match="apt-get install gcc-riscv64-unknown-elf"):
        toolchain.find()
    assert not toolchain.available()


def test_elfinfo_refuses_other_files(tmp_path):
    (tmp_path / "x.elf").write_bytes(b"\x7fELF\x02\x01" + bytes(58))
    with pytest.raises(ConfigError, match="not a 32-bit little-endian ELF"):
        elfinfo.read(tmp_path / "x.elf")


def test_param_assignments():
    assert params.parse_assignment("TILE_CNT=0x10") == ("TILE_CNT", 16)
    assert params.parse_assignment("tilize_en=true") == ("tilize_en", True)
    assert params.parse_assignment("MATH_FIDELITY=HiFi2") == ("MATH_FIDELITY", "HiFi2")
    with pytest.raises(ConfigError, match="NAME=VALUE"):
        params.parse_assignment("3x=1")


def _tessera(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=120)


def test_command_errors_are_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env.update(TESSERA_PLUGINS="tensix", TESSERA_CACHE=str(tmp_path / "cache"), TESSERA_RISCV_GXX="")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if not (Path(p) / toolchain.GXX).exists())
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    res = _tessera("tensix", "build", "eltwise_unary_datacopy_test", "-o", str(tmp_path / "out"), env=env)
    assert res.returncode == 64, res.stderr
    assert res.stderr.strip() == ("tessera: configuration error: riscv64-unknown-elf-g++ is not installed: "
                                  "apt-get install gcc-riscv64-unknown-elf")
    res = _tessera("tensix", "build", "k", "--dims", "3", "-o", str(tmp_path / "out"), env=env)
    assert res.returncode == 2 and "ROWSxCOLUMNS" in res.stderr
    res = _tessera("tensix", "build", "k", "--param", "oops", "-o", str(tmp_path / "out"), env=env)
    assert res.returncode == 64 and res.stderr.count("\n") == 1 and "NAME=VALUE" in res.stderr
    res = _tessera("tensix", "kernels", "--offline", env=env)
    assert res.returncode == 64 and "not in the cache" in res.stderr
