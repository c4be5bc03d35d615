/*
   The kernels of a level of the device's RCM order that walk the rows of the level (the loop, the scan and the restart
   in csrkcudareorder.cu, whose top comment describes the order): a sub-warp of CSRK_RCM_LANES lanes a position of the
   level, its lanes over the row, so that a level's rows are walked side by side rather than each by one thread; and the
   count of the sectors of x that the rule for the order reads. They need only CSRKIdx (tests/rcmemu.cpp also builds
   them on the host, lanes as threads, where there is no GPU).
*/
#ifndef CSRKCUDAREORDER_CUH
#define CSRKCUDAREORDER_CUH

/* lanes a position of the level (rows of meshes: 7-81 entries); positions whose children are counted together in
   one entry of csum, and placed in order within it */
#define CSRK_RCM_LANES 8
#define CSRK_RCM_CHUNK 32

typedef struct {
  int needseed, seed;
} CSRKRcmState;

/* the lanes of the calling thread's sub-warp of W lanes, as a mask of the warp (sub-warps of one warp may take
   different numbers of positions) */
template <int W>
__device__ __forceinline__ unsigned CSRKRcmLanes(void)
{
  return W == 32 ? 0xffffffffu : ((1u << W) - 1u) << (threadIdx.x % 32 / W * W);
}

/* the sum of v over the W lanes of a sub-warp, in its first lane */
template <int W>
__device__ __forceinline__ int CSRKRcmLaneSum(int v)
{
  for (int d = W / 2; d > 0; d /= 2) v += __shfl_down_sync(CSRKRcmLanes<W>(), v, d, W);
  return v;
}

/* each unreached neighbour of the level's vertices claimed by the first position among them; csum, which the count
   accumulates into, cleared (the place of the level before has read it) */
template <int W>
__global__ void CSRKRcmClaimKernel(int l, const int *__restrict__ lev, const CSRKIdx *__restrict__ order, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, int *claim, int *__restrict__ csum)
{
  const int lo = lev[l], hi = lev[l + 1], nc = (hi - lo + CSRK_RCM_CHUNK - 1) / CSRK_RCM_CHUNK;
  const int lane = (int)(threadIdx.x % W), sub = (int)((blockIdx.x * blockDim.x + threadIdx.x) / W), nsub = (int)(gridDim.x * blockDim.x / W);

  for (int c = (int)(blockIdx.x * blockDim.x + threadIdx.x); c < nc; c += (int)(gridDim.x * blockDim.x)) csum[c] = 0;
  for (int p = lo + sub; p < hi; p += nsub) {
    const CSRKIdx v = order[p], end = rowptr[v + 1];
    for (CSRKIdx q = rowptr[v] + lane; q < end; q += W) {
      const CSRKIdx u = colidx[q];
      if (claim[u] > p) atomicMin(&claim[u], p);
    }
  }
}

/* the children of each position of the level (cnt) and of each chunk of CSRK_RCM_CHUNK positions (csum, integer
   sums: the same whatever the order of the additions) */
template <int W>
__global__ void CSRKRcmCountKernel(int l, const int *__restrict__ lev, const CSRKIdx *__restrict__ order, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const int *__restrict__ claim, int *__restrict__ cnt, int *csum)
{
  const int lo = lev[l], hi = lev[l + 1];
  const int lane = (int)(threadIdx.x % W), sub = (int)((blockIdx.x * blockDim.x + threadIdx.x) / W), nsub = (int)(gridDim.x * blockDim.x / W);

  for (int p = lo + sub; p < hi; p += nsub) {
    const CSRKIdx v = order[p], end = rowptr[v + 1];
    int           n = 0;
    for (CSRKIdx q = rowptr[v] + lane; q < end; q += W) n += claim[colidx[q]] == p;
    n = CSRKRcmLaneSum<W>(n);
    if (!lane) {
      cnt[p - lo] = n;
      if (n) atomicAdd(&csum[(p - lo) / CSRK_RCM_CHUNK], n);
    }
  }
}

/* the children of each position written after the level (csum: the chunks' exclusive sums), in the order of their
   parents' positions and, for one parent, of its row; or the restart's seed */
template <int W>
__global__ void CSRKRcmPlaceKernel(int l, int *__restrict__ lev, CSRKIdx *__restrict__ order, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, int *__restrict__ claim, const int *__restrict__ cnt, const int *__restrict__ csum, CSRKRcmState *st)
{
  const int      lo = lev[l], hi = lev[l + 1];
  const int      lane = (int)(threadIdx.x % W), sub = (int)((blockIdx.x * blockDim.x + threadIdx.x) / W), nsub = (int)(gridDim.x * blockDim.x / W);
  const unsigned lanes = CSRKRcmLanes<W>(), shift = (unsigned)(threadIdx.x % 32 / W * W), below = (1u << lane) - 1u;

  if (!blockIdx.x && !threadIdx.x && st->needseed) {
    const int s  = st->seed;
    order[hi]    = s;
    claim[s]     = -1;
    lev[l + 2]   = hi + 1;
    st->needseed = 0;
  }
  for (int p = lo + sub; p < hi; p += nsub) {
    const int c0 = lo + (p - lo) / CSRK_RCM_CHUNK * CSRK_RCM_CHUNK;
    int       before = 0, k;
    for (int i = c0 + lane; i < p; i += W) before += cnt[i - lo]; /* the chunk's positions before p */
    before = CSRKRcmLaneSum<W>(before);
    k      = hi + csum[(p - lo) / CSRK_RCM_CHUNK] + __shfl_sync(lanes, before, 0, W);
    if (!cnt[p - lo]) continue;
    const CSRKIdx v = order[p], beg = rowptr[v], end = rowptr[v + 1];
    for (CSRKIdx q0 = beg; q0 < end; q0 += W) {
      const CSRKIdx  q    = q0 + lane;
      const bool     take = q < end && claim[colidx[q]] == p;
      const unsigned mask = (__ballot_sync(lanes, take) & lanes) >> shift;
      if (take) order[k + __popc(mask & below)] = colidx[q];
      k += __popc(mask);
    }
  }
}

/* The auto ordering's measure (CSRKReorderWhen): the distinct 32-byte sectors of x that each step of each 32-row slice
   gathers (lane i: the j-th column of row i), summed: about one a nonzero where the numbering scatters the gathers (a
   random one), half or fewer in a mesh's, DMPlex's included, however far from the diagonal its columns lie. A warp a
   slice at a time; blocks of whole warps. */
__global__ void CSRKSectorCountKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, unsigned long long *sectors)
{
  const unsigned     lane = threadIdx.x & 31u;
  unsigned long long n    = 0;
  for (PetscInt64 base = (blockIdx.x * (PetscInt64)blockDim.x + threadIdx.x) & ~(PetscInt64)31; base < m; base += (PetscInt64)blockDim.x * gridDim.x) {
    const PetscInt64 r   = base + lane;
    const CSRKIdx    q0  = r < m ? rowptr[r] : 0;
    const CSRKIdx    len = r < m ? rowptr[r + 1] - q0 : 0;
    CSRKIdx          top = len;
    for (int o = 16; o; o >>= 1) top = max(top, (CSRKIdx)__shfl_xor_sync(0xffffffffu, top, o));
    for (CSRKIdx j = 0; j < top; j++) {
      const bool               on   = j < len;
      const unsigned long long key  = on ? (unsigned long long)colidx[q0 + j] >> 2 : ~0ULL; /* 4 scalars a sector */
      const unsigned           same = __match_any_sync(0xffffffffu, key);
      n += on && lane == (unsigned)(__ffs(same) - 1); /* the first lane of each sector counts it */
    }
  }
  for (int o = 16; o; o >>= 1) n += __shfl_down_sync(0xffffffffu, n, o);
  if (!lane && n) atomicAdd(sectors, n);
}

#endif
