// The activations of the compiled kernels, inlined so that loops over them vectorise.
#pragma once
#include <cmath>

#include "exp.h"

// sigmoid without overflow: e = exp(-|x|), 1 / (1 + e) for x >= 0, e / (1 + e) otherwise
template <typename T> static inline T sigmoid(T x) {
  const T e = exp_nonpositive(x < T(0) ? x : -x);
  const T r = T(1) / (T(1) + e);
  return x >= T(0) ? r : e * r;
}

// tanh in float32: PyTorch's CPU tanh takes about six times its sigmoid.
//   |x| < 0.625: the odd Taylor series x (1 + z c_1 + ... + z^9 c_9), z = x^2 (its next term is
//                below 1e-8 relative there);
//   otherwise:   sign(x) (1 - e) / (1 + e), e = exp(-2|x|) <= 0.29, without cancellation.
static inline float tanh_one(float x) {
  const float a = x < 0.0f ? -x : x;
  const float z = x * x;
  float p = -443861162.0f / 1856156927625.0f;
  p = p * z + 6404582.0f / 10854718875.0f;
  p = p * z - 929569.0f / 638512875.0f;
  p = p * z + 21844.0f / 6081075.0f;
  p = p * z - 1382.0f / 155925.0f;
  p = p * z + 62.0f / 2835.0f;
  p = p * z - 17.0f / 315.0f;
  p = p * z + 2.0f / 15.0f;
  p = p * z - 1.0f / 3.0f;
  const float series = x + x * z * p;
  const float e = exp_nonpositive(-2.0f * a);
  const float ratio = (1.0f - e) / (1.0f + e);
  return a < 0.625f ? series : (x < 0.0f ? -ratio : ratio);
}

// in float64, the library's
static inline double tanh_one(double x) { return std::tanh(x); }
