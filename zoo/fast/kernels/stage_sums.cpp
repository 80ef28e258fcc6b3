// Contractions of per-stage h-vectors V (U, h, L), lanes innermost (zoo/fast/stage_sums.py):
//   stage_sum: out[r][l] = sum_u V[u][r][l] c[u][l]     (U, L) -> (h, L)
//   stage_dot: out[u][l] = sum_r V[u][r][l] q[r][l]     (h, L) -> (U, L)
// one pass over V each, where torch forms the (U, h, L) product first. Lanes [l0, l1) per call.

template <typename T>
static void stage_sum(long U, long h, long L, const T* V, const T* c, T* out, long l0, long l1) {
  for (long r = 0; r < h; ++r) {
    T* __restrict o = out + r * L;
#pragma omp simd
    for (long l = l0; l < l1; ++l) o[l] = 0;
  }
  for (long u = 0; u < U; ++u) {
    const T* __restrict cu = c + u * L;
    for (long r = 0; r < h; ++r) {
      const T* __restrict v = V + (u * h + r) * L;
      T* __restrict o = out + r * L;
#pragma omp simd
      for (long l = l0; l < l1; ++l) o[l] += v[l] * cu[l];
    }
  }
}

template <typename T>
static void stage_dot(long U, long h, long L, const T* V, const T* q, T* out, long l0, long l1) {
  for (long u = 0; u < U; ++u) {
    T* __restrict o = out + u * L;
#pragma omp simd
    for (long l = l0; l < l1; ++l) o[l] = 0;
    for (long r = 0; r < h; ++r) {
      const T* __restrict v = V + (u * h + r) * L;
      const T* __restrict qr = q + r * L;
#pragma omp simd
      for (long l = l0; l < l1; ++l) o[l] += v[l] * qr[l];
    }
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
