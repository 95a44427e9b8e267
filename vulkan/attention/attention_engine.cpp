// The attention engine's planning (attention.comp): the grid, the key split and the combine of
// every attention op on Vulkan (vulkan/attention/attention_engine.h).
#include "vulkan/attention/attention_engine.h"

#include "vulkan/shaders/attention_push.glsl"

#include <algorithm>
#include <bit>
#include <initializer_list>
#include <cstdlib>
#include <string_view>

#include "core/unsupported.h"
#include "vulkan/runtime/pipelines.h"

namespace ts::vk {

static_assert(sizeof(AttnPush) <= kPushBytes, "attention.comp's push block is above the 128 bytes every device takes");

namespace {
// attention.comp's compile-time limits per variant: HD_MAX, BQ, BK.
constexpr int64_t kFaMaxDim = 256, kFaRows = 8, kFaKeys = 16;
constexpr int64_t kMlaMaxDim = 576, kMlaRows = 4, kMlaKeys = 8;

// Shared memory of attention.comp: sq_, skv, sp, sm / sl / scorr, srange, skb / svb / sks / svs.
constexpr uint64_t shared_bytes(int64_t hd, int64_t bq, int64_t bk) {
  return 4 * static_cast<uint64_t>(bq * hd + bk * hd + bq * bk + 5 * bq + 4 * bk);
}

// attention_decode.comp's limits: query rows per work group, invocations, rounds of loads per tile
// (the default, and the most its arrays hold: NR_MAX), elements of a row per invocation, and its
// shared memory (red, sp, smx / ssum, srange, the staged rows).
constexpr int64_t kDecodeRows = 4, kDecodeWg = 128, kDecodeRounds = 8, kDecodeLaneElems = 8;
constexpr int64_t kDecodeMinTiles = 2;  // tiles a key piece holds at least
constexpr int64_t kDecodeKeysMax = kDecodeRounds * kDecodeWg / kDecodeLaneElems;
constexpr uint64_t kDecodeShared =
    4 * static_cast<uint64_t>(kDecodeRows * (kDecodeRounds * kDecodeWg + kDecodeKeysMax) + kDecodeRows * kDecodeKeysMax +
                              2 * kDecodeRows * kDecodeKeysMax / 4 + 2 * kDecodeRows + 4 * kDecodeKeysMax);

// Tuning knob `name`'s value: one of `allowed`, or `unset` when it is not set. Any other value is an
// error where a plan is made (`strict`), and `bad` in a description, which never throws.
std::string_view knob(const char* name, std::initializer_list<std::string_view> allowed, std::string_view unset,
                      std::string_view bad, const char* want, bool strict) {
  const char* env = std::getenv(name);
  if (!env) return unset;
  const bool valid = std::find(allowed.begin(), allowed.end(), std::string_view(env)) != allowed.end();
  check(valid || !strict, "{}={}: want {}", name, env, want);
  return valid ? std::string_view(env) : bad;
}

// The decode kernel's shape for one attention: its keys per tile and rounds of loads per tile (its
// NR); keys 0 where attention.comp takes the attention.
struct DecodeShape {
  int64_t keys = 0, rounds = 0;
};

// Whether attention_decode.comp takes this attention: a few query rows per (sequence, kv head) (a
// decode step's GQA group, or a few positions of one: at most four work groups), one key part of
// 64, 128 or 256 channels for keys and values alike, rows starting at multiples of 8 elements, ferrum
// or affine rows, a per-sequence mode, and subgroup arithmetic whose subgroups divide a tile's keys.
// Knobs (tests, tuning): TOUCHSTONE_VULKAN_ATTN_DECODE=0 keeps every case on attention.comp;
// TOUCHSTONE_VULKAN_ATTN_ROUNDS=2|4|8 sets the rounds (8).
DecodeShape decode_shape(const Target& tg, const Attn& a, bool mla, bool ragged, int64_t rows, bool strict = true) {
  // A description with a bad value says the general kernel: a plan would not be made.
  if (knob("TOUCHSTONE_VULKAN_ATTN_DECODE", {"0", "1"}, "1", "0", "0 (attention.comp only) or 1", strict) == "0")
    return {};
  const int64_t rounds =
      std::stoll(std::string(knob("TOUCHSTONE_VULKAN_ATTN_ROUNDS", {"2", "4", "8"}, "8", "8", "2, 4 or 8", strict)));
  const int64_t d = a.dqk;
  if (mla || ragged || a.addr == KvAddr::VLLM || a.dk1 != d || a.dv != d || rows > 4 * kDecodeRows) return {};
  if (d != 64 && d != 128 && d != 256) return {};
  const auto aligned = [](int64_t x) { return x % kDecodeLaneElems == 0; };
  if (a.addr == KvAddr::AFFINE && !(aligned(a.k1_hs) && aligned(a.v_hs) && aligned(a.k1_rs) && aligned(a.v_rs)))
    return {};
  const int64_t keys = rounds * kDecodeWg / (d / kDecodeLaneElems), sg = tg.subgroup_size;
  // A tile's (key, row) pairs cover the work group at least once; its subgroups each take one row's.
  if (keys * kDecodeRows < kDecodeWg) return {};
  if (!tg.subgroups || sg < 4 || sg > keys || keys % sg != 0 || kDecodeShared > tg.max_shared) return {};
  return {keys, rounds};
}

// Pieces hold at least this many keys (a multiple of both variants' BK): below it the state a piece
// writes (dv + 2 floats per row) nears the K/V bytes it summarises.
constexpr int64_t kMinPieceKeys = 32;

struct Split {
  int64_t piece_keys = kNoIndex, pieces = 1;  // ~0, 1: no split
};

// Key split (flash decoding): pieces of the key range [0, keys), each a multiple of `multiple` keys
// and at least min_keys, that bring a grid of `groups` work groups up to the device's fill_groups;
// none when the grid already fills it or the keys make one piece.
Split key_split(int64_t groups, int64_t keys, const Target& tg, int64_t multiple, int64_t min_keys) {
  if (const char* env = std::getenv("TOUCHSTONE_VULKAN_ATTN_PIECE")) {  // tests and tuning; 0 never splits
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    check(*env && !*end && n >= 0, "TOUCHSTONE_VULKAN_ATTN_PIECE={}: want a key count (0: no split)", env);
    const int64_t piece = ceil_div(n, multiple) * multiple;
    if (piece == 0 || piece >= keys) return {};
    return {piece, ceil_div(keys, piece)};
  }
  if (groups >= tg.fill_groups || keys <= multiple) return {};
  const int64_t piece =
      std::max(min_keys, ceil_div(ceil_div(keys, ceil_div(tg.fill_groups, groups)), multiple) * multiple);
  if (piece >= keys) return {};
  return {piece, ceil_div(keys, piece)};
}

void check_grid(const Dispatch& d, const Target& tg) {
  supported_only_if(d.groups[0] <= tg.max_groups[0] && d.groups[1] <= tg.max_groups[1] && d.groups[2] <= tg.max_groups[2],
        "vulkan attention: grid {}x{}x{} of {} is above the device's limits", d.groups[0], d.groups[1], d.groups[2],
        d.shader);
}

}  // namespace

int64_t decode_tile_keys(const Target& tg, int64_t head_dim, int64_t group) {
  const Attn a{.nh = group, .nkv = 1, .dqk = head_dim, .dk1 = head_dim, .dv = head_dim, .addr = KvAddr::FERRUM};
  return decode_shape(tg, a, false, false, group, false).keys;
}

std::vector<Dispatch> attn(const Target& tg, const Attn& a, bool mla) {
  const int64_t max_dim = mla ? kMlaMaxDim : kFaMaxDim, rows = mla ? kMlaRows : kFaRows;
  check(a.dqk <= max_dim && a.dv <= max_dim, "vulkan attention: head dim {} is above the kernel's {}",
        std::max(a.dqk, a.dv), max_dim);
  const uint64_t shared = mla ? shared_bytes(kMlaMaxDim, kMlaRows, kMlaKeys) : shared_bytes(kFaMaxDim, kFaRows, kFaKeys);
  check(shared <= tg.max_shared, "vulkan attention: the kernel needs {} bytes of shared memory, the device has {}",
        shared, tg.max_shared);
  const int64_t group = a.nh / a.nkv;
  // Row blocks per (sequence, kv head) and sequences (grid z); the ragged modes run one flat list of
  // every sequence's blocks (grid z 1), as many as total_q rows of `batch` sequences can make at most:
  // sum ceil(group n_s / rows) <= (group total_q + batch (rows - 1)) / rows, and a block holds a row.
  // That is the longest step's grid plus at most a block per sequence, never the longest sequence's
  // blocks for every sequence; the shader finds each block's sequence from cu_seqlens_q.
  const bool ragged = a.seqs == Seqs::VARLEN || a.seqs == Seqs::FA2;
  int64_t nrows = group * a.q_len, blocks = ceil_div(nrows, rows), zs = a.batch;
  if (ragged) {
    const int64_t all = group * a.total_q;
    nrows = 0, zs = 1, blocks = std::min(all, (all + a.batch * (rows - 1)) / rows);
  }
  const DecodeShape dec = decode_shape(tg, a, mla, ragged, nrows);
  const int64_t tile_keys = dec.keys;
  if (tile_keys > 0) blocks = ceil_div(nrows, kDecodeRows);
  if (blocks == 0) return {};  // no query row: nothing to write
  const bool lens = a.seqs != Seqs::UNIFORM || !a.kv_lens.empty();
  const int64_t keys = lens ? a.capacity : a.kv_len;
  supported_only_if(keys <= 0xffffffffll, "vulkan attention: up to {} keys, past the kernels' 32-bit key indices", keys);
  // A decode work group's piece is whole tiles, two at least: its first tile pays the row lookups'
  // latency, the next ones find them fetched (on an H200, pieces of one tile took 1.25x the time of
  // pieces of two at kv decode ctx4096 F16). attention.comp's pieces are kMinPieceKeys at least.
  const Split sp = tile_keys > 0 ? key_split(blocks * a.nkv * zs, keys, tg, tile_keys, kDecodeMinTiles * tile_keys)
                                 : key_split(blocks * a.nkv * zs, keys, tg, kMinPieceKeys, kMinPieceKeys);
  check(a.x > 0 && (a.x & (a.x - 1)) == 0, "vulkan attention: vLLM's x = {} is not a power of two", a.x);
  const int64_t x_shift = std::countr_zero(static_cast<uint64_t>(a.x));
  Dispatch d;
  if (tile_keys > 0) {
    d.shader = tg.variant(a.packed ? Kernel::attn_decode_kv : Kernel::attn_decode);
    // KV_KIND (a pipeline per pool kind; unused by the plain build), then NR.
    d.spec = {a.packed ? static_cast<uint32_t>(a.kind) : 0u, static_cast<uint32_t>(dec.rounds)};
  } else {
    d.shader = tg.variant(mla ? Kernel::attn_mla : a.packed ? Kernel::attn_kv : Kernel::attn_fa);
  }
  // Bindings a case does not use are bound to q (never read) or the output (never written).
  auto or_q = [&](const std::string& t) { return t.empty() ? a.q : t; };
  d.bindings = {a.q, a.k1, a.k2, a.v, a.out, or_q(a.kv_lens), a.q, or_q(a.seq2), or_q(a.tables),
                a.lse.empty() ? a.out : a.lse, or_q(a.k_scales), or_q(a.v_scales), or_q(a.tile_seqs),
                or_q(a.tile_starts)};
  if (sp.pieces > 1) {
    // A state per (row, piece): rows per (sequence, kv head) slot, or the ragged modes' output rows.
    const uint64_t states = ragged ? 1ull * a.total_q * a.nh : 1ull * a.batch * a.nkv * nrows;
    const uint64_t bytes = 4ull * states * sp.pieces * (a.dv + 2);
    supported_only_if(bytes <= tg.max_range, "vulkan attention: the key split's scratch of {} bytes is above the device's "
          "maxStorageBufferRange ({})", bytes, tg.max_range);
    d.bindings[6] = Binding::scratch_buffer("attention.pieces", bytes);
  }
  AttnPushIn pc;
  pc.q_len = a.q_len, pc.kv_len = a.kv_len, pc.pos_offset = a.pos_offset, pc.nh = a.nh, pc.nkv = a.nkv;
  pc.group = group, pc.dqk = a.dqk, pc.dk1 = a.dk1, pc.dv = a.dv, pc.causal = a.causal ? 1 : 0, pc.window = a.window;
  pc.k1_hs = a.k1_hs, pc.k2_hs = a.k2_hs, pc.v_hs = a.v_hs, pc.k1_rs = a.k1_rs, pc.v_rs = a.v_rs, pc.scale = a.scale;
  pc.q_off = a.q_off, pc.o_off = a.o_off, pc.kv_len_index = a.kv_len_index;
  pc.piece_keys = sp.piece_keys, pc.npieces = sp.pieces, pc.block_size = a.block_size, pc.width = a.width;
  pc.rows_cap = nrows, pc.total_q = a.total_q, pc.addr = static_cast<uint32_t>(a.addr);
  pc.seqs = static_cast<uint32_t>(a.seqs), pc.x_shift = x_shift, pc.kv_kind = static_cast<uint32_t>(a.kind);
  pc.nseqs = a.batch, pc.q_tm = a.q_token_major ? 1 : 0;
  d.push = push_words(pc);
  d.groups = {static_cast<uint32_t>(blocks * sp.pieces), static_cast<uint32_t>(a.nkv), static_cast<uint32_t>(zs)};
  check_grid(d, tg);
  std::vector<Dispatch> out{d};
  if (sp.pieces > 1) {
    d.shader = tg.variant(Kernel::attn_combine);
    d.spec.clear();  // one combine pipeline for every pool kind
    // A work group per (row, kv head, sequence), or per (token, head) in the ragged modes.
    d.groups = ragged ? std::array<uint32_t, 3>{static_cast<uint32_t>(a.total_q), static_cast<uint32_t>(a.nh), 1}
                      : std::array<uint32_t, 3>{static_cast<uint32_t>(nrows), static_cast<uint32_t>(a.nkv),
                                                static_cast<uint32_t>(a.batch)};
    check_grid(d, tg);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace ts::vk
