/*
 * Root-gathering intergroup allgather / allgatherv (KangTraff19, Section 3.1), the algorithm
 * MPICH, MVAPICH and Open MPI use; agx's baseline.
 *
 *  1. Each group gathers its blocks (packed bytes) to its local rank 0 (a linear gather;
 *     the sizes come from the call's agreement, src/core/intergroup.c, where a production
 *     library gathers them first).
 *  2. The two roots exchange the gathered messages (one send and one receive each).
 *  3. Each root broadcasts the remote message in its group (binomial tree).
 * Cost (Eq. 1, best version): (1 + 2 log p).ts + max((3p-1) kA, (3q-1) kB).tw;
 * production libraries run the stages one after the other (Eq. 2):
 * (2 + 2 log p + log q).ts + (max((p-1) kA, (q-1) kB) + 3 p kA + 3 q kB).tw.
 * Memory requirements: the whole local message at the root, the whole remote message.
 */
#include "agx_internal.h"

#include <stdlib.h>
#include <string.h>

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
    /* 1. gather to the local root (a non-root's block is its own packed bytes) */
    char *gathered = root ? malloc(KL > 0 ? (size_t)KL : 1) : NULL;
    if (root && !gathered)
        rc = agx_error(MPI_ERR_NO_MEM, "root_gather: out of memory for %lld bytes", (long long)KL);
    char *base = gathered;
    if (!root) { /* a non-root's layout only needs its own block, which is its packed bytes */
        dsp[ig->lrank] = 0;
        base = (char *)io->bytes;
    }
    if (root && rc == MPI_SUCCESS && cnt[0] > 0)
        memcpy(gathered, io->bytes, (size_t)cnt[0]);
    if (rc == MPI_SUCCESS)
        rc = agx_ig_local_run(a, AGX_IG_GATHER, base, cnt, dsp);
    /* 2. the roots swap the two messages */
    if (rc == MPI_SUCCESS && root)
        rc = agx_ig_swap(a, ig->remote_x[0], gathered, KL, io->full, io->rpre[ig->rsize]);
    free(gathered);
    /* 3. broadcast of the remote message from the root: one block, the others empty */
    for (int i = 0; i < ig->lsize; i++)
        cnt[i] = dsp[i] = 0;
    cnt[0] = io->rpre[ig->rsize];
    return rc == MPI_SUCCESS ? agx_ig_local_run(a, AGX_IG_BCAST, io->full, cnt, dsp) : rc;
}
