"""The pytest plugin, run on test files of its own (pytester): ids are the conformance names, a failure
prints the judge's report and writes the case and outputs beside the test (which `touchstone judge`
then fails on), known failures are data."""
import os
import subprocess

import pytest

import touchstone

KERNELS = '''
import numpy as np
import touchstone

def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(eps)) * w
'''


def run(pytester, body, *args):
    pytester.makepyfile(test_kernel=KERNELS + body)
    return pytester.runpytest("-p", "touchstone.pytest", "-p", "no:cacheprovider", *args)


def test_ids_are_the_conformance_names(pytester):
    result = run(pytester, '''
@touchstone.cases("rms_norm", tier="smoke", dtypes=("F32",))
def test_rms_norm(case, judge):
    judge({"out": rms_norm(case.inputs["x"], case.inputs["w"], case.params["eps"])})
''', "-v")
    result.assert_outcomes(passed=len(touchstone.cases("rms_norm", "smoke")))
    result.stdout.fnmatch_lines(["*test_rms_norm?rms_norm.t1_d1/F32? PASSED*", "*test_rms_norm?rms_norm.t3_d7/F32? PASSED*"])


def test_a_failure_prints_the_report_and_writes_the_case(pytester):
    result = run(pytester, '''
@touchstone.cases("rms_norm", tier="ci", dtypes=("F32",))
def test_no_eps(case, judge):
    judge({"out": rms_norm(case.inputs["x"], case.inputs["w"], 0.0)})
''')
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) > 0
    result.stdout.fnmatch_lines([
        "*outputs=test_no_eps op=rms_norm case=t3_d257_large dtype=F32 seed=*",
        "*  params: dim=257,eps=1e-06,tokens=3*",
        "*  out            FAIL max_abs=*worst*",
        "*tolerance: atol=* (row norm over 257*",
        "*  case:   *touchstone-failures/test_no_eps__rms_norm__t3_d257_large__F32.safetensors  (touchstone judge *",
    ])
    folder = pytester.path / "touchstone-failures"
    case_file = folder / "test_no_eps__rms_norm__t3_d257_large__F32.safetensors"
    outputs_file = folder / "test_no_eps__rms_norm__t3_d257_large__F32.outputs.safetensors"
    assert case_file.exists() and outputs_file.exists()
    # The written files reproduce the failure alone, from Python and from the CLI.
    assert not touchstone.judge(touchstone.load(str(case_file)), touchstone.load_outputs(str(outputs_file)))
    cli = os.environ.get("TOUCHSTONE_CLI")
    if cli:
        r = subprocess.run([cli, "judge", str(case_file), str(outputs_file)], capture_output=True, text=True)
        assert r.returncode == 1 and "FAIL max_abs=" in r.stdout, r.stdout + r.stderr


def test_known_failures_are_data(pytester):
    result = run(pytester, '''
KNOWN = {"t3_d257_large": "eps is left out (the example's bug)", "t5_d1000": "also", "llama3_8b_t4_d4096": "passes"}

@touchstone.cases("rms_norm", tier="ci", dtypes=("F32",), known_failures=KNOWN)
def test_no_eps(case, judge):
    eps = case.params["eps"] if case.name == "llama3_8b_t4_d4096" else 0.0
    judge({"out": rms_norm(case.inputs["x"], case.inputs["w"], eps)})
''', "-rxX")
    outcomes = result.parseoutcomes()
    assert outcomes.get("xfailed") == 2, outcomes
    out = result.stdout.str()
    assert "known failure: eps is left out (the example's bug)" in out and "case=t3_d257_large" in out
    assert "unexpected pass of a known failure (remove it from known_failures): passes" in out
    assert outcomes.get("failed", 0) >= 1


def test_the_case_fixture_needs_the_decorator(pytester):
    result = run(pytester, '''
def test_plain(case):
    pass
''')
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*@touchstone.cases(op, ...)*"])


def test_decorator_arguments_are_checked():
    with pytest.raises(touchstone.Error, match="'F8' is not F32, F16 or BF16"):
        touchstone.cases("rms_norm", dtypes=("F8",))
    with pytest.raises(touchstone.Error, match="no ci case of variant 'kind=Q9_9'"):
        touchstone.cases("dequantize", variant="kind=Q9_9")
    q4_0 = touchstone.cases("dequantize", variant="kind=Q4_0")
    assert q4_0 and all(n.startswith("Q4_0_") for n in q4_0)
