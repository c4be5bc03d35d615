/*
   Uploads of the host AIJ arrays through pinned staging buffers. A copy from pageable memory goes through the
   driver's own small pinned buffers, filled by one thread, at a fraction of the link's rate; the device copy's set-up
   uploads the whole matrix (aijcusparse's 12 bytes a nonzero) inside the user's first solve. Here the host's threads
   fill one of two pinned buffers while the other's chunk goes up.
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudautil.cuh"
#include "csrkcudastage.cuh"

#define CSRK_STAGE_CHUNK   ((size_t)8 << 20)  /* bytes of each of the two buffers */
#define CSRK_STAGE_MIN     ((size_t)16 << 20) /* smaller uploads: one plain copy */

static char       *CSRKStageBuf[2];
static cudaEvent_t CSRKStageSent[2];

static PetscErrorCode CSRKStageFinalize(void)
{
  PetscFunctionBegin;
  for (int i = 0; i < 2; i++) {
    if (!CSRKStageBuf[i]) continue;
    PetscCallCUDA(cudaEventSynchronize(CSRKStageSent[i]));
    PetscCallCUDA(cudaEventDestroy(CSRKStageSent[i]));
    PetscCallCUDA(cudaFreeHost(CSRKStageBuf[i]));
    CSRKStageBuf[i] = NULL;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKCUDAUploadHost - bytes from host memory src to device memory dst on stream; src may change once it returns */
PetscErrorCode MatCSRKCUDAUploadHost(void *dst, const void *src, size_t bytes, cudaStream_t stream)
{
  PetscFunctionBegin;
  if (bytes < CSRK_STAGE_MIN) {
    PetscCallCUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!CSRKStageBuf[0]) {
    for (int i = 0; i < 2; i++) {
      PetscCallCUDA(cudaMallocHost((void **)&CSRKStageBuf[i], CSRK_STAGE_CHUNK));
      PetscCallCUDA(cudaEventCreateWithFlags(&CSRKStageSent[i], cudaEventDisableTiming));
    }
    PetscCall(PetscRegisterFinalize(CSRKStageFinalize));
  }
  for (size_t off = 0, k = 0; off < bytes; off += CSRK_STAGE_CHUNK, k++) {
    const size_t n = PetscMin(CSRK_STAGE_CHUNK, bytes - off);

    PetscCallCUDA(cudaEventSynchronize(CSRKStageSent[k % 2])); /* the buffer's last chunk has gone up */
    CSRKStageFill(CSRKStageBuf[k % 2], (const char *)src + off, n);
    PetscCallCUDA(cudaMemcpyAsync((char *)dst + off, CSRKStageBuf[k % 2], n, cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaEventRecord(CSRKStageSent[k % 2], stream));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
