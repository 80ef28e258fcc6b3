// Products of a batch of matrices with one shared matrix (zoo/fast/shared_product.py):
//   left:  out[g] = A X[g] + bias 1^T          A (M, K), X (G, K, N), out (G, M, N)
//   grad:  dA = sum_g Y[g] X[g]^T, dbias = sum_g Y[g] 1      Y (G, M, N); bias, dbias may be null
// Register tiles of rows of A by vectors along n (left), or rows of Y by rows of X (grad),
// vectorised along the contiguous n; smaller tiles take the edges. Samples [g0, g1) (left) or
// rows [m0, m1) of A (grad) per call, so threads share nothing.
#include <cstring>
#include <vector>

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

// rows [m0, m0 + R) of out[g]: tiles of kTileVectors vectors, then of two and one, then the
// last partial vector through zero-padded copies (``pad``: K vectors, ``part``: R vectors)
template <typename T, int R>
static void left_rows(long K, long N, const T* A, const T* bias, const T* X, T* out, long m0,
                      T* pad, T* part) {
  constexpr int L = Vector<T>::lanes;
  constexpr long W = kTileVectors * L;
  A += m0 * K;
  bias = bias ? bias + m0 : nullptr;
  out += m0 * N;
  long n = 0;
  for (; n + W <= N; n += W) left_tile<T, R, kTileVectors>(K, A, bias, X + n, N, out + n, N);
  for (; n + 2 * L <= N; n += 2 * L) left_tile<T, R, 2>(K, A, bias, X + n, N, out + n, N);
  for (; n + L <= N; n += L) left_tile<T, R, 1>(K, A, bias, X + n, N, out + n, N);
  if (n == N) return;
  const long rest = N - n;
  for (long k = 0; k < K; ++k) std::memcpy(pad + k * L, X + k * N + n, rest * sizeof(T));
  left_tile<T, R, 1>(K, A, bias, pad, L, part, L);
  for (int i = 0; i < R; ++i) std::memcpy(out + i * N + n, part + i * L, rest * sizeof(T));
}

template <typename T>
static void left(long M, long K, long N, const T* A, const T* bias, const T* X, T* out,
                 long g0, long g1) {
  constexpr int L = Vector<T>::lanes;
  std::vector<T> pad(K * L, T(0)), part(kRows * L);
  for (long g = g0; g < g1; ++g) {
    const T* Xg = X + g * K * N;
    T* og = out + g * M * N;
    long m0 = 0;
    for (; m0 + kRows <= M; m0 += kRows)
      left_rows<T, kRows>(K, N, A, bias, Xg, og, m0, pad.data(), part.data());
    switch (M - m0) {
      case 5: left_rows<T, 5>(K, N, A, bias, Xg, og, m0, pad.data(), part.data()); break;
      case 4: left_rows<T, 4>(K, N, A, bias, Xg, og, m0, pad.data(), part.data()); break;
      case 3: left_rows<T, 3>(K, N, A, bias, Xg, og, m0, pad.data(), part.data()); break;
      case 2: left_rows<T, 2>(K, N, A, bias, Xg, og, m0, pad.data(), part.data()); break;
      case 1: left_rows<T, 1>(K, N, A, bias, Xg, og, m0, pad.data(), part.data()); break;
    }
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

// rows [m0, m1) of dA and dbias: per sample, every tile of those rows adds its full vectors of
// n to lane-wise partial sums (in cache across samples), and the last partial vector of n adds
// to scalar ones
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
    auto* row_sums = dbias ? sums.data() : nullptr;  // the bias gradient only when asked for
    long i = 0;
    for (; i + kGradRows <= rows; i += kGradRows)
      grad_rows<T, kGradRows>(K, N, Yg + i * N, Xg, acc.data() + i * K,
                              row_sums ? row_sums + i : nullptr);
    auto* a = acc.data() + i * K;
    auto* s = row_sums ? row_sums + i : nullptr;
    switch (rows - i) {
      case 5: grad_rows<T, 5>(K, N, Yg + i * N, Xg, a, s); break;
      case 4: grad_rows<T, 4>(K, N, Yg + i * N, Xg, a, s); break;
      case 3: grad_rows<T, 3>(K, N, Yg + i * N, Xg, a, s); break;
      case 2: grad_rows<T, 2>(K, N, Yg + i * N, Xg, a, s); break;
      case 1: grad_rows<T, 1>(K, N, Yg + i * N, Xg, a, s); break;
    }
    for (long r = 0; r < rows; ++r)
      for (long n = full; n < N; ++n) {
        for (long k = 0; k < K; ++k) tail[r * K + k] += Yg[r * N + n] * Xg[k * N + n];
        tail_sums[r] += Yg[r * N + n];
      }
  }
  for (long r = 0; r < rows; ++r) {
    for (long k = 0; k < K; ++k) {
      T sum = tail[r * K + k];
      for (int l = 0; l < L; ++l) sum += acc[r * K + k][l];
      dA[(m0 + r) * K + k] = sum;
    }
    if (dbias) {
      T sum = tail_sums[r];
      for (int l = 0; l < L; ++l) sum += sums[r][l];
      dbias[m0 + r] = sum;
    }
  }
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
