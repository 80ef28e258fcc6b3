// The folded LayerNorm's 1/sigma per column (zoo/fast/norm_scale.py), in double:
//   forward:  s_n = 1 / sqrt(x_n^T Q x_n + eps)      X (G, K, N) of T, Q (K, K)
//   backward: dQ = sum_n c_n x_n x_n^T,  c_n = -s_n^3 ds_n / 2
// Each runs over the K (K + 1) / 2 pairs i <= j (dQ is symmetric). Columns in blocks of kBlock,
// converted to double once, vectorised along the block; samples [g0, g1) per call, the backward
// into its own dQ.
#include <cmath>
#include <cstring>
#include <vector>

constexpr long kBlock = 128;

// a block of columns [n0, n0 + w) of X[g] as double (K, kBlock), zero-padded
template <typename T>
static void load(long K, long N, const T* X, long n0, long w, double* x) {
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
  std::vector<double> x(K * kBlock), q(kBlock), t(kBlock);
  for (long g = g0; g < g1; ++g)
    for (long n0 = 0; n0 < N; n0 += kBlock) {
      const long w = N - n0 < kBlock ? N - n0 : kBlock;
      load(K, N, X + g * K * N, n0, w, x.data());
      double* __restrict qs = q.data();
      std::memset(qs, 0, kBlock * sizeof(double));
      for (long i = 0; i < K; ++i) {  // q += x_i (Q_ii x_i + sum_{j > i} (Q_ij + Q_ji) x_j)
        const double* __restrict xi = x.data() + i * kBlock;
        double* __restrict ts = t.data();
#pragma omp simd
        for (long n = 0; n < kBlock; ++n) ts[n] = Q[i * K + i] * xi[n];
        for (long j = i + 1; j < K; ++j) {
          const double* __restrict xj = x.data() + j * kBlock;
          const double pair = Q[i * K + j] + Q[j * K + i];
#pragma omp simd
          for (long n = 0; n < kBlock; ++n) ts[n] += pair * xj[n];
        }
#pragma omp simd
        for (long n = 0; n < kBlock; ++n) qs[n] += xi[n] * ts[n];
      }
      double* __restrict out = s + g * N + n0;
      for (long n = 0; n < w; ++n) out[n] = 1.0 / std::sqrt(qs[n] + eps);
    }
}

template <typename T>
static void norm_scale_backward(long K, long N, const T* X, const double* s, const double* ds,
                                double* dQ, long g0, long g1) {
  std::vector<double> x(K * kBlock), cx(kBlock), acc(K * K, 0.0);
  for (long g = g0; g < g1; ++g)
    for (long n0 = 0; n0 < N; n0 += kBlock) {
      const long w = N - n0 < kBlock ? N - n0 : kBlock;
      load(K, N, X + g * K * N, n0, w, x.data());
      const double* __restrict sg = s + g * N + n0;
      const double* __restrict dsg = ds + g * N + n0;
      double c[kBlock] = {};
      for (long n = 0; n < w; ++n) c[n] = -0.5 * sg[n] * sg[n] * sg[n] * dsg[n];
      for (long i = 0; i < K; ++i) {
        const double* __restrict xi = x.data() + i * kBlock;
        double* __restrict ci = cx.data();
#pragma omp simd
        for (long n = 0; n < kBlock; ++n) ci[n] = c[n] * xi[n];
        for (long j = i; j < K; ++j) {
          const double* __restrict xj = x.data() + j * kBlock;
          double sum = 0.0;
#pragma omp simd reduction(+ : sum)
          for (long n = 0; n < kBlock; ++n) sum += ci[n] * xj[n];
          acc[i * K + j] += sum;
        }
      }
    }
  for (long i = 0; i < K; ++i)
    for (long j = 0; j < K; ++j) dQ[i * K + j] = i <= j ? acc[i * K + j] : acc[j * K + i];
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
