/*
   The block kernel of MATCSRKCUDA on the host, where there is no GPU: the kernels of csrkcudablock.cuh built with g++,
   their grid-stride loops run by one thread (the set-up kernels) or by the W lanes of one sub-warp as threads whose
   shuffles meet at a barrier (the product). The host steps of csrkcudablock.cu (scans, allocations) are repeated here.
   Checks, for every lane count and both column forms: every row in exactly one node of 1 to 6 rows sharing its
   columns, y = A x and y = A x + z against a long-double CSR product, the diagonal and a shift. Matrices: bs-3
   elasticity (natural, renumbered by vertex, rows scrambled), runs of 1 to 7 and 1 to 9 equal rows (a dense row,
   empty rows, a rectangular block, columns spanning more than 16 bits), no rows, only empty rows.
   Prints one line per case and "all ok"; exits 1 on any failure. Built and run by `make block-emu` (`make check`).
*/
#include "cudaemu.h"
template <class T> T __ldcs(const T *p) { return *p; }
static std::barrier<> *bar;
static double shbuf[32];
template <class T> T __shfl_down_sync(unsigned mask, T v, int d, int w) {
  (void)mask; int lane = threadIdx.x % w;
  shbuf[lane] = v; bar->arrive_and_wait();
  T r = lane + d < w ? (T)shbuf[lane + d] : v; bar->arrive_and_wait(); return r;
}
template <class T> T __shfl_up_sync(unsigned, T v, int, int = 32) { return v; }
static int atomicAdd(int *p, int v) { int o = *p; *p += v; return o; }
static unsigned long long atomicMax(unsigned long long *p, unsigned long long v) { auto o = *p; if (v > *p) *p = v; return o; }
#include "../src/mat/impls/csrk/cuda/csrkcudablock.cuh"

static void serial() { blockIdx.x = 0; blockDim.x = 1; gridDim.x = 1; threadIdx.x = 0; }
static void exscan(std::vector<CSRKIdx> &a) { CSRKIdx s = 0; for (auto &v : a) { CSRKIdx t = v; v = s; s += t; } }

struct CSR { int m, n; std::vector<CSRKIdx> rp, ci; std::vector<double> v; };

static int check(const CSR &A, bool off16, int W, const char *name) {
  const PetscInt64 m = A.m, nnz = A.rp[m];
  std::vector<CSRKIdx> head(m + 1), runid, runstart(m + 1), nhead(m + 1), nid;
  serial();
  CSRKBlockHeadKernel(m, A.rp.data(), A.ci.data(), head.data());
  runid = head; exscan(runid);
  CSRKBlockRunStartKernel(m, head.data(), runid.data(), runstart.data());
  CSRKBlockNodeHeadKernel(m, head.data(), runid.data(), runstart.data(), nhead.data());
  nid = nhead; exscan(nid);
  const PetscInt64 nn = nid[m];
  std::vector<CSRKIdx> nodeptr(nn + 1, -7), ncp(nn + 1, -7), nvp(nn + 1, -7), nb(nn + 1, -7);
  CSRKBlockStats st = {0, 0};
  if (m) CSRKBlockNodesKernel(m, nnz, nn, A.rp.data(), A.ci.data(), nhead.data(), nid.data(), nodeptr.data(), ncp.data(), nvp.data(), nb.data(), &st);
  else { nodeptr[0] = ncp[0] = nvp[0] = nb[0] = 0; }
  exscan(ncp);
  const PetscInt64 ncolent = ncp[nn];
  off16 = off16 && st.span < 65536;
  std::vector<uint16_t> off(std::max<PetscInt64>(ncolent, 1)); std::vector<CSRKIdx> col(std::max<PetscInt64>(ncolent, 1));
  if (off16) CSRKBlockColumnsKernel<uint16_t>(nn, ncp.data(), nvp.data(), nb.data(), A.ci.data(), off.data());
  else CSRKBlockColumnsKernel<CSRKIdx>(nn, ncp.data(), nvp.data(), NULL, A.ci.data(), col.data());
  // checks of the layout: every row in one node, node rows share columns
  int bad = 0;
  for (PetscInt64 q = 0; q < nn; q++) {
    CSRKIdx h = nodeptr[q + 1] - nodeptr[q];
    if (h < 1 || h > 6) bad++;
    for (CSRKIdx i = 0; i < h; i++) { CSRKIdx r = nodeptr[q] + i; if (A.rp[r + 1] - A.rp[r] != ncp[q + 1] - ncp[q]) bad++; }
  }
  if (nodeptr[nn] != m) bad++;
  // product
  std::vector<double> x(A.n), z(m), y(m, NAN), yref(m);
  std::mt19937 g(3); std::uniform_real_distribution<double> u(-1, 1);
  for (auto &t : x) t = u(g);
  for (auto &t : z) t = u(g);
  for (int add = 0; add < 2; add++) {
    std::fill(y.begin(), y.end(), NAN);
    for (PetscInt64 r = 0; r < m; r++) { long double s = 0; for (CSRKIdx q = A.rp[r]; q < A.rp[r + 1]; q++) s += (long double)A.v[q] * x[A.ci[q]]; yref[r] = (double)s + (add ? z[r] : 0); }
    std::barrier<> b(W); bar = &b;
    blockIdx.x = 0; blockDim.x = W; gridDim.x = 1;
    std::vector<std::thread> th;
    for (int t = 0; t < W; t++) th.emplace_back([&, t] {
      threadIdx.x = t;
      switch (W) {
      case 2: off16 ? CSRKBlockKernel<2, uint16_t>(nn, nodeptr.data(), ncp.data(), nvp.data(), nb.data(), off.data(), A.v.data(), x.data(), add ? z.data() : NULL, y.data()) : CSRKBlockKernel<2, CSRKIdx>(nn, nodeptr.data(), ncp.data(), nvp.data(), NULL, col.data(), A.v.data(), x.data(), add ? z.data() : NULL, y.data()); break;
      case 4: off16 ? CSRKBlockKernel<4, uint16_t>(nn, nodeptr.data(), ncp.data(), nvp.data(), nb.data(), off.data(), A.v.data(), x.data(), add ? z.data() : NULL, y.data()) : CSRKBlockKernel<4, CSRKIdx>(nn, nodeptr.data(), ncp.data(), nvp.data(), NULL, col.data(), A.v.data(), x.data(), add ? z.data() : NULL, y.data()); break;
      case 8: off16 ? CSRKBlockKernel<8, uint16_t>(nn, nodeptr.data(), ncp.data(), nvp.data(), nb.data(), off.data(), A.v.data(), x.data(), add ? z.data() : NULL, y.data()) : CSRKBlockKernel<8, CSRKIdx>(nn, nodeptr.data(), ncp.data(), nvp.data(), NULL, col.data(), A.v.data(), x.data(), add ? z.data() : NULL, y.data()); break;
      case 16: off16 ? CSRKBlockKernel<16, uint16_t>(nn, nodeptr.data(), ncp.data(), nvp.data(), nb.data(), off.data(), A.v.data(), x.data(), add ? z.data() : NULL, y.data()) : CSRKBlockKernel<16, CSRKIdx>(nn, nodeptr.data(), ncp.data(), nvp.data(), NULL, col.data(), A.v.data(), x.data(), add ? z.data() : NULL, y.data()); break;
      default: off16 ? CSRKBlockKernel<32, uint16_t>(nn, nodeptr.data(), ncp.data(), nvp.data(), nb.data(), off.data(), A.v.data(), x.data(), add ? z.data() : NULL, y.data()) : CSRKBlockKernel<32, CSRKIdx>(nn, nodeptr.data(), ncp.data(), nvp.data(), NULL, col.data(), A.v.data(), x.data(), add ? z.data() : NULL, y.data());
      }
    });
    for (auto &t : th) t.join();
    double err = 0, nrm = 0;
    for (PetscInt64 r = 0; r < m; r++) { err = std::max(err, std::fabs(y[r] - yref[r])); nrm = std::max(nrm, std::fabs(yref[r])); }
    if (!(err <= 1e-12 * std::max(nrm, 1.0))) { bad++; printf("  product error %g (add %d)\n", err, add); }
  }
  // diagonal and shift
  {
    std::vector<double> d(m, NAN), dref(m, 0.0); std::vector<double> v2 = A.v;
    for (PetscInt64 r = 0; r < std::min<PetscInt64>(m, A.n); r++) for (CSRKIdx q = A.rp[r]; q < A.rp[r + 1]; q++) if (A.ci[q] == r) dref[r] = A.v[q];
    serial();
    if (off16) { CSRKBlockDiagonalKernel<false, uint16_t>(nn, nodeptr.data(), ncp.data(), nvp.data(), nb.data(), off.data(), v2.data(), d.data(), 0.0); CSRKBlockDiagonalKernel<true, uint16_t>(nn, nodeptr.data(), ncp.data(), nvp.data(), nb.data(), off.data(), v2.data(), NULL, 2.5); }
    else { CSRKBlockDiagonalKernel<false, CSRKIdx>(nn, nodeptr.data(), ncp.data(), nvp.data(), NULL, col.data(), v2.data(), d.data(), 0.0); CSRKBlockDiagonalKernel<true, CSRKIdx>(nn, nodeptr.data(), ncp.data(), nvp.data(), NULL, col.data(), v2.data(), NULL, 2.5); }
    for (PetscInt64 r = 0; r < m; r++) if (!(d[r] == dref[r])) { bad++; break; }
    for (PetscInt64 r = 0; r < std::min<PetscInt64>(m, A.n); r++) for (CSRKIdx q = A.rp[r]; q < A.rp[r + 1]; q++) { double e = A.v[q] + (A.ci[q] == r ? 2.5 : 0); if (v2[q] != e) { bad++; r = m; break; } }
  }
  printf("%-28s off16=%d W=%2d: m %d nodes %ld noderows %d colent %ld span %llu: %s\n", name, (int)off16, W, A.m, (long)nn, st.noderows, (long)ncolent, (unsigned long long)st.span, bad ? "FAIL" : "ok");
  return bad;
}

// bs-3 27-point block matrix on an n^3 grid, vertices renumbered by a random permutation (rows of a vertex together)
static CSR elast(int n, bool perm, bool rowperm) {
  int N = n * n * n; std::vector<int> p(N); for (int i = 0; i < N; i++) p[i] = i;
  std::mt19937 g(1); if (perm) std::shuffle(p.begin(), p.end(), g);
  std::vector<int> rp3(3 * N);  for (int i = 0; i < 3 * N; i++) rp3[i] = i; if (rowperm) std::shuffle(rp3.begin(), rp3.end(), g);
  std::vector<std::vector<std::pair<int, double>>> rows(3 * N);
  for (int v = 0; v < N; v++) { int x = v % n, y = (v / n) % n, z = v / (n * n);
    for (int dz = -1; dz <= 1; dz++) for (int dy = -1; dy <= 1; dy++) for (int dx = -1; dx <= 1; dx++) {
      int X = x + dx, Y = y + dy, Z = z + dz; if (X < 0 || Y < 0 || Z < 0 || X >= n || Y >= n || Z >= n) continue;
      int w = X + n * (Y + n * Z);
      for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) rows[rp3[3 * p[v] + i]].push_back({rp3[3 * p[w] + j], 1.0 + 0.1 * i - 0.07 * j + 0.013 * (v % 7) + (v == w && i == j ? 30 : 0)});
    } }
  CSR A; A.m = A.n = 3 * N; A.rp.push_back(0);
  for (auto &r : rows) { std::sort(r.begin(), r.end()); for (auto &e : r) { A.ci.push_back(e.first); A.v.push_back(e.second); } A.rp.push_back(A.ci.size()); }
  return A;
}
// runs of 1..maxrun rows with one random column list (some empty), optionally a dense row; rectangular when n != m
static CSR runs(int m, int n, int maxrun, int avg, bool dense, unsigned seed) {
  std::mt19937 g(seed); CSR A; A.m = m; A.n = n; A.rp.push_back(0);
  int r = 0;
  while (r < m) {
    int L = 1 + g() % maxrun; L = std::min(L, m - r);
    int len = (g() % 5 == 0) ? 0 : 1 + g() % (2 * avg);
    if (dense && r <= m / 2 && m / 2 < r + L) len = n;
    std::vector<int> c; if (len == n) for (int j = 0; j < n; j++) c.push_back(j); else { for (int j = 0; j < len; j++) c.push_back(g() % n); std::sort(c.begin(), c.end()); c.erase(std::unique(c.begin(), c.end()), c.end()); }
    if (m == n && !c.empty()) { if (!std::binary_search(c.begin(), c.end(), r)) { c.push_back(r); std::sort(c.begin(), c.end()); } }
    for (int i = 0; i < L; i++, r++) {
      for (int j : c) { A.ci.push_back(j); A.v.push_back(std::uniform_real_distribution<double>(-1, 1)(g)); }
      A.rp.push_back(A.ci.size());
    }
  }
  return A;
}

int main() {
  int bad = 0;
  CSR E = elast(5, true, false), En = elast(5, false, false), Er = elast(4, true, true), R = runs(3000, 3000, 7, 6, true, 5), Rr = runs(2000, 700, 9, 4, false, 7), Big = runs(2000, 200000, 3, 5, false, 9), Z = runs(0, 0, 3, 3, false, 1);
  CSR Empty; Empty.m = 50; Empty.n = 50; Empty.rp.assign(51, 0);
  for (int W : {2, 4, 8, 16, 32}) for (int o : {0, 1}) {
    bad += check(E, o, W, "elasticity by vertex");
    bad += check(En, o, W, "elasticity natural");
    bad += check(Er, o, W, "elasticity rows scrambled");
    bad += check(R, o, W, "runs 1-7 + dense row");
    bad += check(Rr, o, W, "runs 1-9 rectangular");
    bad += check(Big, o, W, "wide span");
    bad += check(Z, o, W, "no rows");
    bad += check(Empty, o, W, "empty rows");
  }
  printf("%s\n", bad ? "FAILURES" : "all ok");
  return bad != 0;
}
