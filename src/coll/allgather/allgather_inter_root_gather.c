/*
 * Root-gathering intergroup allgather / allgatherv (KangTraff19, Section 3.1), the algorithm
 * MPICH, MVAPICH and Open MPI use; agx's baseline.
 *
 *  1. Each group gathers its blocks (packed bytes) to its local rank 0 (the MPI library's
 *     MPI_Gatherv; the sizes come from the call's agreement, src/coll/allgather/allgather_ig_groups.c, where
 *     a production library gathers them first).
 *  2. The two roots exchange the gathered messages (one send and one receive each).
 *  3. Each root broadcasts the remote message in its group (the library's MPI_Bcast).
 * Beyond int sizes, steps 1 and 3 are agx's linear gather and binomial bcast schedules.
 * Cost (Eq. 1, best version): (1 + 2 log p).ts + max((3p-1) kA, (3q-1) kB).tw;
 * production libraries run the stages one after the other (Eq. 2):
 * (2 + 2 log p + log q).ts + (max((p-1) kA, (q-1) kB) + 3 p kA + 3 q kB).tw.
 * Memory requirements: the whole local message at the root, the whole remote message.
 */
#include "coll_allgather.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Step 1: the local blocks (byte layout cnt / dsp, from the agreement) to the root's
 * `gathered`. lib: with the MPI library's MPI_Gatherv, as production libraries run it
 * (every size fits an int); else agx's linear gather schedule (64-bit). */
static int gather(const agx_args *a, int lib, MPI_Aint *cnt, MPI_Aint *dsp, char *gathered)
{
    const agx_intergroup *ig = a->ig;
    const agx_ig_io *io = a->u.ag.io;
    int n = ig->lsize, root = ig->lrank == 0;
    if (lib) {
        int *ic = (int *)(dsp + n), *id = ic + n; /* io->lay has room past cnt / dsp */
        for (int i = 0; i < n; i++) {
            ic[i] = (int)cnt[i];
            id[i] = (int)dsp[i];
        }
        return PMPI_Gatherv(io->bytes, ic[ig->lrank], MPI_BYTE, gathered, ic, id, MPI_BYTE, 0, ig->local);
    }
    if (root && cnt[0] > 0)
        memcpy(gathered, io->bytes, (size_t)cnt[0]);
    if (!root) /* a non-root's layout only needs its own block, which is its packed bytes */
        dsp[ig->lrank] = 0;
    return agx_ig_local_run(a, AGX_IG_GATHER, root ? gathered : (char *)io->bytes, cnt, dsp);
}

/* Step 3: the remote message from the root: MPI_Bcast, or agx's binomial schedule over
 * a layout of one block. */
static int bcast(const agx_args *a, int lib, MPI_Aint *cnt, MPI_Aint *dsp)
{
    const agx_intergroup *ig = a->ig;
    const agx_ig_io *io = a->u.ag.io;
    if (lib)
        return PMPI_Bcast(io->full, (int)io->rpre[ig->rsize], MPI_BYTE, 0, ig->local);
    for (int i = 0; i < ig->lsize; i++)
        cnt[i] = dsp[i] = 0;
    cnt[0] = io->rpre[ig->rsize];
    return agx_ig_local_run(a, AGX_IG_BCAST, io->full, cnt, dsp);
}

int agx_allgather_inter_root_gather(const agx_args *a)
{
    const agx_intergroup *ig = a->ig;
    const agx_ig_io *io = a->u.ag.io;
    MPI_Aint *cnt = io->lay, *dsp = cnt + ig->lsize, KL = 0;
    int rc = MPI_SUCCESS, root = ig->lrank == 0;
    for (int i = 0; i < ig->lsize; i++) { /* the local blocks' sizes, from the agreement */
        cnt[i] = agx_ig_send_bytes(ig, ig->local_x[i]);
        dsp[i] = KL;
        KL += cnt[i];
    }
    /* the same answer on every process of the group: the sizes come from the agreement */
    int lib = KL <= INT_MAX && io->rpre[ig->rsize] <= INT_MAX;
    char *gathered = root ? malloc(KL > 0 ? (size_t)KL : 1) : NULL;
    if (root && !gathered)
        rc = agx_error(MPI_ERR_NO_MEM, "root_gather: out of memory for %lld bytes", (long long)KL);
    if (rc == MPI_SUCCESS)
        rc = gather(a, lib, cnt, dsp, gathered);
    if (rc == MPI_SUCCESS && root) /* step 2 */
        rc = agx_ig_swap(a, ig->remote_x[0], gathered, KL, io->full, io->rpre[ig->rsize]);
    free(gathered);
    return rc == MPI_SUCCESS ? bcast(a, lib, cnt, dsp) : rc;
}
