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

# Hostile inputs: offsets, lengths and positions near 2^63 whose sums wrap, shape products
# that wrap, a list size far beyond the tensors present, and a header that is not strict safetensors.
# Each must be one Error line, never a crash, a hang or a huge allocation.
BIG = (1 << 63) - 8
def case(meta, tensors):
    """A case file from {name: (dtype, shape)}; the data is zeros, laid out in order."""
    header, data = {"__metadata__": {k: str(v) for k, v in meta.items()}}, b""
    for name, (dt, shape) in tensors.items():
        n = 4
        for d in shape:
            n *= d
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + n]}
        data += b"\0" * n
    return st(header, data)
def raw(header_text, data=b""):
    h = header_text.encode()
    return struct.pack("<Q", len(h)) + h + data
rope = {"eps": "1e-6"}
cases.update({
    "copy_slice_offset_wrap": case({"op": "copy_slice", "src_offset": BIG, "dst_offset": 0, "len": 16},
                                   {"src": ("F32", [10]), "dst": ("F32", [10])}),
    "kv_head_major_len_wrap": case({"op": "kv_cache_append_head_major", "cache_len": BIG, "cache_capacity": 4,
                                    "new_tokens": 16, "nkv": 1, "hd": 2},
                                   {"cache_k": ("F32", [1, 4, 2]), "cache_v": ("F32", [1, 4, 2]),
                                    "new_k_head_major": ("F32", [1, 16, 2]), "new_v_head_major": ("F32", [1, 16, 2])}),
    "qk_norm_rope_pos_wrap": case(dict(rope, op="qk_norm_rope", tokens=2, heads=1, head_dim=2, pos_offset=(1 << 63) - 1, mode=1),
                                  {"input": ("F32", [2, 1, 2]), "norm_w": ("F32", [2]), "cos": ("F32", [4, 1]),
                                   "sin": ("F32", [4, 1])}),
    "qk_norm_rope_mode0_pos_wrap": case(dict(rope, op="qk_norm_rope", tokens=2, heads=1, head_dim=2,
                                             pos_offset=(1 << 63) - 1, mode=0),
                                        {"input": ("F32", [2, 1, 2]), "norm_w": ("F32", [2]), "cos": ("F32", [4, 1]),
                                         "sin": ("F32", [4, 1])}),
    "split_qkv_norm_rope_pos_wrap": case(dict(rope, op="split_qkv_norm_rope", tokens=2, q_heads=1, kv_heads=1, head_dim=2,
                                              pos_offset=(1 << 63) - 1, qk_mode=2),
                                         {"qkv": ("F32", [2, 6]), "q_norm_w": ("F32", [2]), "k_norm_w": ("F32", [2]),
                                          "cos": ("F32", [4, 1]), "sin": ("F32", [4, 1])}),
    "split_qkv_norm_rope_width_wrap": case(dict(rope, op="split_qkv_norm_rope", tokens=1, q_heads=1 << 40, kv_heads=1,
                                                head_dim=1 << 30, pos_offset=0, qk_mode=0),
                                           {"qkv": ("F32", [1, 6]), "q_norm_w": ("F32", [2]), "k_norm_w": ("F32", [2]),
                                            "cos": ("F32", [4, 1]), "sin": ("F32", [4, 1])}),
    "silu_strided_offset_wrap": case({"op": "fused_silu_mul_split_strided", "in_row_offset": BIG, "out_row_offset": 0,
                                      "tokens": 16, "intermediate": 2},
                                     {"gate_up": ("F32", [4, 4]), "out": ("F32", [20, 2])}),
    "silu_im_wrap": case({"op": "fused_silu_mul_split", "tokens": 1, "im": 1 << 62}, {"gate_up": ("F32", [1, 2])}),
    "flash_attention_pos_wrap": case({"op": "flash_attention", "batch": 1, "q_len": 2, "kv_len": 2,
                                      "pos_offset": (1 << 63) - 1, "num_heads": 1, "num_kv_heads": 1, "head_dim": 2,
                                      "causal": "true", "scale": "0.5", "kv_seq_stride": 0, "sliding_window": 0},
                                     {"q": ("F32", [1, 1, 2, 2]), "k": ("F32", [1, 1, 2, 2]), "v": ("F32", [1, 1, 2, 2])}),
    "kv_batched_m_huge": case({"op": "kv_cache_append_batched_per_cache", "capacity": 2, "m": 10 ** 12, "nkv": 1, "hd": 1},
                              {"caches.0": ("F32", [1, 2, 1]), "new_data": ("F32", [1, 1, 1]), "cache_lens": ("U32", [1])}),
    "header_nul": raw('{"__metadata__":{"op":"gemm","m":"2","n":"3","k":"4"}}\0  '),
    "header_trailing_garbage": raw('{"__metadata__":{"op":"gemm"}} x'),
    "duplicate_tensor": raw('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                            '"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', b"\0" * 8),
    "duplicate_op": raw('{"__metadata__":{"op":"gemm","m":"2","n":"3","k":"4","op":"gelu"}}'),
    "overlapping_offsets": raw('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                               '"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', b"\0" * 12),
    "data_gap": raw('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                    '"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}', b"\0" * 12),
    "trailing_data": raw('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', b"\0" * 8),
})
for name, data in cases.items():
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(data)
print(f"wrote {len(cases)} seeds to {out}")
