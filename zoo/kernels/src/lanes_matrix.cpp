// Per-lane h x h matrices W (h, h, L), lanes innermost (zoo/fast/fwp/lanes_matrix.py):
//   read:        out[s][i][l] = sum_j W[i][j][l] P[s][j][l]     (S, h, L)
//   read (T):    out[s][j][l] = sum_i W[i][j][l] P[s][i][l]
//   rank_update: out[i][j][l] = W[i][j][l] + sum_s c[s] R[s][i][l] P[s][j][l]
// one pass over W per stage, where torch forms the (S, h, h, L) product first. Lanes [l0, l1).
#include "lanes.h"

template <typename T>
static void lanes_read(long S, long h, long L, const T* W, const T* P, T* out, int transposed,
                       long l0, long l1) {
  const long w = l1 - l0;
  for (long s = 0; s < S; ++s) {
    T* o = out + s * h * L + l0;
    const T* p = P + s * h * L + l0;
    for (long i = 0; i < h; ++i) zero(o + i * L, w);
    for (long i = 0; i < h; ++i)
      for (long j = 0; j < h; ++j) {
        const T* m = W + (i * h + j) * L + l0;
        if (transposed)
          add_product(o + j * L, m, p + i * L, T(1), w);
        else
          add_product(o + i * L, m, p + j * L, T(1), w);
      }
  }
}

template <typename T>
static void lanes_rank_update(long S, long h, long L, const T* W, const T* R, const T* P,
                              const T* c, T* out, long l0, long l1) {
  const long w = l1 - l0;
  for (long i = 0; i < h; ++i)
    for (long j = 0; j < h; ++j) {
      T* o = out + (i * h + j) * L + l0;
      assign(o, W + (i * h + j) * L + l0, T(1), w);
      for (long s = 0; s < S; ++s)
        if (c[s] != T(0))
          add_product(o, R + (s * h + i) * L + l0, P + (s * h + j) * L + l0, c[s], w);
    }
}

#define LANES_MATRIX_EXPORTS(T, suffix)                                                      \
  extern "C" void lanes_read_##suffix(long S, long h, long L, const T* W, const T* P, T* out, \
                                      int transposed, long l0, long l1) {                    \
    lanes_read(S, h, L, W, P, out, transposed, l0, l1);                                      \
  }                                                                                          \
  extern "C" void lanes_rank_update_##suffix(long S, long h, long L, const T* W, const T* R, \
                                             const T* P, const T* c, T* out, long l0,        \
                                             long l1) {                                      \
    lanes_rank_update(S, h, L, W, R, P, c, out, l0, l1);                                     \
  }

LANES_MATRIX_EXPORTS(float, f32)
LANES_MATRIX_EXPORTS(double, f64)
