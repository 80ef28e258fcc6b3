// Products of a batch of matrices with one shared matrix (zoo/kernels/shared_product.py):
//   left:  out[g] = A X[g] + bias 1^T          A (M, K), X (G, K, N), out (G, M, N)
//   grad:  dA = sum_g Y[g] X[g]^T, dbias = sum_g Y[g] 1      Y (G, M, N); bias, dbias may be null
// with the register tiles of product.h. Samples [g0, g1) (left) or rows [m0, m1) of A (grad)
// per call, so threads share nothing.
#include <vector>

#include "product.h"

template <typename T>
static void left(long M, long K, long N, const T* A, const T* bias, const T* X, T* out,
                 long g0, long g1) {
  constexpr int L = Vector<T>::lanes;
  std::vector<T> pad(K * L, T(0)), part(kRows * L);
  for (long g = g0; g < g1; ++g)
    left_matrix(M, K, N, A, bias, X + g * K * N, N, out + g * M * N, N, pad.data(), part.data());
}

// rows [m0, m1) of dA and dbias: per sample, the tiles add the full vectors of n to lane-wise
// partial sums (in cache across samples), and the last partial vector of n adds to scalar ones
template <typename T>
static void grad(long G, long M, long K, long N, const T* Y, const T* X, T* dA, T* dbias,
                 long m0, long m1) {
  using V = typename Vector<T>::type;
  constexpr int L = Vector<T>::lanes;
  const long rows = m1 - m0, full = N - N % L;
  std::vector<V> acc(rows * K, V{}), sums(rows, V{});
  std::vector<T> tail(rows * K, T(0)), tail_sums(rows, T(0));
  for (long g = 0; g < G; ++g) {
    const T* Yg = Y + (g * M + m0) * N;
    const T* Xg = X + g * K * N;
    grad_matrix(rows, K, N, Yg, Xg, acc.data(), dbias ? sums.data() : nullptr);
    for (long r = 0; r < rows; ++r)
      for (long n = full; n < N; ++n) {
        for (long k = 0; k < K; ++k) tail[r * K + k] += Yg[r * N + n] * Xg[k * N + n];
        tail_sums[r] += Yg[r * N + n];
      }
  }
  reduce_lanes(rows * K, acc.data(), tail.data(), dA + m0 * K);
  if (dbias) reduce_lanes(rows, sums.data(), tail_sums.data(), dbias + m0);
}

#define SHARED_PRODUCT_EXPORTS(T, suffix)                                                     \
  extern "C" void left_##suffix(long M, long K, long N, const T* A, const T* bias,          \
                                const T* X, T* out, long g0, long g1) {                      \
    left(M, K, N, A, bias, X, out, g0, g1);                                                  \
  }                                                                                          \
  extern "C" void grad_##suffix(long G, long M, long K, long N, const T* Y, const T* X,     \
                                T* dA, T* dbias, long m0, long m1) {                        \
    grad(G, M, K, N, Y, X, dA, dbias, m0, m1);                                               \
  }

SHARED_PRODUCT_EXPORTS(float, f32)
SHARED_PRODUCT_EXPORTS(double, f64)
