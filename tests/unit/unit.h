/* A tiny unit-test harness in the style of libuv's: TEST(name) registers a test,
 * ASSERT* abort the test with file:line, UNIT_MAIN runs them all and prints a
 * "N passed, M failed" line. */
#ifndef AGX_UNIT_H
#define AGX_UNIT_H
#include <stdio.h>

typedef void (*unit_fn)(int *failed);
struct unit_test { const char *name; unit_fn fn; };
extern struct unit_test unit_tests[];
extern int unit_ntests;

#define UNIT_MAXTESTS 128
#define TEST(tname)                                                                     \
    static void test_##tname(int *unit_failed);                                         \
    __attribute__((constructor)) static void reg_##tname(void)                          \
    {                                                                                  \
        unit_tests[unit_ntests].name = #tname;                                          \
        unit_tests[unit_ntests++].fn = test_##tname;                                    \
    }                                                                                  \
    static void test_##tname(int *unit_failed)

#define ASSERT(c)                                                                      \
    do {                                                                               \
        if (!(c)) {                                                                    \
            fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #c);  \
            *unit_failed = 1;                                                          \
            return;                                                                    \
        }                                                                              \
    } while (0)
#define ASSERT_EQ(a, b)                                                                \
    do {                                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);                            \
        if (a_ != b_) {                                                                \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__,        \
                    __LINE__, #a, #b, a_, b_);                                         \
            *unit_failed = 1;                                                          \
            return;                                                                    \
        }                                                                              \
    } while (0)
/* Non-returning check with a message, for helpers that clean up before returning. */
#define CHECKF(c, okvar, ...)                                                          \
    do {                                                                               \
        if (!(c)) {                                                                    \
            fprintf(stderr, __VA_ARGS__);                                              \
            fprintf(stderr, "\n");                                                     \
            okvar = 0;                                                                 \
        }                                                                              \
    } while (0)

#define UNIT_MAIN()                                                                    \
    struct unit_test unit_tests[UNIT_MAXTESTS];                                        \
    int unit_ntests;                                                                   \
    int main(void)                                                                     \
    {                                                                                  \
        int passed = 0, failed = 0;                                                    \
        for (int i = 0; i < unit_ntests; i++) {                                        \
            int f = 0;                                                                 \
            unit_tests[i].fn(&f);                                                      \
            printf("%s %s\n", f ? "FAIL" : "ok  ", unit_tests[i].name);                \
            f ? failed++ : passed++;                                                   \
        }                                                                              \
        printf("%d passed, %d failed\n", passed, failed);                              \
        return failed ? 1 : 0;                                                         \
    }
#endif
