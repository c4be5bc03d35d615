/*
   The device's copy bandwidth, for the bound of docs/performance.md: y[i] = x[i] over two arrays of doubles much larger
   than the L2 cache, bytes read plus bytes written over the best of several launches (as STREAM's copy counts them).

     nvcc -O3 -arch=sm_90 copybw.cu -o copybw && ./copybw [GiB per array, default 2]
*/
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void copy(size_t n, const double *__restrict__ x, double *__restrict__ y)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) y[i] = x[i];
}

int main(int argc, char **argv)
{
  const double gib = argc > 1 ? atof(argv[1]) : 2.0;
  const size_t n   = (size_t)(gib * (1 << 30) / sizeof(double));
  double      *x, *y, best = 1e30;
  cudaEvent_t  e0, e1;
  int          sms;

  if (cudaMalloc(&x, n * sizeof(double)) != cudaSuccess || cudaMalloc(&y, n * sizeof(double)) != cudaSuccess) return 1;
  cudaMemset(x, 0, n * sizeof(double));
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int r = 0; r < 20; r++) {
    float ms;
    cudaEventRecord(e0);
    copy<<<sms * 8, 512>>>(n, x, y);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    if (r > 1 && ms < best) best = ms;
  }
  printf("copy bandwidth: %.1f GB/s (2 x %.2f GiB arrays, best of 18 launches)\n", 2.0 * n * sizeof(double) / (best * 1e-3) / 1e9, gib);
  return cudaGetLastError() != cudaSuccess;
}
