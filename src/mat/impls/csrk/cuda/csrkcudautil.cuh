/* Set-up helpers shared by the CUDA sources: device allocations counted in the layout's bytes, stream-ordered scratch,
   read-backs and CUB scans */
#ifndef CSRKCUDAUTIL_CUH
#define CSRKCUDAUTIL_CUH

#include <petscdevice_cuda.h>
#include <cub/cub.cuh>
#include "csrkcudadevice.cuh"

typedef unsigned long long CSRKULL;

template <typename T>
static PetscErrorCode CSRKMalloc(T **p, PetscInt64 n, size_t *bytes)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaMalloc((void **)p, sizeof(T) * (size_t)PetscMax(n, 1)));
  if (bytes) *bytes += sizeof(T) * (size_t)PetscMax(n, 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* set-up scratch, stream-ordered, from the set-up's own pool (CSRKScratchPool) */
static inline PetscErrorCode CSRKScratchBytes(void **p, size_t bytes, cudaStream_t stream)
{
  cudaMemPool_t pool;

  PetscFunctionBegin;
  PetscCall(CSRKScratchPool(&pool));
  PetscCallCUDA(cudaMallocFromPoolAsync(p, PetscMax(bytes, 1), pool, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <typename T>
static PetscErrorCode CSRKScratch(T **p, PetscInt64 n, cudaStream_t stream)
{
  PetscFunctionBegin;
  PetscCall(CSRKScratchBytes((void **)p, sizeof(T) * (size_t)PetscMax(n, 1), stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define CSRKScratchFree(p, stream) \
  do { \
    if (p) PetscCallCUDA(cudaFreeAsync((p), (stream))); \
    (p) = NULL; \
  } while (0)

/* multiprocessors of the current device, and whether m rows fill it (CSRK_GPU_MIN_ROWS_PER_SM a multiprocessor) */
static inline PetscErrorCode CSRKDeviceSMs(int *sms)
{
  int dev;

  PetscFunctionBegin;
  PetscCallCUDA(cudaGetDevice(&dev));
  PetscCallCUDA(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscBool CSRKFillsDevice(PetscInt64 m, int sms)
{
  return (PetscBool)(m >= (PetscInt64)CSRK_GPU_MIN_ROWS_PER_SM * sms);
}

/* n values read back (the stream is synchronised) */
template <typename T>
static PetscErrorCode CSRKReadBack(T *h, const T *d, PetscInt n, cudaStream_t stream)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaMemcpyAsync(h, d, sizeof(T) * n, cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* exclusive prefix sum of n entries with CUB (in == out allowed) */
template <typename T>
static PetscErrorCode CSRKExclusiveSum(const T *in, T *out, PetscInt n, cudaStream_t stream)
{
  void  *tmp = NULL;
  size_t tb  = 0;

  PetscFunctionBegin;
  PetscCallCUDA(cub::DeviceScan::ExclusiveSum(tmp, tb, in, out, (int)n, stream));
  PetscCall(CSRKScratchBytes(&tmp, tb, stream));
  PetscCallCUDA(cub::DeviceScan::ExclusiveSum(tmp, tb, in, out, (int)n, stream));
  PetscCallCUDA(cudaFreeAsync(tmp, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the n pairs (key, val) sorted by the low bits of their keys into (skey, sval), stably (CUB's radix sort) */
template <typename K, typename V>
static PetscErrorCode CSRKSortPairs(const K *key, K *skey, const V *val, V *sval, PetscInt64 n, int bits, cudaStream_t stream)
{
  void  *tmp = NULL;
  size_t tb  = 0;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCUDA(cub::DeviceRadixSort::SortPairs(tmp, tb, key, skey, val, sval, (int)n, 0, bits, stream));
  PetscCall(CSRKScratchBytes(&tmp, tb, stream));
  PetscCallCUDA(cub::DeviceRadixSort::SortPairs(tmp, tb, key, skey, val, sval, (int)n, 0, bits, stream));
  PetscCallCUDA(cudaFreeAsync(tmp, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif
