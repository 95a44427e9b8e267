#pragma once
// The cpu attention engine's driver: blocks of query rows, each over one K/V view (affine rows, or a
// paged and possibly quantized pool, cpu/attention/attention_core.h), cut into tasks over keys, run on the
// thread pool, merged in key order (deterministic) and written out. Every attention op of the cpu
// backend (flash, MLA, batched per cache, the paged and kv families) is rows and views given to it.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "cpu/attention/attention_core.h"
#include "cpu/runtime/scratch.h"

namespace ts::cpu {

class AttentionRun {
 public:
  // K/V elements of kv_dtype (F32, F16, BF16, I8, F8_E4M3), outputs written in out_dtype.
  AttentionRun(DType kv_dtype, DType out_dtype, float scale) : kv_dt_(kv_dtype), out_dt_(out_dtype), scale_(scale) {}

  // Starts a block of query rows over `kv`; add rows with row() next.
  void block(const KvView& kv) { blocks_.push_back({kv, {}, {}, {}, {}, {}, {}, {}, {}, {}}); }
  // A query row (F32) seeing keys [lo, hi); its output goes to `out` (dv elements of out_dtype) and,
  // when `lse` is given, the natural log of its sum of exp(scores) there (-inf with no visible key).
  void row(const float* q, int64_t lo, int64_t hi, std::byte* out, float* lse = nullptr) {
    Pending& b = blocks_.back();
    b.q.push_back(q);
    b.lo.push_back(lo);
    b.hi.push_back(hi);
    b.out.push_back(out);
    b.lse.push_back(lse);
  }
  // Scores an I8 pool's keys with the query rows quantized to int8 (cpu/attention/int8_scores.h), where the
  // CPU has the instructions: the caller has checked that the case takes that route (int8_scores and
  // finite queries), whose tolerance then judges the output. The scales are checked by the kernel as
  // it reads them: where one is not finite (a pool built by hand; kv_append_paged stores a NaN scale
  // for a row with a NaN or an Inf), run() drops the int8 rows and computes every row again on the
  // exact route.
  void int8_queries() { int8_queries_ = true; }
  void run();

 private:
  struct Pending {
    KvView kv;
    ScratchVector<const float*> q;
    ScratchVector<int64_t> lo, hi;
    ScratchVector<std::byte*> out;
    ScratchVector<float*> lse;
    // The int8 rows (int8_queries): codes, their row pointers, 128 x their sums, their scales.
    ScratchVector<int8_t> q8_codes;
    ScratchVector<const int8_t*> q8;
    ScratchVector<int32_t> q8_bias;
    ScratchVector<float> q8_scale;
  };
  void quantize_queries(Pending& b) const;
  DType kv_dt_, out_dt_;
  float scale_;
  bool int8_queries_ = false;
  ScratchVector<Pending> blocks_;
};

// Query rows per block (heads x positions): a block shares each K/V load among its rows.
inline constexpr int64_t kRowsPerBlock = 64;

}  // namespace ts::cpu
