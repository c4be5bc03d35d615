/* Device copy of a sequential CSR-k block (shared by the CUDA kernels and the MATSEQCSRKCUDA glue) */
#ifndef CSRKCUDA_H
#define CSRKCUDA_H

#include "../csrkimpl.h"

/* The device copy of one block, built on the device from the uploaded AIJ arrays (csrkcudaplan.cu), rows in the
   user's ordering: what every variant of the plan shares (the CSR arrays, the launch grouping of super-rows, the row
   statistics), and the variant's own layout in data, which only its file reads (as PETSc's spptr) */
typedef struct _n_CSRKDevice {
  PetscInt     m, n, nnz;
  PetscInt     sr, ssr, nsr, nunits;     /* the launch grouping: runs of sr rows (super-rows), runs of ssr super-rows (units,
                                            a thread block each), uniform (CSRKGroups in the kernels) */
  CSRKIdx     *rowptr, *colidx;          /* CSR arrays (freed by the variants that read neither) */
  PetscScalar *val;                      /* CSR values (NULL for the sliced kernel: a value refresh uploads to scratch) */
  const struct _n_CSRKVariant *plan;     /* the plan: the entry of the variant table that set up this layout */
  void        *data;                     /* the plan's own layout (its file's struct) */
  MatCSRKCUDAKernel kernel;              /* the kernel in use (never auto; scalar or vector under the vector entry) */
  PetscInt     width;                    /* lanes per row: 1 for the scalar kernel (GPUSpMV-3), 2-32 for the vector kernel (GPUSpMV-3.5) */
  unsigned     bx, by, bz;               /* thread block shape */
  PetscReal    mean, var;                /* row-length statistics the kernel was chosen from */
  PetscInt     maxlen, nonzerorows;
  PetscInt     npat;                     /* distinct rows of the row patterns the sliced kernel reads (0: none) */
  struct _n_CSRKDevice *t;               /* MatMultTranspose: the transpose S^T as a matrix of its own, built at the first use; */
  CSRKIdx     *tmap;                     /* entry q of S^T is entry tmap[q] of S, for value refreshes */
  CSRKIdx     *perm;                     /* RCM order (csrkcudareorder.cu): row i of the layout is row perm[i] of the block
                                            (NULL: the user's ordering) */
  CSRKIdx     *prow, *pstart;            /* the layout's row pointers, and where each of its rows starts in the block's */
  PetscScalar *xp, *yp;                  /* x in the layout's order, and y before it goes back to the user's */
  const CSRKIdx *ymap;                   /* the row of y each row of the layout writes, where its kernel writes through it (the
                                            sliced and row kernels: perm; NULL: y in the layout's order) */
  PetscInt     nlevels;                  /* levels of the RCM order */
  PetscInt     rcmwait;                  /* products after which the auto ordering makes the copy again in RCM order (0: none) */
  PetscScalar *ywork;                    /* scratch: staged host inputs */
  PetscInt     nywork;
  size_t       bytes;                    /* device memory held */
} CSRKDevice;

/* The COO assembly of the AIJ base type, which reads the values on the host (csrkcuda.c) */
typedef struct {
  PetscCount ncoo; /* entries given to MatSetPreallocationCOO() */
  PetscErrorCode (*preallocation)(Mat, PetscCount, PetscInt[], PetscInt[]);
  PetscErrorCode (*values)(Mat, const PetscScalar[], InsertMode);
} MatCSRKCOO;

/* spptr of a MATSEQCSRKCUDA: MATSEQCSRK's (the host part, first), the COO assembly, the device copy and what it was
   made from (A->offloadmask tells whether it is current) */
typedef struct {
  Mat_SeqCSRK      host;
  MatCSRKCOO       coo;
  CSRKDevice      *dev;
  PetscObjectState nzstate;     /* A->nonzerostate the layout was built for */
  PetscObjectState state;       /* object state of the values on the device */
  MatCSRKOptions   opt;         /* options the layout was built with */
  PetscInt         nsetups, nrefresh;
  PetscInt         nproducts;   /* device products since the set-up, for the RCM order the auto ordering waits with */
  PetscErrorCode (*hostinfo)(Mat, MatCSRKInfo *); /* MatCSRKGetInfo() of MATSEQCSRK, for the matrix bound to the CPU */
} Mat_SeqCSRKCUDA;

/* spptr of a MATMPICSRKCUDA: MATMPICSRK's (first), the COO assembly, and the product's own halo exchange
   (MAT_CSRK_CUDA_HALO_PINNED) with its ghost vector, made for the nonzero state halostate (csrkcudampi.c) */
typedef struct _n_CSRKHalo *CSRKHalo;
typedef struct {
  Mat_MPICSRK      host;
  MatCSRKCOO       coo;
  CSRKHalo         halo;
  Vec              ghost;
  PetscObjectState halostate;
} Mat_MPICSRKCUDA;

/* the spptr of a host type grown to its CUDA type's, or back (csrkcuda.c) */
PETSC_INTERN PetscErrorCode MatCSRKCUDAResizeSpptr(Mat, size_t, size_t);

/* the device copy through its plan (csrkcudaplan.cu): set-up, value refresh, products, diagonal, view */
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceSetUp(Mat, const MatCSRKOptions *, CSRKDevice **);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceReorder(Mat, const MatCSRKOptions *, CSRKDevice **);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceRefresh(Mat, CSRKDevice *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceBuildTranspose(Mat, CSRKDevice *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceDestroy(CSRKDevice **);
PETSC_INTERN void           MatCSRKCUDADeviceView(const CSRKDevice *, char *, size_t);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceMult(CSRKDevice *, PetscBool, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceDiagonal(CSRKDevice *, PetscBool, PetscScalar, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceScale(CSRKDevice *, PetscScalar);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceStage(CSRKDevice *, const PetscScalar *, PetscInt, const PetscScalar **);
PETSC_INTERN PetscErrorCode MatCSRKCUDACopyToHost(PetscScalar *, const PetscScalar *, PetscCount);

PETSC_INTERN PetscErrorCode MatSeqCSRKCUDAViewPlan(Mat, PetscViewer, const char *);
PETSC_INTERN PetscErrorCode MatConvert_CSRKCUDA_AIJ(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_MPICSRKCUDA_MPICSRK(Mat, MatType, MatReuse, Mat *);

/* COO assembly with the values in host or device memory, through the AIJ base type's (csrkcuda.c) */
PETSC_INTERN PetscErrorCode MatCSRKCUDACOO(Mat, PetscBool, MatCSRKCOO **);
PETSC_INTERN PetscErrorCode MatSetPreallocationCOO_CSRKCUDA(Mat, PetscCount, PetscInt[], PetscInt[]);
PETSC_INTERN PetscErrorCode MatSetValuesCOO_CSRKCUDA(Mat, const PetscScalar[], InsertMode);

/* halo exchange of the MPI product through pinned host buffers (csrkcudahalo.cu) */
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloCreate(MPI_Comm, PetscMPIInt, PetscMPIInt, const PetscMPIInt[], const PetscInt[], const PetscInt[], PetscMPIInt, const PetscMPIInt[], const PetscInt[], CSRKHalo *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloBegin(CSRKHalo);
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloEnd(CSRKHalo, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloDestroy(CSRKHalo *);

#if defined(__CUDACC__)
/* shared by the CUDA sources */
  #define CSRK_STREAM_SMEM_MAX (160 * 1024)
  #define CSRK_LONG_CHUNK      4096
PETSC_INTERN PetscErrorCode CSRKGetStream(cudaStream_t *);
PETSC_INTERN PetscErrorCode CSRKScratchPool(cudaMemPool_t *); /* the pool of the set-up's scratch (csrkcudaplan.cu) */
PETSC_INTERN PetscErrorCode MatCSRKCUDAUploadHost(void *, const void *, size_t, cudaStream_t); /* csrkcudastage.cu */
PETSC_INTERN PetscErrorCode MatCSRKCUDAGather(PetscInt, const CSRKIdx *, const PetscScalar *, PetscScalar *, cudaStream_t);

/* The auto rule's constants (docs/tuning.md): the coefficient of variation of the row lengths up to which the sliced
   kernel takes them; rows a multiprocessor from which a block of regular rows goes to the
   sliced kernel (below, the stream kernel's units of 32-64 rows take them), and the coefficient of variation of the row
   lengths above which the merge kernel takes the rows (below, the vector kernel, or the sliced kernel where the
   lengths vary little inside its 32-row slices and no row is long) */
  #define CSRK_GPU_SLICED_MAX_CV   0.3
  #define CSRK_GPU_MIN_ROWS_PER_SM 2048
/* rows a multiprocessor from which slices (a warp's 32 rows or block rows stored column by column) beat the block
   kernel's nodes on block rows in a solve: the coalesced loads gain more than the nodes' fewer index bytes
   (docs/tuning.md) */
  #define CSRK_GPU_SLICES_MIN_ROWS_PER_SM 3072
  #define CSRK_MERGE_MIN_CV        1.0
/* The expected cost of the RCM order on the device (csrkcudareorder.cu), in products of the block in a random
   numbering, which the auto ordering waits to have run within the set-up's budget: a part worth CSRK_GPU_RCM_PASSES
   products (the levels' gathers, the copy in the new order, the plan's set-up again), and a part that does not grow
   with the nonzeros (the levels' launches, the allocations, the first use of the kernels) worth the products of
   CSRK_GPU_RCM_NNZ nonzeros; both fitted to the costliest first order in a process that the MatCSRKOrder event
   measured (docs/tuning.md) */
  #define CSRK_GPU_RCM_PASSES 14.0
  #define CSRK_GPU_RCM_NNZ    2.5e8
/* The auto ordering's test of a numbering that scatters the gathers of x (csrkcudareorder.cu): the distinct 32-byte
   sectors of x that a step of a 32-row slice gathers, a nonzero, above which the device copy is made in RCM order
   (0.98-1.0 in a random numbering row by row, 0.25-0.60 in a mesh's; docs/tuning.md) */
  #define CSRK_GPU_SCATTERED_SECTORS 0.8

/* What the plan's choice reads besides the row statistics kept in the device copy (mean, var, maxlen, nonzerorows) */
typedef struct {
  PetscBool  forced;     /* the kernel was asked for (-mat_csrk_cuda_kernel), else the auto rule chooses */
  PetscReal  cv;         /* coefficient of variation of the row lengths */
  PetscInt64 pnnz;       /* entries of the sliced storage, padded to each super-row's longest row */
  PetscInt   sms;        /* multiprocessors of the device */
  PetscBool  fill;       /* at least CSRK_GPU_MIN_ROWS_PER_SM rows for each multiprocessor of the device */
  PetscBool  sliced;     /* the sliced kernel's row-length rule holds: forced, or regular rows within its padding bound */
  PetscBool  slicedtake; /* the sliced kernel's whole rule holds (CSRKSlicedPrepare) */
  PetscInt   npat;       /* distinct rows of the row patterns found (0: none or not looked for) */
  PetscInt   maxu;       /* most nonzeros of a launch unit of the row grouping; -1 until CSRKPlanFits() counts them */
} CSRKPlanStats;

/* One variant of the plan table (csrkcudaplan.cu), each in its own file: its set-up on the device, which under auto
   first tests the variant's rule and returns with d->kernel still auto where it does not hold (the device bytes it
   allocates are counted); the refresh of its layout from values uploaded to v (NULL: the kernel reads the CSR values,
   where they are uploaded); the product y = A x (+ z); the diagonal (get, or shift by a); the scaling of values of its
   own (NULL: it reads the CSR values); a phrase for the view; and the device arrays of its layout, as offsets in it
   (0 ends the list after the first), which CSRKLayoutFree() frees with it (a candidate that its rule declines frees
   what it made); the CSR arrays it reads once set up (the plan frees the others: CSRK_CSR_*); and the CSR columns and
   values given back from its layout, for the RCM copy made after its wait (NULL: none; the copy that waits keeps the
   CSR arrays beside such a layout) */
  #define CSRK_CSR_ROWPTR 1u
  #define CSRK_CSR_COLIDX 2u
  #define CSRK_CSR_VAL    4u
  #define CSRK_CSR_ALL    7u
typedef struct _n_CSRKVariant {
  MatCSRKCUDAKernel kernel;
  unsigned          csr;
  PetscErrorCode (*setup)(Mat, CSRKDevice *, const MatCSRKOptions *, CSRKPlanStats *, size_t *, cudaStream_t);
  PetscErrorCode (*refresh)(CSRKDevice *, const PetscScalar *, cudaStream_t);
  PetscErrorCode (*mult)(const CSRKDevice *, const PetscScalar *, const PetscScalar *, PetscScalar *, cudaStream_t);
  PetscErrorCode (*diagonal)(CSRKDevice *, PetscBool, PetscScalar, PetscScalar *, cudaStream_t);
  PetscErrorCode (*scale)(CSRKDevice *, PetscScalar, cudaStream_t);
  void (*view)(const CSRKDevice *, char *, size_t);
  size_t arrays[8];
  PetscErrorCode (*tocsr)(const CSRKDevice *, CSRKIdx *, PetscScalar *, cudaStream_t);
} CSRKVariant;
PETSC_INTERN const CSRKVariant CSRKVariantBSliced, CSRKVariantBlock, CSRKVariantSliced, CSRKVariantMerge, CSRKVariantStream, CSRKVariantVector;
PETSC_INTERN PetscErrorCode CSRKLayoutFree(const CSRKVariant *, CSRKDevice *);
PETSC_INTERN PetscErrorCode CSRKPlanFits(CSRKDevice *, CSRKPlanStats *, PetscBool *, cudaStream_t);
PETSC_INTERN void           CSRKPlanSizes(CSRKDevice *, MatCSRKCUDAKernel, const MatCSRKOptions *);
PETSC_INTERN PetscInt       CSRKVectorWidth(PetscReal);
/* the sliced kernel's rule and row patterns, which the block kernel's rule reads (csrkcudasliced.cu) */
PETSC_INTERN PetscErrorCode CSRKSlicedPrepare(Mat, CSRKDevice *, const MatCSRKOptions *, CSRKPlanStats *, size_t *, cudaStream_t);
/* the slices of 32 (block) rows that the sliced and block-sliced layouts share (csrkcudasliced.cu) */
PETSC_INTERN PetscErrorCode CSRKSlicePointers(PetscInt, PetscInt, const CSRKIdx *, CSRKIdx *, CSRKIdx *, cudaStream_t);
/* the row kernels' set-up that the stored transpose shares and the diagonal of CSR arrays (csrkcudakernels.cu); values
   times a (csrkcudaplan.cu) */
PETSC_INTERN PetscErrorCode CSRKRowsBuild(CSRKDevice *, PetscInt, PetscBool, size_t, size_t *, cudaStream_t);

/* the RCM order on the device (csrkcudareorder.cu): the rule, the layout's arrays, the product's way in and out */
PETSC_INTERN PetscErrorCode CSRKReorderWhen(Mat, const CSRKDevice *, const MatCSRKOptions *, PetscInt *, cudaStream_t);
PETSC_INTERN PetscErrorCode CSRKReorderBuild(Mat, CSRKDevice *, PetscBool, PetscBool *, size_t *, cudaStream_t);
PETSC_INTERN PetscErrorCode CSRKReorderArrays(const CSRKDevice *, const CSRKIdx *, const PetscScalar *, CSRKIdx *, PetscScalar *, cudaStream_t);
PETSC_INTERN PetscErrorCode CSRKReorderIn(const CSRKDevice *, const PetscScalar *, cudaStream_t);
PETSC_INTERN PetscErrorCode CSRKReorderOut(const CSRKDevice *, const PetscScalar *, const PetscScalar *, PetscScalar *, cudaStream_t);
PETSC_INTERN PetscErrorCode CSRKReorderFree(CSRKDevice *);

PETSC_INTERN PetscErrorCode CSRKScaleValues(PetscScalar *, PetscInt64, PetscScalar, cudaStream_t);
PETSC_INTERN PetscErrorCode CSRKDiagonalCSR(CSRKDevice *, PetscBool, PetscScalar, PetscScalar *, cudaStream_t);
/* Rows longer than this go to the long-row kernels (CSRK_IDX_MAX: none is): far beyond the mean, where one sub-warp
   or thread would serialise a whole block */
static inline PetscInt CSRKLongRowLength(PetscReal mean, PetscInt maxlen)
{
  const PetscInt len = PetscMax(512, (PetscInt)(16 * mean));
  return maxlen <= len ? CSRK_IDX_MAX : len;
}
/* the counts of super-rows and units of d's uniform launch grouping over its rows */
static inline void CSRKGroupCounts(CSRKDevice *d)
{
  d->nsr    = (d->m + d->sr - 1) / d->sr;
  d->nunits = (d->nsr + d->ssr - 1) / d->ssr;
}
static inline unsigned CSRKGrid(PetscInt n)
{
  return (unsigned)PetscMax(1, PetscMin((n + 255) / 256, 65535 * 4));
}
  #define CSRKCudaFree(p) \
    do { \
      if (p) PetscCallCUDA(cudaFree(p)); \
      (p) = NULL; \
    } while (0)
#endif

#endif
