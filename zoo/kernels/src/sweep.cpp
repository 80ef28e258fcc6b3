// The sweep of rank-S corrections of zoo/fast/fwp/delta_sweep.py, over blocks of independent lanes
// (samples x heads, innermost); the Python side is zoo/fast/fwp/delta_sweep_compiled.py.
//
// Forward, i = 0 ... M-1 (or M-1 ... 0 when reverse), K_i = columns[i*stride + s], s < S:
//   e_i = K_i^T x - b_i,   f_i = P_i e_i,   x <- x - K_i f_i,
// storing x before each step (xs_i), e_i and f_i. Backward, in the opposite order:
//   f~_i = f_bar_i - K_i^T x_bar,   e_bar_i = P_i^T f~_i,   x_bar <- x_bar + K_i e_bar_i,
// with the factor gradients formed on the way: columns_bar[i*stride + s] += e_bar_is xs_i -
// f_is x_bar (x_bar before the step's update), P_bar_i = f~_i e_i^T, b_bar_i = -e_bar_i.
// Lanes are independent: callers split [l0, l1) between threads. Each lane block keeps its x
// (h x block) in a local buffer; every loop over the block is one vectorised pass.
// Layouts (row-major, lanes innermost, L lanes): x (h, L), columns (U, h, L),
// P (M, S, S, L) indexed [i][s][t], b, e, f (M, S, L), xs (M, h, L).
#include <algorithm>
#include <vector>

#include "lanes.h"

namespace {

constexpr long BLOCK = 64;

struct Shape {
  long steps, stages, h, lanes, stride;
  bool reverse;
  long step(long n) const { return reverse ? steps - 1 - n : n; }
};

template <typename T>
void forward(const Shape& z, const T* x0, const T* columns, const T* P, const T* b, T* x_out,
             T* xs, T* es, T* fs, long l0, long l1) {
  const long S = z.stages, h = z.h, L = z.lanes;
  std::vector<T> x(h * BLOCK);
  for (long lb = l0; lb < l1; lb += BLOCK) {
    const long w = std::min(BLOCK, l1 - lb);
    for (long r = 0; r < h; ++r) assign(&x[r * BLOCK], x0 + r * L + lb, T(1), w);
    for (long n = 0; n < z.steps; ++n) {
      const long i = z.step(n);
      const T* K = columns + i * z.stride * h * L + lb;  // K[s][r] at (s * h + r) * L
      T* e = es + i * S * L + lb;
      T* f = fs + i * S * L + lb;
      for (long r = 0; r < h; ++r) assign(xs + (i * h + r) * L + lb, &x[r * BLOCK], T(1), w);
      for (long s = 0; s < S; ++s) {  // e = K^T x - b
        assign(e + s * L, b + (i * S + s) * L + lb, T(-1), w);
        for (long r = 0; r < h; ++r)
          add_product(e + s * L, K + (s * h + r) * L, &x[r * BLOCK], T(1), w);
      }
      for (long s = 0; s < S; ++s) {  // f = P e
        zero(f + s * L, w);
        for (long t = 0; t < S; ++t)
          add_product(f + s * L, P + ((i * S + s) * S + t) * L + lb, e + t * L, T(1), w);
      }
      for (long s = 0; s < S; ++s)  // x -= K f
        for (long r = 0; r < h; ++r)
          add_product(&x[r * BLOCK], K + (s * h + r) * L, f + s * L, T(-1), w);
    }
    for (long r = 0; r < h; ++r) assign(x_out + r * L + lb, &x[r * BLOCK], T(1), w);
  }
}

// x_bar (h, L) in: the gradient of x_M, out: of x0. columns_bar must be zero on entry.
template <typename T>
void backward(const Shape& z, const T* columns, const T* P, const T* xs, const T* es,
              const T* fs, const T* f_bar, T* x_bar, T* columns_bar, T* P_bar, T* e_bar,
              long l0, long l1) {
  const long S = z.stages, h = z.h, L = z.lanes;
  std::vector<T> xb(h * BLOCK), ft(S * BLOCK);
  for (long lb = l0; lb < l1; lb += BLOCK) {
    const long w = std::min(BLOCK, l1 - lb);
    for (long r = 0; r < h; ++r) assign(&xb[r * BLOCK], x_bar + r * L + lb, T(1), w);
    for (long n = z.steps - 1; n >= 0; --n) {
      const long i = z.step(n);
      const T* K = columns + i * z.stride * h * L + lb;
      T* Kb = columns_bar + i * z.stride * h * L + lb;
      const T* e = es + i * S * L + lb;
      const T* f = fs + i * S * L + lb;
      T* eb = e_bar + i * S * L + lb;
      for (long s = 0; s < S; ++s) {  // f~ = f_bar - K^T x_bar
        assign(&ft[s * BLOCK], f_bar + (i * S + s) * L + lb, T(1), w);
        for (long r = 0; r < h; ++r)
          add_product(&ft[s * BLOCK], K + (s * h + r) * L, &xb[r * BLOCK], T(-1), w);
      }
      for (long s = 0; s < S; ++s)  // P_bar = f~ e^T
        for (long t = 0; t < S; ++t) {
          T* pb = P_bar + ((i * S + s) * S + t) * L + lb;
          zero(pb, w);
          add_product(pb, &ft[s * BLOCK], e + t * L, T(1), w);
        }
      for (long t = 0; t < S; ++t) {  // e_bar = P^T f~
        zero(eb + t * L, w);
        for (long s = 0; s < S; ++s)
          add_product(eb + t * L, P + ((i * S + s) * S + t) * L + lb, &ft[s * BLOCK], T(1), w);
      }
      for (long s = 0; s < S; ++s)  // columns_bar += e_bar xs - f x_bar
        for (long r = 0; r < h; ++r) {
          add_product(Kb + (s * h + r) * L, eb + s * L, xs + (i * h + r) * L + lb, T(1), w);
          add_product(Kb + (s * h + r) * L, f + s * L, &xb[r * BLOCK], T(-1), w);
        }
      for (long s = 0; s < S; ++s)  // x_bar += K e_bar
        for (long r = 0; r < h; ++r)
          add_product(&xb[r * BLOCK], K + (s * h + r) * L, eb + s * L, T(1), w);
    }
    for (long r = 0; r < h; ++r) assign(x_bar + r * L + lb, &xb[r * BLOCK], T(1), w);
  }
}

}  // namespace

#define SWEEP_EXPORTS(T, suffix)                                                               \
  extern "C" void sweep_forward_##suffix(long steps, long stages, long h, long lanes,        \
      long stride, long reverse, const T* x0, const T* columns, const T* P, const T* b,       \
      T* x_out, T* xs, T* es, T* fs, long l0, long l1) {                                      \
    forward(Shape{steps, stages, h, lanes, stride, reverse != 0}, x0, columns, P, b, x_out,  \
            xs, es, fs, l0, l1);                                                              \
  }                                                                                           \
  extern "C" void sweep_backward_##suffix(long steps, long stages, long h, long lanes,       \
      long stride, long reverse, const T* columns, const T* P, const T* xs, const T* es,      \
      const T* fs, const T* f_bar, T* x_bar, T* columns_bar, T* P_bar, T* e_bar, long l0,     \
      long l1) {                                                                              \
    backward(Shape{steps, stages, h, lanes, stride, reverse != 0}, columns, P, xs, es, fs,   \
             f_bar, x_bar, columns_bar, P_bar, e_bar, l0, l1);                                \
  }

SWEEP_EXPORTS(float, f32)
SWEEP_EXPORTS(double, f64)
