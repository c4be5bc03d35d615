/*
   The CSR product on unstructured rows without PETSc (issue #47): the row kernel of MATCSRKCUDA's vector entry
   (CSRKRowLanePart of src/mat/impls/csrk/cuda/csrkcudadevice.cuh: W lanes a row, A streamed with __ldcs) by lanes,
   block size and rows a block, against cuSPARSE's CSR SpMV (ALG1, which aijcusparse runs, and ALG2), a sliced kernel
   (32-row slices column by column, a thread per row; a warp a slice, or 4 in turn as units of 512 rows; and with
   16-bit column differences in place of the columns, escaped to 32 bits where they do not fit), PETSc's sliced kernel
   as csrkcudasliced.cu has it (and without its row map or its lengths from rowptr), and
   diagnostics that isolate the gathers of x: the same loop without x (A streamed alone), with x read at the row (no
   gather), with two sums a lane, with plain loads. Also the sectors of x gathered by each warp load and by each unit
   of consecutive rows, counted on the host.

     nvcc -O3 -std=c++17 -arch=sm_90 -o unstructured docs/experiments/unstructured.cu -lcusparse
     ./unstructured [-bw GB/s] [-reps 200] [-rand] [-nostats] [-solvelike NV] [-only 'a|b'] file.bin ... [-gen p1|p2|el N [-write file]] ...
       file.bin: PETSc binary matrices; -gen: P1, P2 or P1 elasticity (bs 3) on the Kuhn tetrahedra of an N^3 grid (generated; -write only
       writes it); -rand: each also in a random numbering, P A P^T; -only: the runs whose names contain one of these;
       -solvelike NV: cuSPARSE, the row, sliced, footprint and block kernels again as in a CG solve (NV vectors read and written
       between products, then x rewritten), and the sliced kernel with x under an L2 evict_last policy, y stored
       evict-first, x in a persisting access-policy window

   Every result is checked against a host sum (normwise, relative to sum |a_ij x_j|); the row kernels are run twice
   and compared bitwise. Times: after 20 warm-up launches, -reps launches back to back in 5 rounds between two events,
   the median of the rounds' means. The bound: the copy bandwidth (-bw, configure-hooks/copybw.cu) over 12 bytes a
   nonzero + 20 a row.
*/
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <cmath>
#include <vector>
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <cuda_runtime.h>
#include <cusparse.h>

typedef double  PetscScalar;
typedef double  PetscReal;
typedef int32_t PetscInt;
typedef int32_t CSRKIdx;
#include "../../src/mat/impls/csrk/cuda/csrkcudadevice.cuh"

#define CK(x) \
  do { \
    cudaError_t e_ = (x); \
    if (e_ != cudaSuccess) { \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1); \
    } \
  } while (0)
#define CS(x) \
  do { \
    cusparseStatus_t s_ = (x); \
    if (s_ != CUSPARSE_STATUS_SUCCESS) { \
      fprintf(stderr, "%s:%d cusparse %d\n", __FILE__, __LINE__, (int)s_); \
      exit(1); \
    } \
  } while (0)

struct Csr {
  std::string         name;
  int                 m = 0, n = 0;
  std::vector<int>    ptr, col;
  std::vector<double> val;
};

static uint32_t Be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* a PETSc binary matrix (MAT_FILE_CLASSID, rows, columns, nonzeros, row lengths, columns, values; big-endian) */
static bool ReadPetscBinary(const char *file, Csr &A)
{
  FILE *f = fopen(file, "rb");
  if (!f) return false;
  unsigned char h[16];
  if (fread(h, 1, 16, f) != 16 || Be32(h) != 1211216) {
    fclose(f);
    return false;
  }
  A.name = file;
  A.m    = (int)Be32(h + 4);
  A.n    = (int)Be32(h + 8);
  const size_t           nz = Be32(h + 12);
  std::vector<uint32_t>  buf(std::max<size_t>(nz, (size_t)A.m));
  std::vector<uint64_t>  vb(nz);
  A.ptr.assign(A.m + 1, 0);
  A.col.resize(nz);
  A.val.resize(nz);
  bool ok = fread(buf.data(), 4, A.m, f) == (size_t)A.m;
  for (int i = 0; ok && i < A.m; i++) A.ptr[i + 1] = A.ptr[i] + (int)Be32((unsigned char *)&buf[i]);
  ok = ok && fread(buf.data(), 4, nz, f) == nz;
  for (size_t q = 0; ok && q < nz; q++) A.col[q] = (int)Be32((unsigned char *)&buf[q]);
  ok = ok && fread(vb.data(), 8, nz, f) == nz;
  for (size_t q = 0; ok && q < nz; q++) {
    const unsigned char *p = (unsigned char *)&vb[q];
    uint64_t             u = 0;
    for (int k = 0; k < 8; k++) u = u << 8 | p[k];
    memcpy(&A.val[q], &u, 8);
  }
  fclose(f);
  return ok && (size_t)A.ptr[A.m] == nz;
}

/* P A P^T for a random permutation (seeded), columns sorted in each row */
static Csr Permute(const Csr &A, unsigned seed)
{
  Csr              B;
  std::vector<int> p(A.m), ip(A.m);
  std::iota(p.begin(), p.end(), 0);
  std::mt19937 g(seed);
  std::shuffle(p.begin(), p.end(), g); /* new row i is old row p[i] */
  for (int i = 0; i < A.m; i++) ip[p[i]] = i;
  B.name = A.name + " (random numbering)";
  B.m = A.m, B.n = A.n;
  B.ptr.assign(A.m + 1, 0);
  for (int i = 0; i < A.m; i++) B.ptr[i + 1] = B.ptr[i] + A.ptr[p[i] + 1] - A.ptr[p[i]];
  B.col.resize(A.col.size());
  B.val.resize(A.val.size());
  std::vector<std::pair<int, double>> row;
  for (int i = 0; i < A.m; i++) {
    row.clear();
    for (int q = A.ptr[p[i]]; q < A.ptr[p[i] + 1]; q++) row.push_back({ip[A.col[q]], A.val[q]});
    std::sort(row.begin(), row.end());
    for (size_t k = 0; k < row.size(); k++) B.col[B.ptr[i] + k] = row[k].first, B.val[B.ptr[i] + k] = row[k].second;
  }
  return B;
}

/* a PETSc binary matrix file (for ksp ex10 after tutorials/permbin -fbin adds a right-hand side) */
static bool WritePetscBinary(const char *file, const Csr &A)
{
  FILE *f = fopen(file, "wb");
  if (!f) return false;
  auto put = [&](uint32_t v) {
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
    fwrite(b, 1, 4, f);
  };
  put(1211216), put(A.m), put(A.n), put(A.ptr[A.m]);
  for (int i = 0; i < A.m; i++) put(A.ptr[i + 1] - A.ptr[i]);
  for (int c : A.col) put(c);
  for (double v : A.val) {
    uint64_t u;
    memcpy(&u, &v, 8);
    unsigned char b[8];
    for (int k = 0; k < 8; k++) b[k] = (unsigned char)(u >> (56 - 8 * k));
    fwrite(b, 1, 8, f);
  }
  return fclose(f) == 0;
}

/* P1 (degree 1) or P2 (degree 2) on the Kuhn tetrahedra of an N^3-vertex grid (6 a cube, conforming): vertices
   numbered by Morton key, P2's edge unknowns after them ordered by their two vertices (as DMPlex puts vertices before
   edges); symmetric values, -w off the diagonal with w in (1e-3, 1], the diagonal their sum + 1 (positive definite) */
static Csr GenTet(int N, int degree)
{
  Csr                    A;
  const long long        nv = (long long)N * N * N;
  std::vector<long long> key(nv);
  std::vector<int>       num(nv);
  auto morton = [](long long i, long long j, long long k) {
    long long m = 0;
    for (int b = 0; b < 21; b++) m |= ((i >> b) & 1) << (3 * b) | ((j >> b) & 1) << (3 * b + 1) | ((k >> b) & 1) << (3 * b + 2);
    return m;
  };
  for (long long v = 0; v < nv; v++) key[v] = morton(v % N, v / N % N, v / N / N);
  std::vector<long long> ord(nv);
  std::iota(ord.begin(), ord.end(), 0);
  std::sort(ord.begin(), ord.end(), [&](long long a, long long b) { return key[a] < key[b]; });
  for (long long r = 0; r < nv; r++) num[ord[r]] = (int)r;
  /* tetrahedra: the 6 paths from corner 000 to 111 of each cube */
  const int           perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  std::vector<int>    tet;
  for (int k = 0; k + 1 < N; k++)
    for (int j = 0; j + 1 < N; j++)
      for (int i = 0; i + 1 < N; i++)
        for (auto &p : perm) {
          int c[3] = {i, j, k};
          tet.push_back(num[(long long)c[2] * N * N + c[1] * N + c[0]]);
          for (int a = 0; a < 3; a++) {
            c[p[a]]++;
            tet.push_back(num[(long long)c[2] * N * N + c[1] * N + c[0]]);
          }
        }
  const long long        nt = (long long)tet.size() / 4;
  std::vector<long long> edges;
  int                    nd = (int)nv, per = 4;
  if (degree == 2) {
    for (long long t = 0; t < nt; t++)
      for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++) edges.push_back((long long)std::min(tet[4 * t + a], tet[4 * t + b]) * nv + std::max(tet[4 * t + a], tet[4 * t + b]));
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    nd += (int)edges.size();
    per = 10;
  }
  /* the unknowns of each tetrahedron, then each row's columns with repeats, sorted and made unique */
  std::vector<int> dofs(per * nt);
  for (long long t = 0; t < nt; t++) {
    for (int a = 0; a < 4; a++) dofs[per * t + a] = tet[4 * t + a];
    if (degree == 2) {
      int e = 4;
      for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++) {
          const long long k = (long long)std::min(tet[4 * t + a], tet[4 * t + b]) * nv + std::max(tet[4 * t + a], tet[4 * t + b]);
          dofs[per * t + e++] = (int)nv + (int)(std::lower_bound(edges.begin(), edges.end(), k) - edges.begin());
        }
    }
  }
  std::vector<long long> cnt(nd + 1, 0);
  for (int d : dofs) cnt[d + 1] += per;
  for (int i = 0; i < nd; i++) cnt[i + 1] += cnt[i];
  std::vector<int>       all(cnt[nd]);
  std::vector<long long> pos(cnt.begin(), cnt.end() - 1);
  for (long long t = 0; t < nt; t++)
    for (int a = 0; a < per; a++)
      for (int b = 0; b < per; b++) all[pos[dofs[per * t + a]]++] = dofs[per * t + b];
  A.m = A.n = nd;
  A.ptr.assign(nd + 1, 0);
  for (int i = 0; i < nd; i++) {
    std::sort(all.begin() + cnt[i], all.begin() + cnt[i + 1]);
    const long long u = std::unique(all.begin() + cnt[i], all.begin() + cnt[i + 1]) - (all.begin() + cnt[i]);
    A.ptr[i + 1]      = A.ptr[i] + (int)u;
    A.col.insert(A.col.end(), all.begin() + cnt[i], all.begin() + cnt[i] + u);
  }
  A.val.resize(A.col.size());
  for (int i = 0; i < nd; i++) {
    double sum = 0;
    int    diag = -1;
    for (int q = A.ptr[i]; q < A.ptr[i + 1]; q++) {
      if (A.col[q] == i) {
        diag = q;
        continue;
      }
      uint64_t h = (uint64_t)std::min(i, A.col[q]) * 0x9e3779b97f4a7c15ull ^ (uint64_t)std::max(i, A.col[q]) * 0xc2b2ae3d27d4eb4full;
      h ^= h >> 29;
      h *= 0xbf58476d1ce4e5b9ull;
      h ^= h >> 32;
      A.val[q] = -(1e-3 + (double)(h % 1000000) / 1e6);
      sum -= A.val[q];
    }
    A.val[diag] = sum + 1.0;
  }
  char name[64];
  snprintf(name, sizeof(name), "tet P%d %d^3 grid (generated)", degree, N);
  A.name = name;
  return A;
}

/* P1 elasticity as snes ex17 assembles it: each entry of S (GenTet's P1) a dense 3 x 3 block, the 3 unknowns of a
   vertex numbered together; the block of entry s is s on its diagonal and 0.1 s off it */
static Csr Expand3(const Csr &S)
{
  Csr A;
  A.m = 3 * S.m, A.n = 3 * S.n;
  A.ptr.assign(A.m + 1, 0);
  A.col.reserve((size_t)9 * S.ptr[S.m]);
  A.val.reserve((size_t)9 * S.ptr[S.m]);
  for (int i = 0; i < S.m; i++)
    for (int a = 0; a < 3; a++) {
      for (int q = S.ptr[i]; q < S.ptr[i + 1]; q++)
        for (int b = 0; b < 3; b++) A.col.push_back(3 * S.col[q] + b), A.val.push_back(a == b ? S.val[q] : 0.1 * S.val[q]);
      A.ptr[3 * i + a + 1] = (int)A.col.size();
    }
  A.name = "P1 elasticity (bs 3) on " + S.name;
  return A;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* the row kernel: a row per W lanes, 128 / W rows a block of 128 threads (BLOCK threads: BLOCK / W rows) */
enum { ROW_FULL, ROW_TWOSUMS, ROW_PLAIN, ROW_NOX, ROW_XATROW };

template <int W, int MODE>
__global__ void RowKernel(int m, int unit, const int *__restrict__ ptr, const int *__restrict__ col, const double *__restrict__ val, const double *__restrict__ x, double *__restrict__ y)
{
  const unsigned t    = threadIdx.x % W;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned mask = W == 32 ? 0xffffffffu : ((1u << W) - 1u) << (lane & ~(unsigned)(W - 1));
  const int      r1   = (int)min((long long)m, (blockIdx.x + 1LL) * unit);
  /* the block's unit of consecutive rows, blockDim.x / W rows at a step; the W lanes of a row leave together */
  for (int r = blockIdx.x * unit + threadIdx.x / W; r < r1; r += blockDim.x / W) {
    const int q0 = ptr[r], q1 = ptr[r + 1];
    double    s  = 0.0;
    if (MODE == ROW_FULL) s = CSRKRowLanePart<W>(val, col, x, q0, q1, t);
    else if (MODE == ROW_TWOSUMS) {
      double s1 = 0.0;
      int    q  = q0 + t;
      for (; q + W < q1; q += 2 * W) {
        s += CSRKStreamedProduct(val, col, x, q);
        s1 += CSRKStreamedProduct(val, col, x, q + W);
      }
      if (q < q1) s += CSRKStreamedProduct(val, col, x, q);
      s += s1;
    }
    else if (MODE == ROW_PLAIN)
      for (int q = q0 + t; q < q1; q += W) s += val[q] * x[col[q]];
    else if (MODE == ROW_NOX)
      for (int q = q0 + t; q < q1; q += W) s += __ldcs(val + q) * (double)__ldcs(col + q);
    else
      for (int q = q0 + t; q < q1; q += W) s += __ldcs(val + q) * x[r + (__ldcs(col + q) & 0)];
#pragma unroll
    for (int d = W / 2; d > 0; d >>= 1) s += CSRKShfl<false>(mask, s, d, W);
    if (t == 0) y[r] = s;
  }
}

/* PETSc's sliced kernel (CSRKSlicedPlainKernel of csrkcudasliced.cu, its loop as it is there), and with one of its
   differences from SlicedKernel removed at a time: LEN, the row lengths from an array of their own instead of rowptr's
   differences; PLAIN, y[r] = sum instead of CSRKStore's map and z (the plugin's kernel has launched that store where
   neither is given since a95cb39, so "petsc sliced, y[r] = sum" is today's); NODIV, the unit's last super-row from
   nsr given instead of CSRKUnitSuperRows' division */
template <bool LEN, bool PLAIN, bool NODIV = false>
__global__ void PetscSlicedKernel(const CSRKGroups g, const int *__restrict__ rowptr, const int *__restrict__ lens, const int *__restrict__ sliceptr, const int *__restrict__ scol, const double *__restrict__ sval, const int *__restrict__ perm, const double *__restrict__ x, const double *__restrict__ z, double *__restrict__ y, int nsr = 0)
{
  CSRKIdx s0, s1, r0, r1;
  if (NODIV) s0 = blockIdx.x * g.ssr, s1 = min(s0 + g.ssr, nsr);
  else CSRKUnitSuperRows(g, blockIdx.x, &s0, &s1);
  for (CSRKIdx s = s0 + threadIdx.y; s < s1; s += blockDim.y) {
    CSRKSuperRowRows(g, s, &r0, &r1);
    const CSRKIdx h = r1 - r0, base = sliceptr[s];
    for (CSRKIdx i = threadIdx.x; i < h; i += blockDim.x) {
      const CSRKIdx len = LEN ? lens[r0 + i] : rowptr[r0 + i + 1] - rowptr[r0 + i];
      double        sum = 0.0;
      CSRKIdx       q   = base + i;
#pragma unroll 4
      for (CSRKIdx j = 0; j < len; j++, q += h) sum += CSRKStreamedProduct(sval, scol, x, q);
      if (PLAIN) y[r0 + i] = sum;
      else CSRKStore(r0 + i, perm, z, y, sum);
    }
  }
}

/* x gathered under an L2 evict_last policy (createpolicy, no carve-out): x's lines outlive A's streamed ones */
__device__ __forceinline__ double LoadXLast(const double *p, uint64_t pol)
{
  double v;
  asm volatile("ld.global.nc.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(v) : "l"(p), "l"(pol));
  return v;
}

/* sliced: 32-row slices stored column by column (padded to the slice's longest row), a warp per slice, per slices in
   turn (blocks of 4 warps: units of 128 per rows); x gathered plainly or under evict_last (HINT), y stored plainly or
   evict-first (STCS) */
template <int HINT = 0, int STCS = 0>
__global__ void SlicedKernel(int m, int per, const int *__restrict__ sptr, const int *__restrict__ len, const int *__restrict__ scol, const double *__restrict__ sval, const double *__restrict__ x, double *__restrict__ y)
{
  uint64_t pol = 0;
  if (HINT) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  for (int k = 0; k < per; k++) {
    const int r = (blockIdx.x * per + k) * 128 + threadIdx.x;
    if (r >= m) return;
    const int s = r / 32, h = min(32, m - 32 * s), n = len[r];
    int       q   = sptr[s] + r % 32;
    double    sum = 0.0;
#pragma unroll 4
    for (int j = 0; j < n; j++, q += h) {
      const int c = __ldcs(scol + q);
      sum += CSRKLoadStreamed(sval + q) * (HINT ? LoadXLast(x + c, pol) : x[c]);
    }
    if (STCS) __stcs(y + r, sum);
    else y[r] = sum;
  }
}

/* nodes of 3 rows (bs-3 unknowns numbered together), a thread a node, slices of 32 nodes stored column by column, K
   columns an index: K = 1, nodes with one column list (one index for the node's 3 entries, 8 + 4/3 bytes a nonzero);
   K = 3, dense 3 x 3 blocks (columns in aligned triples too: one index a block, 8 + 4/9 bytes). Step j's 3K values
   are 3K runs of h; x's K values of an index are gathered together, once for the 3 rows */
template <int K>
__global__ void NodeSlicedKernel(int nn, const int *__restrict__ nptr, const int *__restrict__ nlen, const int *__restrict__ ncol, const double *__restrict__ nval, const double *__restrict__ x, double *__restrict__ y)
{
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= nn) return;
  const int     s = n / 32, t = n % 32, h = min(32, nn - 32 * s), len = nlen[n];
  int           q = nptr[s] + t;
  const double *v = nval + 3 * K * (size_t)nptr[s] + t;
  double        sum[3] = {0, 0, 0};
#pragma unroll(K == 1 ? 4 : 2)
  for (int j = 0; j < len; j++, q += h, v += 3 * K * h) {
    const double *xc = x + K * __ldcs(ncol + q);
    double        xv[K];
#pragma unroll
    for (int k = 0; k < K; k++) xv[k] = xc[k];
#pragma unroll
    for (int a = 0; a < 3; a++) {
      double p = __ldcs(v + a * K * h) * xv[0];
#pragma unroll
      for (int k = 1; k < K; k++) p += __ldcs(v + (a * K + k) * h) * xv[k];
      sum[a] += p;
    }
  }
  y[3 * n] = sum[0], y[3 * n + 1] = sum[1], y[3 * n + 2] = sum[2];
}

/* x's footprint of each 32-row slice (its distinct columns, sorted) gathered once into shared memory by the slice's
   warp, then each thread walks its row with 16-bit indices into the footprint: 8 + 2 bytes a nonzero and 4 a distinct
   column of a slice, and no gather of x in the loop. A warp a slice, 4 a block; maxf doubles of shared memory a warp */
__global__ void FootprintKernel(int m, int maxf, const int *__restrict__ sptr, const int *__restrict__ len, const int *__restrict__ fptr, const int *__restrict__ fcol, const uint16_t *__restrict__ lidx, const double *__restrict__ sval, const double *__restrict__ x, double *__restrict__ y)
{
  extern __shared__ double xs_all[];
  const int nsl = (m + 31) / 32, w = threadIdx.x / 32, lane = threadIdx.x % 32, s = blockIdx.x * 4 + w;
  if (s >= nsl) return; /* the whole warp: only __syncwarp below */
  double   *xs = xs_all + w * maxf;
  const int f0 = fptr[s], nf = fptr[s + 1] - f0;
  for (int i = lane; i < nf; i += 32) xs[i] = x[__ldcs(fcol + f0 + i)];
  __syncwarp();
  const int r = 32 * s + lane;
  if (r >= m) return;
  const int h = min(32, m - 32 * s), n = len[r];
  int       q   = sptr[s] + lane;
  double    sum = 0.0;
#pragma unroll 4
  for (int j = 0; j < n; j++, q += h) sum += __ldcs(sval + q) * xs[__ldcs(lidx + q)];
  y[r] = sum;
}

/* the sliced kernel with each slice's columns as 16-bit offsets from the slice's smallest column, where all of them
   fit (sbase[s] >= 0; 10 bytes a nonzero), else its 32-bit columns (sbase[s] = -1): a branch uniform over the warp,
   no decode chain (the column is base + offset) */
__global__ void SliceBase16Kernel(int m, const int *__restrict__ sptr, const int *__restrict__ len, const int *__restrict__ sbase, const uint16_t *__restrict__ off, const int *__restrict__ scol, const double *__restrict__ sval, const double *__restrict__ x, double *__restrict__ y)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= m) return;
  const int s = r / 32, h = min(32, m - 32 * s), n = len[r], b = sbase[s];
  int       q   = sptr[s] + r % 32;
  double    sum = 0.0;
  if (b >= 0) {
    const double *xb = x + b;
#pragma unroll 4
    for (int j = 0; j < n; j++, q += h) sum += CSRKLoadStreamed(sval + q) * xb[__ldcs(off + q)];
  } else {
#pragma unroll 4
    for (int j = 0; j < n; j++, q += h) sum += CSRKLoadStreamed(sval + q) * x[__ldcs(scol + q)];
  }
  y[r] = sum;
}

/* a CG iteration's vector traffic between two products: the dots, AXPYs and Jacobi read and write nv vectors of n */
__global__ void VecTraffic(long long len, double *buf)
{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < len; i += (long long)gridDim.x * blockDim.x) buf[i] = buf[i] * 0.5 + 1.0;
}

/* then VecAYPX p = z + b p writes the product's input: x read and written again (its values kept) */
__global__ void TouchX(int n, double *x, const double *z)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] + 0.0 * z[i];
}

/* sliced with 16-bit column deltas: entry j of a row holds c_j - c_(j-1) (c_(-1) = r - 32768) in [1, 65535] in one
   slot, else an escape (0) and the column's two halves in the next two slots; slots padded to the slice's longest */
__global__ void SlicedDeltaKernel(int m, const int *__restrict__ sptr, const int *__restrict__ dptr, const int *__restrict__ len, const uint16_t *__restrict__ d16, const double *__restrict__ sval, const double *__restrict__ x, double *__restrict__ y)
{
  const int r = blockIdx.x * 128 + threadIdx.x;
  if (r >= m) return;
  const int s = r / 32, h = min(32, m - 32 * s), n = len[r];
  int       q = sptr[s] + r % 32, p = dptr[s] + r % 32, c = r - 32768;
  double    sum = 0.0;
#pragma unroll 4
  for (int j = 0; j < n; j++, q += h) {
    const unsigned u = __ldcs(d16 + p);
    p += h;
    if (u) c += (int)u;
    else {
      c = (int)((unsigned)__ldcs(d16 + p) | (unsigned)__ldcs(d16 + p + h) << 16);
      p += 2 * h;
    }
    sum += CSRKLoadStreamed(sval + q) * x[c];
  }
  y[r] = sum;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* sectors of x (4 doubles) each warp load gathers: sliced (entry j of 32 rows) and rows (W lanes, 32 / W rows) */
static void Sectors(const Csr &A, int W, double &sliced, double &rows)
{
  unsigned long long ns = 0, nr = 0;
  std::vector<int>   k;
  auto distinct = [&]() {
    std::sort(k.begin(), k.end());
    return (unsigned long long)(std::unique(k.begin(), k.end()) - k.begin());
  };
  for (int s = 0; s * 32 < A.m; s++) {
    int top = 0;
    for (int r = s * 32; r < std::min(A.m, s * 32 + 32); r++) top = std::max(top, A.ptr[r + 1] - A.ptr[r]);
    for (int j = 0; j < top; j++) {
      k.clear();
      for (int r = s * 32; r < std::min(A.m, s * 32 + 32); r++)
        if (A.ptr[r] + j < A.ptr[r + 1]) k.push_back(A.col[A.ptr[r] + j] / 4);
      ns += distinct();
    }
    for (int g = 0; g < W; g++) {
      const int r0 = s * 32 + g * (32 / W), r1 = std::min(A.m, r0 + 32 / W);
      for (int j0 = 0; j0 < top; j0 += W) {
        k.clear();
        for (int r = r0; r < r1; r++)
          for (int t = 0; t < W; t++)
            if (A.ptr[r] + j0 + t < A.ptr[r + 1]) k.push_back(A.col[A.ptr[r] + j0 + t] / 4);
        nr += distinct();
      }
    }
  }
  sliced = (double)ns / A.ptr[A.m];
  rows   = (double)nr / A.ptr[A.m];
}

/* distinct sectors of x a unit of U consecutive rows gathers (what its block fetches into L1 once), a nonzero */
static double UnitSectors(const Csr &A, int U)
{
  unsigned long long n = 0;
  std::vector<int>   k;
  for (int r0 = 0; r0 < A.m; r0 += U) {
    k.assign(A.col.begin() + A.ptr[r0], A.col.begin() + A.ptr[std::min(A.m, r0 + U)]);
    for (int &c : k) c /= 4;
    std::sort(k.begin(), k.end());
    n += std::unique(k.begin(), k.end()) - k.begin();
  }
  return (double)n / A.ptr[A.m];
}

/* ---------------------------------------------------------------------------------------------------------------- */
struct Dev {
  int     m, n, nnz;
  int    *ptr, *col, *sptr, *len, *scol;
  double *val, *sval, *x, *y, *y2;
};

/* cuSPARSE's CSR product y = A x on the device copy d, on a stream, with its algorithm's buffer */
struct SpMV {
  cusparseHandle_t     h;
  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t vx, vy;
  cusparseSpMVAlg_t    alg;
  void                *buf;
  const double         one = 1.0, zero = 0.0;
  SpMV(const Dev &d, cudaStream_t stream, cusparseSpMVAlg_t a) : alg(a)
  {
    size_t sz;
    CS(cusparseCreate(&h));
    CS(cusparseSetStream(h, stream));
    CS(cusparseCreateCsr(&mat, d.m, d.n, d.nnz, d.ptr, d.col, d.val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CS(cusparseCreateDnVec(&vx, d.n, d.x, CUDA_R_64F));
    CS(cusparseCreateDnVec(&vy, d.m, d.y, CUDA_R_64F));
    CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, &sz));
    CK(cudaMalloc(&buf, std::max<size_t>(sz, 1)));
  }
  SpMV(const SpMV &) = delete; /* one owner of the handle and descriptors */
  void operator()() const { CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy, CUDA_R_64F, alg, buf)); }
  ~SpMV()
  {
    CK(cudaFree(buf));
    CS(cusparseDestroySpMat(mat));
    CS(cusparseDestroyDnVec(vx));
    CS(cusparseDestroyDnVec(vy));
    CS(cusparseDestroy(h));
  }
};

static double Median(std::vector<float> &t)
{
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/* back-to-back launches between two events (as a solver's products run), -reps of them in 5 rounds: the median of
   the rounds' means */
template <typename F>
static double Time(F launch, int reps)
{
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < 20; i++) launch();
  CK(cudaDeviceSynchronize());
  std::vector<float> t(5);
  for (auto &ti : t) {
    CK(cudaEventRecord(e0));
    for (int i = 0; i < reps / 5; i++) launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ti, e0, e1));
    ti /= reps / 5;
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return Median(t) * 1e-3;
}

static int solvelike = 0; /* -solvelike NV: the products again as in a solve, between NV vectors' traffic */

/* products as in a CG solve: each after a CG iteration's vector traffic (VecTraffic over len doubles) and the write
   of its input x (TouchX), alone between two events on stream s; the median of reps */
template <typename F>
static double SolveTime(F launch, int reps, cudaStream_t s, double *buf, long long len, double *x, int n)
{
  cudaEvent_t        e0, e1;
  std::vector<float> t(reps);
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = -5; i < reps; i++) {
    VecTraffic<<<1056, 256, 0, s>>>(len, buf);
    TouchX<<<(n + 255) / 256, 256, 0, s>>>(n, x, buf);
    CK(cudaEventRecord(e0, s));
    launch();
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    if (i >= 0) CK(cudaEventElapsedTime(&t[i], e0, e1));
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return Median(t) * 1e-3;
}

/* -only 'a|b|c': whether name contains one of them (names hold commas) */
static bool Only(const char *name, const char *only)
{
  if (!only) return true;
  std::string l(only);
  size_t      b = 0;
  while (b <= l.size()) {
    size_t e = l.find('|', b);
    if (e == std::string::npos) e = l.size();
    if (e > b && strstr(name, l.substr(b, e - b).c_str())) return true;
    b = e + 1;
  }
  return false;
}

static void Report(const Csr &A, const char *name, double sec, double bw, const std::vector<double> &ref, const std::vector<double> &scale, const Dev &d, int bitwise)
{
  std::vector<double> y(A.m);
  double              err = 0;
  CK(cudaMemcpy(y.data(), d.y, sizeof(double) * A.m, cudaMemcpyDeviceToHost));
  for (int i = 0; i < A.m; i++) err = std::max(err, std::fabs(y[i] - ref[i]) / std::max(scale[i], 1e-300));
  const double nnz = A.ptr[A.m], bytes = 12.0 * nnz + 20.0 * A.m, gf = 2.0 * nnz / sec * 1e-9, bound = 2.0 * nnz / (bytes / (bw * 1e9)) * 1e-9;
  printf("%-28s %9.2f us %7.1f GFLOP/s %6.1f %% of bound  %7.1f GB/s  err %.1e%s\n", name, sec * 1e6, gf, 100 * gf / bound, bytes / sec * 1e-9, err, bitwise < 0 ? "" : bitwise ? "  bitwise-repeat" : "  NOT BITWISE");
}

template <int W, int MODE>
static void RunRow(const Csr &A, const Dev &d, int block, int unit, int reps, double bw, const std::vector<double> &ref, const std::vector<double> &sc, const char *only)
{
  char name[64];
  if (!unit) unit = block / W;
  snprintf(name, sizeof(name), "row w%d b%d u%d %s", W, block, unit, MODE == ROW_FULL ? "1sum" : MODE == ROW_TWOSUMS ? "2sums" : MODE == ROW_PLAIN ? "1sum-plain" : MODE == ROW_NOX ? "A-only(no x)" : "x-at-row");
  if (!Only(name, only)) return;
  const unsigned grid = (unsigned)((A.m + unit - 1) / unit);
  auto           go   = [&]() { RowKernel<W, MODE><<<grid, block>>>(A.m, unit, d.ptr, d.col, d.val, d.x, d.y); };
  CK(cudaMemset(d.y, 0xff, sizeof(double) * A.m)); /* poisoned: every row must be written */
  const double t = Time(go, reps);
  int          bit = -1;
  if (MODE == ROW_FULL) {
    std::vector<double> a(A.m), b(A.m);
    CK(cudaMemcpy(a.data(), d.y, sizeof(double) * A.m, cudaMemcpyDeviceToHost));
    CK(cudaMemset(d.y, 0xff, sizeof(double) * A.m));
    go();
    CK(cudaMemcpy(b.data(), d.y, sizeof(double) * A.m, cudaMemcpyDeviceToHost));
    bit = !memcmp(a.data(), b.data(), sizeof(double) * A.m);
  }
  const bool check = MODE == ROW_FULL || MODE == ROW_TWOSUMS || MODE == ROW_PLAIN;
  Report(A, name, t, bw, check ? ref : std::vector<double>(A.m, 0.0), check ? sc : std::vector<double>(A.m, INFINITY), d, bit);
}

/* the layout of NodeSlicedKernel<K> on the device from A's nodes of 3 rows (the caller checked them) */
struct NodeSlices {
  int    *ptr, *len, *col;
  double *val;
};
static NodeSlices BuildNodeSlices(const Csr &A, int K, const char *what)
{
  const int        nn = A.m / 3, nsn = (nn + 31) / 32;
  std::vector<int> ptr(nsn + 1, 0), len(nn);
  for (int n = 0; n < nn; n++) len[n] = (A.ptr[3 * n + 1] - A.ptr[3 * n]) / K;
  for (int sn = 0; sn < nsn; sn++) {
    int top = 0, h = std::min(32, nn - 32 * sn);
    for (int n = 32 * sn; n < 32 * sn + h; n++) top = std::max(top, len[n]);
    ptr[sn + 1] = ptr[sn] + top * h;
  }
  std::vector<int>    col(ptr[nsn], 0);
  std::vector<double> val(3 * K * (size_t)ptr[nsn], 0.0);
  for (int n = 0; n < nn; n++) {
    const int sn = n / 32, t = n % 32, h = std::min(32, nn - 32 * sn);
    for (int j = 0; j < len[n]; j++) {
      col[ptr[sn] + j * h + t] = A.col[A.ptr[3 * n] + K * j] / K;
      for (int a = 0; a < 3; a++)
        for (int k = 0; k < K; k++) val[3 * K * ((size_t)ptr[sn] + (size_t)j * h) + (a * K + k) * h + t] = A.val[A.ptr[3 * n + a] + K * j + k];
    }
  }
  NodeSlices d;
  CK(cudaMalloc(&d.ptr, sizeof(int) * (nsn + 1)));
  CK(cudaMalloc(&d.len, sizeof(int) * std::max(nn, 1)));
  CK(cudaMalloc(&d.col, sizeof(int) * std::max(ptr[nsn], 1)));
  CK(cudaMalloc(&d.val, sizeof(double) * std::max<size_t>(val.size(), 1)));
  CK(cudaMemcpy(d.ptr, ptr.data(), sizeof(int) * (nsn + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.len, len.data(), sizeof(int) * nn, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.col, col.data(), sizeof(int) * ptr[nsn], cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.val, val.data(), sizeof(double) * val.size(), cudaMemcpyHostToDevice));
  printf("%s: %.2f bytes a nonzero with padding\n", what, (4.0 * ptr[nsn] + 8.0 * val.size()) / A.ptr[A.m]);
  return d;
}

static bool stats = true; /* the sectors of x counted on the host (-nostats: not) */

static void Sweep(const Csr &A, double bw, int reps, const char *only)
{
  const int nnz = A.ptr[A.m];
  double    mean = (double)nnz / A.m, var = 0;
  int       mx = 0;
  for (int i = 0; i < A.m; i++) {
    const int l = A.ptr[i + 1] - A.ptr[i];
    var += (l - mean) * (l - mean);
    mx = std::max(mx, l);
  }
  const double cv = std::sqrt(var / A.m) / mean, bound = 2.0 * nnz / ((12.0 * nnz + 20.0 * A.m) / (bw * 1e9)) * 1e-9;
  printf("\n== %s: %d rows, %d nonzeros, %.2f a row (cv %.2f, max %d); bound at %.0f GB/s and 12 B a nonzero + 20 B a row: %.0f GFLOP/s\n", A.name.c_str(), A.m, nnz, mean, cv, mx, bw, bound);
  if (!only && stats) {
    for (int W : {8, 16}) {
      double s, r;
      Sectors(A, W, s, r);
      printf("sectors of x a nonzero, each warp load: 32-row slices %.3f, %d lanes a row %.3f\n", s, W, r);
    }
    printf("sectors of x a nonzero, each unit of consecutive rows:");
    for (int U : {16, 64, 128, 512, 2048}) printf(" %d rows %.3f", U, UnitSectors(A, U));
    printf("\n");
  }

  /* host reference, x random */
  std::vector<double> x(A.n), ref(A.m, 0.0), sc(A.m, 0.0);
  std::mt19937_64     g(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto &v : x) v = u(g);
  for (int i = 0; i < A.m; i++)
    for (int q = A.ptr[i]; q < A.ptr[i + 1]; q++) ref[i] += A.val[q] * x[A.col[q]], sc[i] += std::fabs(A.val[q] * x[A.col[q]]);

  /* sliced layout */
  const int        nsl = (A.m + 31) / 32;
  std::vector<int> sptr(nsl + 1, 0), len(A.m);
  for (int s = 0; s < nsl; s++) {
    int top = 0, h = std::min(32, A.m - 32 * s);
    for (int r = 32 * s; r < 32 * s + h; r++) top = std::max(top, A.ptr[r + 1] - A.ptr[r]);
    sptr[s + 1] = sptr[s] + top * h;
  }
  std::vector<int>    scol(sptr[nsl], 0);
  std::vector<double> sval(sptr[nsl], 0.0);
  for (int r = 0; r < A.m; r++) {
    const int s = r / 32, h = std::min(32, A.m - 32 * s);
    len[r]      = A.ptr[r + 1] - A.ptr[r];
    for (int j = 0; j < len[r]; j++) scol[sptr[s] + j * h + r % 32] = A.col[A.ptr[r] + j], sval[sptr[s] + j * h + r % 32] = A.val[A.ptr[r] + j];
  }

  Dev d;
  d.m = A.m, d.n = A.n, d.nnz = nnz;
  CK(cudaMalloc(&d.ptr, sizeof(int) * (A.m + 1)));
  CK(cudaMalloc(&d.col, sizeof(int) * nnz));
  CK(cudaMalloc(&d.val, sizeof(double) * nnz));
  CK(cudaMalloc(&d.x, sizeof(double) * A.n));
  CK(cudaMalloc(&d.y, sizeof(double) * A.m));
  CK(cudaMalloc(&d.sptr, sizeof(int) * (nsl + 1)));
  CK(cudaMalloc(&d.len, sizeof(int) * A.m));
  CK(cudaMalloc(&d.scol, sizeof(int) * sptr[nsl]));
  CK(cudaMalloc(&d.sval, sizeof(double) * sptr[nsl]));
  CK(cudaMemcpy(d.ptr, A.ptr.data(), sizeof(int) * (A.m + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.col, A.col.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.val, A.val.data(), sizeof(double) * nnz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.x, x.data(), sizeof(double) * A.n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.sptr, sptr.data(), sizeof(int) * (nsl + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.len, len.data(), sizeof(int) * A.m, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.scol, scol.data(), sizeof(int) * sptr[nsl], cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.sval, sval.data(), sizeof(double) * sptr[nsl], cudaMemcpyHostToDevice));

  /* bs-3 nodes (rows 3i, 3i + 1, 3i + 2 with one column list) and, where their columns come in aligned triples too,
     dense 3 x 3 blocks: the layouts of NodeSlicedKernel<1> and <3> */
  bool nodes = A.m % 3 == 0 && A.m == A.n, blocks = nodes;
  for (int i = 0; nodes && i < A.m; i += 3) {
    const int l = A.ptr[i + 1] - A.ptr[i];
    for (int a = 1; a < 3 && nodes; a++) nodes = A.ptr[i + a + 1] - A.ptr[i + a] == l && std::equal(A.col.begin() + A.ptr[i], A.col.begin() + A.ptr[i] + l, A.col.begin() + A.ptr[i + a]);
    blocks = blocks && l % 3 == 0;
    for (int j = 0; blocks && j < l; j += 3) blocks = A.col[A.ptr[i] + j] % 3 == 0 && A.col[A.ptr[i] + j + 1] == A.col[A.ptr[i] + j] + 1 && A.col[A.ptr[i] + j + 2] == A.col[A.ptr[i] + j] + 2;
  }
  blocks       = blocks && nodes;
  const int  nn = A.m / 3;
  NodeSlices ns = {}, bsl = {};
  if (nodes) ns = BuildNodeSlices(A, 1, "bs-3 nodes");
  if (blocks) bsl = BuildNodeSlices(A, 3, "dense 3 x 3 blocks");
  const unsigned gn = (unsigned)((nn + 127) / 128);

  /* each slice's footprint of x (distinct columns, sorted) and the 16-bit index of each entry into it, laid out as
     the sliced values (FootprintKernel); where a slice touches more than 65536 columns it is not built */
  std::vector<int>      fptr(nsl + 1, 0), fcol;
  std::vector<uint16_t> lidx(sptr[nsl], 0);
  int                   maxf = 0;
  bool                  foot = true;
  for (int sl = 0; sl < nsl && foot; sl++) {
    const int        h = std::min(32, A.m - 32 * sl);
    std::vector<int> F(A.col.begin() + A.ptr[32 * sl], A.col.begin() + A.ptr[32 * sl + h]);
    std::sort(F.begin(), F.end());
    F.erase(std::unique(F.begin(), F.end()), F.end());
    foot = F.size() <= 65536;
    for (int r = 32 * sl; r < 32 * sl + h && foot; r++)
      for (int j = 0; j < len[r]; j++) lidx[sptr[sl] + j * h + r % 32] = (uint16_t)(std::lower_bound(F.begin(), F.end(), A.col[A.ptr[r] + j]) - F.begin());
    fptr[sl + 1] = fptr[sl] + (int)F.size();
    fcol.insert(fcol.end(), F.begin(), F.end());
    maxf = std::max(maxf, (int)F.size());
  }
  foot = foot && 4 * maxf * (int)sizeof(double) <= 200 * 1024;
  int      *dfptr = NULL, *dfcol = NULL;
  uint16_t *dlidx = NULL;
  if (foot) {
    CK(cudaMalloc(&dfptr, sizeof(int) * (nsl + 1)));
    CK(cudaMalloc(&dfcol, sizeof(int) * std::max<size_t>(fcol.size(), 1)));
    CK(cudaMalloc(&dlidx, sizeof(uint16_t) * std::max(sptr[nsl], 1)));
    CK(cudaMemcpy(dfptr, fptr.data(), sizeof(int) * (nsl + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dfcol, fcol.data(), sizeof(int) * fcol.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dlidx, lidx.data(), sizeof(uint16_t) * sptr[nsl], cudaMemcpyHostToDevice));
    CK(cudaFuncSetAttribute(FootprintKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * maxf * (int)sizeof(double)));
    printf("x footprints: %.1f distinct columns a slice (at most %d), %.2f uses each; %.2f bytes a nonzero with padding\n", (double)fcol.size() / nsl, maxf, (double)nnz / std::max<size_t>(fcol.size(), 1), (10.0 * sptr[nsl] + 4.0 * fcol.size()) / nnz);
  }
  /* each slice's smallest column and 16-bit offsets from it, where the slice spans fewer than 65536 columns */
  std::vector<int>      sbase(nsl, -1);
  std::vector<uint16_t> off16(std::max(sptr[nsl], 1), 0);
  long long             narrownz = 0;
  for (int sl = 0; sl < nsl; sl++) {
    const int h = std::min(32, A.m - 32 * sl);
    int       lo = INT32_MAX, hi = -1;
    for (int q = A.ptr[32 * sl]; q < A.ptr[32 * sl + h]; q++) lo = std::min(lo, A.col[q]), hi = std::max(hi, A.col[q]);
    if (hi < 0 || hi - lo >= 65536) continue;
    sbase[sl] = lo;
    narrownz += A.ptr[32 * sl + h] - A.ptr[32 * sl];
    for (int r = 32 * sl; r < 32 * sl + h; r++)
      for (int j = 0; j < len[r]; j++) off16[sptr[sl] + j * h + r % 32] = (uint16_t)(A.col[A.ptr[r] + j] - lo);
  }
  int      *dsbase = NULL;
  uint16_t *doff16 = NULL;
  CK(cudaMalloc(&dsbase, sizeof(int) * std::max(nsl, 1)));
  CK(cudaMalloc(&doff16, sizeof(uint16_t) * off16.size()));
  CK(cudaMemcpy(dsbase, sbase.data(), sizeof(int) * nsl, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(doff16, off16.data(), sizeof(uint16_t) * off16.size(), cudaMemcpyHostToDevice));
  printf("16-bit offsets from a slice base: %.3f of the slices, %.3f of the nonzeros fit\n", (double)std::count_if(sbase.begin(), sbase.end(), [](int b) { return b >= 0; }) / std::max(nsl, 1), (double)narrownz / std::max(nnz, 1));
  const unsigned gf = (unsigned)((nsl + 3) / 4);
  const size_t   fsm = 4 * (size_t)maxf * sizeof(double);

  /* cuSPARSE */
  for (cusparseSpMVAlg_t alg : {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2}) {
    const char *name = alg == CUSPARSE_SPMV_CSR_ALG1 ? "cusparse CSR_ALG1" : "cusparse CSR_ALG2";
    if (!Only(name, only)) continue;
    const SpMV spmv(d, 0, alg);
    CK(cudaMemset(d.y, 0xff, sizeof(double) * A.m));
    const double t = Time([&]() { spmv(); }, reps);
    Report(A, name, t, bw, ref, sc, d, -1);
  }
  /* the row kernel: lanes, block size, one sum, plain loads; diagnostics */
  RunRow<4, ROW_FULL>(A, d, 128, 0, reps, bw, ref, sc, only);
  RunRow<8, ROW_FULL>(A, d, 128, 0, reps, bw, ref, sc, only);
  RunRow<16, ROW_FULL>(A, d, 128, 0, reps, bw, ref, sc, only);
  RunRow<32, ROW_FULL>(A, d, 128, 0, reps, bw, ref, sc, only);
  RunRow<8, ROW_FULL>(A, d, 256, 0, reps, bw, ref, sc, only);
  RunRow<8, ROW_FULL>(A, d, 128, 64, reps, bw, ref, sc, only);
  RunRow<8, ROW_TWOSUMS>(A, d, 128, 0, reps, bw, ref, sc, only);
  RunRow<16, ROW_TWOSUMS>(A, d, 128, 0, reps, bw, ref, sc, only);
  RunRow<8, ROW_PLAIN>(A, d, 128, 0, reps, bw, ref, sc, only);
  RunRow<8, ROW_NOX>(A, d, 128, 0, reps, bw, ref, sc, only);
  RunRow<8, ROW_XATROW>(A, d, 128, 0, reps, bw, ref, sc, only);
  for (int per : {1, 4}) {
    const char *name = per == 1 ? "sliced (32-row slices)" : "sliced, 4 slices a warp";
    if (!Only(name, only)) continue;
    CK(cudaMemset(d.y, 0xff, sizeof(double) * A.m));
    const double t = Time([&]() { SlicedKernel<<<(unsigned)((A.m + 128 * per - 1) / (128 * per)), 128>>>(A.m, per, d.sptr, d.len, d.scol, d.sval, d.x, d.y); }, reps);
    Report(A, name, t, bw, ref, sc, d, -1);
  }
  {
    /* PETSc's sliced kernel and its variants: units of 4 slices, blocks of 32 x 4 */
    const CSRKGroups g     = {(CSRKIdx)A.m, 32, 4};
    const unsigned   units = (unsigned)(((A.m + 31) / 32 + 3) / 4);
    const dim3       blk(32, 4, 1);
    const char      *names[5] = {"petsc sliced", "petsc sliced, len array", "petsc sliced, y[r] = sum", "petsc sliced, len array, y[r] = sum", "petsc sliced, no division"};
    for (int v = 0; v < 5; v++) {
      if (!Only(names[v], only)) continue;
      CK(cudaMemset(d.y, 0xff, sizeof(double) * A.m));
      const double t = Time([&]() {
        if (v == 0) PetscSlicedKernel<false, false><<<units, blk>>>(g, d.ptr, d.len, d.sptr, d.scol, d.sval, NULL, d.x, NULL, d.y);
        else if (v == 1) PetscSlicedKernel<true, false><<<units, blk>>>(g, d.ptr, d.len, d.sptr, d.scol, d.sval, NULL, d.x, NULL, d.y);
        else if (v == 2) PetscSlicedKernel<false, true><<<units, blk>>>(g, d.ptr, d.len, d.sptr, d.scol, d.sval, NULL, d.x, NULL, d.y);
        else if (v == 3) PetscSlicedKernel<true, true><<<units, blk>>>(g, d.ptr, d.len, d.sptr, d.scol, d.sval, NULL, d.x, NULL, d.y);
        else PetscSlicedKernel<false, false, true><<<units, blk>>>(g, d.ptr, d.len, d.sptr, d.scol, d.sval, NULL, d.x, NULL, d.y, (A.m + 31) / 32);
      }, reps);
      Report(A, names[v], t, bw, ref, sc, d, -1);
    }
  }
  if (nodes && Only("node sliced (3 rows a thread)", only)) {
    CK(cudaMemset(d.y, 0xff, sizeof(double) * A.m));
    const double t = Time([&]() { NodeSlicedKernel<1><<<gn, 128>>>(nn, ns.ptr, ns.len, ns.col, ns.val, d.x, d.y); }, reps);
    Report(A, "node sliced (3 rows a thread)", t, bw, ref, sc, d, -1);
  }
  if (foot && Only("footprint (x in shared memory, 16-bit indices)", only)) {
    CK(cudaMemset(d.y, 0xff, sizeof(double) * A.m));
    const double t = Time([&]() { FootprintKernel<<<gf, 128, fsm>>>(A.m, maxf, d.sptr, d.len, dfptr, dfcol, dlidx, d.sval, d.x, d.y); }, reps);
    Report(A, "footprint (x in shared memory, 16-bit indices)", t, bw, ref, sc, d, -1);
  }
  if (blocks && Only("block sliced (3 x 3 blocks)", only)) {
    CK(cudaMemset(d.y, 0xff, sizeof(double) * A.m));
    const double t = Time([&]() { NodeSlicedKernel<3><<<gn, 128>>>(nn, bsl.ptr, bsl.len, bsl.col, bsl.val, d.x, d.y); }, reps);
    Report(A, "block sliced (3 x 3 blocks)", t, bw, ref, sc, d, -1);
  }
  {
    /* the 16-bit deltas: slots per row, padded per slice */
    std::vector<int>      ns(A.m), dptr(nsl + 1, 0);
    long long             esc = 0;
    for (int r = 0; r < A.m; r++) {
      long long prev = (long long)r - 32768;
      ns[r]          = 0;
      for (int q = A.ptr[r]; q < A.ptr[r + 1]; q++) {
        const long long dd = A.col[q] - prev;
        if (dd >= 1 && dd <= 65535) ns[r] += 1;
        else ns[r] += 3, esc++;
        prev = A.col[q];
      }
    }
    for (int s = 0; s < nsl; s++) {
      int top = 0, h = std::min(32, A.m - 32 * s);
      for (int r = 32 * s; r < 32 * s + h; r++) top = std::max(top, ns[r]);
      dptr[s + 1] = dptr[s] + top * h;
    }
    std::vector<uint16_t> d16(dptr[nsl], 0);
    for (int r = 0; r < A.m; r++) {
      const int s = r / 32, h = std::min(32, A.m - 32 * s);
      int       p = dptr[s] + r % 32;
      long long prev = (long long)r - 32768;
      for (int q = A.ptr[r]; q < A.ptr[r + 1]; q++) {
        const long long dd = A.col[q] - prev;
        if (dd >= 1 && dd <= 65535) d16[p] = (uint16_t)dd, p += h;
        else d16[p] = 0, d16[p + h] = (uint16_t)(A.col[q] & 0xffff), d16[p + 2 * h] = (uint16_t)((unsigned)A.col[q] >> 16), p += 3 * h;
        prev = A.col[q];
      }
    }
    int      *ddptr;
    uint16_t *dd16;
    CK(cudaMalloc(&ddptr, sizeof(int) * (nsl + 1)));
    CK(cudaMalloc(&dd16, sizeof(uint16_t) * std::max(dptr[nsl], 1)));
    CK(cudaMemcpy(ddptr, dptr.data(), sizeof(int) * (nsl + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dd16, d16.data(), sizeof(uint16_t) * dptr[nsl], cudaMemcpyHostToDevice));
    const char *name = "sliced, 16-bit deltas";
    if (Only(name, only)) {
      CK(cudaMemset(d.y, 0xff, sizeof(double) * A.m));
      const double t = Time([&]() { SlicedDeltaKernel<<<(unsigned)((A.m + 127) / 128), 128>>>(A.m, d.sptr, ddptr, d.len, dd16, d.sval, d.x, d.y); }, reps);
      Report(A, name, t, bw, ref, sc, d, -1);
    }
    printf("16-bit deltas: %.3f escapes a row, %.3f slots a nonzero with padding (%.2f bytes a nonzero with the values)\n", (double)esc / A.m, (double)dptr[nsl] / nnz, (2.0 * dptr[nsl] + 8.0 * sptr[nsl]) / nnz);
    cudaFree(ddptr), cudaFree(dd16);
  }
  if (solvelike) {
    cudaStream_t    st;
    cudaDeviceProp  prop;
    double         *buf;
    const long long blen = (long long)solvelike * std::max(A.m, A.n);
    const unsigned  g    = (unsigned)((A.m + 127) / 128), growm = (unsigned)((A.m + 15) / 16);
    CK(cudaGetDeviceProperties(&prop, 0));
    CK(cudaStreamCreate(&st));
    CK(cudaMalloc(&buf, sizeof(double) * blen));
    CK(cudaMemset(buf, 0, sizeof(double) * blen));
    printf("as in a solve: %d vectors' traffic between products; L2 %d MB, persisting carve-out up to %d MB, window up to %d MB\n", solvelike, prop.l2CacheSize >> 20, (int)(prop.persistingL2CacheMaxSize >> 20), prop.accessPolicyMaxWindowSize >> 20);
    auto run = [&](const char *name, auto launch) {
      if (!Only(name, only)) return;
      CK(cudaMemset(d.y, 0xff, sizeof(double) * A.m));
      const double t = SolveTime(launch, reps, st, buf, blen, d.x, A.n);
      Report(A, name, t, bw, ref, sc, d, -1);
    };
    if (Only("solve: cusparse CSR_ALG1", only)) {
      const SpMV spmv(d, st, CUSPARSE_SPMV_CSR_ALG1);
      run("solve: cusparse CSR_ALG1", [&]() { spmv(); });
    }
    run("solve: row w8", [&]() { RowKernel<8, ROW_FULL><<<growm, 128, 0, st>>>(A.m, 16, d.ptr, d.col, d.val, d.x, d.y); });
    run("solve: sliced", [&]() { SlicedKernel<0, 0><<<g, 128, 0, st>>>(A.m, 1, d.sptr, d.len, d.scol, d.sval, d.x, d.y); });
    run("solve: sliced, y evict-first", [&]() { SlicedKernel<0, 1><<<g, 128, 0, st>>>(A.m, 1, d.sptr, d.len, d.scol, d.sval, d.x, d.y); });
    run("solve: sliced, x evict_last", [&]() { SlicedKernel<1, 0><<<g, 128, 0, st>>>(A.m, 1, d.sptr, d.len, d.scol, d.sval, d.x, d.y); });
    run("solve: sliced, x evict_last, y evict-first", [&]() { SlicedKernel<1, 1><<<g, 128, 0, st>>>(A.m, 1, d.sptr, d.len, d.scol, d.sval, d.x, d.y); });
    if (nodes) run("solve: node sliced (3 rows a thread)", [&]() { NodeSlicedKernel<1><<<gn, 128, 0, st>>>(nn, ns.ptr, ns.len, ns.col, ns.val, d.x, d.y); });
    if (blocks) run("solve: block sliced (3 x 3 blocks)", [&]() { NodeSlicedKernel<3><<<gn, 128, 0, st>>>(nn, bsl.ptr, bsl.len, bsl.col, bsl.val, d.x, d.y); });
    run("solve: sliced, 16-bit offsets from a slice base", [&]() { SliceBase16Kernel<<<g, 128, 0, st>>>(A.m, d.sptr, d.len, dsbase, doff16, d.scol, d.sval, d.x, d.y); });
    if (foot) run("solve: footprint (x in shared memory, 16-bit indices)", [&]() { FootprintKernel<<<gf, 128, fsm, st>>>(A.m, maxf, d.sptr, d.len, dfptr, dfcol, dlidx, d.sval, d.x, d.y); });
    /* x in a persisting access-policy window over an L2 carve-out (what a stream attribute would give PETSc's stream) */
    const size_t xb = sizeof(double) * A.n, carve = std::min(xb, (size_t)prop.persistingL2CacheMaxSize), win = std::min(xb, (size_t)prop.accessPolicyMaxWindowSize);
    if (carve && win) {
      cudaStreamAttrValue a = {};
      CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, carve));
      a.accessPolicyWindow.base_ptr  = d.x;
      a.accessPolicyWindow.num_bytes = win;
      a.accessPolicyWindow.hitRatio  = (float)std::min(1.0, (double)carve / win);
      a.accessPolicyWindow.hitProp   = cudaAccessPropertyPersisting;
      a.accessPolicyWindow.missProp  = cudaAccessPropertyStreaming;
      CK(cudaStreamSetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &a));
      run("solve: sliced, x in a persisting window", [&]() { SlicedKernel<0, 0><<<g, 128, 0, st>>>(A.m, 1, d.sptr, d.len, d.scol, d.sval, d.x, d.y); });
      run("solve: sliced, x in a persisting window, y evict-first", [&]() { SlicedKernel<0, 1><<<g, 128, 0, st>>>(A.m, 1, d.sptr, d.len, d.scol, d.sval, d.x, d.y); });
      run("solve: row w8, x in a persisting window", [&]() { RowKernel<8, ROW_FULL><<<growm, 128, 0, st>>>(A.m, 16, d.ptr, d.col, d.val, d.x, d.y); });
      a.accessPolicyWindow.num_bytes = 0;
      CK(cudaStreamSetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &a));
      CK(cudaCtxResetPersistingL2Cache());
      CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
      printf("window: %.1f MB of x, carve-out %.1f MB, hit ratio %.2f\n", xb / 1048576.0, carve / 1048576.0, std::min(1.0, (double)carve / win));
    }
    CK(cudaFree(buf));
    CK(cudaStreamDestroy(st));
  }
  printf("sliced storage: %.3f of the nonzeros (padding)\n", (double)sptr[nsl] / nnz);
  cudaFree(d.ptr), cudaFree(d.col), cudaFree(d.val), cudaFree(d.x), cudaFree(d.y), cudaFree(d.sptr), cudaFree(d.len), cudaFree(d.scol), cudaFree(d.sval);
  cudaFree(ns.ptr), cudaFree(ns.len), cudaFree(ns.col), cudaFree(ns.val), cudaFree(bsl.ptr), cudaFree(bsl.len), cudaFree(bsl.col), cudaFree(bsl.val);
  cudaFree(dfptr), cudaFree(dfcol), cudaFree(dlidx), cudaFree(dsbase), cudaFree(doff16);
}

int main(int argc, char **argv)
{
  double      bw = 4189, reps = 200;
  bool        rand = false;
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-bw") && i + 1 < argc) bw = atof(argv[++i]);
    else if (!strcmp(argv[i], "-reps") && i + 1 < argc) reps = atof(argv[++i]);
    else if (!strcmp(argv[i], "-rand")) rand = true;
    else if (!strcmp(argv[i], "-nostats")) stats = false;
    else if (!strcmp(argv[i], "-solvelike") && i + 1 < argc) solvelike = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-gen") && i + 2 < argc) {
      /* -gen p1|p2|el N [-write file]: a generated tetrahedral matrix (el: P1 elasticity, bs 3), swept (or only written) */
      const bool  el  = !strcmp(argv[i + 1], "el");
      const int   deg = !strcmp(argv[i + 1], "p2") ? 2 : 1, N = atoi(argv[i + 2]);
      const char *w   = i + 4 < argc && !strcmp(argv[i + 3], "-write") ? argv[i + 4] : NULL;
      Csr         A   = el ? Expand3(GenTet(N, 1)) : GenTet(N, deg);
      i += w ? 4 : 2;
      if (w) {
        if (!WritePetscBinary(w, A)) return 1;
        printf("wrote %s: %s, %d rows, %d nonzeros\n", w, A.name.c_str(), A.m, A.ptr[A.m]);
        continue;
      }
      Sweep(A, bw, (int)reps, only);
      if (rand) Sweep(Permute(A, 1), bw, (int)reps, only);
      fflush(stdout);
    }
    else if (!strcmp(argv[i], "-only") && i + 1 < argc) only = argv[++i];
    else {
      Csr A;
      if (!ReadPetscBinary(argv[i], A)) {
        fprintf(stderr, "cannot read %s as a PETSc binary matrix\n", argv[i]);
        return 1;
      }
      Sweep(A, bw, (int)reps, only);
      fflush(stdout);
      if (rand) Sweep(Permute(A, 1), bw, (int)reps, only);
      fflush(stdout);
    }
  }
  return 0;
}
