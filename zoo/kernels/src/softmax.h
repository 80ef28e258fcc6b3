// Softmax over the c rows of a (c, L) block with rows ld apart, vectorised along the row:
//   y = exp(x - max) / sum exp(x - max);   dx = y (dy - sum_r y_r dy_r)
// shared by the softmax kernel and the Hebb read of softmax keys.
#pragma once
#include "exp.h"

constexpr long kSoftmaxLanes = 256;  // lanes per pass (max and sum kept on the stack)

template <typename T>
static void softmax_rows(long c, long L, long ld, const T* x, T* y) {
  T top[kSoftmaxLanes], sum[kSoftmaxLanes];
  for (long l0 = 0; l0 < L; l0 += kSoftmaxLanes) {
    const long w = L - l0 < kSoftmaxLanes ? L - l0 : kSoftmaxLanes;
    const T* __restrict xo = x + l0;
    T* __restrict yo = y + l0;
#pragma omp simd
    for (long l = 0; l < w; ++l) top[l] = xo[l], sum[l] = T(0);
    for (long r = 1; r < c; ++r)
#pragma omp simd
      for (long l = 0; l < w; ++l) top[l] = xo[r * ld + l] > top[l] ? xo[r * ld + l] : top[l];
    for (long r = 0; r < c; ++r)
#pragma omp simd
      for (long l = 0; l < w; ++l) {
        const T e = exp_nonpositive(xo[r * ld + l] - top[l]);
        yo[r * ld + l] = e;
        sum[l] += e;
      }
    for (long r = 0; r < c; ++r)
#pragma omp simd
      for (long l = 0; l < w; ++l) yo[r * ld + l] /= sum[l];
  }
}

template <typename T>
static void softmax_rows_backward(long c, long L, long ld, const T* y, const T* dy, T* dx) {
  T dot[kSoftmaxLanes];
  for (long l0 = 0; l0 < L; l0 += kSoftmaxLanes) {
    const long w = L - l0 < kSoftmaxLanes ? L - l0 : kSoftmaxLanes;
    const T* __restrict yo = y + l0;
    const T* __restrict go = dy + l0;
    T* __restrict out = dx + l0;
#pragma omp simd
    for (long l = 0; l < w; ++l) dot[l] = T(0);
    for (long r = 0; r < c; ++r)
#pragma omp simd
      for (long l = 0; l < w; ++l) dot[l] += yo[r * ld + l] * go[r * ld + l];
    for (long r = 0; r < c; ++r)
#pragma omp simd
      for (long l = 0; l < w; ++l) out[r * ld + l] = yo[r * ld + l] * (go[r * ld + l] - dot[l]);
  }
}
