// gemm: out[m, n] = sum_k a[m, k] * b[n, k]. Both operands are k-contiguous.
// A work-group of WX x WY work-items computes a TM x TN tile of out. It stages TK-deep slabs of a
// (as stored, [TM][TK]) and of b (transposed, [TK][TN]) in local memory. Each work-item owns a
// (TM/WY) x (TN/WX) sub-tile, which it walks in register blocks of RM rows x NV vectors of VW
// columns: per k an outer product of RM broadcast a values and NV vectors of b.
//   GPUs: many work-items, one register block each (the sub-tile is the block).
//   CPU drivers: few work-items, several blocks each; the slabs in local memory are then the packed
//   panels of a BLAS macro-kernel and the blocks stay in SIMD registers across the k loop.
//   -DTM -DTN -DTK -DWX -DWY -DRM -DVW -DNV; -DEVEN when m % TM == n % TN == k % TK == 0; -DEVEN_K (a
//   file's own) when only k % TK == 0: a's rows are then staged whole, checked once per row.
// out is written at out[row * ldo + ocol0 + col] (a column range of a wider output).
// A file that includes this one may store b otherwise: it defines B_T (b's element type) and
// STAGE_B(b, bs, col0, k0, n, k, tid), which fills bs[TK][TN] with b[col0 .., k0 ..] transposed
// (zeros past n), every work-item of the group taking its share; B_ARGS (", type name, ...") adds the
// kernel arguments STAGE_B reads besides b.
// A file may also gather and scatter rows (the MoE GEMM): A_AT(row) is the element offset of a's row
// `row` (default row * k), O_AT(row) out's (default row * ldo), and GEMM_PROLOGUE runs first in the
// kernel (after row0, col0 and tid), where it may narrow m, move b, or return for the whole group.
// OUT_VALUE(col, v) is what column `col` (of the range) stores for its F32 result v, before the one
// rounding (default v; linear_bias.cl adds the bias there).
#ifndef A_AT
#define A_AT(row) ((size_t)(row) * k)
#endif
#ifndef O_AT
#define O_AT(row) ((size_t)(row) * ldo)
#endif
#ifndef B_T
#define B_T st_t
#endif
#ifndef B_ARGS
#define B_ARGS
#endif
#ifndef OUT_VALUE
#define OUT_VALUE(col, v) (v)
#define OUT_PLAIN  // the F32 EVEN tile stores whole vectors
#endif
#define vec_t FLOATN(VW)
#define VLOAD VLOADN(VW)
#define VSTORE VSTOREN(VW)
#define RN (NV * VW)
#define SM (TM / WY)  // sub-tile of one work-item
#define SN (TN / WX)
#define NT (WX * WY)
#define APAD 4  // keeps the rows of as off one bank while staying 16-byte aligned

__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void gemm_tiled(__global const st_t* a, __global const B_T* b, __global st_t* out, int m, int n, int k, int ldo,
                int ocol0 B_ARGS) {
  __local float as[TM][TK + APAD];
  __local float bs[TK][TN];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int tid = ly * WX + lx;
  const int row0 = get_group_id(1) * TM, col0 = get_group_id(0) * TN;
#ifdef GEMM_PROLOGUE
  GEMM_PROLOGUE
#endif

  vec_t acc[SM][SN / VW];
  for (int i = 0; i < SM; ++i)
    for (int v = 0; v < SN / VW; ++v) acc[i][v] = (vec_t)(0.0f);

  for (int k0 = 0; k0 < k; k0 += TK) {
    // Four consecutive k per work-item, consecutive work-items along k: coalesced reads.
    for (int e = tid; e < TM * TK / 4; e += NT) {
      const int r = e / (TK / 4), c = (e % (TK / 4)) * 4;
#ifdef EVEN
      vstore4(LD4(a, A_AT(row0 + r) + k0 + c), 0, &as[r][c]);
#elif defined(EVEN_K)
      vstore4(row0 + r < m ? LD4(a, A_AT(row0 + r) + k0 + c) : (float4)(0.0f), 0, &as[r][c]);
#else
      for (int q = 0; q < 4; ++q)
        as[r][c + q] = (row0 + r < m && k0 + c + q < k) ? LD(a, A_AT(row0 + r) + k0 + c + q) : 0.0f;
#endif
    }
#ifdef STAGE_B
    STAGE_B(b, &bs[0][0], col0, k0, n, k, tid);
#else
    for (int e = tid; e < TN * TK / 4; e += NT) {
      const int r = e / (TK / 4), c = (e % (TK / 4)) * 4;
#ifdef EVEN
      const float4 x = LD4(b, (size_t)(col0 + r) * k + k0 + c);
      bs[c][r] = x.s0;
      bs[c + 1][r] = x.s1;
      bs[c + 2][r] = x.s2;
      bs[c + 3][r] = x.s3;
#else
      for (int q = 0; q < 4; ++q)
        bs[c + q][r] = (col0 + r < n && k0 + c + q < k) ? LD(b, (size_t)(col0 + r) * k + k0 + c + q) : 0.0f;
#endif
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int bi = 0; bi < SM; bi += RM)
      for (int bj = 0; bj < SN; bj += RN) {
        // The register block: fully unrolled so that it lives in registers across the k loop.
        vec_t c[RM][NV];
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int v = 0; v < NV; ++v) c[i][v] = acc[bi + i][bj / VW + v];
        __local const float* ap = &as[ly * SM + bi][0];
        __local const float* bp = &bs[0][lx * SN + bj];
        for (int kk = 0; kk < TK; ++kk) {
          vec_t bv[NV];
#pragma unroll
          for (int v = 0; v < NV; ++v) bv[v] = VLOAD(0, bp + kk * TN + v * VW);
#pragma unroll
          for (int i = 0; i < RM; ++i) {
            const vec_t av = (vec_t)(ap[i * (TK + APAD) + kk]);
#pragma unroll
            for (int v = 0; v < NV; ++v) c[i][v] = fma(av, bv[v], c[i][v]);
          }
        }
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int v = 0; v < NV; ++v) acc[bi + i][bj / VW + v] = c[i][v];
      }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int i = 0; i < SM; ++i) {
    const int row = row0 + ly * SM + i;
#ifndef EVEN
    if (row >= m) continue;
#endif
    __global st_t* orow = out + O_AT(row) + ocol0;
    for (int v = 0; v < SN / VW; ++v) {
      const int col = col0 + lx * SN + v * VW;
#if defined(EVEN) && defined(DT_F32) && defined(OUT_PLAIN)
      VSTORE(acc[i][v], 0, orow + col);
#else
      float r[VW];
      VSTORE(acc[i][v], 0, r);
      for (int q = 0; q < VW; ++q) {
#ifndef EVEN
        if (col + q < n)
#endif
          ST(orow, col + q, OUT_VALUE(col + q, r[q]));
      }
#endif
    }
  }
}
