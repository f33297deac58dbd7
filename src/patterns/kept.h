/*
 * The id of a communicator the MPI-IO drop-in keeps from file to file (src/io/file_comm.c),
 * or of a context kept from a freed communicator for the next congruent one
 * (src/core/ctx_kept.c), agreed when it is made: every rank reserves a new number at every
 * open or set-up (its own counter, so two on one rank reserve two), and the id is the
 * largest of the ranks' reservations with the reservation of its rank 0 (the same process
 * on every communicator of those ranks in that order). Two made at once by two threads have different rank-0
 * reservations, so one id names one communicator on every rank of it; a file takes a kept
 * one only where every rank offers the same id. No MPI: tests/unit/test_kept.c drives the
 * reservations through every order.
 */
#ifndef AGX_KEPT_H
#define AGX_KEPT_H

#define AGX_KEPT_RES_MASK 0x3fffffffLL /* a reservation: 30 bits (a process's opens, wrapped) */

static inline long long agx_kept_id(long long max_reserved, long long rank0_reserved)
{
    return (max_reserved & AGX_KEPT_RES_MASK) << 31 | (rank0_reserved & AGX_KEPT_RES_MASK);
}

/* The ranks' offers agreed (MAX of id, MAX of -id): every rank offered this kept one. */
static inline int agx_kept_same(long long max_id, long long max_neg_id) { return max_id >= 0 && max_id == -max_neg_id; }

#endif
