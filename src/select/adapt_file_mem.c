/*
 * What a file's on-line choice (adapt_file.c) leaves for later files: the run's memory of
 * the classes this process timed or decided (a class decided in one file starts decided
 * in the later files of the run on as many ranks; a window a file closed before it ended
 * goes on in the next), and what a handle's decided calls carry to the next file that
 * takes the same kept communicator (src/io/file_comm.c).
 */
#include "adapt_file.h"

#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int p, key;
    agx_flearn_class c;
} mem[64]; /* the classes this process timed or decided, as their files left them (key: the
            * class, a read's + AGX_FLEARN_READS) */
static int nmem;

agx_flearn_class agx_flearn_recall(int p, int key)
{
    agx_flearn_class c = {0};
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nmem; i++)
        if (mem[i].p == p && mem[i].key == key)
            c = mem[i].c;
    pthread_mutex_unlock(&mu);
    return c;
}

void agx_flearn_remember(const agx_flearn *L, const agx_flearn_class *c)
{
    int key = c->cls + L->reads * AGX_FLEARN_READS;
    pthread_mutex_lock(&mu);
    int i = 0;
    while (i < nmem && !(mem[i].p == L->p && mem[i].key == key))
        i++;
    if (i < 64) {
        mem[i].p = L->p, mem[i].key = key, mem[i].c = *c;
        nmem += i == nmem;
    }
    pthread_mutex_unlock(&mu);
}

void agx_flearn_carry_out(const agx_flearn *L, agx_flearn_carry *c)
{
    c->last = L->last, c->streak = L->streak, c->how = L->settled_how, c->n = 0;
    for (int i = 0; i < L->nclass && c->n < AGX_FLEARN_CARRIED; i++)
        if (L->c[i].decided)
            c->c[c->n++] = L->c[i];
}

/* The decided classes become the file's (no reduction when its calls meet them: every
 * rank of the file has the same, agreed where they were decided); the count one short of
 * settled at most: the new file's first call agrees its class, and settles the handle
 * only where that class is decided with the same winner (a file of calls of another class
 * learns them, as a handle's first file does). */
void agx_flearn_carry_in(agx_flearn *L, const agx_flearn_carry *c, MPI_Comm comm, const char *name)
{
    if (!L->mode) /* the same on every rank of the file: its files' agreed calls */
        return;
    for (int i = 0; i < c->n && L->nclass < AGX_FLEARN_CLASSES; i++)
        L->c[L->nclass++] = c->c[i];
    if (c->streak > 0)
        L->last = c->last, L->settled_how = c->how,
        L->streak = c->streak < AGX_FLEARN_SETTLE - 1 ? c->streak : AGX_FLEARN_SETTLE - 1;
    int rank = 1;
    if (c->n && agx_env_flag("AGX_VERBOSE") && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && !rank)
        fprintf(stderr, "agx: %s (rank 0): collective %s: %d decided class%s from the last file on these ranks "
                "(AGX_ADAPT)\n", name ? name : "a file", L->reads ? "reads" : "writes", c->n, c->n > 1 ? "es" : "");
}
