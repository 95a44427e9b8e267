#pragma once
// Integer scoring of an I8 KV pool's keys (kv_paged_decode_attention): each query row quantized to
// int8 with its own scale, as the GGUF GEMVs quantize their activations (cpu/quant/quant_act.h), and dotted
// with the pool's int8 codes in VNNI instructions; the key's scale, the query's scale and the softmax
// scale multiply each score once. The route, its query quantizer, its AVX-512 VNNI kernel and its
// tolerance (an NMSE bound derived from the query's quantum and the case's keys and values, in
// int8_scores.cpp) live here, so the kernel and its judge agree through one predicate.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/dtype.h"
#include "core/metrics.h"
#include "core/op.h"

namespace ts {
struct KvPagedDecodeParams;
}

namespace ts::cpu {

// Fewer visible keys than this take the exact route: the bound's spread argument wants many keys,
// and a short context costs too little for the route to matter.
inline constexpr int64_t kInt8ScoreMinKeys = 32;
// Longer rows take the exact route: an int32 dot of head_dim codes, |dot| <= head_dim * 127 * 128,
// converts to F32 exactly up to 2^24, i.e. head_dim <= 1024.
inline constexpr int64_t kInt8ScoreMaxDim = 1024;
// Query codes are stored in rows of a multiple of this many bytes (zero padded): the kernel's step.
inline constexpr int64_t kInt8ScoreStep = 64;

// Whether a decode of `keys` visible keys of head_dim over a pool of kv_dtype scores in int8 (its
// data permitting: every query finite, every visible key and value scale finite). The kernel and the
// tolerance both ask this.
inline bool int8_scores(DType kv_dtype, int64_t keys, int64_t head_dim) {
  return kv_dtype == DType::I8 && keys >= kInt8ScoreMinKeys && head_dim > 0 && head_dim <= kInt8ScoreMaxDim;
}

// Whether a kv_paged_decode_attention case's data admits the route: every query finite (a NaN or an
// Inf would not survive the quantizer; q: the case's q as F32) and every visible key and value scale
// finite (the exact route gives such rows NaN outputs, the bound is over finite ones). The tolerance
// asks int8_route_data; the kernel asks int8_route_queries before it runs and finds a scale that is
// not finite as it copies a tile's scales (attention_rows-inl.h, ScaleCopy), then the engine runs
// the whole call again on the exact route (AttentionRun::run): the same choice, without a pass over
// every scale before the decode, on one thread while the others wait (32 KiB a kv head at 4096 keys).
// Zen 4, 2026-11-28, cold decode, ci/bench-ab.py, the medians of three runs' B/A: ctx1024 I8 0.81x
// the time, ctx4096 0.90x (the runs 0.80x, 0.90x, 1.05x), ctx16384 1.00x.
bool int8_route_queries(const KvPagedDecodeParams& p, const float* q);
bool int8_route_data(const KvPagedDecodeParams& p, const float* q, const TensorMap& t);

// Whether this CPU has the instructions the integer kernel is written in (AVX-512 BW and VNNI).
bool int8_scores_available();

// codes[i] = round(q[i] / d), d = max|q| / 127 (so |codes| <= 127 and |q - d codes| <= d / 2), zeros
// in codes[n, padded); returns d (0 for a row of zeros). q finite.
float quantize_query(const float* q, int64_t n, int8_t* codes, int64_t padded);

// Rows of the pool the integer kernel asks for ahead of use (the engine's RowPrefetch, in plain
// terms): before key j, the key row k[j + offset] (and, with `values`, v[j + offset]) while
// j + offset < limit; offset < 0: none.
struct Int8KeyPrefetch {
  const int8_t* const* k = nullptr;
  const int8_t* const* v = nullptr;
  int64_t offset = -1, v_offset = -1, limit = 0;  // key j asks for k[j + offset], v[j + v_offset] (< 0: none)
  size_t kbytes = 0, vbytes = 0;
};

// The query rows of one group (up to 4; fewer repeat a row and store only `rows`): codes[r] (padded
// to a multiple of kInt8ScoreStep), bias[r] = 128 * sum of codes[r] (the kernel reads keys biased by
// 128 as unsigned bytes, so each dot is off by that much), factor[r] = softmax scale * the row's d.
struct Int8QueryGroup {
  const int8_t* codes[4];
  int32_t bias[4];
  float factor[4];
  int rows;
};

// s[r * ld + j] = factor[r] * ks[j] * (codes[r] . key row j) for keys j < n (ks null: 1), the dot
// exact in int32. AVX-512 VNNI; only where int8_scores_available().
void score_int8_keys(const Int8QueryGroup& q, const int8_t* const* krow, const float* ks, int64_t n, int64_t dk,
                     float* s, int64_t ld, const Int8KeyPrefetch& prefetch);

// The int8 route's tolerance for kv_paged_decode_attention's output, when the case takes the route
// (int8_scores and finite data); nullopt otherwise (the op's tolerance). Derived in int8_scores.cpp.
std::optional<Tolerance> int8_score_tolerance(const Problem& pr, const TensorMap& in);

}  // namespace ts::cpu
