// FlushDenormals: within its scope, results below the smallest normal number (1.2e-38 in
// float32, 2.2e-308 in float64) are flushed to zero and such inputs read as zero (x86's MXCSR
// flags FTZ and DAZ; restored at the end of the scope; nothing elsewhere). A kernel whose
// softmax weights or decaying traces reach that range (the CT-GRU's time scales far from the
// one selected) otherwise runs several times slower on CPUs that handle denormals in
// microcode; what changes is below 1.2e-38 in absolute value.
#pragma once

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

class FlushDenormals {
 public:
#if defined(__SSE2__)
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero); }
  ~FlushDenormals() { _mm_setcsr(saved_); }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  static constexpr unsigned int kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
  unsigned int saved_;
#endif
};
