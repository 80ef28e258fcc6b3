// The folded LayerNorm's 1/sigma per column (zoo/kernels/norm_scale.py), in double:
//   forward:  s_n = 1 / sqrt(x_n^T Q x_n + eps)      X (G, K, N) of T, Q (K, K)
//   backward: dQ = sum_n c_n x_n x_n^T,  c_n = -s_n^3 ds_n / 2
// The columns of samples [g0, g1) are taken as one run j = g N + n (the layout of s), in
// blocks of kBlock converted to double once, so a few columns per sample (an adjoint step's
// stages) fill a block as well as many do; Q x and the sum of (c x) x^T run through the
// tiles of product.h. The backward sums into its own dQ.
#include <cmath>
#include <vector>

#include "product.h"

constexpr long kBlock = 128;

// columns [j0, j0 + w) of the run as double (K, kBlock), zero-padded: each sample's part of
// the block is a contiguous stretch of every row of X[g]
template <typename T>
static void load_block(long K, long N, const T* X, long j0, long w, double* x) {
  for (long j = j0, to = 0; to < w;) {
    const long g = j / N, n = j % N, run = N - n < w - to ? N - n : w - to;
    for (long k = 0; k < K; ++k) {
      const T* __restrict from = X + (g * K + k) * N + n;
      double* __restrict into = x + k * kBlock + to;
#pragma omp simd
      for (long i = 0; i < run; ++i) into[i] = double(from[i]);
    }
    j += run, to += run;
  }
  for (long k = 0; k < K; ++k)
    for (long n = w; n < kBlock; ++n) x[k * kBlock + n] = 0.0;
}

template <typename T>
static void norm_scale(long K, long N, const double* Q, double eps, const T* X, double* s,
                       long g0, long g1) {
  std::vector<double> x(K * kBlock), t(K * kBlock), q(kBlock), pad(K * Vector<double>::lanes),
      part(kRows * Vector<double>::lanes);
  for (long j0 = g0 * N; j0 < g1 * N; j0 += kBlock) {
    const long w = g1 * N - j0 < kBlock ? g1 * N - j0 : kBlock;
    load_block(K, N, X, j0, w, x.data());
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
    for (long n = 0; n < w; ++n) s[j0 + n] = 1.0 / std::sqrt(qs[n]);
  }
}

template <typename T>
static void norm_scale_backward(long K, long N, const T* X, const double* s, const double* ds,
                                double* dQ, long g0, long g1) {
  using V = Vector<double>::type;
  std::vector<double> x(K * kBlock), cx(K * kBlock), c(kBlock);
  std::vector<V> acc(K * K, V{});
  for (long j0 = g0 * N; j0 < g1 * N; j0 += kBlock) {
    const long w = g1 * N - j0 < kBlock ? g1 * N - j0 : kBlock;
    load_block(K, N, X, j0, w, x.data());
    for (long n = 0; n < kBlock; ++n)
      c[n] = n < w ? -0.5 * s[j0 + n] * s[j0 + n] * s[j0 + n] * ds[j0 + n] : 0;
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
