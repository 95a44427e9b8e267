#pragma once
// Parameter structs of the tensor family (docs/catalog.md, "Family tensor"): the small backend trait a
// plain decoder-only model needs. Field names are the trait's argument names and the case file's
// metadata keys.
#include <cstdint>

namespace ts {

// out[batch, seq, n] = x[batch, seq, k] @ weight[n, k]^T (+ bias[n]): a gemm of batch * seq rows.
struct Linear3dParams {
  int64_t batch = 1, seq = 1, k = 1, n = 1;
  template <class V> void fields(V& v) { v("batch", batch); v("seq", seq); v("k", k); v("n", n); }
};
struct Linear3dBiasParams : Linear3dParams {};

struct SiluParams {
  int64_t len = 1;
  template <class V> void fields(V& v) { v("len", len); }
};

// out[d0, d1, d2] = a[d0, d1, d2] (op) b[e0, e1, e2], each e_i either d_i or 1 (numpy broadcasting of b).
struct BroadcastParams {
  int64_t d0 = 1, d1 = 1, d2 = 1, e0 = 1, e1 = 1, e2 = 1;
  template <class V> void fields(V& v) {
    v("d0", d0); v("d1", d1); v("d2", d2); v("e0", e0); v("e1", e1); v("e2", e2);
  }
};

// Rotate-half RoPE of x [seq, heads, head_dim] at positions U32 [seq], angles pos * base^(-2i/rotary).
struct RopePositionsParams {
  int64_t seq = 1, heads = 1, head_dim = 2;
  float base = 10000.0f;
  template <class V> void fields(V& v) { v("seq", seq); v("heads", heads); v("head_dim", head_dim); v("base", base); }
  int64_t rotary() const { return head_dim; }
};

// The same over the first rotary_dim channels of each head; the rest are copied (Phi's partial rotary).
struct RopePartialParams : RopePositionsParams {
  int64_t rotary_dim = 2;
  template <class V> void fields(V& v) {
    RopePositionsParams::fields(v);
    v("rotary_dim", rotary_dim);
  }
  int64_t rotary() const { return rotary_dim; }
};

// Token-major attention: q [seq_q, num_heads, head_dim], k, v [seq_kv, num_kv_heads, head_dim].
// Scale 1/sqrt(head_dim); causal: query i sees keys j <= seq_kv - seq_q + i.
struct GqaAttentionParams {
  int64_t seq_q = 1, seq_kv = 1, num_heads = 1, num_kv_heads = 1, head_dim = 64;
  bool causal = false;
  template <class V> void fields(V& v) {
    v("seq_q", seq_q); v("seq_kv", seq_kv); v("num_heads", num_heads); v("num_kv_heads", num_kv_heads);
    v("head_dim", head_dim); v("causal", causal);
  }
  // The absolute position of query 0 among the keys: the last query sits at the last key.
  int64_t pos_offset() const { return causal ? seq_kv - seq_q : 0; }
};

}  // namespace ts
