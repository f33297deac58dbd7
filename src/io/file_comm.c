/*
 * The engine's communicator of a file (file_mpi.c): a duplicate of open's communicator,
 * kept at close for the next file opened on a congruent one (the same ranks in the same
 * order). PnetCDF duplicates the program's communicator at every open, so each of its
 * files comes on a new communicator; a file that takes a kept duplicate pays no
 * MPI_Comm_dup (Open MPI 4.1, 16 ranks on 2 cores: 0.5 ms) and finds the engine's context
 * on it set up (node map, scratch, its kernels' choices).
 *
 * A kept duplicate serves one open file at a time. Which one a file takes rides on open's
 * agreement (agx_file_agree_hints, on open's communicator): each rank offers the kept
 * duplicate congruent with it that no open file of its uses (claimed at once, so that a
 * second thread's open cannot offer it too), and the file takes it only where every rank
 * offered the same; else every rank duplicates anew. A kept duplicate's id is agreed when
 * it is made (src/patterns/kept.h: the largest of the ranks' reservations with its rank
 * 0's; each rank reserves a new number at every open), so that two made at once by two
 * threads differ and one id names one communicator on every rank of it. Up to KEPT per
 * process; the rest are freed at close; the kept ones at MPI_Finalize. A kept duplicate
 * also keeps what its last file's decided calls left (AGX_ADAPT: agx_flearn_carry), so
 * that a program writing a file per step settles once, not in every file: every rank of
 * it made the same agreed calls on it.
 */
#include "twophase.h"
#include "kept.h"

#include <pthread.h>
#include <string.h>

#define KEPT 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    MPI_Comm comm;
    long long id;
    int busy;
    agx_flearn_carry carry[2]; /* what its last file's writes and reads left (AGX_ADAPT) */
} kept[KEPT];
static int nkept;
static long long next_id;

static void free_kept(void)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nkept; i++)
        PMPI_Comm_free(&kept[i].comm);
    nkept = 0, next_id = 0;
    pthread_mutex_unlock(&mu);
}

void agx_file_comm_offer(MPI_Comm comm, long long v[AGX_FILE_COMM_V], int *slot)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    *slot = -1;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nkept && *slot < 0; i++) {
        int same = MPI_UNEQUAL;
        if (!kept[i].busy && PMPI_Comm_compare(comm, kept[i].comm, &same) == MPI_SUCCESS && same == MPI_CONGRUENT)
            *slot = i, kept[i].busy = 1;
    }
    long long id = *slot >= 0 ? kept[*slot].id : -1;
    long long mine = next_id++ & AGX_KEPT_RES_MASK; /* this open's reservation (kept.h) */
    v[0] = id, v[1] = -id, v[2] = -(nkept < KEPT), v[3] = mine, v[4] = rank ? -1 : mine;
    pthread_mutex_unlock(&mu);
}

int agx_file_comm_take(MPI_Comm comm, const long long v[AGX_FILE_COMM_V], int slot, int use, MPI_Comm *out,
                       agx_flearn_carry carry[2])
{
    *out = MPI_COMM_NULL;
    memset(carry, 0, 2 * sizeof *carry);
    if (use && slot >= 0 && agx_kept_same(v[0], v[1])) { /* every rank offered this one */
        *out = kept[slot].comm;
        memcpy(carry, kept[slot].carry, 2 * sizeof *carry);
        return 1;
    }
    if (slot >= 0) { /* not taken: free for the next file */
        pthread_mutex_lock(&mu);
        kept[slot].busy = 0;
        pthread_mutex_unlock(&mu);
    }
    if (!use || PMPI_Comm_dup(comm, out) != MPI_SUCCESS) {
        *out = MPI_COMM_NULL;
        return 0;
    }
    pthread_mutex_lock(&mu);
    if (v[2] == -1 && nkept < KEPT) { /* every rank keeps it, under the same id */
        if (!nkept)
            agx_at_finalize(free_kept);
        kept[nkept].comm = *out, kept[nkept].id = agx_kept_id(v[3], v[4]), kept[nkept].busy = 1;
        memset(kept[nkept++].carry, 0, sizeof kept[0].carry);
    }
    pthread_mutex_unlock(&mu);
    return 0;
}

void agx_file_comm_give(MPI_Comm *c, const agx_flearn_carry carry[2])
{
    int i = 0;
    pthread_mutex_lock(&mu);
    while (i < nkept && kept[i].comm != *c)
        i++;
    if (i < nkept) {
        kept[i].busy = 0;
        if (carry)
            memcpy(kept[i].carry, carry, sizeof kept[i].carry);
    }
    pthread_mutex_unlock(&mu);
    if (i == nkept)
        PMPI_Comm_free(c);
    *c = MPI_COMM_NULL;
}
