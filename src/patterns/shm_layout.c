/* The segments' layouts (shm_layout.h). */
#include "shm_layout.h"

static size_t up64(size_t n) { return (n + 63) & ~(size_t)63; }

void agx_shmar_layout_of(int max_local, size_t span, size_t prev_span, agx_shmar_layout *l)
{
    l->hdr = up64(sizeof(long long) * (size_t)max_local);
    l->res = l->hdr;
    l->slot = up64(span);
    l->slots = l->res + up64(span > prev_span ? span : prev_span);
    l->bytes = l->slots + l->slot * (size_t)max_local;
}

size_t agx_ntf_data_offset(long long nslots)
{
    return AGX_NTF_HDR + up64((size_t)nslots * sizeof(int));
}
