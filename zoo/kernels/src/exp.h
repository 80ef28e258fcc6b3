// The exponential of the compiled kernels, inlined so that loops over it vectorise without a
// vector maths library.
#pragma once
#include <cstdint>

// exp(x) for x <= 0: x = k ln2 + r with |r| <= ln2 / 2, Taylor polynomial in r, times 2^k.
// Degree 7 (float) and 13 (double) leave a truncation error below half an ulp.
static inline float exp_nonpositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  const float k = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln2)
  const float r = x - k * 0.693145751953125f - k * 1.428606765330187045e-06f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720; p = p * r + 1.0f / 120; p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6; p = p * r + 0.5f; p = p * r + 1.0f; p = p * r + 1.0f;
  return p * __builtin_bit_cast(float, ((int32_t)k + 127) << 23);
}

static inline double exp_nonpositive(double x) {
  x = x < -708.0 ? -708.0 : x;
  const double k = (x * 1.4426950408889634074 + 6755399441055744.0) - 6755399441055744.0;
  const double r = x - k * 0.693147180369123816490 - k * 1.90821492927058770002e-10;
  double p = 1.0 / 6227020800.0;  // 1/13!
  const double factorials[] = {479001600.0, 39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0,
                               720.0, 120.0, 24.0, 6.0, 2.0, 1.0, 1.0};
  for (double f : factorials) p = p * r + 1.0 / f;
  return p * __builtin_bit_cast(double, ((int64_t)k + 1023) << 52);
}
