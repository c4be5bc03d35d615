/*
   Orderings for CSR-k: RCM (PETSc's own MatGetOrdering) and Band-k.

   Band-k: the symmetrized graph of the matrix (of its blocks when the block size is > 1) is coarsened by
   METIS into groups of consecutive rows sized to the cache (tuning.c); the group graph, weighted by the
   number of fine edges between groups, is ordered by a weighted Cuthill-McKee (heaviest connection first),
   reversed; the ordering is expanded with the rows of each group in the fine RCM order (PETSc's). The
   structure build cuts the super-rows (and super-super-rows) inside the groups, so that each level of
   CSR-k is a contiguous, connected piece of the graph.
*/
#include "../csrkimpl.h"
#include <metis.h>

typedef struct {
  PetscInt  n;
  PetscInt *xadj, *adj, *w; /* CSR adjacency without self loops; w: edge weights or NULL */
} CSRKGraph;

static PetscErrorCode CSRKGraphDestroy(CSRKGraph *g)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(g->xadj));
  PetscCall(PetscFree(g->adj));
  PetscCall(PetscFree(g->w));
  g->n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Contracts the graph by the map node -> group (ngroups groups), summing edge multiplicities (or weights) into
   the coarse edge weights. Also gives the CSR of the fine nodes of each group, in increasing fine index. */
static PetscErrorCode CSRKGraphContract(const CSRKGraph *g, const PetscInt *group, PetscInt ngroups, CSRKGraph *c)
{
  PetscInt *gptr, *gnodes, *mark, *pos, *cnt, gi, q, total = 0;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(ngroups + 1, &gptr));
  PetscCall(PetscMalloc1(PetscMax(g->n, 1), &gnodes));
  for (PetscInt v = 0; v < g->n; v++) gptr[group[v] + 1]++;
  for (gi = 0; gi < ngroups; gi++) gptr[gi + 1] += gptr[gi];
  PetscCall(PetscMalloc1(ngroups, &cnt));
  for (gi = 0; gi < ngroups; gi++) cnt[gi] = gptr[gi];
  for (PetscInt v = 0; v < g->n; v++) gnodes[cnt[group[v]]++] = v;
  PetscCall(PetscFree(cnt));

  PetscCall(PetscMalloc2(ngroups, &mark, ngroups, &pos));
  for (gi = 0; gi < ngroups; gi++) mark[gi] = -1;
  /* two passes: count, then fill */
  PetscCall(PetscCalloc1(ngroups + 1, &c->xadj));
  for (gi = 0; gi < ngroups; gi++) {
    PetscInt deg = 0;
    for (q = gptr[gi]; q < gptr[gi + 1]; q++) {
      const PetscInt v = gnodes[q];
      for (PetscInt e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
        const PetscInt h = group[g->adj[e]];
        if (h != gi && mark[h] != gi) {
          mark[h] = gi;
          deg++;
        }
      }
    }
    c->xadj[gi + 1] = c->xadj[gi] + deg;
  }
  total = c->xadj[ngroups];
  PetscCall(PetscMalloc1(PetscMax(total, 1), &c->adj));
  PetscCall(PetscMalloc1(PetscMax(total, 1), &c->w));
  for (gi = 0; gi < ngroups; gi++) mark[gi] = -1;
  for (gi = 0; gi < ngroups; gi++) {
    PetscInt fill = c->xadj[gi];
    for (q = gptr[gi]; q < gptr[gi + 1]; q++) {
      const PetscInt v = gnodes[q];
      for (PetscInt e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
        const PetscInt h = group[g->adj[e]], we = g->w ? g->w[e] : 1;
        if (h == gi) continue;
        if (mark[h] != gi) {
          mark[h]      = gi;
          pos[h]       = fill;
          c->adj[fill] = h;
          c->w[fill++] = we;
        } else c->w[pos[h]] += we;
      }
    }
  }
  c->n = ngroups;
  PetscCall(PetscFree2(mark, pos));
  PetscCall(PetscFree(gptr));
  PetscCall(PetscFree(gnodes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Symmetrized graph of the (bs x bs block) pattern of A, without self loops. Nodes of very high degree (a dense row
   or column) lose their edges: they would make every level of a breadth-first search contain almost everything
   (and PETSc's RCM sorts a node's neighbours by insertion, quadratic in its degree); they end up isolated and are
   placed as such. */
static PetscErrorCode CSRKGraphFromMat(Mat A, PetscInt bs, CSRKGraph *g)
{
  const PetscInt *ia, *ja;
  PetscInt        m, nn, r, *deg, *fill, total = 0, thresh;
  PetscBool       done, *dense;
  CSRKGraph       dup;
  PetscInt       *ident;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "Cannot get the rows of the matrix for the ordering");
  nn = m / bs;
  PetscCall(PetscCalloc1(nn + 1, &deg));
  PetscCall(PetscMalloc1(PetscMax(nn, 1), &dense));
  /* degrees with duplicates, to find the dense nodes */
  for (r = 0; r < m; r++)
    for (PetscInt q = ia[r]; q < ia[r + 1]; q++) {
      const PetscInt u = r / bs, v = ja[q] / bs;
      if (u != v && v < nn) {
        deg[u + 1]++;
        deg[v + 1]++;
        total += 2;
      }
    }
  thresh = PetscMax(1000, 16 * (total / PetscMax(nn, 1)) + 100);
  for (r = 0; r < nn; r++) {
    dense[r]   = (PetscBool)(deg[r + 1] > thresh);
    deg[r + 1] = 0;
  }
  /* graph with duplicates: every entry (u,v), u != v, as u->v and v->u */
  for (r = 0; r < m; r++)
    for (PetscInt q = ia[r]; q < ia[r + 1]; q++) {
      const PetscInt u = r / bs, v = ja[q] / bs;
      if (u != v && v < nn && !dense[u] && !dense[v]) {
        deg[u + 1]++;
        deg[v + 1]++;
      }
    }
  for (r = 0; r < nn; r++) deg[r + 1] += deg[r];
  dup.n    = nn;
  dup.xadj = deg;
  dup.w    = NULL;
  PetscCall(PetscMalloc1(PetscMax(deg[nn], 1), &dup.adj));
  PetscCall(PetscMalloc1(PetscMax(nn, 1), &fill));
  for (r = 0; r < nn; r++) fill[r] = deg[r];
  for (r = 0; r < m; r++)
    for (PetscInt q = ia[r]; q < ia[r + 1]; q++) {
      const PetscInt u = r / bs, v = ja[q] / bs;
      if (u != v && v < nn && !dense[u] && !dense[v]) {
        dup.adj[fill[u]++] = v;
        dup.adj[fill[v]++] = u;
      }
    }
  PetscCall(PetscFree(fill));
  PetscCall(PetscFree(dense));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  /* contracting by the identity removes the duplicates (their count becomes the weight, dropped here) */
  PetscCall(PetscMalloc1(PetscMax(nn, 1), &ident));
  for (r = 0; r < nn; r++) ident[r] = r;
  PetscCall(CSRKGraphContract(&dup, ident, nn, g));
  PetscCall(PetscFree(g->w));
  for (r = 0; r < nn; r++) PetscCall(PetscSortInt(g->xadj[r + 1] - g->xadj[r], g->adj + g->xadj[r]));
  PetscCall(PetscFree(ident));
  PetscCall(CSRKGraphDestroy(&dup));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fine-level bandwidth-limiting order of the graph: PETSc's RCM (MatGetOrdering) on a pattern matrix of the graph */
static PetscErrorCode CSRKGraphRCM(const CSRKGraph *g, PetscInt *order)
{
  Mat             G;
  PetscScalar    *vals;
  IS              rperm, cperm;
  const PetscInt *idx;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(PetscMax(g->xadj[g->n], 1), &vals));
  PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, g->n, g->n, g->xadj, g->adj, vals, &G));
  PetscCall(MatGetOrdering(G, MATORDERINGRCM, &rperm, &cperm));
  PetscCall(ISGetIndices(rperm, &idx));
  PetscCall(PetscArraycpy(order, idx, g->n));
  PetscCall(ISRestoreIndices(rperm, &idx));
  PetscCall(ISDestroy(&rperm));
  PetscCall(ISDestroy(&cperm));
  PetscCall(MatDestroy(&G));
  PetscCall(PetscFree(vals));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  PetscInt node, w, deg;
} CSRKNbr;

static int CSRKNbrCompare(const void *a, const void *b)
{
  const CSRKNbr *x = (const CSRKNbr *)a, *y = (const CSRKNbr *)b;
  if (x->w != y->w) return x->w > y->w ? -1 : 1; /* heaviest connection first */
  if (x->deg != y->deg) return x->deg < y->deg ? -1 : 1;
  return x->node < y->node ? -1 : (x->node > y->node);
}

/* Breadth-first search from s over unvisited nodes; returns the last node of the search with the smallest degree */
static PetscInt CSRKBFSFarthest(const CSRKGraph *g, PetscInt s, const PetscBool *visited, PetscInt *queue, PetscInt *level, PetscInt *depth)
{
  PetscInt head = 0, tail = 0, far = s, q;
  queue[tail++] = s;
  level[s]      = 0;
  while (head < tail) {
    const PetscInt v = queue[head++];
    for (PetscInt e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
      const PetscInt u = g->adj[e];
      if (!visited[u] && level[u] < 0) {
        level[u]      = level[v] + 1;
        queue[tail++] = u;
      }
    }
  }
  *depth = level[queue[tail - 1]];
  for (q = tail - 1; q >= 0 && level[queue[q]] == *depth; q--) {
    const PetscInt u = queue[q];
    if (g->xadj[u + 1] - g->xadj[u] < g->xadj[far + 1] - g->xadj[far] || far == s) far = u;
  }
  for (q = 0; q < tail; q++) level[queue[q]] = -1;
  return far;
}

/* Weighted reverse Cuthill-McKee of a coarse graph: rank[v] is the position of v in the ordering */
static PetscErrorCode CSRKWeightedRCM(const CSRKGraph *g, PetscInt *rank)
{
  PetscInt  n = g->n, *order, *queue, *level, *bydeg, head = 0, tail = 0, next = 0, maxdeg = 0;
  PetscBool *visited;
  CSRKNbr  *nb;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc5(n, &order, n, &queue, n, &level, n, &bydeg, n, &visited));
  for (PetscInt v = 0; v < n; v++) {
    visited[v] = PETSC_FALSE;
    level[v]   = -1;
    bydeg[v]   = v;
    maxdeg     = PetscMax(maxdeg, g->xadj[v + 1] - g->xadj[v]);
  }
  {
    /* nodes by increasing degree: start candidates of the components */
    PetscInt *key;
    PetscCall(PetscMalloc1(n, &key));
    for (PetscInt v = 0; v < n; v++) key[v] = g->xadj[v + 1] - g->xadj[v];
    PetscCall(PetscSortIntWithArray(n, key, bydeg));
    PetscCall(PetscFree(key));
  }
  PetscCall(PetscMalloc1(maxdeg + 1, &nb));
  while (tail < n) {
    PetscInt s, depth, d2, far;
    while (visited[bydeg[next]]) next++;
    s = bydeg[next];
    /* pseudo-peripheral start: move to the far end while the eccentricity grows */
    far = CSRKBFSFarthest(g, s, visited, queue, level, &depth);
    for (PetscInt it = 0; it < 4 && far != s; it++) {
      PetscInt f2 = CSRKBFSFarthest(g, far, visited, queue, level, &d2);
      if (d2 <= depth) {
        s = far;
        break;
      }
      s     = far;
      far   = f2;
      depth = d2;
    }
    visited[s]    = PETSC_TRUE;
    order[tail++] = s;
    while (head < tail) {
      const PetscInt v = order[head++];
      PetscInt       cnt = 0;
      for (PetscInt e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
        const PetscInt u = g->adj[e];
        if (visited[u]) continue;
        nb[cnt].node = u;
        nb[cnt].w    = g->w ? g->w[e] : 1;
        nb[cnt].deg  = g->xadj[u + 1] - g->xadj[u];
        cnt++;
      }
      qsort(nb, (size_t)cnt, sizeof(CSRKNbr), CSRKNbrCompare);
      for (PetscInt q = 0; q < cnt; q++) {
        visited[nb[q].node] = PETSC_TRUE;
        order[tail++]       = nb[q].node;
      }
    }
  }
  for (PetscInt q = 0; q < n; q++) rank[order[n - 1 - q]] = q;
  PetscCall(PetscFree(nb));
  PetscCall(PetscFree5(order, queue, level, bydeg, visited));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Partitions g into about nparts groups of consecutive-able nodes with METIS; group[] numbers them 0..ngroups-1 */
static PetscErrorCode CSRKMetisGroups(const CSRKGraph *g, PetscInt nparts, PetscInt *group, PetscInt *ngroups)
{
  idx_t     nv = (idx_t)g->n, ncon = 1, np = (idx_t)nparts, objval, options[METIS_NOPTIONS], *xadj, *adj, *w = NULL, *part;
  PetscInt  ne = g->xadj[g->n], *renum;
  int       status;

  PetscFunctionBegin;
  if (nparts <= 1 || g->n <= nparts || ne == 0) {
    /* nothing to coarsen: contiguous chunks of the current numbering */
    const PetscInt per = nparts <= 1 ? PetscMax(g->n, 1) : (g->n + nparts - 1) / nparts;
    for (PetscInt v = 0; v < g->n; v++) group[v] = v / per;
    *ngroups = g->n ? (g->n - 1) / per + 1 : 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(g->n <= (PetscInt)INT32_MAX && ne <= (PetscInt)INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "Graph too large for 32-bit METIS indices");
  PetscCall(PetscMalloc4(g->n + 1, &xadj, ne, &adj, g->n, &part, g->n, &renum));
  for (PetscInt v = 0; v <= g->n; v++) xadj[v] = (idx_t)g->xadj[v];
  for (PetscInt e = 0; e < ne; e++) adj[e] = (idx_t)g->adj[e];
  if (g->w) {
    PetscCall(PetscMalloc1(ne, &w));
    for (PetscInt e = 0; e < ne; e++) w[e] = (idx_t)g->w[e];
  }
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED]      = 7; /* reproducible orderings */
  status                          = METIS_PartGraphKway(&nv, &ncon, xadj, adj, NULL, NULL, w, &np, NULL, NULL, options, &objval, part);
  PetscCheck(status == METIS_OK, PETSC_COMM_SELF, PETSC_ERR_LIB, "METIS_PartGraphKway() failed with status %d", status);
  /* number the non-empty parts consecutively */
  for (PetscInt p = 0; p < g->n; p++) renum[p] = -1;
  *ngroups = 0;
  for (PetscInt v = 0; v < g->n; v++) {
    if (renum[part[v]] < 0) renum[part[v]] = (*ngroups)++;
    group[v] = renum[part[v]];
  }
  PetscCall(PetscFree(w));
  PetscCall(PetscFree4(xadj, adj, part, renum));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Stable bucket sort of items (given in 'in' order) by key[] in [0, nkeys): the groups become contiguous */
static PetscErrorCode CSRKBucket(PetscInt n, const PetscInt *in, const PetscInt *key, PetscInt nkeys, PetscInt *out, PetscInt *ptr)
{
  PetscInt *fill;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(ptr, nkeys + 1));
  for (PetscInt q = 0; q < n; q++) ptr[key[in[q]] + 1]++;
  for (PetscInt b = 0; b < nkeys; b++) ptr[b + 1] += ptr[b];
  PetscCall(PetscMalloc1(nkeys + 1, &fill));
  PetscCall(PetscArraycpy(fill, ptr, nkeys));
  for (PetscInt q = 0; q < n; q++) out[fill[key[in[q]]]++] = in[q];
  PetscCall(PetscFree(fill));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Band-k on the node graph g: METIS groups of about gnodes nodes, ordered by the weighted RCM of the group graph,
   nodes inside a group in fine RCM order. Returns the node order and the node offsets of the groups. */
static PetscErrorCode CSRKBandK(const CSRKGraph *g, PetscInt gnodes, PetscInt *nodeorder, PetscInt *ngroups, PetscInt **gnodeptr)
{
  CSRKGraph c = {0};
  PetscInt  n = g->n, ng = 0, *part, *rank, *fine, *key;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(n, &part, n, &fine, n, &key));
  PetscCall(CSRKGraphRCM(g, fine));
  PetscCall(CSRKMetisGroups(g, (n + gnodes - 1) / gnodes, part, &ng));
  PetscCall(CSRKGraphContract(g, part, ng, &c));
  PetscCall(PetscMalloc1(ng, &rank));
  PetscCall(CSRKWeightedRCM(&c, rank));
  /* expand: nodes in fine RCM order, bucketed by the rank of their group */
  for (PetscInt v = 0; v < n; v++) key[v] = rank[part[v]];
  PetscCall(PetscMalloc1(ng + 1, gnodeptr));
  PetscCall(CSRKBucket(n, fine, key, ng, nodeorder, *gnodeptr));
  *ngroups = ng;
  PetscCall(PetscFree(rank));
  PetscCall(PetscFree3(part, fine, key));
  PetscCall(CSRKGraphDestroy(&c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKComputeOrdering - row ordering of the square sequential matrix A for CSR-k.

   Output: perm[r] = original row placed at position r (PetscMalloc'ed, NULL for the natural ordering); for Band-k
   also the row offsets of its groups (groupptr, ngroups+1 entries), inside which the structure build cuts the
   super-rows and super-super-rows. With block size bs > 1 the rows of one block stay together.
*/
PetscErrorCode MatCSRKComputeOrdering(Mat A, MatCSRKOrdering ordering, PetscInt bs, PetscInt grouprows, PetscInt **perm, PetscInt *ngroups, PetscInt **groupptr)
{
  PetscInt  m, nn, *nodeorder;
  CSRKGraph g;

  PetscFunctionBegin;
  *perm     = NULL;
  *groupptr = NULL;
  *ngroups  = 0;
  PetscCall(MatGetLocalSize(A, &m, NULL));
  if (ordering == MAT_CSRK_ORDERING_NATURAL || m < 2) PetscFunctionReturn(PETSC_SUCCESS);
  bs = (bs > 1 && m % bs == 0) ? bs : 1;
  nn = m / bs;
  PetscCall(PetscMalloc1(nn, &nodeorder));
  PetscCall(CSRKGraphFromMat(A, bs, &g));
  if (ordering == MAT_CSRK_ORDERING_RCM) PetscCall(CSRKGraphRCM(&g, nodeorder));
  else {
    PetscCall(CSRKBandK(&g, PetscMax(grouprows / bs, 1), nodeorder, ngroups, groupptr));
    for (PetscInt q = 0; q <= *ngroups; q++) (*groupptr)[q] *= bs;
  }
  PetscCall(CSRKGraphDestroy(&g));
  PetscCall(PetscMalloc1(m, perm));
  for (PetscInt q = 0; q < nn; q++)
    for (PetscInt c = 0; c < bs; c++) (*perm)[q * bs + c] = nodeorder[q] * bs + c;
  PetscCall(PetscFree(nodeorder));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatGetOrdering_BandK - Band-k as a PETSc MatOrderingType ("bandk"), for any square matrix with MatGetRowIJ():
   super-rows sized by the CSR-2 rule, the block size of the matrix respected.
*/
PetscErrorCode MatGetOrdering_BandK(Mat mat, MatOrderingType type, IS *row, IS *col)
{
  PetscInt m, bs, nnz, *perm = NULL, ngroups, *groupptr = NULL;
  MatInfo  info;

  PetscFunctionBegin;
  (void)type;
  PetscCall(MatGetLocalSize(mat, &m, NULL));
  PetscCall(MatGetBlockSize(mat, &bs));
  PetscCall(MatGetInfo(mat, MAT_LOCAL, &info));
  nnz = (PetscInt)info.nz_used;
  PetscCall(MatCSRKComputeOrdering(mat, MAT_CSRK_ORDERING_BANDK, bs, MatCSRKBandKGroupRows(m, nnz, bs, 1), &perm, &ngroups, &groupptr));
  if (!perm) {
    PetscCall(PetscMalloc1(m, &perm));
    for (PetscInt r = 0; r < m; r++) perm[r] = r;
  }
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, m, perm, PETSC_COPY_VALUES, row));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, m, perm, PETSC_OWN_POINTER, col));
  PetscCall(PetscFree(groupptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}
