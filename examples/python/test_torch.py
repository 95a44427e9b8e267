"""rms_norm in PyTorch, its tensors handed to the judge as they are (bfloat16 included, no copy).
Skipped where torch is not installed (Debian: python3-torch)."""
import pytest

import touchstone

torch = pytest.importorskip("torch", reason="torch is not installed (python3-torch)")


def rms_norm(x, w, eps):
    x32, w32 = x.float(), w.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(dim=-1, keepdim=True) + eps) * w32).to(x.dtype)


@touchstone.cases("rms_norm", tier="ci", dtypes=("F32", "F16", "BF16"))
def test_rms_norm_torch(case, judge):
    x = touchstone.as_torch(case.inputs["x"], case.dtype)
    w = touchstone.as_torch(case.inputs["w"], case.dtype)
    judge({"out": rms_norm(x, w, case.params["eps"])})
