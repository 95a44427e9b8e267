"""Two bugs a first draft has, and what the judge says about them. Each test passes when the judge
catches its bug; run with -s to see the reports (the same text a failing conformance case prints)."""
import numpy as np

import kernels
import touchstone


def test_causal_mask_off_by_one_is_caught():
    # A query that may not see its own position: prefill rows then attend to one key fewer.
    case = touchstone.case("flash_attention", "prefill_gqa4_hd128")
    i = case.inputs
    out = kernels.gqa_attention(i["q"], i["k"], i["v"], case.params, causal_off_by_one=True)
    result = touchstone.judge(case, {"out": out}, producer="gqa_attention_off_by_one")
    print(result.report)
    assert not result
    figures = result.outputs["out"]
    assert figures.bad > 0 and figures.worst is not None
    assert "  out            FAIL max_abs=" in result.report
    assert "tolerance: atol=" in result.report  # and its derivation: softmax attention ...
    # The first query (position 0) sees no key at all in the broken kernel: zeros where it wants v[0].
    assert np.all(out[0, :, 0, :] == 0)


def test_missing_epsilon_is_caught():
    # rms_norm without eps is right on ordinary rows and wrong where the mean square is small: the
    # catalog's rows cycle through scales 1, 1e4 and 1e-3, and at 1e-3 eps is 1/1000 of mean(x^2).
    case = touchstone.case("rms_norm", "t3_d257_large")
    i = case.inputs
    out = kernels.rms_norm(i["x"], i["w"], 0.0)
    result = touchstone.judge(case, {"out": out}, producer="rms_norm_without_eps")
    print(result.report)
    assert not result
    worst = result.outputs["out"].worst
    assert worst // case.params["dim"] == 2, "the failure is in the small row (scale 1e-3)"
    # And the fixed kernel passes the same case.
    assert touchstone.judge(case, {"out": kernels.rms_norm(i["x"], i["w"], case.params["eps"])})
