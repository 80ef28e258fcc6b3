// Register-tiled products with the contiguous axis n vectorised, shared by the kernels that
// multiply by a small shared matrix (shared_product.cpp, layer_read.cpp):
//   left:  out = A X + bias 1^T     A (M, K), X (K, N), out (M, N)
//   grad:  acc += Y X^T, sums += Y 1 (lane-wise partial sums)     Y (M, N), X (K, N)
// Tiles of rows of A by vectors along n (left), or rows of Y by rows of X (grad); smaller tiles
// take the edges.
#pragma once
#include <cstring>

// tile sizes that keep the accumulators and operands in the 32 (AVX-512) or 16 vector registers
#ifdef __AVX512F__
constexpr int kBytes = 64, kTileVectors = 4, kGradRows = 6, kGradCols = 4;
#else
constexpr int kBytes = 32, kTileVectors = 2, kGradRows = 3, kGradCols = 3;
#endif
constexpr int kRows = 6;  // left: rows of A per tile (fewer for the last ones)
// grad: kGradRows rows of Y by kGradCols rows of X per tile

template <typename T> struct Vector {
  typedef T type __attribute__((vector_size(kBytes)));
  static constexpr int lanes = kBytes / sizeof(T);
};

template <typename T> static inline typename Vector<T>::type load(const T* p) {
  typename Vector<T>::type v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T> static inline void store(T* p, typename Vector<T>::type v) {
  std::memcpy(p, &v, sizeof v);
}

// out[i][j L + l] = bias[i] + sum_k A[i][k] X[k][j L + l] for i < R, j < NV (A, bias at the
// tile's first row; X and out at its first column, rows ldx and ldo apart)
template <typename T, int R, int NV>
static inline void left_tile(long K, const T* A, const T* bias, const T* X, long ldx, T* out,
                             long ldo) {
  using V = typename Vector<T>::type;
  constexpr int L = Vector<T>::lanes;
  V acc[R][NV];
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < NV; ++j) acc[i][j] = V{} + (bias ? bias[i] : T(0));
  for (long k = 0; k < K; ++k) {
    V x[NV];
    for (int j = 0; j < NV; ++j) x[j] = load(X + k * ldx + j * L);
    for (int i = 0; i < R; ++i) {
      const T a = A[i * K + k];
      for (int j = 0; j < NV; ++j) acc[i][j] += a * x[j];
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < NV; ++j) store(out + i * ldo + j * L, acc[i][j]);
}

// rows [m0, m0 + R) of out: tiles of kTileVectors vectors, then of two and one, then the last
// partial vector through zero-padded copies (``pad``: K vectors, ``part``: R vectors)
template <typename T, int R>
static void left_rows(long K, long N, const T* A, const T* bias, const T* X, long ldx, T* out,
                      long ldo, long m0, T* pad, T* part) {
  constexpr int L = Vector<T>::lanes;
  constexpr long W = kTileVectors * L;
  A += m0 * K;
  bias = bias ? bias + m0 : nullptr;
  out += m0 * ldo;
  long n = 0;
  for (; n + W <= N; n += W) left_tile<T, R, kTileVectors>(K, A, bias, X + n, ldx, out + n, ldo);
  for (; n + 2 * L <= N; n += 2 * L) left_tile<T, R, 2>(K, A, bias, X + n, ldx, out + n, ldo);
  for (; n + L <= N; n += L) left_tile<T, R, 1>(K, A, bias, X + n, ldx, out + n, ldo);
  if (n == N) return;
  const long rest = N - n;
  for (long k = 0; k < K; ++k) std::memcpy(pad + k * L, X + k * ldx + n, rest * sizeof(T));
  left_tile<T, R, 1>(K, A, bias, pad, L, part, L);
  for (int i = 0; i < R; ++i) std::memcpy(out + i * ldo + n, part + i * L, rest * sizeof(T));
}

// out = A X + bias 1^T for all M rows (``pad``: K vectors, ``part``: kRows vectors of scratch)
template <typename T>
static void left_matrix(long M, long K, long N, const T* A, const T* bias, const T* X, long ldx,
                        T* out, long ldo, T* pad, T* part) {
  long m0 = 0;
  for (; m0 + kRows <= M; m0 += kRows)
    left_rows<T, kRows>(K, N, A, bias, X, ldx, out, ldo, m0, pad, part);
  switch (M - m0) {
    case 5: left_rows<T, 5>(K, N, A, bias, X, ldx, out, ldo, m0, pad, part); break;
    case 4: left_rows<T, 4>(K, N, A, bias, X, ldx, out, ldo, m0, pad, part); break;
    case 3: left_rows<T, 3>(K, N, A, bias, X, ldx, out, ldo, m0, pad, part); break;
    case 2: left_rows<T, 2>(K, N, A, bias, X, ldx, out, ldo, m0, pad, part); break;
    case 1: left_rows<T, 1>(K, N, A, bias, X, ldx, out, ldo, m0, pad, part); break;
  }
}

// acc[i][j] += sum over the full vectors of n of Y[i][n] X[j][n] (a vector of partial sums per
// pair, added up across lanes at the end), sums[i] += the same of Y[i][n] when given
template <typename T, int R, int C>
static inline void grad_tile(long N, const T* Y, const T* X, typename Vector<T>::type* acc,
                             long K, typename Vector<T>::type* sums) {
  using V = typename Vector<T>::type;
  constexpr int L = Vector<T>::lanes;
  V a[R][C], s[R];
  for (int i = 0; i < R; ++i) {
    for (int j = 0; j < C; ++j) a[i][j] = acc[i * K + j];
    if (sums) s[i] = sums[i];
  }
  for (long n = 0; n + L <= N; n += L) {
    V y[R], x[C];
    for (int i = 0; i < R; ++i) y[i] = load(Y + i * N + n);
    for (int j = 0; j < C; ++j) x[j] = load(X + j * N + n);
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) a[i][j] += y[i] * x[j];
    if (sums)
      for (int i = 0; i < R; ++i) s[i] += y[i];
  }
  for (int i = 0; i < R; ++i) {
    for (int j = 0; j < C; ++j) acc[i * K + j] = a[i][j];
    if (sums) sums[i] = s[i];
  }
}

template <typename T, int R>
static void grad_rows(long K, long N, const T* Y, const T* X, typename Vector<T>::type* acc,
                      typename Vector<T>::type* sums) {
  long k = 0;
  for (; k + kGradCols <= K; k += kGradCols)
    grad_tile<T, R, kGradCols>(N, Y, X + k * N, acc + k, K, k == 0 ? sums : nullptr);
  auto* s = k == 0 ? sums : nullptr;
  switch (K - k) {
    case 4: grad_tile<T, R, 4>(N, Y, X + k * N, acc + k, K, s); break;
    case 3: grad_tile<T, R, 3>(N, Y, X + k * N, acc + k, K, s); break;
    case 2: grad_tile<T, R, 2>(N, Y, X + k * N, acc + k, K, s); break;
    case 1: grad_tile<T, R, 1>(N, Y, X + k * N, acc + k, K, s); break;
  }
}

// acc[i][k] += sum over the full vectors of n of Y[i][n] X[k][n] for all ``rows`` rows of Y,
// sums[i] += the same of Y[i][n] when given (acc: rows x K vectors, sums: rows vectors)
template <typename T>
static void grad_matrix(long rows, long K, long N, const T* Y, const T* X,
                        typename Vector<T>::type* acc, typename Vector<T>::type* sums) {
  long i = 0;
  for (; i + kGradRows <= rows; i += kGradRows)
    grad_rows<T, kGradRows>(K, N, Y + i * N, X, acc + i * K, sums ? sums + i : nullptr);
  auto* a = acc + i * K;
  auto* s = sums ? sums + i : nullptr;
  switch (rows - i) {
    case 5: grad_rows<T, 5>(K, N, Y + i * N, X, a, s); break;
    case 4: grad_rows<T, 4>(K, N, Y + i * N, X, a, s); break;
    case 3: grad_rows<T, 3>(K, N, Y + i * N, X, a, s); break;
    case 2: grad_rows<T, 2>(K, N, Y + i * N, X, a, s); break;
    case 1: grad_rows<T, 1>(K, N, Y + i * N, X, a, s); break;
  }
}

// lane-wise partial sums added up: out[r * K + k] = tail[r * K + k] + sum over lanes of
// acc[r * K + k] (tail may be null)
template <typename T>
static void reduce_lanes(long count, const typename Vector<T>::type* acc, const T* tail, T* out) {
  for (long r = 0; r < count; ++r) {
    T sum = tail ? tail[r] : T(0);
    for (int l = 0; l < Vector<T>::lanes; ++l) sum += acc[r][l];
    out[r] = sum;
  }
}
