"""The three kernels of kernels.py checked over the catalog's cases by the touchstone plugin:
    PYTHONPATH=build/python pytest -p touchstone.pytest examples/python
Each test is one case of the conformance matrix (its id is the matrix's name without the backend),
judged with the matrix's own tolerances; a failure prints the judge's report and writes the case."""
import kernels
import touchstone


@touchstone.cases("rms_norm", tier="ci", dtypes=("F32", "F16", "BF16"))
def test_rms_norm(case, judge):
    i = case.inputs
    judge({"out": kernels.rms_norm(i["x"], i["w"], case.params["eps"], case.dtype)})


@touchstone.cases("flash_attention", tier="ci", dtypes=("F32", "BF16"))
def test_gqa_attention(case, judge):
    i = case.inputs
    judge({"out": kernels.gqa_attention(i["q"], i["k"], i["v"], case.params, case.dtype)})


@touchstone.cases("dequantize", tier="ci", variant="kind=Q4_0")
def test_dequantize_q4_0(case, judge):
    judge({"out": kernels.dequantize_q4_0(case.inputs["bytes"], case.params["n_cols"])})
