/* Clocks of the PAT session (Proficz21, Section 3): predictions are exchanged in a common
 * time base, MPI_Wtime plus an offset to rank 0 measured here. */
#include "pat.h"

#include <math.h>

int agx_pat_clock_offset(agx_pat *s)
{
    int *global, flag, rc = MPI_SUCCESS;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &global, &flag);
    if (flag && *global)
        return MPI_SUCCESS;
    for (int r = 1; r < s->p && rc == MPI_SUCCESS; r++) {
        double best = INFINITY, t[2];
        for (int k = 0; k < 8 && rc == MPI_SUCCESS; k++) {
            if (s->rank == 0) {
                rc = MPI_Recv(t, 1, MPI_DOUBLE, r, 0, s->mon, MPI_STATUS_IGNORE);
                t[1] = PMPI_Wtime();
                if (rc == MPI_SUCCESS)
                    rc = MPI_Send(&t[1], 1, MPI_DOUBLE, r, 0, s->mon);
            } else if (s->rank == r) {
                double t0 = PMPI_Wtime(), t1, remote;
                rc = MPI_Send(&t0, 1, MPI_DOUBLE, 0, 0, s->mon);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Recv(&remote, 1, MPI_DOUBLE, 0, 0, s->mon, MPI_STATUS_IGNORE);
                t1 = PMPI_Wtime();
                if (t1 - t0 < best) {
                    best = t1 - t0;
                    s->offset = remote - (t0 + t1) / 2;
                }
            }
        }
    }
    return rc;
}
