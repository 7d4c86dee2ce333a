"""Int8 kernels get a 32-bit Dest unless the user says otherwise: every Int8 case of tt-llk's
python_tests runs with ``DestAccumulation.Yes`` (tessera_tensix.llk.kernels._dest_acc), and the
matrix checks Int8 unpack_tilize_test and transpose_dest_test that way (goldens.KERNELS)."""

from __future__ import annotations

from pathlib import Path

from tessera_tensix.llk import goldens, params
from tessera_tensix.llk.kernels import Options, resolve


def _usage(tmp_path: Path) -> params.Usage:
    (tmp_path / "k.cpp").write_text("void run_kernel(RUNTIME_PARAMETERS params) { f(params.buffer_A[0], "
                                    "params.buffer_Res[0]); }\n")
    return params.scan(tmp_path / "k.cpp", ())


def test_int8_defaults_to_a_32_bit_dest_and_the_user_can_refuse_it(tmp_path):
    usage = _usage(tmp_path)
    assert resolve(Options(kernel="k", input_format="Int8"), usage).spec.dest_acc is True
    assert resolve(Options(kernel="k", input_format="Int8", dest_acc=False), usage).spec.dest_acc is False
    assert resolve(Options(kernel="k", input_format="Float16_b"), usage).spec.dest_acc is False


def test_the_matrix_checks_int8_tilize_and_transpose_with_a_32_bit_dest():
    for kernel in ("unpack_tilize_test", "transpose_dest_test"):
        spec = goldens.KERNELS[kernel]
        assert "Int8" in spec.formats
        assert spec.format_options["Int8"] == {"dest_acc": True}
