/*
 * The operations agx implements, each with its environment variable and its tables
 * (one table file per operation family: src/coll/<op>/<op>_table.c). Adding an operation
 * = its table file + one line here + its argument part (agx_internal.h) + its entry point.
 */
#include "agx_internal.h"

#include <stddef.h>

extern const agx_table agx_allgather_intra_table, agx_allgather_inter_table;
extern const agx_table agx_alltoallv_intra_table, agx_alltoallv_inter_table;
extern const agx_table agx_allreduce_intra_table, agx_allreduce_inter_table;

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

const agx_op_desc *agx_op_get(agx_op op)
{
    return op >= 0 && op < AGX_OP_LAST ? &ops[op] : NULL;
}
