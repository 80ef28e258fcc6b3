// The LTC repository's CT-GRU over a whole sequence (zoo/fast/ltc/ctgru_loop.py). State: n
// units x m time scales, traces hh[i,k] (index c = i*m+k); per input step, from h = sum_k hh:
//   zr = ar_t + h Wr,  zs = as_t + h Ws           (Wr, Ws: (n, n*m); ar_t, as_t precomputed)
//   r = softmax_k(-(zr - ln tau_k)^2),  s = softmax_k(-(zs - ln tau_k)^2)
//   q = tanh(aq_t + (sum_k r hh) Wq)              (Wq: (n, n))
//   hh <- ((1 - s) hh + s q) d_t,k                 (d: the decay factors of step t, (steps, m))
// clipped to [-clip, clip] where clip >= 0, in the order of operations of CTGRUCell.update
// (lt: ln tau_k at every index c). The forward keeps zr, zs, r, s, the read and q of every step
// (and the unclipped traces); the backward runs the chain rule through the steps by hand and
// returns the gradients of ar, as and aq (the weights' gradients are then one matrix product
// each over all steps). Samples [b0, b1) are independent. Denormals are flushed (denormals.h):
// the softmax weights of the time scales far from the selected one reach them.
#include <cmath>

#include "denormals.h"
#include "exp.h"
#include "vector_matrix.h"

namespace {

constexpr long kMaxUnits = 256, kMaxWidth = 2048;  // n and n*m

// p[i, .] = softmax_k(-(z[i, .] - lt[i, .])^2)
template <typename T>
void softmax_logits(long n, long m, const T* __restrict z, const T* __restrict lt,
                    T* __restrict p) {
  const long width = n * m;
#pragma omp simd
  for (long c = 0; c < width; ++c) p[c] = -((z[c] - lt[c]) * (z[c] - lt[c]));
  for (long i = 0; i < n; ++i) {
    T* __restrict pi = p + i * m;
    T top = pi[0], sum = T(0);
    for (long k = 1; k < m; ++k) top = pi[k] > top ? pi[k] : top;
#pragma omp simd reduction(+ : sum)
    for (long k = 0; k < m; ++k) sum += (pi[k] = exp_nonpositive(pi[k] - top));
#pragma omp simd
    for (long k = 0; k < m; ++k) pi[k] /= sum;
  }
}

// z_bar from p_bar through p = softmax_k(-(z - lt)^2)
template <typename T>
void softmax_logits_backward(long n, long m, const T* __restrict z, const T* __restrict lt,
                             const T* __restrict p, const T* __restrict p_bar,
                             T* __restrict z_bar) {
  for (long i = 0; i < n; ++i) {
    const long o = i * m;
    T dot = T(0);
#pragma omp simd reduction(+ : dot)
    for (long k = 0; k < m; ++k) dot += p[o + k] * p_bar[o + k];
#pragma omp simd
    for (long k = 0; k < m; ++k)
      z_bar[o + k] = p[o + k] * (p_bar[o + k] - dot) * (T(-2) * (z[o + k] - lt[o + k]));
  }
}

template <typename T>
void unit_sums(long n, long m, const T* hh, T* h) {  // h = sum_k hh[., k]
  for (long i = 0; i < n; ++i) {
    T sum = T(0);
    for (long k = 0; k < m; ++k) sum += hh[i * m + k];
    h[i] = sum;
  }
}

struct Sizes {
  long steps, batch, n, m;
  long at(long t, long b, long width) const { return (t * batch + b) * width; }
};

template <typename T>
void forward(Sizes z, double clip, const T* lt, const T* ar, const T* as, const T* aq,
             const T* wr, const T* ws, const T* wq, const T* decay, T* states, T* zr, T* zs,
             T* r, T* s, T* read, T* q, T* pre, long b0, long b1) {
  const long n = z.n, m = z.m, width = n * m;
  T zero[kMaxWidth], h[kMaxUnits];
  for (long c = 0; c < width; ++c) zero[c] = T(0);
  for (long b = b0; b < b1; ++b) {
    for (long t = 0; t < z.steps; ++t) {
      const T* hh = t == 0 ? zero : states + z.at(t - 1, b, width);
      const long o = z.at(t, b, width), oq = z.at(t, b, n);
      unit_sums(n, m, hh, h);
      add_product(n, width, ar + o, h, wr, zr + o);
      add_product(n, width, as + o, h, ws, zs + o);
      softmax_logits(n, m, zr + o, lt, r + o);
      softmax_logits(n, m, zs + o, lt, s + o);
      for (long i = 0; i < n; ++i) {
        T sum = T(0);
        for (long k = 0; k < m; ++k) sum += r[o + i * m + k] * hh[i * m + k];
        read[oq + i] = sum;
      }
      add_product(n, n, aq + oq, read + oq, wq, q + oq);
      for (long i = 0; i < n; ++i) q[oq + i] = std::tanh(q[oq + i]);
      const T* d = decay + t * m;
      T* out = states + o;
      for (long i = 0; i < n; ++i)
#pragma omp simd
        for (long k = 0; k < m; ++k) {
          const long c = i * m + k;
          out[c] = ((T(1) - s[o + c]) * hh[c] + s[o + c] * q[oq + i]) * d[k];
        }
      if (clip >= 0) {
        const T lo = T(-clip), hi = T(clip);
        for (long c = 0; c < width; ++c) {
          pre[o + c] = out[c];
          out[c] = out[c] < lo ? lo : out[c] > hi ? hi : out[c];
        }
      }
    }
  }
}

template <typename T>
void backward(Sizes z, double clip, const T* lt, const T* wr, const T* ws, const T* wq,
              const T* decay, const T* g_states, const T* states, const T* zr, const T* zs,
              const T* r, const T* s, const T* q, const T* pre, T* g_ar, T* g_as, T* g_aq,
              long b0, long b1) {
  const long n = z.n, m = z.m, width = n * m;
  T zero[kMaxWidth], bar[kMaxWidth], s_bar[kMaxWidth], r_bar[kMaxWidth], read_bar[kMaxUnits],
      h_bar[kMaxUnits];
  for (long c = 0; c < width; ++c) zero[c] = T(0);
  for (long b = b0; b < b1; ++b) {
    for (long c = 0; c < width; ++c) bar[c] = T(0);  // the gradient of the traces after step t
    for (long t = z.steps - 1; t >= 0; --t) {
      const T* hh = t == 0 ? zero : states + z.at(t - 1, b, width);
      const long o = z.at(t, b, width), oq = z.at(t, b, n);
      const T* g = g_states + o;
      for (long c = 0; c < width; ++c) bar[c] += g[c];
      if (clip >= 0) {  // clamp passes the gradient where -clip <= value <= clip
        const T lo = T(-clip), hi = T(clip);
        for (long c = 0; c < width; ++c)
          if (pre[o + c] < lo || pre[o + c] > hi) bar[c] = T(0);
      }
      const T* d = decay + t * m;
      for (long i = 0; i < n; ++i) {
        T sum = T(0);
        for (long k = 0; k < m; ++k) {
          const long c = i * m + k;
          const T u_bar = bar[c] * d[k];
          s_bar[c] = u_bar * (q[oq + i] - hh[c]);
          sum += u_bar * s[o + c];
          bar[c] = u_bar * (T(1) - s[o + c]);  // now the gradient of the traces before step t
        }
        g_aq[oq + i] = sum * (T(1) - q[oq + i] * q[oq + i]);  // the detector's pre-activation
        read_bar[i] = T(0);
        h_bar[i] = T(0);
      }
      add_transposed_product(n, n, wq, g_aq + oq, read_bar);
      for (long i = 0; i < n; ++i)
        for (long k = 0; k < m; ++k) {
          const long c = i * m + k;
          r_bar[c] = read_bar[i] * hh[c];
          bar[c] += read_bar[i] * r[o + c];
        }
      softmax_logits_backward(n, m, zr + o, lt, r + o, r_bar, g_ar + o);
      softmax_logits_backward(n, m, zs + o, lt, s + o, s_bar, g_as + o);
      add_transposed_product(n, width, wr, g_ar + o, h_bar);
      add_transposed_product(n, width, ws, g_as + o, h_bar);
      for (long i = 0; i < n; ++i)
        for (long k = 0; k < m; ++k) bar[i * m + k] += h_bar[i];
    }
  }
}

}  // namespace

#define CTGRU_LOOP_EXPORTS(T, suffix)                                                            \
  extern "C" void ctgru_loop_forward_##suffix(                                                   \
      long steps, long batch, long n, long m, double clip, const T* lt, const T* ar,             \
      const T* as, const T* aq, const T* wr, const T* ws, const T* wq, const T* decay,           \
      T* states, T* zr, T* zs, T* r, T* s, T* read, T* q, T* pre, long b0, long b1) {            \
    FlushDenormals flush;                                                                        \
    forward<T>({steps, batch, n, m}, clip, lt, ar, as, aq, wr, ws, wq, decay, states, zr, zs, r, \
               s, read, q, pre, b0, b1);                                                         \
  }                                                                                              \
  extern "C" void ctgru_loop_backward_##suffix(                                                  \
      long steps, long batch, long n, long m, double clip, const T* lt, const T* wr,             \
      const T* ws, const T* wq, const T* decay, const T* g_states, const T* states,              \
      const T* zr, const T* zs, const T* r, const T* s, const T* q, const T* pre, T* g_ar,       \
      T* g_as, T* g_aq, long b0, long b1) {                                                      \
    FlushDenormals flush;                                                                        \
    backward<T>({steps, batch, n, m}, clip, lt, wr, ws, wq, decay, g_states, states, zr, zs, r,  \
                s, q, pre, g_ar, g_as, g_aq, b0, b1);                                            \
  }

CTGRU_LOOP_EXPORTS(float, f32)
CTGRU_LOOP_EXPORTS(double, f64)
