// The folded LayerNorm's 1/sigma per column (zoo/kernels/norm_scale.py), in double:
//   forward:  s_n = 1 / sqrt(x_n^T Q x_n + eps)      X (G, K, N) of T, Q (K, K)
//   backward: dQ = sum_n c_n x_n x_n^T,  c_n = -s_n^3 ds_n / 2
// Columns in blocks of kBlock converted to double once; Q x and the sum of (c x) x^T run
// through the tiles of product.h. Samples [g0, g1) per call, the backward into its own dQ.
#include <cmath>
#include <vector>

#include "product.h"

constexpr long kBlock = 128;

// a block of columns [n0, n0 + w) of X[g] as double (K, kBlock), zero-padded
template <typename T>
static void load_block(long K, long N, const T* X, long n0, long w, double* x) {
  for (long k = 0; k < K; ++k) {
    const T* __restrict from = X + k * N + n0;
    double* __restrict to = x + k * kBlock;
#pragma omp simd
    for (long n = 0; n < kBlock; ++n) to[n] = n < w ? double(from[n]) : 0.0;
  }
}

template <typename T>
static void norm_scale(long K, long N, const double* Q, double eps, const T* X, double* s,
                       long g0, long g1) {
  constexpr int L = Vector<double>::lanes;
  std::vector<double> x(K * kBlock), t(K * kBlock), q(kBlock), pad(K * L, 0.0), part(kRows * L);
  for (long g = g0; g < g1; ++g)
    for (long n0 = 0; n0 < N; n0 += kBlock) {
      const long w = N - n0 < kBlock ? N - n0 : kBlock;
      load_block(K, N, X + g * K * N, n0, w, x.data());
      left_matrix(K, K, kBlock, Q, static_cast<const double*>(nullptr), x.data(), kBlock,
                  t.data(), kBlock, pad.data(), part.data());  // t = Q x
      double* __restrict qs = q.data();
#pragma omp simd
      for (long n = 0; n < kBlock; ++n) qs[n] = eps;
      for (long k = 0; k < K; ++k) {
        const double* __restrict xk = x.data() + k * kBlock;
        const double* __restrict tk = t.data() + k * kBlock;
#pragma omp simd
        for (long n = 0; n < kBlock; ++n) qs[n] += xk[n] * tk[n];
      }
      double* __restrict out = s + g * N + n0;
      for (long n = 0; n < w; ++n) out[n] = 1.0 / std::sqrt(qs[n]);
    }
}

template <typename T>
static void norm_scale_backward(long K, long N, const T* X, const double* s, const double* ds,
                                double* dQ, long g0, long g1) {
  using V = Vector<double>::type;
  std::vector<double> x(K * kBlock), cx(K * kBlock), c(kBlock);
  std::vector<V> acc(K * K, V{});
  for (long g = g0; g < g1; ++g)
    for (long n0 = 0; n0 < N; n0 += kBlock) {
      const long w = N - n0 < kBlock ? N - n0 : kBlock;
      load_block(K, N, X + g * K * N, n0, w, x.data());
      const double* __restrict sg = s + g * N + n0;
      const double* __restrict dsg = ds + g * N + n0;
      for (long n = 0; n < kBlock; ++n) c[n] = n < w ? -0.5 * sg[n] * sg[n] * sg[n] * dsg[n] : 0;
      for (long k = 0; k < K; ++k) {
        const double* __restrict xk = x.data() + k * kBlock;
        double* __restrict ck = cx.data() + k * kBlock;
#pragma omp simd
        for (long n = 0; n < kBlock; ++n) ck[n] = c[n] * xk[n];
      }
      grad_matrix(K, K, kBlock, cx.data(), x.data(), acc.data(), static_cast<V*>(nullptr));
    }
  reduce_lanes(K * K, acc.data(), static_cast<const double*>(nullptr), dQ);
}

#define NORM_SCALE_EXPORTS(T, suffix)                                                        \
  extern "C" void norm_scale_##suffix(long K, long N, const double* Q, double eps,          \
                                      const T* X, double* s, long g0, long g1) {             \
    norm_scale(K, N, Q, eps, X, s, g0, g1);                                                  \
  }                                                                                          \
  extern "C" void norm_scale_backward_##suffix(long K, long N, const T* X, const double* s, \
                                               const double* ds, double* dQ, long g0,        \
                                               long g1) {                                    \
    norm_scale_backward(K, N, X, s, ds, dQ, g0, g1);                                         \
  }

NORM_SCALE_EXPORTS(float, f32)
NORM_SCALE_EXPORTS(double, f64)
