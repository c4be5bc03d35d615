/*
   Orderings for CSR-k: RCM and Band-k.

   RCM: reverse Cuthill-McKee on the node graph (the blocks when the block size is > 1), in O(nonzeros): for a
   structurally symmetric matrix directly on the matrix's own row arrays (a one-pass test tells it), otherwise on the
   pattern plus its transpose. Same rules as PETSc's (SPARSPAK's) genrcm: pseudo-peripheral start nodes (George-Liu),
   neighbours by increasing degree, components in the order of their lowest node.

   Band-k: the symmetrized graph of the matrix (of its blocks when the block size is > 1) is coarsened by
   METIS into groups of consecutive rows sized to the cache (tuning.c); the group graph, weighted by the
   number of fine edges between groups, is ordered by a weighted Cuthill-McKee (heaviest connection first),
   reversed; the ordering is expanded with the rows of each group in the fine RCM order. The
   structure build cuts the super-rows (and super-super-rows) inside the groups, so that each level of
   CSR-k is a contiguous, connected piece of the graph.
*/
#include "../csrkimpl.h"
#include <metis.h>

#if PETSC_VERSION_LT(3, 22, 0)
  #define CSRK_INT_MAX PETSC_MAX_INT
#else
  #define CSRK_INT_MAX PETSC_INT_MAX
#endif

/* A node graph. Its adjacency is symmetric. It may be the matrix's own row arrays (mat set, from MatGetRowIJ(), so
   with the diagonal as self loops), which is why the graph algorithms skip self loops and take the nodes whose row
   is longer than maxdeg (a dense row and column) as isolated. */
typedef struct {
  PetscInt  n;
  PetscInt *xadj, *adj, *w; /* CSR adjacency; w: edge weights or NULL */
  PetscInt  maxdeg;         /* longer rows are dense nodes: no edges followed to or from them */
  Mat       mat;            /* xadj and adj belong to this matrix (restored by CSRKGraphDestroy()); NULL: owned */
} CSRKGraph;

static PetscErrorCode CSRKGraphDestroy(CSRKGraph *g)
{
  PetscFunctionBegin;
  if (g->mat) {
    PetscInt  n;
    PetscBool done;
    PetscCall(MatRestoreRowIJ(g->mat, 0, PETSC_FALSE, PETSC_FALSE, &n, (const PetscInt **)&g->xadj, (const PetscInt **)&g->adj, &done));
    g->mat  = NULL;
    g->xadj = g->adj = NULL;
  } else {
    PetscCall(PetscFree(g->xadj));
    PetscCall(PetscFree(g->adj));
  }
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
  c->n      = ngroups;
  c->maxdeg = CSRK_INT_MAX;
  c->mat    = NULL;
  PetscCall(PetscFree2(mark, pos));
  PetscCall(PetscFree(gptr));
  PetscCall(PetscFree(gnodes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Two cheap hashes of a node number (multiply, xor-shift) */
static inline uint64_t CSRKHashA(uint64_t v)
{
  v = (v + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
  return v ^ (v >> 31);
}
static inline uint64_t CSRKHashB(uint64_t v)
{
  v = (v + 0x632be59bd9b4e019ULL) * 0x94d049bb133111ebULL;
  return v ^ (v >> 29);
}

/* Whether the pattern of n rows (columns < n, no duplicate entries) is structurally symmetric, in one pass and
   without a transpose: the sum over the entries (u,v) of a(u) b(v) equals that over the transposed entries for two
   hashes a, b of the node numbers (mod 2^64). A nonsymmetric pattern passes by chance with a probability of about
   2^-58, and would then only get a worse ordering, never a wrong one. Also tells whether the rows are sorted. */
static void CSRKPatternSymmetric(PetscInt n, const PetscInt *xadj, const PetscInt *adj, int nthreads, PetscBool *sym, PetscBool *sorted)
{
  uint64_t s1 = 0, s2 = 0;
  PetscInt unsorted = 0;

#if defined(_OPENMP)
  #pragma omp parallel for num_threads(nthreads) schedule(static) reduction(+ : s1, s2, unsorted)
#endif
  for (PetscInt u = 0; u < n; u++) {
    uint64_t sa = 0, sb = 0;
    for (PetscInt q = xadj[u]; q < xadj[u + 1]; q++) {
      sa += CSRKHashA((uint64_t)adj[q]);
      sb += CSRKHashB((uint64_t)adj[q]);
    }
    for (PetscInt q = xadj[u] + 1; q < xadj[u + 1]; q++) unsorted += adj[q] <= adj[q - 1];
    s1 += CSRKHashA((uint64_t)u) * sb;
    s2 += CSRKHashB((uint64_t)u) * sa;
  }
  *sym    = (PetscBool)(s1 == s2);
  *sorted = (PetscBool)!unsorted;
}

/* The graph of the bs x bs blocks of the pattern (rows sorted, no self loops). Fails (*ok false) when the pattern is
   not made of blocks, i.e. storing it by blocks would take more than twice its entries: a matrix renumbered row by
   row keeps its block size, not its blocks. */
static PetscErrorCode CSRKBlockPattern(PetscInt m, const PetscInt *ia, const PetscInt *ja, PetscInt bs, PetscInt **bxadj, PetscInt **badj, PetscBool *ok)
{
  const PetscInt nn = m / bs;
  PetscInt      *mark, *xadj, *adj = NULL, blocks = 0;

  PetscFunctionBegin;
  *bxadj = *badj = NULL;
  PetscCall(PetscMalloc1(nn + 1, &xadj));
  PetscCall(PetscMalloc1(PetscMax(nn, 1), &mark));
  for (PetscInt u = 0; u < nn; u++) mark[u] = -1;
  xadj[0] = 0;
  for (PetscInt u = 0; u < nn; u++) {
    PetscInt cnt = 0;
    for (PetscInt q = ia[u * bs]; q < ia[(u + 1) * bs]; q++) {
      const PetscInt v = ja[q] / bs;
      if (v < nn && mark[v] != u) {
        mark[v] = u;
        blocks++;
        cnt += (v != u);
      }
    }
    xadj[u + 1] = xadj[u] + cnt;
  }
  *ok = (PetscBool)((PetscLogDouble)blocks * bs * bs <= 2.0 * (PetscLogDouble)ia[m]);
  if (*ok) {
    PetscCall(PetscMalloc1(PetscMax(xadj[nn], 1), &adj));
    for (PetscInt u = 0; u < nn; u++) mark[u] = -1;
    for (PetscInt u = 0; u < nn; u++) {
      PetscInt  f = xadj[u];
      PetscBool sorted = PETSC_TRUE;
      for (PetscInt q = ia[u * bs]; q < ia[(u + 1) * bs]; q++) {
        const PetscInt v = ja[q] / bs;
        if (v < nn && mark[v] != u) {
          mark[v] = u;
          if (v == u) continue;
          if (f > xadj[u] && adj[f - 1] > v) sorted = PETSC_FALSE;
          adj[f++] = v;
        }
      }
      if (!sorted) PetscCall(PetscSortInt(xadj[u + 1] - xadj[u], adj + xadj[u]));
    }
    *bxadj = xadj;
    *badj  = adj;
  } else PetscCall(PetscFree(xadj));
  PetscCall(PetscFree(mark));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Sorted merge of rows a (na entries) and b (nb) without duplicates, self loops (u) and dense nodes; writes to out
   unless NULL; returns the count */
static inline PetscInt CSRKMergeRow(PetscInt u, const PetscInt *a, PetscInt na, const PetscInt *b, PetscInt nb, const PetscBool *dense, PetscInt *out)
{
  PetscInt i = 0, j = 0, c = 0, v;

  while (i < na || j < nb) {
    if (j >= nb || (i < na && a[i] < b[j])) v = a[i++];
    else if (i >= na || b[j] < a[i]) v = b[j++];
    else {
      v = a[i++];
      j++;
    }
    if (v == u || (dense && dense[v])) continue;
    if (out) out[c] = v;
    c++;
  }
  return c;
}

/* A loop-free symmetric graph (owned arrays) from the pattern of n nodes (rows sorted, no duplicates): the pattern
   when it is symmetric, else the pattern plus its transpose. Nodes of more than maxdeg neighbours (counted in the
   pattern and its transpose, halved) lose their edges. */
static PetscErrorCode CSRKGraphSymmetrize(PetscInt n, const PetscInt *xadj, const PetscInt *adj, PetscBool sym, PetscInt maxdeg, int nthreads, CSRKGraph *g)
{
  PetscInt  *txadj = NULL, *tadj = NULL, *fill, *gx, *ga, ndense = 0;
  PetscBool *dense;

  PetscFunctionBegin;
  if (!sym) {
    /* the transpose, rows sorted since the rows of the pattern are visited in order */
    PetscCall(PetscCalloc1(n + 1, &txadj));
    for (PetscInt u = 0; u < n; u++)
      for (PetscInt q = xadj[u]; q < xadj[u + 1]; q++) txadj[adj[q] + 1]++;
    for (PetscInt u = 0; u < n; u++) txadj[u + 1] += txadj[u];
    PetscCall(PetscMalloc1(PetscMax(txadj[n], 1), &tadj));
    PetscCall(PetscMalloc1(PetscMax(n, 1), &fill));
    PetscCall(PetscArraycpy(fill, txadj, n));
    for (PetscInt u = 0; u < n; u++)
      for (PetscInt q = xadj[u]; q < xadj[u + 1]; q++) tadj[fill[adj[q]]++] = u;
    PetscCall(PetscFree(fill));
  }
  PetscCall(PetscMalloc1(PetscMax(n, 1), &dense));
  for (PetscInt u = 0; u < n; u++) {
    const PetscInt deg = sym ? xadj[u + 1] - xadj[u] : (xadj[u + 1] - xadj[u] + txadj[u + 1] - txadj[u] + 1) / 2;
    dense[u]           = (PetscBool)(deg > maxdeg);
    ndense += dense[u];
  }
  PetscCall(PetscMalloc1(n + 1, &gx));
  gx[0] = 0;
#if defined(_OPENMP)
  #pragma omp parallel for num_threads(nthreads) schedule(static)
#endif
  for (PetscInt u = 0; u < n; u++)
    gx[u + 1] = dense[u] ? 0 : CSRKMergeRow(u, adj + xadj[u], xadj[u + 1] - xadj[u], tadj ? tadj + txadj[u] : NULL, tadj ? txadj[u + 1] - txadj[u] : 0, ndense ? dense : NULL, NULL);
  for (PetscInt u = 0; u < n; u++) gx[u + 1] += gx[u];
  PetscCall(PetscMalloc1(PetscMax(gx[n], 1), &ga));
#if defined(_OPENMP)
  #pragma omp parallel for num_threads(nthreads) schedule(static)
#endif
  for (PetscInt u = 0; u < n; u++)
    if (!dense[u]) (void)CSRKMergeRow(u, adj + xadj[u], xadj[u + 1] - xadj[u], tadj ? tadj + txadj[u] : NULL, tadj ? txadj[u + 1] - txadj[u] : 0, ndense ? dense : NULL, ga + gx[u]);
  PetscCall(PetscFree(dense));
  PetscCall(PetscFree(txadj));
  PetscCall(PetscFree(tadj));
  g->n      = n;
  g->xadj   = gx;
  g->adj    = ga;
  g->w      = NULL;
  g->maxdeg = CSRK_INT_MAX;
  g->mat    = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rows sorted, duplicates dropped: a copy of a pattern some MatGetRowIJ() gave unsorted */
static PetscErrorCode CSRKSortedPattern(PetscInt n, const PetscInt *xadj, const PetscInt *adj, PetscInt **sx, PetscInt **sa)
{
  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n + 1, sx));
  PetscCall(PetscMalloc1(PetscMax(xadj[n], 1), sa));
  (*sx)[0] = 0;
  for (PetscInt u = 0; u < n; u++) {
    PetscInt len = xadj[u + 1] - xadj[u], *row = *sa + (*sx)[u];
    PetscCall(PetscArraycpy(row, adj + xadj[u], len));
    PetscCall(PetscSortRemoveDupsInt(&len, row));
    (*sx)[u + 1] = (*sx)[u] + len;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   The node graph of A for an ordering: nodes are the bs x bs blocks when A is made of them (*bsused = bs), else the
   rows (*bsused = 1). With loops_ok and a structurally symmetric pattern of rows, the graph is the matrix's own row
   arrays (no copy: diagonal as self loops, dense rows by their length); otherwise an owned, loop-free, symmetric graph
   (the pattern plus its transpose when it is not symmetric) whose dense nodes have no edges. A dense node has more
   than max(500, 16 d + 50) neighbours, d the mean: in a breadth-first search it would put almost every node in one
   level.
*/
static PetscErrorCode CSRKGraphFromMat(Mat A, PetscInt bs, PetscBool loops_ok, int nthreads, CSRKGraph *g, PetscInt *bsused)
{
  const PetscInt *ia, *ja, *px, *pa;
  PetscInt        m, n, *bx = NULL, *ba = NULL, *sx = NULL, *sa = NULL, maxdeg;
  PetscBool       done, ok = PETSC_FALSE, sym, sorted, set, flg;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(g, sizeof(*g)));
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "Cannot get the rows of the matrix for the ordering");
  if (bs > 1 && m % bs == 0) PetscCall(CSRKBlockPattern(m, ia, ja, bs, &bx, &ba, &ok));
  if (!ok) bs = 1;
  *bsused = bs;
  n       = m / bs;
  px      = ok ? bx : ia;
  pa      = ok ? ba : ja;
  /* what PETSc knows saves the test (and wins over it: only the quality of the ordering depends on it) */
  PetscCall(MatIsStructurallySymmetricKnown(A, &set, &flg));
  if (set && flg && loops_ok) sym = sorted = PETSC_TRUE;
  else {
    CSRKPatternSymmetric(n, px, pa, nthreads, &sym, &sorted);
    if (set) sym = flg;
  }
  maxdeg = PetscMax(500, 16 * (px[n] / PetscMax(n, 1)) + 50);
  if (sym && loops_ok) {
    g->n      = n;
    g->xadj   = (PetscInt *)px;
    g->adj    = (PetscInt *)pa;
    g->maxdeg = maxdeg + (ok ? 0 : 1); /* the diagonal */
    if (ok) bx = ba = NULL;            /* now the graph's */
    else g->mat = A;
  } else {
    if (!sorted) {
      PetscCall(CSRKSortedPattern(n, px, pa, &sx, &sa));
      px = sx;
      pa = sa;
    }
    PetscCall(CSRKGraphSymmetrize(n, px, pa, sym, maxdeg, nthreads, g));
  }
  PetscCall(PetscInfo(A, "Ordering graph: %" PetscInt_FMT " nodes (block size %" PetscInt_FMT "), pattern %s, %s\n", n, bs, sym ? "symmetric" : "not symmetric",
                      g->mat ? "the matrix's own arrays" : (sym ? "copied without self loops" : "symmetrized")));
  PetscCall(PetscFree(bx));
  PetscCall(PetscFree(ba));
  PetscCall(PetscFree(sx));
  PetscCall(PetscFree(sa));
  if (!g->mat) PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The nodes a sweep has reached, one bit each: 1 M nodes take 125 kB, which stays in L2, where a mark per node (4-8
   MB) made every edge of a scrambled graph a miss to L3 or memory (a 27-point graph has 26 edges per node, and each
   of them tests its far end). */
#define CSRKBitTest(b, u) (((b)[(u) >> 6] >> ((u) & 63)) & 1)
#define CSRKBitSet(b, u)  ((b)[(u) >> 6] |= (uint64_t)1 << ((u) & 63))
#define CSRKBitClear(b, u) ((b)[(u) >> 6] &= ~((uint64_t)1 << ((u) & 63)))

/* One Cuthill-McKee sweep from root over its component: order[0..*cnt) in breadth-first order, the neighbours of
   each node queued by increasing degree (stable insertion sort: degrees are small); *depth levels after the root,
   the last one starting at order[*last]. A neighbour is appended and the tail moves only when it is new (no branch
   on the test). The row pointers and the rows of the nodes a few places ahead in the queue are prefetched: on a
   scrambled matrix each of them is a cache miss, and the queue ahead is known. A new node's degree comes from its
   row pointers, which its turn in the queue reads again. */
static void CSRKCMSweep(const CSRKGraph *g, uint64_t *seen, PetscInt root, PetscInt *order, PetscInt *cnt, PetscInt *depth, PetscInt *last)
{
  const PetscInt *xadj = g->xadj, *adj = g->adj;
  PetscInt        head = 0, tail = 1, levelstart = 0, levelend = 1, d = 0;

  order[0] = root;
  CSRKBitSet(seen, root);
  while (head < tail) {
    PetscInt v, first;
    if (head == levelend) {
      d++;
      levelstart = levelend;
      levelend   = tail;
    }
    if (head + 16 < tail) __builtin_prefetch(xadj + order[head + 16]);
    if (head + 10 < tail) {
      const PetscInt w = order[head + 10];
      for (PetscInt q = xadj[w]; q < xadj[w + 1]; q += 64 / (PetscInt)sizeof(PetscInt)) __builtin_prefetch(adj + q);
      if (xadj[w + 1] > xadj[w]) __builtin_prefetch(adj + xadj[w + 1] - 1);
    }
    v     = order[head++];
    first = tail;
    for (PetscInt q = xadj[v]; q < xadj[v + 1]; q++) {
      const PetscInt u = adj[q], isnew = !CSRKBitTest(seen, u);
      order[tail] = u;
      CSRKBitSet(seen, u);
      tail += isnew;
    }
    for (PetscInt i = first + 1; i < tail; i++) {
      const PetscInt u = order[i], du = xadj[u + 1] - xadj[u];
      PetscInt       k;
      for (k = i; k > first && xadj[order[k - 1] + 1] - xadj[order[k - 1]] > du; k--) order[k] = order[k - 1];
      order[k] = u;
    }
  }
  *cnt   = tail;
  *depth = d;
  *last  = levelstart;
}

#define CSRK_RCM_MAX_SWEEPS 8

/* Reverse Cuthill-McKee of g in O(edges x sweeps): order[k] = node placed at position k. Each connected component is
   numbered from a pseudo-peripheral node (George-Liu): the first sweep starts at a node of smallest degree of the
   component (components are taken by their node of smallest degree: a counting sort of the degrees), the next ones at
   a node of smallest degree in the last level of the previous sweep, while the number of levels grows. Every sweep is
   a Cuthill-McKee sweep, so the last one is the component's ordering, which is then reversed in place. On a grid the
   first sweep starts at a corner and the second confirms the opposite corner: two sweeps. Dense nodes come first,
   each alone. order has room for n + 1 nodes (the sweeps write one past their tail). */
static PetscErrorCode CSRKGraphRCM(const CSRKGraph *g, PetscInt *order)
{
  const PetscInt  n = g->n, nb = 64, *xadj = g->xadj; /* degree buckets; larger degrees share the last one */
  uint64_t       *seen;
  PetscInt        pos = 0, nroots, *bydeg, cnt[64 + 1] = {0};

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(n / 64 + 1, &seen));
  PetscCall(PetscMalloc1(PetscMax(n, 1), &bydeg));
  for (PetscInt v = 0; v < n; v++) {
    const PetscInt d = xadj[v + 1] - xadj[v];
    if (d > g->maxdeg) {
      CSRKBitSet(seen, v);
      order[pos++] = v;
    } else cnt[PetscMin(d, nb - 1) + 1]++;
  }
  for (PetscInt b = 0; b < nb; b++) cnt[b + 1] += cnt[b];
  for (PetscInt v = 0; v < n; v++)
    if (!CSRKBitTest(seen, v)) bydeg[cnt[PetscMin(xadj[v + 1] - xadj[v], nb - 1)]++] = v;
  nroots = n - pos;
  for (PetscInt i = 0; i < nroots; i++) {
    PetscInt root = bydeg[i], prev = -1, len, depth, last, *o = order + pos;
    if (CSRKBitTest(seen, root)) continue; /* numbered with an earlier component */
    for (PetscInt sweep = 0;; sweep++) {
      CSRKCMSweep(g, seen, root, o, &len, &depth, &last);
      if (len == 1 || (sweep > 0 && depth <= prev) || sweep == CSRK_RCM_MAX_SWEEPS - 1) break;
      prev = depth;
      root = o[last];
      for (PetscInt k = last + 1; k < len; k++)
        if (xadj[o[k] + 1] - xadj[o[k]] < xadj[root + 1] - xadj[root]) root = o[k];
      for (PetscInt k = 0; k < len; k++) CSRKBitClear(seen, o[k]); /* the next sweep starts afresh */
    }
    for (PetscInt a = 0, b = len - 1; a < b; a++, b--) {
      const PetscInt t = o[a];
      o[a]             = o[b];
      o[b]             = t;
    }
    pos += len;
  }
  PetscCheck(pos == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "RCM numbered %" PetscInt_FMT " of %" PetscInt_FMT " nodes", pos, n);
  PetscCall(PetscFree(bydeg));
  PetscCall(PetscFree(seen));
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
  PetscCall(PetscMalloc3(n, &part, n + 1, &fine, n, &key));
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
   super-rows and super-super-rows. With block size bs > 1 the rows of one block stay together when A is made of
   such blocks. nthreads: OpenMP threads of the parallel passes (<= 0: MatCSRKDefaultThreads()).
*/
PetscErrorCode MatCSRKComputeOrdering(Mat A, MatCSRKOrdering ordering, PetscInt bs, PetscInt grouprows, PetscInt nthreads, PetscInt **perm, PetscInt *ngroups, PetscInt **groupptr)
{
  PetscInt       m, nn, *nodeorder;
  CSRKGraph      g;
  int            nt = 1;
  PetscLogDouble t0, t1, t2;

  PetscFunctionBegin;
  *perm     = NULL;
  *groupptr = NULL;
  *ngroups  = 0;
  PetscCall(MatGetLocalSize(A, &m, NULL));
  if (ordering == MAT_CSRK_ORDERING_NATURAL || m < 2) PetscFunctionReturn(PETSC_SUCCESS);
#if defined(_OPENMP)
  nt = (int)(nthreads > 0 ? nthreads : MatCSRKDefaultThreads());
#endif
  PetscCall(PetscTime(&t0));
  PetscCall(CSRKGraphFromMat(A, bs, (PetscBool)(ordering == MAT_CSRK_ORDERING_RCM), nt, &g, &bs));
  PetscCall(PetscTime(&t1));
  nn = g.n;
  PetscCall(PetscMalloc1(nn + 1, &nodeorder));
  if (ordering == MAT_CSRK_ORDERING_RCM) PetscCall(CSRKGraphRCM(&g, nodeorder));
  else {
    PetscCall(CSRKBandK(&g, PetscMax(grouprows / bs, 1), nodeorder, ngroups, groupptr));
    for (PetscInt q = 0; q <= *ngroups; q++) (*groupptr)[q] *= bs;
  }
  PetscCall(PetscTime(&t2));
  PetscCall(PetscInfo(A, "Ordering %s: graph %g s, ordering of its %" PetscInt_FMT " nodes %g s\n", MatCSRKOrderings[ordering], t1 - t0, nn, t2 - t1));
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
  PetscCall(MatGetLocalSize(mat, &m, NULL));
  PetscCall(MatGetBlockSize(mat, &bs));
  PetscCall(MatGetInfo(mat, MAT_LOCAL, &info));
  nnz = (PetscInt)info.nz_used;
  PetscCall(MatCSRKComputeOrdering(mat, MAT_CSRK_ORDERING_BANDK, bs, MatCSRKBandKGroupRows(m, nnz, bs, 1), 0, &perm, &ngroups, &groupptr));
  if (!perm) {
    PetscCall(PetscMalloc1(m, &perm));
    for (PetscInt r = 0; r < m; r++) perm[r] = r;
  }
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, m, perm, PETSC_COPY_VALUES, row));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, m, perm, PETSC_OWN_POINTER, col));
  PetscCall(PetscFree(groupptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}
