// Softmax over the middle axis of x (outer, c, inner), vectorised along the contiguous inner
// axis (zoo/fields/small_softmax.py: the FWP keys, c = 4 per head, over stages or lanes), one
// (c, inner) block per outer index (softmax.h). Blocks [o0, o1) of the outer axis per call.
#include "softmax.h"

#define SOFTMAX_EXPORTS(T, suffix)                                                            \
  extern "C" void softmax_##suffix(long c, long inner, const T* x, T* y, long o0, long o1) {  \
    for (long o = o0; o < o1; ++o)                                                            \
      softmax_rows(c, inner, inner, x + o * c * inner, y + o * c * inner);                    \
  }                                                                                           \
  extern "C" void softmax_backward_##suffix(long c, long inner, const T* y, const T* dy,      \
                                            T* dx, long o0, long o1) {                        \
    for (long o = o0; o < o1; ++o) {                                                          \
      const long at = o * c * inner;                                                          \
      softmax_rows_backward(c, inner, inner, y + at, dy + at, dx + at);                       \
    }                                                                                         \
  }

SOFTMAX_EXPORTS(float, f32)
SOFTMAX_EXPORTS(double, f64)
