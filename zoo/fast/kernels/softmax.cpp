// Softmax over the middle axis of x (outer, c, inner), vectorised along the contiguous inner
// axis (zoo/fields/small_softmax.py: the FWP keys, c = 4 per head, over stages or lanes):
//   forward:  y = exp(x - max) / sum exp(x - max)
//   backward: dx = y (dy - sum_r y_r dy_r)
// Blocks [o0, o1) of the outer axis per call.
#include "exp.h"

constexpr long kLanes = 256;  // lanes of the inner axis per pass (max and sum kept on the stack)

template <typename T>
static void softmax(long c, long inner, const T* x, T* y, long o0, long o1) {
  T top[kLanes], sum[kLanes];
  for (long o = o0; o < o1; ++o)
    for (long l0 = 0; l0 < inner; l0 += kLanes) {
      const long w = inner - l0 < kLanes ? inner - l0 : kLanes;
      const T* __restrict xo = x + o * c * inner + l0;
      T* __restrict yo = y + o * c * inner + l0;
#pragma omp simd
      for (long l = 0; l < w; ++l) top[l] = xo[l], sum[l] = T(0);
      for (long r = 1; r < c; ++r)
#pragma omp simd
        for (long l = 0; l < w; ++l) top[l] = xo[r * inner + l] > top[l] ? xo[r * inner + l] : top[l];
      for (long r = 0; r < c; ++r)
#pragma omp simd
        for (long l = 0; l < w; ++l) {
          const T e = exp_nonpositive(xo[r * inner + l] - top[l]);
          yo[r * inner + l] = e;
          sum[l] += e;
        }
      for (long r = 0; r < c; ++r)
#pragma omp simd
        for (long l = 0; l < w; ++l) yo[r * inner + l] /= sum[l];
    }
}

template <typename T>
static void softmax_backward(long c, long inner, const T* y, const T* dy, T* dx, long o0,
                             long o1) {
  T dot[kLanes];
  for (long o = o0; o < o1; ++o)
    for (long l0 = 0; l0 < inner; l0 += kLanes) {
      const long w = inner - l0 < kLanes ? inner - l0 : kLanes;
      const long at = o * c * inner + l0;
      const T* __restrict yo = y + at;
      const T* __restrict go = dy + at;
      T* __restrict out = dx + at;
#pragma omp simd
      for (long l = 0; l < w; ++l) dot[l] = T(0);
      for (long r = 0; r < c; ++r)
#pragma omp simd
        for (long l = 0; l < w; ++l) dot[l] += yo[r * inner + l] * go[r * inner + l];
      for (long r = 0; r < c; ++r)
#pragma omp simd
        for (long l = 0; l < w; ++l)
          out[r * inner + l] = yo[r * inner + l] * (go[r * inner + l] - dot[l]);
    }
}

#define SOFTMAX_EXPORTS(T, suffix)                                                            \
  extern "C" void softmax_##suffix(long c, long inner, const T* x, T* y, long o0, long o1) {  \
    softmax(c, inner, x, y, o0, o1);                                                          \
  }                                                                                           \
  extern "C" void softmax_backward_##suffix(long c, long inner, const T* y, const T* dy,      \
                                            T* dx, long o0, long o1) {                        \
    softmax_backward(c, inner, y, dy, dx, o0, o1);                                            \
  }

SOFTMAX_EXPORTS(float, f32)
SOFTMAX_EXPORTS(double, f64)
