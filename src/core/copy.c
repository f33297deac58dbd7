/* Local copies between typed buffers (MPIR_Localcopy's role). */
#include "agx_internal.h"

#include <pthread.h>
#include <string.h>

int agx_type_is_named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    return comb == MPI_COMBINER_NAMED;
}

static MPI_Comm self_comm = MPI_COMM_NULL;
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;

static int self_comm_free(MPI_Comm c, int k, void *v, void *e)
{
    (void)c; (void)v; (void)e;
    if (self_comm != MPI_COMM_NULL)
        MPI_Comm_free(&self_comm);
    MPI_Comm_free_keyval(&k);
    return MPI_SUCCESS;
}

/* A private MPI_COMM_SELF duplicate, so local copies never match user messages. */
static int get_self_comm(MPI_Comm *out)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&self_lock);
    if (self_comm == MPI_COMM_NULL) {
        int kv;
        rc = MPI_Comm_dup(MPI_COMM_SELF, &self_comm);
        if (rc == MPI_SUCCESS) {
            MPI_Comm_set_errhandler(self_comm, MPI_ERRORS_RETURN);
            MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_comm_free, &kv, NULL);
            MPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL);
        }
    }
    *out = self_comm;
    pthread_mutex_unlock(&self_lock);
    return rc;
}

int agx_localcopy(const void *src, int scount, MPI_Datatype stype, void *dst, int dcount,
                  MPI_Datatype dtype)
{
    int ssize, dsize;
    MPI_Type_size(stype, &ssize);
    MPI_Type_size(dtype, &dsize);
    if ((long long)ssize * scount == 0)
        return MPI_SUCCESS;
    if (agx_type_is_named(stype) && agx_type_is_named(dtype)) {
        memcpy(dst, src, (size_t)ssize * (size_t)scount);
        return MPI_SUCCESS;
    }
    MPI_Comm self;
    int rc = get_self_comm(&self);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Sendrecv(src, scount, stype, 0, AGX_TAG, dst, dcount, dtype, 0, AGX_TAG, self,
                        MPI_STATUS_IGNORE);
}

int agx_copy_own_block(const agx_args *a)
{
    const agx_ag_args *g = &a->u.ag;
    if (g->sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    const agx_blocks *b = &g->blk;
    return agx_localcopy(g->sendbuf, g->sendcount, g->sendtype,
                         b->buf + agx_blk_displ(b, a->rank) * b->extent,
                         agx_blk_count(b, a->rank), b->type);
}
