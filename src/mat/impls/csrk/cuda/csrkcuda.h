/* Device copy of a CSR-k structure (shared by the CUDA kernels and the MATSEQCSRKCUDA glue) */
#ifndef CSRKCUDA_H
#define CSRKCUDA_H

#include "../csrkimpl.h"

typedef struct _n_CSRKCusparse *CSRKCusparse; /* the cusparse kernel's handle and descriptors (csrkcudakernels.cu) */

typedef struct _n_CSRKDevice {
  PetscInt     m, n, nnz, k;
  PetscInt     nunits;                   /* thread blocks: super-super-rows (k = 3) or super-rows */
  CSRKIdx     *rowptr, *colidx, *unitptr, *srptr, *perm, *longrows;
  PetscScalar *val, *xwork;
  PetscInt     nlong, longlen;           /* rows longer than longlen go to the long-row kernels */
  CSRKIdx     *longrowchunk, *longchunkq;  /* chunks [rowchunk[i], rowchunk[i+1]) of long row i; [q0, q1) of each chunk */
  PetscScalar *longpart;                 /* partial sum of each chunk */
  PetscInt     nlongchunks;
  MatCSRKCUDAKernel kernel;              /* the kernel in use (never auto) */
  PetscInt     width;                    /* lanes per row: 1 for the scalar kernel (GPUSpMV-3), 2-32 for the vector kernel (GPUSpMV-3.5) */
  size_t       smem;                     /* dynamic shared memory of the stream kernel */
  unsigned     bx, by, bz;               /* thread block shape */
  PetscReal    mean, var;                /* row-length statistics the kernel was chosen from */
  PetscInt     maxlen;
  struct _n_CSRKDevice *t;              /* MatMultTranspose: the transpose S^T of the stored matrix S as a matrix of its own */
  CSRKIdx     *tmap;                     /* (rows in blocks of 32, long rows chunked), built at the first use; entry q of S^T */
                                         /* is entry tmap[q] of S, for value refreshes */
  CSRKIdx     *sliceptr, *spos;         /* sliced kernel: super-row s stored column by column from sliceptr[s] (padded to its */
  PetscScalar *sval;                     /* longest row); spos[q]: position of CSR entry q there, for value refreshes */
  PetscInt     pnnz;                     /* padded entries of the sliced storage */
  unsigned    *sidxptr;                  /* column indices of super-row s: at sidx + 32 (sidxptr[s] >> 2), code sidxptr[s] & 3 */
  unsigned char *sidx;                   /* (0, 1: 8- or 16-bit offsets from sbase[sbaseptr[s] + j] for entry position j; */
  CSRKIdx     *sbaseptr, *sbase;         /* 2: 32-bit columns) */
  PetscInt     nslices[3];               /* super-rows with each index code */
  PetscBool    sliced_plain;             /* short rows: 32-bit columns at the values' offsets, CSRKSlicedPlainKernel */
  PetscReal    index_bytes;              /* bytes of the column indices per padded entry, bases included */
  uint16_t    *rowpat;                   /* sliced kernel over row patterns (NULL: over the codes above): pattern of each */
  CSRKIdx     *patptr;                   /* row, whose offsets from the diagonal are patoff[patptr[p] .. patptr[p+1]) */
  int32_t     *patoff;
  PetscInt     npat;
  CSRKIdx     *crows, *crowptr, *cunitptr, *csrptr; /* forward products over the non-empty rows only (blocks with mostly */
  PetscInt     nc, cnunits, cwidth;                /* empty rows, e.g. the off-process block of an MPI matrix) */
  PetscScalar *ywork, *xtwork;           /* scratch: staged host inputs, gathered x of the transpose */
  PetscInt     nywork;
  CSRKCusparse sp;                       /* the cusparse kernel: cuSPARSE's SpMV over rowptr, colidx and val */
  CSRKIdx     *mtile, *mcarryrow;        /* merge kernel: (row, nonzero) where each tile starts; row of each tile's carry */
  PetscScalar *mcarryval;                /* and its value */
  PetscInt     ntiles;
  PetscBool    mpdl;                     /* the fix-up kernel as a programmatic dependent launch */
  size_t       bytes;
} CSRKDevice;

PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceUpload(const MatCSRKStructure *, const MatCSRKOptions *, PetscBool, CSRKDevice **);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceDestroy(CSRKDevice **);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceMult(CSRKDevice *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceMultTranspose(CSRKDevice *, const MatCSRKStructure *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceGetDiagonal(CSRKDevice *, const MatCSRKStructure *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceStage(CSRKDevice *, const PetscScalar *, PetscInt, const PetscScalar **);
PETSC_INTERN PetscErrorCode MatCSRKCUDADeviceSynchronize(void);

/* halo exchange of the MPI product through pinned host buffers (csrkcudahalo.cu) */
typedef struct _n_CSRKHalo *CSRKHalo;
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloCreate(MPI_Comm, PetscMPIInt, PetscMPIInt, const PetscMPIInt[], const PetscInt[], const PetscInt[], PetscMPIInt, const PetscMPIInt[], const PetscInt[], CSRKHalo *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloBegin(CSRKHalo);
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloEnd(CSRKHalo, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAHaloDestroy(CSRKHalo *);

#if defined(__CUDACC__)
/* shared by the CUDA sources: PETSc's current stream, and xp[i] = x[idx[i]] queued on a stream */
PETSC_INTERN PetscErrorCode CSRKGetStream(cudaStream_t *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAGather(PetscInt, const CSRKIdx *, const PetscScalar *, PetscScalar *, cudaStream_t);
PETSC_INTERN PetscErrorCode MatCSRKCUDAMergeSetUp(CSRKDevice *, size_t *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAMergeMult(const CSRKDevice *, const PetscScalar *, const PetscScalar *, PetscScalar *, cudaStream_t);
#endif

#endif
