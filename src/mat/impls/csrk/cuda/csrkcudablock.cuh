/*
   The kernels of the block kernel of MATCSRKCUDA (set-up and launches in csrkcudablock.cu, whose top comment describes
   the layout): the node search, the node columns, the product and the diagonal. They need only PetscScalar,
   PetscInt64 and CSRKIdx (tests/blockemu.cpp also builds them on the host, lanes as threads, where there is no GPU).
*/
#ifndef CSRKCUDABLOCK_CUH
#define CSRKCUDABLOCK_CUH

#include "csrkcudadevice.cuh"

/* rows of a node at most (bs 2-6 of multi-field and elasticity matrices) */
#define CSRK_BLOCK_NODE_MAX 6
#define CSRK_BLOCK_THREADS 128

/* what the node search reads back: rows in nodes of two or more, the widest column range of a node */
typedef struct {
  unsigned long long span;
  int                noderows;
} CSRKBlockStats;

/* head[r] = 1 where row r starts a run of rows with one column list (entry m: 0, for the scan) */
__global__ void CSRKBlockHeadKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, CSRKIdx *__restrict__ head)
{
  CSRK_GRIDSTRIDE(r, m + 1)
  {
    CSRKIdx h = 1;
    if (r == m) h = 0;
    else if (r > 0) {
      const CSRKIdx q0 = rowptr[r], len = rowptr[r + 1] - q0, p0 = rowptr[r - 1];
      if (q0 - p0 == len) {
        h = 0;
        for (CSRKIdx j = 0; j < len; j++)
          if (colidx[q0 + j] != colidx[p0 + j]) {
            h = 1;
            break;
          }
      }
    }
    head[r] = h;
  }
}

/* first row of each run (runid: exclusive sum of the heads), and the end of the last */
__global__ void CSRKBlockRunStartKernel(PetscInt64 m, const CSRKIdx *__restrict__ head, const CSRKIdx *__restrict__ runid, CSRKIdx *__restrict__ runstart)
{
  CSRK_GRIDSTRIDE(r, m + 1)
  {
    if (r == m) runstart[runid[m]] = (CSRKIdx)m;
    else if (head[r]) runstart[runid[r]] = (CSRKIdx)r;
  }
}

/* nhead[r] = 1 where row r starts a node: a run of L rows is cut into k = ceil(L / CSRK_BLOCK_NODE_MAX) nodes, the
   first L % k of them one row longer than the others */
__global__ void CSRKBlockNodeHeadKernel(PetscInt64 m, const CSRKIdx *__restrict__ head, const CSRKIdx *__restrict__ runid, const CSRKIdx *__restrict__ runstart, CSRKIdx *__restrict__ nhead)
{
  CSRK_GRIDSTRIDE(r, m + 1)
  {
    if (r == m) nhead[r] = 0;
    else {
      const CSRKIdx run = runid[r] + head[r] - 1, s0 = runstart[run], len = runstart[run + 1] - s0, pos = (CSRKIdx)r - s0;
      const CSRKIdx k = (len + CSRK_BLOCK_NODE_MAX - 1) / CSRK_BLOCK_NODE_MAX, b = len / k, big = (len % k) * (b + 1);
      nhead[r] = pos < big ? (pos % (b + 1) == 0) : ((pos - big) % b == 0);
    }
  }
}

/* the node arrays (nodecolptr: column counts, scanned afterwards) and the statistics */
__global__ void CSRKBlockNodesKernel(PetscInt64 m, PetscInt64 nnz, PetscInt64 nn, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const CSRKIdx *__restrict__ nhead, const CSRKIdx *__restrict__ nid, CSRKIdx *__restrict__ nodeptr, CSRKIdx *__restrict__ nodecolptr, CSRKIdx *__restrict__ nodevalptr, CSRKIdx *__restrict__ nodebase, CSRKBlockStats *st)
{
  CSRK_GRIDSTRIDE(r, m)
  {
    if (r == 0) {
      nodeptr[nn]    = (CSRKIdx)m;
      nodecolptr[nn] = 0;
      nodevalptr[nn] = (CSRKIdx)nnz;
      nodebase[nn]   = 0;
    }
    if (nhead[r]) {
      const CSRKIdx q = nid[r], q0 = rowptr[r], len = rowptr[r + 1] - q0;
      CSRKIdx       h = 1, lo = len ? colidx[q0] : 0, hi = lo;
      while (r + h < m && !nhead[r + h]) h++;
      for (CSRKIdx j = 1; j < len; j++) {
        lo = min(lo, colidx[q0 + j]);
        hi = max(hi, colidx[q0 + j]);
      }
      nodeptr[q]    = (CSRKIdx)r;
      nodecolptr[q] = len;
      nodevalptr[q] = q0;
      nodebase[q]   = lo;
      if (h > 1) atomicAdd(&st->noderows, (int)h);
      atomicMax(&st->span, (unsigned long long)(hi - lo));
    }
  }
}

/* the columns of each node (those of its first row), as offsets from its base or as 32-bit columns */
template <typename IDX>
__global__ void CSRKBlockColumnsKernel(PetscInt64 nn, const CSRKIdx *__restrict__ nodecolptr, const CSRKIdx *__restrict__ nodevalptr, const CSRKIdx *__restrict__ nodebase, const CSRKIdx *__restrict__ colidx, IDX *__restrict__ cols)
{
  CSRK_GRIDSTRIDE(n, nn)
  {
    const CSRKIdx c0 = nodecolptr[n], len = nodecolptr[n + 1] - c0, v0 = nodevalptr[n], base = nodebase ? nodebase[n] : 0;
    for (CSRKIdx j = 0; j < len; j++) cols[c0 + j] = (IDX)(colidx[v0 + j] - base);
  }
}

/* The product: a sub-warp of W lanes per node (see the top of the file); sums in registers for up to
   CSRK_BLOCK_NODE_MAX rows, of which the node's h are used (h is the same for the W lanes, so the shuffles of the
   partial mask stay within the sub-warp on Volta and later) */
template <int W, typename IDX>
__global__ void __launch_bounds__(CSRK_BLOCK_THREADS) CSRKBlockKernel(PetscInt64 nn, const CSRKIdx *__restrict__ nodeptr, const CSRKIdx *__restrict__ nodecolptr, const CSRKIdx *__restrict__ nodevalptr, const CSRKIdx *__restrict__ nodebase, const IDX *__restrict__ cols, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  const unsigned   lane   = threadIdx.x & (unsigned)(W - 1);
  const unsigned   mask   = W == 32 ? 0xffffffffu : ((1u << W) - 1u) << ((threadIdx.x & 31u) & ~(unsigned)(W - 1));
  const PetscInt64 stride = (PetscInt64)gridDim.x * (blockDim.x / W);

  for (PetscInt64 n = ((PetscInt64)blockIdx.x * blockDim.x + threadIdx.x) / W; n < nn; n += stride) {
    const CSRKIdx      r0 = nodeptr[n], h = nodeptr[n + 1] - r0, c0 = nodecolptr[n], len = nodecolptr[n + 1] - c0;
    const PetscScalar *v  = val + nodevalptr[n];
    const PetscScalar *xb = nodebase ? x + nodebase[n] : x;
    PetscScalar        sum[CSRK_BLOCK_NODE_MAX];
#pragma unroll
    for (int i = 0; i < CSRK_BLOCK_NODE_MAX; i++) sum[i] = 0.0;
#pragma unroll 2
    for (CSRKIdx j = (CSRKIdx)lane; j < len; j += W) {
      const PetscScalar xj = xb[__ldcs(cols + c0 + j)];
#pragma unroll
      for (int i = 0; i < CSRK_BLOCK_NODE_MAX; i++)
        if (i < h) sum[i] += CSRKLoadStreamed(v + i * len + j) * xj;
    }
#pragma unroll
    for (int i = 0; i < CSRK_BLOCK_NODE_MAX; i++)
      if (i < h) {
#pragma unroll
        for (int d = W / 2; d > 0; d >>= 1) sum[i] += CSRKShfl<false>(mask, sum[i], d, W);
      }
    if (lane == 0) {
#pragma unroll
      for (int i = 0; i < CSRK_BLOCK_NODE_MAX; i++)
        if (i < h) CSRKStore(r0 + i, NULL, z, y, sum[i]);
    }
  }
}

/* y = diag(A), or diag(A) += a (SHIFT): a thread per node scans its columns for each of its rows' diagonal */
template <bool SHIFT, typename IDX>
__global__ void CSRKBlockDiagonalKernel(PetscInt64 nn, const CSRKIdx *__restrict__ nodeptr, const CSRKIdx *__restrict__ nodecolptr, const CSRKIdx *__restrict__ nodevalptr, const CSRKIdx *__restrict__ nodebase, const IDX *__restrict__ cols, PetscScalar *__restrict__ val, PetscScalar *__restrict__ y, PetscScalar a)
{
  CSRK_GRIDSTRIDE(n, nn)
  {
    const CSRKIdx r0 = nodeptr[n], h = nodeptr[n + 1] - r0, c0 = nodecolptr[n], len = nodecolptr[n + 1] - c0, v0 = nodevalptr[n], base = nodebase ? nodebase[n] : 0;
    for (CSRKIdx i = 0; i < h; i++) {
      PetscInt64 q = -1;
      for (CSRKIdx j = 0; j < len; j++)
        if (base + (CSRKIdx)cols[c0 + j] == r0 + i) {
          q = (PetscInt64)v0 + (PetscInt64)i * len + j;
          break;
        }
      if (SHIFT) {
        if (q >= 0) val[q] += a;
      } else y[r0 + i] = q >= 0 ? val[q] : 0.0;
    }
  }
}

#endif
