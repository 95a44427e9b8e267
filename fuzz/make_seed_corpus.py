#!/usr/bin/env python3
"""Writes the seed corpus for the case-file fuzzer: a valid small case and hand-made breakages of
each field the reader checks (the fuzzer explores from there)."""
import json, struct, sys, os

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "safetensors")
os.makedirs(out, exist_ok=True)

def st(header, data=b"", pad=True):
    h = json.dumps(header).encode()
    if pad:
        h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data

f32 = lambda n: struct.pack("<%df" % n, *[0.5 * (i + 1) for i in range(n)])
meta = {"op": "gemm", "m": "2", "n": "3", "k": "4"}
a, b = f32(8), f32(12)
ok = {"__metadata__": meta,
      "a": {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 32]},
      "b": {"dtype": "F32", "shape": [3, 4], "data_offsets": [32, 80]}}
cases = {
    "valid_gemm": st(ok, a + b),
    "truncated": st(ok, a + b)[:-7],
    "header_past_end": struct.pack("<Q", 1 << 20) + b"{}",
    "not_json": struct.pack("<Q", 5) + b"{oops",
    "offsets_past_end": st(dict(ok, b={"dtype": "F32", "shape": [3, 4], "data_offsets": [32, 96]}), a + b),
    "unknown_dtype": st(dict(ok, a={"dtype": "F13", "shape": [2, 4], "data_offsets": [0, 32]}), a + b),
    "bytes_vs_shape": st(dict(ok, a={"dtype": "F32", "shape": [2, 5], "data_offsets": [0, 32]}), a + b),
    "missing_tensor": st({"__metadata__": meta, "a": ok["a"]}, a),
    "missing_param": st(dict(ok, __metadata__={"op": "gemm", "m": "2", "n": "3"}), a + b),
    "bad_param": st(dict(ok, __metadata__=dict(meta, m="two")), a + b),
    "unknown_param": st(dict(ok, __metadata__=dict(meta, q="1")), a + b),
    "unknown_op": st(dict(ok, __metadata__=dict(meta, op="gemmm")), a + b),
    "shape_vs_params": st(dict(ok, __metadata__=dict(meta, m="3")), a + b),
    "negative_dim": st(dict(ok, a={"dtype": "F32", "shape": [-2, 4], "data_offsets": [0, 32]}), a + b),
    "huge_dim": st(dict(ok, a={"dtype": "F32", "shape": [1 << 62, 1 << 62], "data_offsets": [0, 32]}), a + b),
}
for name, data in cases.items():
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(data)
print(f"wrote {len(cases)} seeds to {out}")
