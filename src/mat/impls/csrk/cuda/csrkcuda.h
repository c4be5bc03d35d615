/* Device copy of a sequential CSR-k block (shared by the CUDA kernels and the MATSEQCSRKCUDA glue) */
#ifndef CSRKCUDA_H
#define CSRKCUDA_H

#include "../csrkimpl.h"

typedef struct _n_CSRKCusparse *CSRKCusparse; /* the cusparse kernel's handle and descriptors (csrkcudakernels.cu) */

/* The device layout of one block, built on the device from the uploaded AIJ arrays (csrkcudasetup.cu), rows in the
   user's ordering. Super-rows are runs of sr consecutive rows, launch units runs of ssr super-rows. */
typedef struct _n_CSRKDevice {
  PetscInt     m, n, nnz, k;
  PetscInt     sr, ssr, nsr, nunits;     /* sizes of the launch grouping; thread blocks */
  CSRKIdx     *rowptr, *colidx;          /* CSR arrays (freed by the sliced kernel over row patterns, which reads neither) */
  PetscScalar *val;                      /* CSR values (NULL for the sliced kernels: a value refresh uploads to scratch) */
  CSRKIdx     *unitptr, *srptr;          /* first super-row of each unit, first row of each super-row */
  CSRKIdx     *longrows;                 /* rows longer than longlen go to the long-row kernels */
  PetscInt     nlong, longlen;
  CSRKIdx     *longrowchunk, *longchunkq; /* chunks [rowchunk[i], rowchunk[i+1]) of long row i; [q0, q1) of each chunk */
  PetscScalar *longpart;                 /* partial sum of each chunk */
  PetscInt     nlongchunks;
  MatCSRKCUDAKernel kernel;              /* the kernel in use (never auto) */
  PetscInt     width;                    /* lanes per row: 1 for the scalar kernel (GPUSpMV-3), 2-32 for the vector kernel (GPUSpMV-3.5) */
  size_t       smem;                     /* dynamic shared memory of the stream kernel */
  unsigned     bx, by, bz;               /* thread block shape */
  PetscReal    mean, var;                /* row-length statistics the kernel was chosen from */
  PetscInt     maxlen, nonzerorows;
  struct _n_CSRKDevice *t;               /* MatMultTranspose: the transpose S^T as a matrix of its own, built at the first use; */
  CSRKIdx     *tmap;                     /* entry q of S^T is entry tmap[q] of S, for value refreshes */
  CSRKIdx     *sliceptr;                 /* sliced kernels: super-row s (32 rows) stored column by column from sliceptr[s], */
  PetscScalar *sval;                     /* padded to its longest row */
  CSRKIdx     *scol;                     /* plain sliced kernel: the columns laid out as sval */
  PetscInt     pnnz;                     /* padded entries of the sliced storage */
  uint16_t    *rowpat;                   /* sliced kernel over row patterns: pattern of each row, whose offsets from */
  CSRKIdx     *patptr;                   /* the diagonal are patoff[patptr[p] .. patptr[p+1]) */
  int32_t     *patoff;
  PetscInt     npat;
  CSRKIdx     *crows, *crowptr, *cunitptr, *csrptr; /* forward products over the non-empty rows only (blocks with mostly */
  PetscInt     nc, cnunits, cwidth;                /* empty rows, e.g. the off-process block of an MPI matrix) */
  PetscScalar *ywork;                    /* scratch: staged host inputs */
  PetscInt     nywork;
  CSRKCusparse sp;                       /* the cusparse kernel: cuSPARSE's SpMV over rowptr, colidx and val */
  CSRKIdx     *mtile, *mcarryrow;        /* merge kernel: (row, nonzero) where each tile starts; row of each tile's carry */
  PetscScalar *mcarryval;                /* and its value */
  PetscInt     ntiles;
  PetscBool    mpdl;                     /* the fix-up kernel as a programmatic dependent launch */
  CSRKIdx     *nodeptr, *nodecolptr;     /* block kernel: first row of each node of rows with one column list, first */
  CSRKIdx     *nodevalptr, *nodebase;    /* column entry, first value (CSR order: the node's rows one after the other); */
  CSRKIdx     *nodecol;                  /* the node's columns, 32-bit or as 16-bit offsets from its base column */
  uint16_t    *nodeoff;
  PetscInt     nnodes, nnoderows, nodecolent; /* nodes, rows in nodes of two or more, column entries */
  PetscInt64   nodespan;                 /* the widest column range of a node (max - min column) */
  size_t       bytes;                    /* device memory held */
} CSRKDevice;

/* spptr->cuda of a MATSEQCSRKCUDA: the device copy and what it was made from */
typedef struct {
  CSRKDevice      *dev;
  PetscOffloadMask offloadmask; /* PETSC_OFFLOAD_BOTH while the device copy holds A's current values, else PETSC_OFFLOAD_CPU */
  PetscObjectState nzstate;     /* A->nonzerostate the layout was built for */
  PetscObjectState state;       /* object state of the values on the device */
  MatCSRKOptions   opt;         /* options the layout was built with */
  PetscInt         nsetups, nrefresh;
  PetscErrorCode (*hostinfo)(Mat, MatCSRKInfo *); /* MatCSRKGetInfo() of MATSEQCSRK, for the matrix bound to the CPU */
} Mat_SeqCSRKCUDA;

/* set-up and value refresh on the device (csrkcudasetup.cu) */
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceSetUp(Mat, const MatCSRKOptions *, CSRKDevice **);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceRefresh(Mat, CSRKDevice *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceBuildTranspose(Mat, CSRKDevice *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceDestroy(CSRKDevice **);
/* products (csrkcudakernels.cu) */
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceMult(CSRKDevice *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceMultTranspose(CSRKDevice *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceGetDiagonal(CSRKDevice *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceShift(CSRKDevice *, PetscScalar);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceScale(CSRKDevice *, PetscScalar);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceStage(CSRKDevice *, const PetscScalar *, PetscInt, const PetscScalar **);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceSynchronize(void);
PETSC_INTERN PetscErrorCode MatCSRKCUDACopyToHost(PetscScalar *, const PetscScalar *, PetscCount);

/* COO assembly with the values in host or device memory, through the AIJ base type's (csrkcuda.c) */
PETSC_INTERN PetscErrorCode MatCSRKCUDACOOPreallocation(Mat, MatCSRKCOO *, PetscCount, PetscInt[], PetscInt[]);
PETSC_INTERN PetscErrorCode MatCSRKCUDACOOSetValues(Mat, MatCSRKCOO *, const PetscScalar[], InsertMode);

/* halo exchange of the MPI product through pinned host buffers (csrkcudahalo.cu) */
typedef struct _n_CSRKHalo *CSRKHalo;
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloCreate(MPI_Comm, PetscMPIInt, PetscMPIInt, const PetscMPIInt[], const PetscInt[], const PetscInt[], PetscMPIInt, const PetscMPIInt[], const PetscInt[], CSRKHalo *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloBegin(CSRKHalo);
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloEnd(CSRKHalo, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloDestroy(CSRKHalo *);

#if defined(__CUDACC__)
/* shared by the CUDA sources */
  #define CSRK_STREAM_SMEM_MAX (160 * 1024)
  #define CSRK_LONG_CHUNK      4096
PETSC_INTERN PetscErrorCode CSRKGetStream(cudaStream_t *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAGather(PetscInt, const CSRKIdx *, const PetscScalar *, PetscScalar *, cudaStream_t);
PETSC_INTERN PetscErrorCode MatCSRKCUDAMergeSetUp(CSRKDevice *, size_t *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAMergeMult(const CSRKDevice *, const PetscScalar *, const PetscScalar *, PetscScalar *, cudaStream_t);
PETSC_INTERN PetscErrorCode MatCSRKCUDACusparseCreate(CSRKDevice *, size_t *);
PETSC_INTERN PetscErrorCode MatCSRKCUDACusparseDestroy(CSRKDevice *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAStreamKernelInit(void);
/* the block kernel (csrkcudablock.cu): its nodes found on the device, its layout, its products and diagonal */
PETSC_INTERN PetscErrorCode MatCSRKCUDABlockFindNodes(CSRKDevice *, cudaStream_t);
PETSC_INTERN PetscErrorCode MatCSRKCUDABlockBuild(Mat, CSRKDevice *, const MatCSRKOptions *, size_t *, cudaStream_t);
PETSC_INTERN PetscErrorCode MatCSRKCUDABlockFree(CSRKDevice *);
PETSC_INTERN size_t         MatCSRKCUDABlockBytes(const CSRKDevice *, PetscBool);
PETSC_INTERN PetscErrorCode MatCSRKCUDABlockMult(const CSRKDevice *, const PetscScalar *, const PetscScalar *, PetscScalar *, cudaStream_t);
PETSC_INTERN PetscErrorCode MatCSRKCUDABlockDiagonal(CSRKDevice *, PetscBool, PetscScalar, PetscScalar *, cudaStream_t);
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
