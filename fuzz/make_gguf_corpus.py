#!/usr/bin/env python3
"""Writes the seed corpus of the GGUF fuzzer (fuzz/corpus/gguf/): small valid files (v2 and v3, every
metadata type, nested arrays, alignments 32 and 64, a tensor of each block kind touchstone implements
and one it does not) and a breakage of each field the reader checks. fuzz/run-fuzzer.sh adds ggml's
own tests/data/ggml-gguf/model.gguf."""
import os, struct, sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "gguf")
os.makedirs(out, exist_ok=True)

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
FMT = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?", U64: "Q", I64: "q", F64: "d"}

def s(x):
    b = x.encode()
    return struct.pack("<Q", len(b)) + b

def val(t, v):
    if t in FMT:
        return struct.pack("<" + FMT[t], v)
    if t == STR:
        return s(v)
    et, items = v
    return struct.pack("<IQ", et, len(items)) + b"".join(val(et, i) for i in items)

def gguf(kvs, tensors, version=3, align=32, offsets=None):
    h = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for k, t, v in kvs:
        h += s(k) + struct.pack("<I", t) + val(t, v)
    at, offs = 0, []
    for _, _, _, data in tensors:
        at = (at + align - 1) // align * align
        offs.append(at)
        at += len(data)
    offs = offsets or offs
    for (name, ne, typ, _), off in zip(tensors, offs):
        h += s(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne) + struct.pack("<IQ", typ, off)
    h += b"\0" * ((align - len(h) % align) % align)
    data = b""
    for (_, _, _, d), off in zip(tensors, offs):
        data += b"\0" * (off - len(data)) + d
    return h + data

pat = lambda n, k: bytes((i * 131 + k * 17) & 0xFF for i in range(n))
# Blocks whose f16 scales are 1.0 (0x3c00), so a decode gives finite values.
def blocks(n, size, scale_at=(0,)):
    b = bytearray(pat(n * size, n))
    for i in range(n):
        for at in scale_at:
            b[i * size + at:i * size + at + 2] = b"\x00\x3c"
    return bytes(b)

kvs = [("general.architecture", STR, "llama"), ("general.name", STR, "seed"), ("u8", U8, 7), ("i8", I8, -7),
       ("u16", U16, 65535), ("i16", I16, -300), ("u32", U32, 1 << 31), ("i32", I32, -5), ("f32", F32, 0.5),
       ("bool", BOOL, True), ("u64", U64, 1 << 40), ("i64", I64, -(1 << 40)), ("f64", F64, 2.5),
       ("tokens", ARR, (STR, ["<s>", "", "x"])), ("nested", ARR, (ARR, [(U8, [1, 2]), (BOOL, [True])]))]
tensors = [("q4_0", [32, 2], 2, blocks(2, 18)), ("q8_0", [64], 8, blocks(2, 34)),
           ("q4_k", [256], 12, blocks(1, 144, (0, 2))), ("q6_k", [256], 14, blocks(1, 210, (208,))),
           ("q3_k", [256], 11, pat(110, 1)), ("f32", [4, 2], 0, struct.pack("<8f", *range(8)))]
valid = gguf(kvs, tensors)
cases = {
    "valid_v3": valid,
    "valid_v2_align64": gguf(kvs + [("general.alignment", U32, 64)], tensors, version=2, align=64),
    "valid_no_tensors": gguf(kvs[:2], []),
    "truncated": valid[:-5],
    "bad_magic": b"GGUG" + valid[4:],
    "version_1": valid[:4] + struct.pack("<I", 1) + valid[8:],
    "huge_tensor_count": valid[:8] + struct.pack("<Q", 1 << 62) + valid[16:],
    "huge_string": valid[:24] + struct.pack("<Q", (1 << 64) - 2) + valid[32:],
    "five_dims": gguf(kvs[:1], [("x", [1, 1, 1, 1, 1], 0, b"\0" * 4)]),
    "misaligned": gguf(kvs[:1], [("x", [8], 0, b"\0" * 32)], offsets=[4]),
    "alignment_48": gguf(kvs[:1] + [("general.alignment", U32, 48)], [("x", [8], 0, b"\0" * 32)]),
    # Found by the fuzzer in CI: an empty tensor whose other dimensions multiply past 2^63 (n_rows wrapped).
    "empty_huge_dims": gguf(kvs[:1], [("x", [0, 1 << 62, 1 << 41], 0, b"")]),
    "overlap": gguf(kvs[:1], [("x", [8], 0, b"\0" * 32), ("y", [8], 0, b"\0" * 32)], offsets=[0, 0]),
}
for name, data in cases.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print("wrote %d GGUF seeds to %s" % (len(cases), out))
