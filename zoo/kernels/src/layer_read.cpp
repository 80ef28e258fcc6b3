// The Hebb read through the keys' and values' layers (zoo/fast/fwp/layer_read.py), per sample b and
// head j:
//   P_u = A x_u  (M = H (h + 1) rows: the H h keys, head-major, then the H rates)
//   [l_u; beta_u] = s_u P_u + bias,  p_u = softmax(l_u) per head,  a_u = f_b v_u + e_b,
//   w_u = c_u a_u beta_u,  y = sum_u w_u p_u
// backward: g_u = <p_u, dy>;  dl_u = w_u p_u (dy - g_u);  dbeta_u = c_u a_u g_u;
//   da_u = c_u beta_u g_u;  D_u = [dl_u; dbeta_u]:  dA += sum_u D_u (s_u x_u)^T,
//   dbias += sum_u D_u,  ds_u = <D_u, P_u>,  df_b = sum_u da_u v_u^T,  de_b = sum_u da_u.
// x (B, K, U), v (B, Kv, U), s and c (B, U), f (B, H, Kv), e (B, H), y (B, H, h). The stages go
// in blocks of kBlock through the tiles of product.h and the exponential of exp.h, so P, a, the
// logits and their gradients never leave the cache; a block's missing stages are zeros (c = 0
// there: they add nothing). Samples [b0, b1) per call; the backward adds to its own dA, dbias.
#include <algorithm>
#include <vector>

#include "product.h"
#include "exp.h"
#include "lanes.h"

constexpr long kBlock = 128;

struct Shape {
  long H, h, K, Kv, U;
  long rows() const { return H * (h + 1); }
};

// the operands of sample b
template <typename T> struct Sample {
  const T *x, *v, *s, *c, *f, *e;
};

// a block's stages [u0, u0 + w) of a sample, zero-padded to kBlock, and P = A x, a = f v + e
template <typename T> struct Block {
  std::vector<T> x, v, s, c, a, P, pad, part;
  explicit Block(const Shape& n)
      : x(n.K * kBlock), v(n.Kv * kBlock), s(kBlock), c(kBlock), a(n.H * kBlock),
        P(n.rows() * kBlock), pad((n.K > n.Kv ? n.K : n.Kv) * Vector<T>::lanes, T(0)),
        part(kRows * Vector<T>::lanes) {}

  void load(const Shape& n, const T* A, const Sample<T>& in, long u0, long w) {
    auto copy = [&](T* to, const T* from) {
      std::memcpy(to, from, w * sizeof(T));
      std::memset(to + w, 0, (kBlock - w) * sizeof(T));
    };
    for (long k = 0; k < n.K; ++k) copy(x.data() + k * kBlock, in.x + k * n.U + u0);
    for (long k = 0; k < n.Kv; ++k) copy(v.data() + k * kBlock, in.v + k * n.U + u0);
    copy(s.data(), in.s + u0);
    copy(c.data(), in.c + u0);
    left_matrix(n.rows(), n.K, kBlock, A, static_cast<const T*>(nullptr), x.data(), kBlock,
                P.data(), kBlock, pad.data(), part.data());
    left_matrix(n.H, n.Kv, kBlock, in.f, in.e, v.data(), kBlock, a.data(), kBlock, pad.data(),
                part.data());
  }

  // head j over the block: the keys' exponentials e_i = exp(l_i - max_i l_i) (h, kBlock), their
  // sum's inverse z = 1 / sum_i e_i (so p_i = z e_i) and the weights w_u z_u; beta_u if asked
  void head(const Shape& n, const T* bias, long j, T* exps, T* z, T* wz, T* beta) const {
    T top[kBlock];
    for (long i = 0; i < n.h; ++i) {
      const long r = j * n.h + i;
      const T* __restrict p = P.data() + r * kBlock;
      T* __restrict l = exps + i * kBlock;
#pragma omp simd
      for (long u = 0; u < kBlock; ++u) {
        l[u] = s[u] * p[u] + bias[r];
        top[u] = i == 0 || l[u] > top[u] ? l[u] : top[u];
      }
    }
#pragma omp simd
    for (long u = 0; u < kBlock; ++u) z[u] = T(0);
    for (long i = 0; i < n.h; ++i) {
      T* __restrict l = exps + i * kBlock;
#pragma omp simd
      for (long u = 0; u < kBlock; ++u) {
        l[u] = exp_nonpositive(l[u] - top[u]);
        z[u] += l[u];
      }
    }
    const long r = n.H * n.h + j;
    const T* __restrict p = P.data() + r * kBlock;
    const T* __restrict aj = a.data() + j * kBlock;
#pragma omp simd
    for (long u = 0; u < kBlock; ++u) {
      const T rate = s[u] * p[u] + bias[r];
      if (beta) beta[u] = rate;
      z[u] = T(1) / z[u];
      wz[u] = c[u] * aj[u] * rate * z[u];
    }
  }
};

template <typename T>
static Sample<T> sample(const Shape& n, const T* x, const T* v, const T* s, const T* c,
                        const T* f, const T* e, long b) {
  return {x + b * n.K * n.U, v + b * n.Kv * n.U, s + b * n.U, c + b * n.U, f + b * n.H * n.Kv,
          e + b * n.H};
}

template <typename T>
static void layer_read(const Shape& n, const T* A, const T* bias, const T* x, const T* v,
                       const T* s, const T* c, const T* f, const T* e, T* y, long b0, long b1) {
  Block<T> block(n);
  std::vector<T> exps(n.h * kBlock), z(kBlock), wz(kBlock);
  for (long b = b0; b < b1; ++b) {
    const Sample<T> in = sample(n, x, v, s, c, f, e, b);
    T* yb = y + b * n.H * n.h;
    std::memset(yb, 0, n.H * n.h * sizeof(T));
    for (long u0 = 0; u0 < n.U; u0 += kBlock) {
      block.load(n, A, in, u0, n.U - u0 < kBlock ? n.U - u0 : kBlock);
      for (long j = 0; j < n.H; ++j) {
        block.head(n, bias, j, exps.data(), z.data(), wz.data(), static_cast<T*>(nullptr));
        for (long i = 0; i < n.h; ++i)
          yb[j * n.h + i] += dot(exps.data() + i * kBlock, wz.data(), kBlock);
      }
    }
  }
}

// head j's rows of D over the block (the keys' logits' and the rate's gradients) and its da,
// from dy_j and what Block::head gave; g is scratch (kBlock)
template <typename T>
static void head_gradient(const Shape& n, const Block<T>& block, long j, const T* dy,
                          const T* exps, const T* z, const T* wz, const T* beta, T* g, T* D,
                          T* da) {
  T* __restrict gu = g;  // g_u = <p_u, dy> = z_u <e_u, dy>
  std::memset(gu, 0, kBlock * sizeof(T));
  for (long i = 0; i < n.h; ++i) {
    const T* __restrict p = exps + i * kBlock;
#pragma omp simd
    for (long u = 0; u < kBlock; ++u) gu[u] += p[u] * dy[i];
  }
#pragma omp simd
  for (long u = 0; u < kBlock; ++u) gu[u] *= z[u];
  for (long i = 0; i < n.h; ++i) {
    const T* __restrict p = exps + i * kBlock;
    T* __restrict out = D + (j * n.h + i) * kBlock;
#pragma omp simd
    for (long u = 0; u < kBlock; ++u) out[u] = wz[u] * p[u] * (dy[i] - gu[u]);
  }
  const T* __restrict cb = block.c.data();
  const T* __restrict aj = block.a.data() + j * kBlock;
  T* __restrict drate = D + (n.H * n.h + j) * kBlock;
  T* __restrict daj = da + j * kBlock;
#pragma omp simd
  for (long u = 0; u < kBlock; ++u) {
    drate[u] = cb[u] * aj[u] * gu[u];
    daj[u] = cb[u] * beta[u] * gu[u];
  }
}

template <typename T>
static void layer_read_backward(const Shape& n, const T* A, const T* bias, const T* x,
                                const T* v, const T* s, const T* c, const T* f, const T* e,
                                const T* dy, T* dA, T* dbias, T* ds, T* df, T* de, long b0,
                                long b1) {
  using V = typename Vector<T>::type;
  const long M = n.rows();
  Block<T> block(n);
  std::vector<T> exps(n.h * kBlock), z(kBlock), wz(kBlock), beta(kBlock), g(kBlock),
      D(M * kBlock), da(n.H * kBlock), dsb(kBlock);
  std::vector<V> acc(M * n.K, V{}), sums(M, V{}), acc_f(n.H * n.Kv), sums_e(n.H);
  for (long b = b0; b < b1; ++b) {
    const Sample<T> in = sample(n, x, v, s, c, f, e, b);
    std::fill(acc_f.begin(), acc_f.end(), V{});
    std::fill(sums_e.begin(), sums_e.end(), V{});
    for (long u0 = 0; u0 < n.U; u0 += kBlock) {
      const long width = n.U - u0 < kBlock ? n.U - u0 : kBlock;
      block.load(n, A, in, u0, width);
      for (long j = 0; j < n.H; ++j) {
        block.head(n, bias, j, exps.data(), z.data(), wz.data(), beta.data());
        head_gradient(n, block, j, dy + (b * n.H + j) * n.h, exps.data(), z.data(), wz.data(),
                      beta.data(), g.data(), D.data(), da.data());
      }
      T* __restrict dsu = dsb.data();
      std::memset(dsu, 0, kBlock * sizeof(T));
      for (long r = 0; r < M; ++r) {
        const T* __restrict d = D.data() + r * kBlock;
        const T* __restrict p = block.P.data() + r * kBlock;
#pragma omp simd
        for (long u = 0; u < kBlock; ++u) dsu[u] += d[u] * p[u];
      }
      std::memcpy(ds + b * n.U + u0, dsu, width * sizeof(T));
      for (long k = 0; k < n.K; ++k) {  // the block's inputs scaled, s_u x_u
        T* __restrict xk = block.x.data() + k * kBlock;
        const T* __restrict sb = block.s.data();
#pragma omp simd
        for (long u = 0; u < kBlock; ++u) xk[u] *= sb[u];
      }
      grad_matrix(M, n.K, kBlock, D.data(), block.x.data(), acc.data(), sums.data());
      grad_matrix(n.H, n.Kv, kBlock, da.data(), block.v.data(), acc_f.data(), sums_e.data());
    }
    reduce_lanes(n.H * n.Kv, acc_f.data(), static_cast<const T*>(nullptr), df + b * n.H * n.Kv);
    reduce_lanes(n.H, sums_e.data(), static_cast<const T*>(nullptr), de + b * n.H);
  }
  reduce_lanes(M * n.K, acc.data(), static_cast<const T*>(nullptr), dA);
  reduce_lanes(M, sums.data(), static_cast<const T*>(nullptr), dbias);
}

// operands in the order of zoo/fast/fwp/layer_read.py: A, bias, x, s, c, f, e, v
#define LAYER_READ_EXPORTS(T, suffix)                                                        \
  extern "C" void layer_read_##suffix(long H, long h, long K, long Kv, long U, const T* A,  \
                                      const T* bias, const T* x, const T* s, const T* c,     \
                                      const T* f, const T* e, const T* v, T* y, long b0,     \
                                      long b1) {                                             \
    layer_read(Shape{H, h, K, Kv, U}, A, bias, x, v, s, c, f, e, y, b0, b1);              \
  }                                                                                          \
  extern "C" void layer_read_backward_##suffix(                                              \
      long H, long h, long K, long Kv, long U, const T* A, const T* bias, const T* x,        \
      const T* s, const T* c, const T* f, const T* e, const T* v, const T* dy, T* dA,        \
      T* dbias, T* ds, T* df, T* de, long b0, long b1) {                                     \
    layer_read_backward(Shape{H, h, K, Kv, U}, A, bias, x, v, s, c, f, e, dy, dA, dbias,  \
                        ds, df, de, b0, b1);                                                 \
  }

LAYER_READ_EXPORTS(float, f32)
LAYER_READ_EXPORTS(double, f64)
