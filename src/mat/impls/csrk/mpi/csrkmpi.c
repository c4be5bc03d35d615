/*
   MATMPICSRK ("mpiaijcsrk"): an MPIAIJ subclass whose diagonal and off-diagonal blocks are MATSEQCSRK.

   The distributed product is MPIAIJ's own: the halo exchange of x starts, the diagonal block multiplies (CSR-k,
   its own local ordering) while the messages travel, then the off-diagonal block (compact ghost columns, natural
   order) adds its part. This file only makes sure the blocks are CSR-k on every path that creates them
   (preallocation, hash assembly of PETSc >= 3.19, MatDisAssemble, conversion of an assembled matrix) and carries
   the options down to them.
*/
#include "../csrkimpl.h"
#include <petscdm.h>
#include <string.h>

static PetscErrorCode (*MatMPIAIJSetPreallocation_Base)(Mat, PetscInt, const PetscInt[], PetscInt, const PetscInt[]);

/* Converts the blocks that are not of the block type yet and hands them the options: the off-diagonal block keeps its
   order. Before the preallocation there are no blocks, and nothing to do. */
PetscErrorCode MatMPICSRKConvertBlocks(Mat A)
{
  Mat_MPICSRK   *sp;
  Mat            blk[2];
  MatCSRKOptions opt;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetSpptr(A, &sp));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &blk[0], &blk[1], NULL));
  for (PetscInt b = 0; b < 2; b++) {
    PetscBool is;
    if (!blk[b]) continue;
    PetscCall(PetscObjectTypeCompare((PetscObject)blk[b], sp->blocktype, &is));
    if (!is) PetscCall((*sp->convertblock)(blk[b], sp->blocktype, MAT_INPLACE_MATRIX, &blk[b]));
    opt = sp->opt;
    if (b == 1) opt.ordering = MAT_CSRK_ORDERING_NATURAL;
    PetscCall(MatSeqCSRKSetOptions(blk[b], &opt));
    ((Mat_SeqCSRK *)blk[b]->spptr)->offdiag = (PetscBool)(b == 1);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMPIAIJSetPreallocation_MPICSRK(Mat B, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[])
{
  PetscFunctionBegin;
  PetscCall((*MatMPIAIJSetPreallocation_Base)(B, d_nz, d_nnz, o_nz, o_nnz));
  PetscCall(MatMPICSRKConvertBlocks(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Blocks made by hash assembly (PETSc >= 3.19), MatDisAssemble or MatCreateSubMatrix are plain SeqAIJ */
/* A DM that creates the matrix puts a view of its own in place of the type's (DMDA's shows the matrix in its natural
   ordering, and nothing for the info formats): the type's view takes its place again and calls it for the matrix
   itself, so that -mat_view ::ascii_info and -ksp_view_mat ::ascii_info show what CSR-k built */
static PetscErrorCode MatMPICSRKKeepView(Mat A)
{
  Mat_MPICSRK *sp = (Mat_MPICSRK *)A->spptr;
  DM           dm;

  PetscFunctionBegin;
  PetscCall(MatGetDM(A, &dm));
  if (!dm || A->ops->view == sp->typeview) PetscFunctionReturn(PETSC_SUCCESS);
  sp->view     = A->ops->view;
  A->ops->view = sp->typeview;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyEnd_MPICSRK(Mat A, MatAssemblyType mode)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_TRUE, &base));
  PetscCall((*base->assemblyend)(A, mode));
  if (mode == MAT_FINAL_ASSEMBLY) PetscCall(MatMPICSRKConvertBlocks(A));
  PetscCall(MatMPICSRKKeepView(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCSRKSetOptions_MPICSRK(Mat A, const MatCSRKOptions *opt)
{
  Mat_MPICSRK *sp;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetSpptr(A, &sp));
  sp->opt = *opt;
  PetscCall(MatMPICSRKConvertBlocks(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The integer fields of MatCSRKInfo reduced over the ranks: maxima (bandwidths, counts of each rank's products and
   builds), sums (rows and sizes of the whole matrix) */
static const size_t CSRKInfoMax[] = {offsetof(MatCSRKInfo, bw_before), offsetof(MatCSRKInfo, bw_after), offsetof(MatCSRKInfo, nbuilds), offsetof(MatCSRKInfo, nrefresh), offsetof(MatCSRKInfo, index_bytes), offsetof(MatCSRKInfo, npatterns), offsetof(MatCSRKInfo, nbase), offsetof(MatCSRKInfo, nfast), offsetof(MatCSRKInfo, wait)};
static const size_t CSRKInfoSum[] = {offsetof(MatCSRKInfo, nsr), offsetof(MatCSRKInfo, nssr), offsetof(MatCSRKInfo, nsliced), offsetof(MatCSRKInfo, nnoderows), offsetof(MatCSRKInfo, nvalued)};
#define CSRK_NMAX            (sizeof(CSRKInfoMax) / sizeof(CSRKInfoMax[0]))
#define CSRK_NSUM            (sizeof(CSRKInfoSum) / sizeof(CSRKInfoSum[0]))
#define CSRKInfoInt(info, o) (*(PetscInt *)((char *)(info) + (o)))

/* Summary of the diagonal blocks: maxima of times and bandwidths, sums of counts and memory, and the row loops of the
   plan's table that the ranks run (a count of ranks per entry) */
static PetscErrorCode MatCSRKGetInfo_MPICSRK(Mat A, MatCSRKInfo *info)
{
  Mat         Ad, Ao;
  MatCSRKInfo off;
  PetscInt    imax[CSRK_NMAX], isum[CSRK_NSUM + 16] = {0}, nv = 0;
  MPI_Comm    comm = PetscObjectComm((PetscObject)A);

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  PetscCheck(Ad, comm, PETSC_ERR_ARG_WRONGSTATE, "Matrix is not preallocated");
  PetscCall(MatCSRKGetInfo(Ad, info));
  if (Ao && A->assembled) {
    PetscCall(MatCSRKGetInfo(Ao, &off));
    info->bytes += off.bytes;
    info->build_time += off.build_time;
  }
  for (size_t i = 0; i < CSRK_NMAX; i++) imax[i] = CSRKInfoInt(info, CSRKInfoMax[i]);
  for (size_t i = 0; i < CSRK_NSUM; i++) isum[i] = CSRKInfoInt(info, CSRKInfoSum[i]);
  for (; MatCSRKVariants[nv] && nv < 16; nv++) isum[CSRK_NSUM + nv] = !strcmp(info->variant, MatCSRKVariants[nv]->name);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, imax, (PetscMPIInt)CSRK_NMAX, MPIU_INT, MPI_MAX, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, isum, (PetscMPIInt)(CSRK_NSUM + nv), MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &info->build_time, 1, MPI_DOUBLE, MPI_MAX, comm));
  PetscCallMPI(MPI_Bcast(info->expected, sizeof(info->expected), MPI_CHAR, 0, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &info->bytes, 1, MPI_DOUBLE, MPI_SUM, comm));
  for (size_t i = 0; i < CSRK_NMAX; i++) CSRKInfoInt(info, CSRKInfoMax[i]) = imax[i];
  for (size_t i = 0; i < CSRK_NSUM; i++) CSRKInfoInt(info, CSRKInfoSum[i]) = isum[i];
  info->variant[0] = 0;
  for (PetscInt v = 0; v < nv; v++)
    if (isum[CSRK_NSUM + v]) {
      if (info->variant[0]) PetscCall(PetscStrlcat(info->variant, "+", sizeof(info->variant)));
      PetscCall(PetscStrlcat(info->variant, MatCSRKVariants[v]->name, sizeof(info->variant)));
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatDuplicate_MPICSRK(Mat A, MatDuplicateOption op, Mat *M)
{
  const struct _MatOps *base;
  Mat_MPICSRK          *sp, *sm;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_TRUE, &base));
  PetscCall((*base->duplicate)(A, op, M)); /* the blocks are duplicated with their own CSR-k parts */
  PetscCall(MatCSRKGetSpptr(A, &sp));
  PetscCall(MatCSRKGetSpptr(*M, &sm));
  sm->opt = sp->opt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_MPICSRK(Mat);

/* The MPIAIJ methods this type replaces and the functions composed on it: the conversions under the names MatConvert()
   looks up (see csrkseq.c), the options and the summary */
const MatCSRKMethods MPICSRKMethods = {
  PETSC_TRUE,
  MATMPICSRK,
  MATMPIAIJ,
  {CSRK_METHOD(MATOP_ASSEMBLY_END, MatAssemblyEnd_MPICSRK), CSRK_METHOD(MATOP_DESTROY, MatDestroy_MPICSRK), CSRK_METHOD(MATOP_DUPLICATE, MatDuplicate_MPICSRK), CSRK_METHOD(MATOP_SET_FROM_OPTIONS, MatSetFromOptions_CSRK), CSRK_METHOD(MATOP_VIEW, MatView_CSRK)},
  {CSRK_COMPOSED("MatConvert_mpiaij_mpiaijcsrk_C", MatConvert_MPIAIJ_MPICSRK), CSRK_COMPOSED("MatConvert_mpiaij_csrk_C", MatConvert_MPIAIJ_MPICSRK), CSRK_COMPOSED("MatConvert_mpiaijcsrk_mpiaij_C", MatConvert_MPICSRK_MPIAIJ),
   CSRK_COMPOSED("MatCSRKGetOptions_C", MatCSRKGetOptions_CSRK), CSRK_COMPOSED("MatCSRKSetOptions_C", MatCSRKSetOptions_MPICSRK), CSRK_COMPOSED("MatCSRKGetInfo_C", MatCSRKGetInfo_MPICSRK)}
};

static PetscErrorCode MatDestroy_MPICSRK(Mat A)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_TRUE, &base));
  PetscCall(PetscFree(A->spptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatMPIAIJSetPreallocation_C", NULL));
  PetscCall(MatCSRKSetMethods(A, &MPICSRKMethods, PETSC_FALSE));
  PetscCall((*base->destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the blocks find their own way back to SeqAIJ */
PetscErrorCode MatConvert_MPICSRK_MPIAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B, blk[2];

  PetscFunctionBegin;
  PetscCall(MatCSRKConvertTarget(A, reuse, newmat));
  if (reuse == MAT_REUSE_MATRIX) PetscFunctionReturn(PETSC_SUCCESS);
  B = *newmat;
  PetscCall(MatMPIAIJGetSeqAIJ(B, &blk[0], &blk[1], NULL));
  for (PetscInt b = 0; b < 2; b++)
    if (blk[b]) PetscCall(MatConvert(blk[b], MATSEQAIJ, MAT_INPLACE_MATRIX, &blk[b]));
  PetscCall(PetscFree(B->spptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", MatMPIAIJSetPreallocation_Base));
  PetscCall(MatCSRKSetMethods(B, &MPICSRKMethods, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatMPICSRKSetHostType - the blocks and the view of MATMPICSRK (the CUDA type's back to them too) */
void MatMPICSRKSetHostType(Mat_MPICSRK *sp)
{
  sp->blocktype    = MATSEQCSRK;
  sp->convertblock = MatConvert_SeqAIJ_SeqCSRK;
  sp->typeview     = MatView_CSRK;
}

/*
   MatConvert_MPIAIJ_MPICSRK - converts an MPIAIJ matrix to MATMPICSRK (blocks included when it is assembled)
*/
PetscErrorCode MatConvert_MPIAIJ_MPICSRK(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat          B;
  Mat_MPICSRK *sp;
  PetscBool    same;

  PetscFunctionBegin;
  PetscCall(MatCSRKConvertTarget(A, reuse, newmat));
  PetscCall(PetscObjectTypeCompare((PetscObject)*newmat, MATMPICSRK, &same));
  if (same) PetscFunctionReturn(PETSC_SUCCESS);
  B = *newmat;
  if (!MatMPIAIJSetPreallocation_Base) PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", &MatMPIAIJSetPreallocation_Base));
  PetscCheck(MatMPIAIJSetPreallocation_Base, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MPIAIJ preallocation routine not found");
  PetscCall(PetscNew(&sp));
  PetscCall(MatCSRKOptionsFromMat(A, &sp->opt));
  MatMPICSRKSetHostType(sp);
  B->spptr = sp;
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatMPIAIJSetPreallocation_C", MatMPIAIJSetPreallocation_MPICSRK));
  PetscCall(MatMPICSRKConvertBlocks(B));
  PetscCall(MatCSRKSetMethods(B, &MPICSRKMethods, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATMPICSRK - MATMPICSRK = "mpiaijcsrk" - the parallel CSR-k matrix type, a `MATMPIAIJ` subclass whose diagonal
   blocks multiply with the CSR-k kernels of `MATSEQCSRK`, each in its own local ordering, and whose off-diagonal
   blocks with AIJ's kernel. The halo exchange of `MatMult()` overlaps the product with the diagonal block, as in
   `MATMPIAIJ`.

   Options Database Keys: those of `MATCSRK`, applied to the blocks.

   Level: beginner

.seealso: `MATCSRK`, `MATSEQCSRK`
M*/
PetscErrorCode MatCreate_MPICSRK(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatConvert_MPIAIJ_MPICSRK(A, MATMPICSRK, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
