// A vector times a small row-major matrix, vectorised along the matrix's rows, shared by the
// loops over a sequence (unfold_rnn.cpp, ctgru_loop.cpp):
//   add_product:            z = a + y W        y (n), W (n, width), z and a (width)
//   add_transposed_product: y_bar += W z_bar   the gradient of y through y W
#pragma once

template <typename T>
static inline void add_product(long n, long width, const T* __restrict a,
                               const T* __restrict y, const T* __restrict w,
                               T* __restrict z) {  // z = a + y W
  for (long c = 0; c < width; ++c) z[c] = a[c];
  for (long i = 0; i < n; ++i) {
    const T yi = y[i];
    const T* __restrict wi = w + i * width;
#pragma omp simd
    for (long c = 0; c < width; ++c) z[c] += yi * wi[c];
  }
}

template <typename T>
static inline void add_transposed_product(long n, long width, const T* __restrict w,
                                          const T* __restrict z_bar,
                                          T* __restrict y_bar) {  // y_bar += W z_bar
  for (long i = 0; i < n; ++i) {
    const T* __restrict wi = w + i * width;
    T sum = T(0);
#pragma omp simd reduction(+ : sum)
    for (long c = 0; c < width; ++c) sum += wi[c] * z_bar[c];
    y_bar[i] += sum;
  }
}
