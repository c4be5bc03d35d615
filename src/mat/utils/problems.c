/*
   Generated test and benchmark problems (assembled MATAIJ, rows distributed by PETSC_DECIDE blocks).
*/
#include <petsccsrk.h>

const char *const MatCSRKProblems[] = {"lap2d5", "lap3d7", "lap3d27", "elasticity3d", "random", "randrect", "powerlaw", "randnodes", "MatCSRKProblem", "MAT_CSRK_PROBLEM_", NULL};

/* Stencil operator on an n^d grid: the stencil's neighbours (|offsets| <= 1 per dimension, restricted to 'shape') */
static PetscErrorCode CreateStencil(MPI_Comm comm, PetscInt n, PetscInt dim, PetscBool full, PetscInt bs, Mat *A)
{
  PetscInt    N = 1, rstart, rend, nloc;
  PetscScalar blk[9], coup[3][3] = {{2.0, 0.5, 0.5}, {0.5, 2.0, 0.5}, {0.5, 0.5, 2.0}};

  PetscFunctionBegin;
  for (PetscInt d = 0; d < dim; d++) N *= n;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N * bs, N * bs));
  PetscCall(MatSetType(*A, MATAIJ));
  if (bs > 1) {
    /* keep whole nodes on a process */
    PetscMPIInt size, rank;
    PetscCallMPI(MPI_Comm_size(comm, &size));
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    nloc = (N / size + (rank < N % size ? 1 : 0)) * bs;
    PetscCall(MatSetSizes(*A, nloc, nloc, N * bs, N * bs));
    PetscCall(MatSetBlockSize(*A, bs));
  }
  {
    const PetscInt w = full ? (dim == 3 ? 27 : 9) : 2 * dim + 1;
    PetscCall(MatSeqAIJSetPreallocation(*A, w * bs, NULL));
    PetscCall(MatMPIAIJSetPreallocation(*A, w * bs, NULL, w * bs, NULL));
  }
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt node = rstart / bs; node < rend / bs; node++) {
    PetscInt c[3] = {0, 0, 0}, t = node;
    for (PetscInt d = 0; d < dim; d++) {
      c[d] = t % n;
      t /= n;
    }
    for (PetscInt dz = (dim == 3 ? -1 : 0); dz <= (dim == 3 ? 1 : 0); dz++)
      for (PetscInt dy = -1; dy <= 1; dy++)
        for (PetscInt dx = -1; dx <= 1; dx++) {
          const PetscInt nz = (dx != 0) + (dy != 0) + (dz != 0);
          PetscInt       q[3] = {c[0] + dx, c[1] + dy, c[2] + dz}, col = 0;
          PetscScalar    v;
          if (!full && nz > 1) continue;
          if (q[0] < 0 || q[0] >= n || q[1] < 0 || q[1] >= n || (dim == 3 && (q[2] < 0 || q[2] >= n))) continue;
          for (PetscInt d = dim - 1; d >= 0; d--) col = col * n + q[d];
          v = nz ? -1.0 : (full ? (dim == 3 ? 26.0 : 8.0) : 2.0 * dim);
          if (bs == 1) PetscCall(MatSetValue(*A, node, col, v, INSERT_VALUES));
          else {
            /* Kronecker product with a 3x3 SPD coupling: an SPD block operator like 3D elasticity */
            for (PetscInt i = 0; i < bs; i++)
              for (PetscInt j = 0; j < bs; j++) blk[i * bs + j] = v * coup[i % 3][j % 3];
            PetscCall(MatSetValuesBlocked(*A, 1, &node, 1, &col, blk, INSERT_VALUES));
          }
        }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A random generator of this process, reproducible from the seed */
static PetscErrorCode CreateRankRandom(MPI_Comm comm, PetscInt seed, PetscRandom *rnd)
{
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, rnd));
  PetscCall(PetscRandomSetSeed(*rnd, (unsigned long)(seed * 7919 + rank)));
  PetscCall(PetscRandomSeed(*rnd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Random sparse matrix: row lengths 0..2*avg (some rows empty), one dense row, a diagonal on square matrices; or, with
   alpha > 0, power-law row lengths avg * u^(-1/(alpha-1)) (at most n/8: a few rows of thousands of entries beside
   many short ones, as in web and social graphs) with uniformly random columns.
   The local rows are drawn first and the matrix preallocated exactly: inserting into an unpreallocated AIJ matrix
   reallocates it again and again, quadratic in the size. */
static PetscErrorCode CreateRandom(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt avg, PetscReal alpha, PetscInt seed, Mat *A)
{
  PetscRandom  rnd;
  PetscInt     rstart, rend, cstart, cend, *ptr, *cols, *dnz, *onz, nloc, total = 0;
  PetscScalar *vals;

  PetscFunctionBegin;
  PetscCall(CreateRankRandom(comm, seed, &rnd));
  {
    PetscLayout rl, cl;
    PetscCall(PetscLayoutCreateFromSizes(comm, PETSC_DECIDE, m, 1, &rl));
    PetscCall(PetscLayoutCreateFromSizes(comm, PETSC_DECIDE, n, 1, &cl));
    PetscCall(PetscLayoutGetRange(rl, &rstart, &rend));
    PetscCall(PetscLayoutGetRange(cl, &cstart, &cend));
    PetscCall(PetscLayoutDestroy(&rl));
    PetscCall(PetscLayoutDestroy(&cl));
  }
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, rend - rstart, cend - cstart, m, n));
  PetscCall(MatSetType(*A, MATAIJ));
  nloc = rend - rstart;
  /* row lengths, then the entries */
  PetscCall(PetscMalloc3(nloc + 1, &ptr, nloc, &dnz, nloc, &onz));
  ptr[0] = 0;
  for (PetscInt r = rstart; r < rend; r++) {
    PetscReal u;
    PetscInt  len;
    PetscCall(PetscRandomGetValueReal(rnd, &u));
    if (alpha > 0) {
      len = (PetscInt)PetscMin((PetscReal)PetscMax(n / 8, avg), avg * PetscPowReal(PetscMax(1.0 - u, 1e-12), -1.0 / (alpha - 1.0)));
    } else {
      len = (PetscInt)(u * 2 * avg);
      if (r % 17 == 5) len = 0; /* empty rows */
      if (r == m / 2) len = n;  /* a dense row */
    }
    ptr[r - rstart + 1] = ptr[r - rstart] + len + (m == n && len ? 1 : 0);
  }
  total = ptr[nloc];
  PetscCall(PetscMalloc2(PetscMax(total, 1), &cols, PetscMax(total, 1), &vals));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt *c = cols + ptr[r - rstart], len = ptr[r - rstart + 1] - ptr[r - rstart], q;
    PetscBool diag = (PetscBool)(m == n && len > 0);
    if (diag) len--;
    for (q = 0; q < len; q++) {
      PetscReal u;
      PetscCall(PetscRandomGetValueReal(rnd, &u));
      c[q] = len == n ? q : PetscMin(n - 1, (PetscInt)(u * n));
      PetscCall(PetscRandomGetValueReal(rnd, &u));
      vals[ptr[r - rstart] + q] = u - 0.5;
    }
    if (diag) {
      c[len]                      = r;
      vals[ptr[r - rstart] + len] = (PetscScalar)(2 * avg);
    }
    /* preallocation: distinct columns of the row, in and out of the diagonal block */
    len = ptr[r - rstart + 1] - ptr[r - rstart];
    {
      PetscInt *sc;
      PetscCall(PetscMalloc1(PetscMax(len, 1), &sc));
      PetscCall(PetscArraycpy(sc, c, len));
      PetscCall(PetscSortRemoveDupsInt(&len, sc));
      dnz[r - rstart] = onz[r - rstart] = 0;
      for (q = 0; q < len; q++) {
        if (sc[q] >= cstart && sc[q] < cend) dnz[r - rstart]++;
        else onz[r - rstart]++;
      }
      PetscCall(PetscFree(sc));
    }
  }
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
  for (PetscInt r = rstart; r < rend; r++) PetscCall(MatSetValues(*A, 1, &r, ptr[r - rstart + 1] - ptr[r - rstart], cols + ptr[r - rstart], vals + ptr[r - rstart], ADD_VALUES));
  PetscCall(PetscFree2(cols, vals));
  PetscCall(PetscFree3(ptr, dnz, onz));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Random square matrix whose rows come in runs of 1 to 7 with one column list (inodes of every size, and runs longer
   than the 5 rows of a node): a run has up to 2*avg random columns plus the diagonal entries of all its rows, each row
   its own values with a dominant diagonal. Runs end at the process's last row. */
static PetscErrorCode CreateRandomNodes(MPI_Comm comm, PetscInt n, PetscInt avg, PetscInt seed, Mat *A)
{
  PetscRandom  rnd;
  PetscInt     rstart, rend, *cols, maxlen = 2 * avg + 7;
  PetscScalar *vals;

  PetscFunctionBegin;
  PetscCall(CreateRankRandom(comm, seed, &rnd));
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, PetscMin(maxlen, n), NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, PetscMin(maxlen, n), NULL, PetscMin(maxlen, n), NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  PetscCall(PetscMalloc2(maxlen, &cols, maxlen, &vals));
  for (PetscInt r0 = rstart, s; r0 < rend; r0 += s) {
    PetscReal u;
    PetscInt  len;
    PetscCall(PetscRandomGetValueReal(rnd, &u));
    s = PetscMin(rend - r0, 1 + (PetscInt)(u * 7));
    PetscCall(PetscRandomGetValueReal(rnd, &u));
    len = (PetscInt)(u * 2 * avg);
    for (PetscInt q = 0; q < len; q++) {
      PetscCall(PetscRandomGetValueReal(rnd, &u));
      cols[q] = PetscMin(n - 1, (PetscInt)(u * n));
    }
    for (PetscInt l = 0; l < s; l++) cols[len + l] = r0 + l;
    for (PetscInt r = r0; r < r0 + s; r++) {
      for (PetscInt q = 0; q < len + s; q++) {
        PetscCall(PetscRandomGetValueReal(rnd, &u));
        vals[q] = cols[q] == r ? (PetscScalar)(4 * avg + 8) : (PetscScalar)(u - 0.5);
      }
      PetscCall(MatSetValues(*A, 1, &r, len + s, cols, vals, ADD_VALUES));
    }
  }
  PetscCall(PetscFree2(cols, vals));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCSRKCreateProblem - creates an assembled `MATAIJ` test or benchmark matrix

  Collective

  Input Parameters:
+ comm - the communicator
. name - "lap2d5" (n^2 grid, 5-point), "lap3d7" (n^3, 7-point), "lap3d27" (n^3, 27-point), "elasticity3d" (n^3 nodes,
         27-point, block size 3), "random" (n x n random sparse, with empty rows and a dense row), "randrect" (n x (n/2+3) random),
         "powerlaw" (n x n, power-law row lengths: at least 3 entries, exponent 2.5, up to n/8, random columns),
         "randnodes" (n x n random, rows in runs of 1 to 7 with one column list: inodes of every size)
. n    - grid points per dimension, or rows for the random matrices
- seed - seed of the random matrices

  Output Parameter:
. A - the matrix

  Level: developer

.seealso: `MatCSRKReadMatrixMarket()`
@*/
PetscErrorCode MatCSRKCreateProblem(MPI_Comm comm, const char name[], PetscInt n, PetscInt seed, Mat *A)
{
  PetscBool flg;

  PetscFunctionBegin;
  PetscCheck(n > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Problem size must be positive, not %" PetscInt_FMT, n);
  PetscCall(PetscStrcmp(name, "lap2d5", &flg));
  if (flg) PetscCall(CreateStencil(comm, n, 2, PETSC_FALSE, 1, A));
  if (!flg) {
    PetscCall(PetscStrcmp(name, "lap3d7", &flg));
    if (flg) PetscCall(CreateStencil(comm, n, 3, PETSC_FALSE, 1, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "lap3d27", &flg));
    if (flg) PetscCall(CreateStencil(comm, n, 3, PETSC_TRUE, 1, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "elasticity3d", &flg));
    if (flg) PetscCall(CreateStencil(comm, n, 3, PETSC_TRUE, 3, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "random", &flg));
    if (flg) PetscCall(CreateRandom(comm, n, n, 6, 0, seed, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "randrect", &flg));
    if (flg) PetscCall(CreateRandom(comm, n, n / 2 + 3, 4, 0, seed, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "powerlaw", &flg));
    if (flg) PetscCall(CreateRandom(comm, n, n, 3, 2.5, seed, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "randnodes", &flg));
    if (flg) PetscCall(CreateRandomNodes(comm, n, 6, seed, A));
  }
  PetscCheck(flg, comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown problem %s: use lap2d5, lap3d7, lap3d27, elasticity3d, random, randrect, powerlaw or randnodes", name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKPermuteRandom - applies a random symmetric permutation P A P^T (reproducible from the seed), as a user whose
  unknowns are numbered badly would have it

  Collective

  Input Parameters:
+ A    - a square matrix
- seed - the seed

  Output Parameter:
. B - the permuted matrix, of the type of A

  Level: developer

.seealso: `MatCSRKCreateProblem()`, `MatCSRKPermuteRandomBlocks()`
@*/
PetscErrorCode MatCSRKPermuteRandom(Mat A, PetscInt seed, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKPermuteRandomBlocks(A, 1, seed, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKPermuteRandomBlocks - applies a random symmetric permutation P A P^T that moves whole runs of bs consecutive
  rows (reproducible from the seed): the unknowns of a vertex stay together, as in a mesh numbered badly vertex by
  vertex, so the row nodes of a block matrix survive while their neighbours are scattered

  Collective

  Input Parameters:
+ A    - a square matrix whose size and local sizes are multiples of bs
. bs   - rows moved together (1: `MatCSRKPermuteRandom()`, the same permutation for the same seed)
- seed - the seed

  Output Parameter:
. B - the permuted matrix, of the type of A

  Level: developer

.seealso: `MatCSRKCreateProblem()`, `MatCSRKPermuteRandom()`
@*/
PetscErrorCode MatCSRKPermuteRandomBlocks(Mat A, PetscInt bs, PetscInt seed, Mat *B)
{
  PetscInt    N, nb, rstart, rend, *perm, *all;
  PetscRandom rnd;
  IS          is;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCheck(bs >= 1 && N % bs == 0 && rstart % bs == 0 && rend % bs == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "The size %" PetscInt_FMT " and the local rows [%" PetscInt_FMT ", %" PetscInt_FMT ") must be multiples of the block %" PetscInt_FMT, N, rstart, rend, bs);
  nb = N / bs;
  PetscCall(PetscMalloc1(nb, &all));
  /* every process draws the same permutation of the blocks */
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, (unsigned long)seed));
  PetscCall(PetscRandomSeed(rnd));
  for (PetscInt i = 0; i < nb; i++) all[i] = i;
  for (PetscInt i = nb - 1; i > 0; i--) {
    PetscReal u;
    PetscInt  j, t;
    PetscCall(PetscRandomGetValueReal(rnd, &u));
    j      = PetscMin(i, (PetscInt)(u * (i + 1)));
    t      = all[i];
    all[i] = all[j];
    all[j] = t;
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscMalloc1(rend - rstart, &perm));
  for (PetscInt r = rstart; r < rend; r++) perm[r - rstart] = all[r / bs] * bs + r % bs;
  PetscCall(PetscFree(all));
  PetscCall(ISCreateGeneral(PetscObjectComm((PetscObject)A), rend - rstart, perm, PETSC_OWN_POINTER, &is));
  PetscCall(MatPermute(A, is, is, B));
  PetscCall(ISDestroy(&is));
  PetscFunctionReturn(PETSC_SUCCESS);
}
