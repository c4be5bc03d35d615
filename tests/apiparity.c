static const char help[] = "Public-API parity: one matrix built in two types through PETSc's public API only, the same sequence of public Mat\n"
                           "operations applied to both; after each step the MatMult family of the tested type (outputs poisoned with NaN\n"
                           "or 1e300 first), its diagonal, norms and row maxima against the reference, and KSP solves with equal iteration\n"
                           "counts. Every matrix an operation creates (duplicates, conversions, transposes, submatrices, products) is\n"
                           "checked the same way.\n"
                           "  -problem <list> -n <list>: generated matrices (lap2d5, lap3d7, lap3d27, elasticity3d, random, randrect,\n"
                           "      randnodes, powerlaw), one size each; -permute <seed>: randomly permuted first\n"
                           "  -ctype <csrk>: the tested type; -rtype <aij>: the reference type (aij against aij is the control)\n"
                           "  -orderings <natural,rcm,bandk,auto> -ks <1,2,3>: the CSR-k options of each run, set as\n"
                           "      -mat_csrk_ordering and -mat_csrk_k before MatSetFromOptions()\n"
                           "  -ksp <bool>: the solves (default true) -tol <1e-12> -verbose: a line per step\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>
#include <petscksp.h>
#include "testutil.h"

/* the two matrices of each step: [0] the reference type, [1] the tested type */
static const char *type[2];
static char        config[256], stepname[128];
static PetscInt    nchecks = 0, nfail = 0, nsteps = 0;
static PetscReal   tol     = 1e-12;
static PetscBool   verbose = PETSC_FALSE;

static PetscErrorCode Fail(MPI_Comm comm, const char *what, PetscReal err)
{
  PetscFunctionBegin;
  nfail++;
  PetscCall(PetscPrintf(comm, "FAIL %s, step \"%s\": %s relative error %g\n", config, stepname, what, (double)err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CompareVec(Vec y, Vec yref, const char *what)
{
  PetscReal err;

  PetscFunctionBegin;
  PetscCall(TestRelativeError(y, yref, &err));
  nchecks++;
  if (!(err <= tol)) PetscCall(Fail(PetscObjectComm((PetscObject)y), what, err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CompareReal(MPI_Comm comm, PetscReal v, PetscReal vref, const char *what)
{
  PetscReal err = PetscAbsReal(v - vref) / PetscMax(PetscAbsReal(vref), PETSC_SMALL);

  PetscFunctionBegin;
  nchecks++;
  if (!(err <= tol)) PetscCall(Fail(comm, what, err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FillRandom(Vec v, PetscInt seed)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)v), &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, (unsigned long)seed));
  PetscCall(PetscRandomSeed(r));
  PetscCall(VecSetRandom(v, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The checks after each step: the MatMult family of M (the tested type) against that of R (the reference), every
   output poisoned first (NaN: any entry left unwritten or read fails; 1e300: an entry summed into fails); the diagonal,
   norms and row maxima */
static PetscErrorCode Check(Mat R, Mat M, const char *what)
{
  Vec       x, y, yref, z, xt, yt, xtref, zt;
  PetscInt  m, n, mr, nr;
  PetscReal nm, nref;
  PetscBool has;
  MPI_Comm  comm = PetscObjectComm((PetscObject)M);

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(stepname, what, sizeof(stepname)));
  nsteps++;
  if (verbose) PetscCall(PetscPrintf(comm, "  %s: %s\n", config, what));
  PetscCall(MatGetSize(M, &m, &n));
  PetscCall(MatGetSize(R, &mr, &nr));
  nchecks++;
  if (m != mr || n != nr) {
    nfail++;
    PetscCall(PetscPrintf(comm, "FAIL %s, step \"%s\": %" PetscInt_FMT " x %" PetscInt_FMT " matrix, the reference is %" PetscInt_FMT " x %" PetscInt_FMT "\n", config, what, m, n, mr, nr));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* vectors of the tested type: device vectors for a GPU type, whose products then run on the device */
  PetscCall(MatCreateVecs(M, &x, &y));
  PetscCall(VecDuplicate(y, &yref));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &yt));
  PetscCall(VecDuplicate(x, &xt));
  PetscCall(VecDuplicate(x, &xtref));
  PetscCall(VecDuplicate(x, &zt));
  PetscCall(FillRandom(x, 11 + nsteps));
  PetscCall(FillRandom(z, 13));
  PetscCall(FillRandom(yt, 17 + nsteps));
  PetscCall(FillRandom(zt, 19));

  PetscCall(MatMult(R, x, yref));
  PetscCall(VecSet(y, (PetscScalar)NAN));
  PetscCall(MatMult(M, x, y));
  PetscCall(CompareVec(y, yref, "MatMult"));
  PetscCall(VecSet(y, (PetscScalar)1e300));
  PetscCall(MatMult(M, x, y));
  PetscCall(CompareVec(y, yref, "MatMult (again)"));
  PetscCall(MatMultAdd(R, x, z, yref));
  PetscCall(VecSet(y, (PetscScalar)NAN));
  PetscCall(MatMultAdd(M, x, z, y));
  PetscCall(CompareVec(y, yref, "MatMultAdd"));
  PetscCall(VecCopy(z, y));
  PetscCall(MatMultAdd(M, x, y, y));
  PetscCall(CompareVec(y, yref, "MatMultAdd in place"));
  PetscCall(MatMultTranspose(R, yt, xtref));
  PetscCall(VecSet(xt, (PetscScalar)1e300));
  PetscCall(MatMultTranspose(M, yt, xt));
  PetscCall(CompareVec(xt, xtref, "MatMultTranspose"));
  PetscCall(MatMultTransposeAdd(R, yt, zt, xtref));
  PetscCall(VecSet(xt, (PetscScalar)NAN));
  PetscCall(MatMultTransposeAdd(M, yt, zt, xt));
  PetscCall(CompareVec(xt, xtref, "MatMultTransposeAdd"));
  /* what the type has of the rest (a MatCreateTranspose() has no norms) */
  PetscCall(MatHasOperation(M, MATOP_GET_DIAGONAL, &has));
  if (m == n && has) {
    PetscCall(MatGetDiagonal(R, yref));
    PetscCall(VecSet(y, (PetscScalar)NAN));
    PetscCall(MatGetDiagonal(M, y));
    PetscCall(CompareVec(y, yref, "MatGetDiagonal"));
  }
  PetscCall(MatHasOperation(M, MATOP_GET_ROW_MAX_ABS, &has));
  if (has) {
    PetscCall(MatGetRowMaxAbs(R, yref, NULL));
    PetscCall(VecSet(y, (PetscScalar)NAN));
    PetscCall(MatGetRowMaxAbs(M, y, NULL));
    PetscCall(CompareVec(y, yref, "MatGetRowMaxAbs"));
  }
  PetscCall(MatHasOperation(M, MATOP_NORM, &has));
  for (PetscInt t = 0; has && t < 3; t++) {
    const NormType    nt[3]     = {NORM_FROBENIUS, NORM_1, NORM_INFINITY};
    const char *const names[3] = {"MatNorm(NORM_FROBENIUS)", "MatNorm(NORM_1)", "MatNorm(NORM_INFINITY)"};
    PetscCall(MatNorm(R, nt[t], &nref));
    PetscCall(MatNorm(M, nt[t], &nm));
    PetscCall(CompareReal(comm, nm, nref, names[t]));
  }

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&xtref));
  PetscCall(VecDestroy(&zt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Check2(Mat M[2], const char *what)
{
  PetscFunctionBegin;
  PetscCall(Check(M[0], M[1], what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Destroy2(Mat M[2])
{
  PetscFunctionBegin;
  PetscCall(MatDestroy(&M[0]));
  PetscCall(MatDestroy(&M[1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Row r of dst (owned rows with r % stride == offset) := a * (row r of src) + b on the entries of src's row (dst's
   pattern holds them), inserted or added: what an application does when it recomputes some rows. The rows are read
   from a copy when src is dst: MatGetRow() refuses a matrix that MatSetValues() has made unassembled. */
static PetscErrorCode SetRows(Mat src, Mat dst, PetscInt stride, PetscInt offset, PetscScalar a, PetscScalar b, InsertMode mode)
{
  PetscInt rstart, rend;
  Mat      S = src;

  PetscFunctionBegin;
  if (src == dst) PetscCall(MatDuplicate(src, MAT_COPY_VALUES, &S));
  PetscCall(MatGetOwnershipRange(S, &rstart, &rend));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nc, *c;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscScalar       *v;
    if (r % stride != offset) continue;
    PetscCall(MatGetRow(S, r, &nc, &cols, &vals));
    PetscCall(PetscMalloc2(nc, &c, nc, &v));
    for (PetscInt q = 0; q < nc; q++) {
      c[q] = cols[q];
      v[q] = a * vals[q] + b;
    }
    PetscCall(MatRestoreRow(S, r, NULL, &cols, &vals)); /* MatRestoreRow() sets its count to 0 */
    PetscCall(MatSetValues(dst, 1, &r, nc, c, v, mode));
    PetscCall(PetscFree2(c, v));
  }
  if (S != src) PetscCall(MatDestroy(&S));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatShift() inserts missing diagonal entries: allowed again before each (PETSc turns the check back on when it
   reallocates and in the matrices it creates) */
static PetscErrorCode Shift(Mat M, PetscScalar a)
{
  PetscFunctionBegin;
  PetscCall(MatSetOption(M, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatShift(M, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Assemble(Mat M, MatAssemblyType t)
{
  PetscFunctionBegin;
  PetscCall(MatAssemblyBegin(M, t));
  PetscCall(MatAssemblyEnd(M, t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A new matrix of the given type with the sizes and block size of G, preallocated exactly for the entries of G that
   keep(row, column) accepts (NULL: all), and those entries set, as an application builds its matrix */
static PetscErrorCode Build(Mat G, MatType t, PetscBool (*keep)(PetscInt, PetscInt), Mat *M)
{
  PetscInt m, n, Mg, Ng, bs, rstart, rend, cstart, cend, *dnnz, *onnz;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(G, &m, &n));
  PetscCall(MatGetSize(G, &Mg, &Ng));
  PetscCall(MatGetBlockSize(G, &bs));
  PetscCall(MatGetOwnershipRange(G, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(G, &cstart, &cend));
  PetscCall(PetscCalloc2(m, &dnnz, m, &onnz));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt        nc;
    const PetscInt *cols;
    PetscCall(MatGetRow(G, r, &nc, &cols, NULL));
    for (PetscInt q = 0; q < nc; q++) {
      if (keep && !keep(r, cols[q])) continue;
      if (cols[q] >= cstart && cols[q] < cend) dnnz[r - rstart]++;
      else onnz[r - rstart]++;
    }
    PetscCall(MatRestoreRow(G, r, &nc, &cols, NULL));
  }
  PetscCall(MatCreate(PetscObjectComm((PetscObject)G), M));
  PetscCall(MatSetSizes(*M, m, n, Mg, Ng));
  if (bs > 1) PetscCall(MatSetBlockSize(*M, bs));
  PetscCall(MatSetType(*M, t));
  PetscCall(MatSetFromOptions(*M));
  PetscCall(MatSeqAIJSetPreallocation(*M, 0, dnnz));
  PetscCall(MatMPIAIJSetPreallocation(*M, 0, dnnz, 0, onnz));
  PetscCall(PetscFree2(dnnz, onnz));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nc, nk = 0, *c;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscScalar       *v;
    PetscCall(MatGetRow(G, r, &nc, &cols, &vals));
    PetscCall(PetscMalloc2(nc, &c, nc, &v));
    for (PetscInt q = 0; q < nc; q++) {
      if (keep && !keep(r, cols[q])) continue;
      c[nk]   = cols[q];
      v[nk++] = vals[q];
    }
    PetscCall(MatRestoreRow(G, r, &nc, &cols, &vals));
    PetscCall(MatSetValues(*M, 1, &r, nk, c, v, INSERT_VALUES));
    PetscCall(PetscFree2(c, v));
  }
  PetscCall(Assemble(*M, MAT_FINAL_ASSEMBLY));
  /* operations below may add entries (MatShift on missing diagonal entries) */
  PetscCall(MatSetOption(*M, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a subset of a pattern that keeps the diagonal */
static PetscBool KeepSubset(PetscInt r, PetscInt c)
{
  return (PetscBool)(r == c || (r + 2 * c) % 3 != 0);
}

/* owned rows with r % stride == offset; with diag, only rows whose diagonal entry is stored (PETSc 3.18's
   MatZeroRows_SeqAIJ writes a new diagonal entry through a stale array when it must be inserted) */
static PetscErrorCode PickRows(Mat M, PetscInt stride, PetscInt offset, PetscBool diag, PetscInt *nr, PetscInt **rows)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(M, &rstart, &rend));
  PetscCall(PetscMalloc1(rend - rstart + 1, rows));
  *nr = 0;
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt        nc;
    const PetscInt *cols;
    PetscBool       has = PETSC_FALSE;
    if (r % stride != offset) continue;
    PetscCall(MatGetRow(M, r, &nc, &cols, NULL));
    for (PetscInt q = 0; q < nc; q++) has = (PetscBool)(has || cols[q] == r);
    PetscCall(MatRestoreRow(M, r, &nc, &cols, NULL));
    if (!diag || has) (*rows)[(*nr)++] = r;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The local blocks of M: M itself on one process, the diagonal and off-diagonal blocks on more */
static PetscErrorCode LocalBlocks(Mat M, Mat blk[2])
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)M), &size));
  blk[0] = M;
  blk[1] = NULL;
  if (size > 1) PetscCall(MatMPIAIJGetSeqAIJ(M, &blk[0], &blk[1], NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Direct access to the value arrays of the local blocks (the same layout in both types): read-write, then write-only */
static PetscErrorCode ArrayAccess(Mat M, PetscBool writeonly)
{
  Mat blk[2];

  PetscFunctionBegin;
  PetscCall(LocalBlocks(M, blk));
  for (PetscInt b = 0; b < 2; b++) {
    MatInfo      info;
    PetscScalar *a;
    PetscInt     nz;
    if (!blk[b]) continue;
    PetscCall(MatGetInfo(blk[b], MAT_LOCAL, &info));
    nz = (PetscInt)info.nz_used;
    if (writeonly) {
      PetscCall(MatSeqAIJGetArrayWrite(blk[b], &a));
      for (PetscInt q = 0; q < nz; q++) a[q] = (PetscScalar)(1.0 + 0.01 * (q % 13) - 0.3 * b);
      PetscCall(MatSeqAIJRestoreArrayWrite(blk[b], &a));
    } else {
      PetscCall(MatSeqAIJGetArray(blk[b], &a));
      for (PetscInt q = 0; q < nz; q++) a[q] = 0.5 * a[q] + (PetscScalar)(0.01 * (q % 7));
      PetscCall(MatSeqAIJRestoreArray(blk[b], &a));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The COO entries of G: every entry in two parts (duplicates summed), the second given by the next process where
   there is one (entries of rows of another process) */
static PetscErrorCode COOEntries(Mat G, PetscCount *ncoo, PetscInt **ci, PetscInt **cj, PetscScalar **cv)
{
  PetscInt     rstart, rend, k = 0, nz = 0, nrecv = 0, *si, *ri;
  PetscScalar *sv, *rv;
  PetscMPIInt  size, rank, to, from, ns, nr;
  MPI_Comm     comm = PetscObjectComm((PetscObject)G);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  to   = (rank + 1) % size;
  from = (rank + size - 1) % size;
  PetscCall(MatGetOwnershipRange(G, &rstart, &rend));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt nc;
    PetscCall(MatGetRow(G, r, &nc, NULL, NULL));
    nz += nc;
    PetscCall(MatRestoreRow(G, r, NULL, NULL, NULL));
  }
  PetscCall(PetscMalloc2(2 * nz + 1, &si, nz + 1, &sv));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(G, r, &nc, &cols, &vals));
    for (PetscInt q = 0; q < nc; q++, k++) {
      si[2 * k]     = r;
      si[2 * k + 1] = cols[q];
      sv[k]         = vals[q];
    }
    PetscCall(MatRestoreRow(G, r, &nc, &cols, &vals));
  }
  PetscCallMPI(MPI_Sendrecv(&nz, 1, MPIU_INT, to, 0, &nrecv, 1, MPIU_INT, from, 0, comm, MPI_STATUS_IGNORE));
  PetscCall(PetscMalloc2(2 * nrecv + 1, &ri, nrecv + 1, &rv));
  PetscCall(PetscMPIIntCast(2 * nz, &ns));
  PetscCall(PetscMPIIntCast(2 * nrecv, &nr));
  PetscCallMPI(MPI_Sendrecv(si, ns, MPIU_INT, to, 1, ri, nr, MPIU_INT, from, 1, comm, MPI_STATUS_IGNORE));
  PetscCallMPI(MPI_Sendrecv(sv, ns / 2, MPIU_SCALAR, to, 2, rv, nr / 2, MPIU_SCALAR, from, 2, comm, MPI_STATUS_IGNORE));
  *ncoo = nz + nrecv;
  PetscCall(PetscMalloc3(*ncoo, ci, *ncoo, cj, *ncoo, cv));
  for (PetscInt q = 0; q < nz; q++) {
    (*ci)[q] = si[2 * q];
    (*cj)[q] = si[2 * q + 1];
    (*cv)[q] = 0.25 * sv[q];
  }
  for (PetscInt q = 0; q < nrecv; q++) {
    (*ci)[nz + q] = ri[2 * q];
    (*cj)[nz + q] = ri[2 * q + 1];
    (*cv)[nz + q] = 0.75 * rv[q];
  }
  PetscCall(PetscFree2(si, sv));
  PetscCall(PetscFree2(ri, rv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A matrix of type t with the layout of G, its pattern and values from MatSetPreallocationCOO()/MatSetValuesCOO() */
static PetscErrorCode BuildCOO(Mat G, MatType t, PetscCount ncoo, const PetscInt ci[], const PetscInt cj[], Mat *M)
{
  PetscInt m, n, Mg, Ng, *i, *j;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(G, &m, &n));
  PetscCall(MatGetSize(G, &Mg, &Ng));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)G), M));
  PetscCall(MatSetSizes(*M, m, n, Mg, Ng));
  PetscCall(MatSetType(*M, t));
  PetscCall(MatSetFromOptions(*M));
  /* MatSetPreallocationCOO() may change its index arrays */
  PetscCall(PetscMalloc2(ncoo, &i, ncoo, &j));
  PetscCall(PetscArraycpy(i, ci, ncoo));
  PetscCall(PetscArraycpy(j, cj, ncoo));
  PetscCall(MatSetPreallocationCOO(*M, ncoo, i, j));
  PetscCall(PetscFree2(i, j));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P (N x ceil(N/2)) of type t, rows in the column layout of A: pairs of unknowns aggregated, as a coarse space */
static PetscErrorCode BuildProlongator(Mat A, MatType t, Mat *P)
{
  PetscInt n, N, cstart, cend;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, NULL, &n));
  PetscCall(MatGetSize(A, NULL, &N));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), P));
  PetscCall(MatSetSizes(*P, n, PETSC_DECIDE, N, (N + 1) / 2));
  PetscCall(MatSetType(*P, t));
  PetscCall(MatSetFromOptions(*P));
  PetscCall(MatSeqAIJSetPreallocation(*P, 1, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*P, 1, NULL, 1, NULL));
  PetscCall(MatGetOwnershipRange(*P, &cstart, &cend));
  for (PetscInt i = cstart; i < cend; i++) PetscCall(MatSetValue(*P, i, i / 2, 1.0 + 0.125 * (i % 2), INSERT_VALUES));
  PetscCall(Assemble(*P, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSP solves with M[0] and M[1]: the same preconditioner, iteration count and solution. The preconditioners of
   every process count: ICC in parallel is block Jacobi with ICC blocks. */
typedef struct {
  KSPType ksp;
  PCType  pc; /* NULL: PETSc's default */
} Solver;

static PetscErrorCode SolveWith(Mat M, const Solver *s, Vec b, Vec x, PetscInt *its, KSPConvergedReason *reason)
{
  KSP         ksp;
  PC          pc;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)M), &size));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)M), &ksp));
  PetscCall(KSPSetOperators(ksp, M, M));
  PetscCall(KSPSetType(ksp, s->ksp));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 500));
  PetscCall(KSPGetPC(ksp, &pc));
  if (s->pc) {
    PetscBool icc;
    PetscCall(PetscStrcmp(s->pc, PCICC, &icc));
    PetscCall(PCSetType(pc, icc && size > 1 ? PCBJACOBI : s->pc));
    if (icc && size > 1) {
      KSP     *sub;
      PetscInt nl;
      PC       spc;
      PetscCall(KSPSetUp(ksp));
      PetscCall(PCBJacobiGetSubKSP(pc, &nl, NULL, &sub));
      PetscCall(KSPGetPC(sub[0], &spc));
      PetscCall(PCSetType(spc, PCICC));
    }
  }
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckSolves(Mat M[2], PetscBool spd, const char *when)
{
  const Solver  sym[] = {{KSPCG, NULL}, {KSPCG, PCICC}, {KSPCG, PCGAMG}, {KSPGMRES, NULL}, {KSPGMRES, PCASM}}, gen[] = {{KSPGMRES, NULL}, {KSPGMRES, PCILU}, {KSPBCGS, PCJACOBI}, {KSPGMRES, PCASM}};
  const Solver *s     = spd ? sym : gen;
  PetscInt      ns    = spd ? 5 : 4;
  Vec           b, x[2];
  MPI_Comm      comm = PetscObjectComm((PetscObject)M[1]);
  PetscMPIInt   size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatCreateVecs(M[1], &x[1], &b));
  PetscCall(VecDuplicate(x[1], &x[0]));
  PetscCall(FillRandom(b, 5));
  for (PetscInt i = 0; i < ns; i++) {
    PetscInt           its[2];
    KSPConvergedReason reason[2];
    PetscReal          dx, nx;
    char               what[128];
    if (size > 1 && s[i].pc && !strcmp(s[i].pc, PCILU)) continue; /* ILU of the whole matrix: one process only */
    PetscCall(PetscSNPrintf(what, sizeof(what), "KSP %s, PC %s, %s", s[i].ksp, s[i].pc ? s[i].pc : "default", when));
    PetscCall(PetscStrncpy(stepname, what, sizeof(stepname)));
    for (PetscInt t = 0; t < 2; t++) PetscCall(SolveWith(M[t], &s[i], b, x[t], &its[t], &reason[t]));
    PetscCall(VecNorm(x[0], NORM_2, &nx));
    PetscCall(VecAXPY(x[1], -1.0, x[0]));
    PetscCall(VecNorm(x[1], NORM_2, &dx));
    dx /= PetscMax(nx, PETSC_SMALL);
    nchecks++;
    if (verbose) PetscCall(PetscPrintf(comm, "  %s: %s: %" PetscInt_FMT " and %" PetscInt_FMT " iterations (%s, %s), solutions %.2e apart\n", config, what, its[0], its[1], KSPConvergedReasons[reason[0]], KSPConvergedReasons[reason[1]], (double)dx));
    if (its[0] != its[1] || reason[0] != reason[1] || reason[1] <= 0 || !(dx <= 1e-6)) {
      nfail++;
      PetscCall(PetscPrintf(comm, "FAIL %s: %s: %s %" PetscInt_FMT " iterations (%s), %s %" PetscInt_FMT " iterations (%s), solutions %.2e apart\n", config, what, type[0], its[0], KSPConvergedReasons[reason[0]], type[1], its[1], KSPConvergedReasons[reason[1]], (double)dx));
    }
  }
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x[0]));
  PetscCall(VecDestroy(&x[1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One KSP per type kept across a store, a change and a retrieve: its preconditioner follows the object state of the
   operator as with the reference type, and its products see the retrieved values */
static PetscErrorCode CheckKSPReuse(Mat M[2], PetscBool spd)
{
  KSP       ksp[2];
  Vec       b, x[2];
  PetscInt  its[2][2];
  PetscReal nx, dx;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(M[1], &x[1], &b));
  PetscCall(VecDuplicate(x[1], &x[0]));
  PetscCall(FillRandom(b, 7));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(KSPCreate(PetscObjectComm((PetscObject)M[t]), &ksp[t]));
    PetscCall(KSPSetOperators(ksp[t], M[t], M[t]));
    PetscCall(KSPSetType(ksp[t], spd ? KSPCG : KSPGMRES));
    PetscCall(KSPSetTolerances(ksp[t], 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, 500));
    PetscCall(VecSet(x[t], 0.0));
    PetscCall(KSPSolve(ksp[t], b, x[t]));
    PetscCall(KSPGetIterationNumber(ksp[t], &its[0][t]));
    PetscCall(MatStoreValues(M[t]));
    PetscCall(MatScale(M[t], 4.0));
    PetscCall(MatRetrieveValues(M[t]));
    PetscCall(VecSet(x[t], 0.0));
    PetscCall(KSPSolve(ksp[t], b, x[t]));
    PetscCall(KSPGetIterationNumber(ksp[t], &its[1][t]));
    PetscCall(KSPDestroy(&ksp[t]));
  }
  PetscCall(PetscStrncpy(stepname, "one KSP across MatStoreValues, MatScale, MatRetrieveValues", sizeof(stepname)));
  PetscCall(VecNorm(x[0], NORM_2, &nx));
  PetscCall(VecAXPY(x[1], -1.0, x[0]));
  PetscCall(VecNorm(x[1], NORM_2, &dx));
  dx /= PetscMax(nx, PETSC_SMALL);
  nchecks++;
  if (its[0][0] != its[0][1] || its[1][0] != its[1][1] || !(dx <= 1e-6)) {
    nfail++;
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)M[1]), "FAIL %s: %s: iterations %s %" PetscInt_FMT ", %" PetscInt_FMT "; %s %" PetscInt_FMT ", %" PetscInt_FMT "; solutions %.2e apart\n", config, stepname, type[0], its[0][0], its[1][0], type[1], its[0][1], its[1][1], (double)dx));
  }
  PetscCall(Check2(M, "after the KSP across MatStoreValues, MatScale, MatRetrieveValues"));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x[0]));
  PetscCall(VecDestroy(&x[1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The sequence of operations on M[0] and M[1], built from G */
static PetscErrorCode RunSequence(Mat G, PetscBool spd, PetscBool nonsym, PetscBool ksp)
{
  Mat         M[2], X[2], D[2];
  PetscInt    m, n, bs, rstart, rend, nr, *rows;
  PetscBool   square, cong;
  PetscMPIInt size;
  MPI_Comm    comm = PetscObjectComm((PetscObject)G);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatGetSize(G, &m, &n));
  PetscCall(MatGetBlockSize(G, &bs));
  square = (PetscBool)(m == n);
  for (PetscInt t = 0; t < 2; t++) PetscCall(Build(G, type[t], NULL, &M[t]));
  PetscCall(MatHasCongruentLayouts(M[1], &cong));
  PetscCall(MatGetOwnershipRange(M[1], &rstart, &rend));
  PetscCall(Check2(M, "MatCreate, MatSetType, MatSetValues, MatAssemblyEnd"));
  if (ksp && (spd || nonsym)) PetscCall(CheckSolves(M, spd, "built"));

  /* 1. stored values: MatRetrieveValues() puts back values that a product of the tested type has already seen
        changed (issue: a copy keyed on the object state, which MatRetrieveValues_SeqAIJ does not increase in 3.18) */
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatSetOption(M[t], MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
    PetscCall(MatStoreValues(M[t]));
  }
  PetscCall(Check2(M, "MatStoreValues"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatScale(M[t], 3.0));
  PetscCall(Check2(M, "MatScale after MatStoreValues"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatRetrieveValues(M[t]));
  PetscCall(Check2(M, "MatRetrieveValues after MatScale"));
  if (ksp && (spd || nonsym)) PetscCall(CheckSolves(M, spd, "after MatRetrieveValues"));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(SetRows(M[t], M[t], 2, 0, 0.5, 0.125, ADD_VALUES));
    PetscCall(Assemble(M[t], MAT_FINAL_ASSEMBLY));
  }
  PetscCall(Check2(M, "MatSetValues ADD_VALUES after MatRetrieveValues"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatRetrieveValues(M[t]));
  PetscCall(Check2(M, "MatRetrieveValues after MatSetValues"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(ArrayAccess(M[t], PETSC_FALSE));
  PetscCall(Check2(M, "MatSeqAIJGetArray/RestoreArray after MatStoreValues"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatRetrieveValues(M[t]));
  PetscCall(Check2(M, "MatRetrieveValues after MatSeqAIJGetArray"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatRetrieveValues(M[t]));
  PetscCall(Check2(M, "MatRetrieveValues twice"));
  if (ksp && (spd || nonsym)) PetscCall(CheckKSPReuse(M, spd));
  for (PetscInt t = 0; t < 2; t++) {
    /* the stored values survive a round trip through aij (the types' own retrieve is taken off and put back) */
    PetscCall(MatConvert(M[t], MATAIJ, MAT_INPLACE_MATRIX, &M[t]));
    PetscCall(MatConvert(M[t], type[t], MAT_INPLACE_MATRIX, &M[t]));
    PetscCall(MatSetFromOptions(M[t]));
    PetscCall(MatScale(M[t], -2.0));
  }
  PetscCall(Check2(M, "MatScale after MatStoreValues and a round trip through aij"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatRetrieveValues(M[t]));
  PetscCall(Check2(M, "MatRetrieveValues after a round trip through aij"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatSetOption(M[t], MAT_NEW_NONZERO_LOCATIONS, PETSC_TRUE));

  /* 2. values set again: INSERT, flush, ADD, final assembly */
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(SetRows(M[t], M[t], 3, 0, 1.5, 0.25, INSERT_VALUES));
    PetscCall(Assemble(M[t], MAT_FLUSH_ASSEMBLY));
    PetscCall(SetRows(G, M[t], 3, 1, 0.0, 0.5, ADD_VALUES)); /* the matrix is not assembled: columns from G */
    PetscCall(Assemble(M[t], MAT_FINAL_ASSEMBLY));
  }
  PetscCall(Check2(M, "MatSetValues INSERT_VALUES, flush assembly, ADD_VALUES"));
  if (bs > 1) {
    /* whole blocks (the generated block matrices store whole blocks) */
    for (PetscInt t = 0; t < 2; t++) {
      for (PetscInt r = rstart; r < rend; r += 2 * bs) {
        PetscInt           nc, br = r / bs, *bc, nb = 0;
        const PetscInt    *cols;
        PetscScalar       *v;
        PetscCall(MatGetRow(G, r, &nc, &cols, NULL)); /* the block columns of G, in the matrix's pattern */
        PetscCall(PetscMalloc2(nc, &bc, nc * bs, &v));
        for (PetscInt q = 0; q < nc; q += bs) bc[nb++] = cols[q] / bs;
        PetscCall(MatRestoreRow(G, r, &nc, &cols, NULL));
        for (PetscInt q = 0; q < nb * bs * bs; q++) v[q] = 0.01 * (q % 5);
        PetscCall(MatSetValuesBlocked(M[t], 1, &br, nb, bc, v, ADD_VALUES));
        PetscCall(PetscFree2(bc, v));
      }
      PetscCall(Assemble(M[t], MAT_FINAL_ASSEMBLY));
    }
    PetscCall(Check2(M, "MatSetValuesBlocked ADD_VALUES"));
  }

  /* 3. scaling, shifts, diagonals */
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatScale(M[t], -0.75));
  PetscCall(Check2(M, "MatScale"));
#if PETSC_VERSION_GE(3, 19, 0)
  /* PETSc 3.26.1's MatShift_Basic reads the off-diagonal block after an assembly that destroyed it when a diagonal
     entry is new there (rectangular matrices on several processes): a use after free in MPIAIJ itself */
  if (square || size == 1)
#endif
  {
    for (PetscInt t = 0; t < 2; t++) PetscCall(Shift(M[t], 2.5));
    PetscCall(Check2(M, "MatShift"));
  }
  {
    Vec l, r;
    PetscCall(MatCreateVecs(M[1], &r, &l));
    PetscCall(FillRandom(l, 23));
    PetscCall(VecShift(l, 2.0));
    PetscCall(FillRandom(r, 29));
    PetscCall(VecShift(r, -2.5));
    if (square) {
      for (PetscInt t = 0; t < 2; t++) PetscCall(MatDiagonalSet(M[t], l, ADD_VALUES));
      PetscCall(Check2(M, "MatDiagonalSet ADD_VALUES"));
      for (PetscInt t = 0; t < 2; t++) PetscCall(MatDiagonalSet(M[t], l, INSERT_VALUES));
      PetscCall(Check2(M, "MatDiagonalSet INSERT_VALUES"));
    }
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatDiagonalScale(M[t], l, r));
    PetscCall(Check2(M, "MatDiagonalScale left and right"));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatDiagonalScale(M[t], NULL, r));
    PetscCall(Check2(M, "MatDiagonalScale right"));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatDiagonalScale(M[t], l, NULL));
    PetscCall(Check2(M, "MatDiagonalScale left"));
    PetscCall(VecDestroy(&l));
    PetscCall(VecDestroy(&r));
  }

  /* 4. sums with other matrices: same pattern (of the same type and of the reference type), a subset, another pattern */
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatDuplicate(M[t], MAT_COPY_VALUES, &X[t]));
    PetscCall(MatScale(X[t], 0.3));
    PetscCall(MatAXPY(M[t], 2.0, X[t], SAME_NONZERO_PATTERN));
  }
  PetscCall(Check2(M, "MatAXPY SAME_NONZERO_PATTERN"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatAXPY(M[t], -0.5, X[0], SAME_NONZERO_PATTERN));
  PetscCall(Check2(M, "MatAXPY SAME_NONZERO_PATTERN, X of the reference type"));
  PetscCall(Destroy2(X));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(Build(M[t], type[t], KeepSubset, &X[t]));
    PetscCall(MatAXPY(M[t], 1.5, X[t], SUBSET_NONZERO_PATTERN));
  }
  PetscCall(Check2(X, "a subset of the pattern, built"));
  PetscCall(Check2(M, "MatAXPY SUBSET_NONZERO_PATTERN"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatAYPX(M[t], 0.5, X[t], SUBSET_NONZERO_PATTERN));
  PetscCall(Check2(M, "MatAYPX SUBSET_NONZERO_PATTERN"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatCopy(X[t], M[t], SUBSET_NONZERO_PATTERN));
  PetscCall(Check2(M, "MatCopy SUBSET_NONZERO_PATTERN"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatScale(X[t], 2.0));
  PetscCall(Check2(X, "MatScale of the subset"));
  PetscCall(Destroy2(X));
  if (square) {
    /* the transpose's pattern: different for the nonsymmetric matrices */
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(MatTranspose(M[t], MAT_INITIAL_MATRIX, &X[t]));
      PetscCall(MatAXPY(M[t], 0.25, X[t], DIFFERENT_NONZERO_PATTERN));
    }
    PetscCall(Check2(M, "MatAXPY DIFFERENT_NONZERO_PATTERN (its transpose)"));
    PetscCall(Destroy2(X));
  }

  /* 5. rows and columns zeroed */
  PetscCall(PickRows(M[1], 5, 1, (PetscBool)(square), &nr, &rows));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatZeroRows(M[t], nr, rows, square ? 2.0 : 0.0, NULL, NULL));
  PetscCall(Check2(M, "MatZeroRows"));
  PetscCall(PetscFree(rows));
  PetscCall(PickRows(M[1], 7, 3, (PetscBool)(square), &nr, &rows));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatSetOption(M[t], MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE));
    PetscCall(MatZeroRows(M[t], nr, rows, square ? 1.0 : 0.0, NULL, NULL));
    PetscCall(MatSetOption(M[t], MAT_KEEP_NONZERO_PATTERN, PETSC_FALSE));
  }
  PetscCall(Check2(M, "MatZeroRows, MAT_KEEP_NONZERO_PATTERN"));
  PetscCall(PetscFree(rows));
  if (square && cong) {
    Vec x[2], b[2];
    PetscCall(PickRows(M[1], 6, 2, PETSC_TRUE, &nr, &rows));
    /* each type with vectors of its own kind (a GPU type's device vectors, aij's host vectors) */
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatCreateVecs(M[t], &x[t], &b[t]));
    PetscCall(FillRandom(x[0], 31));
    PetscCall(FillRandom(b[0], 37));
    PetscCall(VecCopy(x[0], x[1]));
    PetscCall(VecCopy(b[0], b[1]));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatZeroRowsColumns(M[t], nr, rows, 3.0, x[t], b[t]));
    PetscCall(Check2(M, "MatZeroRowsColumns"));
    PetscCall(CompareVec(b[1], b[0], "MatZeroRowsColumns right-hand side"));
    PetscCall(VecDestroy(&x[0]));
    PetscCall(VecDestroy(&x[1]));
    PetscCall(VecDestroy(&b[0]));
    PetscCall(VecDestroy(&b[1]));
    PetscCall(PetscFree(rows));
  }
  {
    IS is;
    PetscCall(PickRows(M[1], 9, 4, (PetscBool)(square), &nr, &rows));
    PetscCall(ISCreateGeneral(comm, nr, rows, PETSC_OWN_POINTER, &is));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatZeroRowsIS(M[t], is, square ? 0.5 : 0.0, NULL, NULL));
    PetscCall(Check2(M, "MatZeroRowsIS"));
    PetscCall(ISDestroy(&is));
  }

  /* 6. all values zeroed, then set again */
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatZeroEntries(M[t]));
  PetscCall(Check2(M, "MatZeroEntries"));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatSetOption(M[t], MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE)); /* the rows zeroed above lost entries */
    PetscCall(SetRows(G, M[t], 1, 0, 1.0, 0.0, INSERT_VALUES));
    PetscCall(Assemble(M[t], MAT_FINAL_ASSEMBLY));
    if (square) PetscCall(Shift(M[t], 1.0));
  }
  PetscCall(Check2(M, "MatSetValues after MatZeroEntries"));

  /* 7. copies */
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatDuplicate(M[t], MAT_COPY_VALUES, &X[t]));
    PetscCall(MatScale(X[t], 0.5));
    PetscCall(MatCopy(X[t], M[t], SAME_NONZERO_PATTERN));
  }
  PetscCall(Check2(M, "MatCopy SAME_NONZERO_PATTERN"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatScale(X[t], -3.0));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatCopy(X[0], M[t], SAME_NONZERO_PATTERN));
  PetscCall(Check2(M, "MatCopy SAME_NONZERO_PATTERN from the reference type"));
  PetscCall(Check2(X, "MatScale of a MatDuplicate"));
  PetscCall(Destroy2(X));

  /* 8. duplicates: with the values, without (then filled), sharing the pattern (then filled; the original unchanged) */
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatDuplicate(M[t], MAT_COPY_VALUES, &D[t]));
  PetscCall(Check2(D, "MatDuplicate MAT_COPY_VALUES"));
  PetscCall(Destroy2(D));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatDuplicate(M[t], MAT_DO_NOT_COPY_VALUES, &D[t]));
    PetscCall(SetRows(M[t], D[t], 1, 0, 1.25, -0.5, INSERT_VALUES));
    PetscCall(Assemble(D[t], MAT_FINAL_ASSEMBLY));
  }
  PetscCall(Check2(D, "MatDuplicate MAT_DO_NOT_COPY_VALUES, then MatSetValues"));
  PetscCall(Destroy2(D));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatDuplicate(M[t], MAT_SHARE_NONZERO_PATTERN, &D[t]));
  PetscCall(Check2(D, "MatDuplicate MAT_SHARE_NONZERO_PATTERN"));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(SetRows(M[t], D[t], 1, 0, -1.0, 0.75, INSERT_VALUES));
    PetscCall(Assemble(D[t], MAT_FINAL_ASSEMBLY));
  }
  PetscCall(Check2(D, "MatDuplicate MAT_SHARE_NONZERO_PATTERN, then MatSetValues"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatScale(D[t], 7.0));
  PetscCall(Check2(D, "MatScale of a duplicate sharing the pattern"));
  PetscCall(Check2(M, "the original after changes to a duplicate sharing its pattern"));
  PetscCall(Destroy2(D));

  /* 9. conversions to aij (initial, reuse) and back (in place), and the matrix itself through aij and back */
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatConvert(M[t], MATAIJ, MAT_INITIAL_MATRIX, &D[t]));
  PetscCall(Check2(D, "MatConvert to aij, MAT_INITIAL_MATRIX"));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatScale(M[t], 1.1));
    PetscCall(MatConvert(M[t], MATAIJ, MAT_REUSE_MATRIX, &D[t]));
  }
  PetscCall(Check2(D, "MatConvert to aij, MAT_REUSE_MATRIX"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatConvert(D[t], type[t], MAT_INPLACE_MATRIX, &D[t]));
  PetscCall(Check2(D, "MatConvert of the aij copy back, MAT_INPLACE_MATRIX"));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatScale(D[t], -1.0));
    PetscCall(MatConvert(D[t], type[t], MAT_REUSE_MATRIX, &M[t]));
  }
  PetscCall(Check2(M, "MatConvert into the matrix, MAT_REUSE_MATRIX"));
  PetscCall(Destroy2(D));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatConvert(M[t], MATAIJ, MAT_INPLACE_MATRIX, &M[t]));
    PetscCall(MatScale(M[t], 0.9));
    PetscCall(MatConvert(M[t], type[t], MAT_INPLACE_MATRIX, &M[t]));
    PetscCall(MatSetFromOptions(M[t]));
  }
  PetscCall(Check2(M, "MatConvert to aij and back, MAT_INPLACE_MATRIX"));
  {
    Mat Cv;
    PetscCall(MatConvert(M[0], type[1], MAT_INITIAL_MATRIX, &Cv));
    PetscCall(Check(M[0], Cv, "MatConvert of the reference to the tested type"));
    PetscCall(MatDestroy(&Cv));
  }

  /* 10. transposes: explicit (initial, reuse after a change), in place, and the implicit one */
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatTranspose(M[t], MAT_INITIAL_MATRIX, &D[t]));
  PetscCall(Check2(D, "MatTranspose MAT_INITIAL_MATRIX"));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatScale(M[t], 1.25));
    PetscCall(MatTranspose(M[t], MAT_REUSE_MATRIX, &D[t]));
  }
  PetscCall(Check2(D, "MatTranspose MAT_REUSE_MATRIX"));
  PetscCall(Destroy2(D));
  if (square) {
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatTranspose(M[t], MAT_INPLACE_MATRIX, &M[t]));
    PetscCall(Check2(M, "MatTranspose MAT_INPLACE_MATRIX"));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatTranspose(M[t], MAT_INPLACE_MATRIX, &M[t]));
    PetscCall(Check2(M, "MatTranspose MAT_INPLACE_MATRIX again"));
  }
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatCreateTranspose(M[t], &D[t]));
  PetscCall(Check2(D, "MatCreateTranspose"));
  PetscCall(Destroy2(D));

  /* 11. submatrices: parallel (initial, reuse after a change) and sequential on each process */
  {
    IS       isrow, iscol;
    PetscInt cstart, cend, nrow = 0, ncol = 0, *ri, *cj;
    PetscCall(MatGetOwnershipRangeColumn(M[1], &cstart, &cend));
    PetscCall(PetscMalloc1(rend - rstart + 1, &ri));
    PetscCall(PetscMalloc1(cend - cstart + 1, &cj));
    for (PetscInt r = rstart; r < rend; r++)
      if (r % 3 != 1) ri[nrow++] = r;
    for (PetscInt c = cstart; c < cend; c++)
      if (c % 5 != 3) cj[ncol++] = c;
    PetscCall(ISCreateGeneral(comm, nrow, ri, PETSC_OWN_POINTER, &isrow));
    PetscCall(ISCreateGeneral(comm, ncol, cj, PETSC_OWN_POINTER, &iscol));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatCreateSubMatrix(M[t], isrow, iscol, MAT_INITIAL_MATRIX, &D[t]));
    PetscCall(Check2(D, "MatCreateSubMatrix MAT_INITIAL_MATRIX"));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(MatScale(M[t], 0.8));
      PetscCall(MatCreateSubMatrix(M[t], isrow, iscol, MAT_REUSE_MATRIX, &D[t]));
    }
    PetscCall(Check2(D, "MatCreateSubMatrix MAT_REUSE_MATRIX"));
    PetscCall(Destroy2(D));
    PetscCall(ISDestroy(&isrow));
    PetscCall(ISDestroy(&iscol));
  }
  {
    IS   isrow, iscol;
    Mat *S[2];
    PetscCall(ISCreateStride(PETSC_COMM_SELF, PetscMin(10, m - m / 3), m / 3, 1, &isrow));
    PetscCall(ISCreateStride(PETSC_COMM_SELF, n, 0, 1, &iscol));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatCreateSubMatrices(M[t], 1, &isrow, &iscol, MAT_INITIAL_MATRIX, &S[t]));
    PetscCall(Check(S[0][0], S[1][0], "MatCreateSubMatrices MAT_INITIAL_MATRIX"));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(MatScale(M[t], 0.5));
      PetscCall(MatCreateSubMatrices(M[t], 1, &isrow, &iscol, MAT_REUSE_MATRIX, &S[t]));
    }
    PetscCall(Check(S[0][0], S[1][0], "MatCreateSubMatrices MAT_REUSE_MATRIX"));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatDestroySubMatrices(1, &S[t]));
    PetscCall(ISDestroy(&isrow));
    PetscCall(ISDestroy(&iscol));
  }
  if (square) {
    IS rp, cp;
    PetscInt cstart, cend;
    PetscCall(MatGetOwnershipRangeColumn(M[1], &cstart, &cend));
    PetscCall(ISCreateStride(comm, rend - rstart, rend - 1, -1, &rp));
    PetscCall(ISCreateStride(comm, cend - cstart, cend - 1, -1, &cp));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatPermute(M[t], rp, cp, &D[t]));
    PetscCall(Check2(D, "MatPermute"));
    PetscCall(Destroy2(D));
    PetscCall(ISDestroy(&rp));
    PetscCall(ISDestroy(&cp));
  }

  /* 12. the local blocks: their value arrays directly, and the diagonal block as a matrix changed through its own API */
  for (PetscInt t = 0; t < 2; t++) PetscCall(ArrayAccess(M[t], PETSC_FALSE));
  PetscCall(Check2(M, "MatSeqAIJGetArray/RestoreArray on the local blocks"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(ArrayAccess(M[t], PETSC_TRUE));
  PetscCall(Check2(M, "MatSeqAIJGetArrayWrite/RestoreArrayWrite on the local blocks"));
  if (square && cong) {
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatGetDiagonalBlock(M[t], &D[t]));
    PetscCall(Check2(D, "MatGetDiagonalBlock"));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatScale(D[t], 2.0));
    PetscCall(Check2(M, "MatScale of the diagonal block (MatGetDiagonalBlock)"));
  }
  if (size > 1) {
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatMPIAIJGetLocalMat(M[t], MAT_INITIAL_MATRIX, &D[t]));
    PetscCall(Check(D[0], D[1], "MatMPIAIJGetLocalMat MAT_INITIAL_MATRIX"));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(MatScale(M[t], 1.5));
      PetscCall(MatMPIAIJGetLocalMat(M[t], MAT_REUSE_MATRIX, &D[t]));
    }
    PetscCall(Check(D[0], D[1], "MatMPIAIJGetLocalMat MAT_REUSE_MATRIX"));
    PetscCall(Destroy2(D));
  }

  /* 13. COO assembly: a matrix made by MatSetPreallocationCOO(), its values set, added and set again */
  {
    PetscCount   ncoo;
    PetscInt    *ci, *cj;
    PetscScalar *cv;
    PetscCall(COOEntries(M[1], &ncoo, &ci, &cj, &cv));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(BuildCOO(M[t], type[t], ncoo, ci, cj, &D[t]));
      PetscCall(MatSetValuesCOO(D[t], cv, INSERT_VALUES));
    }
    PetscCall(Check2(D, "MatSetPreallocationCOO, MatSetValuesCOO INSERT_VALUES"));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatSetValuesCOO(D[t], cv, ADD_VALUES));
    PetscCall(Check2(D, "MatSetValuesCOO ADD_VALUES"));
    for (PetscCount q = 0; q < ncoo; q++) cv[q] = -cv[q] + 0.125;
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatSetValuesCOO(D[t], cv, INSERT_VALUES));
    PetscCall(Check2(D, "MatSetValuesCOO INSERT_VALUES again"));
    {
      /* the values in the memory of the tested type's vectors (device memory for a GPU type) */
      Vec                vv;
      VecType            vt;
      PetscScalar       *h;
      const PetscScalar *dv;
      PetscMemType       mt;
      PetscInt           nloc;

      PetscCall(PetscIntCast((PetscInt64)ncoo, &nloc));
      PetscCall(MatGetVecType(D[1], &vt));
      PetscCall(VecCreate(PETSC_COMM_SELF, &vv));
      PetscCall(VecSetSizes(vv, nloc, nloc));
      PetscCall(VecSetType(vv, vt));
      for (PetscCount q = 0; q < ncoo; q++) cv[q] = 2.0 * cv[q] - 0.25;
      PetscCall(VecGetArrayWrite(vv, &h));
      PetscCall(PetscArraycpy(h, cv, ncoo));
      PetscCall(VecRestoreArrayWrite(vv, &h));
      PetscCall(VecGetArrayReadAndMemType(vv, &dv, &mt));
      PetscCall(MatSetValuesCOO(D[0], cv, INSERT_VALUES));
      PetscCall(MatSetValuesCOO(D[1], dv, INSERT_VALUES));
      PetscCall(Check2(D, "MatSetValuesCOO INSERT_VALUES, values in the vectors' memory"));
      PetscCall(MatSetValuesCOO(D[0], cv, ADD_VALUES));
      PetscCall(MatSetValuesCOO(D[1], dv, ADD_VALUES));
      PetscCall(Check2(D, "MatSetValuesCOO ADD_VALUES, values in the vectors' memory"));
      PetscCall(VecRestoreArrayReadAndMemType(vv, &dv));
      PetscCall(VecDestroy(&vv));
    }
    PetscCall(Destroy2(D));
    PetscCall(PetscFree3(ci, cj, cv));
  }

  /* 14. parts, random values, values chopped */
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatRealPart(M[t]));
  PetscCall(Check2(M, "MatRealPart"));
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatConjugate(M[t]));
  PetscCall(Check2(M, "MatConjugate"));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(MatDuplicate(M[t], MAT_COPY_VALUES, &D[t]));
    PetscCall(MatImaginaryPart(D[t]));
  }
  PetscCall(Check2(D, "MatImaginaryPart of a duplicate"));
  PetscCall(Destroy2(D));
  for (PetscInt t = 0; t < 2; t++) {
    PetscRandom r;
    PetscCall(PetscRandomCreate(comm, &r));
    PetscCall(PetscRandomSetSeed(r, 41));
    PetscCall(PetscRandomSeed(r));
    PetscCall(MatSetRandom(M[t], r));
    PetscCall(PetscRandomDestroy(&r));
  }
  PetscCall(Check2(M, "MatSetRandom"));
  for (PetscInt t = 0; t < 2; t++) {
#if PETSC_VERSION_LT(3, 20, 0)
    PetscCall(MatChop(M[t], 0.3));
#else
    PetscCall(MatFilter(M[t], 0.3, PETSC_FALSE, PETSC_FALSE));
#endif
  }
  PetscCall(Check2(M, "MatChop / MatFilter"));
  if (square) {
    for (PetscInt t = 0; t < 2; t++) PetscCall(Shift(M[t], 4.0));
    PetscCall(Check2(M, "MatShift after chopping"));
  }

  /* 15. products: of the matrix with itself (initial, reuse after a change), P^T A P, with a dense matrix */
  if (square) {
    Mat P[2];
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatMatMult(M[t], M[t], MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D[t]));
    PetscCall(Check2(D, "MatMatMult MAT_INITIAL_MATRIX"));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(MatScale(M[t], -0.5));
      PetscCall(MatMatMult(M[t], M[t], MAT_REUSE_MATRIX, PETSC_DEFAULT, &D[t]));
    }
    PetscCall(Check2(D, "MatMatMult MAT_REUSE_MATRIX"));
    PetscCall(Destroy2(D));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(BuildProlongator(M[t], type[t], &P[t]));
      PetscCall(MatPtAP(M[t], P[t], MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D[t]));
    }
    PetscCall(Check2(P, "the prolongator"));
    PetscCall(Check2(D, "MatPtAP MAT_INITIAL_MATRIX"));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(Shift(M[t], 1.0));
      PetscCall(MatPtAP(M[t], P[t], MAT_REUSE_MATRIX, PETSC_DEFAULT, &D[t]));
    }
    PetscCall(Check2(D, "MatPtAP MAT_REUSE_MATRIX"));
    PetscCall(Destroy2(D));
    PetscCall(Destroy2(P));
  }
  for (PetscInt t = 0; t < 2; t++) PetscCall(MatTransposeMatMult(M[t], M[t], MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D[t]));
  PetscCall(Check2(D, "MatTransposeMatMult MAT_INITIAL_MATRIX"));
  PetscCall(Destroy2(D));
  {
    Mat         B;
    PetscInt    nloc;
    PetscRandom r;
    PetscCall(MatGetLocalSize(M[1], NULL, &nloc));
    PetscCall(MatCreateDense(comm, nloc, PETSC_DECIDE, n, 3, NULL, &B));
    PetscCall(PetscRandomCreate(comm, &r));
    PetscCall(MatSetRandom(B, r));
    PetscCall(PetscRandomDestroy(&r));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatMatMult(M[t], B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D[t]));
    PetscCall(Check2(D, "MatMatMult with a dense matrix"));
    PetscCall(Destroy2(D));
    PetscCall(MatDestroy(&B));
  }
  if (bs > 1 && square) {
    const PetscScalar *v[2];
    PetscInt           nb;
    PetscReal          err = 0.0, ref = 0.0;
    PetscCall(MatGetLocalSize(M[1], &nb, NULL));
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatInvertBlockDiagonal(M[t], &v[t]));
    for (PetscInt q = 0; q < nb * bs; q++) {
      err = PetscMax(err, PetscAbsScalar(v[1][q] - v[0][q]));
      ref = PetscMax(ref, PetscAbsScalar(v[0][q]));
    }
    PetscCall(PetscStrncpy(stepname, "MatInvertBlockDiagonal", sizeof(stepname)));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPIU_REAL, MPIU_MAX, comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ref, 1, MPIU_REAL, MPIU_MAX, comm));
    PetscCall(CompareReal(comm, ref + err, ref, "MatInvertBlockDiagonal"));
  }

  /* 16. a new matrix, its preallocation reset after the first assembly and the matrix assembled again */
  PetscCall(Destroy2(M));
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(Build(G, type[t], NULL, &M[t]));
    PetscCall(MatResetPreallocation(M[t]));
    PetscCall(SetRows(G, M[t], 1, 0, 2.0, 0.0, INSERT_VALUES));
    PetscCall(Assemble(M[t], MAT_FINAL_ASSEMBLY));
  }
  PetscCall(Check2(M, "MatResetPreallocation, MatSetValues, MatAssemblyEnd"));

  /* 17. values through a local numbering (MatSetValuesLocal, MatZeroRowsLocal), conversions through other formats,
         more products */
  {
    ISLocalToGlobalMapping rmap, cmap;
    PetscInt              *ri, *ci, cstart, cend;
    PetscCall(MatGetOwnershipRangeColumn(M[1], &cstart, &cend));
    PetscCall(PetscMalloc1(rend - rstart, &ri));
    PetscCall(PetscMalloc1(n, &ci));
    for (PetscInt r = rstart; r < rend; r++) ri[r - rstart] = rend - 1 - (r - rstart); /* local rows numbered backwards */
    for (PetscInt c = 0; c < n; c++) ci[c] = (c + cstart) % n;                          /* local columns from the first owned */
    PetscCall(ISLocalToGlobalMappingCreate(comm, 1, rend - rstart, ri, PETSC_OWN_POINTER, &rmap));
    PetscCall(ISLocalToGlobalMappingCreate(comm, 1, n, ci, PETSC_OWN_POINTER, &cmap));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(MatSetLocalToGlobalMapping(M[t], rmap, cmap));
      for (PetscInt lr = 0; lr < rend - rstart; lr += 2) {
        PetscInt           r = rend - 1 - lr, nc, *lc;
        const PetscInt    *cols;
        const PetscScalar *vals;
        PetscScalar       *v;
        PetscCall(MatGetRow(G, r, &nc, &cols, &vals));
        PetscCall(PetscMalloc2(nc, &lc, nc, &v));
        for (PetscInt q = 0; q < nc; q++) {
          lc[q] = (cols[q] - cstart + n) % n;
          v[q]  = 0.5 * vals[q];
        }
        PetscCall(MatRestoreRow(G, r, NULL, &cols, &vals));
        PetscCall(MatSetValuesLocal(M[t], 1, &lr, nc, lc, v, ADD_VALUES));
        PetscCall(PetscFree2(lc, v));
      }
      PetscCall(Assemble(M[t], MAT_FINAL_ASSEMBLY));
    }
    PetscCall(Check2(M, "MatSetValuesLocal ADD_VALUES"));
    {
      PetscInt lrows[2] = {0, (rend - rstart) / 2}, nl = rend - rstart > 1 ? 2 : rend - rstart;
      for (PetscInt t = 0; t < 2; t++) PetscCall(MatZeroRowsLocal(M[t], nl, lrows, 0.0, NULL, NULL));
      PetscCall(Check2(M, "MatZeroRowsLocal"));
    }
    PetscCall(ISLocalToGlobalMappingDestroy(&rmap));
    PetscCall(ISLocalToGlobalMappingDestroy(&cmap));
  }
  for (PetscInt t = 0; t < 2; t++) {
    /* through a format without a converter from the type: MatConvert_Basic() both ways for csrk */
    Mat O;
    PetscCall(MatConvert(M[t], MATDENSE, MAT_INITIAL_MATRIX, &O));
    PetscCall(MatConvert(O, type[t], MAT_INITIAL_MATRIX, &D[t]));
    PetscCall(MatDestroy(&O));
  }
  PetscCall(Check2(D, "MatConvert to dense and back"));
  PetscCall(Destroy2(D));
  if (size == 1) { /* PETSc 3.18's MPIAIJ A B^T writes out of bounds (valgrind, aij itself), and refuses rectangular A */
    for (PetscInt t = 0; t < 2; t++) PetscCall(MatMatTransposeMult(M[t], M[t], MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D[t]));
    PetscCall(Check2(D, "MatMatTransposeMult MAT_INITIAL_MATRIX"));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(MatScale(M[t], 0.75));
      PetscCall(MatMatTransposeMult(M[t], M[t], MAT_REUSE_MATRIX, PETSC_DEFAULT, &D[t]));
    }
    PetscCall(Check2(D, "MatMatTransposeMult MAT_REUSE_MATRIX"));
    PetscCall(Destroy2(D));
  }
  PetscCall(Destroy2(M));

  /* 18. a matrix given in CSR form (MatSeqAIJSetPreallocationCSR / MatMPIAIJSetPreallocationCSR), then its values
         given again the same way */
  {
    PetscInt    *ia, *ja, nz = 0;
    PetscScalar *va;
    PetscCall(PetscMalloc1(rend - rstart + 1, &ia));
    ia[0] = 0;
    for (PetscInt r = rstart; r < rend; r++) {
      PetscInt nc;
      PetscCall(MatGetRow(G, r, &nc, NULL, NULL));
      ia[r - rstart + 1] = ia[r - rstart] + nc;
      PetscCall(MatRestoreRow(G, r, NULL, NULL, NULL));
    }
    PetscCall(PetscMalloc2(ia[rend - rstart], &ja, ia[rend - rstart], &va));
    for (PetscInt r = rstart; r < rend; r++) {
      PetscInt           nc;
      const PetscInt    *cols;
      const PetscScalar *vals;
      PetscCall(MatGetRow(G, r, &nc, &cols, &vals));
      for (PetscInt q = 0; q < nc; q++, nz++) {
        ja[nz] = cols[q];
        va[nz] = vals[q];
      }
      PetscCall(MatRestoreRow(G, r, NULL, &cols, &vals));
    }
    for (PetscInt pass = 0; pass < 2; pass++) {
      for (PetscInt t = 0; t < 2; t++) {
        if (!pass) {
          PetscInt ml, nl;
          PetscCall(MatGetLocalSize(G, &ml, &nl));
          PetscCall(MatCreate(comm, &M[t]));
          PetscCall(MatSetSizes(M[t], ml, nl, m, n));
          PetscCall(MatSetType(M[t], type[t]));
          PetscCall(MatSetFromOptions(M[t]));
        }
        /* the column indices are global: on one process the local CSR is the whole matrix */
        if (size == 1) PetscCall(MatSeqAIJSetPreallocationCSR(M[t], ia, ja, va));
        else PetscCall(MatMPIAIJSetPreallocationCSR(M[t], ia, ja, va));
      }
      PetscCall(Check2(M, pass ? "MatXXXAIJSetPreallocationCSR again, new values" : "MatXXXAIJSetPreallocationCSR"));
      for (PetscInt q = 0; q < nz; q++) va[q] = -2.0 * va[q] + 0.25;
    }
    PetscCall(PetscFree(ia));
    PetscCall(PetscFree2(ja, va));
  }
  PetscCall(Destroy2(M));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char       *problems[16], *orderings[8];
  char        ctype[64] = MATCSRK, rtype[64] = MATAIJ;
  PetscInt    np = 16, nn = 16, nord = 8, nk = 3, ns[16], ks[3] = {1, 2, 3}, seed = -1, nconf = 0;
  PetscBool   hasp, hasn, haso, hask, ksp = PETSC_TRUE;
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-problem", problems, &np, &hasp));
  if (!hasp) {
    np = 0;
    PetscCall(PetscStrallocpy("lap2d5", &problems[np++]));
    PetscCall(PetscStrallocpy("randrect", &problems[np++]));
  }
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-n", ns, &nn, &hasn));
  if (!hasn) {
    for (PetscInt i = 0; i < np; i++) ns[i] = 12;
    nn = np;
  }
  PetscCheck(nn == np, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "-n needs one size for each of the %" PetscInt_FMT " problems, got %" PetscInt_FMT, np, nn);
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-orderings", orderings, &nord, &haso));
  if (!haso) {
    nord = 0;
    for (PetscInt o = 0; o <= MAT_CSRK_ORDERING_AUTO; o++) PetscCall(PetscStrallocpy(MatCSRKOrderings[o], &orderings[nord++]));
  }
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-ks", ks, &nk, &hask));
  if (!hask) nk = 3;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-permute", &seed, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ctype", ctype, sizeof(ctype), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-rtype", rtype, sizeof(rtype), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-ksp", &ksp, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  type[0] = rtype;
  type[1] = ctype;

  for (PetscInt p = 0; p < np; p++) {
    Mat       G;
    PetscInt  Mg, Ng;
    PetscBool spd, nonsym;
    PetscCall(MatCSRKCreateProblem(PETSC_COMM_WORLD, problems[p], ns[p], 1, &G));
    PetscCall(MatGetSize(G, &Mg, &Ng));
    if (seed >= 0 && Mg == Ng) { /* symmetric permutations of the square problems */
      Mat P;
      PetscCall(MatCSRKPermuteRandom(G, seed, &P));
      PetscCall(MatDestroy(&G));
      G = P;
    }
    /* the solves: CG on the symmetric positive definite stencils, GMRES on the random matrix with a dominant diagonal;
       the other random matrices have empty rows */
    PetscCall(PetscStrbeginswith(problems[p], "lap", &spd));
    if (!spd) PetscCall(PetscStrcmp(problems[p], "elasticity3d", &spd));
    PetscCall(PetscStrcmp(problems[p], "randnodes", &nonsym));
    for (PetscInt o = 0; o < nord; o++)
      for (PetscInt k = 0; k < nk; k++) {
        char kk[8];
        /* as a user gives them on the command line: every matrix MatSetFromOptions() is called on reads them */
        PetscCall(PetscSNPrintf(kk, sizeof(kk), "%" PetscInt_FMT, ks[k]));
        PetscCall(PetscOptionsSetValue(NULL, "-mat_csrk_ordering", orderings[o]));
        PetscCall(PetscOptionsSetValue(NULL, "-mat_csrk_k", kk));
        PetscCall(PetscSNPrintf(config, sizeof(config), "%s -n %" PetscInt_FMT "%s, %s against %s, ordering %s, k %" PetscInt_FMT ", %d processes", problems[p], ns[p], seed >= 0 && Mg == Ng ? " permuted" : "", ctype, rtype, orderings[o], ks[k], size));
        PetscCall(RunSequence(G, spd, nonsym, ksp));
        nconf++;
      }
    PetscCall(MatDestroy(&G));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "apiparity (%s against %s): %" PetscInt_FMT " configurations, %" PetscInt_FMT " steps, %" PetscInt_FMT " checks, %" PetscInt_FMT " failures\n", ctype, rtype, nconf, nsteps, nchecks, nfail));
  for (PetscInt p = 0; p < np; p++) PetscCall(PetscFree(problems[p]));
  for (PetscInt o = 0; o < nord; o++) PetscCall(PetscFree(orderings[o]));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
