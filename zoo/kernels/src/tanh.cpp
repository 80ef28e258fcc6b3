// tanh in float32 (zoo/kernels/tanh.py; tanh_one in activations.h): PyTorch's CPU tanh takes
// about six times its sigmoid; and tanh(A) d for a batch of small matrices A, the NCDE's
// F(z) dX/dt.
// Elements (samples) are independent: callers split them between threads.
#include "activations.h"

extern "C" void tanh_f32(const float* __restrict x, float* __restrict y, long i0, long i1) {
#pragma omp simd
  for (long i = i0; i < i1; ++i) y[i] = tanh_one(x[i]);
}

// y_i = sum_u tanh(a_iu + e_iu) d_u per sample (zoo/kernels/tanh.py: tanh_times_into), a
// (batch, h, c), the bias e (h, c) shared by all samples (none: null) and d (batch, c); stores
// t = tanh(a + e) for the backward. Samples [b0, b1).
extern "C" void tanh_times_f32(long h, long c, const float* a, const float* e, const float* d,
                               float* t, float* y, long b0, long b1) {
  for (long b = b0; b < b1; ++b) {
    const float* __restrict ab = a + b * h * c;
    float* __restrict tb = t + b * h * c;
    if (e == nullptr) {
#pragma omp simd
      for (long q = 0; q < h * c; ++q) tb[q] = tanh_one(ab[q]);
    } else {
      const float* __restrict eb = e;
#pragma omp simd
      for (long q = 0; q < h * c; ++q) tb[q] = tanh_one(ab[q] + eb[q]);
    }
    const float* __restrict db = d + b * c;
    for (long i = 0; i < h; ++i) {
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (long u = 0; u < c; ++u) sum += tb[i * c + u] * db[u];
      y[b * h + i] = sum;
    }
  }
}

// its backward: a_bar_iu = g_i d_u (1 - t_iu^2), d_bar_u = sum_i g_i t_iu
extern "C" void tanh_times_backward_f32(long h, long c, const float* t, const float* d,
                                        const float* g, float* a_bar, float* d_bar, long b0,
                                        long b1) {
  for (long b = b0; b < b1; ++b) {
    const float* __restrict db = d + b * c;
    float* __restrict dbar = d_bar + b * c;
    for (long u = 0; u < c; ++u) dbar[u] = 0.0f;
    for (long i = 0; i < h; ++i) {
      const float gi = g[b * h + i];
      const float* __restrict ti = t + (b * h + i) * c;
      float* __restrict ai = a_bar + (b * h + i) * c;
#pragma omp simd
      for (long u = 0; u < c; ++u) {
        ai[u] = gi * db[u] * (1.0f - ti[u] * ti[u]);
        dbar[u] += gi * ti[u];
      }
    }
  }
}
