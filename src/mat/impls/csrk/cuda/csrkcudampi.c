/*
   MATMPICSRKCUDA ("mpiaijcsrkcuda"): MATMPICSRK with MATSEQCSRKCUDA blocks. The distributed product is MPIAIJ's, but
   with a halo exchange of its own by default (csrkcudahalo.cu): without a CUDA-aware MPI, PETSc's VecScatter stages the
   ghost values through pageable host memory before the diagonal block's product is queued. The exchange is made again
   from the public block data (MatMPIAIJGetSeqAIJ()'s garray) whenever the nonzero pattern changed.
*/
#include "csrkcuda.h"
#include <petscsf.h>
#include <petscdevice.h>

#if PETSC_VERSION_GE(3, 22, 0)
typedef PetscMPIInt CSRKRankCount; /* the type of PetscSFGetRootRanks()' and PetscSFGetLeafRanks()' counts */
#else
typedef PetscInt CSRKRankCount;
#endif

/* the halo exchange, made again at the next product */
static PetscErrorCode MatMPICSRKCUDAResetHalo(Mat A)
{
  Mat_MPICSRKCUDA *sp = (Mat_MPICSRKCUDA *)A->spptr;

  PetscFunctionBegin;
  if (!sp) PetscFunctionReturn(PETSC_SUCCESS); /* (after MatHeaderMerge()) */
  PetscCall(MatCSRKCUDAHaloDestroy(&sp->halo));
  PetscCall(VecDestroy(&sp->ghost));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The exchange for the current nonzero pattern: leaves are the off-process block's columns (garray), roots the owned
   entries of x; PetscSF's set-up gives both sides of every message in matching order. garray is ascending and the
   SF lists the other ranks in ascending order with their leaves in order, so each rank's values land in a contiguous
   range of the ghost vector, in order: the receives need no unpacking */
static PetscErrorCode MatMPICSRKCUDAGetHalo(Mat A, Mat_MPICSRKCUDA *sp)
{
  Mat                Ao;
  const PetscInt    *garray, *roffset, *rmine, *loffset, *lidx;
  const PetscMPIInt *rranks, *lranks;
  CSRKRankCount      nr, nl;
  PetscMPIInt        nrr, nll, tag;
  PetscInt           nghost;
  PetscSF            sf;
  CSRKHalo           h;

  PetscFunctionBegin;
  if (sp->halo && sp->halostate == A->nonzerostate) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatMPICSRKCUDAResetHalo(A));
  PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &Ao, &garray));
  PetscCall(MatGetLocalSize(Ao, NULL, &nghost));
  PetscCall(PetscSFCreate(PetscObjectComm((PetscObject)A), &sf));
  PetscCall(PetscSFSetGraphLayout(sf, A->cmap, nghost, NULL, PETSC_OWN_POINTER, garray));
  PetscCall(PetscSFSetUp(sf));
  PetscCall(PetscSFGetRootRanks(sf, &nr, &rranks, &roffset, &rmine, NULL));
  PetscCall(PetscSFGetLeafRanks(sf, &nl, &lranks, &loffset, &lidx));
  for (PetscInt j = 0; j < roffset[nr]; j++) PetscCheck(rmine[j] == j, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Ghost %" PetscInt_FMT " arrives as value %" PetscInt_FMT " of the halo exchange: not in the ghost order", rmine[j], j);
  PetscCall(PetscMPIIntCast(nr, &nrr));
  PetscCall(PetscMPIIntCast(nl, &nll));
  PetscCall(PetscObjectGetNewTag((PetscObject)A, &tag));
  PetscCall(MatCSRKCUDAHaloCreate(PetscObjectComm((PetscObject)A), tag, nll, lranks, loffset, lidx, nrr, rranks, roffset, &h));
  PetscCall(PetscInfo(A, "CSR-k halo exchange through pinned host buffers: %" PetscInt_FMT " values to %d ranks, %" PetscInt_FMT " from %d ranks\n", loffset[nl], nll, roffset[nr], nrr));
  PetscCall(PetscSFDestroy(&sf));
  sp->halo      = h;
  sp->halostate = A->nonzerostate;
  PetscCall(VecCreate(PETSC_COMM_SELF, &sp->ghost));
  PetscCall(VecSetSizes(sp->ghost, nghost, nghost));
  PetscCall(VecSetType(sp->ghost, VECSEQCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = A x (+ y): the diagonal block's product is queued first, the exchange runs beside it, the off-process block adds */
static PetscErrorCode MatMultAdd_MPICSRKCUDA(Mat A, Vec xx, Vec yy, Vec zz)
{
  Mat_MPICSRKCUDA      *sp = (Mat_MPICSRKCUDA *)A->spptr;
  Mat                   Ad, Ao;
  const struct _MatOps *base;
  const PetscScalar    *x;
  PetscScalar          *g;
  PetscMemType          xmt, gmt;
  PetscBool             dev;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)xx, &dev, VECMPICUDA, VECSEQCUDA, ""));
  if (dev) PetscCall(PetscObjectTypeCompareAny((PetscObject)zz, &dev, VECMPICUDA, VECSEQCUDA, ""));
  if (!dev || !sp->host.opt.feature[MAT_CSRK_CUDA_HALO_PINNED] || A->boundtocpu || Ad->boundtocpu || Ao->boundtocpu) {
    PetscCall(MatCSRKGetBaseOps(PETSC_TRUE, &base));
    if (yy) PetscCall((*base->multadd)(A, xx, yy, zz));
    else PetscCall((*base->mult)(A, xx, zz));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatMPICSRKCUDAGetHalo(A, sp));
  PetscCall(PetscLogEventBegin(MAT_CSRKHaloBegin, A, xx, 0, 0));
  PetscCall(MatCSRKCUDAHaloBegin(sp->halo));
  PetscCall(PetscLogEventEnd(MAT_CSRKHaloBegin, A, xx, 0, 0));
  if (yy) PetscCall((*Ad->ops->multadd)(Ad, xx, yy, zz));
  else PetscCall((*Ad->ops->mult)(Ad, xx, zz));
  PetscCall(PetscLogEventBegin(MAT_CSRKHaloEnd, A, xx, 0, 0));
  PetscCall(VecGetArrayReadAndMemType(xx, &x, &xmt));
  PetscCheck(PetscMemTypeDevice(xmt), PETSC_COMM_SELF, PETSC_ERR_PLIB, "A CUDA vector gave host memory");
  PetscCall(VecGetArrayWriteAndMemType(sp->ghost, &g, &gmt));
  PetscCall(MatCSRKCUDAHaloEnd(sp->halo, x, g));
  PetscCall(VecRestoreArrayWriteAndMemType(sp->ghost, &g));
  PetscCall(VecRestoreArrayReadAndMemType(xx, &x));
  PetscCall(PetscLogEventEnd(MAT_CSRKHaloEnd, A, xx, 0, 0));
  PetscCall((*Ao->ops->multadd)(Ao, sp->ghost, zz, zz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_MPICSRKCUDA(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_MPICSRKCUDA(A, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatNorm(): MPIAIJ's, on vectors of host memory. Its NORM_1 sums the columns into a vector made by MatCreateVecs()
   and taken with VecGetArrayWrite(), whose host memory is not initialized for a CUDA vector. */
static PetscErrorCode MatNorm_MPICSRKCUDA(Mat A, NormType type, PetscReal *norm)
{
  const struct _MatOps *base;
  Mat                   Ao;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_TRUE, &base));
  PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &Ao, NULL));
  PetscCall(MatSetVecType(A, VECSTANDARD));
  if (Ao) PetscCall(MatSetVecType(Ao, VECSTANDARD));
  PetscCall((*base->norm)(A, type, norm));
  PetscCall(MatSetVecType(A, VECCUDA));
  if (Ao) PetscCall(MatSetVecType(Ao, VECCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatShift(): MPIAIJ's adds a through MatSetValues() and an assembly, which changes the blocks' values on the host, to
   be uploaded again. With congruent layouts the diagonal lies in the diagonal blocks; where each has all its diagonal
   entries, their own MatShift() runs instead, which keeps their device copies current. */
static PetscErrorCode MatShift_MPICSRKCUDA(Mat A, PetscScalar a)
{
  const struct _MatOps *base;
  Mat                   Ad;
  PetscBool             cong;
  PetscMPIInt           missing = 1;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  PetscCall(MatHasCongruentLayouts(A, &cong));
  if (cong && Ad && A->assembled) {
    const PetscInt *ai, *aj;
    PetscInt        m;

    /* the columns of each row are sorted: a binary search for the diagonal */
    PetscCall(MatGetLocalSize(Ad, &m, NULL));
    PetscCall(MatSeqAIJGetCSRAndMemType(Ad, &ai, &aj, NULL, NULL));
    missing = 0;
    for (PetscInt i = 0; i < m && !missing; i++) {
      PetscInt lo = ai[i], hi = ai[i + 1];
      while (lo < hi) {
        const PetscInt mid = lo + (hi - lo) / 2;
        if (aj[mid] < i) lo = mid + 1;
        else hi = mid;
      }
      missing = (PetscMPIInt)(lo == ai[i + 1] || aj[lo] != i);
    }
  }
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &missing, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
  if (!missing) {
    PetscCall(MatShift(Ad, a));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatCSRKGetBaseOps(PETSC_TRUE, &base));
  PetscCall((*base->shift)(A, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MATMPICSRK's duplicate, with A's COO map */
static PetscErrorCode MatDuplicate_MPICSRKCUDA(Mat A, MatDuplicateOption op, Mat *M)
{
  PetscFunctionBegin;
  PetscCall(MatDuplicate_MPICSRK(A, op, M));
  ((Mat_MPICSRKCUDA *)(*M)->spptr)->coo.ncoo = ((Mat_MPICSRKCUDA *)A->spptr)->coo.ncoo;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_MPICSRKCUDA(Mat);

/* The MPICSRK methods this type replaces and the functions composed on it: the conversions from AIJ, CSR-k and
   aijcusparse and back, the COO assembly */
static const MatCSRKMethods MPICSRKCUDAMethods = {
  PETSC_TRUE,
  MATMPICSRKCUDA,
  MATMPICSRK,
  {CSRK_METHOD(MATOP_MULT, MatMult_MPICSRKCUDA), CSRK_METHOD(MATOP_MULT_ADD, MatMultAdd_MPICSRKCUDA), CSRK_METHOD(MATOP_NORM, MatNorm_MPICSRKCUDA), CSRK_METHOD(MATOP_SHIFT, MatShift_MPICSRKCUDA), CSRK_METHOD(MATOP_VIEW, MatView_CSRKCUDA),
   CSRK_METHOD(MATOP_DUPLICATE, MatDuplicate_MPICSRKCUDA), CSRK_METHOD(MATOP_DESTROY, MatDestroy_MPICSRKCUDA)},
  {CSRK_COMPOSED("MatConvert_mpiaij_mpiaijcsrkcuda_C", MatConvert_MPIAIJ_MPICSRKCUDA), CSRK_COMPOSED("MatConvert_mpiaij_csrkcuda_C", MatConvert_MPIAIJ_MPICSRKCUDA), CSRK_COMPOSED("MatConvert_mpiaijcsrk_mpiaijcsrkcuda_C", MatConvert_MPIAIJ_MPICSRKCUDA),
   CSRK_COMPOSED("MatConvert_mpiaijcsrk_csrkcuda_C", MatConvert_MPIAIJ_MPICSRKCUDA), CSRK_COMPOSED("MatConvert_mpiaijcusparse_mpiaijcsrkcuda_C", MatConvert_MPIAIJ_MPICSRKCUDA), CSRK_COMPOSED("MatConvert_mpiaijcusparse_csrkcuda_C", MatConvert_MPIAIJ_MPICSRKCUDA),
   CSRK_COMPOSED("MatConvert_mpiaijcsrkcuda_mpiaij_C", MatConvert_CSRKCUDA_AIJ), CSRK_COMPOSED("MatConvert_mpiaijcsrkcuda_mpiaijcusparse_C", MatConvert_CSRKCUDA_AIJ), CSRK_COMPOSED("MatConvert_mpiaijcsrkcuda_aijcusparse_C", MatConvert_CSRKCUDA_AIJ),
   CSRK_COMPOSED("MatConvert_mpiaijcsrkcuda_mpiaijcsrk_C", MatConvert_MPICSRKCUDA_MPICSRK), CSRK_COMPOSED("MatConvert_mpiaijcsrkcuda_csrk_C", MatConvert_MPICSRKCUDA_MPICSRK), CSRK_COMPOSED("MatSetPreallocationCOO_C", MatSetPreallocationCOO_CSRKCUDA),
   CSRK_COMPOSED("MatSetValuesCOO_C", MatSetValuesCOO_CSRKCUDA)}
};

/* the data of the CUDA type freed, its COO assembly given back (the caller took the table's functions away) */
static PetscErrorCode MatMPICSRKCUDAClear(Mat A)
{
  MatCSRKCOO *coo = NULL;

  PetscFunctionBegin;
  if (!A->spptr) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatMPICSRKCUDAResetHalo(A));
  PetscCall(MatCSRKCUDACOO(A, PETSC_FALSE, &coo));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_MPICSRKCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKExtendMethods(A, &MPICSRKMethods, &MPICSRKCUDAMethods, PETSC_FALSE, PETSC_FALSE));
  PetscCall(MatMPICSRKCUDAClear(A));
  PetscCall((*A->ops->destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the data of the CUDA type (cuda) or of MATMPICSRK, with the blocks and the view of that type */
static PetscErrorCode MatMPICSRKCUDASetData(Mat A, PetscBool cuda)
{
  Mat_MPICSRK *sp;

  PetscFunctionBegin;
  PetscCall(MatCSRKCUDAResizeSpptr(A, sizeof(Mat_MPICSRK), cuda ? sizeof(Mat_MPICSRKCUDA) : sizeof(Mat_MPICSRK)));
  sp = (Mat_MPICSRK *)A->spptr;
  if (!cuda) MatMPICSRKSetHostType(sp);
  else {
    sp->blocktype    = MATSEQCSRKCUDA;
    sp->convertblock = MatConvert_SeqAIJ_SeqCSRKCUDA;
    sp->typeview     = MatView_CSRKCUDA;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_MPICSRKCUDA_MPICSRK(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B, blk[2];

  PetscFunctionBegin;
  PetscCall(MatCSRKConvertTarget(A, reuse, newmat));
  if (reuse == MAT_REUSE_MATRIX) PetscFunctionReturn(PETSC_SUCCESS);
  B = *newmat;
  PetscCall(MatCSRKExtendMethods(B, &MPICSRKMethods, &MPICSRKCUDAMethods, PETSC_FALSE, PETSC_FALSE));
  PetscCall(MatMPICSRKCUDAClear(B));
  PetscCall(MatMPICSRKCUDASetData(B, PETSC_FALSE));
  B->boundtocpu = PETSC_TRUE;
  PetscCall(MatMPIAIJGetSeqAIJ(B, &blk[0], &blk[1], NULL));
  for (PetscInt b = 0; b < 2; b++)
    if (blk[b]) PetscCall(MatConvert_SeqCSRKCUDA_SeqCSRK(blk[b], MATSEQCSRK, MAT_INPLACE_MATRIX, &blk[b]));
  PetscCall(MatSetVecType(B, VECSTANDARD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatConvert_MPIAIJ_MPICSRKCUDA - from MATMPIAIJ, MATMPICSRK or another MPIAIJ subclass (aijcusparse) to MATMPICSRKCUDA
*/
PetscErrorCode MatConvert_MPIAIJ_MPICSRKCUDA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat         B;
  MatCSRKCOO *coo = NULL;

  PetscFunctionBegin;
  PetscCall(MatCSRKCUDAConvertBegin(A, PETSC_TRUE, reuse, newmat, &B));
  if (!B) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatMPICSRKCUDASetData(B, PETSC_TRUE));
  PetscCall(MatCSRKCUDACOO(B, PETSC_TRUE, &coo)); /* what the table replaces: the AIJ COO assembly */
  PetscCall(MatCSRKExtendMethods(B, &MPICSRKMethods, &MPICSRKCUDAMethods, PETSC_TRUE, PETSC_FALSE));
  B->boundtocpu   = PETSC_FALSE; /* MatCreate() binds every matrix of a device build to the CPU; MPIAIJ's MatBindToCPU() still works */
  PetscCall(MatSetVecType(B, VECCUDA));
  PetscCall(MatMPICSRKConvertBlocks(B));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATMPICSRKCUDA - MATMPICSRKCUDA = "mpiaijcsrkcuda" - the parallel CSR-k type on NVIDIA GPUs: a `MATMPICSRK` whose
   blocks are `MATSEQCSRKCUDA`. MatMult() and MatMultAdd() exchange the ghost values through pinned host buffers on a
   high-priority stream, started before the diagonal block's product so that it runs beside it; this needs no
   CUDA-aware MPI. The transposed products use MPIAIJ's VecScatter.

   Options Database Keys: those of `MATCSRKCUDA`, `-mat_csrk_cuda_halo_pinned` among them (`MatCSRKSetFeature()`)

   Level: beginner

.seealso: `MATCSRKCUDA`, `MATSEQCSRKCUDA`, `MATMPICSRK`
M*/
PetscErrorCode MatCreate_MPICSRKCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatConvert_MPIAIJ_MPICSRKCUDA(A, MATMPICSRKCUDA, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
