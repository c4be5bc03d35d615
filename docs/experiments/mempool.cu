/* The device memory of stream-ordered scratch (cudaMallocAsync from the device's default pool), and what giving it back
   costs where the pool keeps its memory, as PETSc sets it (release threshold UINT64_MAX):
     nvcc -O2 -arch=sm_90 -o mempool docs/experiments/mempool.cu && ./mempool */
#include <cstdio>
#include <cstdint>
#include <chrono>
#include <cuda_runtime.h>
#include <cub/cub.cuh>
__global__ void k(int *p) { if (p) p[0] = 1; }
static size_t used() { size_t f, t; cudaDeviceSynchronize(); cudaMemGetInfo(&f, &t); return t - f; }
int main()
{
  cudaFree(0);
  size_t u0 = used();
  printf("context: %zu MiB used on the GPU\n", u0 >> 20);
  k<<<1, 1>>>(nullptr); size_t u1 = used(); printf("first launch of a small kernel: %+ld MiB\n", (long)(u1 - u0) >> 20);
  int *p; cudaMalloc(&p, 1024); size_t u2 = used(); printf("cudaMalloc 1 KiB: %+ld MiB\n", (long)(u2 - u1) >> 20);
  cudaStream_t s; cudaStreamCreate(&s);
  int *q; cudaMallocAsync(&q, 1024, s); cudaStreamSynchronize(s); size_t u3 = used(); printf("cudaMallocAsync 1 KiB: %+ld MiB\n", (long)(u3 - u2) >> 20);
  cudaFreeAsync(q, s); cudaStreamSynchronize(s); size_t u4 = used(); printf("cudaFreeAsync + sync: %+ld MiB\n", (long)(u4 - u3) >> 20);
  cudaMemPool_t pool; cudaDeviceGetDefaultMemPool(&pool, 0); cudaMemPoolTrimTo(pool, 0); size_t u5 = used(); printf("cudaMemPoolTrimTo 0: %+ld MiB\n", (long)(u5 - u4) >> 20);
  // CUB radix sort of 64-bit keys, as the plugin's set-up uses
  int n = 1000; unsigned long long *kin, *kout; int *vin, *vout; cudaMalloc(&kin, 8 * n); cudaMalloc(&kout, 8 * n); cudaMalloc(&vin, 4 * n); cudaMalloc(&vout, 4 * n);
  size_t u6 = used(); void *tmp = nullptr; size_t tb = 0;
  cub::DeviceRadixSort::SortPairs(tmp, tb, kin, kout, vin, vout, n, 0, 64, s);
  cudaMallocAsync(&tmp, tb, s); cub::DeviceRadixSort::SortPairs(tmp, tb, kin, kout, vin, vout, n, 0, 64, s); cudaFreeAsync(tmp, s); cudaStreamSynchronize(s);
  size_t u7 = used(); printf("CUB radix sort (temp %zu B): %+ld MiB\n", tb, (long)(u7 - u6) >> 20);
  cudaMemPoolTrimTo(pool, 0); size_t u8 = used(); printf("trim again: %+ld MiB\n", (long)(u8 - u7) >> 20);
  /* what a set-up or a refresh pays to give its scratch back, under PETSc's threshold */
  uint64_t thr = UINT64_MAX; cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr); /* as PETSc sets it */
    for (size_t mb : {32, 128, 540, 2048}) {
    for (int trim = 0; trim < 2; trim++) {
      double best = 1e9;
      for (int r = 0; r < 5; r++) {
        void *p;
        auto t0 = std::chrono::steady_clock::now();
        cudaMallocAsync(&p, mb << 20, s);
        cudaMemsetAsync(p, 0, 8, s);
        cudaFreeAsync(p, s);
        cudaStreamSynchronize(s);
        if (trim) cudaMemPoolTrimTo(pool, 0);
        double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (r) best = dt < best ? dt : best;
      }
      printf("%5zu MiB scratch, %s: %.3f ms (best of 4 after the first); used now %zu MiB\n", mb, trim ? "trimmed after each" : "kept by the pool  ", best * 1e3, used() >> 20);
    }
    cudaMemPoolTrimTo(pool, 0);
  }
  return 0;
}
