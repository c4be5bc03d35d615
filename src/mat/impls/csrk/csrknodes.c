/*
   Row nodes of the one-thread CPU kernel (natural order or a reordered copy's renumbered layout): consecutive rows
   with one column list (the unknowns of one mesh point of a vector PDE: the 3 displacements of 3D elasticity) are
   multiplied together, each column index and x entry loaded once for the node's rows, as PETSc's inode kernel does.
   This is the case where one core in the natural order, which otherwise runs the AIJ loop, lost to PETSc's AIJ type
   (its inode kernel; measurements in docs/history/experiments.md, "CPU row nodes").

   Each row is still summed in its own order with separate multiplies and additions: the products are the bits of the
   AIJ loop (PETSc's inode kernel pairs the entries and rounds differently).

   A node reads the column indices of one of its rows and skips the others', and reads its values as a short stream per
   row: the hardware prefetcher loses such streams, and without help this loop was slower than the plain loop. The
   column indices and values of the node CSRK_NODE_AHEAD nodes ahead are prefetched by hand (docs/experiments/nodeloop.c
   measures the distance).

   Value lists (MAT_CSRK_ROW_VALUES): a finite-element operator assembled from one element matrix on a uniform mesh
   (3D elasticity with one material) gives every interior mesh point the same values, bit for bit. A node whose values
   are an earlier node's multiplies those instead of its own (st->nodesrc): the few distinct lists stay in the cache,
   and such a node streams its column indices, x and y, not its values (8 of the 12 bytes per nonzero). The products
   are the same bits.
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
static PetscErrorCode MatCSRKStructureFindNodes(MatCSRKStructure *st, PetscInt *nnoderows)
{
  uint8_t *size;
  PetscInt nnodes = 0, nrows = 0;

  PetscFunctionBegin;
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

/* the nodes whose values are found again: a table of the last node seen for each hash of a few of its values, which
   holds the lists of a mesh's interior and boundary points together */
#define CSRK_NODE_SLOTS 1024

/* a hash of a node's size and length and four of its values (the first, the last, and two between) */
static inline uint32_t CSRKNodeValuesHash(const PetscScalar *v, CSRKIdx len, int S)
{
  const CSRKIdx at[4] = {0, len / 3, (2 * len) / 3, len - 1};
  uint64_t      h     = 0x9e3779b97f4a7c15ull ^ ((uint64_t)len << 8) ^ (uint64_t)S;
  for (int i = 0; i < 4; i++) {
    uint64_t w = 0; /* a single-precision value fills half of it */
    memcpy(&w, v + at[i], PetscMin(sizeof(w), sizeof(PetscScalar)));
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  return (uint32_t)(h >> 32);
}

/*
  MatCSRKStructureFindNodeValues - finds, with st->val current, the row nodes whose values (all their rows', bitwise)
  are those of an earlier node, which they then multiply instead (st->nodesrc); kept where they are at least an eighth
  of the rows (st->nvalued), else freed. Called at the build and after each change of the values while kept: the
  products read st->nodesrc as long as it exists, so nothing else may change st->val in between.
*/
static PetscErrorCode MatCSRKStructureFindNodeValues(MatCSRKStructure *st)
{
  const CSRKIdx     *rp = st->rowptr;
  const PetscScalar *va = st->val;
  CSRKIdx            slot[CSRK_NODE_SLOTS];
  PetscInt           r = 0, nvalued = 0;

  PetscFunctionBegin;
  PetscCheck(st->nodesz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Value lists of row nodes need row nodes");
  if (!st->nodesrc) PetscCall(PetscMalloc1(st->nnodes, &st->nodesrc));
  for (PetscInt s = 0; s < CSRK_NODE_SLOTS; s++) slot[s] = -1;
  for (PetscInt i = 0; i < st->nnodes; i++) {
    const int     S  = st->nodesz[i];
    const CSRKIdx q0 = rp[r], len = rp[r + S] - q0;
    st->nodesrc[i] = q0;
    if (len > 0) {
      const uint32_t h = CSRKNodeValuesHash(va + q0, len, S) & (CSRK_NODE_SLOTS - 1);
      const CSRKIdx  q = slot[h];
      /* the kernel reads the node's values as one run of len: an earlier run of the same bits does (q < q0) */
      if (q >= 0 && !memcmp(va + q, va + q0, sizeof(PetscScalar) * (size_t)len)) {
        st->nodesrc[i] = q;
        nvalued += S;
      } else slot[h] = q0;
    }
    r += S;
  }
  if (8 * nvalued < st->m) {
    PetscCall(PetscFree(st->nodesrc));
    nvalued = 0;
  }
  st->nvalued = nvalued;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the S rows of a node: entry j of row l is v[l * nz + j] (its rows' values in a run, nz entries each), its column
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
      const PetscScalar *restrict v  = va + (src ? src[i] : q0), *restrict xr = xx + (XSTEP) * r; \
      if (i + CSRK_NODE_AHEAD < nn) { \
        const CSRKIdx qa = rp[ra], qe = rp[ra + 1], ve = rp[ra + ns[i + CSRK_NODE_AHEAD]]; \
        for (CSRKIdx q = qa; q < qe; q += 64 / (int)sizeof(ITYPE)) __builtin_prefetch(ci + q); \
        if (qe > qa) __builtin_prefetch(ci + qe - 1); \
        if (!src || src[i + CSRK_NODE_AHEAD] == qa) { /* its own values (an earlier node's are in the cache) */ \
          for (CSRKIdx q = qa; q < ve; q += 64 / (int)sizeof(PetscScalar)) __builtin_prefetch(va + q); \
          if (ve > qa) __builtin_prefetch(va + ve - 1); \
        } \
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
static void MatCSRKNodeRows(const MatCSRKStructure *st, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  const CSRKIdx *restrict     rp = st->rowptr;
  const PetscScalar *restrict va = st->val;
  const uint8_t *restrict     ns = st->nodesz;
  const CSRKIdx *restrict     src = st->nodesrc; /* value lists: where each node's values are read */
  const PetscInt              nn  = st->nnodes;
  PetscInt                    r = 0, ra = 0; /* first row of node i and of node i + CSRK_NODE_AHEAD */

  for (PetscInt i = 0; i < PetscMin(CSRK_NODE_AHEAD, nn); i++) ra += ns[i];
  if (st->colidx) CSRK_NODE_LOOP(CSRKIdx, st->colidx, 0);
  else CSRK_NODE_LOOP(int16_t, st->coloff, 1);
}

/* The row loop of a structure with row nodes (one thread: all rows) */
static void CSRKNodesMult(const MatCSRKStructure *st, PetscInt t, PetscInt r0, PetscInt r1, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  MatCSRKNodeRows(st, xx, zz, out);
}

/* where half of the probed rows are in nodes: by rule where an eighth repeat an earlier node's values (value lists
   drop values), else a rival of AIJ's kernel */
static MatCSRKExpectRule CSRKNodesExpect(const MatCSRKProbe *p)
{
  if (!p->opt->feature[MAT_CSRK_ROW_NODES] || 2 * p->noderows < p->rows) return CSRK_EXPECT_NO;
  return p->opt->feature[MAT_CSRK_ROW_VALUES] && 8 * p->repeats >= p->rows ? CSRK_EXPECT_RULE : CSRK_EXPECT_RIVAL;
}

/* one thread over column indices (natural order, or a reordered copy's renumbered rows), no patterns */
static PetscBool CSRKNodesApplies(const MatCSRKPlan *plan, const MatCSRKStructure *st)
{
  return (PetscBool)(st->nthreads == 1 && plan->opt->feature[MAT_CSRK_ROW_NODES] && !st->rowpat && (st->colidx || st->coloff));
}

static PetscErrorCode CSRKNodesBuild(Mat A, MatCSRKPlan *plan, MatCSRKStructure *st, PetscBool *built)
{
  PetscInt       nnoderows = 0;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(MatCSRKStructureFindNodes(st, &nnoderows));
  if (st->nodesz && plan->opt->feature[MAT_CSRK_ROW_VALUES]) PetscCall(MatCSRKStructureFindNodeValues(st));
  PetscCall(PetscTime(&t1));
  PetscCall(PetscInfo(A, "Row nodes: %" PetscInt_FMT " of %" PetscInt_FMT " rows in nodes of 2 to %d rows with one column list%s, %" PetscInt_FMT " rows multiply an earlier node's values (%g s)\n", nnoderows, st->m, CSRK_NODE_MAX, st->nodesz ? ", multiplied together" : "; too few, not used", st->nodesrc ? st->nvalued : 0, t1 - t0));
  *built = (PetscBool)!!st->nodesz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKNodesRefresh(MatCSRKStructure *st)
{
  PetscFunctionBegin;
  if (st->nodesrc) PetscCall(MatCSRKStructureFindNodeValues(st));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKNodeValuesRepeat - whether the row nodes of st would multiply earlier nodes' values (value lists), which
   the symmetric half, tried before the nodes, leaves to them; nothing is kept */
PetscErrorCode MatCSRKNodeValuesRepeat(const MatCSRKPlan *plan, MatCSRKStructure *st, PetscBool *repeat)
{
  PetscInt nnoderows;

  PetscFunctionBegin;
  *repeat = PETSC_FALSE;
  if (!(CSRKNodesApplies(plan, st) && plan->opt->feature[MAT_CSRK_ROW_VALUES])) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCSRKStructureFindNodes(st, &nnoderows));
  if (st->nodesz) PetscCall(MatCSRKStructureFindNodeValues(st));
  *repeat = (PetscBool)(st->nvalued > 0);
  PetscCall(MatCSRKVariantFree(&MatCSRKVariantNodes, st));
  st->nnodes = st->nnoderows = st->nvalued = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

const MatCSRKVariant MatCSRKVariantNodes = {"nodes", CSRKNodesExpect, CSRKNodesApplies, CSRKNodesBuild, CSRKNodesMult, CSRKNodesRefresh, {CSRK_ARRAY(nodesz, CSRK_LEN_NODES, PETSC_FALSE), CSRK_ARRAY(nodesrc, CSRK_LEN_NODES, PETSC_FALSE)}, 1.0, 1.0, "row_nodes"};
