/*
 * Outstanding non-blocking and persistent collectives, matched as MPI orders them (issue
 * 55): MPI matches the collectives of a communicator by the order each process starts
 * them, whatever the arrival times, and lets them complete in any order.
 *   test_nbc [--quick] [--seed S] [--rounds N] [--delay US] [--mpi]
 * Each round starts 2-8 calls, back to back on two communicators, each rank sleeping a
 * random time (its own generator, up to US microseconds) before each start: agx's
 * operations (every intra algorithm of each table in turn, and the default; plans, the
 * library's call inside agx's request, algorithms that are not one schedule), non-blocking
 * and persistent (made by their init at their place in the sequence, started once), and
 * the library's own MPI_Ibcast and MPI_Ireduce, which agx does not take, on the same
 * communicators. Then every rank completes them its own way (by round and rank): waits in
 * start order or reversed, a wait-all, a wait-any loop, a wait-some loop, a test-some loop,
 * a test loop. Every result is checked with nothing synchronizing between the starts and
 * the checks (callgen.h: each rank computes what it expects); one reduction at the end.
 * The calls are agx's (agx_i*, agx_<op>_init); with AGX_PROGRESS_THREAD=1 each is handed
 * to MPI (agx_request_mpi) and completed by MPI's calls beside the library's own requests;
 * --mpi makes them MPI's (MPI_Iallreduce, MPI_Iallgather(v), MPI_Ialltoallv, MPI-4's
 * persistent inits), for runs under libagx-preload.so.
 */
#include "callgen.h"

#include "mpi4init.h"

enum { K_NB, K_PERSIST, K_IBCAST, K_IREDUCE, K_BLOCK };
enum { MAXOUT = 8, NWAYS = 7 };
static const char *ways[NWAYS] = {"wait in order", "wait reversed", "waitall", "waitany", "waitsome", "testsome",
                                  "test loop"};

typedef struct {
    call_t c;
    slot_t s;
    int kind, root;
    MPI_Comm comm;
    agx_request ar;
    MPI_Request mr;                /* the MPI handle (MPI_REQUEST_NULL: an agx handle only) */
    int rc0;                       /* a blocking call's code */
} out_t;

static int rank, size, mpi_calls, handed, bad, errs;

/* Start o: agx's call (or MPI's with --mpi), handed to MPI when the thread runs; the
 * library's own broadcast and reduction. */
static int start(out_t *o)
{
    const call_t *c = &o->c;
    slot_t *s = &o->s;
    MPI_Datatype t = ty(c->k);
    const void *sb = c->inplace ? MPI_IN_PLACE : s->sbuf;
    int n = (int)c->count, rc = MPI_SUCCESS, pers = o->kind == K_PERSIST;
    o->ar = AGX_REQUEST_NULL, o->mr = MPI_REQUEST_NULL;
    if (o->kind == K_IBCAST || o->kind == K_IREDUCE) {
        for (int i = 0; i < n; i++) {
            ((int *)s->sbuf)[i] = (int)val(T_INT, c->t, rank, i);
            ((int *)s->ebuf)[i] = (int)(o->kind == K_IBCAST ? val(T_INT, c->t, o->root, i) : 0);
            for (int r = 0; o->kind == K_IREDUCE && r < size; r++)
                ((int *)s->ebuf)[i] += (int)val(T_INT, c->t, r, i);
        }
        s->rbytes = rank == o->root || o->kind == K_IBCAST ? (size_t)n * 4 : 0;
        if (o->kind == K_IREDUCE)
            return MPI_Ireduce(s->sbuf, s->rbuf, n, MPI_INT, MPI_SUM, o->root, o->comm, &o->mr);
        if (rank == o->root) /* the root broadcasts from its receive buffer */
            memcpy(s->rbuf, s->sbuf, (size_t)n * 4);
        return MPI_Ibcast(s->rbuf, n, MPI_INT, o->root, o->comm, &o->mr);
    }
    agx_comm_set_algorithm(o->comm, (agx_op)c->op, cg_alg_name(c));
    cg_prepare(s, c, rank, size);
    if (o->kind == K_BLOCK) { /* a blocking call while the others are outstanding */
        int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm) =
            mpi_calls ? MPI_Allreduce : agx_allreduce;
        int (*allgather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm) =
            mpi_calls ? MPI_Allgather : agx_allgather;
        if (c->op == AGX_OP_ALLREDUCE)
            o->rc0 = allreduce(sb, s->rbuf, n, t, mop(c->rop), o->comm);
        else if (c->op == AGX_OP_ALLGATHER)
            o->rc0 = allgather(sb, n, t, s->rbuf, n, t, o->comm);
        else if (c->op == AGX_OP_ALLGATHERV)
            o->rc0 = (mpi_calls ? MPI_Allgatherv : agx_allgatherv)(sb, s->rc[rank], t, s->rbuf, s->rc, s->rd, t,
                                                                   o->comm);
        else
            o->rc0 = (mpi_calls ? MPI_Alltoallv : agx_alltoallv)(s->sbuf, s->sc, s->sd, t, s->rbuf, s->rc, s->rd,
                                                                 t, o->comm);
        return MPI_SUCCESS;
    }
    if (mpi_calls) {
#ifdef INIT
        if (pers && c->op == AGX_OP_ALLREDUCE)
            rc = INIT(Allreduce)(sb, s->rbuf, n, t, mop(c->rop), o->comm, MPI_INFO_NULL, &o->mr);
        else if (pers && c->op == AGX_OP_ALLGATHER)
            rc = INIT(Allgather)(sb, n, t, s->rbuf, n, t, o->comm, MPI_INFO_NULL, &o->mr);
        else if (pers && c->op == AGX_OP_ALLGATHERV)
            rc = INIT(Allgatherv)(sb, s->rc[rank], t, s->rbuf, s->rc, s->rd, t, o->comm, MPI_INFO_NULL, &o->mr);
        else if (pers)
            rc = INIT(Alltoallv)(s->sbuf, s->sc, s->sd, t, s->rbuf, s->rc, s->rd, t, o->comm, MPI_INFO_NULL, &o->mr);
        if (pers)
            return rc != MPI_SUCCESS ? rc : MPI_Start(&o->mr);
#endif
        if (c->op == AGX_OP_ALLREDUCE)
            return MPI_Iallreduce(sb, s->rbuf, n, t, mop(c->rop), o->comm, &o->mr);
        if (c->op == AGX_OP_ALLGATHER)
            return MPI_Iallgather(sb, n, t, s->rbuf, n, t, o->comm, &o->mr);
        if (c->op == AGX_OP_ALLGATHERV)
            return MPI_Iallgatherv(sb, s->rc[rank], t, s->rbuf, s->rc, s->rd, t, o->comm, &o->mr);
        return MPI_Ialltoallv(s->sbuf, s->sc, s->sd, t, s->rbuf, s->rc, s->rd, t, o->comm, &o->mr);
    }
    if (c->op == AGX_OP_ALLREDUCE)
        rc = pers ? agx_allreduce_init(sb, s->rbuf, n, t, mop(c->rop), o->comm, MPI_INFO_NULL, &o->ar)
                  : agx_iallreduce(sb, s->rbuf, n, t, mop(c->rop), o->comm, &o->ar);
    else if (c->op == AGX_OP_ALLGATHER)
        rc = pers ? agx_allgather_init(sb, n, t, s->rbuf, n, t, o->comm, MPI_INFO_NULL, &o->ar)
                  : agx_iallgather(sb, n, t, s->rbuf, n, t, o->comm, &o->ar);
    else if (c->op == AGX_OP_ALLGATHERV)
        rc = pers ? agx_allgatherv_init(sb, s->rc[rank], t, s->rbuf, s->rc, s->rd, t, o->comm, MPI_INFO_NULL, &o->ar)
                  : agx_iallgatherv(sb, s->rc[rank], t, s->rbuf, s->rc, s->rd, t, o->comm, &o->ar);
    else
        rc = pers ? agx_alltoallv_init(s->sbuf, s->sc, s->sd, t, s->rbuf, s->rc, s->rd, t, o->comm, MPI_INFO_NULL,
                                       &o->ar)
                  : agx_ialltoallv(s->sbuf, s->sc, s->sd, t, s->rbuf, s->rc, s->rd, t, o->comm, &o->ar);
    if (rc == MPI_SUCCESS && handed) /* a persistent one before its start, as agx_request_mpi asks */
        rc = agx_request_mpi(&o->ar, &o->mr);
    if (rc == MPI_SUCCESS && pers)
        rc = agx_start(&o->ar);
    return rc;
}

/* Complete them all, the rank's own way w; rc[i] each one's code; persistent ones freed. */
static void complete(out_t *o, int k, int w, int *rc)
{
    MPI_Request q[MAXOUT];
    MPI_Status st[MAXOUT];
    int idx[MAXOUT], fin[MAXOUT], left = k, n, allmpi = 1;
    for (int i = 0; i < k; i++) {
        q[i] = o[i].mr, rc[i] = o[i].kind == K_BLOCK ? o[i].rc0 : MPI_SUCCESS, fin[i] = o[i].kind == K_BLOCK;
        left -= fin[i];
        allmpi = allmpi && (o[i].mr != MPI_REQUEST_NULL || o[i].kind == K_BLOCK);
    }
    if (!allmpi) /* agx's own handles among them: waits in order or reversed, or a test loop */
        w = w % 3 == 2 ? 6 : w % 3;
    if (w == 0 || w == 1) {
        for (int j = 0; j < k; j++) {
            int i = w == 0 ? j : k - 1 - j;
            if (!fin[i])
                rc[i] = q[i] != MPI_REQUEST_NULL ? MPI_Wait(&q[i], MPI_STATUS_IGNORE) : agx_wait(&o[i].ar);
        }
    } else if (w == 2) {
        if (MPI_Waitall(k, q, st) == MPI_ERR_IN_STATUS)
            for (int i = 0; i < k; i++)
                rc[i] = fin[i] ? rc[i] : st[i].MPI_ERROR;
    } else if (w == 3) {
        while (left-- > 0) {
            int r = MPI_Waitany(k, q, &idx[0], &st[0]);
            if (idx[0] == MPI_UNDEFINED)
                break;
            rc[idx[0]] = r;
        }
    } else if (w == 4 || w == 5) {
        while (left > 0) {
            int r = w == 4 ? MPI_Waitsome(k, q, &n, idx, st) : MPI_Testsome(k, q, &n, idx, st);
            if (n == MPI_UNDEFINED)
                break;
            for (int j = 0; j < n; j++)
                rc[idx[j]] = r == MPI_ERR_IN_STATUS ? st[j].MPI_ERROR : r;
            left -= n;
        }
    } else {
        while (left > 0) /* each in turn until every one has completed */
            for (int i = 0; i < k; i++) {
                int flag = 0;
                if (fin[i])
                    continue;
                rc[i] = q[i] != MPI_REQUEST_NULL ? MPI_Test(&q[i], &flag, MPI_STATUS_IGNORE)
                                                 : agx_test(&o[i].ar, &flag);
                if (flag || rc[i] != MPI_SUCCESS)
                    fin[i] = 1, left--;
            }
    }
    for (int i = 0; i < k; i++) /* persistent: inactive now */
        if (o[i].kind == K_PERSIST && o[i].ar)
            agx_request_free(&o[i].ar); /* agx's (and its MPI handle, when handed) */
        else if (o[i].kind == K_PERSIST && q[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&q[i]);    /* MPI's (agx's under the preload) */
}

int main(int argc, char **argv)
{
    int rounds = 150, delay = 2000, cyc[AGX_OP_LAST] = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--delay") && i + 1 < argc)
            delay = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mpi"))
            mpi_calls = 1;
    }
    mt_run run;
    mt_start(&argc, &argv, &run); /* MPI_THREAD_MULTIPLE when AGX_PROGRESS_THREAD is set */
    rank = run.rank, size = run.size;
    if (run.quick)
        rounds /= 3;
    const char *th = getenv("AGX_PROGRESS_THREAD");
    handed = !mpi_calls && th && *th && strcmp(th, "0");
    MPI_Comm comms[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    for (int i = 0; i < 2; i++)
        MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
    out_t o[MAXOUT];
    for (int i = 0; i < MAXOUT; i++)
        cg_slot_init(&o[i].s, size);
    if (rank == 0)
        printf("test_nbc: %d ranks, seed %u, %d rounds, delays up to %d us, %s calls%s\n", size, run.seed, rounds,
               delay, mpi_calls ? "MPI's" : "agx's", handed ? " handed to MPI" : "");
    unsigned shared = run.seed, mine = run.seed ^ (0x9E3779B9u * (unsigned)(rank + 1)), t = 0;
    long long calls = 0, used[NWAYS] = {0};
    double t0 = MPI_Wtime();
    { /* issue 55's case: two sums of 10 MPI_SHORT (the library's call inside agx's request under
       * Open MPI) started back to back, rank 0 0.2 s late to each, completed together */
        int rc[2];
        for (int i = 0; i < 2; i++, t++) {
            o[i] = (out_t){.c = {.op = AGX_OP_ALLREDUCE, .alg = -1, .k = T_SHORT, .rop = O_SUM, .count = 10, .t = t},
                           .s = o[i].s, .kind = K_NB, .comm = comms[0]};
            if (rank == 0)
                usleep(200000);
            if ((rc[i] = start(&o[i])) != MPI_SUCCESS)
                cg_check(&o[i].s, &o[i].c, rank, rc[i], &bad, &errs);
        }
        complete(o, 2, 2, rc);
        for (int i = 0; i < 2; i++, calls++)
            cg_check(&o[i].s, &o[i].c, rank, rc[i], &bad, &errs);
    }
    for (int r = 0; r < rounds; r++) {
        int k = 2 + (int)(mt_rand(&shared) % (MAXOUT - 1)), rc[MAXOUT];
        for (int i = 0; i < k; i++, t++) {
            out_t *x = &o[i];
            unsigned u = mt_rand(&shared) % 16;
            x->c = cg_random(&shared, t, 1);
            x->kind = u < 2 ? K_IBCAST : u < 4 ? K_IREDUCE : u < 7 ? K_PERSIST : u < 9 ? K_BLOCK : K_NB;
#ifndef INIT
            if (mpi_calls && x->kind == K_PERSIST)
                x->kind = K_NB;
#endif
            x->comm = comms[mt_rand(&shared) % 2];
            x->root = (int)(t % (unsigned)size);
            if (x->kind == K_IBCAST || x->kind == K_IREDUCE) {
                x->c.k = T_INT;
                x->c.count = x->c.count > CG_MAXGATHER ? CG_MAXGATHER : x->c.count;
            } else { /* every algorithm of the table in turn, and the default */
                x->c.alg = cyc[x->c.op]++ % (agx_algorithm_count((agx_op)x->c.op, AGX_KIND_INTRA) + 1) - 1;
            }
            cg_nap(&mine, delay, 2);
            if ((rc[i] = start(x)) != MPI_SUCCESS)
                cg_check(&x->s, &x->c, rank, rc[i], &bad, &errs);
        }
        int w = (r + rank) % NWAYS;
        used[w]++;
        complete(o, k, w, rc);
        for (int i = 0; i < k; i++, calls++)
            cg_check(&o[i].s, &o[i].c, rank, rc[i], &bad, &errs);
    }
    int local[2] = {bad, errs}, total[2];
    MPI_Allreduce(local, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_nbc: %lld calls per rank (2-8 outstanding) in %.1f s; completed by", calls, MPI_Wtime() - t0);
        for (int w = 0; w < NWAYS; w++)
            printf("%s %s %lld", w ? "," : "", ways[w], used[w]);
        printf(" (rank 0): %d wrong results, %d errors%s\n", total[0], total[1], total[0] || total[1] ? " FAIL" : ", ok");
    }
    for (int i = 0; i < MAXOUT; i++)
        cg_slot_free(&o[i].s);
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
    MPI_Finalize();
    return total[0] || total[1] ? 1 : 0;
}
