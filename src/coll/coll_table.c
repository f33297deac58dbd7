/*
 * The operations agx implements, each with its environment variable and its tables
 * (one table file per operation family: src/coll/<op>/<op>_table.c), installed in the
 * registry (src/select) before the first call. Adding an operation = its folder under
 * src/coll (table, runner, algorithms, header) + one line here + its argument part
 * (src/select/select.h) + its entry point (src/api).
 */
#include "coll.h"
#include "coll_allgather.h"
#include "coll_allreduce.h"
#include "coll_alltoallv.h"

#include <pthread.h>

static const agx_op_desc ops[AGX_OP_LAST] = {
    [AGX_OP_ALLGATHER] = {"allgather", "AGX_ALLGATHER_ALGORITHM",
                          {&agx_allgather_intra_table, &agx_allgather_inter_table}},
    [AGX_OP_ALLGATHERV] = {"allgatherv", "AGX_ALLGATHERV_ALGORITHM",
                           {&agx_allgather_intra_table, &agx_allgather_inter_table}},
    [AGX_OP_ALLTOALLV] = {"alltoallv", "AGX_ALLTOALLV_ALGORITHM",
                          {&agx_alltoallv_intra_table, &agx_alltoallv_inter_table}},
    [AGX_OP_ALLREDUCE] = {"allreduce", "AGX_ALLREDUCE_ALGORITHM",
                          {&agx_allreduce_intra_table, &agx_allreduce_inter_table}},
};

static void install(void) { agx_registry_install(ops); }

void agx_coll_install(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install);
}
