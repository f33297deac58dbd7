/*
 * Persistent and non-blocking collectives against the MPI library's blocking ones
 * (PMPI_): every registered allgather algorithm (and auto), allgather and allgatherv,
 * in place or not, MPI_INT and a type with holes, zero and uneven counts; each
 * persistent request started several times with new contents; several requests
 * outstanding on one communicator and on two, completed in an order that differs
 * between ranks; a blocking agx call between a start and its wait (the progress rule);
 * allreduce and alltoallv requests; and the errors (starting an active request, freeing
 * one, starting after MPI_Comm_free, an init whose arguments are bad on one rank only).
 * Prints its seed (AGX_TEST_SEED reproduces a run).
 */
#include "agx.h"
#include "mpitest.h"

static int rank, size, passed, failed;

/* The content of rank r's element k at start `it`. */
static int val(int r, int k, int it, unsigned seed) { return (int)((unsigned)r * 7919u + (unsigned)k * 31u + (unsigned)it * 1000003u + seed); }

/* One allgather(v) case: `reps` starts of a persistent request (or one non-blocking call
 * per rep) against PMPI_Allgatherv on the same contents; the whole receive buffers
 * (holes included) compared byte for byte. */
static void ag_case(MPI_Comm comm, const char *alg, int v, int inplace, MPI_Datatype t, int unit, int persistent,
                    unsigned *rs, unsigned seed)
{
    int p, me, reps = 3;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    int *counts = malloc(sizeof(int) * (size_t)p), *displs = malloc(sizeof(int) * (size_t)p);
    for (int i = 0; i < p; i++) /* allgatherv: the same random counts on every rank (seeded) */
        counts[i] = v ? (int)(mt_rand(rs) % 5) : unit;
    long long end = v ? mt_shuffled_displs(p, counts, displs, rs) : (long long)unit * p;
    for (int i = 0; i < p && !v; i++)
        displs[i] = i * unit;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    size_t bytes = (size_t)(end > 0 ? end : 1) * (size_t)ext + 64;
    int elems_per = (int)(ext / (MPI_Aint)sizeof(int)); /* ints per element (holes included) */
    int *sbuf = malloc((size_t)(counts[me] > 0 ? counts[me] : 1) * (size_t)ext), *rbuf = malloc(bytes),
        *ref = malloc(bytes);
    agx_request req = AGX_REQUEST_NULL;
    int rc = agx_comm_set_algorithm(comm, AGX_OP_ALLGATHER, strcmp(alg, "auto") ? alg : NULL);
    if (rc == MPI_SUCCESS && v)
        rc = agx_comm_set_algorithm(comm, AGX_OP_ALLGATHERV, strcmp(alg, "auto") ? alg : NULL);
    const void *sb = inplace ? MPI_IN_PLACE : sbuf;
    int ok = 1;
    for (int it = 0; it < reps && rc == MPI_SUCCESS; it++) {
        for (int k = 0; k < counts[me] * elems_per; k++)
            sbuf[k] = val(me, k, it, seed);
        memset(rbuf, 0x5A, bytes);
        memset(ref, 0x5A, bytes);
        if (inplace) /* the own block in place, in both */
            for (int k = 0; k < counts[me] * elems_per; k++)
                rbuf[(size_t)displs[me] * (size_t)elems_per + (size_t)k] = sbuf[k];
        memcpy(ref, rbuf, bytes);
        if (persistent && it == 0)
            rc = v ? agx_allgatherv_init(sb, counts[me], t, rbuf, counts, displs, t, comm, MPI_INFO_NULL, &req)
                   : agx_allgather_init(sb, unit, t, rbuf, unit, t, comm, MPI_INFO_NULL, &req);
        if (rc == MPI_SUCCESS)
            rc = persistent ? agx_start(&req)
                 : v ? agx_iallgatherv(sb, counts[me], t, rbuf, counts, displs, t, comm, &req)
                     : agx_iallgather(sb, unit, t, rbuf, unit, t, comm, &req);
        if (rc == MPI_SUCCESS)
            rc = agx_wait(&req);
        PMPI_Allgatherv(inplace ? MPI_IN_PLACE : sbuf, counts[me], t, ref, counts, displs, t, comm);
        ok = ok && rc == MPI_SUCCESS && !memcmp(rbuf, ref, bytes) && (persistent || req == AGX_REQUEST_NULL);
    }
    if (req)
        agx_request_free(&req);
    const char *ran = "?";
    agx_comm_last_algorithm(comm, v ? AGX_OP_ALLGATHERV : AGX_OP_ALLGATHER, &ran);
    CHECK(ok && req == AGX_REQUEST_NULL, "%s %s (ran %s) %s%s unit %d %s: rc %d", persistent ? "persistent" : "non-blocking",
          v ? "allgatherv" : "allgather", ran, alg, inplace ? " in place" : "", unit, t == MPI_INT ? "int" : "holes", rc);
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHER, NULL);
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHERV, NULL);
    free(counts), free(displs), free(sbuf), free(rbuf), free(ref);
}

/* Several requests at once: two on `comm`, one on `other`, persistent and not, completed
 * in an order that depends on the rank; a blocking agx call between start and wait. */
static void outstanding(MPI_Comm comm, MPI_Comm other, unsigned seed)
{
    enum { N = 5 };
    int a[N], b[N], c[N], ra[N * 64], rb[N * 64], rc_[N * 64], x[N * 64], ref[N * 64], one = rank;
    agx_request q[3];
    int rc = MPI_SUCCESS, ok = 1;
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHER, "ring"); /* p - 1 rounds: many chances to interleave */
    agx_comm_set_algorithm(other, AGX_OP_ALLGATHER, "bruck");
    rc = agx_allgather_init(b, N, MPI_INT, rb, N, MPI_INT, comm, MPI_INFO_NULL, &q[1]);
    for (int it = 0; it < 4 && rc == MPI_SUCCESS; it++) {
        for (int k = 0; k < N; k++)
            a[k] = val(rank, k, it, seed), b[k] = val(rank, k, it + 50, seed), c[k] = val(rank, k, it + 99, seed);
        if ((rc = agx_iallgather(a, N, MPI_INT, ra, N, MPI_INT, comm, &q[0])) == MPI_SUCCESS &&
            (rc = agx_start(&q[1])) == MPI_SUCCESS)
            rc = agx_iallgather(c, N, MPI_INT, rc_, N, MPI_INT, other, &q[2]);
        /* the progress rule: a blocking agx call on `other` while the three are active,
         * on half of the ranks before their waits and on the other half after */
        if (rc == MPI_SUCCESS && rank % 2 == 0)
            rc = agx_allgather(&one, 1, MPI_INT, x, 1, MPI_INT, other);
        if (rc == MPI_SUCCESS) {
            if ((rank + it) % 3 == 0)
                rc = agx_waitall(3, q);
            else if ((rank + it) % 3 == 1 && it % 2 == 1) { /* agx_progress alone completes them */
                int left;
                while ((left = agx_progress()) > 0)
                    ok = ok && left <= 3;
                rc = agx_waitall(3, q);
            } else
                for (int k = 2; k >= 0 && rc == MPI_SUCCESS; k--) {
                    int flag = 0, j = (k + rank) % 3;
                    while (rc == MPI_SUCCESS && !flag)
                        rc = agx_test(&q[j], &flag);
                }
        }
        if (rc == MPI_SUCCESS && rank % 2 == 1)
            rc = agx_allgather(&one, 1, MPI_INT, x, 1, MPI_INT, other);
        PMPI_Allgather(a, N, MPI_INT, ref, N, MPI_INT, comm);
        ok = ok && !memcmp(ra, ref, sizeof(int) * (size_t)N * (size_t)size);
        PMPI_Allgather(b, N, MPI_INT, ref, N, MPI_INT, comm);
        ok = ok && !memcmp(rb, ref, sizeof(int) * (size_t)N * (size_t)size);
        PMPI_Allgather(c, N, MPI_INT, ref, N, MPI_INT, other);
        ok = ok && !memcmp(rc_, ref, sizeof(int) * (size_t)N * (size_t)size) && q[0] == NULL && q[2] == NULL;
    }
    agx_request_free(&q[1]);
    ok = ok && agx_progress() == 0;
    CHECK(rc == MPI_SUCCESS && ok, "three outstanding requests on two communicators (agx_test, agx_waitall, "
          "agx_progress): rc %d", rc);
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHER, NULL);
    agx_comm_set_algorithm(other, AGX_OP_ALLGATHER, NULL);
}

/* allreduce and alltoallv requests (the library's call at each start) */
static void others(MPI_Comm comm, unsigned seed)
{
    int n = 9, s[9], r[9], ref[9], rc = MPI_SUCCESS, ok = 1;
    agx_request q;
    int na = agx_algorithm_count(AGX_OP_ALLREDUCE, AGX_KIND_INTRA);
    for (int i = -1; i < na; i++)
        for (int c = 0; c < 6; c++) { /* persistent or not x (int sum, int max in place, MPI_2INT maxloc) */
            const char *name = "auto", *desc, *ran = "?";
            if (i >= 0)
                agx_algorithm_info(AGX_OP_ALLREDUCE, AGX_KIND_INTRA, i, &name, &desc);
            agx_comm_set_algorithm(comm, AGX_OP_ALLREDUCE, i >= 0 ? name : NULL);
            int persistent = c % 2, inplace = c / 2 == 1, cnt = c / 2 == 2 ? 4 : n, good = 1;
            MPI_Datatype t = c / 2 == 2 ? MPI_2INT : MPI_INT;
            MPI_Op op = c / 2 == 2 ? MPI_MAXLOC : inplace ? MPI_MAX : MPI_SUM;
            const void *sb = inplace ? MPI_IN_PLACE : s;
            rc = persistent ? agx_allreduce_init(sb, r, cnt, t, op, comm, MPI_INFO_NULL, &q) : MPI_SUCCESS;
            for (int it = 0; it < 3 && rc == MPI_SUCCESS; it++) {
                for (int k = 0; k < n; k++)
                    s[k] = val(rank, k, it + c, seed) % 1000;
                if (inplace)
                    memcpy(r, s, sizeof r);
                rc = persistent ? agx_start(&q) : agx_iallreduce(sb, r, cnt, t, op, comm, &q);
                if (rc == MPI_SUCCESS)
                    rc = agx_wait(&q);
                PMPI_Allreduce(s, ref, cnt, t, op, comm);
                good = good && !memcmp(r, ref, sizeof(int) * (size_t)n);
            }
            if (persistent)
                agx_request_free(&q);
            agx_comm_last_algorithm(comm, AGX_OP_ALLREDUCE, &ran);
            ok = ok && good && rc == MPI_SUCCESS;
            if (!good || rc != MPI_SUCCESS)
                fprintf(stderr, "rank %d: %s allreduce %s (ran %s) case %d: rc %d\n", rank,
                        persistent ? "persistent" : "non-blocking", name, ran, c, rc);
        }
    agx_comm_set_algorithm(comm, AGX_OP_ALLREDUCE, NULL);
    CHECK(rc == MPI_SUCCESS && ok, "allreduce requests, every algorithm, int sum, int max in place, MPI_2INT "
          "maxloc: rc %d", rc);
    int *sc = malloc(sizeof(int) * 4 * (size_t)size), *sd = sc + size, *rcn = sd + size, *rd = rcn + size;
    int *sbuf = malloc(sizeof(int) * 4 * (size_t)size + 4), *rbuf = malloc(sizeof(int) * 4 * (size_t)size + 4),
        *rref = malloc(sizeof(int) * 4 * (size_t)size + 4);
    for (int j = 0, o = 0; j < size; j++, o += 4)
        sc[j] = (rank + j) % 4, sd[j] = o, rcn[j] = (j + rank) % 4, rd[j] = o;
    for (int k = 0; k < 4 * size; k++)
        sbuf[k] = val(rank, k, 7, seed);
    memset(rbuf, 0, sizeof(int) * 4 * (size_t)size);
    memset(rref, 0, sizeof(int) * 4 * (size_t)size);
    rc = agx_ialltoallv(sbuf, sc, sd, MPI_INT, rbuf, rcn, rd, MPI_INT, comm, &q);
    if (rc == MPI_SUCCESS)
        rc = agx_wait(&q);
    PMPI_Alltoallv(sbuf, sc, sd, MPI_INT, rref, rcn, rd, MPI_INT, comm);
    CHECK(rc == MPI_SUCCESS && !memcmp(rbuf, rref, sizeof(int) * 4 * (size_t)size), "ialltoallv: rc %d", rc);
    free(sc), free(sbuf), free(rbuf), free(rref);
}

/* Persistent alltoallv: every kernel forced (and the default), planned where it is one
 * schedule, started 3 times with new contents, on an uneven pattern and an all-to-many one
 * (receivers 0 and p/2), MPI_INT and a type with holes, against PMPI_Alltoallv. */
static void a2a_persistent(MPI_Comm comm, MPI_Datatype holes, unsigned seed)
{
    int n = agx_algorithm_count(AGX_OP_ALLTOALLV, AGX_KIND_INTRA), ok = 1, cases = 0;
    int *sc = malloc(sizeof(int) * 4 * (size_t)size), *sd = sc + size, *rcn = sd + size, *rd = rcn + size;
    size_t bytes = sizeof(int) * 3 * 4 * (size_t)size; /* 4 elements of at most 3 ints per pair */
    char *sbuf = malloc(bytes), *rbuf = malloc(bytes), *rref = malloc(bytes);
    for (int i = -1; i < n; i++)
        for (int c = 0; c < 4; c++) {
            const char *name = "auto", *desc, *ran = "?";
            if (i >= 0)
                agx_algorithm_info(AGX_OP_ALLTOALLV, AGX_KIND_INTRA, i, &name, &desc);
            MPI_Datatype t = c & 1 ? holes : MPI_INT;
            int many = c >> 1, good = 1, rc;
            for (int j = 0; j < size; j++) {
                int recv_j = j == 0 || j == size / 2, recv_me = rank == 0 || rank == size / 2;
                sc[j] = many ? 2 * recv_j : (rank + j) % 4;
                rcn[j] = many ? 2 * recv_me : (j + rank) % 4;
                sd[j] = rd[j] = 4 * j;
            }
            agx_comm_set_algorithm(comm, AGX_OP_ALLTOALLV, i >= 0 ? name : NULL);
            agx_request q = AGX_REQUEST_NULL;
            rc = agx_alltoallv_init(sbuf, sc, sd, t, rbuf, rcn, rd, t, comm, MPI_INFO_NULL, &q);
            for (int it = 0; it < 3 && rc == MPI_SUCCESS; it++) {
                for (size_t k = 0; k < bytes / sizeof(int); k++)
                    ((int *)sbuf)[k] = val(rank, (int)k, it + 11 * c, seed);
                memset(rbuf, 0x5a, bytes), memset(rref, 0x5a, bytes);
                if ((rc = agx_start(&q)) == MPI_SUCCESS)
                    rc = agx_wait(&q);
                PMPI_Alltoallv(sbuf, sc, sd, t, rref, rcn, rd, t, comm);
                good = good && !memcmp(rbuf, rref, bytes);
            }
            agx_comm_last_algorithm(comm, AGX_OP_ALLTOALLV, &ran);
            agx_request_free(&q);
            cases++;
            /* a kernel that is one schedule runs as a plan, the others as the library's call */
            int plans = i >= 0 && strcmp(name, "tam") && strcmp(name, "native");
            good = good && (i < 0 || !strcmp(ran, plans ? name : "native"));
            if (!good || rc != MPI_SUCCESS) {
                ok = 0;
                fprintf(stderr, "rank %d: persistent alltoallv %s (ran %s) case %d: rc %d, %s (seed %u)\n", rank,
                        name, ran, c, rc, good ? "same" : "differs from PMPI", seed);
            }
        }
    agx_comm_set_algorithm(comm, AGX_OP_ALLTOALLV, NULL);
    CHECK(ok, "persistent alltoallv, %d cases: every kernel, uneven and all-to-many, MPI_INT and holes", cases);
    free(sc), free(sbuf), free(rbuf), free(rref);
}

/* agx_request_mpi: with the progress thread the request completes in MPI_Waitall beside a
 * point-to-point one; without it the hand-over is refused and the request stays agx's. */
static void handed_over(MPI_Comm comm, unsigned seed)
{
    int a[4], r[4 * 64], ref[4 * 64], tok = rank, got = -1, rc, ok = 1;
    for (int it = 0; it < 3; it++) {
        agx_request q;
        MPI_Request m[3];
        MPI_Status st[3];
        for (int k = 0; k < 4; k++)
            a[k] = val(rank, k, it, seed);
        rc = agx_iallgather(a, 4, MPI_INT, r, 4, MPI_INT, comm, &q);
        if (agx_progress_async()) {
            if (rc == MPI_SUCCESS)
                rc = agx_request_mpi(&q, &m[0]);
            MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 9, comm, &m[1]);
            MPI_Isend(&tok, 1, MPI_INT, (rank + 1) % size, 9, comm, &m[2]);
            if (rc == MPI_SUCCESS)
                rc = MPI_Waitall(3, m, st);
            ok = ok && q == AGX_REQUEST_NULL && got == (rank + size - 1) % size;
        } else {
            int refused = rc == MPI_SUCCESS ? agx_request_mpi(&q, &m[0]) : MPI_SUCCESS;
            ok = ok && refused != MPI_SUCCESS && q != AGX_REQUEST_NULL;
            if (rc == MPI_SUCCESS)
                rc = agx_wait(&q);
        }
        PMPI_Allgather(a, 4, MPI_INT, ref, 4, MPI_INT, comm);
        ok = ok && rc == MPI_SUCCESS && !memcmp(r, ref, sizeof(int) * 4 * (size_t)size);
    }
    CHECK(ok, "agx_request_mpi (progress thread %s): rc %d", agx_progress_async() ? "on" : "off", rc);
}

static int cls(int code)
{
    int c = code;
    if (code != MPI_SUCCESS)
        MPI_Error_class(code, &c);
    return c;
}

static void errors(MPI_Comm comm)
{
    int s = rank, r[64];
    agx_request q = AGX_REQUEST_NULL;
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHER, "bruck");
    int rc = agx_allgather_init(&s, 1, MPI_INT, r, 1, MPI_INT, comm, MPI_INFO_NULL, &q);
    int rc2 = rc == MPI_SUCCESS ? agx_start(&q) : rc, again = agx_start(&q), fr = agx_request_free(&q);
    int w = agx_wait(&q), fr2 = agx_request_free(&q);
    CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && cls(again) == MPI_ERR_REQUEST && cls(fr) == MPI_ERR_REQUEST &&
          w == MPI_SUCCESS && fr2 == MPI_SUCCESS && q == AGX_REQUEST_NULL,
          "start an active request %d, free it %d (MPI_ERR_REQUEST); wait %d, free %d", again, fr, w, fr2);
    /* an init whose sendcount is bad on rank 0 alone fails on every rank */
    rc = agx_allgather_init(&s, rank == 0 ? -1 : 1, MPI_INT, r, 1, MPI_INT, comm, MPI_INFO_NULL, &q);
    CHECK(rc != MPI_SUCCESS && q == AGX_REQUEST_NULL && (rank != 0 || cls(rc) == MPI_ERR_COUNT),
          "an init bad on rank 0 only: rc %d on every rank", rc);
    /* a non-blocking call bad on the last rank alone (allgather and allreduce plans, the
     * library's alltoallv): that rank returns the error, the others' requests complete with
     * it (nobody waits for the rank that never started), then the communicator works on */
    int sc[64], sd[64], last = rank == size - 1;
    for (int i = 0; i < size; i++)
        sc[i] = 1, sd[i] = i;
    if (last)
        sc[0] = -1;
    agx_comm_set_algorithm(comm, AGX_OP_ALLREDUCE, "recursive_doubling");
    for (int k = 0; k < 3; k++) {
        rc = k == 0 ? agx_iallgather(&s, 1, MPI_INT, r, last ? -1 : 1, MPI_INT, comm, &q)
           : k == 1 ? agx_iallreduce(&s, r, last ? -1 : 1, MPI_INT, MPI_SUM, comm, &q)
                    : agx_ialltoallv(sd, sc, sd, MPI_INT, r, sc, sd, MPI_INT, comm, &q);
        int bad = last ? rc : (rc == MPI_SUCCESS ? agx_wait(&q) : rc);
        CHECK(cls(bad) == MPI_ERR_COUNT && q == AGX_REQUEST_NULL && (last || rc == MPI_SUCCESS),
              "non-blocking call %d bad on rank %d only: rc %d at the call, %d in total", k, size - 1, rc, bad);
        r[0] = -1;
        rc = agx_iallreduce(&s, r, 1, MPI_INT, MPI_SUM, comm, &q);
        rc = rc == MPI_SUCCESS ? agx_wait(&q) : rc;
        CHECK(rc == MPI_SUCCESS && r[0] == size * (size - 1) / 2, "the call after it: rc %d, sum %d", rc, r[0]);
    }
    agx_comm_set_algorithm(comm, AGX_OP_ALLREDUCE, NULL);
    /* starting after MPI_Comm_free */
    MPI_Comm d;
    MPI_Comm_dup(comm, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    rc = agx_allgather_init(&s, 1, MPI_INT, r, 1, MPI_INT, d, MPI_INFO_NULL, &q);
    MPI_Comm_free(&d);
    rc2 = agx_start(&q);
    fr = agx_request_free(&q);
    CHECK(rc == MPI_SUCCESS && cls(rc2) == MPI_ERR_REQUEST && fr == MPI_SUCCESS, "start after MPI_Comm_free: %d",
          rc2);
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHER, NULL);
}

int main(int argc, char **argv)
{
    mt_run run;
    mt_start(&argc, &argv, &run);
    rank = run.rank, size = run.size;
    unsigned rs = run.seed + 17;
    if (rank == 0)
        printf("test_requests: %d ranks, seed %u (AGX_TEST_SEED=%u reproduces)\n", size, run.seed, run.seed);
    MPI_Comm comm, other;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(other, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Datatype holes, two; /* 2 ints of every 3: a type with holes */
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_create_resized(two, 0, 3 * sizeof(int), &holes);
    MPI_Type_free(&two);
    MPI_Type_commit(&holes);
    int n = agx_algorithm_count(AGX_OP_ALLGATHER, AGX_KIND_INTRA);
    for (int i = -1; i < n; i++) {
        const char *name = "auto", *desc;
        if (i >= 0)
            agx_algorithm_info(AGX_OP_ALLGATHER, AGX_KIND_INTRA, i, &name, &desc);
        if (!strcmp(name, "bdr") || !strcmp(name, "bslb") || (run.only && !strstr(run.only, name)))
            continue; /* PAP-aware: need agx_pat_init (test_pap) */
        for (int c = 0; c < (run.quick ? 2 : 8); c++) {
            int v = c & 1, inplace = (c >> 1) & 1, unit = (c >> 2) & 1 ? 0 : 3;
            MPI_Datatype t = (c + i) % 3 == 0 ? holes : MPI_INT;
            ag_case(comm, name, v, inplace, t, unit, 1, &rs, run.seed);
            ag_case(comm, name, v, inplace, t, unit + 1, 0, &rs, run.seed);
        }
    }
    outstanding(comm, other, run.seed);
    others(comm, run.seed);
    a2a_persistent(comm, holes, run.seed);
    handed_over(comm, run.seed);
    errors(comm);
    MPI_Type_free(&holes);
    MPI_Comm_free(&comm);
    MPI_Comm_free(&other);
    if (rank == 0)
        printf("test_requests: %d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
