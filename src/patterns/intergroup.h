/*
 * Intergroup exchange plans (KangTraff19): the bytes of a sending group G, indexed in rank
 * order ("global byte index", Section 4.1), are cut into nH consecutive segments, one per
 * receiving process of group H. A partition is an array bnd[0..nH] with bnd[0] = 0 and
 * bnd[nH] = the group's total bytes; receiver h gets [bnd[h], bnd[h+1]).
 *
 * Sender g owns [R_g, R_g + k_g) and sends the intersection with each receiver's
 * segment, receivers in ascending order. A receiver posts its senders in the order of
 * Section 4.1: the higher-ranked multi-target sender first, then the senders that send
 * only to it (ascending), then the lower-ranked multi-target sender.
 * No MPI here: tests/unit/test_intergroup.c checks every plan exhaustively.
 */
#ifndef AGX_INTERGROUP_H
#define AGX_INTERGROUP_H

/* Start (offset) of part i when n items are split into m parts, the first n mod m parts
 * one larger: floor/ceil balancing of Algorithm 2, lines 3-10. */
long long agx_balanced_start(long long n, int m, int i);

/* Algorithm 2: balanced partition of total bytes into nH segments. */
void agx_partition_balanced(long long total, int nH, long long *bnd);

/* Algorithm 1 (uniform blocks of k bytes, nG senders, nH receivers):
 *   nG >= nH: subgroups s_0..s_{nH-1} of G (sizes ceil/floor(nG/nH)); receiver h gets the
 *             whole blocks of s_h;
 *   nG <  nH: subgroups s_0..s_{nG-1} of H; block j is split into |s_j| balanced pieces,
 *             piece i to the i-th member of s_j. */
void agx_partition_subgroups(int nG, int nH, long long k, long long *bnd);

typedef struct {
    int peer;           /* rank in the other group */
    long long off;      /* byte offset: in the sender's block (send) or the receiver's segment (recv) */
    long long len;      /* bytes, > 0 */
} agx_piece;

/* Sends of sender g (block [R, R+k) of its group's index space) under partition bnd of
 * nH segments; writes at most nH pieces, returns their number (zero-length pieces are
 * omitted). */
int agx_plan_sends(long long R, long long k, const long long *bnd, int nH, agx_piece *out);

/* Receives of receiver h from the nG senders whose prefix sums are pre[0..nG]
 * (pre[g] = R_g, pre[nG] = total), under partition bnd; pieces in the posting order of
 * Section 4.1. Returns their number. */
int agx_plan_recvs(int h, const long long *bnd, const long long *pre, int nG, agx_piece *out);

#endif
