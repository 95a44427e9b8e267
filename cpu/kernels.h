#pragma once
// Registration of the cpu kernels, one function per op family (cpu/<engine>/<family>.cpp). Each folder
// is one engine and its own pieces: dense/ (the core and tensor families' ops), attention/ (the
// attention engine, the paged and kv families), quant/ (GGUF and GPTQ / AWQ), moe/; runtime/ holds what
// they all share (threads, scratch, SIMD targets and lanes, row conversion, prefetch, streaming stores).
#include "core/host_backend.h"

namespace ts::cpu {

void add_gemm(KernelTable& k);
void add_norms(KernelTable& k);
void add_elementwise(KernelTable& k);
void add_layout(KernelTable& k);
void add_rope(KernelTable& k);
void add_attention(KernelTable& k);
void add_paged_attention(KernelTable& k);  // the paged and kv families: cpu/attention/paged_attention.cpp
void add_paged_split(KernelTable& k);      // cpu/attention/paged_split.cpp
void add_kv_append(KernelTable& k);        // cpu/attention/kv_append.cpp
void add_argmax(KernelTable& k);
void add_quant(KernelTable& k);  // GGUF kinds: cpu/quant/quant_gemm.cpp
void add_gptq_awq(KernelTable& k);  // cpu/quant/quant_gptq.cpp
void add_moe_route(KernelTable& k);  // cpu/moe/moe_route.cpp
void add_moe_experts(KernelTable& k);  // cpu/moe/moe_gemv.cpp, over the engine of cpu/moe/moe_experts.h
void add_moe_combine(KernelTable& k);  // cpu/moe/moe_combine.cpp
void add_collective(KernelTable& k);   // cpu/collective.cpp: through the process's world (MPI)

}  // namespace ts::cpu
