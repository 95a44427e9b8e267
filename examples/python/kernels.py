"""Three kernels as a kernel engineer's first draft would write them, in NumPy: rms_norm, GQA attention
(the catalog's flash_attention) and the dequantization of GGUF's Q4_0. They compute in float32, as a
GPU kernel does, and store the case's dtype (F16 as float16, BF16 as uint16 bit patterns)."""
import numpy as np

import touchstone


def load(a, dtype):
    """A tensor of the case as float32 values."""
    return touchstone.bf16_to_f32(a) if dtype == "BF16" else np.asarray(a, dtype=np.float32)


def store(a, dtype):
    """float32 values in the case's dtype."""
    if dtype == "BF16":
        return touchstone.f32_to_bf16(a)
    return a.astype(np.float16 if dtype == "F16" else np.float32)


def rms_norm(x, w, eps, dtype="F32"):
    """out = x / sqrt(mean(x^2) + eps) * w over the rows of x [tokens, dim]."""
    x, w = load(x, dtype), load(w, dtype)
    ms = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    return store(x / np.sqrt(ms + np.float32(eps)) * w, dtype)


def gqa_attention(q, k, v, p, dtype="F32", causal_off_by_one=False):
    """softmax(scale q k^T) v with grouped kv heads, causal and sliding-window masks (flash_attention:
    q [b, nh, q_len, hd], k and v [b, nkv, S, hd]; query i sits at position pos_offset + i). With
    causal_off_by_one the causal mask also hides the query's own position: the bug the judge must catch."""
    q, k, v = load(q, dtype), load(k, dtype), load(v, dtype)
    kv_len, group = p["kv_len"], p["num_heads"] // p["num_kv_heads"]
    # Rows past kv_len (a strided cache's spare slots) are NaN in the case: never read them.
    k = np.repeat(k[:, :, :kv_len], group, axis=1)
    v = np.repeat(v[:, :, :kv_len], group, axis=1)
    scores = np.float32(p["scale"]) * (q @ k.transpose(0, 1, 3, 2))  # [b, nh, q_len, kv_len]
    pos = p["pos_offset"] + np.arange(q.shape[2])[:, None]
    j = np.arange(kv_len)[None, :]
    visible = np.ones((q.shape[2], kv_len), dtype=bool)
    if p["causal"]:
        visible &= (j < pos) if causal_off_by_one else (j <= pos)
    if p["sliding_window"] > 0:
        visible &= j >= pos + 1 - p["sliding_window"]
    scores = np.where(visible, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - np.where(np.isfinite(top), top, 0))  # stable for logits of 1e4
    total = weights.sum(axis=-1, keepdims=True)
    out = (weights @ v) / np.where(total > 0, total, 1)  # a query that sees no key outputs zeros
    return store(out.astype(np.float32), dtype)


def dequantize_q4_0(blocks, n_cols):
    """GGUF Q4_0: per 32 values an F16 scale d and 16 bytes of 4-bit codes q; value = (q - 8) * d, the
    low nibbles first (elements 0..15), then the high ones (16..31)."""
    rows = blocks.shape[0]
    b = blocks.reshape(rows, n_cols // 32, 18)
    d = b[:, :, :2].copy().view(np.float16).astype(np.float32)  # [rows, blocks, 1]
    codes = b[:, :, 2:]
    q = np.concatenate([codes & 0x0F, codes >> 4], axis=-1).astype(np.int8) - 8
    return (q.astype(np.float32) * d).reshape(rows, n_cols)
