"""The Python module against the C++ it binds: the same cases (byte for byte with `touchstone gen`), the
same judge and report (text for text with `touchstone judge`), arrays in and out without copies."""
import os
import subprocess

import numpy as np
import pytest

import touchstone

CLI = os.environ.get("TOUCHSTONE_CLI")
needs_cli = pytest.mark.skipif(not CLI, reason="TOUCHSTONE_CLI (the touchstone binary) is not set")


def test_catalog():
    assert {"rms_norm", "flash_attention", "dequantize", "gemm"} <= set(touchstone.ops())
    smoke, ci = touchstone.cases("rms_norm", "smoke"), touchstone.cases("rms_norm")
    assert smoke and set(smoke) < set(ci)
    assert "t3_d257_large" in ci
    assert touchstone.case_info("dequantize", "Q4_0_r5_c96")["variant"] == "kind=Q4_0"
    assert "reference" in touchstone.backends()
    with pytest.raises(touchstone.Error, match="unknown op 'nope'"):
        touchstone.cases("nope")
    with pytest.raises(touchstone.Error, match="has no case 'nocase'"):
        touchstone.case("rms_norm", "nocase")
    with pytest.raises(touchstone.Error, match="not defined for F16"):
        touchstone.case("dequantize", "Q4_0_r5_c96", dtype="F16")


def test_case_contents():
    case = touchstone.case("rms_norm", "t3_d257_large")
    assert (case.op, case.name, case.dtype, case.id) == ("rms_norm", "t3_d257_large", "F32", "rms_norm.t3_d257_large/F32")
    assert case.params == {"tokens": 3, "dim": 257, "eps": pytest.approx(1e-6)}
    assert isinstance(case.params["eps"], float) and isinstance(case.params["tokens"], int)
    assert set(case.inputs) == {"x", "w"} and set(case.expected) == {"out"} and case.output_names == ["out"]
    assert case.inputs["x"].shape == (3, 257) and case.inputs["x"].dtype == np.float32
    # Views of the case's own memory: the same address each time, owned by the case, read-only.
    x = case.inputs["x"]
    assert x.ctypes.data == case.inputs["x"].ctypes.data and not x.flags.owndata
    with pytest.raises(ValueError):
        x[0, 0] = 1
    assert "row norm over 257" in case.tolerance("out")


def test_dtypes():
    f16 = touchstone.case("rms_norm", "t2_d33", dtype="F16")
    assert f16.inputs["x"].dtype == np.float16 and f16.expected["out"].dtype == np.float16
    bf16 = touchstone.case("rms_norm", "t2_d33", dtype="BF16")
    assert bf16.inputs["x"].dtype == np.uint16  # BF16's bit patterns
    values = touchstone.bf16_to_f32(bf16.expected["out"])
    assert values.dtype == np.float32 and np.all(np.isfinite(values))
    assert np.array_equal(touchstone.f32_to_bf16(values), bf16.expected["out"])
    # The rounding is to nearest even, NaN stays NaN: as the C++ converter.
    assert touchstone.f32_to_bf16(np.float32(1 + 2**-8)) == 0x3F80  # a tie: to the even 1.0
    assert touchstone.f32_to_bf16(np.float32(1 + 3 * 2**-8)) == 0x3F82
    assert np.isnan(touchstone.bf16_to_f32(touchstone.f32_to_bf16(np.float32("nan"))))


@needs_cli
def test_case_is_touchstone_gen_byte_for_byte(tmp_path):
    path = tmp_path / "gen.safetensors"
    subprocess.run([CLI, "gen", "flash_attention", "chunked_prefill_gqa8_hd96", "--dtype", "BF16", "--out", str(path)],
                   check=True, capture_output=True)
    ours = touchstone.case("flash_attention", "chunked_prefill_gqa8_hd96", dtype="BF16")
    theirs = touchstone.load(str(path))
    assert ours.seed == theirs.seed and ours.params == theirs.params
    for name in ("q", "k", "v"):
        assert np.array_equal(ours.inputs[name], theirs.inputs[name])
    assert np.array_equal(ours.expected["out"], theirs.expected["out"])


def test_reference_and_run():
    case = touchstone.case("flash_attention", "window16_of_200")
    ref = touchstone.reference(case)
    assert np.array_equal(ref["out"], case.expected["out"])
    assert ref["out"].flags.writeable
    cpu = touchstone.run(case, backend="cpu")
    assert touchstone.judge(case, cpu)
    with pytest.raises(touchstone.Error, match="unknown backend|no backend"):
        touchstone.run(case, backend="nope")


def test_judge_passes_and_fails():
    case = touchstone.case("rms_norm", "t3_d257_large")
    good = touchstone.reference(case)
    result = touchstone.judge(case, good)
    assert result and result.passed and result.outcome() == "pass"
    assert result.outputs["out"].bad == 0 and result.outputs["out"].count == 3 * 257
    assert result.report.startswith(f"outputs=python op=rms_norm case=t3_d257_large dtype=F32 seed={case.seed}\n")
    bad = good["out"].copy()
    bad[1, 43] *= 1.001
    result = touchstone.judge(case, {"out": bad})
    assert not result and result.outcome() == "fail"
    figures = result.outputs["out"]
    assert (figures.bad, figures.worst) == (1, 257 + 43)
    assert figures.worst_got == pytest.approx(bad[1, 43]) and figures.atol > 0 and figures.rtol > 0
    assert "bad=1/771 worst[300]" in result.report and "FAIL" in str(result)
    # The matrix's rule for known failures: a listed case that fails is known, one that passes fails.
    assert result.outcome(known=True) == "known"
    assert touchstone.judge(case, good).outcome(known=True) == "unexpected_pass"


def test_unwritten_elements_are_not_compared():
    case = touchstone.case("compute_ids_tpe", "b7_e64_k6")
    out = touchstone.reference(case)
    tpe, ids = out["tpe"], out["ids"]
    e = int(np.argmax(tpe < ids.shape[1]))
    ids[e, tpe[e]:] = -12345  # slots past tpe[e]: not written by the op's definition
    result = touchstone.judge(case, out)
    assert result and result.outputs["ids"].not_compared > 0
    ids[int(np.argmax(tpe > 0)), 0] += 1
    assert not touchstone.judge(case, out)


@needs_cli
def test_report_is_touchstone_judge_s(tmp_path):
    # The same case and outputs, judged from Python and by the CLI: the same report, line for line.
    case = touchstone.case("flash_attention", "causal_mid_chunk_hd80", dtype="F16")
    case_path, outputs_path = tmp_path / "c.safetensors", tmp_path / "o.safetensors"
    touchstone.save(case, str(case_path))
    out = touchstone.reference(case)["out"].copy()
    out[0, 1, 2, 3] = np.float16(7)
    touchstone.save_outputs(case, {"out": out}, str(outputs_path))
    cli = subprocess.run([CLI, "judge", str(case_path), str(outputs_path)], capture_output=True, text=True)
    assert cli.returncode == 1, cli.stderr
    ours = touchstone.judge(touchstone.load(str(case_path)), {"out": out}, producer=str(outputs_path))
    assert not ours
    assert cli.stdout.startswith(ours.report), (cli.stdout, ours.report)


def test_bad_outputs_are_errors():
    case = touchstone.case("rms_norm", "t2_d33")
    out = case.expected["out"]
    for outputs, message in [
        ({}, "output 'out' of rms_norm is missing"),
        ({"out": out, "out2": out}, "'out2' is not an output of rms_norm"),
        ({"out": out.astype(np.float64)}, "output 'out' is F64, but rms_norm declares it F32"),
        ({"out": out.astype(np.float16)}, "output 'out' is F16, but rms_norm declares it F32"),
        ({"out": out.T.copy()}, r"output 'out' has shape \[33,2\], but this case's is \[2,33\]"),
        ({"out": out.astype(np.bool_)}, "which no tensor has"),
        ({"out": "text"}, "which no tensor has|not an array"),
    ]:
        with pytest.raises(touchstone.Error, match=message):
            touchstone.judge(case, outputs)
    bf16 = touchstone.case("rms_norm", "t2_d33", dtype="BF16")
    with pytest.raises(touchstone.Error, match=r"output 'out' is F32, but rms_norm declares it BF16"):
        touchstone.judge(bf16, {"out": touchstone.bf16_to_f32(bf16.expected["out"])})


class DLPackOnly:
    """An array reachable only through DLPack, as a CuPy or JAX array on the CPU would be."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_arrays_handed_in_are_not_copied():
    case = touchstone.case("rms_norm", "llama3_8b_t4_d4096")
    out = touchstone.reference(case)["out"]
    # NumPy: the judge compares the array's own buffer.
    result = touchstone.judge(case, {"out": out})
    assert result and result.addresses["out"] == out.ctypes.data
    # The buffer protocol (a memoryview) and DLPack: the same memory again.
    assert touchstone.judge(case, {"out": memoryview(out)}).addresses["out"] == out.ctypes.data
    assert touchstone.judge(case, {"out": DLPackOnly(out)}).addresses["out"] == out.ctypes.data
    # A non-contiguous array is copied once (and still judged right).
    strided = np.empty((4, 2 * 4096), dtype=np.float32)[:, ::2]
    strided[...] = out
    r = touchstone.judge(case, {"out": strided})
    assert r and r.addresses["out"] != strided.ctypes.data


def test_torch_tensors_are_not_copied():
    torch = pytest.importorskip("torch", reason="torch is not installed (python3-torch)")
    case = touchstone.case("rms_norm", "t2_d33", dtype="BF16")
    want = touchstone.as_torch(case.expected["out"], "BF16")
    assert want.dtype == torch.bfloat16 and want.data_ptr() == case.expected["out"].ctypes.data
    result = touchstone.judge(case, {"out": want})
    assert result and result.addresses["out"] == want.data_ptr()
    f32 = touchstone.case("rms_norm", "t2_d33")
    t = torch.from_numpy(touchstone.reference(f32)["out"].copy())
    assert touchstone.judge(f32, {"out": t}).addresses["out"] == t.data_ptr()


def test_load_save_and_cases_without_expected(tmp_path):
    case = touchstone.case("dequantize", "Q4_0_r5_c96")
    path = tmp_path / "q4.safetensors"
    touchstone.save(case, str(path))
    again = touchstone.load(str(path))
    assert (again.name, again.op, again.params, again.seed) == ("q4", "dequantize", case.params, case.seed)
    assert np.array_equal(again.inputs["bytes"], case.inputs["bytes"])
    # A case of one's own, from parameters: expected outputs from the reference.
    own = touchstone.case("rms_norm", {"tokens": 4, "dim": 8, "eps": 1e-5})
    assert own.params == {"tokens": 4, "dim": 8, "eps": pytest.approx(1e-5)}
    assert touchstone.judge(own, touchstone.reference(own))
    with pytest.raises(touchstone.Error, match="missing parameter 'dim'"):
        touchstone.case("rms_norm", {"tokens": 4})


def test_workspace_is_what_a_backend_gets():
    case = touchstone.case("rms_norm", "t2_d33")
    ws = case.workspace()
    assert set(ws) == {"x", "w", "out"}
    assert np.all(np.isnan(ws["out"])), "outputs start poisoned: an element left unwritten fails"
    assert np.array_equal(ws["x"], case.inputs["x"]) and ws["x"].ctypes.data != case.inputs["x"].ctypes.data
    ws["x"][0, 0] = 5  # the kernel's to write; the case is untouched
    assert case.inputs["x"][0, 0] != 5
    ws["out"][0, :-1] = case.expected["out"][0, :-1]
    ws["out"][1] = case.expected["out"][1]
    result = touchstone.judge(case, {"out": ws["out"]})
    assert not result and "worst[32]: got nan" in result.report
