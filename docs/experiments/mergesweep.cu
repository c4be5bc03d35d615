/*
   Sweep of the merge kernel (src/mat/impls/csrk/cuda/csrkcudamerge.cuh) against cuSPARSE's CSR SpMV, without PETSc:
   threads per block, steps per thread and cache hints, on generated power-law matrices and Matrix Market files.

     nvcc -O3 -std=c++17 -arch=sm_90 -o mergesweep docs/experiments/mergesweep.cu -lcusparse
     ./mergesweep [-powerlaw n]... [file.mtx]...

   With the chosen kernel (256 x 4, streamed hints, the fix-up as a dependent launch) it also times the tile kernel's
   loads alone (LoadsOnlyKernel) and, as a diagnostic, the same rows with columns in order (x read in sequence): the
   two show what the gathers of x cost against the search, walk and scan (docs/tuning.md).

   Every variant's result is checked against a host sum (normwise, relative to sum |a_ij x_j|) and run twice to check
   that it is bitwise the same. Times: median of 200 launches after 20 warm-up, each between two events.
*/
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <cmath>
#include <vector>
#include <algorithm>
#include <random>
#include <string>
#include <cuda_runtime.h>
#include <cusparse.h>

typedef double  PetscScalar;
typedef double  PetscReal;
typedef int32_t PetscInt;
typedef int32_t CSRKIdx;
#define CSRK_IDX_MAX INT32_MAX
#include "../../src/mat/impls/csrk/cuda/csrkcudamerge.cuh"

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

static void Finish(Csr &A, std::vector<std::vector<std::pair<int, double>>> &rows)
{
  A.ptr.assign(A.m + 1, 0);
  for (int r = 0; r < A.m; r++) {
    auto &v = rows[r];
    std::sort(v.begin(), v.end(), [](auto &a, auto &b) { return a.first < b.first; });
    for (size_t i = 0; i < v.size(); i++) {
      if (!A.col.empty() && A.ptr[r] < (int)A.col.size() && A.col.back() == v[i].first) A.val.back() += v[i].second;
      else A.col.push_back(v[i].first), A.val.push_back(v[i].second);
    }
    A.ptr[r + 1] = (int)A.col.size();
    std::vector<std::pair<int, double>>().swap(v);
  }
}

/* the bench's "powerlaw" problem: lengths 3 u^(-1/1.5) (at most n/8), uniformly random columns, a diagonal */
static Csr PowerLaw(int n)
{
  Csr                                              A;
  std::mt19937_64                                  g(42);
  std::uniform_real_distribution<double>           u(0.0, 1.0);
  std::vector<std::vector<std::pair<int, double>>> rows(n);
  A.name = "powerlaw-" + std::to_string(n);
  A.m = A.n = n;
  for (int r = 0; r < n; r++) {
    const int len = (int)std::min((double)std::max(n / 8, 3), 3.0 * std::pow(std::max(1.0 - u(g), 1e-12), -1.0 / 1.5));
    for (int q = 0; q < len; q++) rows[r].push_back({std::min(n - 1, (int)(u(g) * n)), u(g) - 0.5});
    rows[r].push_back({r, 6.0});
  }
  Finish(A, rows);
  return A;
}

static Csr ReadMtx(const char *file)
{
  Csr   A;
  FILE *f = fopen(file, "r");
  char  line[1024];
  bool  pattern, symmetric;
  long  nz;
  if (!f || !fgets(line, sizeof line, f)) {
    fprintf(stderr, "cannot read %s\n", file);
    exit(1);
  }
  pattern   = strstr(line, "pattern") != NULL;
  symmetric = strstr(line, "symmetric") != NULL;
  do {
    if (!fgets(line, sizeof line, f)) exit(1);
  } while (line[0] == '%');
  sscanf(line, "%d %d %ld", &A.m, &A.n, &nz);
  std::vector<std::vector<std::pair<int, double>>> rows(A.m);
  for (long k = 0; k < nz; k++) {
    int    i, j;
    double v = 1.0;
    if (pattern ? fscanf(f, "%d %d", &i, &j) != 2 : fscanf(f, "%d %d %lf", &i, &j, &v) != 3) exit(1);
    rows[i - 1].push_back({j - 1, v});
    if (symmetric && i != j) rows[j - 1].push_back({i - 1, v});
  }
  fclose(f);
  A.name = file;
  if (A.name.rfind('/') != std::string::npos) A.name = A.name.substr(A.name.rfind('/') + 1);
  Finish(A, rows);
  return A;
}

struct Dev {
  int     m, n, nnz;
  int    *ptr, *col;
  double *val, *x, *y;
};

static double Median(std::vector<float> &t)
{
  std::sort(t.begin(), t.end());
  return 1e3 * t[t.size() / 2];
}

template <typename F>
static double Time(F launch)
{
  cudaEvent_t        a, b;
  std::vector<float> t;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 20; i++) launch();
  for (int i = 0; i < 200; i++) {
    float ms;
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return Median(t);
}

static const Csr          *gA;
static std::vector<double> gx, gref, gabs;

static void Check(const Dev &d, const char *what, double us, double alg1)
{
  std::vector<double> y(d.m), y2(d.m);
  double              err = 0, scale = 0;
  CK(cudaMemcpy(y.data(), d.y, sizeof(double) * d.m, cudaMemcpyDeviceToHost));
  for (int r = 0; r < d.m; r++) err = std::max(err, std::fabs(y[r] - gref[r])), scale = std::max(scale, gabs[r]);
  printf("%-22s %-28s %10.1f us  %6.1f GB/s model  x ALG1 %.3f  err %.1e\n", gA->name.c_str(), what, us, (12.0 * d.nnz + 20.0 * d.m) / (us * 1e3), alg1 / us, err / scale);
  if (!(err <= 1e-13 * scale)) printf("FAILED: %s %s error %g\n", gA->name.c_str(), what, err / scale);
}

struct Merge {
  int     ntiles = 0, tilesize = 0;
  int    *tile = NULL, *crow = NULL;
  double *cval = NULL;
};

template <int THREADS, int ITEMS, int HINTS, bool PDL = false>
static void RunMerge(const Dev &d, double alg1)
{
  Merge        M;
  const size_t total = (size_t)d.m + d.nnz;
  char         what[64];
  M.tilesize         = THREADS * ITEMS;
  M.ntiles           = (int)((total + M.tilesize - 1) / M.tilesize);
  CK(cudaMalloc(&M.tile, sizeof(int) * 2 * (M.ntiles + 1)));
  CK(cudaMalloc(&M.crow, sizeof(int) * std::max(M.ntiles, 1)));
  CK(cudaMalloc(&M.cval, sizeof(double) * std::max(M.ntiles, 1)));
  CSRKMergeTilesKernel<<<(M.ntiles + 256) / 256, 256>>>(M.ntiles, M.tilesize, d.m, d.nnz, d.ptr, M.tile);
  auto tiles = [&]() { CSRKMergeKernel<THREADS, ITEMS, HINTS><<<M.ntiles, THREADS>>>(d.m, M.tile, d.ptr, d.col, d.val, d.x, NULL, d.y, M.crow, M.cval); };
  auto launch = [&]() {
    tiles();
    CK(CSRKMergeLaunchFixup(M.ntiles, d.m, M.crow, M.cval, d.y, 0, PDL));
  };
  CK(cudaMemset(d.y, 0xff, sizeof(double) * d.m)); /* poisoned: NaN where a row is not written */
  launch();
  CK(cudaDeviceSynchronize());
  std::vector<double> y1(d.m), y2(d.m);
  CK(cudaMemcpy(y1.data(), d.y, sizeof(double) * d.m, cudaMemcpyDeviceToHost));
  const double us = Time(launch);
  CK(cudaMemcpy(y2.data(), d.y, sizeof(double) * d.m, cudaMemcpyDeviceToHost));
  snprintf(what, sizeof what, "merge %d x %d hints %d%s%s", THREADS, ITEMS, HINTS, PDL ? " pdl" : "", memcmp(y1.data(), y2.data(), sizeof(double) * d.m) ? " NONDET" : "");
  Check(d, what, us, alg1);
  printf("%-22s %-28s %10.1f us  (tile kernel alone)\n", gA->name.c_str(), "", Time(tiles));
  CK(cudaFree(M.tile));
  CK(cudaFree(M.crow));
  CK(cudaFree(M.cval));
}


/* diagnostic: the tile kernel's loads alone (values, columns, row ends, gathers of x into shared memory), no search,
   walk or scan; y gets one value per row of the tile */
template <int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS) LoadsOnlyKernel(CSRKIdx m, const CSRKIdx *__restrict__ tile, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *__restrict__ y)
{
  constexpr int      TILE = THREADS * ITEMS;
  __shared__ PetscScalar prod[TILE + 1];
  const CSRKIdx          x0 = tile[2 * blockIdx.x], y0 = tile[2 * blockIdx.x + 1];
  const CSRKIdx          nrows = tile[2 * blockIdx.x + 2] - x0, nnz = tile[2 * blockIdx.x + 3] - y0;
  CSRKIdx               *rowend = (CSRKIdx *)(prod + nnz);
  PetscScalar v[ITEMS];
  CSRKIdx     c[ITEMS], e[ITEMS + 1];
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    const CSRKIdx i = threadIdx.x + k * THREADS;
    if (i < nnz) {
      v[k] = CSRKLoadStreamed(val + y0 + i);
      c[k] = __ldcs(colidx + y0 + i);
    }
  }
#pragma unroll
  for (int k = 0; k <= ITEMS; k++) {
    const CSRKIdx i = threadIdx.x + k * THREADS;
    if (i <= nrows) e[k] = x0 + i < m ? __ldcs(rowptr + x0 + i + 1) : CSRK_IDX_MAX;
  }
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    const CSRKIdx i = threadIdx.x + k * THREADS;
    if (i < nnz) prod[i] = v[k] * x[c[k]];
  }
#pragma unroll
  for (int k = 0; k <= ITEMS; k++) {
    const CSRKIdx i = threadIdx.x + k * THREADS;
    if (i <= nrows) rowend[i] = e[k];
  }
  __syncthreads();
  if (threadIdx.x < nrows) __stcs(y + x0 + threadIdx.x, prod[threadIdx.x % (nnz ? nnz : 1)] + (PetscScalar)rowend[threadIdx.x]);
}

template <int THREADS, int ITEMS>
static void RunLoadsOnly(const Dev &d)
{
  Merge        M;
  const size_t total = (size_t)d.m + d.nnz;
  M.tilesize         = THREADS * ITEMS;
  M.ntiles           = (int)((total + M.tilesize - 1) / M.tilesize);
  CK(cudaMalloc(&M.tile, sizeof(int) * 2 * (M.ntiles + 1)));
  CSRKMergeTilesKernel<<<(M.ntiles + 256) / 256, 256>>>(M.ntiles, M.tilesize, d.m, d.nnz, d.ptr, M.tile);
  printf("%-22s %-28s %10.1f us  (diagnostic: loads only)\n", gA->name.c_str(), "", Time([&]() { LoadsOnlyKernel<THREADS, ITEMS><<<M.ntiles, THREADS>>>(d.m, M.tile, d.ptr, d.col, d.val, d.x, d.y); }));
  CK(cudaFree(M.tile));
}

static double RunCusparse(const Dev &d, cusparseSpMVAlg_t alg, const char *what, double alg1)
{
  cusparseHandle_t     h;
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t vx, vy;
  const double         one = 1.0, zero = 0.0;
  size_t               size;
  void                *buf;
  CS(cusparseCreate(&h));
  CS(cusparseCreateCsr(&A, d.m, d.n, d.nnz, d.ptr, d.col, d.val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  CS(cusparseCreateDnVec(&vx, d.n, d.x, CUDA_R_64F));
  CS(cusparseCreateDnVec(&vy, d.m, d.y, CUDA_R_64F));
  CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F, alg, &size));
  CK(cudaMalloc(&buf, std::max(size, (size_t)1)));
#if CUDART_VERSION >= 12040
  CS(cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F, alg, buf));
#endif
  auto launch = [&]() { CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_64F, alg, buf)); };
  CK(cudaMemset(d.y, 0xff, sizeof(double) * d.m));
  const double us = Time(launch);
  Check(d, what, us, alg1 > 0 ? alg1 : us);
  CK(cudaFree(buf));
  CS(cusparseDestroyDnVec(vx));
  CS(cusparseDestroyDnVec(vy));
  CS(cusparseDestroySpMat(A));
  CS(cusparseDestroy(h));
  return us;
}

static void Sweep(const Csr &A)
{
  Dev d;
  gA    = &A;
  d.m   = A.m;
  d.n   = A.n;
  d.nnz = (int)A.col.size();
  gx.resize(A.n);
  for (int i = 0; i < A.n; i++) gx[i] = 1.0 + 0.5 * std::sin(0.37 * i);
  gref.assign(A.m, 0);
  gabs.assign(A.m, 0);
  for (int r = 0; r < A.m; r++)
    for (int q = A.ptr[r]; q < A.ptr[r + 1]; q++) gref[r] += A.val[q] * gx[A.col[q]], gabs[r] += std::fabs(A.val[q] * gx[A.col[q]]);
  CK(cudaMalloc(&d.ptr, sizeof(int) * (A.m + 1)));
  CK(cudaMalloc(&d.col, sizeof(int) * std::max(d.nnz, 1)));
  CK(cudaMalloc(&d.val, sizeof(double) * std::max(d.nnz, 1)));
  CK(cudaMalloc(&d.x, sizeof(double) * A.n));
  CK(cudaMalloc(&d.y, sizeof(double) * A.m));
  CK(cudaMemcpy(d.ptr, A.ptr.data(), sizeof(int) * (A.m + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.col, A.col.data(), sizeof(int) * d.nnz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.val, A.val.data(), sizeof(double) * d.nnz, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.x, gx.data(), sizeof(double) * A.n, cudaMemcpyHostToDevice));
  {
    int maxlen = 0;
    for (int r = 0; r < A.m; r++) maxlen = std::max(maxlen, A.ptr[r + 1] - A.ptr[r]);
    printf("# %s: %d x %d, %d nonzeros, mean row %.2f, longest %d\n", A.name.c_str(), A.m, A.n, d.nnz, (double)d.nnz / A.m, maxlen);
  }
  const double alg1 = RunCusparse(d, CUSPARSE_SPMV_CSR_ALG1, "cusparse ALG1", 0);
  RunCusparse(d, CUSPARSE_SPMV_CSR_ALG2, "cusparse ALG2", alg1);
  RunMerge<256, 4, 1, true>(d, alg1);
  RunLoadsOnly<256, 4>(d);
  RunMerge<256, 4, 1, true>(d, alg1);
  RunLoadsOnly<256, 4>(d);
  RunCusparse(d, CUSPARSE_SPMV_CSR_ALG1, "cusparse ALG1 again", alg1);
  {
    /* diagnostic: the same rows with columns i mod n (x read in order): what the gathers cost */
    std::vector<int> seq(d.nnz);
    int             *col = d.col;
    for (int i = 0; i < d.nnz; i++) seq[i] = i % d.n;
    CK(cudaMalloc(&d.col, sizeof(int) * std::max(d.nnz, 1)));
    CK(cudaMemcpy(d.col, seq.data(), sizeof(int) * d.nnz, cudaMemcpyHostToDevice));
    printf("# diagnostic, columns in order (errors expected)\n");
    const double a1 = RunCusparse(d, CUSPARSE_SPMV_CSR_ALG1, "seq-cols ALG1", 0);
    RunMerge<256, 4, 1, true>(d, a1);
    RunLoadsOnly<256, 4>(d);
    CK(cudaFree(d.col));
    d.col = col;
  }
  CK(cudaFree(d.ptr));
  CK(cudaFree(d.col));
  CK(cudaFree(d.val));
  CK(cudaFree(d.x));
  CK(cudaFree(d.y));
}

int main(int argc, char **argv)
{
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("# %s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-powerlaw") && i + 1 < argc) Sweep(PowerLaw(atoi(argv[++i])));
    else Sweep(ReadMtx(argv[i]));
  }
  return 0;
}
