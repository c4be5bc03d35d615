/*
   The machine file: what was measured once about this CPU, read when the plugin is registered, so that the variants
   that only compete with AIJ's kernel (they read as many bytes) are chosen from stored measurements, never from a
   stopwatch in the user's run (docs/design.md, "Set-up").

   `make tune` (tutorials/tune.c) writes it beside the library: the speed of each rival against AIJ's kernel in a
   solve's conditions (one rank per core, every core busy, vectors beyond the caches), for blocks where AIJ runs its
   inode kernel and for blocks where it does not. Lines "<rival>.<inodes|plain> <AIJ time / rival time>"; "cpu <model>"
   ties the file to the processor it was measured on (a file from another processor is ignored). Without a file, the
   rivals are not used: AIJ's kernel unless a variant reads fewer bytes by rule.
*/
#define _GNU_SOURCE /* dladdr() */
#include <dlfcn.h>
#include "csrkimpl.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CSRK_MACHINE_KEYS 16

static struct {
  PetscBool loaded;
  PetscInt  n;
  char      key[CSRK_MACHINE_KEYS][48];
  PetscReal gain[CSRK_MACHINE_KEYS];
} CSRKMachine;

/* the processor's model name (/proc/cpuinfo), or "" */
static void CSRKCPUModel(char *model, size_t len)
{
  FILE *f = fopen("/proc/cpuinfo", "r");
  char  line[256];

  model[0] = 0;
  if (!f) return;
  while (fgets(line, sizeof(line), f))
    if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
      const char *v = strchr(line, ':') + 1;
      while (*v == ' ' || *v == '\t') v++;
      PetscCallAbort(PETSC_COMM_SELF, PetscStrncpy(model, v, len));
      model[strcspn(model, "\n")] = 0;
      break;
    }
  fclose(f);
}

/*@C
  MatCSRKWriteMachineFile - writes a machine file: comment lines, the processor's model (a file is read only on the
  processor it was measured on) and the measurements

  Collective

  Input Parameters:
+ comm    - the communicator whose first rank writes
. file    - the file
. comment - text written as comment lines (lines separated by newlines), or `NULL`
. n       - the number of measurements
- lines   - the measurements, "<rival>.<plain|inodes> <AIJ time / rival time>" or "<entry>.<plain|inodes>.cost <set-up in
            AIJ products>"

  Level: developer

  Note:
  `make tune` (tutorials/tune.c) writes the file the plugin reads by default, csrk-machine.txt beside the library;
  `-mat_csrk_machine_file` names another, read once when the plugin is registered.

.seealso: `MATCSRK`, `MatCSRKRegister()`
@*/
PetscErrorCode MatCSRKWriteMachineFile(MPI_Comm comm, const char file[], const char comment[], PetscInt n, const char *const lines[])
{
  PetscMPIInt rank;
  char        model[256];
  FILE       *f;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    f = fopen(file, "w");
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot write the machine file %s", file);
    for (const char *c = comment; c && *c;) {
      const size_t len = strcspn(c, "\n");
      fprintf(f, "# %.*s\n", (int)len, c);
      c += len + (c[len] ? 1 : 0);
    }
    CSRKCPUModel(model, sizeof(model));
    fprintf(f, "cpu %s\n", model);
    for (PetscInt i = 0; i < n; i++) fprintf(f, "%s\n", lines[i]);
    PetscCheck(!fclose(f), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write the machine file %s", file);
  }
  PetscCallMPI(MPI_Barrier(comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the default file: csrk-machine.txt in the folder of this library */
static PetscErrorCode CSRKMachineDefaultFile(char *file, size_t len)
{
  Dl_info info;

  PetscFunctionBegin;
  file[0] = 0;
  if (dladdr((void *)MatCSRKMachineLoad, &info) && info.dli_fname && strrchr(info.dli_fname, '/')) {
    PetscCall(PetscStrncpy(file, info.dli_fname, len));
    strrchr(file, '/')[1] = 0;
  }
  PetscCall(PetscStrlcat(file, "csrk-machine.txt", len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatCSRKMachineLoad - reads the machine file once: -mat_csrk_machine_file <file> (none: no file), else the
  environment's CSRK_MACHINE_FILE, else csrk-machine.txt beside the library; -info says which file and what it holds
*/
PetscErrorCode MatCSRKMachineLoad(void)
{
  char      file[PETSC_MAX_PATH_LEN], model[256], line[256], fmodel[256] = "";
  PetscBool set, none;
  FILE     *f;

  PetscFunctionBegin;
  if (CSRKMachine.loaded) PetscFunctionReturn(PETSC_SUCCESS);
  CSRKMachine.loaded = PETSC_TRUE;
  CSRKMachine.n      = 0;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_csrk_machine_file", file, sizeof(file), &set));
  if (!set && getenv("CSRK_MACHINE_FILE")) PetscCall(PetscStrncpy(file, getenv("CSRK_MACHINE_FILE"), sizeof(file)));
  else if (!set) PetscCall(CSRKMachineDefaultFile(file, sizeof(file)));
  PetscCall(PetscStrcmp(file, "none", &none));
  if (none || !(f = fopen(file, "r"))) {
    PetscCall(PetscInfo(NULL, "CSR-k machine file %s: %s; the rivals of AIJ's kernel are not used (make tune measures them)\n", file, none ? "none asked for" : "not found"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  while (fgets(line, sizeof(line), f)) {
    char   key[48];
    double g;

    if (line[0] == '#') continue;
    if (!strncmp(line, "cpu ", 4)) {
      PetscCall(PetscStrncpy(fmodel, line + 4, sizeof(fmodel)));
      fmodel[strcspn(fmodel, "\n")] = 0;
    } else if (sscanf(line, "%47s %lf", key, &g) == 2 && CSRKMachine.n < CSRK_MACHINE_KEYS) {
      PetscCall(PetscStrncpy(CSRKMachine.key[CSRKMachine.n], key, sizeof(CSRKMachine.key[0])));
      CSRKMachine.gain[CSRKMachine.n++] = (PetscReal)g;
    }
  }
  fclose(f);
  CSRKCPUModel(model, sizeof(model));
  if (strcmp(model, fmodel)) {
    PetscCall(PetscInfo(NULL, "CSR-k machine file %s was measured on \"%s\", not this \"%s\": ignored\n", file, fmodel, model));
    CSRKMachine.n = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt i = 0; i < CSRKMachine.n; i++) PetscCall(PetscInfo(NULL, "CSR-k machine file %s: %s %g\n", file, CSRKMachine.key[i], (double)CSRKMachine.gain[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKMachineL2Rows - the entries of x that fill a core's L2 cache (the operating system's figure; 1 MiB where it
   gives none): the auto ordering's measure of what stays in the cache */
PetscInt MatCSRKMachineL2Rows(void)
{
  long bytes = -1;

#if defined(_SC_LEVEL2_CACHE_SIZE)
  bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  if (bytes <= 0) bytes = 1L << 20;
  return (PetscInt)(bytes / (long)sizeof(PetscScalar));
}

/*
  MatCSRKMachineGain - how much faster than AIJ's kernel the rival measured on this machine, on blocks where AIJ runs
  its inode kernel (inodes) or not (what "": its set-up's cost in AIJ products, what ".cost"); 0: not measured. rival
  NULL: 1 where a machine file was read, else 0.
*/
PetscReal MatCSRKMachineGain(const char *rival, PetscBool inodes, const char *what)
{
  char key[48];

  if (!rival) return CSRKMachine.n ? 1 : 0;
  if (PetscSNPrintf(key, sizeof(key), "%s.%s%s", rival, inodes ? "inodes" : "plain", what)) return 0;
  for (PetscInt i = 0; i < CSRKMachine.n; i++)
    if (!strcmp(key, CSRKMachine.key[i])) return CSRKMachine.gain[i];
  return 0;
}
