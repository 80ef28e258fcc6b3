// Loops over a run of lanes (samples x heads, or stages; innermost and contiguous), vectorised;
// shared by the kernels whose work is independent per lane.
#pragma once

// out[0:w] += sign * a[0:w] * b[0:w]
template <typename T>
static inline void add_product(T* __restrict out, const T* __restrict a, const T* __restrict b,
                               T sign, long w) {
#pragma omp simd
  for (long l = 0; l < w; ++l) out[l] += sign * a[l] * b[l];
}

// out[0:w] = sign * a[0:w]
template <typename T>
static inline void assign(T* __restrict out, const T* __restrict a, T sign, long w) {
#pragma omp simd
  for (long l = 0; l < w; ++l) out[l] = sign * a[l];
}

// out[0:w] = 0
template <typename T> static inline void zero(T* __restrict out, long w) {
#pragma omp simd
  for (long l = 0; l < w; ++l) out[l] = 0;
}

// sum_l a[l] b[l] over l < w
template <typename T> static inline T dot(const T* __restrict a, const T* __restrict b, long w) {
  T sum = T(0);
#pragma omp simd reduction(+ : sum)
  for (long l = 0; l < w; ++l) sum += a[l] * b[l];
  return sum;
}
