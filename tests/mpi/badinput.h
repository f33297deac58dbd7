/*
 * test_badinput's shared pieces (badinput_comms.c): the three kinds of communicator a case
 * runs on and the handler that counts the calls it gets.
 */
#ifndef AGX_BADINPUT_H
#define AGX_BADINPUT_H

#include <mpi.h>

extern int rank, p;                     /* of MPI_COMM_WORLD (test_badinput.c) */
extern int handler_calls, handler_class; /* counting_handler: calls and the last class */

enum { K_INTRA, K_INTER, K_SPLIT, K_N };
extern const char *const kind_name[K_N];

typedef struct {
    int kind;
    MPI_Comm comm;
    int color;      /* split: my colour; inter: my group */
    int nremote;    /* blocks I receive */
} ctxc;

void counting_handler(MPI_Comm *comm, int *code, ...);
/* agx_error_string's message (a static buffer) and the MPI class of an error code. */
const char *msg_of(int rc);
int class_of(int rc);
/* The communicator of `kind` (under MPI_ERRORS_ARE_FATAL when fatal, else the counting
 * handler); 0 when the kind needs more ranks. */
int make_comm(int kind, int fatal, ctxc *c);
/* One allgather / allgatherv of the kind's flavour. */
int call_ag(const ctxc *c, const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt);
int call_agv(const ctxc *c, const void *sb, int sc, MPI_Datatype st, void *rb, const int *cnt, const int *dsp,
             MPI_Datatype rt);
/* A valid call after a failure: the communicator still works. */
int still_works(const ctxc *c);

#endif
