// LTC sigmoid synapses (docs/sources.md#ltc-tf-cell, #ltc-ncps-cell) and the fused-solver
// unfolds (paper (b) Eq. 3), one sample at a time; the Python side is zoo/fast/ltc/compiled.py.
//
// A synapse layer from `pre` to `post` neurons, for presynaptic potentials v:
//   s_ij = sigmoid(sigma_ij v_i + offset_ij),
//   num_j = sum_i s_ij (W+E)_ij,  den_j = sum_i s_ij W+_ij.
// Its backward, for gradients n_j of num and d_j of den:
//   a_ij = (n_j (W+E)_ij + d_j W+_ij) s_ij (1 - s_ij),  v_bar_i = sum_j a_ij sigma_ij,
//   gradients sum a v_i (sigma), sum a (offset), sum s n (W+E), sum s d (W+).
// The backward recomputes s: storing it (1 MB per unfold at batch 256) saved about as much time
// backward as writing it cost forward, and recomputing lets the backward read the parameters in
// [post][pre] layout, so that both of its sums run down columns of vectors (no horizontal sums).
//
// An unfold updates v_j <- (c_num_j + (cm/h)_j v_j + num_j) / D_j with D_j = c_den_j + den_j;
// its backward, for the gradient v_bar of its output v': n_j = v_bar_j / D_j, d_j = -n_j v'_j,
// the layer's backward, and v_bar_j += n_j (cm/h)_j.
//
// Samples are independent: callers split the batch [b0, b1) between threads. The unfolds'
// backward runs two samples side by side, so that each parameter and gradient-sum row is read
// once for both (measured 48-49 against 55-56 ms at batch 256; four or eight did not help).
// Parameter gradients are summed per sample (or pair) in T, then added in double to the
// caller's g_params (and g_cm_h).
// Layouts are row-major: per step (steps, batch, n), per unfold (steps*unfolds, batch, n),
// sensory inputs (batch, steps, pre), parameters (pre, post) forward and (post, pre) backward.
#include <cstddef>
#include <utility>
#include <vector>

#include "denormals.h"
#include "activations.h"

// sigma, offset, (W+E), W+ of a layer, each (pre, post) forward or (post, pre) backward
template <typename T> struct Synapses {
  long pre, post;
  const T *sigma, *offset, *w_erev, *w;
};

// per-sample gradient sums for sigma, offset, (W+E), W+, each (post, pre)
template <typename T> struct Sums {
  std::vector<T> all;
  explicit Sums(long size) : all(4 * size) {}
  void flush(double* out) {
    for (std::size_t q = 0; q < all.size(); ++q) { out[q] += double(all[q]); all[q] = 0; }
  }
};

template <typename T>
static inline void layer_forward(const Synapses<T>& p, const T* v, T* __restrict num,
                                 T* __restrict den) {
  for (long j = 0; j < p.post; ++j) num[j] = den[j] = 0;
  for (long i = 0; i < p.pre; ++i) {
    const T vi = v[i];
    const T* __restrict sg = p.sigma + i * p.post;
    const T* __restrict of = p.offset + i * p.post;
    const T* __restrict we = p.w_erev + i * p.post;
    const T* __restrict ww = p.w + i * p.post;
#pragma omp simd
    for (long j = 0; j < p.post; ++j) {
      const T s = sigmoid(sg[j] * vi + of[j]);
      num[j] += s * we[j];
      den[j] += s * ww[j];
    }
  }
}

// adds v_bar (pre) and the parameter gradients to `sums` for a block of NB samples, whose
// parameter and sum rows are then read and written once for all of them; p in (post, pre) layout
template <long NB, typename T>
static inline void layer_backward(const Synapses<T>& p, const T* const* v, const T* const* n,
                                  const T* const* d, T* const* v_bar, Sums<T>& sums) {
  const long size = p.pre * p.post;
  for (long j = 0; j < p.post; ++j) {
    const long row = j * p.pre;
    const T* __restrict sg = p.sigma + row;
    const T* __restrict of = p.offset + row;
    const T* __restrict we = p.w_erev + row;
    const T* __restrict ww = p.w + row;
    T* __restrict g_sg = sums.all.data() + row;
    T* __restrict g_of = g_sg + size;
    T* __restrict g_we = g_of + size;
    T* __restrict g_w = g_we + size;
    T nj[NB], dj[NB];
    for (long q = 0; q < NB; ++q) { nj[q] = n[q][j]; dj[q] = d[q][j]; }
#pragma omp simd
    for (long i = 0; i < p.pre; ++i) {
      T s_we = 0, s_w = 0, s_of = 0, s_sg = 0;
      for (long q = 0; q < NB; ++q) {
        const T vi = v[q][i];
        const T s = sigmoid(sg[i] * vi + of[i]);
        const T a = (nj[q] * we[i] + dj[q] * ww[i]) * s * (T(1) - s);
        s_we += s * nj[q];
        s_w += s * dj[q];
        s_of += a;
        s_sg += a * vi;
        v_bar[q][i] += a * sg[i];
      }
      g_we[i] += s_we;
      g_w[i] += s_w;
      g_of[i] += s_of;
      g_sg[i] += s_sg;
    }
  }
}

template <typename T>
static void synapses_forward(long steps, Synapses<T> p, const T* v, T* num, T* den,
                             long b0, long b1) {
  for (long r = b0 * steps; r < b1 * steps; ++r)
    layer_forward(p, v + r * p.pre, num + r * p.post, den + r * p.post);
}

template <typename T>
static void synapses_backward(long steps, Synapses<T> p, const T* v, const T* g_num,
                              const T* g_den, T* g_v, double* g_params, long b0, long b1) {
  Sums<T> sums(p.pre * p.post);
  for (long b = b0; b < b1; ++b) {
    for (long r = b * steps; r < (b + 1) * steps; ++r) {
      for (long i = 0; i < p.pre; ++i) g_v[r * p.pre + i] = 0;
      const T* vr = v + r * p.pre;
      const T* nr = g_num + r * p.post;
      const T* dr = g_den + r * p.post;
      T* gr = g_v + r * p.pre;
      layer_backward<1>(p, &vr, &nr, &dr, &gr, sums);
    }
    sums.flush(g_params);
  }
}

template <typename T>
static void unfolds_forward(long steps, long batch, long n, long unfolds, const T* c_num,
                            const T* c_den, const T* cm_h, Synapses<T> p, T* states, T* inputs,
                            T* dens, long b0, long b1) {
  std::vector<T> v(n), num(n), den(n);
  for (long b = b0; b < b1; ++b) {
    for (long j = 0; j < n; ++j) v[j] = 0;
    for (long t = 0; t < steps; ++t) {
      const T* cn = c_num + (t * batch + b) * n;
      const T* cd = c_den + (t * batch + b) * n;
      const T* ch = cm_h + t * n;
      for (long u = 0; u < unfolds; ++u) {
        const long k = (t * unfolds + u) * batch + b;
        layer_forward(p, v.data(), num.data(), den.data());
        T* in = inputs + k * n;
        T* dn = dens + k * n;
        for (long j = 0; j < n; ++j) {
          in[j] = v[j];
          dn[j] = cd[j] + den[j];
          v[j] = (cn[j] + ch[j] * v[j] + num[j]) / dn[j];
        }
      }
      for (long j = 0; j < n; ++j) states[(t * batch + b) * n + j] = v[j];
    }
  }
}

// the unfolds' backward of samples b0 ... b0 + NB - 1, each its own recursion, side by side
template <long NB, typename T>
static void unfolds_backward_block(long steps, long batch, long n, long unfolds,
                                   const T* grad_states, const T* cm_h, const Synapses<T>& p,
                                   const T* inputs, const T* dens, const T* states, T* g_num,
                                   T* g_den, double* g_cm_h, Sums<T>& sums, long b0) {
  std::vector<T> work(4 * NB * n);
  T *v_bar[NB], *next[NB], *nb[NB], *db[NB];
  const T *v[NB];
  for (long q = 0; q < NB; ++q) {
    v_bar[q] = work.data() + (4 * q) * n;
    next[q] = v_bar[q] + n;
    nb[q] = next[q] + n;
    db[q] = nb[q] + n;
    for (long j = 0; j < n; ++j) v_bar[q][j] = 0;
  }
  for (long t = steps - 1; t >= 0; --t) {
    const T* ch = cm_h + t * n;
    double* gch = g_cm_h + t * n;
    for (long q = 0; q < NB; ++q) {
      const long row = (t * batch + b0 + q) * n;
      for (long j = 0; j < n; ++j) {
        v_bar[q][j] += grad_states[row + j];
        g_num[row + j] = g_den[row + j] = 0;
      }
    }
    for (long u = unfolds - 1; u >= 0; --u) {
      for (long q = 0; q < NB; ++q) {
        const long b = b0 + q, k = (t * unfolds + u) * batch + b;
        v[q] = inputs + k * n;
        const T* out = u == unfolds - 1 ? states + (t * batch + b) * n : inputs + (k + batch) * n;
        const T* d = dens + k * n;
        T* gn = g_num + (t * batch + b) * n;
        T* gd = g_den + (t * batch + b) * n;
        for (long j = 0; j < n; ++j) {
          nb[q][j] = v_bar[q][j] / d[j];
          db[q][j] = -nb[q][j] * out[j];
          gn[j] += nb[q][j];
          gd[j] += db[q][j];
          gch[j] += double(nb[q][j] * v[q][j]);
          next[q][j] = nb[q][j] * ch[j];
        }
      }
      layer_backward<NB>(p, v, nb, db, next, sums);
      for (long q = 0; q < NB; ++q) std::swap(v_bar[q], next[q]);
    }
  }
}

template <typename T>
static void unfolds_backward(long steps, long batch, long n, long unfolds, const T* grad_states,
                             const T* cm_h, Synapses<T> p, const T* inputs, const T* dens,
                             const T* states, T* g_num, T* g_den, double* g_cm_h,
                             double* g_params, long b0, long b1) {
  Sums<T> sums(n * n);
  long b = b0;
  for (; b + 2 <= b1; b += 2) {
    unfolds_backward_block<2>(steps, batch, n, unfolds, grad_states, cm_h, p, inputs, dens,
                              states, g_num, g_den, g_cm_h, sums, b);
    sums.flush(g_params);
  }
  for (; b < b1; ++b) {
    unfolds_backward_block<1>(steps, batch, n, unfolds, grad_states, cm_h, p, inputs, dens,
                              states, g_num, g_den, g_cm_h, sums, b);
    sums.flush(g_params);
  }
}

#define LTC_EXPORTS(T, suffix)                                                                  \
  extern "C" void synapses_forward_##suffix(long steps, long pre, long post,                    \
      const T* sigma, const T* offset, const T* w_erev, const T* w, const T* v, T* num,         \
      T* den, long b0, long b1) {                                                               \
    FlushDenormals flush;                                                                       \
    synapses_forward(steps, Synapses<T>{pre, post, sigma, offset, w_erev, w}, v, num,           \
                     den, b0, b1);                                                              \
  }                                                                                             \
  extern "C" void synapses_backward_##suffix(long steps, long pre, long post,                   \
      const T* sigma, const T* offset, const T* w_erev, const T* w, const T* v,                 \
      const T* g_num, const T* g_den, T* g_v, double* g_params, long b0, long b1) {             \
    FlushDenormals flush;                                                                       \
    synapses_backward(steps, Synapses<T>{pre, post, sigma, offset, w_erev, w}, v,               \
                      g_num, g_den, g_v, g_params, b0, b1);                                     \
  }                                                                                             \
  extern "C" void unfolds_forward_##suffix(long steps, long batch, long n, long unfolds,        \
      const T* sigma, const T* offset, const T* w_erev, const T* w, const T* c_num,             \
      const T* c_den, const T* cm_h, T* states, T* inputs, T* dens, long b0, long b1) {         \
    FlushDenormals flush;                                                                       \
    unfolds_forward(steps, batch, n, unfolds, c_num, c_den, cm_h,                               \
                    Synapses<T>{n, n, sigma, offset, w_erev, w}, states, inputs, dens, b0, b1); \
  }                                                                                             \
  extern "C" void unfolds_backward_##suffix(long steps, long batch, long n, long unfolds,       \
      const T* sigma, const T* offset, const T* w_erev, const T* w, const T* grad_states,       \
      const T* cm_h, const T* inputs, const T* dens, const T* states, T* g_num, T* g_den,       \
      double* g_cm_h, double* g_params, long b0, long b1) {                                     \
    FlushDenormals flush;                                                                       \
    unfolds_backward(steps, batch, n, unfolds, grad_states, cm_h,                               \
                     Synapses<T>{n, n, sigma, offset, w_erev, w}, inputs, dens, states, g_num,  \
                     g_den, g_cm_h, g_params, b0, b1);                                          \
  }

LTC_EXPORTS(float, f32)
LTC_EXPORTS(double, f64)
