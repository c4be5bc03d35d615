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

   Where every rank of the exchange runs on one node and the driver maps device memory between its processes (CUDA
   IPC), the values do not pass through the host: each rank's receive buffer is mapped once by the ranks that send to
   it, which copy their values straight into it on the halo stream. Two empty messages a neighbour and product order
   the copies: "ready" (the receiver has queued its last read of the buffer, an event the sender's stream waits for
   before it writes) and "written" (the sender has queued its copies, an event the receiver's stream waits for).
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
  /* CUDA IPC (ipc): the device buffer the senders write into, their mappings of the receivers' buffers, and the
     interprocess events that order the copies (this rank's and those of its neighbours, opened) */
  PetscBool    ipc;
  PetscScalar *drecv;
  PetscScalar **peerbase;            /* nsendranks: the receivers' buffers as mapped here */
  PetscInt    *peeroff;              /* nsendranks: where this rank's values start in each */
  cudaEvent_t  written, consumed;
  cudaEvent_t *peerwritten;          /* nrecvranks */
  cudaEvent_t *peerconsumed;         /* nsendranks */
};

/* what a rank tells each rank that sends to it, and each rank it sends to, to set up the IPC exchange */
typedef struct {
  cudaIpcMemHandle_t   mem;      /* its receive buffer */
  PetscInt             off;      /* where the sender's values go in it */
  cudaIpcEventHandle_t consumed; /* recorded once its last read of the buffer is queued */
} CSRKIPCToSender;
typedef struct {
  cudaIpcEventHandle_t written; /* recorded once its copies are queued */
} CSRKIPCToReceiver;

enum { CSRK_IPC_TAG_SETUP_S = 1, CSRK_IPC_TAG_SETUP_R, CSRK_IPC_TAG_READY, CSRK_IPC_TAG_WRITTEN };

/* whether every neighbour of this rank runs on its node (MPI_COMM_TYPE_SHARED) */
static PetscErrorCode CSRKHaloNeighboursOnNode(CSRKHalo h, PetscBool *local)
{
  MPI_Comm    shm;
  MPI_Group   g, gs;
  PetscMPIInt n = h->nsendranks + h->nrecvranks, *ranks, *sranks;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_split_type(h->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
  PetscCallMPI(MPI_Comm_group(h->comm, &g));
  PetscCallMPI(MPI_Comm_group(shm, &gs));
  PetscCall(PetscMalloc2(n, &ranks, n, &sranks));
  for (PetscMPIInt i = 0; i < h->nsendranks; i++) ranks[i] = h->sendranks[i];
  for (PetscMPIInt i = 0; i < h->nrecvranks; i++) ranks[h->nsendranks + i] = h->recvranks[i];
  PetscCallMPI(MPI_Group_translate_ranks(g, n, ranks, gs, sranks));
  *local = PETSC_TRUE;
  for (PetscMPIInt i = 0; i < n; i++)
    if (sranks[i] == MPI_UNDEFINED) *local = PETSC_FALSE;
  PetscCall(PetscFree2(ranks, sranks));
  PetscCallMPI(MPI_Group_free(&g));
  PetscCallMPI(MPI_Group_free(&gs));
  PetscCallMPI(MPI_Comm_free(&shm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The IPC exchange of every rank of the communicator, or of none: its buffers, events and mappings where all neighbours
   of all ranks share a node and the driver maps every buffer; *ok tells which (collective). A failed mapping is not
   an error: the exchange then goes through the host. */
static PetscErrorCode CSRKHaloSetUpIPC(CSRKHalo h, PetscBool *ok)
{
  PetscBool          local;
  PetscMPIInt        mine, all;
  cudaError_t        err = cudaSuccess;
  CSRKIPCToSender   *tos, *froms;
  CSRKIPCToReceiver *tor, *fromr;
  cudaIpcMemHandle_t mem;
  cudaIpcEventHandle_t ce, we;
  MPI_Request       *reqs;
  PetscMPIInt        ns = h->nsendranks, nr = h->nrecvranks;

  PetscFunctionBegin;
  PetscCall(CSRKHaloNeighboursOnNode(h, &local));
  mine = local ? 1 : 0;
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, h->comm));
  *ok = (PetscBool)all;
  if (!all) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCUDA(cudaMalloc((void **)&h->drecv, sizeof(PetscScalar) * PetscMax(h->nrecv, 1)));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->written, cudaEventDisableTiming | cudaEventInterprocess));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->consumed, cudaEventDisableTiming | cudaEventInterprocess));
  PetscCallCUDA(cudaEventRecord(h->consumed, h->stream)); /* nothing read yet: the first writes need not wait */
  if (err == cudaSuccess) err = cudaIpcGetMemHandle(&mem, h->drecv);
  if (err == cudaSuccess) err = cudaIpcGetEventHandle(&ce, h->consumed);
  if (err == cudaSuccess) err = cudaIpcGetEventHandle(&we, h->written);
  PetscCall(PetscCalloc4(nr, &tos, ns, &froms, ns, &tor, nr, &fromr));
  PetscCall(PetscMalloc1(2 * (ns + nr), &reqs));
  for (PetscMPIInt j = 0; j < nr; j++) {
    tos[j].mem      = mem;
    tos[j].off      = h->recvoff[j];
    tos[j].consumed = ce;
  }
  for (PetscMPIInt i = 0; i < ns; i++) tor[i].written = we;
  for (PetscMPIInt i = 0; i < ns; i++) PetscCallMPI(MPI_Irecv(&froms[i], sizeof(CSRKIPCToSender), MPI_BYTE, h->sendranks[i], CSRK_IPC_TAG_SETUP_S, h->comm, &reqs[i]));
  for (PetscMPIInt j = 0; j < nr; j++) PetscCallMPI(MPI_Irecv(&fromr[j], sizeof(CSRKIPCToReceiver), MPI_BYTE, h->recvranks[j], CSRK_IPC_TAG_SETUP_R, h->comm, &reqs[ns + j]));
  for (PetscMPIInt j = 0; j < nr; j++) PetscCallMPI(MPI_Isend(&tos[j], sizeof(CSRKIPCToSender), MPI_BYTE, h->recvranks[j], CSRK_IPC_TAG_SETUP_S, h->comm, &reqs[ns + nr + j]));
  for (PetscMPIInt i = 0; i < ns; i++) PetscCallMPI(MPI_Isend(&tor[i], sizeof(CSRKIPCToReceiver), MPI_BYTE, h->sendranks[i], CSRK_IPC_TAG_SETUP_R, h->comm, &reqs[ns + 2 * nr + i]));
  PetscCallMPI(MPI_Waitall(2 * (ns + nr), reqs, MPI_STATUSES_IGNORE));
  PetscCall(PetscCalloc4(ns, &h->peerbase, ns, &h->peeroff, ns, &h->peerconsumed, nr, &h->peerwritten));
  for (PetscMPIInt i = 0; i < ns && err == cudaSuccess; i++) {
    err = cudaIpcOpenMemHandle((void **)&h->peerbase[i], froms[i].mem, cudaIpcMemLazyEnablePeerAccess);
    if (err == cudaSuccess) err = cudaIpcOpenEventHandle(&h->peerconsumed[i], froms[i].consumed);
    h->peeroff[i] = froms[i].off;
  }
  for (PetscMPIInt j = 0; j < nr && err == cudaSuccess; j++) err = cudaIpcOpenEventHandle(&h->peerwritten[j], fromr[j].written);
  PetscCall(PetscFree4(tos, froms, tor, fromr));
  PetscCall(PetscFree(reqs));
  if (err != cudaSuccess) {
    PetscCall(PetscInfo(NULL, "CUDA IPC not available (%s): the halo exchange goes through the host\n", cudaGetErrorString(err)));
    (void)cudaGetLastError(); /* the failed call's error is handled here, not at the next launch */
  }
  mine = err == cudaSuccess ? 1 : 0;
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, h->comm));
  *ok = (PetscBool)all;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Unmaps the neighbours' buffers and events and frees this rank's, once no rank copies any more (collective) */
static PetscErrorCode CSRKHaloDestroyIPC(CSRKHalo h)
{
  PetscFunctionBegin;
  if (!h->peerbase) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCUDA(cudaStreamSynchronize(h->stream));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCallMPI(MPI_Barrier(h->comm)); /* no sender writes into a buffer freed below */
  for (PetscMPIInt i = 0; i < h->nsendranks; i++) {
    if (h->peerbase[i]) PetscCallCUDA(cudaIpcCloseMemHandle(h->peerbase[i]));
    if (h->peerconsumed[i]) PetscCallCUDA(cudaEventDestroy(h->peerconsumed[i]));
  }
  for (PetscMPIInt j = 0; j < h->nrecvranks; j++)
    if (h->peerwritten[j]) PetscCallCUDA(cudaEventDestroy(h->peerwritten[j]));
  PetscCall(PetscFree4(h->peerbase, h->peeroff, h->peerconsumed, h->peerwritten));
  PetscCallMPI(MPI_Barrier(h->comm)); /* every mapping of this rank's buffer is closed */
  PetscCallCUDA(cudaEventDestroy(h->written));
  PetscCallCUDA(cudaEventDestroy(h->consumed));
  PetscCallCUDA(cudaFree(h->drecv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDAHaloCreate - the exchange of the ghost values of an MPI product: rank sendranks[i] receives the entries
   sendidx[sendoff[i] .. sendoff[i+1]) of the local x; the values from recvranks[i] are the ghosts [recvoff[i],
   recvoff[i+1]). With ipc, through CUDA IPC where every rank can (collective; MatCSRKCUDAHaloUsesIPC() tells).
   The IPC exchange has a communicator of its own, for the tags of its messages.
*/
PetscErrorCode MatCSRKCUDAHaloCreate(MPI_Comm comm, PetscMPIInt tag, PetscMPIInt nsendranks, const PetscMPIInt sendranks[], const PetscInt sendoff[], const PetscInt sendidx[], PetscMPIInt nrecvranks, const PetscMPIInt recvranks[], const PetscInt recvoff[], PetscBool ipc, CSRKHalo *halo)
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
  PetscCall(PetscMalloc1(2 * (nsendranks + nrecvranks), &h->reqs)); /* the IPC exchange posts two messages a neighbour */
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
  if (ipc) {
    PetscCallMPI(MPI_Comm_dup(comm, &h->comm));
    PetscCall(CSRKHaloSetUpIPC(h, &h->ipc));
    if (!h->ipc) {
      PetscCall(CSRKHaloDestroyIPC(h));
      PetscCallMPI(MPI_Comm_free(&h->comm));
      h->comm = comm;
    }
  }
  *halo = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCSRKCUDAHaloDestroy(CSRKHalo *halo)
{
  CSRKHalo h = *halo;

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCUDA(cudaStreamSynchronize(h->stream));
  if (h->ipc) {
    PetscCall(CSRKHaloDestroyIPC(h));
    PetscCallMPI(MPI_Comm_free(&h->comm));
  }
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

/* The IPC exchange of one product: the gather as above; once each receiver is ready (its last product's copy out of
   its buffer queued), the values go straight into its buffer on the halo stream; once each sender has written,
   PETSc's stream copies the buffer into the ghost vector (after the diagonal product, before the off-process block)
   and records that this rank's buffer is free again */
static PetscErrorCode CSRKHaloEndIPC(CSRKHalo h, const PetscScalar *x, PetscScalar *ghost)
{
  const PetscMPIInt ns = h->nsendranks, nr = h->nrecvranks;
  MPI_Request      *rq = h->reqs; /* ready from receivers, written from senders, ready to senders, written to receivers */
  cudaStream_t      stream;

  PetscFunctionBegin;
  if (h->nsend) PetscCall(MatCSRKCUDAGather(h->nsend, h->dsendidx, x, h->dsend, h->stream));
  for (PetscMPIInt i = 0; i < ns; i++) PetscCallMPI(MPI_Irecv(NULL, 0, MPI_BYTE, h->sendranks[i], CSRK_IPC_TAG_READY, h->comm, &rq[i]));
  for (PetscMPIInt j = 0; j < nr; j++) PetscCallMPI(MPI_Irecv(NULL, 0, MPI_BYTE, h->recvranks[j], CSRK_IPC_TAG_WRITTEN, h->comm, &rq[ns + j]));
  for (PetscMPIInt j = 0; j < nr; j++) PetscCallMPI(MPI_Isend(NULL, 0, MPI_BYTE, h->recvranks[j], CSRK_IPC_TAG_READY, h->comm, &rq[ns + nr + j]));
  PetscCallMPI(MPI_Waitall(ns, rq, MPI_STATUSES_IGNORE));
  for (PetscMPIInt i = 0; i < ns; i++) {
    PetscCallCUDA(cudaStreamWaitEvent(h->stream, h->peerconsumed[i], 0));
    PetscCallCUDA(cudaMemcpyAsync(h->peerbase[i] + h->peeroff[i], h->dsend + h->sendoff[i], sizeof(PetscScalar) * (h->sendoff[i + 1] - h->sendoff[i]), cudaMemcpyDeviceToDevice, h->stream));
  }
  if (ns) PetscCallCUDA(cudaEventRecord(h->written, h->stream));
  for (PetscMPIInt i = 0; i < ns; i++) PetscCallMPI(MPI_Isend(NULL, 0, MPI_BYTE, h->sendranks[i], CSRK_IPC_TAG_WRITTEN, h->comm, &rq[ns + 2 * nr + i]));
  PetscCallMPI(MPI_Waitall(nr, rq + ns, MPI_STATUSES_IGNORE));
  PetscCall(CSRKGetStream(&stream));
  for (PetscMPIInt j = 0; j < nr; j++) PetscCallCUDA(cudaStreamWaitEvent(stream, h->peerwritten[j], 0));
  if (h->nrecv) PetscCallCUDA(cudaMemcpyAsync(ghost, h->drecv, sizeof(PetscScalar) * h->nrecv, cudaMemcpyDeviceToDevice, stream));
  PetscCallCUDA(cudaEventRecord(h->consumed, stream));
  PetscCallMPI(MPI_Waitall(nr + ns, rq + ns + nr, MPI_STATUSES_IGNORE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called once the product is queued: gathers the values to send from the device array x on the halo stream (its
   priority puts the gather ahead of the product's waiting blocks), sends them, waits for the messages, and copies
   the ghost values to the device array ghost; PETSc's stream waits for that copy, the host does not */
PetscErrorCode MatCSRKCUDAHaloEnd(CSRKHalo h, const PetscScalar *x, PetscScalar *ghost)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (h->ipc) {
    PetscCall(CSRKHaloEndIPC(h, x, ghost));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
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

/* whether the exchange passes through CUDA IPC rather than the host */
PetscBool MatCSRKCUDAHaloUsesIPC(CSRKHalo h)
{
  return h->ipc;
}
