/*
   The kernels of a level of MATCSRKCUDA's RCM order on the host, where there is no GPU: the claim, count and place
   kernels of csrkcudareorder.cuh built with g++, each block's threads run as threads whose sub-warp intrinsics
   (shuffles, ballots) meet at a barrier of their sub-warp, the blocks one after another; the level loop, the scan and
   the restart of csrkcudareorder.cu repeated here on the host. Checks that the order is the one of the sequential
   definition (a vertex claimed by the first position of the level that reaches it, the children of a position in the
   order of its row, a restart from the lowest row not reached when a level has no children), for 4, 8 and 32 lanes and
   grids of one to three blocks. Matrices: a 2-D grid renumbered at random, random symmetric graphs of several
   components, a star (a row longer than the lanes many times over), isolated rows, one row. Then the count of the
   sectors of x that decides the order (CSRKSectorCountKernel, a warp a 32-row slice) against one by one, and its
   verdict against the auto ordering's threshold: a 9-point grid numbered by row parity (most columns far from the
   diagonal, neighbouring rows with neighbouring columns) gathers well, random numberings scatter.
   Prints one line per case and "all ok"; exits 1 on any failure. Built and run by `make rcm-emu` (`make check`).
*/
#include "cudaemu.h"
#include <mutex>
#include <memory>
#include <set>

// sub-warp intrinsics: the lanes of `mask` (one sub-warp) meet at the barrier of its first lane
static std::unique_ptr<std::barrier<>> subbar[32];
static long long lanebuf[32];
static std::mutex atom;
static std::barrier<> &bar(unsigned mask) { return *subbar[__builtin_ctz(mask)]; }
// each lane of `mask` puts v in, then reads what it needs of the others' (f of its lane) before any puts again
template <class T, class F> static auto exchange(unsigned mask, T v, F f) {
  const int lane = threadIdx.x % 32; lanebuf[lane] = (long long)v; bar(mask).arrive_and_wait();
  auto r = f(lane); bar(mask).arrive_and_wait(); return r;
}
// the lanes of mask whose values are `pred` of the caller's
template <class P> static unsigned lanes_where(unsigned mask, P pred) {
  unsigned r = 0;
  for (int i = 0; i < 32; i++) if ((mask >> i & 1u) && pred(lanebuf[i])) r |= 1u << i;
  return r;
}
static unsigned __ballot_sync(unsigned mask, int pred) {
  return exchange(mask, pred != 0, [&](int) { return lanes_where(mask, [](long long o) { return o != 0; }); });
}
static unsigned __match_any_sync(unsigned mask, unsigned long long v) {
  return exchange(mask, v, [&](int) { return lanes_where(mask, [&](long long o) { return (unsigned long long)o == v; }); });
}
template <class T> T __shfl_down_sync(unsigned mask, T v, int d, int w = 32) {
  return exchange(mask, v, [&](int lane) { return lane % w + d < w ? (T)lanebuf[lane + d] : v; });
}
template <class T> T __shfl_sync(unsigned mask, T v, int src, int w) {
  return exchange(mask, v, [&](int lane) { return (T)lanebuf[lane / w * w + src]; });
}
template <class T> T __shfl_xor_sync(unsigned mask, T v, int d) {
  return exchange(mask, v, [&](int lane) { return (T)lanebuf[lane ^ d]; });
}
static int __popc(unsigned v) { return __builtin_popcount(v); }
static int __ffs(unsigned v) { return __builtin_ffs((int)v); }
static int atomicMin(int *p, int v) { std::lock_guard<std::mutex> g(atom); int o = *p; if (v < o) *p = v; return o; }
static int atomicAdd(int *p, int v) { std::lock_guard<std::mutex> g(atom); int o = *p; *p += v; return o; }
static unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) { std::lock_guard<std::mutex> g(atom); auto o = *p; *p += v; return o; }
#include "../src/mat/impls/csrk/cuda/csrkcudareorder.cuh"

static const int NONE = 0x7f7f7f7f;

// a launch of grid blocks of threads (a multiple of 32), the blocks in turn, the threads of a block at once
template <class F> static void launch(unsigned grid, unsigned threads, int W, F &&kernel) {
  gridDim.x = grid; blockDim.x = threads;
  for (unsigned b = 0; b < grid; b++) {
    blockIdx.x = b;
    for (int s = 0; s < 32; s += W) subbar[s] = std::make_unique<std::barrier<>>(W);
    // the warps of a block in turn: lanebuf and the barriers are a warp's
    for (unsigned w0 = 0; w0 < threads; w0 += 32) {
      std::vector<std::thread> th;
      for (unsigned t = w0; t < w0 + 32; t++) th.emplace_back([&, t] { threadIdx.x = t; kernel(); });
      for (auto &t : th) t.join();
    }
  }
}

struct Graph { int m; std::vector<CSRKIdx> rp, ci; };

// the sequential definition
static std::vector<CSRKIdx> reference(const Graph &A, int nseeds) {
  const int m = A.m; std::vector<CSRKIdx> order(m); std::vector<int> claim(m, NONE); std::vector<int> lev = {0, nseeds};
  for (int s = 0; s < nseeds; s++) { order[s] = (CSRKIdx)((int64_t)s * m / nseeds); claim[order[s]] = -1; }
  for (int l = 0; lev[l + 1] < m; l++) {
    const int lo = lev[l], hi = lev[l + 1]; int k = hi;
    for (int p = lo; p < hi; p++) for (CSRKIdx q = A.rp[order[p]]; q < A.rp[order[p] + 1]; q++) if (claim[A.ci[q]] > p) claim[A.ci[q]] = p;
    for (int p = lo; p < hi; p++) for (CSRKIdx q = A.rp[order[p]]; q < A.rp[order[p] + 1]; q++) if (claim[A.ci[q]] == p) order[k++] = A.ci[q];
    if (k == hi) { int s = 0; while (claim[s] != NONE) s++; order[k++] = s; claim[s] = -1; }
    lev.push_back(k);
  }
  return order;
}

// the device's level loop with the kernels of csrkcudareorder.cuh
template <int W> static std::vector<CSRKIdx> emulated(const Graph &A, int nseeds, unsigned grid, unsigned threads) {
  const int m = A.m; std::vector<CSRKIdx> order(m, -9); std::vector<int> claim(m, NONE), cnt(m + 1, -9), csum(m / CSRK_RCM_CHUNK + 2, -9), lev(m + 3, -9);
  CSRKRcmState st = {0, 0};
  for (int s = 0; s < nseeds; s++) { order[s] = (CSRKIdx)((int64_t)s * m / nseeds); claim[order[s]] = -1; }
  lev[0] = 0; lev[1] = nseeds;
  for (int l = 0; lev[l + 1] < m; l++) {
    launch(grid, threads, W, [&] { CSRKRcmClaimKernel<W>(l, lev.data(), order.data(), A.rp.data(), A.ci.data(), claim.data(), csum.data()); });
    launch(grid, threads, W, [&] { CSRKRcmCountKernel<W>(l, lev.data(), order.data(), A.rp.data(), A.ci.data(), claim.data(), cnt.data(), csum.data()); });
    { // the scan kernel and the restart kernel
      const int lo = lev[l], hi = lev[l + 1], nc = (hi - lo + CSRK_RCM_CHUNK - 1) / CSRK_RCM_CHUNK; int carry = 0;
      for (int c = 0; c < nc; c++) { int v = csum[c]; csum[c] = carry; carry += v; }
      lev[l + 2] = hi + carry;
      if (!carry && hi < m) { st.needseed = 1; st.seed = NONE; for (int u = m - 1; u >= 0; u--) if (claim[u] == NONE) st.seed = u; }
    }
    launch(grid, threads, W, [&] { CSRKRcmPlaceKernel<W>(l, lev.data(), order.data(), A.rp.data(), A.ci.data(), claim.data(), cnt.data(), csum.data(), &st); });
  }
  return order;
}

static Graph symmetric(int m, const std::vector<std::pair<int, int>> &edges) {
  std::vector<std::set<int>> adj(m);
  for (int i = 0; i < m; i++) adj[i].insert(i);
  for (auto [a, b] : edges) { adj[a].insert(b); adj[b].insert(a); }
  Graph A; A.m = m; A.rp.push_back(0);
  for (auto &s : adj) { for (int j : s) A.ci.push_back(j); A.rp.push_back((CSRKIdx)A.ci.size()); }
  return A;
}
static Graph grid2d(int n, unsigned seed) {
  std::vector<int> p(n * n); for (int i = 0; i < n * n; i++) p[i] = i;
  std::mt19937 g(seed); std::shuffle(p.begin(), p.end(), g);
  std::vector<std::pair<int, int>> e;
  for (int y = 0; y < n; y++) for (int x = 0; x < n; x++) { if (x + 1 < n) e.push_back({p[x + n * y], p[x + 1 + n * y]}); if (y + 1 < n) e.push_back({p[x + n * y], p[x + n * (y + 1)]}); }
  return symmetric(n * n, e);
}
static Graph randgraph(int m, int avg, int comps, unsigned seed) {
  std::mt19937 g(seed); std::vector<std::pair<int, int>> e;
  for (int i = 0; i < m; i++) for (int k = 0; k < avg / 2; k++) { int j = (int)(g() % m); if (j % comps == i % comps) e.push_back({i, j}); }
  return symmetric(m, e);
}
static Graph star(int m) { std::vector<std::pair<int, int>> e; for (int i = 1; i < m; i++) e.push_back({0, i}); return symmetric(m, e); }

// the sectors of x (4 scalars each) that each step of each 32-row slice gathers, counted one by one
static unsigned long long sectors(const Graph &A) {
  unsigned long long n = 0;
  for (int s = 0; s < A.m; s += 32) {
    int top = 0;
    for (int r = s; r < std::min(A.m, s + 32); r++) top = std::max(top, (int)(A.rp[r + 1] - A.rp[r]));
    for (int j = 0; j < top; j++) {
      std::set<CSRKIdx> seen;
      for (int r = s; r < std::min(A.m, s + 32); r++) if (A.rp[r] + j < A.rp[r + 1]) seen.insert(A.ci[A.rp[r] + j] / 4);
      n += seen.size();
    }
  }
  return n;
}
// the same by CSRKSectorCountKernel; the measure (a nonzero) against the auto ordering's threshold: above or not as
// expected (scattered 1 or 0; -1: not checked, on matrices whose x spans few sectors, so that random columns meet)
static int runsectors(const Graph &A, const char *name, int scattered, unsigned grid, unsigned threads) {
  unsigned long long dev = 0;
  const unsigned long long ref = sectors(A);
  launch(grid, threads, 32, [&] { CSRKSectorCountKernel(A.m, A.rp.data(), A.ci.data(), &dev); });
  const double per = A.ci.empty() ? 0 : (double)dev / A.ci.size();
  const int    bad = dev != ref || (scattered >= 0 && (per > 0.8) != (scattered > 0));
  printf("%-26s m %6d sectors %8llu (%.3f a nonzero%s) grid %u x %3u: %s\n", name, A.m, dev, per, scattered < 0 ? "" : scattered ? ", scattered" : ", gathers well", grid, threads, bad ? "FAIL" : "ok");
  return bad;
}
// a 9-point stencil on an n x n grid, its even rows of points numbered before its odd ones: 6 of a point's 9 columns lie
// about m/2 away (as in DMPlex's numbering, most columns far from the diagonal), yet neighbouring rows have neighbouring
// columns; seed > 0: renumbered at random instead
static Graph grid9(int n, unsigned seed) {
  std::vector<int> p(n * n);
  for (int y = 0; y < n; y++) for (int x = 0; x < n; x++) p[x + n * y] = (y % 2 ? (n + 1) / 2 * n : 0) + y / 2 * n + x;
  if (seed) { std::mt19937 g(seed); std::shuffle(p.begin(), p.end(), g); }
  std::vector<std::pair<int, int>> e;
  for (int y = 0; y < n; y++) for (int x = 0; x < n; x++) for (int dy = 0; dy <= 1; dy++) for (int dx = -1; dx <= 1; dx++) {
    if ((dy == 0 && dx <= 0) || x + dx < 0 || x + dx >= n || y + dy >= n) continue;
    e.push_back({p[x + n * y], p[x + dx + n * (y + dy)]});
  }
  return symmetric(n * n, e);
}

template <int W> static int run(const Graph &A, const char *name, int seeds, unsigned grid, unsigned threads) {
  const std::vector<CSRKIdx> r = reference(A, seeds), o = emulated<W>(A, seeds, grid, threads);
  std::vector<char> seen(A.m, 0); int bad = r != o;
  for (CSRKIdx v : o) { if (v < 0 || v >= A.m || seen[v]) { bad = 1; break; } seen[v] = 1; }
  printf("%-26s m %6d seeds %3d lanes %2d grid %u x %3u: %s\n", name, A.m, seeds, W, grid, threads, bad ? "FAIL" : "ok");
  return bad;
}

int main() {
  int bad = 0;
  const Graph g2 = grid2d(24, 1), r3 = randgraph(1200, 8, 3, 2), r1 = randgraph(800, 14, 1, 3), st = star(300), iso = symmetric(50, {}), one = symmetric(1, {});
  struct { const Graph *A; const char *name; int seeds; } cases[] = {{&g2, "2-D grid 24^2 renumbered", 1}, {&g2, "2-D grid 24^2 renumbered", 7}, {&r3, "random, 3 components", 2}, {&r1, "random, 14 a row", 5}, {&st, "star of 300", 1}, {&iso, "50 isolated rows", 1}, {&one, "one row", 1}};
  for (auto &c : cases) {
    bad += run<8>(*c.A, c.name, c.seeds, 1, 32);
    bad += run<8>(*c.A, c.name, c.seeds, 3, 64);
    bad += run<4>(*c.A, c.name, c.seeds, 2, 32);
    bad += run<32>(*c.A, c.name, c.seeds, 2, 64);
  }
  // the auto ordering's count of the sectors of x, on a numbering far from the diagonal that gathers well and on random ones
  const Graph p9 = grid9(101, 0), q9 = grid9(101, 4);
  int far = 0;
  for (int i = 0; i < p9.m; i++) for (CSRKIdx q = p9.rp[i]; q < p9.rp[i + 1]; q++) far += std::abs(p9.ci[q] - i) > p9.m / 16;
  if (2 * far <= (int)p9.ci.size()) { printf("9-point grid by row parity: only %d of %zu columns far from the diagonal: FAIL\n", far, p9.ci.size()); bad++; }
  bad += runsectors(p9, "9-point grid by row parity", 0, 2, 256);
  bad += runsectors(p9, "9-point grid by row parity", 0, 3, 64);
  bad += runsectors(q9, "9-point grid renumbered", 1, 2, 256);
  bad += runsectors(g2, "2-D grid 24^2 renumbered", -1, 1, 64);
  bad += runsectors(r3, "random, 3 components", -1, 3, 64);
  bad += runsectors(st, "star of 300", -1, 2, 64);
  bad += runsectors(one, "one row", -1, 1, 32);
  printf("%s\n", bad ? "FAIL" : "all ok");
  return bad ? 1 : 0;
}
