// Bad input to the paged and kv families: one-line Errors naming the tensor or parameter, before any
// kernel runs. Each test starts from a preset's case and checks that it loads unchanged, so a check
// that rejects everything cannot pass.
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "tests/expect_error.h"

#include "core/case_file.h"
#include "tests/good_case.h"
#include "core/op.h"

namespace ts {
namespace {

uint32_t* u32(SafetensorsFile& f, const std::string& name) { return f.tensors.at(name).as<uint32_t>(); }

TEST(PagedValidation, BlockTableEntriesOutsideThePool) {
  SafetensorsFile f = good_case("paged_decode_attention", "bs16_gqa4_hd128_boundaries", DType::F32);
  const int64_t blocks = f.tensors.at("k_pool").shape()[0];
  u32(f, "block_tables")[0] = static_cast<uint32_t>(blocks);
  expect_error([&] { case_from_file(f); }, fmt::format("block_tables[0][0] = {} is outside the pool's [0, {}) blocks",
                                                       blocks, blocks));
  f = good_case("kv_paged_decode_attention", "I8_gqa4_hd128_bs16_len33", DType::F32);
  u32(f, "block_table")[2] = 0xFFFFFFFFu;
  expect_error([&] { case_from_file(f); }, "block_table[0][2] = 4294967295 is outside the pool's");
  f = good_case("kv_append_paged", "F8_E4M3_chunk5_after30_bs16_hd128", DType::F32);
  u32(f, "paged_block_indices")[1] = 1000;
  expect_error([&] { case_from_file(f); }, "paged_block_indices[0][1] = 1000 is outside the pool's");
}

TEST(PagedValidation, TableTooShortForTheContext) {
  SafetensorsFile f = good_case("paged_decode_attention", "bs16_gqa4_hd128_boundaries", DType::F32);
  const int64_t width = f.tensors.at("block_tables").shape()[1];
  u32(f, "context_lens")[1] = static_cast<uint32_t>(width * 16 + 1);
  expect_error([&] { case_from_file(f); }, fmt::format("sequence 1 has {} kv positions, more than its {} blocks of 16 hold",
                                                       width * 16 + 1, width));
  f = good_case("kv_paged_decode_attention", "F16_gqa8_hd64_bs1_len9", DType::F32);
  f.metadata["valid_kv_len"] = "100";
  expect_error([&] { case_from_file(f); }, "sequence 0 has 100 kv positions, more than its");
}

// A length bound no tensor's shape pins (max_seq_len, max_kv_len) sized a device's key split and the
// attention tolerance's key count: at 2^62 Vulkan's planner divided by zero (SIGFPE) and the tolerance
// passed anything (atol 4.1e3). It is at most what the block tables hold.
TEST(PagedValidation, LengthBoundsAtMostWhatTheTablesHold) {
  SafetensorsFile f = good_case("paged_decode_attention_v2", "bs16_gqa4_hd128_boundaries", DType::F32);
  f.metadata["max_seq_len"] = std::to_string(int64_t{1} << 62);
  expect_error([&] { case_from_file(f); },
               "parameter 'max_seq_len' is 4611686018427387904, more than a block table holds (4 blocks of 16)");
  f.metadata["max_seq_len"] = "64";  // 4 blocks of 16: the most it may be
  EXPECT_NO_THROW(case_from_file(f));
  f = good_case("paged_varlen_attention", "mixed3_bs16_gqa4_hd128", DType::F32);
  f.metadata["max_kv_len"] = std::to_string(std::numeric_limits<int64_t>::max());
  expect_error([&] { case_from_file(f); }, "parameter 'max_kv_len' is 9223372036854775807, more than a block table holds");
}

TEST(PagedValidation, CuSeqlensMustRiseAndEndAtTheRowCount) {
  SafetensorsFile f = good_case("paged_varlen_attention", "mixed3_bs16_gqa4_hd128", DType::F32);  // rows 3, 1, 6
  u32(f, "cu_seqlens_q")[2] = 2;
  expect_error([&] { case_from_file(f); }, "cu_seqlens_q is not non-decreasing: [2] = 2 after [1] = 3");
  f = good_case("paged_varlen_attention", "mixed3_bs16_gqa4_hd128", DType::F32);
  u32(f, "cu_seqlens_q")[3] = 9;
  expect_error([&] { case_from_file(f); }, "cu_seqlens_q ends at 9, not at the 10 query rows");
  f = good_case("split_qkv_norm_rope_into_paged_cache_varlen", "mixed3_bs16_hd128", DType::F32);
  u32(f, "cu_seqlens_q")[0] = 1;
  expect_error([&] { case_from_file(f); }, "cu_seqlens_q[0] must be 0, is 1");
}

TEST(PagedValidation, ContextLongerThanItsBound) {
  SafetensorsFile f = good_case("paged_varlen_attention", "mixed3_bs16_gqa4_hd128", DType::F32);
  f.metadata["max_kv_len"] = "20";  // sequence 1 ends at 31 + 1
  expect_error([&] { case_from_file(f); }, "sequence 1's kv length 32 exceeds max_kv_len 20");
  f = good_case("paged_decode_attention_v2", "bs16_gqa4_hd128_boundaries", DType::F32);
  f.metadata["max_seq_len"] = "32";
  expect_error([&] { case_from_file(f); }, "context_lens[1] = 33 exceeds max_seq_len 32");
  f = good_case("paged_batched_decode_attention", "bs16_gqa4_hd128_boundaries", DType::F32);
  f.metadata["max_kv_len"] = "16";
  expect_error([&] { case_from_file(f); }, "valid_kv_lens[0] = 32 exceeds max_kv_len 16");
  f = good_case("paged_decode_attention", "prefill_q7_bs16_gqa4_hd128", DType::F32);
  u32(f, "context_lens")[0] = 6;
  expect_error([&] { case_from_file(f); }, "context_lens[0] = 6 is shorter than q_len 7");
}

TEST(PagedValidation, VllmInterleave) {
  const Op& op = op_or_throw("paged_varlen_attention_vllm");
  ParamMap m = {{"num_seqs", "1"}, {"total_q_tokens", "1"}, {"max_kv_len", "4"}, {"num_heads", "2"},
                {"num_kv_heads", "1"}, {"head_dim", "60"}, {"block_size", "16"}, {"max_num_blocks_per_seq", "1"},
                {"x", "8"}};
  expect_error([&] { op.parse(m); }, "head_dim (vLLM's key cache splits it into head_dim / x groups of x): 60 is not a multiple of 8");
  m.erase("x");
  expect_error([&] { op.parse(m); }, "parameter 'x' (vLLM's key interleave, 16 / element bytes) must be given");
  // An F16 pool with F32's x: the shapes agree with x = 4, the element size does not.
  SafetensorsFile f = good_case("paged_varlen_attention_vllm", "mixed3_bs16_gqa4_hd128_x4", DType::F32);
  good_case("paged_varlen_attention_vllm", "mixed3_bs16_gqa4_hd128_x8", DType::F16);  // x = 8 is F16's: loads
  for (const char* t : {"q", "k_pool", "v_pool"}) {
    Tensor h(DType::F16, f.tensors.at(t).shape());
    f.tensors[t] = h;
  }
  f.tensors.erase("expected.out");
  expect_error([&] { case_from_file(f); }, "parameter 'x' is 4, but vLLM's key cache of F16 interleaves 8 elements");
}

TEST(PagedValidation, TilesOutsideTheirSequence) {
  SafetensorsFile f = good_case("paged_varlen_attention_vllm_tiled_q4", "mixed3_bs16_gqa4_hd128_x4", DType::F32);
  u32(f, "tile_seqs")[0] = 3;
  expect_error([&] { case_from_file(f); }, "tile_seqs[0] = 3 is outside [0, 3)");
  f = good_case("paged_varlen_attention_vllm_tiled_q4", "mixed3_bs16_gqa4_hd128_x4", DType::F32);
  const uint32_t s = u32(f, "tile_seqs")[0];
  const uint32_t* cu = u32(f, "cu_seqlens_q");
  u32(f, "tile_starts")[0] = cu[s + 1];
  expect_error([&] { case_from_file(f); }, fmt::format("tile_starts[0] = {} is not a row of sequence {}", cu[s + 1], s));
}

TEST(PagedValidation, ByteOffsetsInsideTheirBuffers) {
  SafetensorsFile f = good_case("split_qkv_norm_rope_into_paged_cache", "byte_offsets_bs32_hd128", DType::F32);
  f.metadata["qkv_byte_offset"] = "258";
  expect_error([&] { case_from_file(f); }, "qkv_byte_offset (in elements of the activation dtype): 258 is not a multiple of 4");
  f.metadata["qkv_byte_offset"] = "256";
  f.metadata["q_out_byte_offset"] = "1000000";
  expect_error([&] { case_from_file(f); }, "q_out: 4 heads x 3 tokens from byte 1000000 need");
}

TEST(PagedValidation, KvDtypesAndScales) {
  SafetensorsFile f = good_case("kv_paged_decode_attention", "I8_gqa4_hd128_bs16_len33", DType::F32);
  const Shape s = f.tensors.at("layer_k_scales").shape();
  f.tensors["layer_k_scales"] = Tensor(DType::F32, {s[0], s[1], s[2] + 1});
  expect_error([&] { case_from_file(f); }, "layer_k_scales");
  f = good_case("kv_paged_decode_attention", "I8_gqa4_hd128_bs16_len33", DType::F32);
  f.tensors["layer_v"] = Tensor(DType::F16, f.tensors.at("layer_v").shape());
  expect_error([&] { case_from_file(f); }, "tensor 'layer_v' has dtype F16, expected I8 (kv_dtype=I8)");
  f = good_case("kv_append_paged", "I8_decode_bs1_hd64", DType::F32);
  f.metadata["kv_dtype"] = "F32";
  expect_error([&] { case_from_file(f); }, "kv_dtype");
}

}  // namespace
}  // namespace ts
