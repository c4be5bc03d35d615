static const char help[] = "MatMult family of csrk against aij, for every ordering and k, with poisoned outputs.\n"
                           "  -f <file.mtx[.gz]> or -problem <lap2d5|lap3d7|lap3d27|elasticity3d|random|randrect|powerlaw|randnodes|fem3d|femelast3d|fem3d-bs<k>> -n <n>\n"
                           "  -permute <seed>: random symmetric permutation first (-permute_bs <bs>: of whole runs of bs rows, which keeps\n"
                           "  the row nodes of a block matrix); -tol <1e-12>\n"
                           "  -ctype <csrk|csrkcuda>: the type tested; -rtype <aij|aijcusparse|csrk>: the reference type; -transpose 0: skip the transposes\n"
                           "  -ref_row_nodes <bool>: row nodes of a csrk reference (set to each configuration's ordering and k)\n"
                           "  -ordering <name>: only that ordering\n"
                           "  -ref_vectors: vectors of the reference type (default: of the tested type, so a GPU type runs on the device)\n"
                           "  -far <d>: also entries (i, i+d) and (i+d, i) for the first row i of each process, d from the diagonal\n"
                           "  -long <len>: also len entries spread over the row block in the first row of each process (one long row)\n"
                           "  -expect_natural_index_bytes <2|4>: the column index width every natural-order configuration must have\n"
                           "  Every configuration of a CPU type is checked for the index width of each block: 16-bit offsets (2 bytes)\n"
                           "  exactly when -mat_csrk_compress_indices is on (default), the block is reordered or has two or more threads,\n"
                           "  and its entries lie within 32767 of the diagonal, else 4; or row patterns (0 bytes)\n"
                           "  where -mat_csrk_row_patterns is on too (default) and the offsets would be allowed but for the bandwidth\n"
                           "  -expect_patterns <0|1>: whether every natural-order configuration must read row patterns\n"
                           "  -expect_nodes <0|1>: whether every natural-order configuration must multiply row nodes (one thread)\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>
#include "testutil.h"

static PetscErrorCode Poison(Vec v)
{
  PetscFunctionBegin;
  PetscCall(VecSet(v, (PetscScalar)NAN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A product op(A) x (+ z) as the check's fallback recomputes it */
typedef struct {
  Mat       A;
  PetscBool transpose;
  Vec       x, z;
} Product;

/* w = op(A) x (+ z), every sum in long double on the host (one process, real scalars): within a few units of the
   last place of the exact product, whatever the order of the sums */
static PetscErrorCode ExactProduct(const Product *p, Vec w)
{
#if !defined(PETSC_USE_COMPLEX)
  PetscInt           m, n, len;
  long double       *acc;
  const PetscScalar *x, *z = NULL;
  PetscScalar       *wa;

  PetscFunctionBegin;
  PetscCall(MatGetSize(p->A, &m, &n));
  len = p->transpose ? n : m;
  PetscCall(PetscCalloc1(len, &acc));
  PetscCall(VecGetArrayRead(p->x, &x));
  for (PetscInt r = 0; r < m; r++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(p->A, r, &nc, &cols, &vals));
    for (PetscInt j = 0; j < nc; j++) {
      if (p->transpose) acc[cols[j]] += (long double)vals[j] * (long double)x[r];
      else acc[r] += (long double)vals[j] * (long double)x[cols[j]];
    }
    PetscCall(MatRestoreRow(p->A, r, &nc, &cols, &vals));
  }
  PetscCall(VecRestoreArrayRead(p->x, &x));
  if (p->z) PetscCall(VecGetArrayRead(p->z, &z));
  PetscCall(VecGetArrayWrite(w, &wa));
  for (PetscInt i = 0; i < len; i++) wa[i] = (PetscScalar)(acc[i] + (z ? (long double)z[i] : 0.0L));
  PetscCall(VecRestoreArrayWrite(w, &wa));
  if (p->z) PetscCall(VecRestoreArrayRead(p->z, &z));
  PetscCall(PetscFree(acc));
  PetscFunctionReturn(PETSC_SUCCESS);
#else
  PetscFunctionBegin;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Real scalars only");
#endif
}

/* Relative error of y against the reference yref, infinite norm; NaN (a poisoned, unwritten entry) fails. Where the
   two differ by more than tol, the product p (NULL: none) is recomputed in long double on one process and y must be
   within tol of that: two correct sums in different orders can differ by more than tol on rows of tens of thousands
   of entries, and a reference type can be wrong (PETSc 3.26's aijcusparse MatMultTransposeAdd with y != z adds the
   previous contents of z). */
static PetscErrorCode Compare(Vec y, Vec yref, const Product *p, const char *what, const char *config, PetscReal tol, PetscInt *nfail)
{
  PetscReal   err, errx = PETSC_MAX_REAL, errr = PETSC_MAX_REAL;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(TestRelativeError(y, yref, &err));
  if (err <= tol) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)y), &size));
  if (p && size == 1 && !PetscDefined(USE_COMPLEX)) {
    Vec w;
    PetscCall(VecDuplicate(yref, &w));
    PetscCall(ExactProduct(p, w));
    PetscCall(TestRelativeError(y, w, &errx));
    PetscCall(TestRelativeError(yref, w, &errr));
    PetscCall(VecDestroy(&w));
    if (errx <= tol) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "note %s %s: %g from the reference, but %g from the product summed in long double (the reference: %g)\n", config, what, (double)err, (double)errx, (double)errr));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  if (errx < PETSC_MAX_REAL) PetscCall(PetscPrintf(PetscObjectComm((PetscObject)y), "FAIL %s %s: relative error %g, %g from the product summed in long double (the reference: %g)\n", config, what, (double)err, (double)errx, (double)errr));
  else PetscCall(PetscPrintf(PetscObjectComm((PetscObject)y), "FAIL %s %s: relative error %g\n", config, what, (double)err));
  (*nfail)++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = C x and friends against the same products of the aij matrix A */
static PetscBool transpose = PETSC_TRUE, ref_vectors = PETSC_FALSE;

static PetscErrorCode CheckProducts(Mat A, Mat C, const char *config, PetscReal tol, PetscInt *nfail)
{
  Vec         x, y, y1, yref, z, xt, yt, yreft, zt;
  PetscRandom rnd;
  PetscBool   same;
  PetscInt    M, N;
  Product     mult, multadd, multt, multtadd;

  PetscFunctionBegin;
  /* the tested type's vectors (device vectors for a GPU type, whose products then run on the device), or with
     -ref_vectors the reference type's (host vectors for aij: a GPU type's host fallback) */
  PetscCall(MatCreateVecs(ref_vectors ? A : C, &x, &yref));
  PetscCall(MatCreateVecs(ref_vectors ? A : C, &xt, &yt));
  PetscCall(VecDuplicate(yref, &y));
  PetscCall(VecDuplicate(yref, &y1));
  PetscCall(VecDuplicate(yref, &z));
  PetscCall(VecDuplicate(xt, &yreft));
  PetscCall(VecDuplicate(xt, &zt));
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)A), &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(z, rnd));
  PetscCall(VecSetRandom(yt, rnd));
  PetscCall(VecSetRandom(zt, rnd));
  mult     = (Product){A, PETSC_FALSE, x, NULL};
  multadd  = (Product){A, PETSC_FALSE, x, z};
  multt    = (Product){A, PETSC_TRUE, yt, NULL};
  multtadd = (Product){A, PETSC_TRUE, yt, zt};

  PetscCall(MatMult(A, x, yref));
  PetscCall(Poison(y));
  PetscCall(MatMult(C, x, y));
  PetscCall(Compare(y, yref, &mult, "MatMult", config, tol, nfail));
  PetscCall(VecCopy(y, y1));
  /* twice: the second product runs on the built structure, and every kernel sums in a fixed order, so it must give
     the same bits */
  PetscCall(Poison(y));
  PetscCall(MatMult(C, x, y));
  PetscCall(Compare(y, yref, &mult, "MatMult (again)", config, tol, nfail));
  PetscCall(VecEqual(y, y1, &same));
  if (!same) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: MatMult (again) differs in its bits from the first product\n", config));
    (*nfail)++;
  }

  PetscCall(MatMultAdd(A, x, z, yref));
  PetscCall(Poison(y));
  PetscCall(MatMultAdd(C, x, z, y));
  PetscCall(Compare(y, yref, &multadd, "MatMultAdd", config, tol, nfail));
  PetscCall(VecCopy(z, y));
  PetscCall(MatMultAdd(C, x, y, y));
  PetscCall(Compare(y, yref, &multadd, "MatMultAdd in place", config, tol, nfail));

  PetscCall(MatGetSize(A, &M, &N));
  if (M == N) {
    PetscCall(MatGetDiagonal(A, yref));
    PetscCall(Poison(y));
    PetscCall(MatGetDiagonal(C, y));
    PetscCall(Compare(y, yref, NULL, "MatGetDiagonal", config, tol, nfail));
  }

  if (!transpose) goto done;
  PetscCall(MatMultTranspose(A, yt, yreft));
  PetscCall(Poison(xt));
  PetscCall(MatMultTranspose(C, yt, xt));
  PetscCall(Compare(xt, yreft, &multt, "MatMultTranspose", config, tol, nfail));
  PetscCall(MatMultTransposeAdd(A, yt, zt, yreft));
  PetscCall(Poison(xt));
  PetscCall(MatMultTransposeAdd(C, yt, zt, xt));
  PetscCall(Compare(xt, yreft, &multtadd, "MatMultTransposeAdd", config, tol, nfail));
done:

  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&y1));
  PetscCall(VecDestroy(&yref));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&yreft));
  PetscCall(VecDestroy(&zt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The column index width of every block of C (the diagonal and off-diagonal blocks of an MPI matrix) against the
   rule; natural > 0: also the width of the whole matrix (MatCSRKGetInfo(): maximum over the diagonal blocks) */
static PetscErrorCode CheckIndexBytes(Mat C, PetscBool compress, PetscBool patterns, PetscInt natural, PetscInt expect_patterns, PetscInt expect_nodes, const char *config, PetscInt *nfail)
{
  Mat         blk[2] = {NULL, NULL};
  PetscMPIInt size;
  PetscInt    bad = 0;
  MatCSRKInfo info;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)C), &size));
  if (size == 1) blk[0] = C;
  else PetscCall(MatMPIAIJGetSeqAIJ(C, &blk[0], &blk[1], NULL));
  for (PetscInt b = 0; b < 2; b++) {
    PetscInt m, expect;
    if (!blk[b]) continue;
    PetscCall(MatCSRKGetInfo(blk[b], &info));
    PetscCall(MatGetLocalSize(blk[b], &m, NULL));
    /* a block of fewer than 2 rows is never reordered, whatever ordering it reports; one thread in the natural order
       runs over the AIJ arrays (32-bit), a reordered copy takes the offsets with any number of threads */
    {
      const PetscBool nat     = (PetscBool)(info.ordering == MAT_CSRK_ORDERING_NATURAL || m < 2);
      const PetscBool allowed = (PetscBool)(compress && (!nat || info.nthreads > 1));
      expect                  = allowed && info.bw_after <= 32767 ? 2 : 4;
      /* row patterns: where the offsets are allowed, whatever the bandwidth, whenever the rows fit the dictionary; one
         thread in the natural order reads them only with row slices */
      if (allowed && patterns && info.npatterns > 0) expect = 0;
      if (compress && patterns && nat && info.nthreads == 1 && info.nsliced > 0) expect = 0;
      if (info.nsliced > 0 && !(patterns && info.npatterns > 0)) {
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: %" PetscInt_FMT " rows in row slices without row patterns\n", config, info.nsliced));
        bad++;
      }
      if (info.nnoderows > 0 && !(info.nthreads == 1 && info.index_bytes > 0)) {
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: %" PetscInt_FMT " rows in row nodes with %" PetscInt_FMT " threads, %" PetscInt_FMT "-byte indices, ordering %s\n", config, info.nnoderows, info.nthreads, info.index_bytes, MatCSRKOrderings[info.ordering]));
        bad++;
      }
      if (!b && nat && expect_nodes >= 0 && (info.nnoderows > 0) != (expect_nodes > 0)) {
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: diagonal block of %" PetscInt_FMT " rows in the natural order %s row nodes (-expect_nodes %" PetscInt_FMT ")\n", config, m, info.nnoderows > 0 ? "has" : "has no", expect_nodes));
        bad++;
      }
      if (!b && nat && expect_patterns >= 0 && (info.npatterns > 0) != (expect_patterns > 0)) {
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: diagonal block of %" PetscInt_FMT " rows in the natural order %s row patterns (-expect_patterns %" PetscInt_FMT ")\n", config, m, info.npatterns > 0 ? "reads" : "does not read", expect_patterns));
        bad++;
      }
    }
    if (info.index_bytes != expect || (expect == 0) != (info.npatterns > 0)) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "FAIL %s: %s block of %" PetscInt_FMT " rows (ordering %s, bandwidth %" PetscInt_FMT ") has %" PetscInt_FMT "-byte column indices, expected %" PetscInt_FMT "\n", config, b ? "off-diagonal" : "diagonal", m,
                            MatCSRKOrderings[info.ordering], info.bw_after, info.index_bytes, expect));
      bad++;
    }
  }
  PetscCall(MatCSRKGetInfo(C, &info));
  if (natural > 0 && info.ordering == MAT_CSRK_ORDERING_NATURAL && info.index_bytes != natural) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL %s: %" PetscInt_FMT "-byte column indices, expected %" PetscInt_FMT " (-expect_natural_index_bytes)\n", config, info.index_bytes, natural));
    bad++;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)C)));
  if (bad) (*nfail)++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* entries (i, i+d) and (i+d, i) for the first row i of each process, where i+d is a row: far from the diagonal */
static PetscErrorCode AddFarEntries(Mat A, PetscInt d)
{
  PetscInt rstart, rend, M, nadd = 0;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &M, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  if (rend > rstart && rstart + d < M) {
    const PetscInt i = rstart, j = rstart + d;
    PetscCall(MatSetValue(A, i, j, -0.5, ADD_VALUES));
    PetscCall(MatSetValue(A, j, i, -0.5, ADD_VALUES));
    nadd = 2;
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nadd, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
  PetscCheck(nadd > 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-far %" PetscInt_FMT ": no row is that far from another", d);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* len entries spread over the process's rows in its first row: one row much longer than the others */
static PetscErrorCode AddLongRow(Mat A, PetscInt len)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCheck(len < rend - rstart, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-long %" PetscInt_FMT ": more entries than the process's %" PetscInt_FMT " rows", len, rend - rstart);
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt t = 0; t < len; t++) PetscCall(MatSetValue(A, rstart, rstart + t * ((rend - rstart) / len), -0.25, ADD_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat       A, C;
  char      file[PETSC_MAX_PATH_LEN] = "", problem[64] = "lap2d5", ctype[64] = MATCSRK, rtype[64] = MATAIJ;
  PetscInt  n = 20, nfail = 0, nconf = 0, kmin = 1, kmax = 3, far = 0, longrow = 0, natural = 0, expect_patterns = -1, expect_nodes = -1;
  PetscReal tol = 1e-12;
  PetscBool hasfile, compress = PETSC_TRUE, patterns = PETSC_TRUE, cpu, ref_nodes = PETSC_TRUE, set_ref_nodes, set_ordering;
  PetscEnum only = (PetscEnum)0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmin", &kmin, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-kmax", &kmax, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ctype", ctype, sizeof(ctype), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-rtype", rtype, sizeof(rtype), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-transpose", &transpose, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-ref_vectors", &ref_vectors, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-far", &far, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-long", &longrow, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_natural_index_bytes", &natural, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_csrk_compress_indices", &compress, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_csrk_row_patterns", &patterns, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_patterns", &expect_patterns, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_nodes", &expect_nodes, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-ref_row_nodes", &ref_nodes, &set_ref_nodes));
  PetscCall(PetscOptionsGetEnum(NULL, NULL, "-ordering", MatCSRKOrderings, &only, &set_ordering));
  cpu = (PetscBool)!strstr(ctype, "cuda"); /* the GPU types keep 32-bit columns for the CPU kernels */
  PetscCall(TestCreateMatrix(hasfile ? file : NULL, problem, n, &A));
  if (far > 0) PetscCall(AddFarEntries(A, far));
  if (longrow > 0) PetscCall(AddLongRow(A, longrow));
  PetscCall(MatConvert(A, rtype, MAT_INPLACE_MATRIX, &A));
  if (set_ref_nodes) PetscCall(MatCSRKSetFeature(A, MAT_CSRK_ROW_NODES, ref_nodes)); /* a CSR-k reference (-rtype) with or without row nodes */

  for (PetscInt o = 0; o <= MAT_CSRK_ORDERING_AUTO; o++)
    if (!set_ordering || o == (PetscInt)only)
      for (PetscInt k = kmin; k <= kmax; k++) {
        char config[128];
        PetscCall(PetscSNPrintf(config, sizeof(config), "ordering=%s k=%" PetscInt_FMT, MatCSRKOrderings[o], k));
        /* options set before the first product, and changed on a built matrix */
        PetscCall(MatConvert(A, ctype, MAT_INITIAL_MATRIX, &C));
        PetscCall(MatCSRKSetOrdering(C, (MatCSRKOrdering)o));
        PetscCall(MatCSRKSetLevels(C, k));
        PetscCall(MatSetFromOptions(C)); /* command-line -mat_csrk_* (e.g. sizes, threads) on top */
        PetscCall(MatCSRKSetOrdering(C, (MatCSRKOrdering)o));
        PetscCall(MatCSRKSetLevels(C, k));
        if (set_ref_nodes) { /* a CSR-k reference in the same internal order: the same sums, nodes or not */
          PetscCall(MatCSRKSetOrdering(A, (MatCSRKOrdering)o));
          PetscCall(MatCSRKSetLevels(A, k));
        }
        PetscCall(CheckProducts(A, C, config, tol, &nfail));
        if (cpu) PetscCall(CheckIndexBytes(C, compress, patterns, natural, expect_patterns, expect_nodes, config, &nfail));
        nconf++;
        PetscCall(MatDestroy(&C));
      }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s (%s against %s): %" PetscInt_FMT " configurations, %" PetscInt_FMT " failures\n", hasfile ? file : problem, ctype, rtype, nconf, nfail));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
