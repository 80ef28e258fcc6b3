// The LTC repository's CT-RNN and Neural ODE cells over a whole sequence (zoo/fast/ltc/unfold_rnn.py):
//   dy/dt = f(y) = -kappa y + tanh(a_t + y W),  W (n, n) the recurrent part of W [I, h],
//   a_t = W_I I_t + b precomputed, kappa = 1/tau (CT-RNN) or 0 (N-ODE),
// advanced `unfolds` times per input step by explicit Euler (stages = 1) or classic RK4
// (stages = 4, the repository's k1..k4 in the same order of operations), the state clipped to
// [-clip, clip] after every unfold when clip >= 0. Per sample: the forward keeps every stage's
// input y_k and s_k = tanh(a_t + y_k W) (and the unclipped states); the backward runs the
// chain rule through the stages by hand. Samples [b0, b1) are independent; W's gradient is
// summed per chunk in float64. scalars = {h, kappa, clip}.
#include <cmath>

#include "denormals.h"
#include "vector_matrix.h"

namespace {

template <typename T>
void drive(long n, const T* __restrict a, const T* __restrict y, const T* __restrict w,
           T* __restrict s) {  // s = tanh(a + y W)
  add_product(n, n, a, y, w, s);
  for (long j = 0; j < n; ++j) s[j] = std::tanh(s[j]);
}

// Gradient through f at one stage: f_bar given; adds a_bar, w_bar (float64) and returns the
// gradient of the stage input in y_bar (overwritten).
template <typename T>
void drive_backward(long n, T kappa, const T* __restrict y, const T* __restrict s,
                    const T* __restrict w, const T* __restrict f_bar, T* __restrict z_bar,
                    T* __restrict a_bar, double* __restrict w_bar, T* __restrict y_bar) {
  for (long j = 0; j < n; ++j) {
    z_bar[j] = f_bar[j] * (T(1) - s[j] * s[j]);
    a_bar[j] += z_bar[j];
  }
  for (long i = 0; i < n; ++i) {
    const T* __restrict wi = w + i * n;
    double* __restrict gi = w_bar + i * n;
    const double yi = y[i];
    T sum = T(0);
#pragma omp simd reduction(+ : sum)
    for (long j = 0; j < n; ++j) {
      sum += wi[j] * z_bar[j];
      gi[j] += yi * double(z_bar[j]);
    }
    y_bar[i] = sum - kappa * f_bar[i];
  }
}

template <typename T>
void forward(long steps, long batch, long n, long unfolds, long stages, const double* scalars,
             const T* a, const T* w, T* states, T* ys, T* ss, T* pre, long b0, long b1) {
  const T h = T(scalars[0]), kappa = T(scalars[1]), clip = T(scalars[2]);
  T y[256], k[4][256], yk[256];
  for (long b = b0; b < b1; ++b) {
    for (long i = 0; i < n; ++i) y[i] = T(0);
    for (long t = 0; t < steps; ++t) {
      const T* at = a + (t * batch + b) * n;
      for (long u = 0; u < unfolds; ++u) {
        const long e = (t * unfolds + u) * stages;
        for (long q = 0; q < stages; ++q) {
          T* yq = ys + ((e + q) * batch + b) * n;
          T* sq = ss + ((e + q) * batch + b) * n;
          for (long i = 0; i < n; ++i)  // the stage input, as rk4_step forms it
            yq[i] = q == 0 ? y[i] : q == 3 ? y[i] + k[2][i] : y[i] + T(0.5) * k[q - 1][i];
          drive(n, at, yq, w, sq);
          for (long i = 0; i < n; ++i) k[q][i] = h * (-(yq[i] * kappa) + sq[i]);
        }
        for (long i = 0; i < n; ++i)
          yk[i] = stages == 1 ? y[i] + k[0][i]
                              : y[i] + (k[0][i] + T(2) * k[1][i] + T(2) * k[2][i] + k[3][i]) / T(6);
        if (clip >= T(0)) {
          T* p = pre + ((t * unfolds + u) * batch + b) * n;
          for (long i = 0; i < n; ++i) {
            p[i] = yk[i];
            y[i] = yk[i] < -clip ? -clip : yk[i] > clip ? clip : yk[i];
          }
        } else {
          for (long i = 0; i < n; ++i) y[i] = yk[i];
        }
      }
      T* out = states + (t * batch + b) * n;
      for (long i = 0; i < n; ++i) out[i] = y[i];
    }
  }
}

template <typename T>
void backward(long steps, long batch, long n, long unfolds, long stages, const double* scalars,
              const T* w, const T* g_states, const T* ys, const T* ss, const T* pre, T* g_a,
              double* g_w, long b0, long b1) {
  const T h = T(scalars[0]), kappa = T(scalars[1]), clip = T(scalars[2]);
  T y_bar[256], k_bar[4][256], f_bar[256], z_bar[256], stage_bar[256];
  static const T weight[4] = {T(1), T(2), T(2), T(1)};
  for (long b = b0; b < b1; ++b) {
    for (long i = 0; i < n; ++i) y_bar[i] = T(0);
    for (long t = steps - 1; t >= 0; --t) {
      const T* gt = g_states + (t * batch + b) * n;
      T* a_bar = g_a + (t * batch + b) * n;
      for (long i = 0; i < n; ++i) {
        y_bar[i] += gt[i];
        a_bar[i] = T(0);
      }
      for (long u = unfolds - 1; u >= 0; --u) {
        if (clip >= T(0)) {  // clamp passes the gradient where -clip <= y <= clip
          const T* p = pre + ((t * unfolds + u) * batch + b) * n;
          for (long i = 0; i < n; ++i)
            if (p[i] < -clip || p[i] > clip) y_bar[i] = T(0);
        }
        for (long q = 0; q < stages; ++q)
          for (long i = 0; i < n; ++i)
            k_bar[q][i] = stages == 1 ? y_bar[i] : y_bar[i] * weight[q] / T(6);
        const long e = (t * unfolds + u) * stages;
        for (long q = stages - 1; q >= 0; --q) {
          const T* yq = ys + ((e + q) * batch + b) * n;
          const T* sq = ss + ((e + q) * batch + b) * n;
          for (long i = 0; i < n; ++i) f_bar[i] = h * k_bar[q][i];
          drive_backward(n, kappa, yq, sq, w, f_bar, z_bar, a_bar, g_w, stage_bar);
          for (long i = 0; i < n; ++i) {
            y_bar[i] += stage_bar[i];
            if (q == 3) k_bar[2][i] += stage_bar[i];
            else if (q > 0) k_bar[q - 1][i] += T(0.5) * stage_bar[i];
          }
        }
      }
    }
  }
}

}  // namespace

#define UNFOLD_RNN_EXPORTS(T, suffix)                                                           \
  extern "C" void unfold_rnn_forward_##suffix(long steps, long batch, long n, long unfolds,      \
                                              long stages, const double* scalars, const T* a,    \
                                              const T* w, T* states, T* ys, T* ss, T* pre,       \
                                              long b0, long b1) {                                \
    FlushDenormals flush;                                                                        \
    forward<T>(steps, batch, n, unfolds, stages, scalars, a, w, states, ys, ss, pre, b0, b1);   \
  }                                                                                              \
  extern "C" void unfold_rnn_backward_##suffix(long steps, long batch, long n, long unfolds,     \
                                               long stages, const double* scalars, const T* w,   \
                                               const T* g_states, const T* ys, const T* ss,      \
                                               const T* pre, T* g_a, double* g_w, long b0,       \
                                               long b1) {                                        \
    FlushDenormals flush;                                                                        \
    backward<T>(steps, batch, n, unfolds, stages, scalars, w, g_states, ys, ss, pre, g_a, g_w,  \
                b0, b1);                                                                         \
  }

UNFOLD_RNN_EXPORTS(float, f32)
UNFOLD_RNN_EXPORTS(double, f64)
