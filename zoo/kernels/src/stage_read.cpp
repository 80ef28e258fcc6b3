// The Hebb read over all stages (zoo/fast/fwp/stage_read.py), per sample and head (bh):
//   forward:  w_u = r_u <a_u, q>,  y = sum_u w_u o_u
//   backward: g_u = <o_u, dy>;  do_u = w_u dy;  dr_u = g_u <a_u, q>;
//             da_u = g_u r_u q;  dq = sum_u g_u r_u a_u
// a (BH, h, U), o (BH, c, U), r (BH, U) with the stage axis U contiguous; q (BH, h), y (BH, c).
// With ``softmax_of`` 1 (a) or 2 (o) that operand holds logits: the read takes their softmax
// over its rows (softmax.h), formed per bh in a local buffer, and its gradient is the logits'.
// Rows [b0, b1) of BH per call.
#include <vector>

#include "lanes.h"
#include "softmax.h"

// alpha[u] = <a_u, q> for a (h, U)
template <typename T>
static void dots(long h, long U, const T* a, const T* q, T* __restrict alpha) {
  zero(alpha, U);
  for (long i = 0; i < h; ++i) {
    const T* __restrict row = a + i * U;
    const T weight = q[i];
#pragma omp simd
    for (long u = 0; u < U; ++u) alpha[u] += row[u] * weight;
  }
}

// bh's operands, the one that holds logits replaced by its softmax in ``probs``
template <typename T> struct Operands {
  const T* a;
  const T* o;
};

template <typename T>
static Operands<T> operands(long h, long c, long U, const T* a, const T* o, long bh,
                            int softmax_of, T* probs) {
  Operands<T> x{a + bh * h * U, o + bh * c * U};
  if (softmax_of == 1) softmax_rows(h, U, U, x.a, probs), x.a = probs;
  if (softmax_of == 2) softmax_rows(c, U, U, x.o, probs), x.o = probs;
  return x;
}

template <typename T>
static void stage_read(long h, long c, long U, const T* a, const T* o, const T* r, const T* q,
                       T* y, int softmax_of, long b0, long b1) {
  std::vector<T> w(U), probs((h > c ? h : c) * U);
  for (long bh = b0; bh < b1; ++bh) {
    const Operands<T> x = operands(h, c, U, a, o, bh, softmax_of, probs.data());
    dots(h, U, x.a, q + bh * h, w.data());
    const T* __restrict rb = r + bh * U;
#pragma omp simd
    for (long u = 0; u < U; ++u) w[u] *= rb[u];
    for (long j = 0; j < c; ++j) y[bh * c + j] = dot(x.o + j * U, w.data(), U);
  }
}

template <typename T>
static void stage_read_backward(long h, long c, long U, const T* a, const T* o, const T* r,
                                const T* q, const T* dy, T* da, T* dout, T* dr, T* dq,
                                int softmax_of, long b0, long b1) {
  std::vector<T> alpha(U), g(U), probs((h > c ? h : c) * U), dprobs(probs.size());
  for (long bh = b0; bh < b1; ++bh) {
    const Operands<T> x = operands(h, c, U, a, o, bh, softmax_of, probs.data());
    const T* __restrict rb = r + bh * U;
    const T* qb = q + bh * h;
    const T* gy = dy + bh * c;
    T* da_b = softmax_of == 1 ? dprobs.data() : da + bh * h * U;
    T* do_b = softmax_of == 2 ? dprobs.data() : dout + bh * c * U;
    dots(h, U, x.a, qb, alpha.data());
    dots(c, U, x.o, gy, g.data());
    for (long j = 0; j < c; ++j) {
      T* __restrict out = do_b + j * U;
#pragma omp simd
      for (long u = 0; u < U; ++u) out[u] = alpha[u] * rb[u] * gy[j];
    }
    T* __restrict drb = dr + bh * U;
#pragma omp simd
    for (long u = 0; u < U; ++u) drb[u] = g[u] * alpha[u], g[u] *= rb[u];
    for (long i = 0; i < h; ++i) {
      T* __restrict out = da_b + i * U;
#pragma omp simd
      for (long u = 0; u < U; ++u) out[u] = g[u] * qb[i];
      dq[bh * h + i] = dot(x.a + i * U, g.data(), U);
    }
    if (softmax_of == 1) softmax_rows_backward(h, U, U, x.a, da_b, da + bh * h * U);
    if (softmax_of == 2) softmax_rows_backward(c, U, U, x.o, do_b, dout + bh * c * U);
  }
}

#define STAGE_READ_EXPORTS(T, suffix)                                                         \
  extern "C" void stage_read_##suffix(long h, long c, long U, const T* a, const T* o,         \
                                      const T* r, const T* q, T* y, int softmax_of, long b0,  \
                                      long b1) {                                              \
    stage_read(h, c, U, a, o, r, q, y, softmax_of, b0, b1);                                   \
  }                                                                                           \
  extern "C" void stage_read_backward_##suffix(long h, long c, long U, const T* a,            \
                                               const T* o, const T* r, const T* q,            \
                                               const T* dy, T* da, T* dout, T* dr, T* dq,     \
                                               int softmax_of, long b0, long b1) {            \
    stage_read_backward(h, c, U, a, o, r, q, dy, da, dout, dr, dq, softmax_of, b0, b1);       \
  }

STAGE_READ_EXPORTS(float, f32)
STAGE_READ_EXPORTS(double, f64)
