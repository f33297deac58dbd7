/*
 * A libagx-preload.so built for one MPI library, loaded into a program of another (an
 * MPICH program preloaded with the Open MPI build, say), would hand the program's handles
 * to a library that reads them differently: a segmentation fault, before. At load time the
 * preload looks at which library defines the program's MPI_Init; when it is not the kind
 * this build links (Open MPI's libmpi.so, MPICH's libmpich.so), it says so once (on the
 * launch's rank 0, by the launcher's environment) and steps aside: every collective and
 * file entry is disabled (agx_preload_enabled), so the C entries pass their arguments to
 * PMPI_, and the Fortran entries call the program's own Fortran function
 * (agx_preload_next). That alone is not enough: this library's own MPI library is loaded
 * with it and may come first in the lookup order of the program's other libraries (MPICH's
 * Fortran library then called Open MPI's PMPI_Comm_rank and crashed), so before the
 * program runs at all the preload takes itself out of LD_PRELOAD and starts the program
 * again (execv of /proc/self/exe with its own arguments; MPI_Init has not run, the
 * launcher's environment is kept). The in-process stepping aside is what remains if that
 * fails.
 */
#define _GNU_SOURCE /* RTLD_NEXT, dladdr */
#include "preload.h"

#include <dlfcn.h>
#include <link.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(OPEN_MPI)
#define BUILT_FOR "Open MPI", "libmpi.so"
#elif defined(MPICH)
#define BUILT_FOR "MPICH", "libmpich.so"
#else
#define BUILT_FOR "this MPI", ""
#endif

static int foreign;

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* LD_PRELOAD without this library, then the program again from its start. */
static void restart_without_agx(void)
{
    static char buf[1 << 16];
    char *argv[1024], *pre = getenv("LD_PRELOAD"), kept[4096] = "";
    if (getenv("AGX_PRELOAD_RESTARTED") || !pre)
        return;
    for (char *save, *s = strtok_r(strdup(pre), ": ", &save); s; s = strtok_r(NULL, ": ", &save))
        if (!strstr(s, "libagx-preload") && strlen(kept) + strlen(s) + 2 < sizeof kept)
            strcat(strcat(kept, *kept ? ":" : ""), s);
    int fd = open("/proc/self/cmdline", O_RDONLY), n = 0, argc = 0;
    ssize_t got;
    while (fd >= 0 && (got = read(fd, buf + n, sizeof buf - 1 - (size_t)n)) > 0)
        n += (int)got;
    if (fd >= 0)
        close(fd);
    for (int i = 0; i < n && argc < 1023; i += (int)strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    argv[argc] = NULL;
    if (argc == 0)
        return;
    setenv("AGX_PRELOAD_RESTARTED", "1", 1);
    if (*kept)
        setenv("LD_PRELOAD", kept, 1);
    else
        unsetenv("LD_PRELOAD");
    execv("/proc/self/exe", argv); /* returns only when it failed: step aside in process */
}

static const char *built[2] = {BUILT_FOR};

/* The loaded object at path defines MPI_Init itself (not through its dependencies). */
static int defines_mpi(const char *path)
{
    Dl_info di;
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD), *f = h ? dlsym(h, "MPI_Init") : NULL;
    int own = f && dladdr(f, &di) && di.dli_fname && !strcmp(di.dli_fname, path);
    if (h)
        dlclose(h);
    return own;
}

/* dl_iterate_phdr: an MPI library other than the one this build links (not agx's). */
static int other_mpi(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *p = info->dlpi_name, *b = p ? base(p) : "";
    if (!*b || strstr(b, "agx") || !strncmp(b, built[1], strlen(built[1])) || !defines_mpi(p))
        return 0;
    snprintf(data, 512, "%s", p);
    return 1;
}

__attribute__((constructor)) static void foreign_check(void)
{
    char lib[512] = "";
    if (!*built[1] || !dl_iterate_phdr(other_mpi, lib))
        return;
    foreign = 1;
    const char *r = getenv("OMPI_COMM_WORLD_RANK") ? getenv("OMPI_COMM_WORLD_RANK")
                    : getenv("PMI_RANK")            ? getenv("PMI_RANK")
                                                    : getenv("PMIX_RANK");
    if (!r || !strcmp(r, "0"))
        fprintf(stderr, "agx-preload: this libagx-preload.so was built for %s (%s), but the program's MPI library "
                "is %s: use a libagx-preload.so built against that library (cmake -DMPI_C_COMPILER=its mpicc); "
                "this run uses the library's own calls, without agx\n", built[0], built[1], lib);
    fflush(stderr);
    restart_without_agx();
}

int agx_preload_foreign(void) { return foreign; }

void *agx_preload_next(const char *name) { return dlsym(RTLD_NEXT, name); }
