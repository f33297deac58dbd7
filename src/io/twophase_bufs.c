/*
 * The two-phase write's round buffers (send, receive, write: up to cb_buffer_size each)
 * and its requests, pieces and records (16 B per piece; an aggregator's records, merge
 * order, rounds and senders, or its bitmap of written bytes), kept from one call to the
 * next. Freshly allocated, every call paid the kernel's page faults and zeroing of tens
 * of MiB: a BTIO-shaped write of 35 MB at 4 ranks spent 45 ms in the engine with new
 * buffers, 24 ms with reused ones. At most SLOTS buffers of at most 64 MiB each, 256 MiB
 * together, are kept, from one file to the next too (a program that writes a file per
 * step; E3SM-IO F through the drop-in, a file per write at 8 ranks: 120-140 ms per
 * MPI_File_write_all when the last close freed them, 60-69 ms kept), and all of them are freed at MPI_Finalize (agx_at_finalize).
 */
#include "twophase.h"

#include <pthread.h>
#include <stdlib.h>

#define SLOTS 16
#define KEEP_MAX ((size_t)64 << 20)    /* the largest buffer kept */
#define KEEP_TOTAL ((size_t)256 << 20) /* all of them together */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t n;
    int busy;
} slot[SLOTS];

void *agx_tp_buf(size_t n)
{
    void *p = NULL;
    n = n ? n : 1;
    pthread_mutex_lock(&mu);
    int best = -1;
    for (int i = 0; i < SLOTS; i++) /* the smallest idle buffer that holds n */
        if (slot[i].p && !slot[i].busy && slot[i].n >= n && (best < 0 || slot[i].n < slot[best].n))
            best = i;
    if (best >= 0)
        slot[best].busy = 1, p = slot[best].p;
    pthread_mutex_unlock(&mu);
    return p ? p : malloc(n);
}

void agx_tp_buf_free(void *p, size_t n)
{
    if (!p)
        return;
    n = n ? n : 1;
    pthread_mutex_lock(&mu);
    int i = 0, stored = 0;
    while (i < SLOTS && slot[i].p != p)
        i++;
    if (i < SLOTS)
        slot[i].busy = 0, p = NULL;
    else if (n <= KEEP_MAX) { /* kept in an empty slot, or in place of a smaller idle one */
        int j = -1;
        size_t kept = 0;
        for (int k = 0; k < SLOTS; k++) {
            kept += slot[k].n;
            if (!slot[k].busy && (!slot[k].p || slot[k].n < n) && (j < 0 || slot[k].n < slot[j].n))
                j = k;
        }
        if (j >= 0 && kept - slot[j].n + n <= KEEP_TOTAL) {
            free(slot[j].p);
            slot[j].p = p, slot[j].n = n, slot[j].busy = 0, p = NULL;
            stored = 1;
        }
    }
    pthread_mutex_unlock(&mu);
    free(p);
    if (stored) /* outside mu: the finalize list has its own lock; registered once */
        agx_at_finalize(agx_tp_bufs_release);
}

void agx_tp_bufs_release(void)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < SLOTS; i++)
        if (!slot[i].busy) {
            free(slot[i].p);
            slot[i].p = NULL, slot[i].n = 0;
        }
    pthread_mutex_unlock(&mu);
}

/* A call's state: the kept buffers back to the pool, the rest freed. */
void agx_tp_free(agx_tp *t)
{
    agx_tp_buf_free(t->req, sizeof *t->req * (size_t)(t->n > 0 ? t->n : 1));
    free(t->own_rec);
    free(t->runs);
    free(t->tlen);
    free(t->treq);
    agx_tp_buf_free(t->pc, sizeof *t->pc * (size_t)t->pc_cap);
    free(t->cnt_s);
    free(t->rcur);
    free(t->snz);
    free(t->aggr_rank);
    size_t m = (size_t)(t->nmeta ? t->nmeta : 1);
    agx_tp_buf_free(t->meta_s, (size_t)t->meta_cap * AGX_TP_META_BYTES);
    agx_tp_buf_free(t->meta_r, m * AGX_TP_META_BYTES);
    free(t->mstart);
    agx_tp_buf_free(t->merged, m * sizeof(long long));
    agx_tp_buf_free(t->rround, m * sizeof(long long));
    agx_tp_buf_free(t->rsender, m * sizeof(int));
    agx_tp_buf_free(t->sbuf, (size_t)t->sbytes_max);
    agx_tp_buf_free(t->rbuf, (size_t)t->rbytes_max);
    agx_tp_buf_free(t->wbuf, (size_t)t->rbytes_max);
    free(t->vbuf);
    agx_tp_buf_free(t->bits, (size_t)((t->fd.dsize + 63) / 64 + 1) * sizeof *t->bits);
    agx_tp_buf_free(t->rr, (size_t)t->nrounds * 4 * sizeof *t->rr);
    agx_tp_buf_free(t->rend, m * 2 * sizeof(long long));
    agx_a2a_pattern_free(&t->pt);
}
