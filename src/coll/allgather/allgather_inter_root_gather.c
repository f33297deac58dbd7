/*
 * Root-gathering intergroup allgather / allgatherv (KangTraff19, Section 3.1), the algorithm
 * MPICH, MVAPICH and Open MPI use; agx's baseline.
 *
 *  1. Each group gathers its blocks (packed bytes) to its local rank 0 (the MPI library's
 *     intra MPI_Gatherv, after an MPI_Gather of the sizes).
 *  2. The two roots exchange the gathered messages (one send and one receive each).
 *  3. Each root broadcasts the remote message in its group (the library's MPI_Bcast).
 * Cost (Eq. 1, best version): (1 + 2 log p).ts + max((3p-1) kA, (3q-1) kB).tw;
 * production libraries run the stages one after the other (Eq. 2):
 * (2 + 2 log p + log q).ts + (max((p-1) kA, (q-1) kB) + 3 p kA + 3 q kB).tw.
 * Memory requirements: the whole local message at the root, the whole remote message.
 */
#include "agx_internal.h"

#include <limits.h>
#include <stdlib.h>

int agx_allgather_inter_root_gather(const agx_args *a)
{
    const agx_intergroup *ig = a->ig;
    agx_ig_io io;
    char *gathered = NULL;
    int *sizes = NULL, *displs = NULL, root = ig->lrank == 0, ki = 0;
    long long KL = 0, KR = 0;
    int rc = agx_ig_io_begin(a, &io);
    if (rc == MPI_SUCCESS) {
        KR = io.rpre[ig->rsize];
        ki = (int)io.k;
        sizes = malloc(sizeof(int) * (size_t)ig->lsize * 2);
        rc = !sizes ? MPI_ERR_NO_MEM : (io.k > INT_MAX || KR > INT_MAX) ? MPI_ERR_COUNT : MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Gather(&ki, 1, MPI_INT, sizes, 1, MPI_INT, 0, ig->local);
    if (rc == MPI_SUCCESS && root) {
        displs = sizes + ig->lsize;
        for (int i = 0; i < ig->lsize; i++) {
            displs[i] = (int)KL;
            KL += sizes[i];
        }
        gathered = KL <= INT_MAX ? malloc(KL > 0 ? (size_t)KL : 1) : NULL;
        rc = KL > INT_MAX ? MPI_ERR_COUNT : gathered ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Gatherv(io.bytes, ki, MPI_BYTE, gathered, sizes, displs, MPI_BYTE, 0, ig->local);
    if (rc == MPI_SUCCESS && root)
        rc = agx_ig_swap(a, ig->remote_x[0], gathered, KL, io.full, KR);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Bcast(io.full, (int)KR, MPI_BYTE, 0, ig->local);
    free(gathered);
    free(sizes);
    return agx_ig_io_end(a, &io, rc);
}
