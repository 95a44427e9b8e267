#pragma once
// The attention engine's kernels, one per K/V element type, each in its own translation unit
// (cpu/attention/attention_elem.inc): keys [task.j0, task.j1) for every row of a block, into the task's
// online-softmax state. Each reads its element type's rows in place; attend_f32 also takes every view
// whose rows are not contiguous (rows_in_place false), of any element type dt, through F32 copies.
#include "core/dtype.h"
#include "core/error.h"
#include "cpu/attention/attention_core.h"

namespace ts::cpu {

void attend_f32(const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale, DType dt);
void attend_f16(const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale, DType dt);
void attend_bf16(const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale, DType dt);
void attend_i8(const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale, DType dt);
void attend_f8(const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale, DType dt);

// The kernel for a view of element type dt.
inline void attend(DType dt, const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale) {
  if (!rows_in_place(kv)) return attend_f32(task, blk, kv, scale, dt);
  switch (dt) {
    case DType::F16: return attend_f16(task, blk, kv, scale, dt);
    case DType::BF16: return attend_bf16(task, blk, kv, scale, dt);
    case DType::I8: return attend_i8(task, blk, kv, scale, dt);
    case DType::F8_E4M3: return attend_f8(task, blk, kv, scale, dt);
    case DType::F32: return attend_f32(task, blk, kv, scale, dt);
    default: fail("cpu backend: attention over K/V of dtype {} is not supported", dtype_name(dt));
  }
}

}  // namespace ts::cpu
