/*
 * test_badinput's communicators (badinput.h): the three kinds a case runs on, the
 * counting error handler that sees each failing call, and the calls of each kind.
 */
#include "agx.h"
#include "badinput.h"

#include <string.h>

int handler_calls, handler_class;

void counting_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

const char *msg_of(int rc)
{
    static char s[MPI_MAX_ERROR_STRING];
    int len;
    agx_error_string(rc, s, &len);
    return s;
}

int class_of(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

const char *const kind_name[K_N] = {"intra", "inter", "split"};

static void set_handler(MPI_Comm c, int fatal)
{
    if (fatal) {
        MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL);
        return;
    }
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(counting_handler, &eh);
    MPI_Comm_set_errhandler(c, eh);
    MPI_Errhandler_free(&eh);
}

int make_comm(int kind, int fatal, ctxc *c)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->color = rank % 2;
    if (kind == K_INTER) {
        if (p < 2)
            return 0;
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, c->color, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, c->color ? 0 : 1, 7, &c->comm);
        MPI_Comm_free(&half);
    } else {
        if (kind == K_SPLIT && p < 2)
            return 0;
        MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
    }
    c->nremote = kind == K_INTRA ? p : (c->color ? (p + 1) / 2 : p / 2);
    set_handler(c->comm, fatal);
    return 1;
}

/* One allgather / allgatherv of the kind's flavour. */
int call_ag(const ctxc *c, const void *sb, int sc, MPI_Datatype st, void *rb, int rc_,
                   MPI_Datatype rt)
{
    if (c->kind == K_SPLIT)
        return agx_intergroup_allgather(sb, sc, st, rb, rc_, rt, c->comm, c->color);
    return agx_allgather(sb, sc, st, rb, rc_, rt, c->comm);
}

int call_agv(const ctxc *c, const void *sb, int sc, MPI_Datatype st, void *rb, const int *cnt,
                    const int *dsp, MPI_Datatype rt)
{
    if (c->kind == K_SPLIT)
        return agx_intergroup_allgatherv(sb, sc, st, rb, cnt, dsp, rt, c->comm, c->color);
    return agx_allgatherv(sb, sc, st, rb, cnt, dsp, rt, c->comm);
}

/* A valid call after a failure: the communicator still works. */
int still_works(const ctxc *c)
{
    int sb = rank * 3 + 1, rb[1024];
    handler_calls = 0;
    int rc = call_ag(c, &sb, 1, MPI_INT, rb, 1, MPI_INT);
    return rc == MPI_SUCCESS && handler_calls == 0;
}
