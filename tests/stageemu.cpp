/*
   The host side of MATCSRKCUDA's staged upload (csrkcudastage.cuh) on its own: every byte of a chunk copied, for
   sizes that do not divide among the threads or into 64-byte lines, and 1 to 8 threads.
   Prints a line a case and "all ok", or the failures; exits 1 on any. Built and run by `make stage-emu` (`make check`).
*/
#include <cstdio>
#include <vector>
#include "../src/mat/impls/csrk/cuda/csrkcudastage.cuh"

int main()
{
  int bad = 0;
  for (size_t n : {0ul, 1ul, 5ul, 63ul, 64ul, 65ul, 1000ul, 4099ul, 8388607ul, 8388608ul, 8388613ul})
    for (int t : {1, 2, 3, 8}) {
#if defined(_OPENMP)
      omp_set_num_threads(t);
#endif
      std::vector<char> s(n + 1), d(n + 1, 0);
      for (size_t i = 0; i < n; i++) s[i] = (char)(i * 7 + 1);
      CSRKStageFill(d.data(), s.data(), n);
      if (memcmp(d.data(), s.data(), n) || d[n]) {
        bad++;
        printf("FAIL %zu bytes, %d threads\n", n, t);
      } else printf("%zu bytes, %d threads: ok\n", n, t);
    }
  printf("%s\n", bad ? "FAIL" : "all ok");
  return bad ? 1 : 0;
}
