static const char help[] = "Conversions and changes of values and pattern: after every step the csrk matrix multiplies like an aij matrix that went through the same step.\n"
                           "  -problem <name> -n <n> | -f <file>, plus any -mat_csrk_* option for the csrk matrices\n"
                           "  -permute <seed>: a random symmetric permutation first (-permute_bs <bs>: of runs of bs rows)\n"
                           "  -rcm_wait <n>: only values changed and shifted while the products that the auto ordering's RCM copy waits\n"
                           "                 for run (csrkcuda, set-up budget), then products until it was made (at most n)\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>
#include "testutil.h"
#if defined(PETSC_HAVE_CUDA)
  #include <petscdevice_cuda.h>
#endif

static PetscInt nfail = 0, nchecks = 0;
static char     ctype[64] = MATCSRK, seqtype[64], mpitype[64];

/* products of C against those of A, outputs poisoned with NaN first */
static PetscErrorCode Check(Mat A, Mat C, const char *step)
{
  Vec       x, y, yref;
  PetscReal err;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(C, &x, &yref)); /* vectors of the tested type: device vectors for csrkcuda */
  PetscCall(VecDuplicate(yref, &y));
  {
    PetscRandom rnd;
    PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)A), &rnd));
    PetscCall(PetscRandomSetSeed(rnd, 17));
    PetscCall(PetscRandomSeed(rnd));
    PetscCall(VecSetRandom(x, rnd));
    PetscCall(PetscRandomDestroy(&rnd));
  }
  PetscCall(MatMult(A, x, yref));
  PetscCall(VecSet(y, (PetscScalar)NAN));
  PetscCall(MatMult(C, x, y));
  PetscCall(TestRelativeError(y, yref, &err));
  nchecks++;
  if (!(err <= 1e-12)) {
    nfail++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: relative error of MatMult %g\n", step, (double)err));
  }
  {
    /* the transpose and the diagonal too: their device copies follow value changes as well */
    Vec      xt, yt, ytref;
    PetscInt M, N;
    PetscCall(MatCreateVecs(C, &yt, &xt));
    PetscCall(VecDuplicate(yt, &ytref));
    PetscCall(VecCopy(yref, xt));
    PetscCall(MatMultTranspose(A, xt, ytref));
    PetscCall(VecSet(yt, (PetscScalar)NAN));
    PetscCall(MatMultTranspose(C, xt, yt));
    PetscCall(TestRelativeError(yt, ytref, &err));
    nchecks++;
    if (!(err <= 1e-12)) {
      nfail++;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: relative error of MatMultTranspose %g\n", step, (double)err));
    }
    PetscCall(MatGetSize(C, &M, &N));
    if (M == N) {
      PetscCall(MatGetDiagonal(A, yref));
      PetscCall(VecSet(y, (PetscScalar)NAN));
      PetscCall(MatGetDiagonal(C, y));
      PetscCall(TestRelativeError(y, yref, &err));
      nchecks++;
      if (!(err <= 1e-14)) {
        nfail++;
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: relative error of MatGetDiagonal %g\n", step, (double)err));
      }
    }
    PetscCall(VecDestroy(&xt));
    PetscCall(VecDestroy(&yt));
    PetscCall(VecDestroy(&ytref));
  }
  /* and the inherited AIJ side holds the same matrix (MatEqual would need equal ghost columns on every process) */
  {
    Mat       Dm;
    PetscReal nd, na;
    PetscCall(MatConvert(C, MATAIJ, MAT_INITIAL_MATRIX, &Dm));
    PetscCall(MatAXPY(Dm, -1.0, A, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatNorm(Dm, NORM_FROBENIUS, &nd));
    PetscCall(MatNorm(A, NORM_FROBENIUS, &na));
    PetscCall(MatDestroy(&Dm));
    nchecks++;
    if (!(nd <= 1e-14 * PetscMax(na, PETSC_SMALL))) {
      nfail++;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: stored values differ by %g\n", step, (double)nd));
    }
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Expect(PetscBool cond, const char *what)
{
  PetscFunctionBegin;
  nchecks++;
  if (!cond) {
    nfail++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s\n", what));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the bytes the device's default memory pool holds (0 without CUDA): PETSc keeps them for the process, so the set-ups
   and refreshes of csrkcuda must leave it as they found it (their scratch has a pool of its own) */
static PetscErrorCode PoolReserved(size_t *r)
{
  PetscFunctionBegin;
  *r = 0;
#if defined(PETSC_HAVE_CUDA)
  {
    int                dev;
    cudaMemPool_t      pool;
    unsigned long long v = 0;

    PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
    PetscCallCUDA(cudaGetDevice(&dev));
    PetscCallCUDA(cudaDeviceGetDefaultMemPool(&pool, dev));
    PetscCallCUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &v));
    *r = (size_t)v;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ExpectType(Mat M, const char *seqtype, const char *mpitype, const char *what)
{
  PetscMPIInt size;
  PetscBool   same;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)M), &size));
  PetscCall(PetscObjectTypeCompare((PetscObject)M, size == 1 ? seqtype : mpitype, &same));
  PetscCall(Expect(same, what));
  if (size > 1) {
    /* the blocks follow the parent type */
    Mat       Ad, Ao;
    PetscBool s1, s2;
    PetscCall(MatMPIAIJGetSeqAIJ(M, &Ad, &Ao, NULL));
    PetscCall(PetscObjectTypeCompare((PetscObject)Ad, seqtype, &s1));
    PetscCall(PetscObjectTypeCompare((PetscObject)Ao, seqtype, &s2));
    PetscCall(Expect((PetscBool)(s1 && s2), what));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Same local change of values on both: a row of A scaled and re-inserted through MatSetValues (the rows read from a
   copy: MatGetRow() refuses a matrix that MatSetValues() has made unassembled) */
static PetscErrorCode ChangeValues(Mat M, PetscScalar factor, PetscBool newentry)
{
  PetscInt rstart, rend, N;
  Mat      S;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(M, &rstart, &rend));
  PetscCall(MatGetSize(M, NULL, &N));
  PetscCall(MatDuplicate(M, MAT_COPY_VALUES, &S));
  for (PetscInt r = rstart; r < rend; r += 3) {
    PetscInt           ncols;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt          *c;
    PetscScalar       *v;
    PetscCall(MatGetRow(S, r, &ncols, &cols, &vals));
    PetscCall(PetscMalloc2(ncols, &c, ncols, &v));
    for (PetscInt q = 0; q < ncols; q++) {
      c[q] = cols[q];
      v[q] = factor * vals[q] + 0.25;
    }
    PetscCall(MatRestoreRow(S, r, NULL, &cols, &vals)); /* MatRestoreRow() sets its count to 0 */
    PetscCall(MatSetValues(M, 1, &r, ncols, c, v, INSERT_VALUES));
    PetscCall(PetscFree2(c, v));
  }
  if (newentry) {
    /* new nonzeros in every process's diagonal block (the first column half a block away that the row lacks: on a
       stencil of a few planes a rank, half a block away may be a neighbour already) and far away */
    for (PetscInt r = rstart; r < rend; r += 97) {
      const PetscInt  nloc = rend - rstart;
      const PetscInt *cols;
      PetscInt        ncols, c = rstart + (r - rstart + nloc / 2) % nloc, tries = 0;
      PetscBool       present = PETSC_TRUE;

      PetscCall(MatGetRow(S, r, &ncols, &cols, NULL));
      while (present && tries++ < nloc) {
        present = PETSC_FALSE;
        for (PetscInt q = 0; q < ncols && !present; q++) present = (PetscBool)(cols[q] == c);
        if (present) c = rstart + (c - rstart + 1) % nloc;
      }
      PetscCall(MatRestoreRow(S, r, &ncols, &cols, NULL));
      PetscCall(MatSetValue(M, r, c, 0.5, INSERT_VALUES));
      PetscCall(MatSetValue(M, r, (r + N / 2 + 1) % N, 0.5, INSERT_VALUES));
    }
  }
  PetscCall(MatDestroy(&S));
  PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Direct array access of the local diagonal block */
static PetscErrorCode ScaleArray(Mat M, PetscScalar s)
{
  Mat          Ad = M;
  PetscScalar *a;
  PetscInt     nz;
  PetscMPIInt  size;
  MatInfo      info;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)M), &size));
  if (size > 1) PetscCall(MatMPIAIJGetSeqAIJ(M, &Ad, NULL, NULL));
  PetscCall(MatGetInfo(Ad, MAT_LOCAL, &info));
  nz = (PetscInt)info.nz_used;
  PetscCall(MatSeqAIJGetArray(Ad, &a));
  for (PetscInt q = 0; q < nz; q++) a[q] *= s;
  PetscCall(MatSeqAIJRestoreArray(Ad, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the copy that waits for its RCM order keeps values changed and shifted before it is made, and after: plain products
   until the copy is made (a check is two products, at most rcmwait), then the check compares the RCM copy, made from
   the values changed and shifted while it waited */
static PetscErrorCode CheckRcmWait(Mat A, Mat C, PetscInt rcmwait)
{
  PetscBool   made = PETSC_FALSE;
  MatCSRKInfo info;
  Vec         x, y;

  PetscFunctionBeginUser;
  PetscCall(Check(A, C, "before the RCM copy"));
  PetscCall(ChangeValues(A, 1.25, PETSC_FALSE));
  PetscCall(ChangeValues(C, 1.25, PETSC_FALSE));
  PetscCall(MatShift(A, 0.5));
  PetscCall(MatShift(C, 0.5));
  PetscCall(Check(A, C, "values changed and shifted while the RCM copy waits"));
  PetscCall(MatCreateVecs(C, &x, &y));
  PetscCall(VecSet(x, 1.0));
  for (PetscInt i = 0; i < rcmwait && !made; i++) {
    PetscCall(MatMult(C, x, y));
    PetscCall(MatCSRKGetInfo(C, &info));
    made = (PetscBool)(info.ordering == MAT_CSRK_ORDERING_RCM);
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(Expect(made, "the RCM copy made after the products it waits for"));
  PetscCall(Check(A, C, "the RCM copy of values changed while it waited"));
  PetscCall(MatShift(A, -0.25));
  PetscCall(MatShift(C, -0.25));
  PetscCall(Check(A, C, "shifted in RCM order"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat         A, C, D, E;
  char        file[PETSC_MAX_PATH_LEN] = "", problem[64] = "lap3d7";
  PetscInt    n = 10, m, rstart, rend;
  PetscBool   hasfile;
  PetscInt    rcmwait = 0;
  MatCSRKInfo info, info2;
  Vec         l, r;
  PetscBool   iscuda;
  size_t      pool0 = 0, pool1 = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ctype", ctype, sizeof(ctype), NULL));
  PetscCall(PetscSNPrintf(seqtype, sizeof(seqtype), "seqaij%s", ctype));
  PetscCall(PetscSNPrintf(mpitype, sizeof(mpitype), "mpiaij%s", ctype));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-rcm_wait", &rcmwait, NULL));
  PetscCall(TestCreateMatrix(hasfile ? file : NULL, problem, n, &A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetSize(A, &m, NULL));

  /* 1. conversions aij -> csrk: initial, reuse, in place; MatSetType on an assembled aij */
  PetscCall(MatConvert(A, ctype, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatSetFromOptions(C));
  if (rcmwait > 0) { /* 0. the waiting path alone on its large block: the sections below run on the small problems */
    PetscCall(CheckRcmWait(A, C, rcmwait));
    goto summary;
  }
  PetscCall(ExpectType(C, seqtype, mpitype, "MatConvert(aij, csrk, MAT_INITIAL_MATRIX) type"));
  PetscCall(PetscStrcmp(ctype, "csrkcuda", &iscuda));
  if (iscuda) { /* the pool as the device vectors of the checks leave it, before C's first set-up */
    PetscCall(MatCreateVecs(C, &r, &l));
    PetscCall(VecSet(r, 1.0));
    PetscCall(VecSet(l, 2.0));
    PetscCall(VecDestroy(&r));
    PetscCall(VecDestroy(&l));
    PetscCall(PoolReserved(&pool0));
  }
  PetscCall(Check(A, C, "MatConvert initial"));
  PetscCall(MatScale(A, 2.0));
  PetscCall(MatConvert(A, ctype, MAT_REUSE_MATRIX, &C));
  PetscCall(Check(A, C, "MatConvert reuse"));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(MatConvert(D, ctype, MAT_INPLACE_MATRIX, &D));
  PetscCall(ExpectType(D, seqtype, mpitype, "MatConvert in place type"));
  PetscCall(Check(A, D, "MatConvert in place"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(MatSetType(D, ctype));
  PetscCall(ExpectType(D, seqtype, mpitype, "MatSetType(assembled aij, csrk) type"));
  PetscCall(Check(A, D, "MatSetType on an assembled aij keeps the values"));
  PetscCall(MatDestroy(&D));

  /* 2. conversions csrk -> aij: initial, reuse, in place */
  PetscCall(MatConvert(C, MATAIJ, MAT_INITIAL_MATRIX, &D));
  PetscCall(ExpectType(D, MATSEQAIJ, MATMPIAIJ, "MatConvert(csrk, aij) type"));
  PetscCall(Check(A, D, "csrk -> aij initial"));
  PetscCall(MatConvert(C, MATAIJ, MAT_REUSE_MATRIX, &D));
  PetscCall(Check(A, D, "csrk -> aij reuse"));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDuplicate(C, MAT_COPY_VALUES, &D));
  PetscCall(ExpectType(D, seqtype, mpitype, "MatDuplicate type"));
  PetscCall(Check(A, D, "MatDuplicate"));
  PetscCall(MatConvert(D, MATAIJ, MAT_INPLACE_MATRIX, &D));
  PetscCall(ExpectType(D, MATSEQAIJ, MATMPIAIJ, "csrk -> aij in place type"));
  PetscCall(Check(A, D, "csrk -> aij in place"));
  PetscCall(MatConvert(D, ctype, MAT_INPLACE_MATRIX, &D));
  PetscCall(Check(A, D, "aij -> csrk -> aij -> csrk"));
  PetscCall(MatDestroy(&D));

  /* 3. same pattern, new values: refreshed, not re-ordered */
  PetscCall(MatCSRKGetInfo(C, &info));
  PetscCall(ChangeValues(A, 1.5, PETSC_FALSE));
  PetscCall(ChangeValues(C, 1.5, PETSC_FALSE));
  PetscCall(Check(A, C, "MatSetValues + assembly, same pattern"));
  PetscCall(MatCSRKGetInfo(C, &info2));
  PetscCall(Expect((PetscBool)(info2.nbuilds == info.nbuilds && info2.nrefresh > info.nrefresh), "same pattern refreshes values without a rebuild"));

  /* 4. new pattern: rebuilt */
  PetscCall(ChangeValues(A, 0.5, PETSC_TRUE));
  PetscCall(ChangeValues(C, 0.5, PETSC_TRUE));
  PetscCall(Check(A, C, "MatSetValues + assembly, new nonzeros"));
  PetscCall(MatCSRKGetInfo(C, &info));
  PetscCall(Expect((PetscBool)(info.nbuilds > info2.nbuilds), "a new pattern rebuilds the structure"));

  /* 5. operations that change values */
  PetscCall(MatScale(A, -0.75));
  PetscCall(MatScale(C, -0.75));
  PetscCall(Check(A, C, "MatScale"));
  PetscCall(MatShift(A, 3.0));
  PetscCall(MatShift(C, 3.0));
  PetscCall(Check(A, C, "MatShift"));
  {
    /* the GPU type bound to the CPU multiplies on the host; unbound again, its device copy takes the values changed
       meanwhile */
    if (iscuda) {
      MatCSRKInfo i0, i1;
      /* the device copy current before: the same operation runs on it, nothing is uploaded again */
      PetscCall(MatCSRKGetInfo(C, &i0));
      PetscCall(MatScale(A, 0.5));
      PetscCall(MatScale(C, 0.5));
      PetscCall(Check(A, C, "MatScale of a current device copy"));
      PetscCall(MatShift(A, -1.0));
      PetscCall(MatShift(C, -1.0));
      PetscCall(Check(A, C, "MatShift of a current device copy"));
      PetscCall(MatCSRKGetInfo(C, &i1));
      PetscCall(Expect((PetscBool)(i1.nrefresh == i0.nrefresh && i1.nbuilds == i0.nbuilds), "MatScale and MatShift keep the device copy current (no upload)"));
      PetscCall(MatBindToCPU(C, PETSC_TRUE));
      PetscCall(Check(A, C, "MatBindToCPU(true)"));
      PetscCall(MatScale(A, 1.25));
      PetscCall(MatScale(C, 1.25));
      PetscCall(Check(A, C, "MatScale while bound to the CPU"));
      PetscCall(MatBindToCPU(C, PETSC_FALSE));
      PetscCall(Check(A, C, "MatBindToCPU(false) after new values"));
      PetscCall(PoolReserved(&pool1));
      PetscCall(Expect((PetscBool)(pool1 <= pool0), "set-ups and refreshes leave the device's default memory pool as they found it"));
      if (pool1 > pool0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  the pool held %g MiB before C's first set-up, %g MiB after its refreshes\n", pool0 / 1048576.0, pool1 / 1048576.0));
    }
  }
  PetscCall(MatCreateVecs(A, &r, &l));
  {
    PetscScalar *a;
    PetscInt     nl, nr;
    PetscCall(VecGetLocalSize(l, &nl));
    PetscCall(VecGetLocalSize(r, &nr));
    PetscCall(VecGetArray(l, &a));
    for (PetscInt q = 0; q < nl; q++) a[q] = 1.0 + 0.01 * (q % 7);
    PetscCall(VecRestoreArray(l, &a));
    PetscCall(VecGetArray(r, &a));
    for (PetscInt q = 0; q < nr; q++) a[q] = 2.0 - 0.03 * (q % 5);
    PetscCall(VecRestoreArray(r, &a));
  }
  PetscCall(MatDiagonalScale(A, l, r));
  PetscCall(MatDiagonalScale(C, l, r));
  PetscCall(Check(A, C, "MatDiagonalScale"));
  PetscCall(MatDiagonalSet(A, l, ADD_VALUES));
  PetscCall(MatDiagonalSet(C, l, ADD_VALUES));
  PetscCall(Check(A, C, "MatDiagonalSet"));
  PetscCall(VecDestroy(&l));
  PetscCall(VecDestroy(&r));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  {
    PetscInt rows[3], nr = 0;
    for (PetscInt q = rstart; q < rend && nr < 3; q += 5) rows[nr++] = q;
    PetscCall(MatZeroRows(A, nr, rows, 4.0, NULL, NULL));
    PetscCall(MatZeroRows(C, nr, rows, 4.0, NULL, NULL));
    PetscCall(Check(A, C, "MatZeroRows"));
  }
  PetscCall(ScaleArray(A, 0.5));
  PetscCall(ScaleArray(C, 0.5));
  PetscCall(Check(A, C, "MatSeqAIJGetArray/RestoreArray"));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &E));
  PetscCall(MatScale(E, 0.1));
  PetscCall(MatAXPY(A, 2.0, E, SAME_NONZERO_PATTERN));
  PetscCall(MatAXPY(C, 2.0, E, SAME_NONZERO_PATTERN));
  PetscCall(Check(A, C, "MatAXPY"));
  PetscCall(MatCopy(E, A, SAME_NONZERO_PATTERN));
  PetscCall(MatCopy(E, C, SAME_NONZERO_PATTERN));
  PetscCall(Check(A, C, "MatCopy"));
  PetscCall(MatDestroy(&E));
  PetscCall(MatZeroEntries(A));
  PetscCall(MatZeroEntries(C));
  PetscCall(Check(A, C, "MatZeroEntries"));
  PetscCall(ChangeValues(A, 1.0, PETSC_FALSE));
  PetscCall(ChangeValues(C, 1.0, PETSC_FALSE));
  PetscCall(Check(A, C, "values after MatZeroEntries"));

  /* 6. MatView/MatLoad in PETSc binary into a csrk matrix */
  {
    PetscViewer v;
    char        name[64];
    int         pid = (int)getpid();

    /* a file of this run's own: tests may run side by side in one folder */
    PetscCallMPI(MPI_Bcast(&pid, 1, MPI_INT, 0, PETSC_COMM_WORLD));
    PetscCall(PetscSNPrintf(name, sizeof(name), "state-test-%d.bin", pid));
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, name, FILE_MODE_WRITE, &v));
    PetscCall(MatView(C, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatCreate(PETSC_COMM_WORLD, &D));
    PetscCall(MatSetType(D, ctype));
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, name, FILE_MODE_READ, &v));
    PetscCall(MatLoad(D, v));
    PetscCall(PetscViewerDestroy(&v));
    {
      PetscMPIInt rank;
      char        info[80];

      PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
      PetscCall(PetscSNPrintf(info, sizeof(info), "%s.info", name));
      if (!rank) (void)(remove(name) + remove(info));
    }
    PetscCall(ExpectType(D, seqtype, mpitype, "MatLoad into csrk type"));
    PetscCall(Check(A, D, "MatLoad"));
    PetscCall(MatDestroy(&D));
  }

  /* 7. MatSetUp without preallocation (hash assembly in PETSc >= 3.19) still ends with CSR-k blocks */
  {
    PetscInt mloc, nloc;
    PetscCall(MatGetLocalSize(A, &mloc, &nloc));
    PetscCall(MatCreate(PETSC_COMM_WORLD, &D));
    PetscCall(MatSetSizes(D, mloc, nloc, PETSC_DETERMINE, PETSC_DETERMINE));
    PetscCall(MatSetType(D, ctype));
    PetscCall(MatSetUp(D));
    for (PetscInt q = rstart; q < rend; q++) {
      PetscInt           nc;
      const PetscInt    *cc;
      const PetscScalar *vc;
      PetscCall(MatGetRow(A, q, &nc, &cc, &vc));
      PetscCall(MatSetValues(D, 1, &q, nc, cc, vc, INSERT_VALUES));
      PetscCall(MatRestoreRow(A, q, &nc, &cc, &vc));
    }
    PetscCall(MatAssemblyBegin(D, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(D, MAT_FINAL_ASSEMBLY));
    PetscCall(ExpectType(D, seqtype, mpitype, "MatSetUp without preallocation: type of matrix and blocks"));
    PetscCall(Check(A, D, "MatSetUp without preallocation"));
    PetscCall(MatDestroy(&D));
  }

  /* 8. MatGetRow through the inherited AIJ methods */
  for (PetscInt q = rstart; q < rend; q += 11) {
    PetscInt           na, nc;
    const PetscInt    *ca, *cc;
    const PetscScalar *va, *vc;
    PetscBool          same = PETSC_TRUE;
    PetscCall(MatGetRow(A, q, &na, &ca, &va));
    PetscCall(MatGetRow(C, q, &nc, &cc, &vc));
    if (na != nc) same = PETSC_FALSE;
    for (PetscInt t = 0; same && t < na; t++)
      if (ca[t] != cc[t] || va[t] != vc[t]) same = PETSC_FALSE;
    PetscCall(MatRestoreRow(A, q, &na, &ca, &va));
    PetscCall(MatRestoreRow(C, q, &nc, &cc, &vc));
    PetscCall(Expect(same, "MatGetRow"));
  }

  /* 9. Band-k as a PETSc ordering of a whole (sequential) problem: a permutation */
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (size == 1) {
      IS              rperm, cperm;
      PetscBool       isperm = PETSC_TRUE;
      PetscInt       *sorted, nr;
      const PetscInt *idx;
      PetscCall(MatGetOrdering(A, MATORDERINGBANDK, &rperm, &cperm));
      PetscCall(ISGetLocalSize(rperm, &nr));
      PetscCall(ISGetIndices(rperm, &idx));
      PetscCall(PetscMalloc1(nr, &sorted));
      PetscCall(PetscArraycpy(sorted, idx, nr));
      PetscCall(PetscSortInt(nr, sorted));
      for (PetscInt q = 0; q < nr; q++)
        if (sorted[q] != q) isperm = PETSC_FALSE;
      PetscCall(PetscFree(sorted));
      PetscCall(ISRestoreIndices(rperm, &idx));
      PetscCall(Expect((PetscBool)(isperm && nr == m), "MatGetOrdering(bandk) gives a permutation"));
      PetscCall(ISDestroy(&rperm));
      PetscCall(ISDestroy(&cperm));
    }
  }

  /* 10. options changed on a built matrix take effect */
  PetscCall(MatCSRKSetLevels(C, 3));
  PetscCall(MatCSRKSetOrdering(C, MAT_CSRK_ORDERING_BANDK));
  PetscCall(Check(A, C, "options changed after assembly (k = 3, bandk)"));
  PetscCall(MatCSRKGetInfo(C, &info));
  { /* the GPU type multiplies in the user's ordering (an ordering applies to its host products only) */
    PetscCall(Expect((PetscBool)(info.k == 3 && (m < 2 || iscuda || info.ordering == MAT_CSRK_ORDERING_BANDK)), "new options in effect"));
  }

summary:
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "state: %" PetscInt_FMT " checks, %" PetscInt_FMT " failures\n", nchecks, nfail));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
