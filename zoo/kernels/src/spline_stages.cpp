// A cubic spline and its derivative at T times (zoo/kernels/spline_stages.py):
//   X[b][t][c]  = a + (b + (1/2 2c + 3d r / 3) r) r,     X'[b][t][c] = b + (2c + 3d r) r
// with the coefficients of interval index[t] and r = t - t_index[t], the operations of
// torchcde's calls in their order and without fused multiply-adds, so the values are theirs bit
// for bit. Coefficient p of sample b, interval i, channel c at p[b * sb + i * si + c]; output
// element (b, t, c) at X[b * ob + t * ot + c * oc] (rows or stage-last memory). Samples
// [b0, b1) per call.
#pragma GCC optimize("fp-contract=off")

template <typename T>
static void spline_stages(long C, long T_, long sb, long si, long ob, long ot, long oc,
                          const T* a, const T* b, const T* two_c, const T* three_d,
                          const long* index, const T* r, T* X, T* dX, long b0, long b1) {
  for (long s = b0; s < b1; ++s)
    for (long t = 0; t < T_; ++t) {
      const long at = s * sb + index[t] * si, out = s * ob + t * ot;
      const T rt = r[t];
      for (long c = 0; c < C; ++c) {
        const T cc = two_c[at + c], dd = three_d[at + c], bb = b[at + c];
        T inner = T(0.5) * cc + dd * rt / T(3);
        inner = bb + inner * rt;
        X[out + c * oc] = a[at + c] + inner * rt;
        dX[out + c * oc] = bb + (cc + dd * rt) * rt;
      }
    }
}

#define SPLINE_STAGES_EXPORTS(T, suffix)                                                     \
  extern "C" void spline_stages_##suffix(long C, long T_, long sb, long si, long ob, long ot, \
                                         long oc, const T* a, const T* b, const T* two_c,    \
                                         const T* three_d, const long* index, const T* r,    \
                                         T* X, T* dX, long b0, long b1) {                     \
    spline_stages(C, T_, sb, si, ob, ot, oc, a, b, two_c, three_d, index, r, X, dX, b0, b1);  \
  }

SPLINE_STAGES_EXPORTS(float, f32)
SPLINE_STAGES_EXPORTS(double, f64)
