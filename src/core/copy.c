/* Local copies between typed buffers (MPIR_Localcopy's role). */
#include "core.h"

#include <limits.h>
#include <pthread.h>
#include <string.h>

int agx_type_common_size(MPI_Datatype t)
{
    if (t == MPI_BYTE || t == MPI_CHAR)
        return 1;
    if (t == MPI_INT || t == MPI_UNSIGNED)
        return (int)sizeof(int);
    if (t == MPI_DOUBLE)
        return (int)sizeof(double);
    if (t == MPI_FLOAT)
        return (int)sizeof(float);
    if (t == MPI_LONG_LONG)
        return (int)sizeof(long long);
    if (t == MPI_LONG)
        return (int)sizeof(long);
    return 0;
}

int agx_type_is_named(MPI_Datatype t)
{
    if (agx_type_common_size(t))
        return 1;
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    return comb == MPI_COMBINER_NAMED;
}

/* A named type whose elements are all data (size == extent), so that `n` of them are
 * n * size contiguous bytes: not the padded pairs (MPI_DOUBLE_INT is 12 bytes of data in
 * 16, MPI_SHORT_INT 6 in 8, MPI_LONG_DOUBLE_INT 20 in 32), whose holes a copy must keep. */
int agx_type_is_dense(MPI_Datatype t)
{
    if (agx_type_common_size(t))
        return 1;
    if (!agx_type_is_named(t))
        return 0;
    MPI_Count size;
    MPI_Aint lb, extent;
    MPI_Type_size_x(t, &size);
    MPI_Type_get_extent(t, &lb, &extent);
    return lb == 0 && (MPI_Aint)size == extent;
}

void agx_type_layout(MPI_Datatype t, long long *size, MPI_Aint *extent)
{
    int n = agx_type_common_size(t);
    if (n) {
        *size = n;
        if (extent)
            *extent = n;
        return;
    }
    MPI_Count c;
    MPI_Aint lb, ext;
    MPI_Type_size_x(t, &c);
    *size = c;
    if (extent) {
        MPI_Type_get_extent(t, &lb, &ext);
        *extent = ext;
    }
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
int agx_self_comm(MPI_Comm *out)
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

int agx_localcopy(const void *src, MPI_Aint scount, MPI_Datatype stype, void *dst, MPI_Aint dcount,
                  MPI_Datatype dtype)
{
    MPI_Count ssize, dsize;
    MPI_Aint lb, sext, dext;
    MPI_Type_size_x(stype, &ssize);
    MPI_Type_size_x(dtype, &dsize);
    if ((long long)ssize * scount == 0)
        return MPI_SUCCESS;
    if (agx_type_is_dense(stype) && stype == dtype) {
        memcpy(dst, src, (size_t)ssize * (size_t)scount);
        return MPI_SUCCESS;
    }
    MPI_Comm self;
    int rc = agx_self_comm(&self);
    if (rc != MPI_SUCCESS)
        return rc;
    if (scount <= AGX_MAX_PIECE && dcount <= AGX_MAX_PIECE)
        return MPI_Sendrecv(src, (int)scount, stype, 0, AGX_TAG, dst, (int)dcount, dtype, 0, AGX_TAG, self,
                            MPI_STATUS_IGNORE);
    /* beyond an int: pieces of equal signature (equal element sizes: the caller's case) */
    if (ssize != dsize)
        return agx_error(MPI_ERR_COUNT, "local copy of more than %d elements between types of "
                         "different sizes", AGX_MAX_PIECE);
    MPI_Type_get_extent(stype, &lb, &sext);
    MPI_Type_get_extent(dtype, &lb, &dext);
    for (MPI_Aint o = 0; o < scount && rc == MPI_SUCCESS; o += AGX_MAX_PIECE) {
        int n = (int)(scount - o < AGX_MAX_PIECE ? scount - o : AGX_MAX_PIECE);
        rc = MPI_Sendrecv((const char *)src + o * sext, n, stype, 0, AGX_TAG, (char *)dst + o * dext, n, dtype,
                          0, AGX_TAG, self, MPI_STATUS_IGNORE);
    }
    return rc;
}

int agx_pack(void *typed, MPI_Aint count, MPI_Datatype t, char *bytes, int unpack)
{
    MPI_Count size;
    MPI_Aint lb, ext;
    MPI_Comm self;
    MPI_Type_size_x(t, &size);
    MPI_Type_get_extent(t, &lb, &ext);
    if (size * count == 0)
        return MPI_SUCCESS;
    if (size > INT_MAX)
        return agx_error(MPI_ERR_COUNT, "a datatype of more than INT_MAX bytes cannot be packed");
    int rc = agx_self_comm(&self);
    MPI_Aint per = INT_MAX / size < AGX_MAX_PIECE ? INT_MAX / size : AGX_MAX_PIECE;
    for (MPI_Aint o = 0; o < count && rc == MPI_SUCCESS; o += per) {
        int n = (int)(count - o < per ? count - o : per), pos = 0;
        char *tp = (char *)typed + o * ext, *bp = bytes + o * size;
        if (typed == MPI_BOTTOM) /* MPICH 4.0's MPI_Pack refuses it ("Null pointer in parameter inbuf") */
            rc = unpack ? agx_localcopy(bp, n * size, MPI_BYTE, tp, n, t)
                        : agx_localcopy(tp, n, t, bp, n * size, MPI_BYTE);
        else
            rc = unpack ? MPI_Unpack(bp, (int)(n * size), &pos, tp, n, t, self)
                        : MPI_Pack(tp, n, t, bp, (int)(n * size), &pos, self);
    }
    return rc;
}

int agx_type_check(MPI_Datatype t, const char *fn, const char *what)
{
    if (t == MPI_DATATYPE_NULL)
        return agx_error(MPI_ERR_TYPE, "%s: %s is MPI_DATATYPE_NULL", fn, what);
    if (agx_type_is_named(t))
        return MPI_SUCCESS;
    /* packing nothing still checks the type: an uncommitted one fails here, on every rank
     * that passes it, before any message */
    MPI_Comm self;
    char dummy[1];
    int pos = 0, rc = agx_self_comm(&self);
    if (rc == MPI_SUCCESS && MPI_Pack(dummy, 0, t, dummy, 1, &pos, self) != MPI_SUCCESS)
        return agx_error(MPI_ERR_TYPE, "%s: %s is not a committed datatype (MPI_Type_commit)", fn, what);
    return rc;
}

/* A NULL buffer is an error when it would be read or written, unless the datatype
 * addresses memory absolutely (MPI_BOTTOM with a true lower bound). */
int agx_check_buffer(const void *buf, long long count, MPI_Datatype t, const char *what)
{
    int size;
    MPI_Aint lb, extent;
    if (buf || count == 0)
        return MPI_SUCCESS;
    MPI_Type_size(t, &size);
    MPI_Type_get_true_extent(t, &lb, &extent);
    if (size > 0 && lb == 0)
        return agx_error(MPI_ERR_BUFFER, "%s is NULL with %lld elements to transfer", what, count);
    return MPI_SUCCESS;
}

