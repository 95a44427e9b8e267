"""The touchstone pytest plugin: `pytest -p touchstone.pytest`, or `pytest_plugins = ["touchstone.pytest"]`
in a conftest.py.

    import touchstone

    @touchstone.cases("rms_norm", tier="ci", dtypes=("F32", "BF16"))
    def test_my_rms_norm(case, judge):
        x, w = case.inputs["x"], case.inputs["w"]
        judge({"out": my_rms_norm(x, w, case.params["eps"])})

Fixtures:
  case   the touchstone.Case the test is parametrized with (ids: rms_norm.t2_d33/BF16, the conformance
         matrix's names without the backend), generated when the test runs.
  judge  judge(outputs) judges the outputs against `case`. A failure prints the judge's report (figures
         per output, the tolerance and its derivation, the worst element) and writes the case and the
         outputs under touchstone-failures/ beside the test (--touchstone-failures=DIR to choose), with
         the command that judges them again. A known failure (known_failures= of the decorator) is an
         expected failure; one that passes fails the test, so the list never outlives the bug.
"""
import os
import re

import pytest

import touchstone


class CaseParam:
    """One (op, case, dtype) of a parametrized test, and the reason when it is a known failure."""

    def __init__(self, op, name, dtype, known):
        self.op, self.name, self.dtype, self.known = op, name, dtype, known
        self.id = f"{op}.{name}/{dtype}"

    def __repr__(self):
        return self.id


def pytest_addoption(parser):
    parser.addoption("--touchstone-failures", default=None, metavar="DIR",
                     help="where failing touchstone cases are written (default: touchstone-failures/ beside the test)")


@pytest.fixture
def case(request):
    param = getattr(request, "param", None)
    if not isinstance(param, CaseParam):
        pytest.fail("the touchstone `case` fixture comes from @touchstone.cases(op, ...) on the test", pytrace=False)
    return touchstone.case(param.op, param.name, dtype=param.dtype)


def _failure_files(request, case):
    folder = request.config.getoption("--touchstone-failures") or os.path.join(
        os.path.dirname(str(request.node.fspath)), "touchstone-failures")
    os.makedirs(folder, exist_ok=True)
    test = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.originalname)
    stem = os.path.join(folder, f"{test}__{case.op}__{case.name}__{case.dtype}")
    return stem + ".safetensors", stem + ".outputs.safetensors"


@pytest.fixture
def judge(request, case):
    param = request.node.callspec.params.get("case") if hasattr(request.node, "callspec") else None
    known = param.known if isinstance(param, CaseParam) else None

    def check(outputs):
        result = touchstone.judge(case, outputs, producer=request.node.originalname)
        outcome = result.outcome(known=known is not None)
        if outcome == "pass":
            return result
        if outcome == "unsupported":
            pytest.skip(result.report)
        if outcome == "known":
            pytest.xfail(f"known failure: {known}\n{result.report}")
        if outcome == "unexpected_pass":
            pytest.fail(f"unexpected pass of a known failure (remove it from known_failures): {known}", pytrace=False)
        case_file, outputs_file = _failure_files(request, case)
        try:
            touchstone.save(case, case_file)
            touchstone.save_outputs(case, outputs, outputs_file)
            where = f"  case:   {case_file}  (touchstone judge {case_file} {outputs_file})"
        except touchstone.Error as e:
            where = f"  case:   (could not write the case: {e})"
        pytest.fail(result.report + where, pytrace=False)

    return check
