/* Shared by the on-line choice's classes and candidates (adapt.c) and its window's
 * phases and decision (adapt_window.c). */
#ifndef AGX_ADAPT_H
#define AGX_ADAPT_H

#include "select.h"

/* The phases: with more candidates than AGX_LEARN_FINAL, a first look at every one (one
 * round), then a screening (AGX_LEARN_SCREEN - 1 more rounds) of those within
 * AGX_LEARN_CUT of the fastest, then the final of the AGX_LEARN_FINAL fastest
 * (AGX_LEARN_ROUNDS rounds, in two halves: after the first, those more than AGX_LEARN_CUT
 * times the fastest have no more calls); with fewer, the final alone. A round gives each
 * candidate in turn AGX_LEARN_TURN calls in a row, the last one timed: the untimed ones
 * make its schedules, scratch and segments, and leave the buffers and the ranks as a
 * program repeating the call leaves them, not as the previous candidate did. */
enum { PH_LOOK, PH_SCREEN, PH_FINAL, PH_FINAL2, PH_REMATCH };
void agx_learn_phase(agx_learn *e, int phase, const signed char *order, int n); /* starts it */
int agx_learn_rounds(const agx_learn *e); /* the phase's rounds */

#endif
