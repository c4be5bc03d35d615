/*
   The halo exchange of the MPI CUDA product through pinned host buffers.

   Without a CUDA-aware MPI, PETSc's VecScatter copies the ghost values to the host, waits for that copy, and only then
   returns, so the product of the diagonal block is queued after the copy (and, in the SF, after pageable copies that
   are slow). Here the product is queued first and the exchange runs beside it:
     begin: a stream of its own, of the device's highest priority and not blocking with PETSc's, waits for the work
            queued so far on PETSc's stream (x is ready)
     (the caller queues the diagonal block's product on PETSc's stream)
     end:   on the halo stream the values other ranks need are gathered from x and copied to pinned host memory;
            the host waits for that copy only, exchanges the messages, and copies the ghost values to the device on
            the halo stream; PETSc's stream waits for that copy before the off-process block
   The priority lets the small gather kernel start while the product's blocks fill the device.
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include <petscdevice_cuda.h>

struct _n_CSRKHalo {
  MPI_Comm     comm;
  PetscMPIInt  tag;
  PetscInt     nsend, nrecv;         /* values sent and received */
  PetscMPIInt  nsendranks, nrecvranks;
  PetscMPIInt *sendranks, *recvranks;
  PetscInt    *sendoff, *recvoff;    /* per rank segments of the buffers; the receive buffer is in the ghost order */
  MPI_Request *reqs;
  CSRKIdx     *dsendidx;             /* device: local entries of x to send, in send order */
  PetscScalar *dsend;                /* device: the gathered values */
  PetscScalar *hsend, *hrecv;        /* pinned host buffers */
  cudaStream_t stream;
  cudaEvent_t  xready, packed, arrived;
  PetscBool    copying;              /* a host-to-device copy from hrecv may be in flight */
};

/*
   MatCSRKCUDAHaloCreate - the exchange of the ghost values of an MPI product: rank sendranks[i] receives the entries
   sendidx[sendoff[i] .. sendoff[i+1]) of the local x; the values from recvranks[i] are the ghosts [recvoff[i],
   recvoff[i+1]).
*/
PetscErrorCode MatCSRKCUDAHaloCreate(MPI_Comm comm, PetscMPIInt tag, PetscMPIInt nsendranks, const PetscMPIInt sendranks[], const PetscInt sendoff[], const PetscInt sendidx[], PetscMPIInt nrecvranks, const PetscMPIInt recvranks[], const PetscInt recvoff[], CSRKHalo *halo)
{
  CSRKHalo h;
  int      least, greatest;

  PetscFunctionBegin;
  PetscCall(PetscNew(&h));
  h->comm       = comm;
  h->tag        = tag;
  h->nsendranks = nsendranks;
  h->nrecvranks = nrecvranks;
  h->nsend      = sendoff[nsendranks];
  h->nrecv      = recvoff[nrecvranks];
  PetscCall(PetscMalloc4(nsendranks, &h->sendranks, nsendranks + 1, &h->sendoff, nrecvranks, &h->recvranks, nrecvranks + 1, &h->recvoff));
  PetscCall(PetscArraycpy(h->sendranks, sendranks, nsendranks));
  PetscCall(PetscArraycpy(h->sendoff, sendoff, nsendranks + 1));
  PetscCall(PetscArraycpy(h->recvranks, recvranks, nrecvranks));
  PetscCall(PetscArraycpy(h->recvoff, recvoff, nrecvranks + 1));
  PetscCall(PetscMalloc1(nsendranks + nrecvranks, &h->reqs));
  {
    CSRKIdx *idx;
    PetscCall(PetscMalloc1(h->nsend, &idx));
    for (PetscInt i = 0; i < h->nsend; i++) idx[i] = (CSRKIdx)sendidx[i];
    PetscCallCUDA(cudaMalloc((void **)&h->dsendidx, sizeof(CSRKIdx) * PetscMax(h->nsend, 1)));
    PetscCallCUDA(cudaMemcpy(h->dsendidx, idx, sizeof(CSRKIdx) * h->nsend, cudaMemcpyHostToDevice));
    PetscCall(PetscFree(idx));
  }
  PetscCallCUDA(cudaMalloc((void **)&h->dsend, sizeof(PetscScalar) * PetscMax(h->nsend, 1)));
  PetscCallCUDA(cudaMallocHost((void **)&h->hsend, sizeof(PetscScalar) * PetscMax(h->nsend, 1)));
  PetscCallCUDA(cudaMallocHost((void **)&h->hrecv, sizeof(PetscScalar) * PetscMax(h->nrecv, 1)));
  PetscCallCUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  PetscCallCUDA(cudaStreamCreateWithPriority(&h->stream, cudaStreamNonBlocking, greatest));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->xready, cudaEventDisableTiming));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->packed, cudaEventDisableTiming));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->arrived, cudaEventDisableTiming));
  *halo = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCSRKCUDAHaloDestroy(CSRKHalo *halo)
{
  CSRKHalo h = *halo;

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCUDA(cudaStreamSynchronize(h->stream));
  PetscCallCUDA(cudaEventDestroy(h->xready));
  PetscCallCUDA(cudaEventDestroy(h->packed));
  PetscCallCUDA(cudaEventDestroy(h->arrived));
  PetscCallCUDA(cudaStreamDestroy(h->stream));
  PetscCallCUDA(cudaFree(h->dsendidx));
  PetscCallCUDA(cudaFree(h->dsend));
  PetscCallCUDA(cudaFreeHost(h->hsend));
  PetscCallCUDA(cudaFreeHost(h->hrecv));
  PetscCall(PetscFree(h->reqs));
  PetscCall(PetscFree4(h->sendranks, h->sendoff, h->recvranks, h->recvoff));
  PetscCall(PetscFree(*halo));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Ties the exchange to the work queued so far on PETSc's stream (x is ready, the last product has read the ghost
   values); called before the diagonal block's product is queued, and returns at once */
PetscErrorCode MatCSRKCUDAHaloBegin(CSRKHalo h)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(CSRKGetStream(&stream));
  PetscCallCUDA(cudaEventRecord(h->xready, stream));
  PetscCallCUDA(cudaStreamWaitEvent(h->stream, h->xready, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called once the product is queued: gathers the values to send from the device array x on the halo stream (its
   priority puts the gather ahead of the product's waiting blocks), sends them, waits for the messages, and copies
   the ghost values to the device array ghost; PETSc's stream waits for that copy, the host does not */
PetscErrorCode MatCSRKCUDAHaloEnd(CSRKHalo h, const PetscScalar *x, PetscScalar *ghost)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (h->nsend) {
    PetscCall(MatCSRKCUDAGather(h->nsend, h->dsendidx, x, h->dsend, h->stream));
    PetscCallCUDA(cudaMemcpyAsync(h->hsend, h->dsend, sizeof(PetscScalar) * h->nsend, cudaMemcpyDeviceToHost, h->stream));
    PetscCallCUDA(cudaEventRecord(h->packed, h->stream));
    PetscCall(PetscLogGpuToCpu(sizeof(PetscScalar) * h->nsend));
  }
  /* the previous exchange's copy to the device reads the host buffer that the receives fill */
  if (h->copying) PetscCallCUDA(cudaEventSynchronize(h->arrived));
  h->copying = PETSC_FALSE;
  for (PetscMPIInt i = 0; i < h->nrecvranks; i++) {
    PetscMPIInt cnt;
    PetscCall(PetscMPIIntCast(h->recvoff[i + 1] - h->recvoff[i], &cnt));
    PetscCallMPI(MPI_Irecv(h->hrecv + h->recvoff[i], cnt, MPIU_SCALAR, h->recvranks[i], h->tag, h->comm, &h->reqs[i]));
  }
  if (h->nsend) PetscCallCUDA(cudaEventSynchronize(h->packed));
  for (PetscMPIInt i = 0; i < h->nsendranks; i++) {
    PetscMPIInt cnt;
    PetscCall(PetscMPIIntCast(h->sendoff[i + 1] - h->sendoff[i], &cnt));
    PetscCallMPI(MPI_Isend(h->hsend + h->sendoff[i], cnt, MPIU_SCALAR, h->sendranks[i], h->tag, h->comm, &h->reqs[h->nrecvranks + i]));
  }
  PetscCallMPI(MPI_Waitall(h->nrecvranks + h->nsendranks, h->reqs, MPI_STATUSES_IGNORE));
  if (!h->nrecv) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKGetStream(&stream));
  PetscCallCUDA(cudaMemcpyAsync(ghost, h->hrecv, sizeof(PetscScalar) * h->nrecv, cudaMemcpyHostToDevice, h->stream));
  PetscCallCUDA(cudaEventRecord(h->arrived, h->stream));
  PetscCallCUDA(cudaStreamWaitEvent(stream, h->arrived, 0));
  h->copying = PETSC_TRUE;
  PetscCall(PetscLogCpuToGpu(sizeof(PetscScalar) * h->nrecv));
  PetscFunctionReturn(PETSC_SUCCESS);
}
