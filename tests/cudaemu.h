/*
   What the emulations of GPU kernels on the host (tests/blockemu.cpp, tests/rcmemu.cpp) share: the PETSc and CUDA
   names the kernels' headers use, a launch's coordinates (threadIdx a thread's own, the lanes run as threads) and the
   CUDA qualifiers made plain C++.
*/
#ifndef CSRK_CUDAEMU_H
#define CSRK_CUDAEMU_H
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>
#include <thread>
#include <barrier>
#include <algorithm>
#include <random>
#include <cmath>
typedef double  PetscScalar;
typedef double  PetscReal;
typedef int64_t PetscInt64;
typedef int64_t PetscInt;
typedef int32_t CSRKIdx;
typedef int     PetscBool;
struct dim3 { unsigned x = 0, y = 0, z = 0; };
static thread_local dim3 threadIdx;
static dim3 blockIdx, blockDim, gridDim;
#define __global__ static
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
using std::min; using std::max;
#endif
