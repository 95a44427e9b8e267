#pragma once
// The reference's one softmax attention of a query row, shared by the core attention ops and the
// paged ones (which first gather a sequence's keys and values out of the pool).
#include <cstdint>

namespace ts::ref {

// out[0, hd) = softmax(scale * q.k_j) . v_j over the n rows j of k and v ([n, hd] each), in double;
// zeros when n == 0. Returns the natural log of the sum of exp(scale * q.k_j) (-inf when n == 0).
double attend_rows(const double* q, const double* k, const double* v, int64_t n, int64_t hd, double scale,
                   double* out);
// The same with a key in two parts, each row of k [dk1 | dk2], the score scale * (q[:dk1].k1 + q[dk1:].k2)
// (the parts' dots added: MLA's latent and rope keys), value rows of dv.
double attend_rows(const double* q, const double* k, int64_t dk1, int64_t dk2, const double* v, int64_t dv, int64_t n,
                   double scale, double* out);

}  // namespace ts::ref
