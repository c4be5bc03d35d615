/*
   Public interface of the CSR-k matrix types for PETSc.

   CSR-k stores a sparse matrix as CSR plus k-1 pointer arrays that group consecutive rows into
   super-rows (k >= 2) and super-rows into super-super-rows (k = 3), in the user's ordering or a
   bandwidth-reducing one. The matrix types derive from AIJ: every AIJ operation keeps working,
   and MatMult/MatMultAdd run through the CSR-k kernels.
*/
#ifndef PETSCCSRK_H
#define PETSCCSRK_H

#include <petscmat.h>

/* PETSC_SUCCESS arrived in PETSc 3.19; programs built against older releases get it here */
#if PETSC_VERSION_LT(3, 19, 0) && !defined(PETSC_SUCCESS)
  #define PETSC_SUCCESS 0
#endif

/* Root names (resolved by communicator size) and the concrete types. The concrete names keep the
   "seqaij"/"mpiaij" prefix so that PETSc treats them as AIJ (factorizations, MatMPIAIJGetSeqAIJ, PCs). */
#define MATCSRK        "csrk"
#define MATSEQCSRK     "seqaijcsrk"
#define MATMPICSRK     "mpiaijcsrk"
#define MATCSRKCUDA    "csrkcuda"
#define MATSEQCSRKCUDA "seqaijcsrkcuda"
#define MATMPICSRKCUDA "mpiaijcsrkcuda"

/*MC
   MATORDERINGBANDK - "bandk" - the Band-k ordering of the CSR-k paper for `MatGetOrdering()` on any square matrix:
   METIS coarsening of the rows into super-rows (and super-super-rows), then a weighted reverse Cuthill-McKee of each
   coarse level, so that rows grouped together are numbered together

   Level: intermediate

   Note:
   Registered by `MatCSRKRegister()` (and by loading the library with -dll_append); `MATCSRK` uses it with
   `-mat_csrk_ordering bandk`.

.seealso: `MatGetOrdering()`, `MatCSRKSetOrdering()`, `MatCSRKOrdering`, `MATCSRK`
M*/
#define MATORDERINGBANDK "bandk"

/*E
   MatCSRKOrdering - ordering applied to the rows (and columns) of the local diagonal block before the CSR-k structure is built

$  MAT_CSRK_ORDERING_NATURAL - keep the user's ordering
$  MAT_CSRK_ORDERING_RCM     - reverse Cuthill-McKee (George-Liu start nodes, as PETSc's MatGetOrdering() RCM), computed on the matrix's own rows in O(nonzeros)
$  MAT_CSRK_ORDERING_BANDK   - Band-k: METIS coarsening into super-rows (and super-super-rows), weighted RCM of each coarse level
$  MAT_CSRK_ORDERING_AUTO    - (default) RCM for a scrambled block whose vectors exceed the core's L2 cache (mean |i-j|
$                              above rows/16, fewer than half the nonzeros near their row), after 1,200 products under
$                              the set-up budget; natural otherwise (docs/design.md, "Default ordering")

   Options Database Key:
.  -mat_csrk_ordering <natural,rcm,bandk,auto> - the ordering

   Level: intermediate

   Note:
   The ordering applies to the host products; `MATCSRKCUDA` multiplies on the GPU in the user's ordering.

.seealso: `MatCSRKSetOrdering()`, `MATCSRK`
E*/
typedef enum {
  MAT_CSRK_ORDERING_NATURAL,
  MAT_CSRK_ORDERING_RCM,
  MAT_CSRK_ORDERING_BANDK,
  MAT_CSRK_ORDERING_AUTO
} MatCSRKOrdering;
PETSC_EXTERN const char *const MatCSRKOrderings[];

/*E
   MatCSRKSetup - when the CPU kernels' CSR-k structure is built and its values refreshed

$  MAT_CSRK_SETUP_BUDGET - (default) the products run with PETSc's AIJ kernel until a count of them, the expected cost
$                          of the build in AIJ products over 5 %, has paid for it; a value change is copied in under the
$                          same rule. What is built is decided before, from the matrix, the options and the machine file
$                          (`make tune`): nothing where no variant reads fewer bytes than AIJ's kernel or was measured
$                          faster on this processor. Nothing is timed: the same bits every run (docs/design.md, "Set-up")
$  MAT_CSRK_SETUP_EAGER  - built at the first product, with every variant the options allow whatever the machine file
$                          says, and refreshed at the first product after each value change (benchmarks, tests)

   Options Database Key:
.  -mat_csrk_setup <budget,eager> - the rule

   Level: advanced

.seealso: `MatCSRKSetSetup()`, `MATCSRK`
E*/
typedef enum {
  MAT_CSRK_SETUP_BUDGET,
  MAT_CSRK_SETUP_EAGER
} MatCSRKSetup;
PETSC_EXTERN const char *const MatCSRKSetups[];

/*E
   MatCSRKCUDAKernel - the SpMV kernel of `MATCSRKCUDA`

$  MAT_CSRK_CUDA_KERNEL_AUTO   - from the row-length statistics, the row patterns and nodes of the rows and the rows a
$                                multiprocessor of the device (docs/tuning.md), never from a timing: the same kernel every run
$  MAT_CSRK_CUDA_KERNEL_SCALAR - GPUSpMV-3: a thread per row, a block per super-super-row
$  MAT_CSRK_CUDA_KERNEL_VECTOR - GPUSpMV-3.5: a sub-warp per row (8 lanes for rows of 9-32 entries) with a shuffle
$                                reduction; auto's kernel for rows of a few lengths (finite elements of order 2)
$  MAT_CSRK_CUDA_KERNEL_STREAM - a block per super-super-row: coalesced products in shared memory, a thread per row sums them
$  MAT_CSRK_CUDA_KERNEL_SLICED - a warp per super-row whose entries are stored column by column (padded to its longest row),
$                                so that every load of a warp is coalesced; for rows of nearly equal length
$  MAT_CSRK_CUDA_KERNEL_MERGE  - rows and nonzeros together cut into equal tiles of a block each (merge path), a segmented
$                                scan in each block and a fixed-order sum of the rows that cross tiles; for irregular rows
$  MAT_CSRK_CUDA_KERNEL_BLOCK  - runs of up to 6 consecutive rows with one column list (nodes, as AIJ's inodes) keep one
$                                column index per node entry (16-bit offsets from a node base where they fit); a sub-warp
$                                per node reads each x once for the node's rows; for block matrices (elasticity, bs 2-6)
$  MAT_CSRK_CUDA_KERNEL_BSLICED - rows in dense bs x bs blocks (the matrix's block size, 2-6) keep one column index a
$                                block, slices of 32 block rows stored block column by block column (coalesced), a thread
$                                per block row; for block matrices that fill the device (forced on rows that are
$                                not in such blocks, the auto rule's kernel takes them)

   With the scalar, vector and stream kernels, rows far longer than the mean go to a chunked long-row kernel.

   Options Database Key:
.  -mat_csrk_cuda_kernel <auto,scalar,vector,stream,sliced,merge,block,bsliced> - the kernel

   Level: advanced

.seealso: `MATCSRKCUDA`
E*/
typedef enum {
  MAT_CSRK_CUDA_KERNEL_AUTO,
  MAT_CSRK_CUDA_KERNEL_SCALAR,
  MAT_CSRK_CUDA_KERNEL_VECTOR,
  MAT_CSRK_CUDA_KERNEL_STREAM,
  MAT_CSRK_CUDA_KERNEL_SLICED,
  MAT_CSRK_CUDA_KERNEL_MERGE,
  MAT_CSRK_CUDA_KERNEL_BLOCK,
  MAT_CSRK_CUDA_KERNEL_BSLICED
} MatCSRKCUDAKernel;
PETSC_EXTERN const char *const MatCSRKCUDAKernels[];

/*E
   MatCSRKFeature - a switch of the CSR-k structure or kernels, all on by default (`MatCSRKSetFeature()`)

$  MAT_CSRK_COMPRESS_INDICES - column indices as 16-bit offsets from the diagonal where they fit
$  MAT_CSRK_ROW_PATTERNS     - with compressed indices, a row-pattern number per row instead where the rows allow
$  MAT_CSRK_ROW_SLICES       - with row patterns, runs of rows with one pattern multiplied a row per vector lane (CPU)
$  MAT_CSRK_ROW_VALUES       - one thread: a list of values repeated by row slices or row nodes kept once (CPU)
$  MAT_CSRK_ROW_NODES        - one thread: consecutive rows with one column list multiplied together (CPU)
$  MAT_CSRK_CUDA_HALO_PINNED - the MPI product of `MATCSRKCUDA` exchanges the ghost values through pinned host buffers
$  MAT_CSRK_SYMMETRIC_HALF   - one thread: a block with symmetric values multiplied from its diagonal and upper triangle (CPU)

   Options Database Key:
.  -mat_csrk_<feature> <bool> - the feature's name in lower case without the MAT_CSRK_ prefix, such as -mat_csrk_row_nodes

   Level: advanced

.seealso: `MatCSRKSetFeature()`, `MATCSRK`, `MATCSRKCUDA`
E*/
typedef enum {
  MAT_CSRK_COMPRESS_INDICES,
  MAT_CSRK_ROW_PATTERNS,
  MAT_CSRK_ROW_SLICES,
  MAT_CSRK_ROW_VALUES,
  MAT_CSRK_ROW_NODES,
  MAT_CSRK_CUDA_HALO_PINNED,
  MAT_CSRK_SYMMETRIC_HALF,
  MAT_CSRK_NUM_FEATURES
} MatCSRKFeature;
PETSC_EXTERN const char *const MatCSRKFeatures[];

/*S
   MatCSRKInfo - summary of the CSR-k structure of a matrix (for the MPI type: of the local diagonal block, maxima over ranks
   for times and bandwidths, sums for memory)

   Level: intermediate

.seealso: `MatCSRKGetInfo()`
S*/
typedef struct {
  PetscInt        k;          /* levels: 1 = CSR, 2 = super-rows, 3 = super-super-rows */
  PetscInt        sr_size;    /* target rows per super-row */
  PetscInt        ssr_size;   /* target super-rows per super-super-row */
  PetscInt        nsr, nssr;  /* number of super-rows and super-super-rows */
  MatCSRKOrdering ordering;   /* ordering in effect (natural when the block is not square) */
  PetscInt        bw_before;  /* bandwidth max|i-j| of the local diagonal block in the user's ordering */
  PetscInt        bw_after;   /* the same after reordering */
  PetscInt        nthreads;   /* OpenMP threads of the kernels (before the structure is built: those they will run) */
  PetscLogDouble  build_time; /* seconds of set-up so far: probes, builds and value copies, the MatCSRKBuild event of -log_view (max over ranks) */
  PetscLogDouble  bytes;      /* memory held by the CSR-k structure in addition to the AIJ storage */
  PetscInt        nbuilds;    /* structure builds (ordering + pointers) so far */
  PetscInt        nrefresh;   /* value refreshes without a rebuild so far */
  PetscInt        index_bytes; /* bytes per column index read by the CPU kernels: 0 (row patterns), 2 (16-bit offsets) or 4 (max over ranks) */
  PetscInt        npatterns;   /* distinct rows in the row-pattern dictionary, 0 when the kernels read indices (max over ranks) */
  PetscInt        nsliced;     /* rows multiplied in row slices, a row per vector lane (MAT_CSRK_ROW_SLICES; sum over ranks) */
  PetscInt        nnoderows;   /* rows multiplied in row nodes of two or more (MAT_CSRK_ROW_NODES; sum over ranks) */
  PetscInt        nbase;       /* products run with PETSc's AIJ kernel (before the build, or throughout where nothing is built; max over ranks) */
  PetscInt        nfast;       /* products run with the CSR-k structure (max over ranks) */
  PetscInt        nvalued;     /* rows of row slices or row nodes multiplied with one list of values kept once (MAT_CSRK_ROW_VALUES; sum over ranks) */
  char            variant[64]; /* the CPU row loop of the structure: slices, patterns, symmetric, nodes, offsets16 or columns32 (those of the ranks, joined by '+'); empty before a build */
  char            expected[64]; /* the row loops the set-up will try, first first (the first rank's block); empty: AIJ's kernel throughout, since nothing reads fewer bytes and the machine file measured no rival faster */
  PetscInt        wait;        /* the products with AIJ's kernel before that build, counted since the values last changed (max over ranks); -1: no build to come */
} MatCSRKInfo;

PETSC_EXTERN PetscErrorCode MatCSRKRegister(void);
PETSC_EXTERN PetscErrorCode MatCSRKSetLevels(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatCSRKGetLevels(Mat, PetscInt *);
PETSC_EXTERN PetscErrorCode MatCSRKSetSizes(Mat, PetscInt, PetscInt);
PETSC_EXTERN PetscErrorCode MatCSRKGetSizes(Mat, PetscInt *, PetscInt *);
PETSC_EXTERN PetscErrorCode MatCSRKSetOrdering(Mat, MatCSRKOrdering);
PETSC_EXTERN PetscErrorCode MatCSRKGetOrdering(Mat, MatCSRKOrdering *);
PETSC_EXTERN PetscErrorCode MatCSRKSetNumThreads(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatCSRKSetSetup(Mat, MatCSRKSetup);
PETSC_EXTERN PetscErrorCode MatCSRKSetRowLoop(Mat, const char[]);
PETSC_EXTERN PetscErrorCode MatCSRKGetRowLoop(PetscInt, const char *[], const char *[]);
PETSC_EXTERN PetscErrorCode MatCSRKSetFeature(Mat, MatCSRKFeature, PetscBool);
PETSC_EXTERN PetscErrorCode MatCSRKSetCUDAKernel(Mat, MatCSRKCUDAKernel);
PETSC_EXTERN PetscErrorCode MatCSRKGetInfo(Mat, MatCSRKInfo *);
PETSC_EXTERN PetscErrorCode MatCSRKWriteMachineFile(MPI_Comm, const char[], const char[], PetscInt, const char *const[]);

#endif
