/*
 * The zero-copy Allgather(V) (SharedNotify Sec. II: "each local process is able to access
 * the final result buffer, thus avoiding ... the last node-internal copy"): shm_notify
 * leaves the result in the node-shared segment and the caller reads it there until
 * agx_shared_release. Where shm_notify cannot run (one node, no shared memory, no RMA
 * between the nodes), the call runs agx's choice for agx_allgatherv into a private
 * buffer that the handle owns: the same contract, one copy more.
 */
#include "api.h"
#include "coll_allgather.h"
#include "notify.h"

#include <stdlib.h>

/* The result is laid out like a receive buffer of recvtype: that needs a type whose
 * bytes are contiguous from offset 0 and non-negative displacements. */
static int check_dense(const agx_args *a, size_t *span)
{
    const agx_blocks *b = &a->u.ag.blk;
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(b->type, &tlb, &text);
    if (tlb != 0 || text != b->extent || b->type_size != b->extent)
        return agx_error(MPI_ERR_TYPE, "agx_allgatherv_shared: recvtype must be contiguous (no holes, lower "
                         "bound 0): the result is read as recvcounts[i] elements at displs[i]");
    *span = 0;
    for (int i = 0; i < a->p; i++) {
        if (agx_blk_displ(b, i) < 0)
            return agx_error(MPI_ERR_ARG, "agx_allgatherv_shared: displs[%d] = %ld is negative", i,
                             (long)agx_blk_displ(b, i));
        size_t end = (size_t)((agx_blk_displ(b, i) + agx_blk_count(b, i)) * b->extent);
        if (agx_blk_count(b, i) > 0 && end > *span)
            *span = end;
    }
    return MPI_SUCCESS;
}

static int shared_call(agx_args *a, const void **result, agx_shared_handle *h)
{
    const char *fn = "agx_allgatherv_shared";
    size_t span = 0;
    int rc;
    if (!result || !h)
        return agx_error(MPI_ERR_ARG, "%s: result or handle is NULL", fn);
    *result = NULL;
    h->buf = h->seg = NULL;
    if (a->u.ag.sendbuf == MPI_IN_PLACE)
        return agx_error(MPI_ERR_ARG, "%s: MPI_IN_PLACE has no receive buffer to take the data from", fn);
    if ((rc = agx_ag_prepare_intra(a, fn)) != MPI_SUCCESS || (rc = check_dense(a, &span)) != MPI_SUCCESS)
        return rc;
    int idx = agx_alg_find(a->op, AGX_KIND_INTRA, "shm_notify");
    const agx_alg *alg = agx_alg_at(a->op, AGX_KIND_INTRA, idx);
    if (!agx_alg_violation(alg, a, NULL)) {
        a->alg = alg;
        a->sel->last[a->op] = idx;
        a->sel->last_kind[a->op] = AGX_KIND_INTRA;
        agx_hold *t;
        if ((rc = alg->fn(a)) != MPI_SUCCESS) /* the call completed everywhere: local from here */
            return rc;
        if (!(t = malloc(sizeof *t)))
            return agx_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        t->m = a->ctx->shm[AGX_SHM_NOTIFY];
        t->m->hold = t;
        h->seg = t;
        *result = *a->u.ag.shared;
        return MPI_SUCCESS;
    }
    /* the fallback: a private result, agreed allocation (a rank without memory must not
     * leave the others in the collective) */
    void *buf = span ? malloc(span) : NULL;
    int mine = span && !buf ? agx_error(MPI_ERR_NO_MEM, "%s: no memory for %zu bytes", fn, span) : MPI_SUCCESS;
    if ((rc = agx_agree(a->comm, a->rank, mine, NULL, 0, fn, "ran out of memory")) != MPI_SUCCESS) {
        free(buf);
        return rc;
    }
    a->u.ag.shared = NULL;
    a->u.ag.recvbuf = a->u.ag.blk.buf = buf;
    if ((rc = agx_choose(a)) == MPI_SUCCESS)
        rc = a->alg->fn(a);
    if (rc != MPI_SUCCESS) {
        free(buf);
        return rc;
    }
    h->buf = buf;
    *result = buf;
    return MPI_SUCCESS;
}

int agx_allgatherv_shared(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int recvcounts[],
                          const int displs[], MPI_Datatype recvtype, MPI_Comm comm, const void **result,
                          agx_shared_handle *h)
{
    const void *res = NULL;
    agx_args a = {.op = AGX_OP_ALLGATHERV, .user_comm = comm,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvcounts = recvcounts, .displs = displs, .recvtype = recvtype, .shared = &res}};
    return agx_raise(comm, shared_call(&a, result, h));
}

int agx_shared_release(agx_shared_handle *h)
{
    if (!h)
        return MPI_SUCCESS;
    agx_hold *t = h->seg;
    free(h->buf);
    if (t && t->m) /* still the segment's result (not overwritten, comm not freed) */
        t->m->hold = NULL;
    free(t);
    h->buf = h->seg = NULL;
    return MPI_SUCCESS;
}
