/*
 * File domains and the aggregators' merge (filedomain.h).
 */
#include "filedomain.h"

#include <limits.h>
#include <stdlib.h>

int agx_fd_init(agx_fd *fd, agx_fd_style style, int naggr, long long lo, long long hi, long long cb,
                long long ss, int sc)
{
    if (naggr < 1 || cb < 1 || hi < lo || lo < 0 || (style == AGX_FD_STRIPED && (ss < 1 || sc < 1)) ||
        (style != AGX_FD_EVEN && style != AGX_FD_STRIPED))
        return -1;
    *fd = (agx_fd){.style = style, .naggr = naggr, .lo = lo, .hi = hi, .cb = cb, .ss = ss, .sc = sc};
    if (style == AGX_FD_EVEN)
        fd->dsize = hi > lo ? (hi - lo) / naggr + ((hi - lo) % naggr != 0) : 1; /* no overflow near
                                                                                  * LLONG_MAX */
    else
        fd->row0 = lo / ss / sc;
    return 0;
}

static long long min3(long long a, long long b, long long c)
{
    long long m = a < b ? a : b;
    return m < c ? m : c;
}

/* Lengths, never absolute ends, so that nothing overflows for a file offset near
 * LLONG_MAX: `room` is what is left of the aggregator's contiguous stretch from off. */
long long agx_fd_piece(const agx_fd *fd, long long off, long long end, int *aggr, long long *round,
                       long long *pos)
{
    long long L, room;
    if (fd->style == AGX_FD_EVEN) {
        long long a = (off - fd->lo) / fd->dsize;
        L = off - fd->lo - a * fd->dsize;
        *aggr = (int)a;
        room = fd->dsize - L;
    } else {
        long long u = off / fd->ss, q = u / fd->sc;
        int o = (int)(u % fd->sc), a = o % fd->naggr;
        long long units = (fd->sc - a + fd->naggr - 1) / fd->naggr; /* a's units per row */
        L = ((q - fd->row0) * units + o / fd->naggr) * fd->ss + off % fd->ss;
        *aggr = a;
        /* a's next unit is the next one in the file only with one aggregator (or one OST),
         * or across a row's end when its last OST is the row's last (a = 0) */
        if (fd->naggr == 1 || fd->sc == 1)
            room = end - off;
        else
            room = fd->ss - off % fd->ss + (o == fd->sc - 1 && a == 0) * fd->ss;
    }
    *round = L / fd->cb;
    *pos = L % fd->cb;
    return min3(end - off, room, fd->cb - *pos);
}

int agx_fd_chunk(const agx_fd *fd, long long off, int *aggr, long long *round, long long *clo, long long *chi)
{
    if (fd->style != AGX_FD_EVEN)
        return -1;
    long long a = (off - fd->lo) / fd->dsize, L = off - fd->lo - a * fd->dsize, pos = L % fd->cb;
    long long room = fd->dsize - L < fd->cb - pos ? fd->dsize - L : fd->cb - pos;
    *aggr = (int)a, *round = L / fd->cb, *clo = off - pos;
    *chi = room > LLONG_MAX - off ? LLONG_MAX : off + room;
    return 0;
}

/* The heap holds (head key, list) pairs inline, ordered by key then list index: the
 * compares touch the heap alone (a heap of list indices read every key through the lists,
 * two loads away). */
typedef struct {
    long long key;
    int list;
} agx_head;

static int before(const agx_head *x, const agx_head *y)
{
    return x->key < y->key || (x->key == y->key && x->list < y->list);
}

static void sift_down(agx_head *heap, int n, int i)
{
    agx_head v = heap[i];
    for (;;) {
        int l = 2 * i + 1, m = l;
        if (l >= n)
            break;
        if (l + 1 < n && before(&heap[l + 1], &heap[l]))
            m = l + 1;
        if (!before(&heap[m], &v))
            break;
        heap[i] = heap[m];
        i = m;
    }
    heap[i] = v;
}

int agx_merge_sorted(int k, const long long *start, const long long *key, int stride, long long *out)
{
    agx_head *heap = malloc(sizeof *heap * (size_t)(k > 0 ? k : 1));
    long long *head = malloc(sizeof *head * (size_t)(k > 0 ? k : 1));
    if (!heap || !head) {
        free(heap);
        free(head);
        return -1;
    }
    int n = 0;
    for (int i = 0; i < k; i++) {
        head[i] = start[i];
        if (start[i] < start[i + 1])
            heap[n++] = (agx_head){key[start[i] * stride], i};
    }
    for (int i = n / 2 - 1; i >= 0; i--)
        sift_down(heap, n, i);
    long long m = 0;
    while (n > 0) {
        int i = heap[0].list;
        out[m++] = head[i]++;
        if (head[i] == start[i + 1])
            heap[0] = heap[--n];
        else
            heap[0].key = key[head[i] * stride];
        sift_down(heap, n, 0);
    }
    free(heap);
    free(head);
    return 0;
}
