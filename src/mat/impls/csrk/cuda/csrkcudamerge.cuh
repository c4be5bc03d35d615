/*
   The merge kernel: a CSR SpMV balanced over rows and nonzeros together (merge path), with a fixed reduction order.

   The product walks the merge of two lists, the row ends rowptr[1..m] and the nonzero indices 0..nnz-1: a step either
   takes the next nonzero of the current row or ends the row. The path has m + nnz steps; tile b of the launch takes
   steps [b T, (b + 1) T) (T = THREADS x ITEMS), whatever rows they belong to, so a row of 500,000 entries is spread
   over hundreds of blocks and a run of empty rows costs one step each. The tiles' start coordinates (row, nonzero)
   depend on the pattern only and are found once (CSRKMergeTilesKernel).

   In a tile, the products val[q] * x[col[q]] of its nonzeros are formed with coalesced loads into shared memory, next
   to the tile's row ends; each thread then walks ITEMS steps of the path, sums its part of each row in order, and
   writes the rows it ends. What a thread has summed of the row it ends in is its carry: a segmented scan over the
   block (shuffles in a warp, then the warps in order) gives each thread the carries of the threads before it in the
   same row. The block's last carry (the row still open at the tile's end) goes to carryval[b]; a second kernel adds
   the carries of each row's earlier tiles in tile order. Every sum has a fixed order, so the result is bitwise the
   same run to run, unlike atomic or scheduling-dependent reductions.

   Only PetscScalar, PetscReal and CSRKIdx are needed here (the kernels are also built by docs/experiments/mergesweep.cu).
*/
#ifndef CSRKCUDAMERGE_CUH
#define CSRKCUDAMERGE_CUH

#include "csrkcudadevice.cuh"

/* cache hints of the tile loads: none; the matrix loaded with ld.cs (streamed, evict first); or L2 eviction
   policies on sm_80 and later (the matrix evict-first, x evict-last, so that x, read once per nonzero at random
   places, is the data that stays in L2) */
#define CSRK_MERGE_HINTS_NONE     0
#define CSRK_MERGE_HINTS_STREAMED 1
#define CSRK_MERGE_HINTS_L2       2

template <int HINTS>
__device__ __forceinline__ PetscScalar CSRKMergeLoad(const PetscScalar *__restrict__ p, unsigned long long policy)
{
#if !defined(PETSC_USE_COMPLEX) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (HINTS == CSRK_MERGE_HINTS_L2) {
    if constexpr (sizeof(PetscScalar) == sizeof(double)) {
      double v;
      asm("ld.global.nc.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(v) : "l"(p), "l"(policy));
      return (PetscScalar)v;
    } else {
      float v;
      asm("ld.global.nc.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(policy));
      return (PetscScalar)v;
    }
  }
#endif
  return *p;
}

template <int HINTS>
__device__ __forceinline__ CSRKIdx CSRKMergeLoadIdx(const CSRKIdx *__restrict__ p, unsigned long long policy)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (HINTS == CSRK_MERGE_HINTS_L2) {
    int v;
    asm("ld.global.nc.L2::cache_hint.s32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(policy));
    return (CSRKIdx)v;
  }
#endif
  if constexpr (HINTS == CSRK_MERGE_HINTS_STREAMED) return __ldcs(p);
  return __ldg(p);
}

template <int HINTS>
__device__ __forceinline__ PetscScalar CSRKMergeLoadVal(const PetscScalar *__restrict__ p, unsigned long long policy)
{
  if constexpr (HINTS == CSRK_MERGE_HINTS_STREAMED) return CSRKLoadStreamed(p);
  return CSRKMergeLoad<HINTS>(p, policy);
}

/* y = z + sum in the user's ordering, y and z streamed (written and read once) */
template <int HINTS>
__device__ __forceinline__ void CSRKMergeStore(CSRKIdx r, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y, PetscScalar sum, unsigned long long policy)
{
  if (z) sum = CSRKMergeLoadVal<HINTS>(z + r, policy) + sum;
#if !defined(PETSC_USE_COMPLEX) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (HINTS == CSRK_MERGE_HINTS_L2) {
    if constexpr (sizeof(PetscScalar) == sizeof(double)) asm volatile("st.global.L2::cache_hint.f64 [%0], %1, %2;" ::"l"(y + r), "d"((double)sum), "l"(policy) : "memory");
    else asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(y + r), "f"((float)sum), "l"(policy) : "memory");
    return;
  }
#endif
#if !defined(PETSC_USE_COMPLEX)
  if constexpr (HINTS == CSRK_MERGE_HINTS_STREAMED) {
    __stcs(y + r, sum);
    return;
  }
#endif
  y[r] = sum;
}

template <int HINTS>
__device__ __forceinline__ void CSRKMergePolicies(unsigned long long *stream, unsigned long long *keep)
{
  *stream = *keep = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (HINTS == CSRK_MERGE_HINTS_L2) {
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(*stream));
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(*keep));
  }
#endif
}

/* the split of the merge path at diagonal d: the row ends taken before it (x), hence the nonzeros (d - x); rowend[i]
   is the end of row i, nonzero j is at y0 + j */
__device__ __forceinline__ CSRKIdx CSRKMergeSearch(CSRKIdx d, const CSRKIdx *rowend, CSRKIdx nrows, CSRKIdx nnz, CSRKIdx y0)
{
  CSRKIdx lo = d > nnz ? d - nnz : 0, hi = d < nrows ? d : nrows;
  while (lo < hi) {
    const CSRKIdx mid = (lo + hi) >> 1;
    if (rowend[mid] <= y0 + d - mid - 1) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* start coordinates (row, nonzero) of tiles 0..ntiles, tile t starting at step t * tilesize of the whole path */
__global__ void CSRKMergeTilesKernel(CSRKIdx ntiles, CSRKIdx tilesize, CSRKIdx m, CSRKIdx nnz, const CSRKIdx *__restrict__ rowptr, CSRKIdx *__restrict__ tile)
{
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t <= ntiles; t += (long long)blockDim.x * gridDim.x) {
    const CSRKIdx d = (CSRKIdx)(t * tilesize < (long long)m + nnz ? t * tilesize : (long long)m + nnz);
    const CSRKIdx x = CSRKMergeSearch(d, rowptr + 1, m, nnz, 0);
    tile[2 * t]     = x;
    tile[2 * t + 1] = d - x;
  }
}

template <int THREADS, int ITEMS, int HINTS>
__global__ void __launch_bounds__(THREADS) CSRKMergeKernel(CSRKIdx m, const CSRKIdx *__restrict__ tile, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y, CSRKIdx *__restrict__ carryrow, PetscScalar *__restrict__ carryval)
{
  constexpr int      TILE = THREADS * ITEMS, WARPS = THREADS / 32;
  __shared__ PetscScalar prod[TILE + 1]; /* the tile's products, then its row ends (nnz * 8 + (nrows + 1) * 4 bytes) */
  __shared__ PetscScalar incl[THREADS], wval[WARPS];
  __shared__ CSRKIdx     wkey[WARPS];
  const CSRKIdx          x0 = tile[2 * blockIdx.x], y0 = tile[2 * blockIdx.x + 1];
  const CSRKIdx          nrows = tile[2 * blockIdx.x + 2] - x0, nnz = tile[2 * blockIdx.x + 3] - y0;
  CSRKIdx               *rowend = (CSRKIdx *)(prod + nnz);
  const unsigned         lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  unsigned long long     streamed, kept;

  CSRKMergePolicies<HINTS>(&streamed, &kept);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  /* the fix-up kernel, launched with programmatic dependent launch, may be scheduled from now on: it waits for this
     grid's completion itself, and its launch overlaps the tiles instead of following them */
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  {
    /* all loads of the matrix (values, columns, row ends) first, then the gathers of x: two round trips a tile */
    PetscScalar v[ITEMS];
    CSRKIdx     c[ITEMS], e[ITEMS + 1];
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
      const CSRKIdx i = threadIdx.x + k * THREADS;
      if (i < nnz) {
        v[k] = CSRKMergeLoadVal<HINTS>(val + y0 + i, streamed);
        c[k] = CSRKMergeLoadIdx<HINTS>(colidx + y0 + i, streamed);
      }
    }
#pragma unroll
    for (int k = 0; k <= ITEMS; k++) {
      const CSRKIdx i = threadIdx.x + k * THREADS;
      if (i <= nrows) e[k] = x0 + i < m ? CSRKMergeLoadIdx<HINTS>(rowptr + x0 + i + 1, streamed) : CSRK_IDX_MAX;
    }
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
      const CSRKIdx i = threadIdx.x + k * THREADS;
      if (i < nnz) prod[i] = v[k] * (HINTS == CSRK_MERGE_HINTS_L2 ? CSRKMergeLoad<HINTS>(x + c[k], kept) : x[c[k]]);
    }
#pragma unroll
    for (int k = 0; k <= ITEMS; k++) {
      const CSRKIdx i = threadIdx.x + k * THREADS;
      if (i <= nrows) rowend[i] = e[k];
    }
  }
  __syncthreads();

  /* this thread's ITEMS steps of the tile's path */
  const CSRKIdx total = nrows + nnz, d0 = (CSRKIdx)threadIdx.x * ITEMS < total ? (CSRKIdx)threadIdx.x * ITEMS : total;
  const CSRKIdx xs = CSRKMergeSearch(d0, rowend, nrows, nnz, y0);
  CSRKIdx       xi = xs, yi = d0 - xs;
  PetscScalar   run = 0.0, first = 0.0;
  bool          ended = false;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    if (d0 + k < total) {
      if (y0 + yi < rowend[xi]) run += prod[yi++];
      else {
        if (ended) CSRKMergeStore<HINTS>(x0 + xi, z, y, run, streamed); /* a row begun and ended by this thread */
        else first = run;                                                     /* the first row it ends: the carries before it still to add */
        ended = true;
        run   = 0.0;
        xi++;
      }
    }
  }

  /* segmented inclusive scan of the carries (key: the row each thread ends in; keys never decrease) */
  CSRKIdx     key = xi;
  PetscScalar sum = run;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const CSRKIdx     k2 = __shfl_up_sync(0xffffffffu, key, off);
    const PetscScalar s2 = CSRKShfl<true>(0xffffffffu, sum, off);
    if (lane >= (unsigned)off && k2 == key) sum = s2 + sum;
  }
  if (lane == 31) {
    wkey[warp] = key;
    wval[warp] = sum;
  }
  __syncthreads();
  {
    PetscScalar pre = 0.0;
    for (int w = (int)warp - 1; w >= 0 && wkey[w] == key; w--) pre = wval[w] + pre;
    sum = pre + sum;
  }
  incl[threadIdx.x] = sum;
  if (threadIdx.x == THREADS - 1) {
    carryrow[blockIdx.x] = x0 + key < m ? x0 + key : m;
    carryval[blockIdx.x] = sum;
  }
  __syncthreads();
  if (ended) CSRKMergeStore<HINTS>(x0 + xs, z, y, (threadIdx.x ? incl[threadIdx.x - 1] : (PetscScalar)0.0) + first, streamed);
}

/* a load from L2, past L1: the fix-up kernel may start before the tiles end (programmatic dependent launch), so what
   it reads must not come from lines its SM cached earlier */
__device__ __forceinline__ PetscScalar CSRKLoadL2(const PetscScalar *p)
{
  PetscReal r[sizeof(PetscScalar) / sizeof(PetscReal)];
  for (unsigned i = 0; i < sizeof(PetscScalar) / sizeof(PetscReal); i++) r[i] = __ldcg((const PetscReal *)p + i);
  PetscScalar v;
  memcpy(&v, r, sizeof(PetscScalar));
  return v;
}

/* y[row] += the carries of the row's tiles, in tile order. A thread per tile finds the runs of tiles that end inside
   the same row; a run of one tile (the common case: a row across one tile boundary) is added by its thread, a longer
   run (a long row) by the whole warp: strided partial sums, then a shuffle reduction. */
__global__ void CSRKMergeFixupKernel(CSRKIdx ntiles, CSRKIdx m, const CSRKIdx *carryrow, const PetscScalar *carryval, PetscScalar *y)
{
  const long long t    = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const unsigned  lane = threadIdx.x & 31u;
  CSRKIdx         r;
  bool            start, single;
  unsigned        runs;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize(); /* the tiles' carries and rows (a no-op when launched without the dependency) */
#endif
  r      = t < ntiles ? __ldcg(carryrow + t) : m;
  start  = r < m && (t == 0 || __ldcg(carryrow + t - 1) != r);
  single = start && (t + 1 == ntiles || __ldcg(carryrow + t + 1) != r);
  if (single) {
    y[r] = CSRKLoadL2(y + r) + CSRKLoadL2(carryval + t);
  }
  runs = __ballot_sync(0xffffffffu, start && !single);
  while (runs) {
    const int       src = __ffs(runs) - 1;
    const CSRKIdx   rr  = __shfl_sync(0xffffffffu, r, src);
    const long long t0  = __shfl_sync(0xffffffffu, t, src);
    PetscScalar     sum = 0.0;
    runs &= runs - 1;
    for (long long base = t0;; base += 32) {
      const long long i    = base + lane;
      const bool      same = i < ntiles && __ldcg(carryrow + i) == rr;
      if (same) sum += CSRKLoadL2(carryval + i);
      if (__ballot_sync(0xffffffffu, same) != 0xffffffffu) break;
    }
    for (int d = 16; d > 0; d >>= 1) sum += CSRKShfl<false>(0xffffffffu, sum, d, 32);
    if (!lane) y[rr] = CSRKLoadL2(y + rr) + sum;
  }
}

/* The fix-up launch. On sm_90 and later with programmatic dependent launch: the launch may begin while the tiles run
   (they allow it from their start), and the kernel waits for them in cudaGridDependencySynchronize() */
static inline cudaError_t CSRKMergeLaunchFixup(CSRKIdx ntiles, CSRKIdx m, const CSRKIdx *carryrow, const PetscScalar *carryval, PetscScalar *y, cudaStream_t stream, bool pdl)
{
  const unsigned blocks = (unsigned)((ntiles + 255) / 256);
#if CUDART_VERSION >= 11080
  if (pdl) {
    cudaLaunchConfig_t  cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id                                         = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim                                        = dim3(blocks);
    cfg.blockDim                                       = dim3(256);
    cfg.stream                                         = stream;
    cfg.attrs                                          = attr;
    cfg.numAttrs                                       = 1;
    return cudaLaunchKernelEx(&cfg, CSRKMergeFixupKernel, ntiles, m, carryrow, carryval, y);
  }
#endif
  CSRKMergeFixupKernel<<<blocks, 256, 0, stream>>>(ntiles, m, carryrow, carryval, y);
  return cudaGetLastError();
}

#endif
