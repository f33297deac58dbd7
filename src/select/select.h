/*
 * The select layer: the arguments of one call (an operation-neutral part and one part per
 * operation), the registry over the operations' tables, the selection rules (built-in,
 * environment, rules file) and each communicator's choice state (a context slot). It
 * calls only itself, src/core and src/patterns.
 */
#ifndef AGX_SELECT_H
#define AGX_SELECT_H

#include "core.h"
#include <stdio.h>
#include "allreduce.h"
#include "alltoallv.h"
#include "intergroup.h"

typedef struct agx_intergroup agx_intergroup;
typedef struct agx_table agx_table;
typedef struct agx_alg agx_alg;
typedef struct agx_ig_io agx_ig_io;
struct agx_sel;

/* ---- arguments of one call: an operation-neutral part and a per-operation part ------- */
/* allgather / allgatherv, as the user gave them, and the receive layout */
typedef struct {
    const void *sendbuf;  /* may be MPI_IN_PLACE */
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    const int *recvcounts;
    const int *displs;
    MPI_Datatype recvtype;
    agx_blocks blk;       /* the receive layout */
    agx_ig_io *io;        /* intergroup calls: the byte view (NULL for raw algorithms) */
    const void **shared;  /* agx_allgatherv_shared: where shm_notify leaves the result
                           * (recvbuf unused), NULL otherwise */
} agx_ag_args;

/* alltoallv as the user gave it; its layouts (send block j to rank j, receive block s from s) */
typedef struct {
    const void *sendbuf;  /* may be MPI_IN_PLACE */
    const int *sendcounts, *sdispls;
    MPI_Datatype sendtype;
    void *recvbuf;
    const int *recvcounts, *rdispls;
    MPI_Datatype recvtype;
    agx_blocks sblk, rblk; /* in place: sblk describes a copy of the receive buffer */
    unsigned char *snz, *rnz; /* the non-empty pairs, per peer */
    int throttle;          /* AGX_ALLTOALLV_THROTTLE */
    unsigned send_flags;   /* AGX_ALLTOALLV_SYNC: AGX_SOP_SYNC for issend */
    double agree_s;        /* the call's agreement, s, where only agx's kernels pay it (adapt.c) */
} agx_a2a_args;

/* allreduce, as the user gave it, and the vector's layout: the whole vector as one block,
 * or cut into `nb` blocks of about equal counts (ring, Rabenseifner) */
typedef struct {
    const void *sendbuf;  /* may be MPI_IN_PLACE */
    void *recvbuf;
    int count;
    MPI_Datatype type;
    MPI_Op op;
    int commutative;      /* MPI_Op_commutative */
    int exact;            /* the result does not depend on the order (integer types) */
    MPI_Datatype base;    /* the predefined element type of `type` */
    int per;              /* elements of base per element of type */
    int predef;           /* op is a predefined op */
    int opk;              /* its index in MPI-3.1 Sec. 5.9.2's list (MAX .. MAXLOC), -1: user op */
    int elem;             /* base's place in MPI's table of types (class x 64 + index), 0: none */
    const char *unproven; /* why only the library's own MPI_Allreduce may run this (type, op),
                           * NULL where agx's algorithms are tested to give its answer */
} agx_ar_args;

typedef struct {
    agx_op op;
    agx_kind kind;        /* which table serves the call: intra, or inter (an
                           * inter-communicator or a colour split) */
    const agx_table *table;
    const agx_alg *alg;   /* the algorithm running (after selection) */
    agx_ctx *ctx;
    struct agx_sel *sel;  /* the communicator's choice state (agx_call_begin) */
    const agx_intergroup *ig; /* the two groups, for inter algorithms */
    MPI_Comm comm;        /* agx's private duplicate of the user's communicator */
    MPI_Comm user_comm;   /* the user's communicator (errors are raised on it) */
    int rank, p;          /* p: the size of the group the algorithm runs over (the remote
                           * group for intergroup allgathers), rank: in the caller's group */
    int inter;            /* an inter call: inter-communicator or colour split */
    long long msg_bytes;  /* the size the selection rules look at (allgather: the result) */
    const agx_a2a_pattern *pattern; /* alltoallv: the call's pattern (selection reads it) */
    const struct agx_rule *rule; /* the rules file's row that chose (its parameters), or NULL */
    int request;          /* a persistent or non-blocking call: the default rule picks only
                           * algorithms that plan (agx_alg.plans) */
    agx_plan **plan;      /* set: the algorithm makes its plan here instead of running */
    int plan_tag;         /* the plan's tag (agx_req_tag) */
    struct agx_learn *learn; /* the call is in its class's learning window: timed (adapt.c) */
    union {               /* the per-operation part */
        agx_ag_args ag;
        agx_a2a_args a2a;
        agx_ar_args ar;
    } u;
} agx_args;

typedef int (*agx_coll_fn)(const agx_args *a);

/* ---- registry: one table per (operation family, communicator kind) -------------------- */
enum {
    AGX_R_EVEN_P = 1u << 0, /* needs an even number of processes */
};
#define AGX_MAX_PARAMS 2

/* A tunable parameter of an algorithm, read from the environment. */
typedef struct {
    const char *name, *env, *desc;
    int def, min, max;
} agx_param;

/* Why `a` cannot run this call (NULL: it can): a restriction beyond the flags. *told
 * set: the reason was already explained to the user (agx_pat_init does), so the fallback
 * runs without the AGX_FALLBACK=warn line. */
typedef const char *(*agx_check_fn)(const agx_args *a, int *told);

struct agx_pat_alg; /* the background half of a PAP-aware algorithm (src/pat/pat.h) */

struct agx_alg {
    const char *name;
    agx_coll_fn fn;
    unsigned ops;               /* bit (1 << op) for each op of the family it serves */
    const char *desc;           /* one line */
    const char *cost;           /* alpha-beta cost */
    const char *cite;           /* docs/REFERENCES.md key + algorithm / equation */
    agx_param params[AGX_MAX_PARAMS];
    unsigned restrictions;      /* AGX_R_* */
    agx_check_fn check;         /* further restriction, NULL: none */
    const char *fallback;       /* when a restriction fails; NULL: the default rule */
    const struct agx_pat_alg *pat;
    int raw;                    /* inter: reads the user's buffers itself (no byte view) */
    int plans;                  /* runs one schedule (agx_run_flat / agx_run_locality), so
                                 * it can be a plan: persistent and non-blocking calls */
    const char *same_on_two;    /* on 2 ranks it sends what this algorithm sends (one exchange of the
                                 * vector), or what one of "a|b|c" sends (by regions and size): timed once */
    long long online_below;     /* the on-line choice times it under this many bytes only; 0: any */
};

/* A range of a selection quantity: lo <= x < end; end 0: no upper bound ({0, 0}: any).
 * Written "lo-hi" (inclusive) in rules files and the environment (src/select/rules.c). */
typedef struct {
    long long lo, end;
} agx_span;

/* A selection rule: the built-in default (each table's `rules`, the first row whose
 * conditions hold choosing), a rules file's row (AGX_TUNING_FILE) or an item of the
 * environment's size-ranged form. Data, not code. */
typedef struct agx_rule {
    agx_span bytes;            /* the call's msg_bytes */
    agx_span size;             /* p */
    agx_span ppn;              /* the most processes of one region (node) */
    agx_span nodes;            /* regions (nodes) the communicator spans */
    agx_span piece;            /* a file row (file_write_all / file_read_all): the mean
                                * file piece; its bytes: the largest rank's */
    int pow2;                   /* 1: p must be a power of two */
    /* alltoallv's pattern (0: any): |R| <= recv_pct_max % of p; the most senders of one
     * receiver >= send_pct_min % of p, or < send_pct_max % of p */
    int recv_pct_max, send_pct_min, send_pct_max;
    const char *alg;
    /* rules file: the parameters it sets, its line; file and environment rules: the
     * algorithm's index in each kind's table (-1: not there) */
    int nparams;
    const char *pname[AGX_MAX_PARAMS];
    int pval[AGX_MAX_PARAMS];
    int pidx[AGX_MAX_PARAMS];   /* their indices in the algorithm's params */
    int line;
    int kidx[AGX_KIND_LAST];
} agx_rule;

struct agx_table {
    agx_kind kind;
    const agx_alg *algs;
    int n;
    const agx_rule *rules;
    int nrules;
    const char *const *online;  /* the on-line choice's candidates besides the default's and
                                 * native (adapt.c), NULL-terminated; NULL: the rules' */
};

/* The operations agx knows: name, environment variable, and the tables serving it. */
typedef struct {
    const char *name, *env;
    const agx_table *table[AGX_KIND_LAST];
} agx_op_desc;

/* The operations' tables (src/coll/coll_table.c installs them before any call: the
 * registry looks down on no one), and the operation's row. */
void agx_registry_install(const agx_op_desc *ops);
const agx_op_desc *agx_op_get(agx_op op);
/* The index of the algorithm of default rule i of (op, kind)'s table (i < 0: `native`,
 * the last resort), and of algorithm alg's fallback; -1: none. Resolved at the install. */
int agx_rule_alg(agx_op op, agx_kind kind, int i);
int agx_fallback_of(agx_op op, agx_kind kind, int alg);
const agx_table *agx_table_of(agx_op op, agx_kind kind);
/* Index of `name` among the algorithms of (op, kind) serving op, or -1. */
int agx_alg_find(agx_op op, agx_kind kind, const char *name);
const agx_alg *agx_alg_at(agx_op op, agx_kind kind, int index);
/* agx_alg_at for a call whose table is known (on every call's path: no call out). */
static inline const agx_alg *agx_call_alg(const agx_args *a, int index)
{
    const agx_table *t = a->table;
    return index >= 0 && index < t->n && ((t->algs[index].ops >> a->op) & 1u) ? &t->algs[index] : NULL;
}
/* Comma-separated names valid for (op, kind), into buf. */
void agx_alg_names(agx_op op, agx_kind kind, char *buf, int len);
/* NULL when `alg` may run on this call, else why not (*told: already explained to the
 * user; told may be NULL). */
const char *agx_alg_violation(const agx_alg *alg, const agx_args *a, int *told);
/* Value of the running algorithm's parameter `i` (its index in the row's params): the
 * environment's (read when the communicator's selection state was made), else the rules
 * file row's, else the default; an error code when the environment's value is malformed. */
int agx_alg_param(const agx_args *a, int i, int *value);

/* ---- selection rules (src/select/rules.c, rules_file.c) ---------------------------------- */
/* "lo-hi" (inclusive), "lo-", "N"; K, M, G multiply by 1024. 0, or -1 when malformed. */
int agx_span_parse(const char *s, agx_span *r);
int agx_span_holds(agx_span r, long long x);
int agx_span_meet(agx_span a, agx_span b);
void agx_span_text(agx_span r, char *buf, size_t len);
/* Whether the rule's conditions hold for the call (derives the regions when it asks). */
int agx_rule_holds(const agx_rule *r, const agx_args *a);
/* The environment's value for op ("alg[:bytes],..."), items resolved per kind. *why: a
 * message when the value is wrong (then no rules). */
int agx_env_rules(const agx_ctx *ctx, agx_op op, const char *value, agx_rule **out, int *n, char **why);
void agx_env_rules_free(agx_rule *rules, int n);
/* The rules file: its rows for (op, kind), its path (NULL: none), agreement on it by the
 * communicator (sets sel->rules_on or sel->rules_bad), and its release at finalize. */
const agx_rule *agx_rules_file(agx_op op, agx_kind kind, int *n);
/* The rules file's row for collective writes (reads 0) or reads of p ranks, the largest
 * rank's bytes and the mean piece: AGX_FLEARN_ENGINE, _LIBRARY or _NODE, -1 when none (or no
 * usable file). Its ops: AGX_OP_LAST + reads ("file_write_all", "file_read_all"). */
int agx_rules_file_io(int reads, int p, long long bytes, long long piece);
const char *agx_rules_path(void);
struct agx_sel;
int agx_rules_agree(agx_ctx *ctx, struct agx_sel *sel);
void agx_rules_free(void);
void agx_rules_reset(void);

/* ---- the communicator's choice state (src/select/choice.c; context slot AGX_SLOT_SELECT) - */
/* The rules file's row for the last call's shape (select.c): a call of the same size and
 * group skips the scan. */
typedef struct {
    long long bytes;
    int p, valid;
    const agx_rule *row; /* NULL: no row holds */
} agx_file_memo;

/* ---- on-line choice (src/select/adapt.c, adapt_out.c): one entry per class of calls ---- */
#define AGX_LEARN_CANDS 8  /* the default's choice, the table's candidates, native */
#define AGX_LEARN_FINAL 3  /* candidates the first phase keeps */
#define AGX_LEARN_ROUNDS 4 /* rounds of the final (adapt.c) */
#define AGX_LEARN_SCREEN 3 /* rounds of the screening */
#define AGX_LEARN_TURN 2   /* a candidate's calls in a row per round, the last one timed */
#define AGX_LEARN_AFTER 8  /* a class's first calls, the library's untimed, before its window */
_Static_assert(AGX_LEARN_SCREEN <= AGX_LEARN_ROUNDS, "t[][] holds the screening's rounds too");
enum { AGX_LEARN_NEW, AGX_LEARN_RUNNING, AGX_LEARN_DONE };
typedef struct agx_learn {
    unsigned key;                 /* op, kind, size class, sub-class (adapt.c) */
    signed char state, ncand, winner, phase, nrun;
    short cand[AGX_LEARN_CANDS];  /* table indices; cand[0] the default's choice */
    signed char run[AGX_LEARN_CANDS]; /* the phase's candidates (indices into cand) */
    int calls, p, total;          /* calls of the phase made; the communicator's size; of the window */
    int cold;                     /* the class's first calls made, the library's, untimed (adapt.c) */
    long long lo, hi;             /* the sizes seen in the window */
    double t[AGX_LEARN_CANDS][AGX_LEARN_ROUNDS]; /* this rank's times in the phase, s */
    float ta[AGX_LEARN_CANDS * AGX_LEARN_ROUNDS]; /* and of the agreements it charges (adapt.c) */
    double mean[AGX_LEARN_CANDS]; /* the agreed times (the slowest rank's), s (the last phase each ran) */
    double window_s, cold_s;      /* this rank's time in the window's calls; its best first call but the first */
} agx_learn;

#define AGX_MAX_ALGS 24 /* rows of one table */
enum { AGX_FALLBACK_WARN = 0, AGX_FALLBACK_SILENT, AGX_FALLBACK_ERROR };
typedef struct agx_sel {
    /* Choices per (table kind, op): an intra-communicator also serves the colour-split
     * intergroup calls from the inter table. Table index, -1: none. */
    int forced[AGX_KIND_LAST][AGX_OP_LAST];
    int env_forced[AGX_KIND_LAST][AGX_OP_LAST]; /* the environment's one name, -1: none */
    agx_rule *env_rules[AGX_OP_LAST]; /* its size-ranged form (bruck:0-8K,ring), in order */
    int env_n[AGX_OP_LAST];
    char *env_bad[AGX_OP_LAST]; /* what is wrong with the environment's value, reported at
                                 * each call */
    int rules_agreed;           /* the rules file was agreed on (the first collective call) */
    int rules_on;               /* the rules file is agreed on: its rows choose */
    char *rules_bad;            /* why the rules file cannot be used, reported at each call */
    agx_file_memo file_memo[AGX_KIND_LAST][AGX_OP_LAST];
    unsigned gen;               /* bumped by agx_comm_set_algorithm: memos are stale */
    long long vseen[64];        /* AGX_VERBOSE: the choices already printed (select.c) */
    int nvseen;
    int last[AGX_OP_LAST];      /* index of the algorithm that ran last, -1: none */
    agx_kind last_kind[AGX_OP_LAST];
    int warned[AGX_KIND_LAST][AGX_OP_LAST];
    int fallback;               /* AGX_FALLBACK: AGX_FALLBACK_*, -1 when malformed */
    char fallback_text[64];     /* its value, for the message */
    /* the algorithms' parameters as the environment sets them (read with the state):
     * pset 1: pval holds the value, -1: the value is malformed, 0: unset */
    signed char pset[AGX_OP_LAST][AGX_KIND_LAST][AGX_MAX_ALGS][AGX_MAX_PARAMS];
    int pval[AGX_OP_LAST][AGX_KIND_LAST][AGX_MAX_ALGS][AGX_MAX_PARAMS];
    int adapt;                  /* AGX_ADAPT: 0 off, 1 candidates of the same bits, 2 any;
                                 * -1 malformed (every call that would learn fails) */
    int adapt_after;            /* AGX_ADAPT_AFTER: a class's calls before its window; -1 malformed */
    agx_learn *learn;           /* the classes seen (adapt.c) */
    int nlearn, caplearn;
} agx_sel;
/* The choice state of ctx, made (reading the environment) on first use, or the kept
 * context's that ctx took (ctx->carried: made under the same environment), less what a
 * program set on its communicator. */
int agx_sel_get(agx_ctx *ctx, agx_sel **out);
/* The choice state of a kept context ctx took at its set-up (ctx->carried, src/core/
 * ctx_kept.c) into sel, made before (agx_comm_set_algorithm): its learned classes (how
 * many; -1: none carried) and the rules file's agreement. */
int agx_sel_take(agx_ctx *ctx, agx_sel *sel);
/* The algorithm forced on (op, kind): per communicator, else environment; -1: none. */
int agx_sel_forced(const agx_sel *sel, agx_op op, agx_kind kind);
/* Resolve a name in every table it may choose from on ctx (idx[kind], -1 where absent);
 * returns how many tables have it. */
int agx_ctx_resolve(const agx_ctx *ctx, agx_op op, const char *name, int idx[AGX_KIND_LAST]);
/* The context of comm ready for collective calls: its choice state, the collective set-up
 * of the first call (private communicator, rules file agreed). */
int agx_ctx_ready(MPI_Comm comm, agx_ctx **ctx, agx_sel **sel);

/* On-line choice (adapt.c): the algorithm a call of the default rule's choice `chosen` runs
 * (its class's winner or window's candidate, a->learn set; `chosen` unless agx_learn_on);
 * agx_run runs a->alg, timing a window's call, deciding at its last (one reduction). */
int agx_learn_pick(agx_args *a, int chosen);
int agx_learn_cold(const agx_args *a); /* one of its class's first calls: the library's, untimed */
int agx_learn_on(const agx_args *a); /* AGX_ADAPT on, blocking, intra, 2 ranks or more */
int agx_learn_pair(const agx_args *a); /* a 2-rank class the library's call takes, untimed (select.c) */
int agx_learn_inexact(const agx_args *a); /* a floating-point allreduce under AGX_ADAPT=1 */
/* The size class of the on-line choice: c with bytes in [2^(c-1), 2^c) (0 for 0 bytes). */
int agx_size_class(long long bytes);
int agx_learn_run(agx_args *a);
static inline int agx_run(agx_args *a) { return a->learn ? agx_learn_run(a) : a->alg->fn(a); }
static inline int agx_alg_index(const agx_args *a) { return (int)(a->alg - a->table->algs); }
/* Whether a's call (chosen, not in a window) lets the operation settle on the library's
 * own call on this communicator: learning is on (AGX_ADAPT), AGX_CHECK_ARGS is not, the
 * call runs native and every class of the operation learned here chose native. Reads only
 * agreed state: the same answer on every rank. */
int agx_learn_settled(const agx_args *a);
/* adapt_out.c: decisions said (AGX_VERBOSE), kept (AGX_TUNING_OUT), listed (agx-info). */
void agx_learn_report(const agx_args *a, const agx_learn *e);
void agx_learn_print(const agx_sel *sel, agx_op op, agx_kind kind, FILE *out);
/* adapt_out.c: a file class decided (adapt_file.c: cls = bytes' class x 64 + the piece's
 * class / 2), kept for AGX_TUNING_OUT as a file_write_all / file_read_all row. */
void agx_flearn_keep(int p, int reads, int cls, int winner, const char *note);
int agx_adapt_from_env(void);
int agx_adapt_after_from_env(void); /* AGX_ADAPT_AFTER (default AGX_LEARN_AFTER), -1 malformed */
/* A file candidate's name in rules files ("two_phase", "native", "two_phase_node"), or in words. */
const char *agx_flearn_name(int cand, int words);
/* ---- on-line choice of collective writes and reads (adapt_file.c): one state per file
 * handle and direction ---- */
#define AGX_FLEARN_CLASSES 16
typedef struct {
    int cls;                  /* the writes' class: size per rank and piece size (adapt_file.c) */
    signed char decided, winner; /* winner: an AGX_FLEARN_*; decided 2: by the rules file's row */
    signed char turns, k[3];  /* turns started; samples agreed per candidate */
    double best[3];           /* per candidate: its fastest agreed time, s per byte of the
                               * largest rank's share (s when no rank writes) */
} agx_flearn_class;
typedef struct {
    int mode;                 /* AGX_ADAPT when the file was opened: 0 off */
    int p, nclass, reads, ncand; /* reads 1: the file's reads (apart from its writes); ncand 3: _NODE too */
    agx_flearn_class c[AGX_FLEARN_CLASSES];
    int pend, pend_cand;      /* the last write timed: its class index; -1 none; -2 - i: class i running */
    int turn;                 /* the last call was a class's learning turn (agreed: alike on
                               * every rank, whether or not each timed it) */
    int last, streak;         /* the decided calls' winner and how many in a row: from
                               * AGX_FLEARN_SETTLE on, that winner for the rest of the handle */
    const char *settled_how;  /* and why (agx_flearn_pick's *how), a static string */
    int riding;               /* 1: a call whose choice rode on the engine's agreement (agx_flearn_fold) */
    double t0, dt, bytes;     /* its start and this rank's time; the largest rank's bytes */
} agx_flearn;
enum { AGX_FLEARN_ENGINE, AGX_FLEARN_LIBRARY, AGX_FLEARN_NODE, AGX_FLEARN_VOTED }; /* NODE: node_aggr on */
/* A file's state for its writes (reads 0) or reads (mode from AGX_ADAPT, p the file
 * communicator's size). */
void agx_flearn_init(agx_flearn *L, int p, int reads);
/* Collective over comm (a file's private communicator), one MPI_Allreduce (a second for a
 * class new to the file): the votes (1: this rank asks for the library's own write), the
 * last write's times and the class of this one (nbytes, pieces: this rank's) agreed, and
 * whether every rank offers AGX_FLEARN_NODE (L->ncand 3, set by the caller before; the
 * agreed value after), and which runs it: AGX_FLEARN_VOTED (a rank asked), the engine,
 * the engine with node aggregation or the library (the class's
 * winner, or its turn while it learns; *how says which, a static string). Its time counts
 * from here to agx_flearn_done (valid 0: it does not count). Learning off, or the handle
 * settled (AGX_FLEARN_SETTLE decided calls in a row with one winner): no reduction, the
 * engine (whose first agreement carries the votes) or the library. */
int agx_flearn_pick(agx_flearn *L, MPI_Comm comm, const char *name, int vote, long long nbytes, long long pieces,
                    int *cand, const char **how);
/* The pick's reduction folded into the engine's first agreement (agreement A): 1 at a
 * handle's first call, or where its last decided calls went to agx's engine, no class of it
 * is decided otherwise and no time waits to be agreed (agreed state: alike on every rank).
 * Then every rank runs the engine at once, its agreement carrying {nbytes, mean piece,
 * minus whether the node candidate is offered}, and agx_flearn_gate (no reduction: the
 * values agreed there; a second one for a class new to the file, as the pick's) says *go 1
 * where the class is decided for the engine or its learning turn is the engine's (timed
 * from t_call, the call's start), else gives the candidate (*cand, *how) to run instead. */
int agx_flearn_fold(const agx_flearn *L);
int agx_flearn_gate(agx_flearn *L, MPI_Comm comm, const char *name, const long long *v, double t_call, int *go,
                    int *cand, const char **how);
/* own: the engine's call went each rank its own (agreed, also where this rank's file calls
 * failed, valid 0): the class is the engine's. */
void agx_flearn_done(agx_flearn *L, int valid, int own, MPI_Comm comm, const char *name);
/* The running call's time leaves out `seconds` (the engine's set-up in a file: its way
 * into the file, its context; a cost paid once, not per call). */
void agx_flearn_skip(agx_flearn *L, double seconds);
/* What a handle's decided calls leave for the next file on the same ranks (file_comm.c
 * keeps it with the engine's communicator): their winner and how many in a row, and its
 * decided classes. A file that starts from a settled one's settles at its first call
 * where that call's class is decided with the same winner (one reduction: the class is
 * the file's already, agreed where it was decided), else learns as any file does. */
#define AGX_FLEARN_CARRIED 4
typedef struct {
    int last, streak, n;
    const char *how;
    agx_flearn_class c[AGX_FLEARN_CARRIED];
} agx_flearn_carry;
void agx_flearn_carry_out(const agx_flearn *L, agx_flearn_carry *c);
void agx_flearn_carry_in(agx_flearn *L, const agx_flearn_carry *c, MPI_Comm comm, const char *name);
/* At close (collective, one MPI_Allreduce where either direction's last call was a
 * learning turn, on every rank alike): the last write's and the last read's times agreed
 * (L: the file's two states), so that their classes may still decide and later files of
 * the run start from them. */
void agx_flearn_close(agx_flearn *const L[2], MPI_Comm comm, const char *name);

/* ---- one call (src/select/call.c) --------------------------------------------------------- */
/* The opening of every entry point: the communicator checked, its context set up (the
 * private duplicate), a->ctx, sel, comm, rank, p, kind and table set. */
int agx_call_begin(agx_args *a, const char *fn);
/* Select the algorithm (a->alg) and remember it as the communicator's last. */
int agx_choose(agx_args *a);
/* For an algorithm that finds, after its first step, that another row of its table runs
 * the call (eager's records too small): that row, found by its function, runs with
 * a->alg set and is remembered as the communicator's last. */
int agx_run_instead(const agx_args *a, agx_coll_fn fn);
/* Choose the algorithm for this call (table index), or an error code (not raised). */
int agx_select(agx_args *a, int *index);
/* The table's default rule alone (no forced choice): a table index. For a request
 * (a->request) only rows whose algorithm plans choose (the last resort: native). */
int agx_select_rule(const agx_args *a);
#endif
