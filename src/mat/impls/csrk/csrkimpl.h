/* Private declarations shared by the CSR-k sequential, MPI and CUDA implementations. */
#ifndef CSRKIMPL_H
#define CSRKIMPL_H

#include <petsccsrk.h>
#include <petsc/private/matimpl.h>
#include <stddef.h>
#include <stdint.h>
#if defined(_OPENMP)
  #include <omp.h>
#endif

/* ---- PETSc version compatibility (3.18 .. newest) ---- */
#if PETSC_VERSION_LT(3, 23, 0)
typedef PetscOptionItems *CSRKOptionItems;
#else
typedef PetscOptionItems CSRKOptionItems;
#endif

/* Local indices on the hot path are 32-bit whatever PetscInt is; this is checked before allocation. */
typedef int32_t CSRKIdx;
#define CSRK_IDX_MAX INT32_MAX
/* Entries at most this far from the diagonal (in the stored numbering) in every row: columns as 16-bit offsets */
#define CSRK_COLOFF_MAX INT16_MAX

/* Options of one matrix: set at the MPI level and copied to its blocks. */
typedef struct {
  PetscInt        k;        /* 1, 2 or 3 */
  PetscInt        sr_size;  /* rows per super-row; PETSC_DECIDE: from the tuning rule */
  PetscInt        ssr_size; /* super-rows per super-super-row; PETSC_DECIDE: from the tuning rule */
  MatCSRKOrdering ordering;
  PetscInt        nthreads; /* PETSC_DECIDE: MatCSRKDefaultThreads() (one, unless OMP_NUM_THREADS is set) */
  PetscBool       feature[MAT_CSRK_NUM_FEATURES]; /* MatCSRKSetFeature(), indexed by MatCSRKFeature */
  MatCSRKSetup    setup;    /* when the structure is built (CPU); not a property of the structure itself */
  PetscInt        rowloop;  /* MatCSRKSetRowLoop(): the entry of MatCSRKVariants the build tries alone, or -1: the plan's */
  MatCSRKCUDAKernel cuda_kernel; /* CUDA type */
} MatCSRKOptions;

/* The CSR-k structure of one sequential block: the copy the kernels stream through.
   Row r of the structure is row perm[r] of the user's matrix, and its column indices are iperm[] of the user's
   columns (for the natural ordering, the user's rows and columns). */
typedef struct _n_MatCSRKVariant MatCSRKVariant;
typedef struct _n_MatCSRKStructure {
  const MatCSRKVariant *variant; /* the row loop chosen by the plan (csrkplan.c) */
  PetscInt        m, n, nnz;
  PetscInt        k, sr_size, ssr_size;
  MatCSRKOrdering ordering; /* in effect */
  PetscInt        nsr, nssr;
  CSRKIdx        *rowptr;   /* m+1 */
  CSRKIdx        *colidx;   /* nnz; NULL when the kernels read coloff instead */
  int16_t        *coloff;   /* nnz: column minus row of each entry, when every one fits in 16 bits (else NULL) */
  uint16_t       *rowpat;   /* m: the pattern of each row when the kernels read patterns, not indices (else NULL) */
  CSRKIdx        *patptr;   /* npat+1: pattern p is patoff[patptr[p] .. patptr[p+1]) */
  int32_t        *patoff;   /* column - row of each entry of each distinct pattern */
  PetscInt        npat;
  PetscScalar    *sval;     /* nnz: the values with the rows of each slice interleaved, in the kernel's order, without those of slices that keep a list (csrkslices.c), or NULL */
  PetscInt        nsliced;  /* rows in slices */
  struct _n_MatCSRKRowValues *rowvals; /* with sval (one thread): the value lists of slices whose rows repeat one (csrkslices.c), or NULL */
  PetscInt        nvalued;  /* rows in such slices, or with nodesrc, rows of nodes that multiply an earlier node's values (a structure has slices or nodes, not both) */
  uint8_t        *nodesz;   /* nnodes: rows of each row node (csrknodes.c), or NULL */
  PetscInt        nnodes, nnoderows; /* nodes, and the rows in nodes of two or more */
  CSRKIdx        *nodesrc;  /* with nodesz (value lists): the position in val of the values each node multiplies, its own or an earlier node's that are the same bits (csrknodes.c), or NULL */
  CSRKIdx        *uptr;     /* m+1: the strictly upper entries of row r are ucol[uptr[r] .. uptr[r+1]) (the symmetric half, csrksymmetric.c), or NULL */
  CSRKIdx        *ucol;     /* nnzu: their columns */
  PetscScalar    *uval;     /* nnzu: their values */
  CSRKIdx        *umirror;  /* nnzu: the position in val of each one's mirror (c, r), for the value refresh */
  PetscScalar    *udiag;    /* m: the diagonal (0 where there is none) */
  PetscInt        nnzu;     /* strictly upper entries */
  PetscScalar    *val;      /* nnz */
  CSRKIdx        *srptr;    /* nsr+1: first row of each super-row */
  CSRKIdx        *ssrptr;   /* nssr+1: first super-row of each super-super-row (k = 3) */
  CSRKIdx        *perm;     /* m, NULL for the identity */
  CSRKIdx        *srcptr;   /* m: first value of row r in the AIJ arrays, for the value refresh (reordered only) */
  PetscBool       shared;   /* natural ordering: rowptr, colidx and val are the AIJ arrays themselves (MatCSRKStructureAttach()); coloff is always the structure's own */
  PetscScalar    *xwork;    /* n: x gathered into the internal order (reordered only) */
  PetscScalar    *ywork;    /* m: A x in the internal order (reordered only), gathered into y through iperm */
  CSRKIdx        *iperm;    /* m: internal row of each user's row (reordered only) */
  PetscInt        nonzerorows;
  /* static schedule: thread t owns top-level units [tstart[t], tstart[t+1]) */
  PetscInt        nthreads;
  PetscInt       *tstart;
  /* statistics */
  PetscInt        bw_before, bw_after; /* -1: not computed (natural order, where the build does not need it) */
  PetscLogDouble  build_time, order_time, fill_time; /* the build, its ordering part, its arrays (levels, copies) */
  PetscLogDouble  bytes;
} MatCSRKStructure;

/* The plan of a build (csrkplan.c): the variants it may try, in order (decided before the build from the matrix, the
   options and the machine file: MatCSRKPlanExpect()), then how the column indices may be read, decided once from the
   options and the ordering before the arrays are filled; the build's stages and the variants' predicates read it */
#define CSRK_MAX_VARIANTS 8
typedef struct {
  const MatCSRKOptions *opt;
  const PetscInt       *aj;        /* the AIJ columns */
  PetscBool             onethread; /* one thread in the natural order: the AIJ loop over the AIJ arrays, unless the rows make slices */
  PetscBool             compress;  /* 16-bit offsets from the diagonal, where the bandwidth lets them */
  PetscBool             patterns;  /* row patterns, where the rows let them */
  PetscBool             searched;  /* the row patterns were searched for already (by an entry before) */
  const MatCSRKVariant *order[CSRK_MAX_VARIANTS + 1]; /* the entries the build tries, first first, NULL-terminated */
} MatCSRKPlan;

/* What the set-up expects of a build before it makes it (MatCSRKPlanExpect()): the entries to try, in order, the
   threads, and the expected cost of the build in AIJ products (the first entry's), which the products must pay for
   first: the products to wait for it */
typedef struct {
  const MatCSRKVariant *order[CSRK_MAX_VARIANTS + 1];  /* empty: nothing would beat AIJ's kernel, nothing is built */
  const MatCSRKVariant *rivals[CSRK_MAX_VARIANTS + 1]; /* the rivals the machine file measured faster, in any numbering: the reordering's */
  PetscReal             cost;
  PetscInt              nthreads, wait;
  PetscBool             slices;      /* one thread in the natural order reads row patterns, for row slices only */
  PetscBool             reorder;     /* the auto ordering: a reordering comes later, after reorderwait products */
  PetscInt              reorderwait;
} MatCSRKExpect;

/* An array of a structure: its field, the size of an entry, its length, and whether it may be the AIJ array itself
   (a natural-order structure shares them: neither counted, copied nor freed) */
typedef enum { /* nnz, m, m + 1, n, super-rows + 1, super-super-rows + 1, threads + 1, nodes, patterns + 1, the patterns' offsets, upper entries, one */
  CSRK_LEN_NNZ, CSRK_LEN_M, CSRK_LEN_M1, CSRK_LEN_N, CSRK_LEN_NSR1, CSRK_LEN_NSSR1, CSRK_LEN_THREADS1, CSRK_LEN_NODES, CSRK_LEN_PATTERNS1, CSRK_LEN_PATOFF, CSRK_LEN_NNZU, CSRK_LEN_ONE
} MatCSRKLength;
typedef struct {
  size_t        field, size; /* size 0 ends a list */
  MatCSRKLength len;
  PetscBool     aij;
} MatCSRKArray;
#define CSRK_ARRAY(f, len, aij) {offsetof(MatCSRKStructure, f), sizeof(*((MatCSRKStructure *)0)->f), (len), (aij)}

/* A variant of the CPU row loop: an entry of the plan's table (csrkplan.c), preferred first. It applies under the
   plan, builds what it needs (or declines: the next entry is tried), multiplies the rows [r0, r1) of thread t (out =
   A x (+ zz) in the structure's order) and refreshes what it derives from the values (NULL: nothing); it owns the
   arrays it lists, which the structure counts, duplicates and frees whichever variant is chosen. Its costs, in AIJ
   products, are what the set-up waits for before a build and a refresh; a variant that reads as many bytes as AIJ's
   kernel on one thread names its rival key, and is tried only where the machine file measured it faster
   (csrkmachine.c) */
/* What the probe of a block's first rows found before a build (MatCSRKPlanExpect()), which each entry's expect reads:
   whether one thread in the natural order tries the entry by rule (it reads fewer bytes), as a rival of AIJ's kernel
   (where the machine file measured it faster), or not */
typedef struct {
  const MatCSRKOptions *opt;
  PetscInt              m, n, rows;             /* the block, and the rows probed */
  PetscInt              slicerows, noderows;    /* probed rows in runs of one pattern (where slices may be read), in row nodes */
  PetscInt              repeats;                /* probed rows of nodes that repeat an earlier node's values (where nodes are many) */
  PetscBool             inodes;                 /* AIJ's own kernel is its inode kernel */
} MatCSRKProbe;
typedef enum { CSRK_EXPECT_NO, CSRK_EXPECT_RULE, CSRK_EXPECT_RIVAL } MatCSRKExpectRule;

struct _n_MatCSRKVariant {
  const char *name;
  MatCSRKExpectRule (*expect)(const MatCSRKProbe *); /* one thread in the natural order (NULL: never there) */
  PetscBool (*applies)(const MatCSRKPlan *, const MatCSRKStructure *);
  PetscErrorCode (*build)(Mat, MatCSRKPlan *, MatCSRKStructure *, PetscBool *);
  void (*mult)(const MatCSRKStructure *, PetscInt, PetscInt, PetscInt, const PetscScalar *, const PetscScalar *, PetscScalar *);
  PetscErrorCode (*refresh)(MatCSRKStructure *);
  MatCSRKArray arrays[6]; /* ended by an entry of size 0 */
  PetscReal    cost, rcost; /* expected cost of a build and of a value refresh, in AIJ products */
  const char  *rival;       /* key of the machine file (one thread in the natural order), or NULL: fewer bytes by rule */
};
PETSC_INTERN const MatCSRKVariant MatCSRKVariantSlices, MatCSRKVariantPatterns, MatCSRKVariantSymmetric, MatCSRKVariantNodes, MatCSRKVariantOffsets16, MatCSRKVariantColumns32;
PETSC_INTERN const MatCSRKVariant *const MatCSRKVariants[]; /* the table, preferred first, NULL-terminated */
PETSC_INTERN PetscErrorCode MatCSRKPlanExpect(Mat, const MatCSRKOptions *, MatCSRKExpect *);
/* The set-up's budget (csrksetup.c): the products wait until they would have paid for the set-up at this fraction of
   their time (about 3 % of a CG solve's time), and for a build at least about the product of CSRK_BUILD_FLOOR_NNZ
   nonzeros (its allocations). The wait and the list below come last in the plan's expectation, after the machine
   file was read: here, beneath both files, the expectation goes on down instead of back into csrkplan.c. */
#define CSRK_SETUP_BUDGET    0.05
#define CSRK_BUILD_FLOOR_NNZ 2.0e4
/* MatCSRKPlanWait - the products to wait for a set-up of this expected cost on a block of nnz nonzeros: eager, none */
static inline PetscInt MatCSRKPlanWait(const MatCSRKOptions *opt, PetscReal products, PetscInt nnz)
{
  if (opt->setup == MAT_CSRK_SETUP_EAGER) return 0;
  products = PetscMax(products, CSRK_BUILD_FLOOR_NNZ / PetscMax(nnz, 1));
  return (PetscInt)(products / CSRK_SETUP_BUDGET + 0.5);
}
/* MatCSRKExpectList - the names of the entries expected, joined by commas */
static inline PetscErrorCode MatCSRKExpectList(const MatCSRKExpect *ex, char *list, size_t len)
{
  PetscFunctionBegin;
  list[0] = 0;
  for (const MatCSRKVariant *const *v = ex->order; *v; v++) {
    PetscCall(PetscStrlcat(list, v == ex->order ? "" : ", ", len));
    PetscCall(PetscStrlcat(list, (*v)->name, len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
PETSC_INTERN PetscInt       MatCSRKKernelThreads(const MatCSRKOptions *, PetscInt);
PETSC_INTERN const MatCSRKVariant *MatCSRKVariantIndexLoop(const MatCSRKStructure *);
PETSC_INTERN PetscBool      MatCSRKSymmetricMayApply(const MatCSRKOptions *, PetscInt, PetscInt);
PETSC_INTERN PetscBool      MatCSRKPlanSlicesOn(const MatCSRKOptions *);
PETSC_INTERN PetscErrorCode MatCSRKNodeValuesRepeat(const MatCSRKPlan *, MatCSRKStructure *, PetscBool *);
PETSC_INTERN void           MatCSRKStructureCountBytes(MatCSRKStructure *);
PETSC_INTERN PetscErrorCode MatCSRKVariantFree(const MatCSRKVariant *, MatCSRKStructure *);
PETSC_INTERN void           MatCSRKPopulate(void *, size_t);
/* The set-up of one block (csrksetup.c): products counted since the pattern and the values changed, and what a build
   is expected to give; counts, not seconds, so that every run builds at the same product */
typedef struct {
  PetscInt         npattern; /* products since the nonzero pattern (or the options) changed */
  PetscInt         nvalues;  /* products since the values (or the pattern) last changed */
  PetscObjectState seen;     /* the object state that change was seen at */
  PetscBool        expected; /* ex holds the expectation for this pattern */
  MatCSRKExpect    ex;
  PetscInt         nbase, nfast; /* products run each way, for MatCSRKGetInfo() */
} MatCSRKBudget;

/* spptr of a sequential CSR-k matrix; the CUDA type's begins with one (cuda/csrkcuda.h) */
typedef struct {
  MatCSRKOptions    opt;
  MatCSRKBudget     budget;
  MatCSRKStructure *st;
  PetscObjectState  nzstate; /* A->nonzerostate the structure was built for */
  PetscObjectState  state;   /* object state the values were copied at; -1: copy them at the next product */
  PetscBool         stale;   /* options changed: rebuild at next use */
  PetscInt          nbuilds, nrefresh;
  PetscLogDouble    setup_time; /* the set-up's seconds so far (probes, builds, value copies): the MatCSRKBuild event's */
  PetscBool         offdiag; /* off-diagonal block of an MPI matrix: its input is the matrix's own ghost vector */
} Mat_SeqCSRK;

/* spptr of an MPI CSR-k matrix; the CUDA type's begins with one (cuda/csrkcuda.h), whose blocks and view are its own */
typedef struct {
  MatCSRKOptions opt;
  MatType        blocktype;                                      /* the type of the blocks */
  PetscErrorCode (*convertblock)(Mat, MatType, MatReuse, Mat *); /* a SeqAIJ block to blocktype */
  PetscErrorCode (*typeview)(Mat, PetscViewer);                  /* the type's view */
  PetscErrorCode (*view)(Mat, PetscViewer); /* the view a DM put in place of the type's (DMDA: in its natural ordering), which the type's view calls for the matrix itself */
} Mat_MPICSRK;

PETSC_INTERN PetscLogEvent MAT_CSRKBuild, MAT_CSRKOrder, MAT_CSRKHaloBegin, MAT_CSRKHaloEnd;

/* options */
PETSC_INTERN PetscErrorCode MatCSRKOptionsFromMat(Mat, MatCSRKOptions *);
PETSC_INTERN PetscBool      MatCSRKOptionsEqual(const MatCSRKOptions *, const MatCSRKOptions *);

/* the machine file (csrkmachine.c): what was measured once about this CPU, read at registration */
#define CSRK_MACHINE_GAIN 1.10 /* a rival of AIJ's kernel is tried where its product measured at least this much faster: 5 % of a solve whose products are about half of it, and the noise of the measurement */
PETSC_INTERN PetscErrorCode MatCSRKMachineLoad(void);
PETSC_INTERN PetscReal      MatCSRKMachineGain(const char *, PetscBool, const char *);

/* tuning */
PETSC_INTERN void           MatCSRKChooseSizes(PetscInt, PetscInt, PetscInt, PetscInt, PetscInt *, PetscInt *);
PETSC_INTERN PetscInt       MatCSRKBandKGroupRows(PetscInt, PetscInt, PetscInt, PetscInt);
PETSC_INTERN void           MatCSRKGPUSizes(MatCSRKCUDAKernel, PetscBool, PetscReal, PetscInt *, PetscInt *);

/* ordering; the auto ordering reorders a matrix whose nonzeros lie this far from the diagonal on average (a random
   permutation gives m/3) */
#define CSRK_AUTO_SCRAMBLED(meandist, m) ((meandist) > (PetscReal)(m) / 16)
/* the random-numbering test of the CPU plan (on its sample of rows): most nonzeros lie farther than
   CSRK_SCATTER_NEAR(m) from the diagonal (the GPU's counts the sectors of x its gathers touch instead) */
#define CSRK_SCATTER_NEAR(m)          ((m) / 16)
#define CSRK_SCATTERED(far, nonzeros) (2 * (far) > (nonzeros))
/* the auto ordering's rule (MatCSRKAutoReorders()): a scrambled square block whose x exceeds the core's L2 cache, and
   fewer than half of whose nonzeros lie within the window of rows whose x fills a quarter of it (a mesh's own
   numbering keeps most of them there, a random one few) */
PETSC_INTERN PetscBool MatCSRKAutoReorders(PetscInt, PetscInt, const PetscInt *, const PetscInt *, PetscReal *, PetscBool *);
PETSC_INTERN PetscInt  MatCSRKMachineL2Rows(void);
/* the bandwidth and the mean |i-j| of the nonzeros of an AIJ block */
PETSC_INTERN void MatCSRKDistances(PetscInt, const PetscInt *, const PetscInt *, PetscInt, PetscInt *, PetscReal *);
PETSC_INTERN PetscErrorCode MatCSRKComputeOrdering(Mat, MatCSRKOrdering, PetscInt, PetscInt, PetscInt, PetscInt **, PetscInt *, PetscInt **);
PETSC_INTERN PetscErrorCode MatGetOrdering_BandK(Mat, MatOrderingType, IS *, IS *);

/* threads of the CPU kernels (csrkthreads.c) */
PETSC_INTERN PetscInt  MatCSRKDefaultThreads(void);
PETSC_INTERN PetscBool MatCSRKShareNatural(PetscInt);

/* structure */
/* the rows of the top-level units [u0, u1) and those the calling thread of a parallel region multiplies (csrkmult.c) */
PETSC_INTERN void     MatCSRKUnitRows(const MatCSRKStructure *, PetscInt, PetscInt, PetscInt *, PetscInt *);
PETSC_INTERN PetscInt MatCSRKThreadRows(const MatCSRKStructure *, PetscInt *, PetscInt *);
/* The loop nest of the k levels over the units of thread t (rows [r0, r1) for k = 1), with ROWS(R0, R1, OUT, ...) a
   row loop over a block of rows, out[r] = OUT */
#define CSRK_NEST(ROWS, OUT, ...) \
  do { \
    if (st->k == 1) { \
      ROWS(r0, r1, OUT, __VA_ARGS__); \
    } else if (st->k == 2) { \
      for (PetscInt s = st->tstart[t]; s < st->tstart[t + 1]; s++) ROWS(st->srptr[s], st->srptr[s + 1], OUT, __VA_ARGS__); \
    } else { \
      for (PetscInt q3 = st->tstart[t]; q3 < st->tstart[t + 1]; q3++) \
        for (PetscInt s = st->ssrptr[q3]; s < st->ssrptr[q3 + 1]; s++) ROWS(st->srptr[s], st->srptr[s + 1], OUT, __VA_ARGS__); \
    } \
  } while (0)
/* the two outputs: out = A x or out = A x + zz */
#define CSRK_OUTPUTS(ROWS, ...) \
  do { \
    if (!zz) CSRK_NEST(ROWS, sum, __VA_ARGS__); \
    else CSRK_NEST(ROWS, zz[r] + sum, __VA_ARGS__); \
  } while (0)
PETSC_INTERN PetscErrorCode MatCSRKStructureFindPatterns(Mat, MatCSRKStructure *, const PetscInt *, PetscBool);
PETSC_INTERN PetscErrorCode MatCSRKStructureComputeBandwidth(Mat, MatCSRKStructure *);
/* row slices: runs of this many rows with one pattern, multiplied one row per vector lane */
#define CSRK_SLICE 8
/* Value lists: a slice whose CSRK_SLICE rows repeat one list of values (the interior of a constant-coefficient stencil)
   keeps it once, in a dictionary beside the row patterns', and its rows' pattern numbers become CSRK_VALUED + the
   list's number, which carries the row pattern. The last rows of a run of one pattern after its slices (fewer than
   CSRK_SLICE) whose slice ending at them repeats a list are numbered CSRK_VALUED_TAIL + the list's number: the tail
   of the run, multiplied as that slice (csrkslices.c). Sizes: the lists stay in the L1 cache with the patterns'
   offsets. */
#define CSRK_VALUED             0x8000u
#define CSRK_VALUED_TAIL        0xC000u
#define CSRK_VALUED_LIST(rp)    ((PetscInt)(((rp) - CSRK_VALUED) & 0x3FFFu))
#define CSRK_VALUES_MAX         255
#define CSRK_VALUES_MAX_ENTRIES 2048
#define CSRK_VALUES_SLOTS       512
typedef struct _n_MatCSRKRowValues {
  PetscInt    n;                                  /* lists */
  PetscInt    last;                               /* the list found last, tried first; -1: none */
  CSRKIdx     start[CSRK_VALUES_MAX + 1];         /* list v is val[start[v] .. start[v+1]) */
  uint16_t    pat[CSRK_VALUES_MAX];               /* the row pattern of list v */
  uint16_t    slot[CSRK_VALUES_SLOTS];            /* hash table: 1 + list, 0: free */
  PetscScalar val[CSRK_VALUES_MAX_ENTRIES];
} MatCSRKRowValues;
/* row nodes: up to this many consecutive rows with one column list, multiplied together (PETSc's inode limit) */
#define CSRK_NODE_MAX 5
PETSC_INTERN PetscErrorCode MatCSRKStructureBuild(Mat, const MatCSRKOptions *, const MatCSRKExpect *, MatCSRKStructure **);
PETSC_INTERN PetscErrorCode MatCSRKStructureRefreshValues(Mat, const MatCSRKExpect *, MatCSRKStructure **);
PETSC_INTERN PetscErrorCode MatCSRKStructureAttach(Mat, MatCSRKStructure *);
PETSC_INTERN PetscErrorCode MatCSRKStructureDuplicate(const MatCSRKStructure *, MatCSRKStructure **);
PETSC_INTERN PetscErrorCode MatCSRKStructureDestroy(MatCSRKStructure **);

/* kernels (OpenMP, csrkmult.c) */
PETSC_INTERN void           MatCSRKMultKernel(const MatCSRKStructure *, const PetscScalar *, const PetscScalar *, PetscScalar *);

/* sequential type */
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqCSRK(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatSeqCSRKSetOptions(Mat, const MatCSRKOptions *);
PETSC_INTERN PetscErrorCode MatSeqCSRKSetUp(Mat, PetscBool, MatCSRKStructure **);
PETSC_INTERN PetscErrorCode MatSeqCSRKExpected(Mat, char *, size_t, PetscInt *);
PETSC_INTERN PetscErrorCode MatCreate_SeqCSRK(Mat);
PETSC_INTERN PetscErrorCode MatMult_SeqCSRK(Mat, Vec, Vec);
PETSC_INTERN PetscErrorCode MatMultAdd_SeqCSRK(Mat, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode MatDestroy_SeqCSRK(Mat);
PETSC_INTERN PetscErrorCode MatConvert_SeqCSRK_SeqAIJ(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatMPICSRKConvertBlocks(Mat);
PETSC_INTERN void           MatMPICSRKSetHostType(Mat_MPICSRK *);
PETSC_INTERN PetscErrorCode MatDuplicate_SeqCSRK(Mat, MatDuplicateOption, Mat *);
PETSC_INTERN PetscErrorCode MatDuplicate_MPICSRK(Mat, MatDuplicateOption, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_MPICSRK_MPIAIJ(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_SeqCSRKCUDA(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_SeqCSRKCUDA_SeqCSRK(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatConvert_MPIAIJ_MPICSRKCUDA(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatCSRKCUDAConvertBegin(Mat, PetscBool, MatReuse, Mat *, Mat *);
PETSC_INTERN PetscErrorCode MatView_CSRKCUDA(Mat, PetscViewer);
PETSC_INTERN PetscErrorCode MatCreate_SeqCSRKCUDA(Mat);
PETSC_INTERN PetscErrorCode MatCreate_MPICSRKCUDA(Mat);
PETSC_INTERN PetscErrorCode MatConvert_MPIAIJ_MPICSRK(Mat, MatType, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatCreate_MPICSRK(Mat);

/* conversions (csrkconvert.c): what makes an AIJ matrix one of a CSR-k type besides its data (spptr), the AIJ methods
   the type replaces and the functions composed on its matrices, in a table of the type */
#define CSRK_MAX_METHODS 16
typedef struct {
  MatOperation op;
  void (*f)(void); /* NULL ends the list */
  PetscBool device; /* a device method: MatBindToCPU() puts the host one (the parent type's, else AIJ's) in its place */
} MatCSRKMethod;
typedef struct {
  const char *name; /* NULL ends the list */
  void (*f)(void);
} MatCSRKComposed;
typedef struct {
  PetscBool       mpi;           /* the methods replaced are MPIAIJ's, else SeqAIJ's */
  MatType         type, aijtype; /* the type's name, and that of the AIJ type it converts back to */
  MatCSRKMethod   ops[CSRK_MAX_METHODS];
  MatCSRKComposed composed[CSRK_MAX_METHODS];
} MatCSRKMethods;
#define CSRK_METHOD(op, f)        {(op), (void (*)(void))(f), PETSC_FALSE}
#define CSRK_DEVICE_METHOD(op, f) {(op), (void (*)(void))(f), PETSC_TRUE}
#define CSRK_COMPOSED(name, f)    {(name), (void (*)(void))(f)}
PETSC_INTERN PetscErrorCode MatCSRKConvertTarget(Mat, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatCSRKSetMethods(Mat, const MatCSRKMethods *, PetscBool);
/* a type that extends another (csrkcuda extends csrk): its table over the parent's, and back */
PETSC_INTERN const MatCSRKMethods SeqCSRKMethods, MPICSRKMethods;
PETSC_INTERN PetscErrorCode MatCSRKExtendMethods(Mat, const MatCSRKMethods *, const MatCSRKMethods *, PetscBool, PetscBool);

/* the SeqAIJ/MPIAIJ methods a CSR-k matrix overrides, taken from pristine AIJ matrices */
PETSC_INTERN PetscErrorCode MatCSRKGetBaseOps(PetscBool, const struct _MatOps **);
PETSC_INTERN void           MatCSRKResetBaseOps(void);
/* methods of both types (csrk.c) */
PETSC_INTERN PetscErrorCode MatCSRKGetSpptr(Mat, void *);
PETSC_INTERN PetscErrorCode MatView_CSRK(Mat, PetscViewer);
PETSC_INTERN PetscErrorCode MatSetFromOptions_CSRK(Mat, CSRKOptionItems);
PETSC_INTERN PetscErrorCode MatCSRKGetOptions_CSRK(Mat, MatCSRKOptions *);

#endif
