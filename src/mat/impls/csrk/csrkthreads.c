/*
   The OpenMP threads of the CPU kernels: how many by default (a structure's own are the plan's, csrkplan.c), and
   whether a natural-order structure may then multiply the AIJ arrays themselves or needs a copy placed by its threads.

   PETSc users run one MPI rank per core and PETSc's vector operations are not threaded, so the kernels run one thread
   per rank unless the user asks for more (docs/design.md, "Threads on request").
*/
#include "csrkimpl.h"
#include <stdlib.h>
#include <unistd.h>

/*
  MatCSRKDefaultThreads - the threads of the kernels (and of the parallel passes of the orderings) when none were set
  with -mat_csrk_threads or MatCSRKSetNumThreads(): OpenMP's own count when OMP_NUM_THREADS is set, else one
*/
PetscInt MatCSRKDefaultThreads(void)
{
#if defined(_OPENMP)
  if (getenv("OMP_NUM_THREADS")) return (PetscInt)omp_get_max_threads();
#endif
  return 1;
}

/*
  MatCSRKShareNatural - whether a natural-order structure of nthreads threads uses the AIJ arrays themselves instead
  of a copy. The copy exists so that each thread first touches, and so places, the pages it multiplies: that gains
  something only for several threads on a node of several NUMA domains. The AIJ arrays must also have the kernels'
  32-bit indices. CSRK_NATURAL_COPY=1 in the environment forces the copy, for the tests of that path.
*/
PetscBool MatCSRKShareNatural(PetscInt nthreads)
{
  static int copy = -1, numa = -1;

  if (sizeof(PetscInt) != sizeof(CSRKIdx)) return PETSC_FALSE;
  if (copy < 0) {
    const char *env = getenv("CSRK_NATURAL_COPY");
    copy            = env && atoi(env);
  }
  if (copy) return PETSC_FALSE;
  if (nthreads == 1) return PETSC_TRUE;
  if (numa < 0) numa = access("/sys/devices/system/node/node1", F_OK) == 0;
  return (PetscBool)!numa;
}
