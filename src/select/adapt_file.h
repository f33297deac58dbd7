/* Shared by the on-line choice of collective I/O (adapt_file.c) and its memory
 * (adapt_file_mem.c). */
#ifndef AGX_ADAPT_FILE_H
#define AGX_ADAPT_FILE_H

#include "select.h"

#define AGX_FLEARN_SETTLE 8          /* decided calls in a row with one winner (not the engine alone) */
#define AGX_FLEARN_READS (1 << 20)   /* a read class's key: its class + this */

/* What the run learned of a class on p ranks (key: the class, a read's + AGX_FLEARN_READS;
 * a class with no sample: all zero), and a class as a file leaves it. */
agx_flearn_class agx_flearn_recall(int p, int key);
void agx_flearn_remember(const agx_flearn *L, const agx_flearn_class *c);

#endif
