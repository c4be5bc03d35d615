/*
   The block-sliced kernel of MATCSRKCUDA on the host, where there is no GPU: the kernels of csrkcudabsliced.cuh built
   with g++, every thread of a launch run in turn (no kernel of the layout shares data between threads). The host steps
   of csrkcudabsliced.cu and of the slice pointers (csrkcudasliced.cu) are repeated here. Checks, for block sizes 2-6:
   the block check accepts dense bs x bs blocks and refuses rows that share no column list, columns that are not whole
   aligned blocks and rows of different lengths; y = A x and y = A x + z against a long-double CSR product (outputs
   poisoned with NaN first); the diagonal and a shift; the refresh with new values; the CSR arrays given back; at bs 1,
   the sliced storage's positions, which the moves serve too. Matrices:
   random block graphs (the last slice partial, empty block rows, a rectangular block), no rows.
   Prints one line per case and "all ok"; exits 1 on any failure. Built and run by `make bsliced-emu` (`make check`).
*/
#include "cudaemu.h"
template <class T> T __ldcs(const T *p) { return *p; }
static int atomicOr(int *p, int v) { int o = *p; *p |= v; return o; }
// no kernel of the layout shuffles; the shared device helpers name them
template <class T> T __shfl_down_sync(unsigned, T v, int, int = 32) { return v; }
template <class T> T __shfl_up_sync(unsigned, T v, int, int = 32) { return v; }
#include "../src/mat/impls/csrk/cuda/csrkcudabsliced.cuh"

struct CSR { int m, n; std::vector<CSRKIdx> rp, ci; std::vector<double> v; };

// every thread of a grid of nb blocks of nt threads, in turn
template <class F> static void launch(PetscInt64 nb, unsigned nt, F f) {
  gridDim.x = (unsigned)nb; blockDim.x = nt;
  for (PetscInt64 b = 0; b < nb; b++) { blockIdx.x = (unsigned)b; for (unsigned t = 0; t < nt; t++) { threadIdx.x = t; f(); } }
}
static void serial() { blockIdx.x = 0; blockDim.x = 1; gridDim.x = 1; threadIdx.x = 0; }

// block rows of a random graph of nb block rows and nbc block columns, d blocks a block row on average (some empty),
// the diagonal block where square; every entry of a block stored
static CSR blocks(int nb, int nbc, int bs, int d, unsigned seed) {
  std::mt19937 g(seed); std::uniform_real_distribution<double> u(-1, 1);
  CSR A; A.m = nb * bs; A.n = nbc * bs; A.rp.push_back(0);
  for (int i = 0; i < nb; i++) {
    std::vector<int> c;
    if (g() % 9) { int len = 1 + g() % (2 * d); for (int j = 0; j < len; j++) c.push_back(g() % nbc); if (nb == nbc) c.push_back(i); }
    std::sort(c.begin(), c.end()); c.erase(std::unique(c.begin(), c.end()), c.end());
    for (int a = 0; a < bs; a++) {
      for (int cb : c) for (int k = 0; k < bs; k++) { A.ci.push_back(cb * bs + k); A.v.push_back(u(g) + (cb == i && a == k ? 10 : 0)); }
      A.rp.push_back((CSRKIdx)A.ci.size());
    }
  }
  return A;
}

// the layout as csrkcudabsliced.cu builds it; false where the block check refuses the rows
struct Layout { std::vector<CSRKIdx> blen, sliceptr, bcol; std::vector<double> bval; PetscInt64 nn, pb; };
static bool build(const CSR &A, int bs, Layout &L) {
  const PetscInt64 nn = A.m / bs, nsl = (nn + 31) / 32;
  int bad = 0;
  L.nn = nn; L.blen.assign(std::max<PetscInt64>(nn, 1), -7);
  launch((nn + 255) / 256 + 1, 256, [&] { CSRKBSlicedCheckKernel(nn, bs, A.rp.data(), A.ci.data(), L.blen.data(), &bad); });
  if (bad) return false;
  L.sliceptr.assign(nsl + 1, 0); // CSRKSliceSizeKernel with bs, then the scan
  for (PetscInt64 s = 0; s < nsl; s++) {
    PetscInt64 h = std::min<PetscInt64>(32, nn - 32 * s); CSRKIdx w = 0;
    for (PetscInt64 r = 32 * s; r < 32 * s + h; r++) w = std::max(w, (A.rp[bs * r + 1] - A.rp[bs * r]) / bs);
    L.sliceptr[s + 1] = L.sliceptr[s] + (CSRKIdx)((w * h + 31) / 32 * 32);
  }
  L.pb = L.sliceptr[nsl];
  L.bcol.assign(std::max<PetscInt64>(L.pb, 1), 0); L.bval.assign(std::max<PetscInt64>(L.pb * bs * bs, 1), 0.0);
  launch((A.m + 255) / 256 + 1, 256, [&] { CSRKSliceMoveKernel<false>(A.m, bs, A.rp.data(), L.sliceptr.data(), (CSRKIdx *)A.ci.data(), (double *)A.v.data(), L.bcol.data(), L.bval.data()); });
  return true;
}

template <int BS> static void mult(const Layout &L, const double *x, const double *z, double *y) {
  launch((L.nn + CSRK_BSLICED_THREADS - 1) / CSRK_BSLICED_THREADS, CSRK_BSLICED_THREADS, [&] {
    if (z) CSRKBSlicedKernel<BS, true>((CSRKIdx)L.nn, L.sliceptr.data(), L.blen.data(), L.bcol.data(), L.bval.data(), x, z, y);
    else CSRKBSlicedKernel<BS, false>((CSRKIdx)L.nn, L.sliceptr.data(), L.blen.data(), L.bcol.data(), L.bval.data(), x, NULL, y);
  });
}
static void multbs(int bs, const Layout &L, const double *x, const double *z, double *y) {
  switch (bs) { case 2: mult<2>(L, x, z, y); break; case 3: mult<3>(L, x, z, y); break; case 4: mult<4>(L, x, z, y); break; case 5: mult<5>(L, x, z, y); break; default: mult<6>(L, x, z, y); }
}

// y = A x (+ z) against a long-double CSR product
static int product(const CSR &A, int bs, const Layout &L, const char *what) {
  std::mt19937 g(3); std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(A.n), z(A.m), y(A.m);
  for (auto &t : x) t = u(g);
  for (auto &t : z) t = u(g);
  int bad = 0;
  for (int add = 0; add < 2; add++) {
    std::fill(y.begin(), y.end(), NAN);
    multbs(bs, L, x.data(), add ? z.data() : NULL, y.data());
    for (int r = 0; r < A.m; r++) {
      long double s = add ? z[r] : 0, nrm = add ? std::fabs(z[r]) : 0;
      for (CSRKIdx q = A.rp[r]; q < A.rp[r + 1]; q++) { s += (long double)A.v[q] * x[A.ci[q]]; nrm += std::fabs(A.v[q] * x[A.ci[q]]); }
      if (!(std::fabs(y[r] - (double)s) <= 1e-14 * (double)nrm + 1e-300)) { if (!bad) printf("  %s: row %d: %g against %g (add %d)\n", what, r, y[r], (double)s, add); bad++; }
    }
  }
  return bad;
}

static int check(CSR A, int bs, const char *name) {
  Layout L;
  int    bad = 0;
  if (!build(A, bs, L)) { printf("%-34s bs %d: refused by the block check: FAIL\n", name, bs); return 1; }
  bad += product(A, bs, L, "product");
  // diagonal and shift against the CSR arrays
  {
    std::vector<double> d(A.m, NAN), dref(A.m, 0.0);
    for (int r = 0; r < std::min(A.m, A.n); r++) for (CSRKIdx q = A.rp[r]; q < A.rp[r + 1]; q++) if (A.ci[q] == r) dref[r] = A.v[q];
    launch((A.m + 255) / 256 + 1, 256, [&] { CSRKBSlicedDiagonalKernel<false>(A.m, bs, L.sliceptr.data(), L.blen.data(), L.bcol.data(), L.bval.data(), d.data(), 0.0); });
    for (int r = 0; r < A.m; r++) if (!(d[r] == dref[r])) { if (!bad) printf("  diagonal row %d: %g against %g\n", r, d[r], dref[r]); bad++; break; }
    launch((A.m + 255) / 256 + 1, 256, [&] { CSRKBSlicedDiagonalKernel<true>(A.m, bs, L.sliceptr.data(), L.blen.data(), L.bcol.data(), L.bval.data(), NULL, 2.5); });
    for (int r = 0; r < std::min(A.m, A.n); r++) for (CSRKIdx q = A.rp[r]; q < A.rp[r + 1]; q++) if (A.ci[q] == r) A.v[q] += 2.5;
    bad += product(A, bs, L, "product after the shift");
  }
  // a refresh with new values, then the CSR arrays given back
  {
    std::mt19937 g(11); std::uniform_real_distribution<double> u(-2, 2);
    for (auto &t : A.v) t = u(g);
    launch((A.m + 255) / 256 + 1, 256, [&] { CSRKSliceMoveKernel<false>(A.m, bs, A.rp.data(), L.sliceptr.data(), NULL, A.v.data(), NULL, L.bval.data()); });
    bad += product(A, bs, L, "product after the refresh");
    std::vector<CSRKIdx> ci(A.ci.size(), -1); std::vector<double> v(A.v.size(), NAN);
    launch((A.m + 255) / 256 + 1, 256, [&] { CSRKSliceMoveKernel<true>(A.m, bs, A.rp.data(), L.sliceptr.data(), ci.data(), v.data(), L.bcol.data(), L.bval.data()); });
    if (ci != A.ci || v != A.v) { printf("  the CSR arrays given back differ\n"); bad++; }
  }
  printf("%-34s bs %d: m %d n %d, %ld block rows, %ld blocks with padding (%.3f of the nonzeros): %s\n", name, bs, A.m, A.n, (long)L.nn, (long)L.pb, A.rp[A.m] ? (double)L.pb * bs * bs / A.rp[A.m] : 0.0, bad ? "FAIL" : "ok");
  return bad;
}

// bs 1, the sliced storage's move (csrkcudasliced.cu): entry j of row r at sliceptr[r / 32] + j h + r % 32, and back
static int sliced1(const CSR &A, const char *name) {
  Layout L;
  int    bad = !build(A, 1, L);
  for (int r = 0; r < A.m && !bad; r++) {
    const int s = r / 32, h = std::min(32, A.m - 32 * s);
    for (CSRKIdx q = A.rp[r]; q < A.rp[r + 1]; q++) {
      const PetscInt64 p = L.sliceptr[s] + (PetscInt64)(q - A.rp[r]) * h + r % 32;
      if (L.bcol[p] != A.ci[q] || L.bval[p] != A.v[q]) { bad++; break; }
    }
  }
  std::vector<CSRKIdx> ci(A.ci.size(), -1); std::vector<double> v(A.v.size(), NAN);
  launch((A.m + 255) / 256 + 1, 256, [&] { CSRKSliceMoveKernel<true>(A.m, 1, A.rp.data(), L.sliceptr.data(), ci.data(), v.data(), L.bcol.data(), L.bval.data()); });
  if (ci != A.ci || v != A.v) bad++;
  printf("%-34s bs 1: the sliced storage's positions and the CSR arrays given back: %s\n", name, bad ? "FAIL" : "ok");
  return bad;
}

// the block check must refuse these
static int refuse(const CSR &A, int bs, const char *name) {
  Layout L;
  const bool took = build(A, bs, L);
  printf("%-34s bs %d: %s\n", name, bs, took ? "taken: FAIL" : "refused: ok");
  return took;
}

int main() {
  int bad = 0;
  serial();
  bad += sliced1(blocks(1000, 1000, 1, 9, 3), "random rows");
  bad += sliced1(blocks(41, 30, 1, 5, 4), "41 rows (a partial slice), rectangular");
  for (int bs = 2; bs <= 6; bs++) {
    bad += check(blocks(1000, 1000, bs, 9, 1 + bs), bs, "random block graph, 32 slices");
    bad += check(blocks(37, 37, bs, 4, 7 + bs), bs, "37 block rows (a partial slice)");
    bad += check(blocks(300, 90, bs, 5, 13 + bs), bs, "rectangular");
    bad += check(blocks(0, 0, bs, 3, 1), bs, "no rows");
    // refusals: one entry moved (a row of another length), a block shifted off alignment, rows with two column lists
    CSR A = blocks(200, 200, bs, 6, 21 + bs);
    CSR B = A; B.ci.erase(B.ci.begin() + B.rp[bs * 5 + 1] - 1); B.v.pop_back(); for (int r = bs * 5 + 1; r <= B.m; r++) B.rp[r]--;
    bad += refuse(B, bs, "a row one entry short");
    CSR C = A; for (int r = 0; r < C.m; r++) for (CSRKIdx q = C.rp[r]; q < C.rp[r + 1]; q++) C.ci[q] = C.ci[q] + 1 < C.n ? C.ci[q] + 1 : C.ci[q];
    bad += refuse(C, bs, "columns off the block alignment");
    CSR D = A; // the second block of the second row of the first block row of two blocks or more: a column moved
    for (int r = 1; r < D.m; r += bs) if (D.rp[r + 1] - D.rp[r] >= 2 * bs) { D.ci[D.rp[r] + bs] += D.ci[D.rp[r] + bs] + 1 < D.n ? 1 : -1; break; }
    bad += refuse(D, bs, "a row with its own columns");
    bad += refuse(blocks(60, 60, bs == 2 ? 3 : 2, 4, 5), bs, "blocks of another size");
  }
  printf("%s\n", bad ? "FAILURES" : "all ok");
  return bad != 0;
}
