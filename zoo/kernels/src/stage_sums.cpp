// Contractions of per-stage h-vectors V (U, h, L), lanes innermost (zoo/fast/fwp/stage_sums.py):
//   stage_sum: out[r][l] = sum_u V[u][r][l] c[u][l]     (U, L) -> (h, L)
//   stage_dot: out[u][l] = sum_r V[u][r][l] q[r][l]     (h, L) -> (U, L)
// one pass over V each, where torch forms the (U, h, L) product first. Lanes [l0, l1) per call.
#include "lanes.h"

template <typename T>
static void stage_sum(long U, long h, long L, const T* V, const T* c, T* out, long l0, long l1) {
  const long w = l1 - l0;
  for (long r = 0; r < h; ++r) zero(out + r * L + l0, w);
  for (long u = 0; u < U; ++u)
    for (long r = 0; r < h; ++r)
      add_product(out + r * L + l0, V + (u * h + r) * L + l0, c + u * L + l0, T(1), w);
}

template <typename T>
static void stage_dot(long U, long h, long L, const T* V, const T* q, T* out, long l0, long l1) {
  const long w = l1 - l0;
  for (long u = 0; u < U; ++u) {
    zero(out + u * L + l0, w);
    for (long r = 0; r < h; ++r)
      add_product(out + u * L + l0, V + (u * h + r) * L + l0, q + r * L + l0, T(1), w);
  }
}

#define STAGE_SUMS_EXPORTS(T, suffix)                                                         \
  extern "C" void stage_sum_##suffix(long U, long h, long L, const T* V, const T* c, T* out, \
                                     long l0, long l1) {                                    \
    stage_sum(U, h, L, V, c, out, l0, l1);                                                  \
  }                                                                                         \
  extern "C" void stage_dot_##suffix(long U, long h, long L, const T* V, const T* q, T* out, \
                                     long l0, long l1) {                                    \
    stage_dot(U, h, L, V, q, out, l0, l1);                                                  \
  }

STAGE_SUMS_EXPORTS(float, f32)
STAGE_SUMS_EXPORTS(double, f64)
