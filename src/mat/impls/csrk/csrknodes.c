/*
   Row nodes of the one-thread CPU kernel: consecutive rows with one column list (the unknowns of one mesh point of a
   vector PDE: the 3 displacements of 3D elasticity) are multiplied together, each column index and x entry loaded
   once for the node's rows, as PETSc's inode kernel does. This is the case where one core in the natural order, which
   otherwise runs the AIJ loop, lost to PETSc's AIJ type (its inode kernel) by 8-13 % (docs/performance.md).

   Each row is still summed in its own order with separate multiplies and additions: the products are the bits of the
   AIJ loop (PETSc's inode kernel pairs the entries and rounds differently).

   A node reads the column indices of one of its rows and skips the others', and reads its values as a short stream per
   row: the hardware prefetcher loses such streams, and without help this loop ran 2x slower than the plain loop. The
   column indices and values of the node CSRK_NODE_AHEAD nodes ahead are prefetched by hand
   (docs/experiments/nodeloop.c; 4 nodes ahead made it 1.1-1.6x the plain loop there).
*/
#include "csrkimpl.h"
#include <string.h>

#if defined(__clang__)
  #pragma clang fp contract(off)
#elif defined(__GNUC__)
  #pragma GCC optimize("fp-contract=off")
#endif

#define CSRK_NODE_AHEAD 4

/* whether rows r and s have the same column list */
static inline PetscBool CSRKSameColumns(const CSRKIdx *rp, const CSRKIdx *cj, PetscInt r, PetscInt s)
{
  const CSRKIdx nz = rp[r + 1] - rp[r];
  return (PetscBool)(rp[s + 1] - rp[s] == nz && !memcmp(cj + rp[r], cj + rp[s], sizeof(CSRKIdx) * (size_t)nz));
}

/*
  MatCSRKStructureFindNodes - groups the rows of a one-thread structure with 32-bit columns into nodes of up to
  CSRK_NODE_MAX consecutive rows with one column list; kept (st->nodesz) when at least half of the rows are in nodes of
  two or more. *nnoderows: those rows, whether kept or not.
*/
PetscErrorCode MatCSRKStructureFindNodes(MatCSRKStructure *st, PetscInt *nnoderows)
{
  const CSRKIdx *rp = st->rowptr, *cj = st->colidx;
  uint8_t       *size;
  PetscInt       nnodes = 0, nrows = 0;

  PetscFunctionBegin;
  PetscCheck(st->nthreads == 1 && cj && !st->rowpat && !st->perm, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Row nodes need one thread, the natural order and 32-bit columns");
  PetscCall(PetscMalloc1(st->m, &size));
  for (PetscInt r = 0; r < st->m;) {
    PetscInt s = 1;
    while (s < CSRK_NODE_MAX && r + s < st->m && CSRKSameColumns(rp, cj, r, r + s)) s++;
    size[nnodes++] = (uint8_t)s;
    if (s > 1) nrows += s;
    r += s;
  }
  if (2 * nrows >= st->m && st->m) {
    PetscCall(PetscMalloc1(nnodes, &st->nodesz));
    PetscCall(PetscArraycpy(st->nodesz, size, nnodes));
    st->nnodes    = nnodes;
    st->nnoderows = nrows;
  }
  PetscCall(PetscFree(size));
  *nnoderows = nrows;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the S rows of a node: entry j of row l is v[l * nz + j] (the rows are consecutive, nz entries each) */
static inline __attribute__((always_inline)) void CSRKNode(int S, CSRKIdx nz, const CSRKIdx *restrict c, const PetscScalar *restrict v, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  PetscScalar sum[CSRK_NODE_MAX] = {0};
  for (CSRKIdx j = 0; j < nz; j++) {
    const PetscScalar xj = xx[c[j]];
    for (int l = 0; l < S; l++) sum[l] += v[l * nz + j] * xj;
  }
  for (int l = 0; l < S; l++) out[l] = zz ? zz[l] + sum[l] : sum[l];
}

/*
  MatCSRKNodeRows - out = A x (+ zz) over all rows of a structure with row nodes (one thread, natural order)
*/
void MatCSRKNodeRows(const MatCSRKStructure *st, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  const CSRKIdx *restrict     rp = st->rowptr, *restrict cj = st->colidx;
  const PetscScalar *restrict va = st->val;
  const uint8_t *restrict     ns = st->nodesz;
  const PetscInt              nn = st->nnodes;
  PetscInt                    r = 0, ra = 0; /* first row of node i and of node i + CSRK_NODE_AHEAD */

  for (PetscInt i = 0; i < PetscMin(CSRK_NODE_AHEAD, nn); i++) ra += ns[i];
  for (PetscInt i = 0; i < nn; i++) {
    const int      S  = ns[i];
    const CSRKIdx  q0 = rp[r], nz = rp[r + 1] - q0;
    const CSRKIdx *c  = cj + q0;
    if (i + CSRK_NODE_AHEAD < nn) {
      /* the column indices of the node's first row, and the values of all its rows */
      const CSRKIdx qa = rp[ra], qe = rp[ra + 1], ve = rp[ra + ns[i + CSRK_NODE_AHEAD]];
      for (CSRKIdx q = qa; q < qe; q += 64 / (int)sizeof(CSRKIdx)) __builtin_prefetch(cj + q);
      if (qe > qa) __builtin_prefetch(cj + qe - 1);
      for (CSRKIdx q = qa; q < ve; q += 64 / (int)sizeof(PetscScalar)) __builtin_prefetch(va + q);
      if (ve > qa) __builtin_prefetch(va + ve - 1);
      ra += ns[i + CSRK_NODE_AHEAD];
    }
    switch (S) {
    case 1:
      CSRKNode(1, nz, c, va + q0, xx, zz ? zz + r : NULL, out + r);
      break;
    case 2:
      CSRKNode(2, nz, c, va + q0, xx, zz ? zz + r : NULL, out + r);
      break;
    case 3:
      CSRKNode(3, nz, c, va + q0, xx, zz ? zz + r : NULL, out + r);
      break;
    case 4:
      CSRKNode(4, nz, c, va + q0, xx, zz ? zz + r : NULL, out + r);
      break;
    default:
      CSRKNode(CSRK_NODE_MAX, nz, c, va + q0, xx, zz ? zz + r : NULL, out + r);
    }
    r += S;
  }
}
