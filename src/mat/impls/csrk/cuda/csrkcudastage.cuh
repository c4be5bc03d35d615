/*
   The host side of the staged upload (csrkcudastage.cu): a chunk copied into a pinned buffer by the host's threads.
   Plain C++ and OpenMP (tests/stageemu.cpp builds it on its own).
*/
#ifndef CSRKCUDASTAGE_CUH
#define CSRKCUDASTAGE_CUH

#include <string.h>
#include <stddef.h>
#if defined(_OPENMP)
  #include <omp.h>
#endif

#define CSRK_STAGE_THREADS 8 /* threads that fill a buffer at most */

/* n bytes from src into the pinned buffer dst, by the host's threads in contiguous pieces of whole 64-byte lines */
static inline void CSRKStageFill(char *dst, const char *src, size_t n)
{
#if defined(_OPENMP)
  const int nt = omp_get_max_threads() < CSRK_STAGE_THREADS ? omp_get_max_threads() : CSRK_STAGE_THREADS;
  #pragma omp parallel num_threads(nt > 0 ? nt : 1)
  {
    const size_t nthr = (size_t)omp_get_num_threads(), per = ((n + nthr - 1) / nthr + 63) & ~(size_t)63;
    const size_t lo = per * (size_t)omp_get_thread_num() < n ? per * (size_t)omp_get_thread_num() : n, hi = lo + per < n ? lo + per : n;
    if (hi > lo) memcpy(dst + lo, src + lo, hi - lo);
  }
#else
  memcpy(dst, src, n);
#endif
}

#endif
