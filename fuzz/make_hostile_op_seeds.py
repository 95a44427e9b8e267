#!/usr/bin/env python3
"""Writes hostile per-family seeds into the case-file fuzzer's corpus: for one op of each family, its
smallest smoke case (made by `touchstone gen`) with one integer parameter set to 2^31, 2^32 and
2^63 - 1, and the same case, valid, with NaN and +-Inf in every float input. The parameters chosen are
ones no tensor's shape pins (positions, lengths, group sizes, expert counts), so the reader's shape
check cannot refuse them first: each seed reaches the op's own checks (or, for the NaN / Inf ones, the
reference, under ASan / UBSan in CI). Every seed must load as one Error line or run cleanly.

usage: fuzz/make_hostile_op_seeds.py TOUCHSTONE [DIR]   (DIR: fuzz/corpus/safetensors)"""
import json, os, struct, subprocess, sys, tempfile

touchstone = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "corpus", "safetensors")

# family: (op, case, parameter, the op of the NaN / Inf seed: one with float inputs)
SEEDS = {
    "core": ("split_qkv_norm_rope_into_cache", None, "cache_len", None),
    "quant": ("gemm_gptq", None, "group_size", None),
    "moe": ("moe_align_block_size", None, "num_experts", "route_topk_softmax"),
    "paged": ("split_qkv_norm_rope_into_paged_cache", None, "cache_len", None),
    "kv": ("kv_append_paged", "I8_chunk5_after30_bs16_hd128", "cache_len_before", None),
    "tensor": ("apply_rope_partial", None, "rotary_dim", "gqa_attention"),
    "collective": ("broadcast", None, "src_rank", "all_reduce"),
}
VALUES = {"2p31": 1 << 31, "2p32": 1 << 32, "2p63m1": (1 << 63) - 1}
SPECIALS = [float("nan"), float("inf"), float("-inf")]


def smallest_smoke_case(op, tmp):
    """The op's smoke case whose file is smallest (as fuzz/make-op-seeds.sh picks), written to tmp."""
    listing = subprocess.run([touchstone, "cases", "--op", op, "--tier", "smoke"], check=True, capture_output=True,
                             text=True).stdout
    paths = []
    for name in (line.split()[1] for line in listing.splitlines() if line.startswith("  case ")):
        paths.append((os.path.join(tmp, f"{op}.{name}"), name))
        subprocess.run([touchstone, "gen", op, name, "--out", paths[-1][0]], check=True, capture_output=True)
    return min(paths, key=lambda p: os.path.getsize(p[0]))


def generated(op, case, tmp):
    if case is None:
        return smallest_smoke_case(op, tmp)
    path = os.path.join(tmp, f"{op}.{case}")
    subprocess.run([touchstone, "gen", op, case, "--out", path], check=True, capture_output=True)
    return path, case


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    return json.loads(raw[8:8 + n]), bytearray(raw[8 + n:])


def write(path, header, data):
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + bytes(data))


def poison_floats(header, data):
    """NaN, +Inf, -Inf at the start, middle and end of every F32 / F16 / BF16 input."""
    for name, t in header.items():
        if name == "__metadata__" or name.startswith("expected.") or t["dtype"] not in ("F32", "F16", "BF16"):
            continue
        begin, end = t["data_offsets"]
        size = 4 if t["dtype"] == "F32" else 2
        count = (end - begin) // size
        for i, at in enumerate(sorted({0, count // 2, count - 1}) if count else []):
            v = SPECIALS[i % 3]
            if t["dtype"] == "F32":
                b = struct.pack("<f", v)
            elif t["dtype"] == "F16":
                b = struct.pack("<e", v)
            else:
                b = struct.pack("<f", v)[2:]
            data[begin + at * size:begin + (at + 1) * size] = b
    # The expected outputs no longer hold: drop them, so the reader takes the file as a user's case.
    for name in [n for n in header if n.startswith("expected.")]:
        del header[name]
    return retile(header, data)


def retile(header, data):
    """Tensors' data laid out again in order (after expected.* were dropped)."""
    tensors = sorted((n for n in header if n != "__metadata__"), key=lambda n: header[n]["data_offsets"][0])
    new, at = bytearray(), 0
    for n in tensors:
        b, e = header[n]["data_offsets"]
        new += data[b:e]
        header[n]["data_offsets"] = [at, at + e - b]
        at += e - b
    return header, new


os.makedirs(out, exist_ok=True)
with tempfile.TemporaryDirectory() as tmp:
    for family, (op, case, param, nan_op) in SEEDS.items():
        path, case = generated(op, case, tmp)
        header, data = read(path)
        assert param in header["__metadata__"], (op, param)
        for tag, v in VALUES.items():
            h = json.loads(json.dumps(header))
            h["__metadata__"][param] = str(v)
            write(os.path.join(out, f"hostile_{family}_{op}_{param}_{tag}"), h, data)
        nan_op = nan_op or op
        nan_path, nan_case = generated(nan_op, case if nan_op == op else None, tmp)
        h, d = poison_floats(*read(nan_path))
        # valid_*: a valid case (tests/cli_test.cpp runs every other seed expecting an Error).
        write(os.path.join(out, f"valid_nan_inf_{family}_{nan_op}"), h, d)
        print(f"make_hostile_op_seeds: {family}: {op} {case} ({param} at 2^31, 2^32, 2^63 - 1); "
              f"{nan_op} {nan_case} with NaN / Inf data")
