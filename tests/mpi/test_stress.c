/*
 * Calls as real programs make them, checked without a synchronizing call between them
 * (issue 50: a reference PMPI_Allreduce after each call lines the ranks up again and hid
 * a race in dissemination_shm from every probe that used one).
 *   test_stress [--quick] [--seed S] [--calls N] [--delay US] [--pause US]
 * Sweep: for every operation (allreduce, allgather, allgatherv, alltoallv) and every
 * intra algorithm of its table, then the default: calls back to back whose sizes grow and
 * shrink (0 and 1 element among them) and whose element type alternates.
 * Random: N calls, each of a random operation, algorithm (half of them the default),
 * count, element type, reduction op and in-place-ness, drawn from the seed every rank
 * shares, so every rank makes the same calls. Ranks arrive at different times: each
 * sleeps 0..US microseconds (its own generator) before a quarter of the calls and after
 * an eighth, and agx itself pauses between the steps of its node-shared protocols
 * (AGX_TEST_PAUSE=SEED:US:PERCENT, set here unless given).
 * Every input element is a function of (call, rank, position), so each rank computes the
 * result it expects itself: nothing but the calls under test runs between them. Wrong
 * bytes (gaps of the receive layout included) and error codes are counted; one reduction
 * at the end decides. The seed is printed; --seed S replays a run.
 * --mpi (run through the drop-in: tools/agxrun --preload): the calls by MPI's names, as an
 * unmodified program makes them, each the drop-in's own choice (AGX_ADAPT=1 unless the
 * environment says otherwise: a class's first calls the library's, then its learning
 * window, then its winner, ranks arriving at different times throughout); three random
 * calls in four of two shapes per operation that repeat, so that their classes reach
 * every phase; no sweep. --comms N: every N random calls on a new communicator (a
 * duplicate of the world, its halves, or the world in reverse order), freed after them, so
 * that each takes what the last congruent one kept (its private communicator and learned
 * classes).
 */
#include "callgen.h"

typedef struct {
    MPI_Comm comm;
    int rank, p, bad, errs, mpi;
    slot_t s;
} ctx_t;

/* The four entry points: agx's, or MPI's (--mpi: the drop-in's when preloaded); the
 * signatures are the same. */
typedef struct {
    int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*allgather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
    int (*allgatherv)(const void *, int, MPI_Datatype, void *, const int *, const int *, MPI_Datatype, MPI_Comm);
    int (*alltoallv)(const void *, const int *, const int *, MPI_Datatype, void *, const int *, const int *,
                     MPI_Datatype, MPI_Comm);
} entries_t;
static const entries_t agx_entries = {agx_allreduce, agx_allgather, agx_allgatherv, agx_alltoallv};
static const entries_t mpi_entries = {MPI_Allreduce, MPI_Allgather, MPI_Allgatherv, MPI_Alltoallv};

/* A random call of --mpi: three in four of two shapes per operation that repeat (1 or
 * 1000 ints; 256 per block for the data-moving operations), the default's choice always. */
static call_t mpi_random(unsigned *shared, unsigned t)
{
    call_t c = cg_random(shared, t, 1);
    c.alg = -1;
    if (mt_rand(shared) % 4) {
        c.count = mt_rand(shared) % 2 ? 1 : c.op == AGX_OP_ALLREDUCE ? 1000 : 256;
        c.k = T_INT;
        c.rop = mt_rand(shared) % 2 ? O_SUM : O_MAX;
    }
    return c;
}

/* The next communicator of --comms: the world duplicated, split in halves (even and odd
 * ranks) or reversed, drawn from the shared generator. */
static void next_comm(ctx_t *x, unsigned *shared, const mt_run *run)
{
    if (x->comm != MPI_COMM_NULL)
        MPI_Comm_free(&x->comm);
    unsigned how = mt_rand(shared) % 3;
    if (how == 0)
        MPI_Comm_dup(MPI_COMM_WORLD, &x->comm);
    else
        MPI_Comm_split(MPI_COMM_WORLD, how == 1 ? run->rank % 2 : 0, how == 1 ? run->rank : run->size - run->rank,
                       &x->comm);
    MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(x->comm, &x->rank);
    MPI_Comm_size(x->comm, &x->p);
}

/* One call: inputs, the call, the check. */
static void run_call(ctx_t *x, const call_t *c)
{
    int rc;
    MPI_Datatype t = ty(c->k);
    slot_t *s = &x->s;
    const entries_t *f = x->mpi ? &mpi_entries : &agx_entries;
    if (!x->mpi)
        agx_comm_set_algorithm(x->comm, (agx_op)c->op, cg_alg_name(c));
    cg_prepare(s, c, x->rank, x->p);
    const void *sb = c->inplace ? MPI_IN_PLACE : s->sbuf;
    if (c->op == AGX_OP_ALLREDUCE)
        rc = f->allreduce(sb, s->rbuf, (int)c->count, t, mop(c->rop), x->comm);
    else if (c->op == AGX_OP_ALLGATHER)
        rc = f->allgather(sb, (int)c->count, t, s->rbuf, (int)c->count, t, x->comm);
    else if (c->op == AGX_OP_ALLGATHERV)
        rc = f->allgatherv(sb, s->rc[x->rank], t, s->rbuf, s->rc, s->rd, t, x->comm);
    else
        rc = f->alltoallv(s->sbuf, s->sc, s->sd, t, s->rbuf, s->rc, s->rd, t, x->comm);
    cg_check(s, c, x->rank, rc, &x->bad, &x->errs);
}

int main(int argc, char **argv)
{
    int calls = 2000, delay = 300, pause = 100, mpi = 0, comms = 0;
    for (int i = 1; i < argc; i++)
        mpi |= !strcmp(argv[i], "--mpi");
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--calls"))
            calls = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--delay"))
            delay = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pause"))
            pause = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--comms"))
            comms = atoi(argv[i + 1]);
    }
    mt_run run;
    char spec[64];
    snprintf(spec, sizeof spec, "%u:%d:20", mt_seed_from_env(), pause);
    if (pause > 0)
        setenv("AGX_TEST_PAUSE", spec, 0); /* read by agx at its first pause */
    mt_start(&argc, &argv, &run);
    ctx_t x = {.rank = run.rank, .p = run.size, .mpi = mpi};
    MPI_Comm_dup(MPI_COMM_WORLD, &x.comm);
    MPI_Comm_set_errhandler(x.comm, MPI_ERRORS_RETURN);
    cg_slot_init(&x.s, x.p);
    if (run.rank == 0)
        printf("test_stress: %d ranks, seed %u, %d random calls%s, delays up to %d us, AGX_TEST_PAUSE=%s\n", x.p,
               run.seed, calls, mpi ? " by MPI's names, the default's" : "", delay,
               getenv("AGX_TEST_PAUSE") ? getenv("AGX_TEST_PAUSE") : "(none)");
    unsigned shared = run.seed, mine = run.seed ^ (0x9E3779B9u * (unsigned)(run.rank + 1));
    double t0 = MPI_Wtime();
    /* the sweep: every algorithm of every operation, sizes growing and shrinking */
    static const long long sizes[] = {10, 1024, 1, 0, 300, 4096, 10, 2048, 7, 16384, 2, 600};
    int nsizes = run.quick ? 6 : (int)(sizeof sizes / sizeof sizes[0]), swept = 0;
    unsigned t = 0;
    for (int o = 0; o < 4; o++)
        for (int a = -1; a < (mpi ? -1 : agx_algorithm_count((agx_op)cg_ops[o], AGX_KIND_INTRA)); a++)
            for (int s = 0; s < nsizes; s++, swept++) {
                call_t c = {.op = cg_ops[o], .alg = a, .k = s % 2 ? T_LLONG : T_INT, .rop = O_SUM, .t = t++,
                            .count = cg_ops[o] == AGX_OP_ALLREDUCE || sizes[s] <= CG_MAXGATHER ? sizes[s]
                                                                                               : CG_MAXGATHER};
                cg_nap(&mine, delay, 4);
                run_call(&x, &c);
            }
    /* the random calls */
    for (int i = 0; i < calls; i++) {
        if (comms > 0 && i % comms == 0)
            next_comm(&x, &shared, &run);
        call_t c = mpi ? mpi_random(&shared, t++) : cg_random(&shared, t++, 1);
        cg_nap(&mine, delay, 4);
        run_call(&x, &c);
        cg_nap(&mine, delay, 8);
    }
    int local[2] = {x.bad, x.errs}, total[2];
    MPI_Allreduce(local, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (run.rank == 0)
        printf("test_stress: %d calls (%d swept, %d random) per rank in %.1f s: %d wrong results, %d errors%s\n",
               swept + calls, swept, calls, MPI_Wtime() - t0, total[0], total[1],
               total[0] || total[1] ? " FAIL" : ", ok");
    MPI_Comm_free(&x.comm);
    cg_slot_free(&x.s);
    MPI_Finalize();
    return total[0] || total[1] ? 1 : 0;
}
