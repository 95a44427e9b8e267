// The attention engine's arguments (flash_attn in attention.cl, planned by opencl/attention/attention_engine.cpp):
// one list, expanded by both (args.h).
#include "args.h"
#ifndef TS_OPENCL_ATTENTION_ARGS_H
#define TS_OPENCL_ATTENTION_ARGS_H

#define TS_ATTN_ARGS(I, F)                                                                          \
  /* the batch entries' view (SEQ_UNIFORM) and where q / out start */                                \
  I(kv_len_item) I(q_off) I(out_off)                                                                 \
  I(nh) I(nkv) I(q_len) I(kv_len) I(pos_offset) I(causal) I(window) F(scale)                         \
  /* row widths: the two key parts and the values */                                                 \
  I(dk1) I(dk2) I(dv)                                                                                 \
  /* affine K/V strides (elements) per batch entry, kv head and row; paged pools use the head's */   \
  I(k1_bs) I(k1_hs) I(k1_rs) I(k2_bs) I(k2_hs) I(k2_rs) I(v_bs) I(v_hs) I(v_rs)                       \
  /* the work-group's row block and key tile, the key split's piece, its states' (m, l) offset */     \
  I(bq) I(bk) I(piece) I(ml_off)                                                                      \
  /* items: how a work-group finds its sequence (SEQ_*) */                                           \
  I(seq_mode) I(nseq) I(run) I(seq_rows) I(head_rows) I(pos_rows)                                     \
  /* paged pools: table row width, slots per block, block strides, vLLM's x, scales, pool kind */     \
  /* (a KV_DTYPE_* of -DKV_ANY programs, kinds.h) */                                                  \
  I(table_width) I(block_size) I(kb_stride) I(vb_stride) I(kx) I(sb_stride) I(s_hs) I(kv_kind)       \
  /* FlashAttention-2's lse row length */                                                            \
  I(lse_rows)

TS_ARGS_STRUCT(AttnArgs, TS_ATTN_ARGS)

// The work-group's local memory, one buffer cut into (floats): qs[bq][dk], ks[bk][dk], vs[bk][dv],
// ps[bq][bk], the rows' max / sum / rescale [3][bq], their key ranges [2][bq] (int), the tile rows'
// K / V offsets [2][bk] (int) and scales [2][bk]; each part starts on 16 floats (a float16 vector).
#define TS_ATTN_PAD(n) (((n) + 15) / 16 * 16)
#define TS_ATTN_LOCAL_FLOATS(bq, bk, dk, dv)                                                       \
  (TS_ATTN_PAD((bq) * (dk)) + TS_ATTN_PAD((bk) * (dk)) + TS_ATTN_PAD((bk) * (dv)) +                 \
   TS_ATTN_PAD((bq) * (bk)) + TS_ATTN_PAD(3 * (bq)) + TS_ATTN_PAD(2 * (bq)) + 2 * TS_ATTN_PAD(2 * (bk)))

#endif
