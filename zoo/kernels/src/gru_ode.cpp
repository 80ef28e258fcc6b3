// The GRU-ODE's elementwise work between its matrix products (zoo/kernels/gru_ode.py), one pass
// per sample row each, H hidden units; p_rz = [r, z] pre-activations, xw = x W^T (B, 3H):
//   gates:   rz = sigmoid(p_rz + xw[:2H]),  rh = r h                    (p_rz overwritten)
//   field:   g = tanh(p_g + xw[2H:]),  k = (1 - z)(g - h) d0            (p_g overwritten)
//            with the adjoint a (not null), also a_bar = a d0 and
//            p[2H:] = a_bar (1 - z)(1 - g^2),  p[H:2H] = a_bar (g - h) z (z - 1),
//            h_bar = -a_bar (1 - z)
//   reset:   p[:H] = q h r (1 - r),  h_bar += q r                       (q = p[2H:] U_h)
//   finish:  y_bar = h_bar where -1 <= y <= 1, else 0;  p *= c
// k, a, y and y_bar are rows of wider tensors (their row strides given); the rest is contiguous.
#include "activations.h"

namespace {

template <typename T>
void gates(long H, T* p_rz, const T* xw, const T* h, T* rh, long b0, long b1) {
  for (long b = b0; b < b1; ++b) {
    T* __restrict rz = p_rz + b * 2 * H;
    const T* __restrict xb = xw + b * 3 * H;
    const T* __restrict hb = h + b * H;
    T* __restrict rhb = rh + b * H;
#pragma omp simd
    for (long i = 0; i < 2 * H; ++i) rz[i] = sigmoid(rz[i] + xb[i]);
#pragma omp simd
    for (long i = 0; i < H; ++i) rhb[i] = rz[i] * hb[i];
  }
}

template <typename T>
void field(long H, long k_stride, long a_stride, T* p_g, const T* xw, const T* rz, const T* h,
           const T* d0, T* k, const T* a, T* p, T* h_bar, long b0, long b1) {
  for (long b = b0; b < b1; ++b) {
    T* __restrict g = p_g + b * H;
    const T* __restrict xb = xw + b * 3 * H + 2 * H;
    const T* __restrict z = rz + b * 2 * H + H;
    const T* __restrict hb = h + b * H;
    T* __restrict kb = k + b * k_stride;
    const T d = d0[b];
#pragma omp simd
    for (long i = 0; i < H; ++i) {
      g[i] = tanh_one(g[i] + xb[i]);
      kb[i] = (T(1) - z[i]) * (g[i] - hb[i]) * d;
    }
    if (a == nullptr) continue;
    const T* __restrict ab = a + b * a_stride;
    T* __restrict pb = p + b * 3 * H;
    T* __restrict hbar = h_bar + b * H;
#pragma omp simd
    for (long i = 0; i < H; ++i) {
      const T a_bar = ab[i] * d, one_z = T(1) - z[i];
      pb[2 * H + i] = a_bar * one_z * (T(1) - g[i] * g[i]);
      pb[H + i] = a_bar * (g[i] - hb[i]) * (z[i] * (z[i] - T(1)));
      hbar[i] = -(a_bar * one_z);
    }
  }
}

template <typename T>
void reset(long H, const T* q, const T* rz, const T* h, T* p, T* h_bar, long b0, long b1) {
  for (long b = b0; b < b1; ++b) {
    const T* __restrict qb = q + b * H;
    const T* __restrict r = rz + b * 2 * H;
    const T* __restrict hb = h + b * H;
    T* __restrict pb = p + b * 3 * H;
    T* __restrict hbar = h_bar + b * H;
#pragma omp simd
    for (long i = 0; i < H; ++i) {
      pb[i] = qb[i] * hb[i] * (r[i] * (T(1) - r[i]));
      hbar[i] += qb[i] * r[i];
    }
  }
}

template <typename T>
void finish(long H, long y_stride, double c, const T* h_bar, const T* y, T* y_bar, T* p,
            long b0, long b1) {
  const T scale = T(c);
  for (long b = b0; b < b1; ++b) {
    const T* __restrict hbar = h_bar + b * H;
    const T* __restrict yb = y + b * y_stride;
    T* __restrict ybar = y_bar + b * y_stride;
    T* __restrict pb = p + b * 3 * H;
#pragma omp simd
    for (long i = 0; i < H; ++i) ybar[i] = (yb[i] >= T(-1) && yb[i] <= T(1)) ? hbar[i] : T(0);
#pragma omp simd
    for (long i = 0; i < 3 * H; ++i) pb[i] *= scale;
  }
}

}  // namespace

#define GRU_ODE_ENTRIES(T, S)                                                                  \
  extern "C" void gru_gates_##S(long H, T* p_rz, const T* xw, const T* h, T* rh, long b0,     \
                                long b1) {                                                     \
    gates<T>(H, p_rz, xw, h, rh, b0, b1);                                                      \
  }                                                                                            \
  extern "C" void gru_field_##S(long H, long k_stride, long a_stride, T* p_g, const T* xw,     \
                                const T* rz, const T* h, const T* d0, T* k, const T* a, T* p,  \
                                T* h_bar, long b0, long b1) {                                  \
    field<T>(H, k_stride, a_stride, p_g, xw, rz, h, d0, k, a, p, h_bar, b0, b1);               \
  }                                                                                            \
  extern "C" void gru_reset_##S(long H, const T* q, const T* rz, const T* h, T* p, T* h_bar,   \
                                long b0, long b1) {                                            \
    reset<T>(H, q, rz, h, p, h_bar, b0, b1);                                                   \
  }                                                                                            \
  extern "C" void gru_finish_##S(long H, long y_stride, double c, const T* h_bar, const T* y,  \
                                 T* y_bar, T* p, long b0, long b1) {                           \
    finish<T>(H, y_stride, c, h_bar, y, y_bar, p, b0, b1);                                     \
  }

GRU_ODE_ENTRIES(float, f32)
GRU_ODE_ENTRIES(double, f64)
