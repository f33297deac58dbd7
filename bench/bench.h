/* Helpers shared by agx-bench's modes (agx_bench.c, agx_bench_pap.c). */
#ifndef AGX_BENCH_H
#define AGX_BENCH_H

/* "64K", "1M", "2G", "100" -> bytes (or elements); -1 when malformed. */
long long parse_size(const char *s);
/* Split a comma-separated list into at most max new strings (free each); the count, or -1
 * when the list has more than max items. */
int bench_split(const char *list, char **out, int max);
/* Print the registry: every operation, communicator kind and algorithm with its
 * description, cost and citation. */
void bench_list_algorithms(void);

#endif
