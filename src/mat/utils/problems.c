/*
   Generated test and benchmark problems (assembled MATAIJ, rows distributed by PETSC_DECIDE blocks).
*/
#include <petsccsrkutil.h>
#include <stdint.h>
#include <stdlib.h>

const char *const MatCSRKProblems[] = {"lap2d5", "lap3d7", "lap3d27", "elasticity3d", "random", "randrect", "powerlaw", "randnodes", "fem3d", "femelast3d", "MatCSRKProblem", "MAT_CSRK_PROBLEM_", NULL};

/* Stencil operator on an n^d grid: the stencil's neighbours (|offsets| <= 1 per dimension, restricted to 'shape') */
static PetscErrorCode CreateStencil(MPI_Comm comm, PetscInt n, PetscInt dim, PetscBool full, PetscInt bs, Mat *A)
{
  PetscInt    N = 1, rstart, rend, nloc;
  PetscScalar blk[9], coup[3][3] = {{2.0, 0.5, 0.5}, {0.5, 2.0, 0.5}, {0.5, 0.5, 2.0}};

  PetscFunctionBegin;
  for (PetscInt d = 0; d < dim; d++) N *= n;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N * bs, N * bs));
  PetscCall(MatSetType(*A, MATAIJ));
  if (bs > 1) {
    /* keep whole nodes on a process */
    PetscMPIInt size, rank;
    PetscCallMPI(MPI_Comm_size(comm, &size));
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    nloc = (N / size + (rank < N % size ? 1 : 0)) * bs;
    PetscCall(MatSetSizes(*A, nloc, nloc, N * bs, N * bs));
    PetscCall(MatSetBlockSize(*A, bs));
  }
  {
    const PetscInt w = full ? (dim == 3 ? 27 : 9) : 2 * dim + 1;
    PetscCall(MatSeqAIJSetPreallocation(*A, w * bs, NULL));
    PetscCall(MatMPIAIJSetPreallocation(*A, w * bs, NULL, w * bs, NULL));
  }
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt node = rstart / bs; node < rend / bs; node++) {
    PetscInt c[3] = {0, 0, 0}, t = node;
    for (PetscInt d = 0; d < dim; d++) {
      c[d] = t % n;
      t /= n;
    }
    for (PetscInt dz = (dim == 3 ? -1 : 0); dz <= (dim == 3 ? 1 : 0); dz++)
      for (PetscInt dy = -1; dy <= 1; dy++)
        for (PetscInt dx = -1; dx <= 1; dx++) {
          const PetscInt nz = (dx != 0) + (dy != 0) + (dz != 0);
          PetscInt       q[3] = {c[0] + dx, c[1] + dy, c[2] + dz}, col = 0;
          PetscScalar    v;
          if (!full && nz > 1) continue;
          if (q[0] < 0 || q[0] >= n || q[1] < 0 || q[1] >= n || (dim == 3 && (q[2] < 0 || q[2] >= n))) continue;
          for (PetscInt d = dim - 1; d >= 0; d--) col = col * n + q[d];
          v = nz ? -1.0 : (full ? (dim == 3 ? 26.0 : 8.0) : 2.0 * dim);
          if (bs == 1) PetscCall(MatSetValue(*A, node, col, v, INSERT_VALUES));
          else {
            /* Kronecker product with a 3x3 SPD coupling: an SPD block operator like 3D elasticity */
            for (PetscInt i = 0; i < bs; i++)
              for (PetscInt j = 0; j < bs; j++) blk[i * bs + j] = v * coup[i % 3][j % 3];
            PetscCall(MatSetValuesBlocked(*A, 1, &node, 1, &col, blk, INSERT_VALUES));
          }
        }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A random generator of this process, reproducible from the seed */
static PetscErrorCode CreateRankRandom(MPI_Comm comm, PetscInt seed, PetscRandom *rnd)
{
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, rnd));
  PetscCall(PetscRandomSetSeed(*rnd, (unsigned long)(seed * 7919 + rank)));
  PetscCall(PetscRandomSeed(*rnd));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Random sparse matrix: row lengths 0..2*avg (some rows empty), one dense row, a diagonal on square matrices; or, with
   alpha > 0, power-law row lengths avg * u^(-1/(alpha-1)) (at most n/8: a few rows of thousands of entries beside
   many short ones, as in web and social graphs) with uniformly random columns.
   The local rows are drawn first and the matrix preallocated exactly: inserting into an unpreallocated AIJ matrix
   reallocates it again and again, quadratic in the size. */
static PetscErrorCode CreateRandom(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt avg, PetscReal alpha, PetscInt seed, Mat *A)
{
  PetscRandom  rnd;
  PetscInt     rstart, rend, cstart, cend, *ptr, *cols, *dnz, *onz, nloc, total = 0;
  PetscScalar *vals;

  PetscFunctionBegin;
  PetscCall(CreateRankRandom(comm, seed, &rnd));
  {
    PetscLayout rl, cl;
    PetscCall(PetscLayoutCreateFromSizes(comm, PETSC_DECIDE, m, 1, &rl));
    PetscCall(PetscLayoutCreateFromSizes(comm, PETSC_DECIDE, n, 1, &cl));
    PetscCall(PetscLayoutGetRange(rl, &rstart, &rend));
    PetscCall(PetscLayoutGetRange(cl, &cstart, &cend));
    PetscCall(PetscLayoutDestroy(&rl));
    PetscCall(PetscLayoutDestroy(&cl));
  }
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, rend - rstart, cend - cstart, m, n));
  PetscCall(MatSetType(*A, MATAIJ));
  nloc = rend - rstart;
  /* row lengths, then the entries */
  PetscCall(PetscMalloc3(nloc + 1, &ptr, nloc, &dnz, nloc, &onz));
  ptr[0] = 0;
  for (PetscInt r = rstart; r < rend; r++) {
    PetscReal u;
    PetscInt  len;
    PetscCall(PetscRandomGetValueReal(rnd, &u));
    if (alpha > 0) {
      len = (PetscInt)PetscMin((PetscReal)PetscMax(n / 8, avg), avg * PetscPowReal(PetscMax(1.0 - u, 1e-12), -1.0 / (alpha - 1.0)));
    } else {
      len = (PetscInt)(u * 2 * avg);
      if (r % 17 == 5) len = 0; /* empty rows */
      if (r == m / 2) len = n;  /* a dense row */
    }
    ptr[r - rstart + 1] = ptr[r - rstart] + len + (m == n && len ? 1 : 0);
  }
  total = ptr[nloc];
  PetscCall(PetscMalloc2(PetscMax(total, 1), &cols, PetscMax(total, 1), &vals));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt *c = cols + ptr[r - rstart], len = ptr[r - rstart + 1] - ptr[r - rstart], q;
    PetscBool diag = (PetscBool)(m == n && len > 0);
    if (diag) len--;
    for (q = 0; q < len; q++) {
      PetscReal u;
      PetscCall(PetscRandomGetValueReal(rnd, &u));
      c[q] = len == n ? q : PetscMin(n - 1, (PetscInt)(u * n));
      PetscCall(PetscRandomGetValueReal(rnd, &u));
      vals[ptr[r - rstart] + q] = u - 0.5;
    }
    if (diag) {
      c[len]                      = r;
      vals[ptr[r - rstart] + len] = (PetscScalar)(2 * avg);
    }
    /* preallocation: distinct columns of the row, in and out of the diagonal block */
    len = ptr[r - rstart + 1] - ptr[r - rstart];
    {
      PetscInt *sc;
      PetscCall(PetscMalloc1(PetscMax(len, 1), &sc));
      PetscCall(PetscArraycpy(sc, c, len));
      PetscCall(PetscSortRemoveDupsInt(&len, sc));
      dnz[r - rstart] = onz[r - rstart] = 0;
      for (q = 0; q < len; q++) {
        if (sc[q] >= cstart && sc[q] < cend) dnz[r - rstart]++;
        else onz[r - rstart]++;
      }
      PetscCall(PetscFree(sc));
    }
  }
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
  for (PetscInt r = rstart; r < rend; r++) PetscCall(MatSetValues(*A, 1, &r, ptr[r - rstart + 1] - ptr[r - rstart], cols + ptr[r - rstart], vals + ptr[r - rstart], ADD_VALUES));
  PetscCall(PetscFree2(cols, vals));
  PetscCall(PetscFree3(ptr, dnz, onz));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Random square matrix whose rows come in runs of 1 to 7 with one column list (inodes of every size, and runs longer
   than the 5 rows of a node): a run has up to 2*avg random columns plus the diagonal entries of all its rows, each row
   its own values with a dominant diagonal. Runs end at the process's last row. */
static PetscErrorCode CreateRandomNodes(MPI_Comm comm, PetscInt n, PetscInt avg, PetscInt seed, Mat *A)
{
  PetscRandom  rnd;
  PetscInt     rstart, rend, *cols, maxlen = 2 * avg + 7;
  PetscScalar *vals;

  PetscFunctionBegin;
  PetscCall(CreateRankRandom(comm, seed, &rnd));
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, PetscMin(maxlen, n), NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, PetscMin(maxlen, n), NULL, PetscMin(maxlen, n), NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  PetscCall(PetscMalloc2(maxlen, &cols, maxlen, &vals));
  for (PetscInt r0 = rstart, s; r0 < rend; r0 += s) {
    PetscReal u;
    PetscInt  len;
    PetscCall(PetscRandomGetValueReal(rnd, &u));
    s = PetscMin(rend - r0, 1 + (PetscInt)(u * 7));
    PetscCall(PetscRandomGetValueReal(rnd, &u));
    len = (PetscInt)(u * 2 * avg);
    for (PetscInt q = 0; q < len; q++) {
      PetscCall(PetscRandomGetValueReal(rnd, &u));
      cols[q] = PetscMin(n - 1, (PetscInt)(u * n));
    }
    for (PetscInt l = 0; l < s; l++) cols[len + l] = r0 + l;
    for (PetscInt r = r0; r < r0 + s; r++) {
      for (PetscInt q = 0; q < len + s; q++) {
        PetscCall(PetscRandomGetValueReal(rnd, &u));
        vals[q] = cols[q] == r ? (PetscScalar)(4 * avg + 8) : (PetscScalar)(u - 0.5);
      }
      PetscCall(MatSetValues(*A, 1, &r, len + s, cols, vals, ADD_VALUES));
    }
  }
  PetscCall(PetscFree2(cols, vals));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A reproducible uniform number in [0, 1) from (seed, i, stream): every process draws the same value for a vertex or an
   element without generating the others (splitmix64 of the three). */
static PetscReal HashUniform(PetscInt seed, PetscInt i, PetscInt stream)
{
  uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + (uint64_t)i * 0xBF58476D1CE4E5B9ULL + (uint64_t)stream * 0x94D049BB133111EBULL + 0x632BE59BD9B4E019ULL;

  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z = z ^ (z >> 31);
  return (PetscReal)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* Interleaves the low 21 bits of x, y, z (a Morton key) */
static uint64_t MortonSpread(uint64_t v)
{
  v &= 0x1FFFFF;
  v = (v | v << 32) & 0x1F00000000FFFFULL;
  v = (v | v << 16) & 0x1F0000FF0000FFULL;
  v = (v | v << 8) & 0x100F00F00F00F00FULL;
  v = (v | v << 4) & 0x10C30C30C30C30C3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

typedef struct {
  uint64_t key;
  PetscInt v;
} MeshKey;

static int MeshKeyCompare(const void *a, const void *b)
{
  const MeshKey *p = (const MeshKey *)a, *q = (const MeshKey *)b;

  if (p->key != q->key) return p->key < q->key ? -1 : 1;
  return p->v < q->v ? -1 : (p->v > q->v ? 1 : 0);
}

/* The 14 edges of a vertex in the Kuhn mesh (every cube cut into 6 tetrahedra around its (0,0,0)-(1,1,1) diagonal) */
static const PetscInt KuhnEdges[14][3] = {
  {1,  0,  0 }, {-1, 0,  0 }, {0,  1,  0 }, {0,  -1, 0 }, {0, 0, 1 }, {0, 0, -1}, {1, 1, 0}, {-1, -1, 0}, {1, 0, 1}, {-1, 0, -1}, {0, 1, 1}, {0, -1, -1}, {1, 1, 1}, {-1, -1, -1}
};

/* Unstructured-like finite elements on the unit cube: n^3 vertices, the interior ones moved by up to 0.3 h in each
   coordinate, every cube cut into 6 tetrahedra (Kuhn), the vertices numbered by the Morton key of their moved
   coordinates, as a mesh generator would (locality, but every row its own column offsets). P1 elements:
   bs 1: -div(k grad u) + u, k = 10^U(-1.5,1.5) per element; bs 3: linear elasticity (Poisson ratio 0.3, Young's
   modulus 10^U(-1,1) per element) + u; the mass terms keep both SPD without boundary conditions. Element matrices
   come from the moved geometry, so no two rows have the same values. Each process numbers all vertices (O(n^3)
   integers) and adds the elements that touch its own vertices into its own rows only. */
static PetscErrorCode CreateFEM(MPI_Comm comm, PetscInt n, PetscInt bs, PetscBool multi, PetscInt seed, Mat *A)
{
  const PetscInt nv = n * n * n;
  const PetscReal h = n > 1 ? 1.0 / (n - 1) : 1.0;
  PetscInt       *newid, vstart, vend, *dnz, *onz;
  PetscReal      *xyz;
  MeshKey        *keys;
  PetscMPIInt     size, rank;

  PetscFunctionBegin;
  PetscCheck(n <= 1290, comm, PETSC_ERR_ARG_OUTOFRANGE, "fem3d and femelast3d take n <= 1290, not %" PetscInt_FMT, n);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  /* the moved vertices and their Morton numbering */
  PetscCall(PetscMalloc3(3 * nv, &xyz, nv, &keys, nv, &newid));
  for (PetscInt v = 0; v < nv; v++) {
    const PetscInt c[3] = {v % n, (v / n) % n, v / (n * n)};
    uint64_t       q[3];
    for (PetscInt d = 0; d < 3; d++) {
      PetscReal x = c[d] * h;
      if (c[0] > 0 && c[0] < n - 1 && c[1] > 0 && c[1] < n - 1 && c[2] > 0 && c[2] < n - 1) x += 0.6 * h * (HashUniform(seed, v, d) - 0.5);
      xyz[3 * v + d] = x;
      q[d]           = (uint64_t)PetscMin(PetscMax(x, 0.0) * 2097151.0, 2097151.0);
    }
    keys[v].key = MortonSpread(q[0]) | MortonSpread(q[1]) << 1 | MortonSpread(q[2]) << 2;
    keys[v].v   = v;
  }
  qsort(keys, (size_t)nv, sizeof(MeshKey), MeshKeyCompare);
  for (PetscInt i = 0; i < nv; i++) newid[keys[i].v] = i;
  /* whole vertices on a process, contiguous in the new numbering */
  vstart = (nv / size) * rank + PetscMin(rank, nv % size);
  vend   = vstart + nv / size + (rank < nv % size ? 1 : 0);
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, (vend - vstart) * bs, (vend - vstart) * bs, nv * bs, nv * bs));
  PetscCall(MatSetType(*A, MATAIJ));
  if (bs > 1) PetscCall(MatSetBlockSize(*A, bs));
  /* exact preallocation from the 14 edges of each own vertex */
  PetscCall(PetscMalloc2((vend - vstart) * bs, &dnz, (vend - vstart) * bs, &onz));
  for (PetscInt i = vstart; i < vend; i++) {
    const PetscInt v = keys[i].v, c[3] = {v % n, (v / n) % n, v / (n * n)};
    PetscInt       in = 1, out = 0;
    for (PetscInt e = 0; e < 14; e++) {
      PetscInt q[3] = {c[0] + KuhnEdges[e][0], c[1] + KuhnEdges[e][1], c[2] + KuhnEdges[e][2]}, w;
      if (q[0] < 0 || q[0] >= n || q[1] < 0 || q[1] >= n || q[2] < 0 || q[2] >= n) continue;
      w = newid[q[0] + n * (q[1] + n * q[2])];
      if (w >= vstart && w < vend) in++;
      else out++;
    }
    for (PetscInt l = 0; l < bs; l++) {
      dnz[(i - vstart) * bs + l] = in * bs;
      onz[(i - vstart) * bs + l] = out * bs;
    }
  }
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(MatSetOption(*A, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  /* the elements of every cube with a vertex of this process; rows of other processes are given as -1 (ignored) */
  for (PetscInt cz = 0; cz < n - 1; cz++)
    for (PetscInt cy = 0; cy < n - 1; cy++)
      for (PetscInt cx = 0; cx < n - 1; cx++) {
        static const PetscInt perms[6][3] = {
          {0, 1, 2},
          {0, 2, 1},
          {1, 0, 2},
          {1, 2, 0},
          {2, 0, 1},
          {2, 1, 0}
        };
        const PetscInt cell = cx + (n - 1) * (cy + (n - 1) * cz);
        PetscInt       corner[8], own = 0;
        for (PetscInt k = 0; k < 8; k++) {
          corner[k] = newid[(cx + (k & 1)) + n * ((cy + (k >> 1 & 1)) + n * (cz + (k >> 2)))];
          if (corner[k] >= vstart && corner[k] < vend) own = 1;
        }
        if (!own) continue;
        for (PetscInt t = 0; t < 6; t++) {
          const PetscInt id = 6 * cell + t;
          PetscInt       vert[4], old[4], rows[24], cols[24], bit = 0;
          PetscReal      J[3][3], Ji[3][3], det, vol, g[4][3], coef;
          PetscScalar    K[576];
          /* the path 000 -> e_a -> e_a + e_b -> 111 along the cube's edges */
          for (PetscInt k = 0; k < 4; k++) {
            if (k > 0) bit |= 1 << perms[t][k - 1];
            vert[k] = corner[bit];
            old[k]  = keys[vert[k]].v;
          }
          for (PetscInt k = 0; k < 3; k++)
            for (PetscInt d = 0; d < 3; d++) J[d][k] = xyz[3 * old[k + 1] + d] - xyz[3 * old[0] + d];
          det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) + J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
          PetscCheck(det != 0.0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Degenerate element %" PetscInt_FMT, id);
          /* rows of J^-1 are the gradients of the barycentric coordinates 1..3; |det| keeps B^T D B's scale positive */
          Ji[0][0] = (J[1][1] * J[2][2] - J[1][2] * J[2][1]) / det;
          Ji[0][1] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) / det;
          Ji[0][2] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) / det;
          Ji[1][0] = (J[1][2] * J[2][0] - J[1][0] * J[2][2]) / det;
          Ji[1][1] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) / det;
          Ji[1][2] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) / det;
          Ji[2][0] = (J[1][0] * J[2][1] - J[1][1] * J[2][0]) / det;
          Ji[2][1] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) / det;
          Ji[2][2] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) / det;
          vol      = PetscAbsReal(det) / 6.0;
          for (PetscInt d = 0; d < 3; d++) {
            g[0][d] = -(Ji[0][d] + Ji[1][d] + Ji[2][d]);
            for (PetscInt k = 1; k < 4; k++) g[k][d] = Ji[k - 1][d];
          }
          if (bs == 1 || multi) {
            coef = PetscPowReal(10.0, 3.0 * HashUniform(seed, id, 3) - 1.5);
            for (PetscInt i = 0; i < 4; i++)
              for (PetscInt j = 0; j < 4; j++) {
                const PetscReal kij = coef * vol * (g[i][0] * g[j][0] + g[i][1] * g[j][1] + g[i][2] * g[j][2]) + vol / 20.0 * (i == j ? 2.0 : 1.0);
                /* multi: bs coupled fields, the scalar operator times C = I + v v^T / 4, v_a = 1 + a / 10 (SPD) */
                for (PetscInt a = 0; a < bs; a++)
                  for (PetscInt b = 0; b < bs; b++) K[(bs * i + a) * 4 * bs + bs * j + b] = kij * ((a == b ? 1.0 : 0.0) + 0.25 * (1.0 + 0.1 * a) * (1.0 + 0.1 * b));
              }
          } else {
            const PetscReal E = PetscPowReal(10.0, 2.0 * HashUniform(seed, id, 3) - 1.0), nu = 0.3;
            const PetscReal lam = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
            /* K_ij = vol (lam g_i g_j^T + mu g_j g_i^T + mu (g_i . g_j) I), the P1 block of B_i^T D B_j */
            for (PetscInt i = 0; i < 4; i++)
              for (PetscInt j = 0; j < 4; j++) {
                const PetscReal dot = g[i][0] * g[j][0] + g[i][1] * g[j][1] + g[i][2] * g[j][2];
                for (PetscInt a = 0; a < 3; a++)
                  for (PetscInt b = 0; b < 3; b++) K[(3 * i + a) * 12 + 3 * j + b] = vol * (lam * g[i][a] * g[j][b] + mu * g[j][a] * g[i][b] + (a == b ? mu * dot + (i == j ? 2.0 : 1.0) / 20.0 : 0.0));
              }
          }
          for (PetscInt k = 0; k < 4; k++)
            for (PetscInt l = 0; l < bs; l++) {
              cols[k * bs + l] = vert[k] * bs + l;
              rows[k * bs + l] = vert[k] >= vstart && vert[k] < vend ? vert[k] * bs + l : -1;
            }
          PetscCall(MatSetValues(*A, 4 * bs, rows, 4 * bs, cols, K, ADD_VALUES));
        }
      }
  PetscCall(PetscFree3(xyz, keys, newid));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCSRKCreateProblem - creates an assembled `MATAIJ` test or benchmark matrix

  Collective

  Input Parameters:
+ comm - the communicator
. name - "lap2d5" (n^2 grid, 5-point), "lap3d7" (n^3, 7-point), "lap3d27" (n^3, 27-point), "elasticity3d" (n^3 nodes,
         27-point, block size 3), "random" (n x n random sparse, with empty rows and a dense row), "randrect" (n x (n/2+3) random),
         "powerlaw" (n x n, power-law row lengths: at least 3 entries, exponent 2.5, up to n/8, random columns),
         "randnodes" (n x n random, rows in runs of 1 to 7 with one column list: inodes of every size),
         "fem3d" (n^3 vertices, P1 tetrahedra on a randomly moved grid numbered by Morton key, -div(k grad u) + u with k
         over three decades: mesh-like rows, each its own columns and values), "femelast3d" (the same mesh, linear
         elasticity with block size 3), "fem3d-bs<k>" (the same mesh, k = 2-6 coupled fields a vertex: fem3d's operator
         times a dense SPD k x k coupling, block size k)
. n    - grid points per dimension, or rows for the random matrices
- seed - seed of the random matrices and of the meshes' moves and coefficients

  Output Parameter:
. A - the matrix

  Level: developer

.seealso: `MatCSRKReadMatrixMarket()`
@*/
PetscErrorCode MatCSRKCreateProblem(MPI_Comm comm, const char name[], PetscInt n, PetscInt seed, Mat *A)
{
  PetscBool flg;

  PetscFunctionBegin;
  PetscCheck(n > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Problem size must be positive, not %" PetscInt_FMT, n);
  PetscCall(PetscStrcmp(name, "lap2d5", &flg));
  if (flg) PetscCall(CreateStencil(comm, n, 2, PETSC_FALSE, 1, A));
  if (!flg) {
    PetscCall(PetscStrcmp(name, "lap3d7", &flg));
    if (flg) PetscCall(CreateStencil(comm, n, 3, PETSC_FALSE, 1, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "lap3d27", &flg));
    if (flg) PetscCall(CreateStencil(comm, n, 3, PETSC_TRUE, 1, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "elasticity3d", &flg));
    if (flg) PetscCall(CreateStencil(comm, n, 3, PETSC_TRUE, 3, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "random", &flg));
    if (flg) PetscCall(CreateRandom(comm, n, n, 6, 0, seed, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "randrect", &flg));
    if (flg) PetscCall(CreateRandom(comm, n, n / 2 + 3, 4, 0, seed, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "powerlaw", &flg));
    if (flg) PetscCall(CreateRandom(comm, n, n, 3, 2.5, seed, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "randnodes", &flg));
    if (flg) PetscCall(CreateRandomNodes(comm, n, 6, seed, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "fem3d", &flg));
    if (flg) PetscCall(CreateFEM(comm, n, 1, PETSC_FALSE, seed, A));
  }
  if (!flg) {
    PetscCall(PetscStrcmp(name, "femelast3d", &flg));
    if (flg) PetscCall(CreateFEM(comm, n, 3, PETSC_FALSE, seed, A));
  }
  if (!flg) {
    PetscCall(PetscStrncmp(name, "fem3d-bs", 8, &flg));
    if (flg) {
      const PetscInt bs = (PetscInt)strtol(name + 8, NULL, 10);

      PetscCheck(bs >= 2 && bs <= 6, comm, PETSC_ERR_ARG_OUTOFRANGE, "fem3d-bs<k> takes a block size k of 2 to 6, not %s", name + 8);
      PetscCall(CreateFEM(comm, n, bs, PETSC_TRUE, seed, A));
    }
  }
  PetscCheck(flg, comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown problem %s: use lap2d5, lap3d7, lap3d27, elasticity3d, random, randrect, powerlaw, randnodes, fem3d, femelast3d or fem3d-bs<k>", name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKPermuteRandom - applies a random symmetric permutation P A P^T (reproducible from the seed), as a user whose
  unknowns are numbered badly would have it

  Collective

  Input Parameters:
+ A    - a square matrix
- seed - the seed

  Output Parameter:
. B - the permuted matrix, of the type of A

  Level: developer

.seealso: `MatCSRKCreateProblem()`, `MatCSRKPermuteRandomBlocks()`
@*/
PetscErrorCode MatCSRKPermuteRandom(Mat A, PetscInt seed, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKPermuteRandomBlocks(A, 1, seed, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRKPermuteRandomBlocks - applies a random symmetric permutation P A P^T that moves whole runs of bs consecutive
  rows (reproducible from the seed): the unknowns of a vertex stay together, as in a mesh numbered badly vertex by
  vertex, so the row nodes of a block matrix survive while their neighbours are scattered

  Collective

  Input Parameters:
+ A    - a square matrix whose size and local sizes are multiples of bs
. bs   - rows moved together (1: `MatCSRKPermuteRandom()`, the same permutation for the same seed)
- seed - the seed

  Output Parameter:
. B - the permuted matrix, of the type of A

  Level: developer

.seealso: `MatCSRKCreateProblem()`, `MatCSRKPermuteRandom()`
@*/
PetscErrorCode MatCSRKPermuteRandomBlocks(Mat A, PetscInt bs, PetscInt seed, Mat *B)
{
  PetscInt    N, nb, rstart, rend, *perm, *all;
  PetscRandom rnd;
  IS          is;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCheck(bs >= 1 && N % bs == 0 && rstart % bs == 0 && rend % bs == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "The size %" PetscInt_FMT " and the local rows [%" PetscInt_FMT ", %" PetscInt_FMT ") must be multiples of the block %" PetscInt_FMT, N, rstart, rend, bs);
  nb = N / bs;
  PetscCall(PetscMalloc1(nb, &all));
  /* every process draws the same permutation of the blocks */
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, (unsigned long)seed));
  PetscCall(PetscRandomSeed(rnd));
  for (PetscInt i = 0; i < nb; i++) all[i] = i;
  for (PetscInt i = nb - 1; i > 0; i--) {
    PetscReal u;
    PetscInt  j, t;
    PetscCall(PetscRandomGetValueReal(rnd, &u));
    j      = PetscMin(i, (PetscInt)(u * (i + 1)));
    t      = all[i];
    all[i] = all[j];
    all[j] = t;
  }
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscMalloc1(rend - rstart, &perm));
  for (PetscInt r = rstart; r < rend; r++) perm[r - rstart] = all[r / bs] * bs + r % bs;
  PetscCall(PetscFree(all));
  PetscCall(ISCreateGeneral(PetscObjectComm((PetscObject)A), rend - rstart, perm, PETSC_OWN_POINTER, &is));
  PetscCall(MatPermute(A, is, is, B));
  PetscCall(ISDestroy(&is));
  PetscFunctionReturn(PETSC_SUCCESS);
}
