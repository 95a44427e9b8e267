"""touchstone from Python: the catalog's cases, the reference, any backend, and the judge.

    import touchstone
    case = touchstone.case("rms_norm", "t3_d257_large", dtype="BF16")
    out = my_rms_norm(case.inputs["x"], case.inputs["w"], case.params["eps"])
    result = touchstone.judge(case, {"out": out})
    assert result, result.report

Everything runs the C++ the conformance matrix runs (the native module _touchstone): the same
generated cases and seeds, the same per-output tolerances and masks, the same report.

Arrays: a case's tensors are NumPy views of the case's own memory (inputs and expected outputs
read-only); arrays handed to judge() are compared where they lie. NumPy arrays, anything with the
buffer protocol, anything with __dlpack__ (on the CPU) and torch tensors are taken without a copy
when C-contiguous in native byte order (others are copied once). Dtypes: F32 is float32, F16 is
NumPy's float16, BF16 has no NumPy type and travels as uint16 bit patterns (bf16_to_f32 /
f32_to_bf16 below convert; a torch.bfloat16 tensor is taken as it is, and as_torch() gives one
back), F8_E4M3 as uint8 bytes.
"""
import sys

import numpy as np

from touchstone._touchstone import (  # noqa: F401  (the module's API)
    Case,
    Error,
    OutputResult,
    Result,
    backends,
    case,
    case_info,
    load,
    load_outputs,
    ops,
    reference,
    run,
    save,
)
from touchstone import _touchstone

__all__ = [
    "Case", "Error", "OutputResult", "Result", "as_torch", "backends", "bf16_to_f32", "case", "case_info",
    "cases", "f32_to_bf16", "judge", "load", "load_outputs", "ops", "reference", "run", "save", "save_outputs",
]


def _as_array(x):
    """x as a C-contiguous, native-order NumPy array, sharing x's memory wherever it can."""
    if not isinstance(x, np.ndarray):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(x, torch.Tensor):
            t = x.detach()
            if t.device.type != "cpu":
                t = t.cpu()  # a copy: the judge reads host memory
            if t.dtype == torch.bfloat16:
                x = t.view(torch.int16).numpy().view(np.uint16)  # BF16's bits, same memory
            else:
                x = t.numpy()
        elif hasattr(x, "__dlpack__") and not isinstance(x, (bytes, bytearray, memoryview)):
            x = np.from_dlpack(x)
        else:
            x = np.asarray(x)  # the buffer protocol, __array_interface__, or a copy of a list
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    if not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    return x


def _arrays(outputs):
    return {str(name): _as_array(value) for name, value in dict(outputs).items()}


def judge(case, outputs, producer="python"):
    """Judges `outputs` (a mapping: the op's output names -> arrays) against the case's expected outputs
    (or, for a case without them, the reference's) with each output's own tolerance and mask. Returns
    a Result: truthy on pass, .outputs[name] with the figures, .report with the text a failing
    conformance case prints. A missing or extra name, a wrong dtype or shape raises touchstone.Error."""
    return _touchstone.judge(case, _arrays(outputs), producer)


def save_outputs(case, outputs, path):
    """Writes `outputs` as a file `touchstone judge CASE OUTPUTS` reads."""
    _touchstone.save_outputs(case, _arrays(outputs), str(path))


class CaseList(list):
    """The names of an op's cases (touchstone.cases(op, tier)); also a pytest decorator, which
    parametrizes a test's `case` argument over them (with the plugin, touchstone.pytest):

        @touchstone.cases("rms_norm", tier="ci", dtypes=("F32", "BF16"))
        def test_rms_norm(case, judge): ...

    Test ids are the conformance matrix's names without the backend: rms_norm.t2_d33/BF16.
    known_failures maps "case/dtype" (either part may be "*") to the reason; a listed case that fails
    is an expected failure, one that passes fails the test, as in the matrix."""

    def __init__(self, op, names, tier, dtypes, known_failures):
        super().__init__(names)
        self.op, self.tier, self.dtypes = op, tier, dtypes
        self.known_failures = dict(known_failures or {})

    def params(self):
        """(op, case name, dtype) for every case of the list and each of its dtypes that dtypes names."""
        out = []
        for name in self:
            for dt in case_info(self.op, name)["dtypes"]:
                if self.dtypes is None or dt in self.dtypes:
                    out.append((self.op, name, dt))
        return out

    def known_failure(self, name, dtype):
        for key, reason in self.known_failures.items():
            case_part, _, dtype_part = key.partition("/")
            if case_part in ("*", name) and dtype_part in ("", "*", dtype):
                return reason
        return None

    def __call__(self, test):
        import pytest

        from touchstone.pytest import CaseParam

        params = [CaseParam(op, name, dt, self.known_failure(name, dt)) for op, name, dt in self.params()]
        if not params:
            raise Error(f"{self.op}: no {self.tier} case has any of the dtypes {self.dtypes}")
        return pytest.mark.parametrize("case", params, ids=[p.id for p in params], indirect=True)(test)


def cases(op, tier="ci", dtypes=None, variant=None, known_failures=None):
    """The names of op's cases up to `tier` (smoke within ci within full), those of one `variant`
    ("kind=Q4_0") when given; as a decorator, see CaseList."""
    if dtypes is not None:
        dtypes = (dtypes,) if isinstance(dtypes, str) else tuple(dtypes)
        for dt in dtypes:
            if dt not in ("F32", "F16", "BF16"):
                raise Error(f"dtypes: '{dt}' is not F32, F16 or BF16")
    names = _touchstone.cases(op, tier)
    if variant is not None:
        names = [n for n in names if case_info(op, n)["variant"] == variant]
        if not names:
            raise Error(f"{op} has no {tier} case of variant '{variant}'")
    return CaseList(op, names, tier, dtypes, known_failures)


def bf16_to_f32(bits):
    """BF16 bit patterns (uint16) as float32 values."""
    bits = np.asarray(bits, dtype=np.uint16)
    return (np.atleast_1d(bits).astype(np.uint32) << 16).view(np.float32).reshape(bits.shape)


def f32_to_bf16(values):
    """float32 values rounded to nearest even into BF16 bit patterns (uint16), NaN kept a NaN."""
    u = np.atleast_1d(np.asarray(values, dtype=np.float32)).view(np.uint32)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded).reshape(np.shape(values))


def as_torch(array, dtype=None):
    """A torch tensor sharing the array's memory; dtype="BF16" reads uint16 bit patterns as bfloat16.
    A case's own arrays are read-only: so is the tensor (torch cannot mark it so; do not write it)."""
    import warnings

    import torch

    a = np.asarray(array)
    if dtype == "BF16":
        a = a.view(np.int16)  # torch has no uint16: the same bits, as int16, then as bfloat16
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        t = torch.from_numpy(a)
    return t.view(torch.bfloat16) if dtype == "BF16" else t
