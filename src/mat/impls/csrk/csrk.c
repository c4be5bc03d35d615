/*
   Registration of the CSR-k types, their options and the public setters/getters.
*/
#include "csrkimpl.h"

const char *const MatCSRKOrderings[] = {"natural", "rcm", "bandk", "auto", "MatCSRKOrdering", "MAT_CSRK_ORDERING_", NULL};
const char *const MatCSRKSetups[]    = {"budget", "eager", "MatCSRKSetup", "MAT_CSRK_SETUP_", NULL};
const char *const MatCSRKCUDAKernels[] = {"auto", "scalar", "vector", "stream", "sliced", "merge", "block", "bsliced", "MatCSRKCUDAKernel", "MAT_CSRK_CUDA_KERNEL_", NULL};
const char *const MatCSRKFeatures[] = {"compress_indices", "row_patterns", "row_slices", "row_values", "row_nodes", "cuda_halo_pinned", "symmetric_half", "MatCSRKFeature", "MAT_CSRK_", NULL};

/* The help of each option -mat_csrk_<MatCSRKFeatures[f]>, in MatCSRKFeature order, and whether only the CUDA types
   read it: a new feature is an enum value, a name and a line here */
static const struct {
  const char *help;
  PetscBool   cuda;
} MatCSRKFeatureOptions[MAT_CSRK_NUM_FEATURES] = {
  {"Store column indices as 16-bit offsets from the diagonal where they fit (fewer bytes per nonzero to stream)", PETSC_FALSE},
  {"With compressed indices, a number per row into a dictionary of the distinct rows' offsets from the diagonal instead of indices, where the rows have few distinct patterns (stencils; CPU kernels and the GPU's sliced kernel)", PETSC_FALSE},
  {"With row patterns, runs of 8 rows with one pattern multiplied a row per vector lane, their values stored interleaved (CPU)", PETSC_FALSE},
  {"One thread: a row slice whose rows repeat one list of values keeps it once, a row node with an earlier node's values multiplies those (constant coefficients, one element matrix) (CPU)", PETSC_FALSE},
  {"One thread, rows in their own order: consecutive rows with one column list multiplied together (CPU)", PETSC_FALSE},
  {"MPI MatMult: exchange the ghost values through pinned host buffers, started before the local product (false: MPIAIJ's VecScatter)", PETSC_TRUE},
  {"One thread, natural order: a block with symmetric values multiplied from its diagonal and upper triangle, each entry read once for two products (CPU)", PETSC_FALSE},
};

PetscLogEvent MAT_CSRKBuild, MAT_CSRKOrder, MAT_CSRKHaloBegin, MAT_CSRKHaloEnd;

static PetscBool             MatCSRKBaseOpsSet[2]  = {PETSC_FALSE, PETSC_FALSE};
static struct _MatOps        MatCSRKBaseOps[2];

static void MatCSRKOptionsDefault(MatCSRKOptions *opt)
{
  opt->k        = 2;
  opt->sr_size  = PETSC_DECIDE;
  opt->ssr_size = PETSC_DECIDE;
  opt->ordering = MAT_CSRK_ORDERING_AUTO;
  opt->nthreads = PETSC_DECIDE;
  for (int f = 0; f < MAT_CSRK_NUM_FEATURES; f++) opt->feature[f] = PETSC_TRUE;
  opt->setup       = MAT_CSRK_SETUP_BUDGET;
  opt->rowloop     = -1;
  opt->cuda_kernel = MAT_CSRK_CUDA_KERNEL_AUTO;
}

/* Options that give the same structure and kernels (what a sequential block compares before it rebuilds); the MPI
   halo exchange (MAT_CSRK_CUDA_HALO_PINNED) and the set-up rule are not among them */
PetscBool MatCSRKOptionsEqual(const MatCSRKOptions *a, const MatCSRKOptions *b)
{
  for (int f = 0; f < MAT_CSRK_NUM_FEATURES; f++)
    if (f != MAT_CSRK_CUDA_HALO_PINNED && a->feature[f] != b->feature[f]) return PETSC_FALSE;
  return (PetscBool)(a->k == b->k && a->sr_size == b->sr_size && a->ssr_size == b->ssr_size && a->ordering == b->ordering && a->nthreads == b->nthreads && a->rowloop == b->rowloop && a->cuda_kernel == b->cuda_kernel);
}

static PetscErrorCode MatCSRKOptionsCheck(const MatCSRKOptions *opt)
{
  PetscFunctionBegin;
  PetscCheck(opt->k >= 1 && opt->k <= 3, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "CSR-k levels (-mat_csrk_k) must be 1, 2 or 3, not %" PetscInt_FMT, opt->k);
  PetscCheck(opt->sr_size == PETSC_DECIDE || (opt->sr_size >= 1 && opt->sr_size <= CSRK_IDX_MAX), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Super-row size (-mat_csrk_sr_size) must be positive or PETSC_DECIDE, not %" PetscInt_FMT, opt->sr_size);
  PetscCheck(opt->ssr_size == PETSC_DECIDE || (opt->ssr_size >= 1 && opt->ssr_size <= CSRK_IDX_MAX), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Super-super-row size (-mat_csrk_ssr_size) must be positive or PETSC_DECIDE, not %" PetscInt_FMT, opt->ssr_size);
  PetscCheck(opt->nthreads == PETSC_DECIDE || (opt->nthreads >= 1 && opt->nthreads <= 4096), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Thread count (-mat_csrk_threads) must be 1 to 4096 or PETSC_DECIDE, not %" PetscInt_FMT, opt->nthreads);
  PetscCheck((int)opt->ordering >= 0 && opt->ordering <= MAT_CSRK_ORDERING_AUTO, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Unknown CSR-k ordering %d (-mat_csrk_ordering)", (int)opt->ordering);
  PetscCheck((int)opt->setup >= 0 && opt->setup <= MAT_CSRK_SETUP_EAGER, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Unknown CSR-k set-up rule %d (-mat_csrk_setup)", (int)opt->setup);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An integer option where 0 on the command line stands for PETSC_DECIDE (the rule of docs/tuning.md); the range is
   checked by MatCSRKOptionsCheck(), whose errors name the option */
static PetscErrorCode CSRKOptionsIntDecide(CSRKOptionItems PetscOptionsObject, const char opt[], const char text[], const char man[], PetscInt *value)
{
  PetscInt  v = *value == PETSC_DECIDE ? 0 : *value;
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(PetscOptionsInt(opt, text, man, v, &v, &set));
  PetscCheck(!set || v >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Option -%s%s must be positive, or 0 for the default, not %" PetscInt_FMT, PetscOptionsObject->prefix ? PetscOptionsObject->prefix : "", opt + 1, v);
  if (set) *value = v == 0 ? PETSC_DECIDE : v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define CSRK_OPTIONS_TITLE "CSR-k matrix options"

/* the values of -mat_csrk_row_loop and MatCSRKSetRowLoop(): "plan" (rowloop -1), then the entries of the plan's table */
static PetscInt CSRKRowLoopNames(const char *loops[])
{
  PetscInt n = 0;

  loops[n++] = "plan";
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) loops[n++] = (*v)->name;
  return n;
}

/* Reads the -mat_csrk_* options inside the caller's PetscOptionsBegin/End; invalid values are errors that name the option.
   Options that were removed are errors too, so that a script that still passes one learns it instead of PETSc
   leaving it unused with at most a warning. */
static PetscErrorCode MatCSRKOptionsFromDatabase(CSRKOptionItems PetscOptionsObject, const char prefix[], PetscBool cuda, MatCSRKOptions *opt, PetscBool *changed)
{
  static const char *const removed[][2] = {
    {"-mat_csrk_layout", "a reordered matrix is always stored with renumbered columns; drop the option"},
    {"-mat_csrk_tune",   "k and the sizes follow the rule of docs/tuning.md unless -mat_csrk_k, -mat_csrk_sr_size or -mat_csrk_ssr_size set them; drop the option"},
  };
  MatCSRKOptions old = *opt;

  PetscFunctionBegin;
  for (size_t i = 0; i < sizeof(removed) / sizeof(removed[0]); i++) {
    PetscBool has;
    PetscCall(PetscOptionsHasName(PetscOptionsObject->options, prefix, removed[i][0], &has));
    PetscCheck(!has, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Option -%s%s was removed: %s", prefix ? prefix : "", removed[i][0] + 1, removed[i][1]);
  }
  PetscOptionsHeadBegin(PetscOptionsObject, CSRK_OPTIONS_TITLE);
  PetscCall(PetscOptionsInt("-mat_csrk_k", "Levels of the CSR-k structure: 1 (CSR), 2 (super-rows), 3 (super-super-rows)", "MatCSRKSetLevels", opt->k, &opt->k, NULL));
  PetscCall(CSRKOptionsIntDecide(PetscOptionsObject, "-mat_csrk_sr_size", "Rows per super-row (0: from the tuning rule); for the GPU block kernel, lanes per node (2, 4, 8, 16 or 32)", "MatCSRKSetSizes", &opt->sr_size));
  PetscCall(CSRKOptionsIntDecide(PetscOptionsObject, "-mat_csrk_ssr_size", "Super-rows per super-super-row (0: from the tuning rule)", "MatCSRKSetSizes", &opt->ssr_size));
  PetscCall(PetscOptionsEnum("-mat_csrk_ordering", "Row ordering of the CSR-k structure", "MatCSRKSetOrdering", MatCSRKOrderings, (PetscEnum)opt->ordering, (PetscEnum *)&opt->ordering, NULL));
  {
    const char *loops[CSRK_MAX_VARIANTS + 1];
    PetscInt    nl = CSRKRowLoopNames(loops), loop = opt->rowloop + 1;

    PetscCall(PetscOptionsEList("-mat_csrk_row_loop", "The CPU row loop the build tries alone (plan: the plan's choice)", "MatCSRKSetRowLoop", loops, nl, loops[loop], &loop, NULL));
    opt->rowloop = loop - 1;
  }
  PetscCall(PetscOptionsEnum("-mat_csrk_setup", "When the structure is built: once the products run with AIJ's kernel have paid for it (budget), or at the first product (eager) (CPU kernels)", "MatCSRKSetSetup", MatCSRKSetups, (PetscEnum)opt->setup, (PetscEnum *)&opt->setup, NULL));
  for (int f = 0; f < MAT_CSRK_NUM_FEATURES; f++) {
    char name[64];

    if (MatCSRKFeatureOptions[f].cuda && !cuda) continue;
    PetscCall(PetscSNPrintf(name, sizeof(name), "-mat_csrk_%s", MatCSRKFeatures[f]));
    PetscCall(PetscOptionsBool(name, MatCSRKFeatureOptions[f].help, "MatCSRKSetFeature", opt->feature[f], &opt->feature[f], NULL));
  }
  PetscCall(CSRKOptionsIntDecide(PetscOptionsObject, "-mat_csrk_threads", "OpenMP threads of the CSR-k kernels per MPI rank (0: one, or omp_get_max_threads() when OMP_NUM_THREADS is set)", "MatCSRKSetNumThreads", &opt->nthreads));
  if (cuda) PetscCall(PetscOptionsEnum("-mat_csrk_cuda_kernel", "GPU kernel: from the row statistics, a thread per row (GPUSpMV-3), a sub-warp per row (GPUSpMV-3.5), coalesced products in shared memory (stream), a warp per column-major super-row (sliced), equal tiles of rows and nonzeros (merge) or a sub-warp per node of rows with one column list (block)", "MATCSRKCUDA", MatCSRKCUDAKernels, (PetscEnum)opt->cuda_kernel, (PetscEnum *)&opt->cuda_kernel, NULL));
  PetscOptionsHeadEnd();
  PetscCall(MatCSRKOptionsCheck(opt));
  *changed = (PetscBool)(!MatCSRKOptionsEqual(&old, opt) || old.feature[MAT_CSRK_CUDA_HALO_PINNED] != opt->feature[MAT_CSRK_CUDA_HALO_PINNED] || old.setup != opt->setup); /* the halo only for the MPI level */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The options of a matrix being converted from A to a CSR-k type: the defaults with the -mat_csrk_* options of A's
   prefix on top, so that they take effect after MatConvert() without MatSetFromOptions() (petsc4py's convert('csrk')),
   as they do for PETSc's conversions to aijsell and aijmkl */
PetscErrorCode MatCSRKOptionsFromMat(Mat A, MatCSRKOptions *opt)
{
  PetscBool changed;

  PetscFunctionBegin;
  MatCSRKOptionsDefault(opt);
  PetscOptionsBegin(PetscObjectComm((PetscObject)A), ((PetscObject)A)->prefix, CSRK_OPTIONS_TITLE, "Mat");
  PetscCall(MatCSRKOptionsFromDatabase(PetscOptionsObject, ((PetscObject)A)->prefix, PETSC_FALSE, opt, &changed));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The SeqAIJ (mpi = false) or MPIAIJ methods, copied once from a freshly created matrix: CSR-k calls them by
   pointer because they are not exported by PETSc, and a static copy survives MatHeaderMerge() */
PetscErrorCode MatCSRKGetBaseOps(PetscBool mpi, const struct _MatOps **ops)
{
  PetscFunctionBegin;
  if (!MatCSRKBaseOpsSet[mpi]) {
    Mat A;
    PetscCall(MatCreate(PETSC_COMM_SELF, &A));
    PetscCall(MatSetType(A, mpi ? MATMPIAIJ : MATSEQAIJ));
    MatCSRKBaseOps[mpi]    = *A->ops;
    MatCSRKBaseOpsSet[mpi] = PETSC_TRUE;
    PetscCall(MatDestroy(&A));
  }
  *ops = &MatCSRKBaseOps[mpi];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The data (spptr) of a matrix of either type: Mat_SeqCSRK or Mat_MPICSRK */
PetscErrorCode MatCSRKGetSpptr(Mat A, void *sp)
{
  PetscFunctionBegin;
  PetscCheck(A->spptr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Matrix of type %s has no CSR-k data", ((PetscObject)A)->type_name);
  *(void **)sp = A->spptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKGetOptions_C of both types, whose data keep the options */
PetscErrorCode MatCSRKGetOptions_CSRK(Mat A, MatCSRKOptions *opt)
{
  void     *sp = NULL;
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetSpptr(A, &sp));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  *opt = mpi ? ((Mat_MPICSRK *)sp)->opt : ((Mat_SeqCSRK *)sp)->opt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The view of both types: the AIJ view, then with ASCII_INFO the CSR-k settings in effect, which hold before anything
   is built, and the summary of the structure once there is one (for the MPI type that of the diagonal blocks: maxima
   over ranks for times and bandwidths, sums for counts and memory) */
PetscErrorCode MatView_CSRK(Mat A, PetscViewer viewer)
{
  const struct _MatOps *base;
  PetscBool             mpi, isascii, gpu;
  PetscViewerFormat     format;
  MatCSRKOptions        opt;
  MatCSRKInfo           info;
  MatInfo               ainfo;
  PetscLogDouble        aijbytes;
  char                  sizes[128] = "", run[64];

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  PetscCall(MatCSRKGetBaseOps(mpi, &base));
  if (mpi && ((Mat_MPICSRK *)A->spptr)->view) PetscCall((*((Mat_MPICSRK *)A->spptr)->view)(A, viewer)); /* a DM's (csrkmpi.c) */
  else PetscCall((*base->view)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii || !A->assembled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format != PETSC_VIEWER_ASCII_INFO && format != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCSRKGetOptions_CSRK(A, &opt));
  PetscCall(MatCSRKGetInfo(A, &info));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &ainfo));
  aijbytes = (PetscLogDouble)ainfo.nz_used * (sizeof(PetscInt) + sizeof(PetscScalar)) + (PetscLogDouble)A->rmap->N * sizeof(PetscInt);
  if (opt.k > 1) { /* each size as asked for, or the model's */
    char sr[32] = "from the model", ssr[32] = "from the model";
    if (opt.sr_size != PETSC_DECIDE) PetscCall(PetscSNPrintf(sr, sizeof(sr), "%" PetscInt_FMT, opt.sr_size));
    if (opt.ssr_size != PETSC_DECIDE) PetscCall(PetscSNPrintf(ssr, sizeof(ssr), "%" PetscInt_FMT, opt.ssr_size));
    PetscCall(PetscSNPrintf(sizes, sizeof(sizes), ", super-row size %s%s%s", sr, opt.k == 3 ? ", super-super-row size " : "", opt.k == 3 ? ssr : ""));
  }
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &gpu, MATSEQCSRKCUDA, MATMPICSRKCUDA, ""));
  if (gpu) PetscCall(PetscSNPrintf(run, sizeof(run), "GPU kernel %s", MatCSRKCUDAKernels[opt.cuda_kernel]));
  else PetscCall(PetscSNPrintf(run, sizeof(run), "set-up %s, %" PetscInt_FMT " OpenMP thread%s%s", MatCSRKSetups[opt.setup], info.nthreads, info.nthreads == 1 ? "" : "s", mpi ? " per rank" : ""));
  PetscCall(PetscViewerASCIIPrintf(viewer, "CSR-k options: ordering %s, k = %" PetscInt_FMT "%s, %s\n", MatCSRKOrderings[opt.ordering], opt.k, sizes, run));
  if (!info.nsr) { /* no structure in effect (a built one has super-rows) */
    const char *what = mpi ? "diagonal blocks" : "structure";
    if (info.wait >= 0) PetscCall(PetscViewerASCIIPrintf(viewer, "CSR-k %s: not built yet: %s tried once %" PetscInt_FMT " products have run with AIJ's kernel (%" PetscInt_FMT " so far)\n", what, info.expected, info.wait, info.nbase));
    else if (info.nbuilds) PetscCall(PetscViewerASCIIPrintf(viewer, "CSR-k %s: built, and found to give AIJ's own loop: AIJ's kernel for this nonzero pattern (-info tells why)\n", what));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "CSR-k %s: not built: AIJ's kernel, since nothing reads fewer bytes here%s\n", what, MatCSRKMachineGain(NULL, PETSC_FALSE, "") > 0 ? " and the machine file measured no rival faster for a block like this (-info tells why)" : " (no machine file: make tune measures the rivals of AIJ's kernel)"));
    PetscCall(PetscViewerASCIIPrintf(viewer, "CSR-k set-up time %g s (the MatCSRKBuild event of -log_view), %" PetscInt_FMT " products with AIJ's kernel\n", info.build_time, info.nbase));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, mpi ? "CSR-k diagonal blocks (summed or max over ranks):\n" : "CSR-k structure:\n"));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  if (info.k == 3) PetscCall(PetscViewerASCIIPrintf(viewer, "k = 3, super-row size %" PetscInt_FMT " (%" PetscInt_FMT " super-rows), super-super-row size %" PetscInt_FMT " (%" PetscInt_FMT " super-super-rows)\n", info.sr_size, info.nsr, info.ssr_size, info.nssr));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "k = %" PetscInt_FMT ", super-row size %" PetscInt_FMT " (%" PetscInt_FMT " super-rows)\n", info.k, info.sr_size, info.nsr));
  if (info.npatterns && !info.index_bytes) PetscCall(PetscViewerASCIIPrintf(viewer, "column indices: row patterns (%" PetscInt_FMT " distinct rows%s)\n", info.npatterns, mpi ? " at most per rank" : ""));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "column indices: %s\n", info.index_bytes == 2 ? "16-bit offsets from the diagonal" : "32-bit"));
  if (info.variant[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "row loop: %s\n", info.variant));
  if (info.nsliced) PetscCall(PetscViewerASCIIPrintf(viewer, "row slices: %" PetscInt_FMT " rows multiplied %d at a time, a row per vector lane\n", info.nsliced, CSRK_SLICE));
  if (info.nvalued) PetscCall(PetscViewerASCIIPrintf(viewer, "value lists: %" PetscInt_FMT " rows multiply one list of values kept once (MAT_CSRK_ROW_VALUES)\n", info.nvalued));
  if (info.nnoderows) PetscCall(PetscViewerASCIIPrintf(viewer, "row nodes: %" PetscInt_FMT " rows in nodes of up to %d rows with one column list, multiplied together\n", info.nnoderows, CSRK_NODE_MAX));
  PetscCall(PetscViewerASCIIPrintf(viewer, "ordering %s, bandwidth %" PetscInt_FMT " before ordering, %" PetscInt_FMT " after\n", MatCSRKOrderings[info.ordering], info.bw_before, info.bw_after));
  PetscCall(PetscViewerASCIIPrintf(viewer, "set-up time %g s (the MatCSRKBuild event of -log_view), memory overhead %g MB (%.0f%% of the AIJ storage)\n", info.build_time, info.bytes / 1048576.0, 100.0 * info.bytes / PetscMax(1.0, aijbytes)));
  PetscCall(PetscViewerASCIIPrintf(viewer, "products: %" PetscInt_FMT " with AIJ's kernel before the build, %" PetscInt_FMT " with the structure\n", info.nbase, info.nfast));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the AIJ methods copied at the first use: copied again after PetscFinalize() (csrkregister.c) */
void MatCSRKResetBaseOps(void)
{
  MatCSRKBaseOpsSet[0] = MatCSRKBaseOpsSet[1] = PETSC_FALSE;
}

static PetscErrorCode MatCSRKGetOptions_Private(Mat A, MatCSRKOptions *opt)
{
  PetscFunctionBegin;
  PetscUseMethod(A, "MatCSRKGetOptions_C", (Mat, MatCSRKOptions *), (A, opt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCSRKSetOptions_Private(Mat A, const MatCSRKOptions *opt)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKOptionsCheck(opt));
  PetscTryMethod(A, "MatCSRKSetOptions_C", (Mat, const MatCSRKOptions *), (A, opt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatSetFromOptions() of both types: AIJ's, then the -mat_csrk_* options (with the CUDA ones on the CUDA types),
   handed to the matrix where they changed. They are read in a block of their own under the title of the conversion's,
   which read them first, so that -help lists them once (the CUDA types' list, which adds the GPU's, has its own) */
PetscErrorCode MatSetFromOptions_CSRK(Mat A, CSRKOptionItems PetscOptionsObjectAIJ)
{
  const struct _MatOps *base;
  MatCSRKOptions        opt;
  PetscBool             mpi, cuda, changed;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &cuda, MATSEQCSRKCUDA, MATMPICSRKCUDA, ""));
  PetscCall(MatCSRKGetBaseOps(mpi, &base));
  if (base->setfromoptions) PetscCall((*base->setfromoptions)(A, PetscOptionsObjectAIJ));
  PetscCall(MatCSRKGetOptions_CSRK(A, &opt));
  PetscOptionsBegin(PetscObjectComm((PetscObject)A), ((PetscObject)A)->prefix, cuda ? CSRK_OPTIONS_TITLE " (GPU)" : CSRK_OPTIONS_TITLE, "Mat");
  PetscCall(MatCSRKOptionsFromDatabase(PetscOptionsObject, ((PetscObject)A)->prefix, cuda, &opt, &changed));
  PetscOptionsEnd();
  if (changed) PetscCall(MatCSRKSetOptions_Private(A, &opt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Changes one field of the options of a CSR-k matrix; a no-op on other types, as PETSc's type-specific setters */
#define MatCSRKSetField(A, field, value) \
  do { \
    MatCSRKOptions opt_; \
    PetscErrorCode (*f_)(Mat, const MatCSRKOptions *) = NULL; \
    PetscValidHeaderSpecific(A, MAT_CLASSID, 1); \
    PetscCall(PetscObjectQueryFunction((PetscObject)(A), "MatCSRKSetOptions_C", &f_)); \
    if (!f_) PetscFunctionReturn(PETSC_SUCCESS); \
    PetscCall(MatCSRKGetOptions_Private(A, &opt_)); \
    opt_.field = (value); \
    PetscCall(MatCSRKSetOptions_Private(A, &opt_)); \
  } while (0)

/*@
  MatCSRKSetLevels - sets k, the number of levels of the CSR-k structure

  Logically Collective

  Input Parameters:
+ A - the matrix, of type `MATCSRK`
- k - 1 (plain CSR), 2 (rows grouped into super-rows, the CPU default) or 3 (super-rows grouped into super-super-rows)

  Options Database Key:
. -mat_csrk_k <k> - the levels

  Level: intermediate

.seealso: `MATCSRK`, `MatCSRKGetLevels()`, `MatCSRKSetSizes()`
@*/
PetscErrorCode MatCSRKSetLevels(Mat A, PetscInt k)
{
  PetscFunctionBegin;
  PetscValidLogicalCollectiveInt(A, k, 2);
  MatCSRKSetField(A, k, k);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKGetLevels - gets k, the number of levels of the CSR-k structure

  Not Collective

  Input Parameter:
. A - the matrix, of type `MATCSRK`

  Output Parameter:
. k - the levels

  Level: intermediate

.seealso: `MATCSRK`, `MatCSRKSetLevels()`
@*/
PetscErrorCode MatCSRKGetLevels(Mat A, PetscInt *k)
{
  MatCSRKOptions opt;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetOptions_Private(A, &opt));
  *k = opt.k;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKSetSizes - sets the super-row size (rows per super-row) and super-super-row size (super-rows per super-super-row)

  Logically Collective

  Input Parameters:
+ A        - the matrix, of type `MATCSRK`
. sr_size  - rows per super-row, or `PETSC_DECIDE` for the tuning rule
- ssr_size - super-rows per super-super-row (k = 3), or `PETSC_DECIDE`

  Options Database Keys:
+ -mat_csrk_sr_size <n>  - super-row size
- -mat_csrk_ssr_size <n> - super-super-row size

  Level: intermediate

  Note:
  With the Band-k ordering the super-rows are the METIS groups, whose sizes are about these sizes.

.seealso: `MATCSRK`, `MatCSRKGetSizes()`, `MatCSRKSetLevels()`
@*/
PetscErrorCode MatCSRKSetSizes(Mat A, PetscInt sr_size, PetscInt ssr_size)
{
  PetscFunctionBegin;
  PetscValidLogicalCollectiveInt(A, sr_size, 2);
  PetscValidLogicalCollectiveInt(A, ssr_size, 3);
  MatCSRKSetField(A, sr_size, sr_size);
  MatCSRKSetField(A, ssr_size, ssr_size);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKGetSizes - gets the requested super-row and super-super-row sizes (`PETSC_DECIDE` when left to the tuning rule;
  `MatCSRKGetInfo()` gives the sizes in effect)

  Not Collective

  Input Parameter:
. A - the matrix, of type `MATCSRK`

  Output Parameters:
+ sr_size  - rows per super-row
- ssr_size - super-rows per super-super-row

  Level: intermediate

.seealso: `MATCSRK`, `MatCSRKSetSizes()`, `MatCSRKGetInfo()`
@*/
PetscErrorCode MatCSRKGetSizes(Mat A, PetscInt *sr_size, PetscInt *ssr_size)
{
  MatCSRKOptions opt;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetOptions_Private(A, &opt));
  if (sr_size) *sr_size = opt.sr_size;
  if (ssr_size) *ssr_size = opt.ssr_size;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKSetOrdering - sets the row ordering the CSR-k structure of the (local diagonal block of the) matrix is built in

  Logically Collective

  Input Parameters:
+ A        - the matrix, of type `MATCSRK`
- ordering - `MAT_CSRK_ORDERING_AUTO`, `MAT_CSRK_ORDERING_NATURAL`, `MAT_CSRK_ORDERING_RCM` or `MAT_CSRK_ORDERING_BANDK`

  Options Database Key:
. -mat_csrk_ordering <auto,natural,rcm,bandk> - the ordering

  Level: intermediate

  Note:
  Results are always in the user's ordering; the ordering only changes the internal layout.

.seealso: `MATCSRK`, `MatCSRKOrdering`, `MatCSRKGetOrdering()`
@*/
PetscErrorCode MatCSRKSetOrdering(Mat A, MatCSRKOrdering ordering)
{
  PetscFunctionBegin;
  PetscValidLogicalCollectiveEnum(A, ordering, 2);
  MatCSRKSetField(A, ordering, ordering);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKGetOrdering - gets the requested CSR-k ordering

  Not Collective

  Input Parameter:
. A - the matrix, of type `MATCSRK`

  Output Parameter:
. ordering - the ordering

  Level: intermediate

.seealso: `MATCSRK`, `MatCSRKSetOrdering()`
@*/
PetscErrorCode MatCSRKGetOrdering(Mat A, MatCSRKOrdering *ordering)
{
  MatCSRKOptions opt;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetOptions_Private(A, &opt));
  *ordering = opt.ordering;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKSetNumThreads - sets the number of OpenMP threads of the CSR-k kernels

  Logically Collective

  Input Parameters:
+ A        - the matrix, of type `MATCSRK`
- nthreads - the threads per MPI rank, or `PETSC_DECIDE` for the default

  Options Database Key:
. -mat_csrk_threads <n> - the threads (0 for the default)

  Level: intermediate

  Notes:
  By default the kernels run one thread per MPI rank, as `MATAIJ` does: PETSc programs run one rank per core and PETSc's
  vector operations are not threaded, so threads pay only in a configuration chosen for them. Threads are used when
  asked for: with this call or the option, or with `OMP_NUM_THREADS` set in the environment (`omp_get_max_threads()`
  threads, for blocks large enough to gain from them). Keep ranks x threads within the cores of a node, and compare with
  `MATAIJ` on as many ranks as the cores the threads use.

.seealso: `MATCSRK`, `MatCSRKGetInfo()`
@*/
PetscErrorCode MatCSRKSetNumThreads(Mat A, PetscInt nthreads)
{
  PetscFunctionBegin;
  PetscValidLogicalCollectiveInt(A, nthreads, 2);
  MatCSRKSetField(A, nthreads, nthreads);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKSetSetup - sets when the CSR-k structure of the CPU kernels is built and its values refreshed

  Logically Collective

  Input Parameters:
+ A     - the matrix, of type `MATCSRK`
- setup - `MAT_CSRK_SETUP_BUDGET` (the default) or `MAT_CSRK_SETUP_EAGER`

  Options Database Key:
. -mat_csrk_setup <budget,eager> - the rule

  Level: advanced

  Notes:
  The structure costs a build (a pattern search, value copies, maybe an ordering) and a copy of the values at each
  change, which only faster products pay back. With `MAT_CSRK_SETUP_BUDGET` the products run with PETSc's AIJ kernel
  until a count of them has paid for the set-up at 5 % of their time: the expected variant's cost in AIJ products
  (20 to 600 products; a rival of AIJ's kernel at the cost the machine file measured). What is built is decided before
  the build from the matrix, the options and the machine file that `make tune` writes, never from timings in the run,
  so the results are the same bits every run. A value change is copied in under the same rule. So a short solve runs
  as with `MATAIJ` and a long one gets the structure after a number of products known in advance (the view and
  `-info` say it; the rule and its constants: docs/design.md, "Set-up"). `MAT_CSRK_SETUP_EAGER` builds at the first
  product with every variant the options allow, whatever the machine file says, for benchmarks of the kernels and
  tests. `MatCSRKGetInfo()` reports what a block has (and what it will build, `expected`, after `wait` products) under
  the budget, and builds it under `MAT_CSRK_SETUP_EAGER`. The GPU type builds its device copy at the first product.

.seealso: `MATCSRK`, `MatCSRKSetup`, `MatCSRKGetInfo()`
@*/
PetscErrorCode MatCSRKSetSetup(Mat A, MatCSRKSetup setup)
{
  PetscFunctionBegin;
  PetscValidLogicalCollectiveEnum(A, setup, 2);
  MatCSRKSetField(A, setup, setup);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKSetRowLoop - makes the build of the CPU kernels try one row loop of the plan's table alone

  Logically Collective

  Input Parameters:
+ A    - the matrix, of type `MATCSRK`
- loop - the row loop's name (see `MatCSRKGetRowLoop()`), or `NULL` or "plan" for the plan's choice (the default)

  Options Database Key:
. -mat_csrk_row_loop <plan,slices,patterns,symmetric,nodes,offsets16,columns32> - the loop

  Level: developer

  Notes:
  For measurements of the row loops (`make tune` times each rival of AIJ's kernel this way) and tests. The loop is built
  where its own conditions hold (a symmetric half needs symmetric values, nodes need runs of rows with one column
  list); elsewhere the products run AIJ's kernel. The set-up waits for the loop's expected cost as usual, and
  `MatCSRKGetInfo()` names the loop built.

.seealso: `MATCSRK`, `MatCSRKGetRowLoop()`, `MatCSRKSetSetup()`, `MatCSRKGetInfo()`
@*/
PetscErrorCode MatCSRKSetRowLoop(Mat A, const char loop[])
{
  const char *loops[CSRK_MAX_VARIANTS + 1];
  PetscInt    nl = CSRKRowLoopNames(loops), index = 0;
  PetscBool   found = PETSC_TRUE;

  PetscFunctionBegin;
  if (loop) PetscCall(PetscEListFind(nl, loops, loop, &index, &found));
  PetscCheck(found, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown CSR-k row loop %s (MatCSRKGetRowLoop() lists them)", loop);
  MatCSRKSetField(A, rowloop, index - 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCSRKGetRowLoop - an entry of the plan's table of CPU row loops, and the key under which the machine file holds
  its measurement where it is a rival of AIJ's kernel

  Not Collective

  Input Parameter:
. i - the entry, from 0

  Output Parameters:
+ name  - its name (for `MatCSRKSetRowLoop()`), or `NULL` past the end of the table
- rival - its machine-file key, or `NULL` where the plan builds it by rule (it reads fewer bytes than AIJ's kernel)

  Level: developer

  Note:
  `make tune` (tutorials/tune.c) measures every entry with a key against AIJ's kernel.

.seealso: `MATCSRK`, `MatCSRKSetRowLoop()`, `MatCSRKWriteMachineFile()`
@*/
PetscErrorCode MatCSRKGetRowLoop(PetscInt i, const char *name[], const char *rival[])
{
  PetscInt n = 0;

  PetscFunctionBegin;
  while (MatCSRKVariants[n]) n++;
  PetscCheck(i >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Row loop %" PetscInt_FMT " < 0", i);
  if (name) *name = i < n ? MatCSRKVariants[i]->name : NULL;
  if (rival) *rival = i < n ? MatCSRKVariants[i]->rival : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKSetFeature - turns one of the switches of the CSR-k structure and kernels on or off

  Logically Collective

  Input Parameters:
+ A       - the matrix, of type `MATCSRK` or `MATCSRKCUDA` (a no-op for other types)
. feature - the switch, a `MatCSRKFeature`
- flg     - `PETSC_TRUE` (the default of every feature) or `PETSC_FALSE`

  Options Database Keys:
+ -mat_csrk_compress_indices <bool> - `MAT_CSRK_COMPRESS_INDICES`
. -mat_csrk_row_patterns <bool>     - `MAT_CSRK_ROW_PATTERNS`
. -mat_csrk_row_slices <bool>       - `MAT_CSRK_ROW_SLICES`
. -mat_csrk_row_values <bool>       - `MAT_CSRK_ROW_VALUES`
. -mat_csrk_row_nodes <bool>        - `MAT_CSRK_ROW_NODES`
. -mat_csrk_cuda_halo_pinned <bool> - `MAT_CSRK_CUDA_HALO_PINNED` (read by `MATCSRKCUDA` only)
- -mat_csrk_symmetric_half <bool>   - `MAT_CSRK_SYMMETRIC_HALF`

  Level: advanced

  Notes:
  The features change how the products read the matrix, not their results (the symmetric half sums in another order:
  the same to rounding). Each applies where the matrix allows it;
  `MatView()` with `-mat_view ::ascii_info`, `MatCSRKGetInfo()` and `-info` tell what is in effect.

  `MAT_CSRK_COMPRESS_INDICES`: the column minus the row stored in 16 bits where every entry of a block is near enough
  the diagonal (a banded or reordered matrix), so that the products stream fewer bytes per nonzero.

  `MAT_CSRK_ROW_PATTERNS`: with compressed indices, where the rows have few distinct patterns of offsets from the
  diagonal (stencils, structured meshes), each row keeps only the number of its pattern in a dictionary that stays in
  the L1 cache; the GPU's sliced kernel reads them too.

  `MAT_CSRK_ROW_SLICES`: with row patterns, runs of 8 consecutive rows with one pattern are multiplied a row per vector
  lane, without indices or gathers, from a copy of their values stored interleaved (CPU).

  `MAT_CSRK_ROW_VALUES`: on one thread, a row slice whose rows repeat one list of values (constant coefficients) keeps
  it once, and a row node with the values of an earlier node (one element matrix) multiplies those (CPU).

  `MAT_CSRK_ROW_NODES`: on one thread over column indices, consecutive rows with one column list (the unknowns of a
  mesh point, as PETSc's inodes) are multiplied together, each index and entry of x loaded once for all of them (CPU).

  `MAT_CSRK_SYMMETRIC_HALF`: on one thread over column indices, a square block whose values are symmetric, bit for bit
  (checked at the build and at every change of the values), is multiplied from its diagonal and upper triangle, each
  entry read once for two products, as PETSc's `MATSBAIJ` stores it (CPU; row nodes that repeat their values go first).

  `MAT_CSRK_CUDA_HALO_PINNED`: the MPI `MatMult()` and `MatMultAdd()` of `MATCSRKCUDA` exchange the ghost values through
  pinned host buffers beside the diagonal block's product, instead of MPIAIJ's `VecScatter`.

.seealso: `MATCSRK`, `MATCSRKCUDA`, `MatCSRKFeature`, `MatCSRKSetSetup()`, `MatCSRKGetInfo()`
@*/
PetscErrorCode MatCSRKSetFeature(Mat A, MatCSRKFeature feature, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(A, feature, 2);
  PetscValidLogicalCollectiveBool(A, flg, 3);
  PetscCheck((int)feature >= 0 && feature < MAT_CSRK_NUM_FEATURES, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "Unknown CSR-k feature %d: it must be a MatCSRKFeature value, 0 to %d", (int)feature, MAT_CSRK_NUM_FEATURES - 1);
  MatCSRKSetField(A, feature[feature], flg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKSetCUDAKernel - sets the GPU kernel of a `MATCSRKCUDA` matrix

  Logically Collective

  Input Parameters:
+ A      - the matrix, of type `MATCSRKCUDA` (a no-op for other types)
. kernel - `MAT_CSRK_CUDA_KERNEL_AUTO`, `MAT_CSRK_CUDA_KERNEL_SCALAR`, `MAT_CSRK_CUDA_KERNEL_VECTOR`, `MAT_CSRK_CUDA_KERNEL_STREAM`, `MAT_CSRK_CUDA_KERNEL_SLICED`, `MAT_CSRK_CUDA_KERNEL_MERGE`, `MAT_CSRK_CUDA_KERNEL_BLOCK` or `MAT_CSRK_CUDA_KERNEL_BSLICED`

  Options Database Key:
. -mat_csrk_cuda_kernel <auto,scalar,vector,stream,sliced,merge,block,bsliced> - the kernel

  Level: advanced

  Note:
  The vector kernel's lanes per row follow the mean row length, the block kernel's lanes per node the mean columns per
  node (docs/tuning.md); `-mat_csrk_sr_size` 2, 4, 8, 16 or 32 sets the block kernel's.

.seealso: `MATCSRKCUDA`, `MatCSRKCUDAKernel`
@*/
PetscErrorCode MatCSRKSetCUDAKernel(Mat A, MatCSRKCUDAKernel kernel)
{
  PetscFunctionBegin;
  PetscValidLogicalCollectiveEnum(A, kernel, 2);
  MatCSRKSetField(A, cuda_kernel, kernel);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKGetInfo - gets a summary of the CSR-k structure in effect

  Collective

  Input Parameter:
. A - the assembled matrix, of type `MATCSRK`

  Output Parameter:
. info - the summary

  Level: intermediate

  Note:
  Under the default set-up budget (`MatCSRKSetSetup()`) the summary is that of what the products have built so far
  (`MatCSRKInfo.nbuilds` is 0 before the structure exists), with what the set-up will build (`MatCSRKInfo.expected`)
  and after how many products (`MatCSRKInfo.wait`); under `MAT_CSRK_SETUP_EAGER` the structure is built first.

.seealso: `MATCSRK`, `MatCSRKInfo`
@*/
PetscErrorCode MatCSRKGetInfo(Mat A, MatCSRKInfo *info)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscUseMethod(A, "MatCSRKGetInfo_C", (Mat, MatCSRKInfo *), (A, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}
