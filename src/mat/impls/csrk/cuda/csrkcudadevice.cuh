/* Device helpers shared by the CUDA kernel sources: they need only PetscScalar and CSRKIdx (and PETSC_USE_COMPLEX) */
#ifndef CSRKCUDADEVICE_CUH
#define CSRKCUDADEVICE_CUH

#include <string.h>

/* a grid-stride loop of i over [0, n) */
#define CSRK_GRIDSTRIDE(i, n) for (PetscInt64 i = blockIdx.x * (PetscInt64)blockDim.x + threadIdx.x; i < (PetscInt64)(n); i += (PetscInt64)blockDim.x * gridDim.x)

/* shuffles of a PetscScalar down (UP false) or up within groups of w lanes, also when it is complex (shuffled as its
   real words) */
template <bool UP>
__device__ __forceinline__ PetscScalar CSRKShfl(unsigned mask, PetscScalar v, int d, int w = 32)
{
  if constexpr (sizeof(PetscScalar) == sizeof(double) || sizeof(PetscScalar) == sizeof(float)) {
    return UP ? __shfl_up_sync(mask, v, d, w) : __shfl_down_sync(mask, v, d, w);
  } else {
    PetscReal r[sizeof(PetscScalar) / sizeof(PetscReal)];
    memcpy(r, &v, sizeof(PetscScalar));
    for (unsigned i = 0; i < sizeof(PetscScalar) / sizeof(PetscReal); i++) r[i] = UP ? __shfl_up_sync(mask, r[i], d, w) : __shfl_down_sync(mask, r[i], d, w);
    memcpy(&v, r, sizeof(PetscScalar));
    return v;
  }
}

/* y = z + sum (or y = sum) for internal row r, in the user's ordering. GENERAL false: y[r] = sum, for launches with
   neither perm nor z. In the sliced kernel over plain columns the two tests, though uniform, cost the loop before them
   its schedule (fewer loads in flight), so it compiles both stores and its launch picks one; the other kernels
   measured the same either way and keep the general store */
template <bool GENERAL = true>
__device__ __forceinline__ void CSRKStore(PetscInt r, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y, PetscScalar sum)
{
  if (!GENERAL) {
    y[r] = sum;
  } else {
    const CSRKIdx dst = perm ? perm[r] : (CSRKIdx)r;
    y[dst]            = z ? z[dst] + sum : sum;
  }
}

/* read once a product (the matrix entries): loaded evict-first (ld.global.cs), so that the caches keep x, which the
   products gather */
__device__ __forceinline__ PetscScalar CSRKLoadStreamed(const PetscScalar *p)
{
#if defined(PETSC_USE_COMPLEX)
  return *p;
#else
  return __ldcs(p);
#endif
}

/* val[q] x[col[q]]: entry q of a matrix stored as values and column indices, both streamed */
__device__ __forceinline__ PetscScalar CSRKStreamedProduct(const PetscScalar *__restrict__ val, const CSRKIdx *__restrict__ col, const PetscScalar *__restrict__ x, CSRKIdx q)
{
  return CSRKLoadStreamed(val + q) * x[__ldcs(col + q)];
}

/* Lane t's share of the entries [q0, q1) of one row (or chunk) taken by W lanes: entries t, t + W, t + 2W, ... in
   order (a fixed order: bitwise the same run to run) */
template <int W>
__device__ __forceinline__ PetscScalar CSRKRowLanePart(const PetscScalar *__restrict__ val, const CSRKIdx *__restrict__ col, const PetscScalar *__restrict__ x, CSRKIdx q0, CSRKIdx q1, unsigned t)
{
  PetscScalar s = 0.0;
  for (CSRKIdx q = q0 + (CSRKIdx)t; q < q1; q += W) s += CSRKStreamedProduct(val, col, x, q);
  return s;
}

/* A uniform launch grouping of m rows: super-row s is rows [s sr, (s + 1) sr), unit u (a thread block) super-rows
   [u ssr, (u + 1) ssr), the last of each cut at the end; computed in the kernels, so that no index is loaded before a
   block's first row */
typedef struct {
  CSRKIdx m, sr, ssr;
} CSRKGroups;

__device__ __forceinline__ void CSRKUnitSuperRows(const CSRKGroups g, CSRKIdx u, CSRKIdx *s0, CSRKIdx *s1)
{
  const CSRKIdx nsr = (g.m + g.sr - 1) / g.sr;
  *s0               = u * g.ssr;
  *s1               = min(*s0 + g.ssr, nsr);
}

__device__ __forceinline__ void CSRKSuperRowRows(const CSRKGroups g, CSRKIdx s, CSRKIdx *r0, CSRKIdx *r1)
{
  *r0 = s * g.sr;
  *r1 = min(*r0 + g.sr, g.m);
}

#endif
