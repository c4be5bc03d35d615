/*
   Row nodes of the one-thread CPU kernel (natural order or a reordered copy's renumbered layout): consecutive rows
   with one column list (the unknowns of one mesh point of a vector PDE: the 3 displacements of 3D elasticity) are
   multiplied together, each column index and x entry loaded once for the node's rows, as PETSc's inode kernel does.
   This is the case where one core in the natural order, which otherwise runs the AIJ loop, lost to PETSc's AIJ type
   (its inode kernel; measurements in docs/history/sessions.md, "CPU row nodes").

   Each row is still summed in its own order with separate multiplies and additions: the products are the bits of the
   AIJ loop (PETSc's inode kernel pairs the entries and rounds differently).

   A node reads the column indices of one of its rows and skips the others', and reads its values as a short stream per
   row: the hardware prefetcher loses such streams, and without help this loop was slower than the plain loop. The
   column indices and values of the node CSRK_NODE_AHEAD nodes ahead are prefetched by hand (docs/experiments/nodeloop.c
   measures the distance).
*/
#include "csrkimpl.h"
#include <string.h>

#if defined(__clang__)
  #pragma clang fp contract(off)
#elif defined(__GNUC__)
  #pragma GCC optimize("fp-contract=off")
#endif

#define CSRK_NODE_AHEAD 4

/* whether rows r and s > r have the same column list: 32-bit columns, or 16-bit offsets from the row (row s's are
   row r's minus s - r) */
static inline PetscBool CSRKSameColumns(const MatCSRKStructure *st, PetscInt r, PetscInt s)
{
  const CSRKIdx *rp = st->rowptr, nz = rp[r + 1] - rp[r];
  if (rp[s + 1] - rp[s] != nz) return PETSC_FALSE;
  if (st->colidx) return (PetscBool)!memcmp(st->colidx + rp[r], st->colidx + rp[s], sizeof(CSRKIdx) * (size_t)nz);
  for (CSRKIdx j = 0; j < nz; j++)
    if (st->coloff[rp[r] + j] != st->coloff[rp[s] + j] + (s - r)) return PETSC_FALSE;
  return PETSC_TRUE;
}

/*
  MatCSRKStructureFindNodes - groups the rows of a one-thread structure with column indices (32-bit or 16-bit offsets)
  whose rows are stored in their own order (natural order or renumbered layout) into nodes of up to CSRK_NODE_MAX
  consecutive rows with one column list; kept (st->nodesz) when at least half of the rows are in nodes of two or more.
  *nnoderows: those rows, whether kept or not.
*/
PetscErrorCode MatCSRKStructureFindNodes(MatCSRKStructure *st, PetscInt *nnoderows)
{
  uint8_t *size;
  PetscInt nnodes = 0, nrows = 0;

  PetscFunctionBegin;
  PetscCheck(st->nthreads == 1 && (st->colidx || st->coloff) && !st->rowpat && (!st->perm || st->ywork), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Row nodes need one thread, column indices and rows in their own order");
  PetscCall(PetscMalloc1(st->m, &size));
  for (PetscInt r = 0; r < st->m;) {
    PetscInt s = 1;
    while (s < CSRK_NODE_MAX && r + s < st->m && CSRKSameColumns(st, r, r + s)) s++;
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

/* the S rows of a node: entry j of row l is v[l * nz + j] (the rows are consecutive, nz entries each), its column
   ci[q0 + j] of xr (xr = x and 32-bit columns, or x + the node's first row and its 16-bit offsets) */
#define CSRK_NODE(S) \
  do { \
    PetscScalar sum[S] = {0}; \
    for (CSRKIdx j = 0; j < nz; j++) { \
      const PetscScalar xj = xr[ci[q0 + j]]; \
      for (int l = 0; l < (S); l++) sum[l] += v[l * nz + j] * xj; \
    } \
    for (int l = 0; l < (S); l++) out[r + l] = zz ? zz[r + l] + sum[l] : sum[l]; \
  } while (0)

/* the loop over the nodes with the column indices IDX of type ITYPE, prefetching the node CSRK_NODE_AHEAD ahead: the
   indices of its first row and the values of all its rows */
#define CSRK_NODE_LOOP(ITYPE, IDX, XSTEP) \
  do { \
    const ITYPE *restrict ci = (IDX); \
    for (PetscInt i = 0; i < nn; i++) { \
      const int                   S  = ns[i]; \
      const CSRKIdx               q0 = rp[r], nz = rp[r + 1] - q0; \
      const PetscScalar *restrict v  = va + q0, *restrict xr = xx + (XSTEP) * r; \
      if (i + CSRK_NODE_AHEAD < nn) { \
        const CSRKIdx qa = rp[ra], qe = rp[ra + 1], ve = rp[ra + ns[i + CSRK_NODE_AHEAD]]; \
        for (CSRKIdx q = qa; q < qe; q += 64 / (int)sizeof(ITYPE)) __builtin_prefetch(ci + q); \
        if (qe > qa) __builtin_prefetch(ci + qe - 1); \
        for (CSRKIdx q = qa; q < ve; q += 64 / (int)sizeof(PetscScalar)) __builtin_prefetch(va + q); \
        if (ve > qa) __builtin_prefetch(va + ve - 1); \
        ra += ns[i + CSRK_NODE_AHEAD]; \
      } \
      switch (S) { \
      case 1: \
        CSRK_NODE(1); \
        break; \
      case 2: \
        CSRK_NODE(2); \
        break; \
      case 3: \
        CSRK_NODE(3); \
        break; \
      case 4: \
        CSRK_NODE(4); \
        break; \
      default: \
        CSRK_NODE(CSRK_NODE_MAX); \
      } \
      r += S; \
    } \
  } while (0)

/*
  MatCSRKNodeRows - out = A x (+ zz) over all rows of a structure with row nodes (one thread; out, zz and x in the
  structure's order)
*/
void MatCSRKNodeRows(const MatCSRKStructure *st, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  const CSRKIdx *restrict     rp = st->rowptr;
  const PetscScalar *restrict va = st->val;
  const uint8_t *restrict     ns = st->nodesz;
  const PetscInt              nn  = st->nnodes;
  PetscInt                    r = 0, ra = 0; /* first row of node i and of node i + CSRK_NODE_AHEAD */

  for (PetscInt i = 0; i < PetscMin(CSRK_NODE_AHEAD, nn); i++) ra += ns[i];
  if (st->colidx) CSRK_NODE_LOOP(CSRKIdx, st->colidx, 0);
  else CSRK_NODE_LOOP(int16_t, st->coloff, 1);
}
