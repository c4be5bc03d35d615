/*
   The plan of MATCSRKCUDA: the device copy of a block is set up by one variant of the table below (a kernel, each in
   its own file), chosen once per pattern and options, and every later operation goes through it. The host uploads
   what aijcusparse does, the AIJ arrays; the row statistics the choice reads and the variant's layout are made from
   them on the device. A value refresh uploads the values once (into the CSR values, else into scratch from which the
   variant refreshes its layout). MatMultTranspose() multiplies a stored transpose run by the row kernels.
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudautil.cuh"

#define CSRK_TRANSPOSE_ROWS_PER_BLOCK 32

/* The variants in the order the auto rule tries them (the rule of docs/tuning.md, from the row statistics, the row
   patterns and nodes and the rows a multiprocessor of the device, never from a timing): the block-sliced kernel where
   the rows are in dense blocks of the matrix's block size in a block that fills the device, the block kernel where the
   rows have no row patterns but nodes, the sliced kernel for rows of nearly equal length (overall, or inside each 32-row
   slice with no long row) in a block that fills the device, the merge kernel for rows of very different lengths, the
   stream kernel for short irregular rows and small blocks of regular rows, and the vector kernel (a thread per row,
   the scalar kernel, for short rows) where nothing else applies: rows of a few lengths within a few multiples of the
   mean. A forced kernel (-mat_csrk_cuda_kernel) takes its entry whatever the rule (scalar: the vector entry's), unless
   its layout cannot hold the rows (bsliced without dense blocks): then the rule chooses. */
static const CSRKVariant *const CSRKPlanTable[] = {&CSRKVariantBSliced, &CSRKVariantBlock, &CSRKVariantSliced, &CSRKVariantMerge, &CSRKVariantStream, &CSRKVariantVector};

/* row-length statistics of a row pointer, accumulated with integer atomics (exact, so the choice is reproducible);
   pnnz: the padded size of the sliced storage */
typedef struct {
  CSRKULL sumsq, pnnz;
  int     maxlen, nzrows;
} CSRKRowStats;

template <typename T>
__global__ void CSRKToIdxKernel(PetscInt64 n, const T *__restrict__ in, CSRKIdx *__restrict__ out)
{
  CSRK_GRIDSTRIDE(i, n) out[i] = (CSRKIdx)in[i];
}

/* a thread per row, a warp per 32-row super-row (blocks of a multiple of 32 threads: the warps are aligned) */
__global__ void CSRKRowStatsKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, CSRKRowStats *st)
{
  for (PetscInt64 base = blockIdx.x * (PetscInt64)blockDim.x; base < m; base += (PetscInt64)blockDim.x * gridDim.x) {
    const PetscInt64 r   = base + threadIdx.x;
    const int        len = r < m ? rowptr[r + 1] - rowptr[r] : 0;
    int              w   = len;
    CSRKULL          sq  = (CSRKULL)len * (CSRKULL)len;
    const unsigned   nz  = __popc(__ballot_sync(0xffffffffu, len > 0));
    for (int o = 16; o > 0; o >>= 1) {
      w = max(w, __shfl_down_sync(0xffffffffu, w, o));
      sq += __shfl_down_sync(0xffffffffu, sq, o);
    }
    if (!(threadIdx.x & 31u) && r < m) {
      const CSRKULL h = (CSRKULL)min((PetscInt64)32, m - r);
      atomicMax(&st->maxlen, w);
      atomicAdd(&st->nzrows, (int)nz);
      atomicAdd(&st->sumsq, sq);
      atomicAdd(&st->pnnz, ((CSRKULL)w * h + 31) / 32 * 32);
    }
  }
}

/* the most nonzeros in a run of `rows` consecutive rows (a launch unit of the stream kernel) */
__global__ void CSRKMaxUnitKernel(PetscInt64 m, PetscInt64 rows, const CSRKIdx *__restrict__ rowptr, int *maxu)
{
  CSRK_GRIDSTRIDE(u, (m + rows - 1) / rows) atomicMax(maxu, rowptr[min(m, (u + 1) * rows)] - rowptr[u * rows]);
}

/* transpose: the row of each entry, the entry numbers, the transpose's rows (lower bounds in the sorted columns) */
__global__ void CSRKRowOfEntryKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, CSRKIdx *__restrict__ rowof)
{
  CSRK_GRIDSTRIDE(r, m)
  for (CSRKIdx q = rowptr[r]; q < rowptr[r + 1]; q++) rowof[q] = (CSRKIdx)r;
}

__global__ void CSRKIotaKernel(PetscInt64 n, CSRKIdx *__restrict__ v)
{
  CSRK_GRIDSTRIDE(i, n) v[i] = (CSRKIdx)i;
}

__global__ void CSRKLowerBoundKernel(PetscInt64 n, PetscInt64 nnz, const CSRKIdx *__restrict__ sorted, CSRKIdx *__restrict__ tp)
{
  CSRK_GRIDSTRIDE(c, n + 1)
  {
    PetscInt64 lo = 0, hi = nnz;
    while (lo < hi) {
      const PetscInt64 mid = (lo + hi) / 2;
      if (sorted[mid] < (CSRKIdx)c) lo = mid + 1;
      else hi = mid;
    }
    tp[c] = (CSRKIdx)lo;
  }
}

/* w[i] = v[map[i]] */
__global__ void CSRKMapKernel(PetscInt64 n, const CSRKIdx *__restrict__ map, const CSRKIdx *__restrict__ v, CSRKIdx *__restrict__ w)
{
  CSRK_GRIDSTRIDE(i, n) w[i] = v[map[i]];
}

__global__ void CSRKMapValuesKernel(PetscInt64 n, const CSRKIdx *__restrict__ map, const PetscScalar *__restrict__ v, PetscScalar *__restrict__ w)
{
  CSRK_GRIDSTRIDE(i, n) w[i] = v[map[i]];
}

__global__ void CSRKGatherKernel(PetscInt n, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ x, PetscScalar *__restrict__ xp)
{
  for (PetscInt i = blockIdx.x * (PetscInt)blockDim.x + threadIdx.x; i < n; i += (PetscInt)blockDim.x * gridDim.x) xp[i] = x[perm[i]];
}

/* x *= a over n entries */
__global__ void CSRKScaleKernel(PetscInt64 n, PetscScalar *__restrict__ x, PetscScalar a)
{
  for (PetscInt64 i = blockIdx.x * (PetscInt64)blockDim.x + threadIdx.x; i < n; i += (PetscInt64)blockDim.x * gridDim.x) x[i] *= a;
}

PetscErrorCode CSRKGetStream(cudaStream_t *s)
{
  PetscFunctionBegin;
#if PETSC_VERSION_GE(3, 20, 0)
  PetscCall(PetscGetCurrentCUDAStream(s));
#else
  *s = PetscDefaultCudaStream;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The set-up's scratch comes from a pool of its own that gives its memory back at each synchronisation (release
   threshold 0): PETSc keeps the device's default pool whole for the process (release threshold
   UINT64_MAX), where the scratch of a set-up or a refresh would stay mapped beside the layout */
#define CSRK_MAX_DEVICES 64
static cudaMemPool_t CSRKScratchPools[CSRK_MAX_DEVICES];

static PetscErrorCode CSRKScratchPoolsDestroy(void)
{
  PetscFunctionBegin;
  for (int i = 0; i < CSRK_MAX_DEVICES; i++) {
    if (!CSRKScratchPools[i]) continue;
    PetscCallCUDA(cudaMemPoolDestroy(CSRKScratchPools[i]));
    CSRKScratchPools[i] = NULL;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CSRKScratchPool(cudaMemPool_t *pool)
{
  static PetscBool registered = PETSC_FALSE;
  int              dev;

  PetscFunctionBegin;
  PetscCallCUDA(cudaGetDevice(&dev));
  PetscCheck(dev < CSRK_MAX_DEVICES, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATSEQCSRKCUDA supports devices 0 to %d", CSRK_MAX_DEVICES - 1);
  if (!CSRKScratchPools[dev]) {
    cudaMemPoolProps   props     = {};
    unsigned long long threshold = 0;

    props.allocType     = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id   = dev;
    PetscCallCUDA(cudaMemPoolCreate(&CSRKScratchPools[dev], &props));
    PetscCallCUDA(cudaMemPoolSetAttribute(CSRKScratchPools[dev], cudaMemPoolAttrReleaseThreshold, &threshold));
    if (!registered) PetscCall(PetscRegisterFinalize(CSRKScratchPoolsDestroy));
    registered = PETSC_TRUE;
  }
  *pool = CSRKScratchPools[dev];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dst (device, n entries) from host indices of PetscInt */
static PetscErrorCode CSRKUploadIdx(CSRKIdx *dst, const PetscInt *src, PetscInt64 n, cudaStream_t stream)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  if (sizeof(PetscInt) == sizeof(CSRKIdx)) PetscCall(MatCSRKCUDAUploadHost(dst, src, sizeof(CSRKIdx) * n, stream));
  else {
    PetscInt *tmp;
    PetscCall(CSRKScratch(&tmp, n, stream));
    PetscCall(MatCSRKCUDAUploadHost(tmp, src, sizeof(PetscInt) * n, stream));
    CSRKToIdxKernel<<<CSRKGrid(n), 256, 0, stream>>>(n, tmp, dst);
    PetscCallCUDA(cudaGetLastError());
    CSRKScratchFree(tmp, stream);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* what aijcusparse uploads: those of the AIJ arrays of A (row pointers, columns, values) given a device array; in the
   layout's order where the copy is in RCM order */
static PetscErrorCode CSRKUpload(Mat A, const CSRKDevice *d, CSRKIdx *rowptr, CSRKIdx *colidx, PetscScalar *val, cudaStream_t stream)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscMemType    mt;
  CSRKIdx        *ucol = colidx;
  PetscScalar    *uval = val;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mt));
  if (d->perm && colidx) PetscCall(CSRKScratch(&ucol, d->nnz, stream));
  if (d->perm && val) PetscCall(CSRKScratch(&uval, d->nnz, stream));
  if (rowptr && d->perm) PetscCallCUDA(cudaMemcpyAsync(rowptr, d->prow, sizeof(CSRKIdx) * ((size_t)d->m + 1), cudaMemcpyDeviceToDevice, stream));
  else if (rowptr) PetscCall(CSRKUploadIdx(rowptr, ai, (PetscInt64)d->m + 1, stream));
  if (colidx) PetscCall(CSRKUploadIdx(ucol, aj, d->nnz, stream));
  if (val && d->nnz) PetscCall(MatCSRKCUDAUploadHost(uval, aa, sizeof(PetscScalar) * d->nnz, stream));
  PetscCall(PetscLogCpuToGpu(sizeof(PetscInt) * ((rowptr && !d->perm ? d->m + 1.0 : 0.0) + (colidx ? d->nnz : 0.0)) + (val ? sizeof(PetscScalar) * (PetscLogDouble)d->nnz : 0.0)));
  if (d->perm && (colidx || val)) {
    PetscCall(CSRKReorderArrays(d, ucol, uval, colidx, val, stream));
    if (ucol != colidx) CSRKScratchFree(ucol, stream);
    if (uval != val) CSRKScratchFree(uval, stream);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the row statistics of d that do not depend on the order of its rows */
static void CSRKRowMoments(CSRKDevice *d, const CSRKRowStats *rs)
{
  d->mean        = d->m ? (PetscReal)d->nnz / d->m : 0;
  d->var         = d->m ? PetscMax(0.0, (PetscReal)rs->sumsq / d->m - d->mean * d->mean) : 0;
  d->maxlen      = rs->maxlen;
  d->nonzerorows = rs->nzrows;
}

/* whether the row lengths vary beyond the sliced kernel's rule for regular rows (an RCM order then sorts them by length
   in windows, for the slices) */
static PetscBool CSRKRowsVary(const CSRKDevice *d)
{
  return (PetscBool)(d->mean > 0 && PetscSqrtReal(d->var) > CSRK_GPU_SLICED_MAX_CV * d->mean);
}

static PetscErrorCode CSRKRowStatsCompute(PetscInt m, const CSRKIdx *rowptr, CSRKRowStats *st, cudaStream_t stream)
{
  CSRKRowStats *dst;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(st, sizeof(*st)));
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKScratch(&dst, 1, stream));
  PetscCallCUDA(cudaMemsetAsync(dst, 0, sizeof(*dst), stream));
  CSRKRowStatsKernel<<<CSRKGrid(m), 256, 0, stream>>>(m, rowptr, dst);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKReadBack(st, dst, 1, stream));
  CSRKScratchFree(dst, stream);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether the nonzeros of every launch unit of the row grouping (d->sr x d->ssr rows) fit the stream kernel's shared
   memory; counted once, when a rule first asks */
PetscErrorCode CSRKPlanFits(CSRKDevice *d, CSRKPlanStats *st, PetscBool *fits, cudaStream_t stream)
{
  const PetscInt rows = d->sr * d->ssr;
  int           *dmax, h = 0;

  PetscFunctionBegin;
  if (st->maxu < 0 && d->m) {
    PetscCall(CSRKScratch(&dmax, 1, stream));
    PetscCallCUDA(cudaMemsetAsync(dmax, 0, sizeof(int), stream));
    CSRKMaxUnitKernel<<<CSRKGrid((d->m + rows - 1) / rows), 256, 0, stream>>>(d->m, rows, d->rowptr, dmax);
    PetscCallCUDA(cudaGetLastError());
    PetscCall(CSRKReadBack(&h, dmax, 1, stream));
    CSRKScratchFree(dmax, stream);
  }
  if (st->maxu < 0) st->maxu = h;
  *fits = (PetscBool)((size_t)st->maxu * sizeof(PetscScalar) <= CSRK_STREAM_SMEM_MAX);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the row grouping of the GPU size rule (tuning.c) for the kernel asked (auto: for irregular rows) */
void CSRKPlanSizes(CSRKDevice *d, MatCSRKCUDAKernel kernel, const MatCSRKOptions *opt)
{
  MatCSRKGPUSizes(kernel, PETSC_FALSE, d->mean, &d->sr, &d->ssr);
  if (opt->sr_size > 0) d->sr = opt->sr_size;
  if (opt->ssr_size > 0) d->ssr = opt->ssr_size;
  if (opt->k < 3) d->ssr = 1;
}

/* frees the layout of variant v in d, its device arrays and d->data (a rejected candidate, or the device copy's end) */
PetscErrorCode CSRKLayoutFree(const CSRKVariant *v, CSRKDevice *d)
{
  PetscFunctionBegin;
  for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(v->arrays) && (!i || v->arrays[i]); i++) CSRKCudaFree(*(void **)((char *)d->data + v->arrays[i]));
  PetscCall(PetscFree(d->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the first entry of the table (the forced kernel's alone where kern is not auto) whose set-up takes d's rows */
static PetscErrorCode CSRKPlanTry(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, CSRKPlanStats *st, MatCSRKCUDAKernel kern, size_t *bytes, cudaStream_t stream)
{
  PetscFunctionBegin;
  for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(CSRKPlanTable) && !d->plan; i++) {
    if (kern != MAT_CSRK_CUDA_KERNEL_AUTO && CSRKPlanTable[i]->kernel != kern) continue;
    d->ymap = NULL; /* set by the variant whose kernels write y through the RCM order */
    PetscCall((*CSRKPlanTable[i]->setup)(A, d, opt, st, bytes, stream));
    if (d->kernel != MAT_CSRK_CUDA_KERNEL_AUTO) d->plan = CSRKPlanTable[i];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plan of d: the row statistics, whether the block fills the device (rows a multiprocessor), the row grouping of
   the GPU size rule (tuning.c; the sliced, block and vector kernels set their own), then the forced kernel's entry set
   up, or the first entry whose rule holds; last, the CSR arrays the plan does not read are freed */
static PetscErrorCode CSRKPlanChoose(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, const CSRKRowStats *rs, size_t *bytes, cudaStream_t stream)
{
  const MatCSRKCUDAKernel kern = opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_SCALAR ? MAT_CSRK_CUDA_KERNEL_VECTOR : opt->cuda_kernel;
  CSRKPlanStats           st;
  int                     sms;

  PetscFunctionBegin;
  PetscCall(CSRKDeviceSMs(&sms));
  CSRKRowMoments(d, rs);
  st.forced      = (PetscBool)(kern != MAT_CSRK_CUDA_KERNEL_AUTO);
  st.cv          = d->mean > 0 ? PetscSqrtReal(d->var) / d->mean : 0;
  st.pnnz        = (PetscInt64)rs->pnnz;
  st.maxu        = -1;
  st.sms         = sms;
  st.fill        = CSRKFillsDevice(d->m, sms);
  st.sliced = st.slicedtake = PETSC_FALSE;
  st.npat                   = 0;
  CSRKPlanSizes(d, opt->cuda_kernel, opt);
  PetscCall(CSRKSlicedPrepare(A, d, opt, &st, bytes, stream));
  PetscCall(CSRKPlanTry(A, d, opt, &st, kern, bytes, stream));
  if (!d->plan && st.forced) {
    /* a forced kernel whose layout cannot hold these rows (bsliced without dense blocks): the auto rule's */
    MatCSRKOptions aopt = *opt;

    PetscCall(PetscInfo(A, "The %s kernel cannot hold these rows: the auto rule's kernel instead\n", MatCSRKCUDAKernels[kern]));
    aopt.cuda_kernel = MAT_CSRK_CUDA_KERNEL_AUTO;
    st.forced        = PETSC_FALSE;
    CSRKPlanSizes(d, aopt.cuda_kernel, &aopt);
    PetscCall(CSRKSlicedPrepare(A, d, &aopt, &st, bytes, stream));
    PetscCall(CSRKPlanTry(A, d, &aopt, &st, MAT_CSRK_CUDA_KERNEL_AUTO, bytes, stream));
  }
  PetscCheck(d->plan, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No GPU kernel set up");
  PetscCall(PetscInfo(A, "GPU plan: %s rows (cv %g), %g rows a multiprocessor of %d, %s\n", st.forced ? "kernel forced on" : "auto rule on", (double)st.cv, (double)d->m / sms, sms, st.npat ? "row patterns" : "no row patterns"));
  /* while the copy waits for its RCM order it keeps what the order is made from: the CSR arrays, or only the row
     pointers where its layout gives the columns and values back (not over row patterns, which keep no columns) */
  if (d->rcmwait && !(d->plan->tocsr && !d->npat)) PetscFunctionReturn(PETSC_SUCCESS);
  if (!(d->plan->csr & CSRK_CSR_ROWPTR) && !d->rcmwait) {
    CSRKCudaFree(d->rowptr);
    *bytes -= sizeof(CSRKIdx) * ((size_t)d->m + 1);
  }
  if (!(d->plan->csr & CSRK_CSR_COLIDX)) {
    CSRKCudaFree(d->colidx);
    *bytes -= sizeof(CSRKIdx) * (size_t)PetscMax(d->nnz, 1);
  }
  if (!(d->plan->csr & CSRK_CSR_VAL)) {
    CSRKCudaFree(d->val);
    *bytes -= sizeof(PetscScalar) * (size_t)PetscMax(d->nnz, 1);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device copy d, its CSR arrays uploaded (bytes so far), set up by its plan */
static PetscErrorCode CSRKDeviceFinish(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, size_t bytes, cudaStream_t stream)
{
  CSRKRowStats rs;
  char         what[256];

  PetscFunctionBegin;
  PetscCall(CSRKRowStatsCompute(d->m, d->rowptr, &rs, stream));
  PetscCall(CSRKPlanChoose(A, d, opt, &rs, &bytes, stream));
  d->bytes = bytes;
  MatCSRKCUDADeviceView(d, what, sizeof(what));
  PetscCall(PetscInfo(A, "CSR-k set up on the device: kernel %s (%s), block %ux%ux%u, %g MB of device memory (row length mean %g, variance %g, max %" PetscInt_FMT "); k = %" PetscInt_FMT ": %s\n", MatCSRKCUDAKernels[d->kernel], what, d->bx, d->by, d->bz, d->bytes / 1048576.0, (double)d->mean, (double)d->var, d->maxlen, opt->k,
                      opt->k == 3 ? "super-super-rows of the row and sliced kernels" : "single super-rows of the row and sliced kernels (k = 1 and 2 are the same on the GPU)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKCUDADeviceSetUp - the device layout of the SeqAIJ (sub)matrix A: its AIJ arrays uploaded, the rest built
   on the device, in RCM order where the ordering's rule says so at once */
PetscErrorCode MatCSRKCUDADeviceSetUp(Mat A, const MatCSRKOptions *opt, CSRKDevice **dev)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscMemType    mt;
  CSRKDevice     *d;
  cudaStream_t    stream;
  size_t          bytes = 0;
  PetscInt        wait;
  PetscBool       done;

  PetscFunctionBegin;
  PetscCall(MatCSRKCUDADeviceDestroy(dev));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mt));
  PetscCheck(!PetscMemTypeDevice(mt), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Expected the host AIJ arrays");
  PetscCheck(A->rmap->n <= CSRK_IDX_MAX && A->cmap->n <= CSRK_IDX_MAX && ai[A->rmap->n] <= CSRK_IDX_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATSEQCSRKCUDA needs rows, columns and nonzeros of a block within 32-bit indices");
  PetscCall(CSRKGetStream(&stream));
  PetscCall(PetscNew(&d));
  d->m   = A->rmap->n;
  d->n   = A->cmap->n;
  d->nnz = ai[d->m];
  PetscCall(CSRKMalloc(&d->rowptr, (PetscInt64)d->m + 1, &bytes));
  PetscCall(CSRKMalloc(&d->colidx, d->nnz, &bytes));
  PetscCall(CSRKMalloc(&d->val, d->nnz, &bytes));
  PetscCall(CSRKUpload(A, d, d->rowptr, d->colidx, d->val, stream));
  PetscCall(CSRKReorderWhen(A, d, opt, &wait, stream));
  if (!wait) {
    CSRKRowStats rs;
    PetscCall(CSRKRowStatsCompute(d->m, d->rowptr, &rs, stream));
    CSRKRowMoments(d, &rs);
    PetscCall(CSRKReorderBuild(A, d, CSRKRowsVary(d), &done, &bytes, stream));
  } else if (wait > 0) d->rcmwait = wait;
  PetscCall(CSRKDeviceFinish(A, d, opt, bytes, stream));
  *dev = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKCUDADeviceReorder - the device copy made again in RCM order from its own CSR arrays, which it kept for this
   or its layout gives back, while the products the rule waited for ran (nothing is uploaded) */
PetscErrorCode MatCSRKCUDADeviceReorder(Mat A, const MatCSRKOptions *opt, CSRKDevice **dev)
{
  CSRKDevice  *o = *dev, *d;
  cudaStream_t stream;
  size_t       bytes;
  PetscBool    done, vary;

  PetscFunctionBegin;
  PetscCheck(o->rowptr && ((o->colidx && o->val) || o->plan->tocsr), PETSC_COMM_SELF, PETSC_ERR_PLIB, "The device copy did not keep its CSR arrays");
  PetscCall(CSRKGetStream(&stream));
  if (!o->colidx || !o->val) {
    CSRKCudaFree(o->colidx);
    CSRKCudaFree(o->val);
    PetscCall(CSRKMalloc(&o->colidx, o->nnz, NULL));
    PetscCall(CSRKMalloc(&o->val, o->nnz, NULL));
    PetscCall((*o->plan->tocsr)(o, o->colidx, o->val, stream));
  }
  PetscCall(PetscNew(&d));
  d->m      = o->m;
  d->n      = o->n;
  d->nnz    = o->nnz;
  d->rowptr = o->rowptr;
  d->colidx = o->colidx;
  d->val    = o->val;
  o->rowptr = o->colidx = NULL;
  o->val                = NULL;
  bytes                 = sizeof(CSRKIdx) * ((size_t)d->m + 1 + (size_t)PetscMax(d->nnz, 1)) + sizeof(PetscScalar) * (size_t)PetscMax(d->nnz, 1);
  vary                  = CSRKRowsVary(o);
  PetscCall(MatCSRKCUDADeviceDestroy(dev));
  PetscCall(CSRKReorderBuild(A, d, vary, &done, &bytes, stream));
  PetscCall(CSRKDeviceFinish(A, d, opt, bytes, stream));
  *dev = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKCUDADeviceRefresh - the values of A (same pattern) into the device layout: one upload, then a scatter for
   the sliced storage and a gather for the stored transpose */
PetscErrorCode MatCSRKCUDADeviceRefresh(Mat A, CSRKDevice *d)
{
  PetscScalar *v = d->val;
  cudaStream_t stream;

  PetscFunctionBegin;
  if (!d->nnz) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKGetStream(&stream));
  if (!v) PetscCall(CSRKScratch(&v, d->nnz, stream));
  PetscCall(CSRKUpload(A, d, NULL, NULL, v, stream));
  if (d->plan->refresh) PetscCall((*d->plan->refresh)(d, v, stream));
  if (d->t) {
    CSRKMapValuesKernel<<<CSRKGrid(d->nnz), 256, 0, stream>>>(d->nnz, d->tmap, v, d->t->val);
    PetscCallCUDA(cudaGetLastError());
  }
  if (v != d->val) CSRKScratchFree(v, stream);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKCUDADeviceBuildTranspose - the transpose S^T of d as a device matrix of its own (rows in blocks of 32, a
   thread or 8 lanes per row, long rows chunked as in the forward product), from the CSR arrays: d's own, or those of
   A uploaded again where the sliced or block kernels freed them. The entries are sorted by column with CUB's stable radix
   sort, so each row of S^T lists its entries in the order of S's rows, as a CPU transpose does. */
PetscErrorCode MatCSRKCUDADeviceBuildTranspose(Mat A, CSRKDevice *d)
{
  PetscScalar    *val    = d->val;
  CSRKIdx        *colidx = d->colidx, *rowptr = d->rowptr, *rowof, *iota, *skey;
  CSRKDevice     *t;
  CSRKRowStats    rs;
  cudaStream_t    stream;
  size_t          bytes = 0;
  int             bits  = 1;

  PetscFunctionBegin;
  if (d->t) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKGetStream(&stream));
  PetscCall(PetscNew(&t));
  t->m   = d->n;
  t->n   = d->m;
  t->nnz = d->nnz;
  /* the CSR arrays that the sliced or block kernels freed, uploaded again */
  if (!rowptr) PetscCall(CSRKScratch(&rowptr, (PetscInt64)d->m + 1, stream));
  if (!colidx) PetscCall(CSRKScratch(&colidx, d->nnz, stream));
  if (!val) PetscCall(CSRKScratch(&val, d->nnz, stream));
  if (!d->rowptr || !d->colidx || !d->val) PetscCall(CSRKUpload(A, d, d->rowptr ? NULL : rowptr, d->colidx ? NULL : colidx, d->val ? NULL : val, stream));
  while (bits < 31 && ((PetscInt64)1 << bits) <= d->n) bits++;
  PetscCall(CSRKScratch(&rowof, d->nnz, stream));
  PetscCall(CSRKScratch(&iota, d->nnz, stream));
  PetscCall(CSRKScratch(&skey, d->nnz, stream));
  PetscCall(CSRKMalloc(&d->tmap, d->nnz, &bytes));
  CSRKRowOfEntryKernel<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, rowptr, rowof);
  PetscCallCUDA(cudaGetLastError());
  CSRKIotaKernel<<<CSRKGrid(d->nnz), 256, 0, stream>>>(d->nnz, iota);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKSortPairs(colidx, skey, iota, d->tmap, d->nnz, bits, stream));
  PetscCall(CSRKMalloc(&t->rowptr, (PetscInt64)t->m + 1, &bytes));
  PetscCall(CSRKMalloc(&t->colidx, t->nnz, &bytes));
  PetscCall(CSRKMalloc(&t->val, t->nnz, &bytes));
  CSRKLowerBoundKernel<<<CSRKGrid(t->m + 1), 256, 0, stream>>>(t->m, t->nnz, skey, t->rowptr);
  PetscCallCUDA(cudaGetLastError());
  CSRKMapKernel<<<CSRKGrid(t->nnz), 256, 0, stream>>>(t->nnz, d->tmap, rowof, t->colidx);
  PetscCallCUDA(cudaGetLastError());
  CSRKMapValuesKernel<<<CSRKGrid(t->nnz), 256, 0, stream>>>(t->nnz, d->tmap, val, t->val);
  PetscCallCUDA(cudaGetLastError());
  CSRKScratchFree(rowof, stream);
  CSRKScratchFree(iota, stream);
  CSRKScratchFree(skey, stream);
  if (colidx != d->colidx) CSRKScratchFree(colidx, stream);
  if (rowptr != d->rowptr) CSRKScratchFree(rowptr, stream);
  if (val != d->val) CSRKScratchFree(val, stream);
  PetscCall(CSRKRowStatsCompute(t->m, t->rowptr, &rs, stream));
  t->mean   = (PetscReal)t->nnz / PetscMax(t->m, 1);
  t->maxlen = rs.maxlen;
  t->width  = t->mean <= 8 ? 1 : 8;
  t->kernel = t->width == 1 ? MAT_CSRK_CUDA_KERNEL_SCALAR : MAT_CSRK_CUDA_KERNEL_VECTOR;
  t->plan   = &CSRKVariantVector;
  t->bx     = t->width == 1 ? CSRK_TRANSPOSE_ROWS_PER_BLOCK : (unsigned)t->width;
  t->by     = t->width == 1 ? 1 : (unsigned)(256 / t->width);
  t->bz     = 1;
  t->sr     = CSRK_TRANSPOSE_ROWS_PER_BLOCK;
  t->ssr    = 1;
  PetscCall(CSRKRowsBuild(t, CSRKLongRowLength(t->mean, t->maxlen), PETSC_FALSE, 0, &bytes, stream));
  t->ymap = d->perm; /* S^T's rows are S's columns, in the same order */
  t->bytes = bytes;
  d->t     = t;
  {
    char what[256];
    MatCSRKCUDADeviceView(t, what, sizeof(what));
    PetscCall(PetscInfo(A, "CSR-k stored transpose built on the device: %" PetscInt_FMT " rows, %s\n", t->m, what));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKCUDADeviceView - a phrase for the view and -info: what the layout of d holds */
void MatCSRKCUDADeviceView(const CSRKDevice *d, char *buf, size_t len)
{
  size_t n = 0;

  if (d->perm) n = (size_t)PetscMax(0, snprintf(buf, len, "rows in an RCM order found on the device (%" PetscInt_FMT " levels), x permuted in and y out; ", d->nlevels));
  if (n < len) (*d->plan->view)(d, buf + n, len - n);
}

/* MatCSRKCUDADeviceMult - y = op(A) x (+ z), all device pointers; A^T with the stored transpose */
PetscErrorCode MatCSRKCUDADeviceMult(CSRKDevice *d, PetscBool transpose, const PetscScalar *x, const PetscScalar *z, PetscScalar *y)
{
  CSRKDevice  *s = transpose ? d->t : d;
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCheck(s, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The stored transpose was not built");
  PetscCall(CSRKGetStream(&stream));
  if (!d->perm) PetscCall((*s->plan->mult)(s, x, z, y, stream));
  else {
    PetscCall(CSRKReorderIn(d, x, stream));
    if (s->ymap) PetscCall((*s->plan->mult)(s, d->xp, z, y, stream)); /* its kernels write y through the order */
    else {
      PetscCall((*s->plan->mult)(s, d->xp, NULL, d->yp, stream));
      PetscCall(CSRKReorderOut(d, d->yp, z, y, stream));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKCUDADeviceDiagonal - v = diag(A) (v a device array of m entries), or (shift) diag(A) += a in the device copy
   and its stored transpose: the entries on the diagonal only, as MatShift() of MATSEQAIJ when every row has its own */
PetscErrorCode MatCSRKCUDADeviceDiagonal(CSRKDevice *d, PetscBool shift, PetscScalar a, PetscScalar *v)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (!d->m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKGetStream(&stream));
  if (d->perm && !shift) {
    PetscCall((*d->plan->diagonal)(d, shift, a, d->yp, stream));
    PetscCall(CSRKReorderOut(d, d->yp, NULL, v, stream));
  } else PetscCall((*d->plan->diagonal)(d, shift, a, v, stream));
  /* CSR values kept beside a layout of the plan's own (for an RCM copy to come) follow, as in the scaling */
  if (shift && d->val && !(d->plan->csr & CSRK_CSR_VAL)) PetscCall(CSRKDiagonalCSR(d, PETSC_TRUE, a, NULL, stream));
  if (shift && d->t && d->t->m) PetscCall(CSRKDiagonalCSR(d->t, PETSC_TRUE, a, NULL, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKCUDADeviceScale - every value of the device copy (and of its stored transpose) times a; a = 0 writes zeros,
   as MatZeroEntries() does */
PetscErrorCode MatCSRKCUDADeviceScale(CSRKDevice *d, PetscScalar a)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(CSRKGetStream(&stream));
  PetscCall(CSRKScaleValues(d->val, d->nnz, a, stream));
  if (d->plan->scale) PetscCall((*d->plan->scale)(d, a, stream));
  if (d->t) PetscCall(CSRKScaleValues(d->t->val, d->nnz, a, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v[0 .. n) *= a (v may be NULL) */
PetscErrorCode CSRKScaleValues(PetscScalar *v, PetscInt64 n, PetscScalar a, cudaStream_t stream)
{
  PetscFunctionBegin;
  if (!v || !n) PetscFunctionReturn(PETSC_SUCCESS);
  if (a == (PetscScalar)0.0) PetscCallCUDA(cudaMemsetAsync(v, 0, sizeof(PetscScalar) * (size_t)n, stream));
  else {
    CSRKScaleKernel<<<CSRKGrid(n), 256, 0, stream>>>(n, v, a);
    PetscCallCUDA(cudaGetLastError());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device scratch for an input that lives on the host */
PetscErrorCode MatCSRKCUDADeviceStage(CSRKDevice *d, const PetscScalar *host, PetscInt n, const PetscScalar **dptr)
{
  PetscFunctionBegin;
  if (!d->ywork || d->nywork < n) {
    CSRKCudaFree(d->ywork);
    PetscCallCUDA(cudaMalloc((void **)&d->ywork, sizeof(PetscScalar) * PetscMax(n, 1)));
    d->nywork = n;
  }
  PetscCallCUDA(cudaMemcpy(d->ywork, host, sizeof(PetscScalar) * n, cudaMemcpyHostToDevice));
  PetscCall(PetscLogCpuToGpu(sizeof(PetscScalar) * n));
  *dptr = d->ywork;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCSRKCUDAGather(PetscInt n, const CSRKIdx *idx, const PetscScalar *x, PetscScalar *xp, cudaStream_t stream)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  CSRKGatherKernel<<<CSRKGrid(n), 256, 0, stream>>>(n, idx, x, xp);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* n values from device memory d into host memory h, on the product stream (which may still be writing them) */
PetscErrorCode MatCSRKCUDACopyToHost(PetscScalar *h, const PetscScalar *d, PetscCount n)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKGetStream(&stream));
  PetscCallCUDA(cudaMemcpyAsync(h, d, sizeof(PetscScalar) * (size_t)n, cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscCall(PetscLogGpuToCpu(sizeof(PetscScalar) * (PetscLogDouble)n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCSRKCUDADeviceDestroy(CSRKDevice **dev)
{
  CSRKDevice *d = *dev;

  PetscFunctionBegin;
  if (!d) PetscFunctionReturn(PETSC_SUCCESS);
  if (d->data && d->plan) PetscCall(CSRKLayoutFree(d->plan, d));
  CSRKCudaFree(d->rowptr);
  CSRKCudaFree(d->colidx);
  CSRKCudaFree(d->val);
  CSRKCudaFree(d->ywork);
  CSRKCudaFree(d->tmap);
  PetscCall(CSRKReorderFree(d));
  PetscCall(MatCSRKCUDADeviceDestroy(&d->t));
  PetscCall(PetscFree(*dev));
  PetscFunctionReturn(PETSC_SUCCESS);
}
