// The attention engine's push constants (attention.comp, planned by vulkan/attention/attention_engine.cpp): one list,
// the shader's block and its C++ mirror both expanded from it (push.glsl, vulkan/runtime/push_block.h).
#define TS_ATTN_PUSH(U, F, A)                                                                       \
  U(q_len) U(kv_len) U(pos_offset) U(nh) U(nkv) U(group) U(dqk) U(dk1) U(dv) U(causal) U(window)    \
  /* elements between consecutive (batch, kv head) blocks (affine) */                               \
  U(k1_hs) U(k2_hs) U(v_hs)                                                                          \
  /* elements between consecutive key rows of k1 and of v (affine; k2's rows are dk2 apart) */     \
  U(k1_rs) U(v_rs)                                                                                   \
  F(scale)                                                                                           \
  U(q_off) U(o_off) U(kv_len_index)                                                                  \
  /* the key split: ~0, 1 without one */                                                            \
  U(piece_keys) U(npieces)                                                                           \
  /* paged: slots per block, block-table entries per sequence */                                    \
  U(block_size) U(width)                                                                             \
  /* the most rows a (sequence, kv head) has: group x its most query rows */                        \
  U(rows_cap)                                                                                        \
  /* SEQS_FA2: lse's row length */                                                                  \
  U(total_q)                                                                                         \
  /* the view's modes (attention.comp) */                                                           \
  U(addr) U(seqs) U(x_shift) U(kv_kind)                                                              \
  /* the ragged modes: sequences (cu_seqlens_q has nseqs + 1 entries) */                            \
  U(nseqs)                                                                                           \
  /* SEQS_UNIFORM's q / out rows token-major [batch, q_len, nh] (1) or head-major [batch, nh, q_len] */ \
  U(q_tm)

#ifdef __cplusplus
#include "vulkan/runtime/push_block.h"
TS_PUSH_STRUCT(AttnPush, TS_ATTN_PUSH)
#else
#include "push.glsl"
TS_PUSH_BLOCK(TS_ATTN_PUSH)
#endif
