/*
 * agx-bench's request modes (allgather, allgatherv, allreduce; bench.h):
 *   --persistent   the request is made once per (algorithm, size) by agx_<op>_init, and
 *                  every iteration times agx_start + agx_wait (the per-start cost);
 *                  algorithm `mpi_init` is the MPI library's own MPI-4 persistent call
 *                  (MPI_Allgather_init & co.; MPICH 4, not Open MPI 4.1);
 *   --nonblocking  every iteration times agx_i<op> + agx_wait;
 *   --overlap      OSU's osu_iallgather method on top of either: after the timed
 *                  iterations (t_pure = their mean), each of `iters` more posts the call,
 *                  computes for t_pure (spinning; SMPI: simulated time) and waits, t_total;
 *                  overlap = 100 (1 - (t_total - t_compute) / t_pure), clipped to 0..100.
 *                  Without AGX_PROGRESS_THREAD=1, agx's requests progress only inside agx's
 *                  calls: a schedule's later rounds wait for the agx_wait.
 */
#include "bench.h"

#include <string.h>

int bench_req_open(const options *o, const struct bench_shape *sh, const void *sbuf, void *rbuf, MPI_Comm comm, const char *alg,
                   bench_req *q)
{
    *q = (bench_req){.r = AGX_REQUEST_NULL, .m = MPI_REQUEST_NULL, .mpi = !strcmp(alg, "mpi_init")};
    if (o->req != BENCH_PERSISTENT)
        return MPI_SUCCESS;
    if (q->mpi) {
#if MPI_VERSION >= 4
        if (o->op == AGX_OP_ALLREDUCE)
            return MPI_Allreduce_init(sbuf, rbuf, sh->mine, sh->type, MPI_SUM, comm, MPI_INFO_NULL, &q->m);
        if (o->op == AGX_OP_ALLGATHER)
            return MPI_Allgather_init(sbuf, sh->mine, sh->type, rbuf, sh->counts[0], sh->type, comm, MPI_INFO_NULL,
                                      &q->m);
        return MPI_Allgatherv_init(sbuf, sh->mine, sh->type, rbuf, sh->counts, sh->displs, sh->type, comm,
                                   MPI_INFO_NULL, &q->m);
#else
        return MPI_ERR_UNSUPPORTED_OPERATION; /* MPI-3: no persistent collectives */
#endif
    }
    if (o->op == AGX_OP_ALLREDUCE)
        return agx_allreduce_init(sbuf, rbuf, sh->mine, sh->type, MPI_SUM, comm, MPI_INFO_NULL, &q->r);
    if (o->op == AGX_OP_ALLGATHER)
        return agx_allgather_init(sbuf, sh->mine, sh->type, rbuf, sh->counts[0], sh->type, comm, MPI_INFO_NULL,
                                  &q->r);
    return agx_allgatherv_init(sbuf, sh->mine, sh->type, rbuf, sh->counts, sh->displs, sh->type, comm,
                               MPI_INFO_NULL, &q->r);
}

/* Post the call: a start, or the non-blocking call. */
static int post(const options *o, bench_req *q, const struct bench_shape *sh, const void *sbuf, void *rbuf, MPI_Comm comm)
{
    if (o->req == BENCH_PERSISTENT)
        return q->mpi ? MPI_Start(&q->m) : agx_start(&q->r);
    if (o->op == AGX_OP_ALLREDUCE)
        return agx_iallreduce(sbuf, rbuf, sh->mine, sh->type, MPI_SUM, comm, &q->r);
    if (o->op == AGX_OP_ALLGATHER)
        return agx_iallgather(sbuf, sh->mine, sh->type, rbuf, sh->counts[0], sh->type, comm, &q->r);
    return agx_iallgatherv(sbuf, sh->mine, sh->type, rbuf, sh->counts, sh->displs, sh->type, comm, &q->r);
}

int bench_req_call(const options *o, bench_req *q, const struct bench_shape *sh, const void *sbuf, void *rbuf, MPI_Comm comm,
                   double compute, double *t_compute)
{
    int rc = post(o, q, sh, sbuf, rbuf, comm);
    if (rc == MPI_SUCCESS && compute > 0) {
        double c0 = MPI_Wtime();
        bench_compute_until(c0 + compute);
        *t_compute = MPI_Wtime() - c0;
    }
    if (rc == MPI_SUCCESS)
        rc = q->mpi ? MPI_Wait(&q->m, MPI_STATUS_IGNORE) : agx_wait(&q->r);
    return rc;
}

void bench_req_close(bench_req *q)
{
    if (q->r)
        agx_request_free(&q->r);
    if (q->m != MPI_REQUEST_NULL)
        MPI_Request_free(&q->m);
}

double bench_req_overlap(const options *o, bench_req *q, const struct bench_shape *sh, const void *sbuf, void *rbuf,
                         MPI_Comm comm, double t_pure, int *rc)
{
    double total = 0, cpu = 0;
    for (int it = 0; it < o->iters && *rc == MPI_SUCCESS; it++) {
        double tc = 0, t[2], tm[2];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        *rc = bench_req_call(o, q, sh, sbuf, rbuf, comm, t_pure, &tc);
        t[0] = MPI_Wtime() - t0, t[1] = tc;
        MPI_Allreduce(t, tm, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        total += tm[0], cpu += tm[1];
    }
    if (*rc != MPI_SUCCESS || t_pure <= 0)
        return 0;
    double ov = 100.0 * (1.0 - (total - cpu) / o->iters / t_pure);
    return ov < 0 ? 0 : ov > 100 ? 100 : ov;
}
