/*
 * Errors the MPI way, raised once. Internal functions build an error code with its
 * message (agx_error) and return it; only the public entry points pass a failing code
 * through the communicator's error handler (agx_raise), so a user's handler runs exactly
 * once per failing call.
 *
 * A code is an agx error code of an MPI error class (MPI_Add_error_code) whose string is
 * the message of the error made: MPI_Error_class(code) gives the class back and
 * MPI_Error_string(code) the message. Each class has a ring of AGX_CODES_PER_CLASS codes,
 * used in turn, so the codes of the last AGX_CODES_PER_CLASS errors of a class are
 * distinct and each keeps its own message (an older code is reused, with its new
 * message, only after that many later errors of its class).
 */
#include "core.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define AGX_MAX_CLASS 128
#define AGX_CODES_PER_CLASS 16

static struct {
    int code[AGX_CODES_PER_CLASS];
    char msg[AGX_CODES_PER_CLASS][MPI_MAX_ERROR_STRING];
    int next;
} ring[AGX_MAX_CLASS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The next code of class cls (created on first use); cls itself if none can be added. */
static int next_slot(int cls, int *slot)
{
    int s = ring[cls].next;
    if (!ring[cls].code[s] && MPI_Add_error_code(cls, &ring[cls].code[s]) != MPI_SUCCESS)
        ring[cls].code[s] = 0;
    if (!ring[cls].code[s])
        return -1;
    ring[cls].next = (s + 1) % AGX_CODES_PER_CLASS;
    *slot = s;
    return 0;
}

int agx_error(int cls, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(msg, sizeof msg, "agx: ");
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    if (cls <= 0 || cls >= AGX_MAX_CLASS)
        return cls;
    int code = cls, s;
    pthread_mutex_lock(&lock);
    if (next_slot(cls, &s) == 0) {
        code = ring[cls].code[s];
        memcpy(ring[cls].msg[s], msg, sizeof msg);
        MPI_Add_error_string(code, msg);
    }
    pthread_mutex_unlock(&lock);
    return code;
}

/* MPICH 4.0.2 returns a wrong string for codes added to a predefined class, so the
 * message is looked up here first. */
int agx_error_string(int code, char *string, int *resultlen)
{
    int cls = MPI_SUCCESS;
    if (code != MPI_SUCCESS && MPI_Error_class(code, &cls) == MPI_SUCCESS && cls > 0 && cls < AGX_MAX_CLASS) {
        int found = 0;
        pthread_mutex_lock(&lock);
        for (int s = 0; s < AGX_CODES_PER_CLASS && !found; s++)
            if (ring[cls].code[s] == code) {
                found = 1;
                memcpy(string, ring[cls].msg[s], MPI_MAX_ERROR_STRING);
            }
        pthread_mutex_unlock(&lock);
        if (found) {
            *resultlen = (int)strlen(string);
            return MPI_SUCCESS;
        }
    }
    return MPI_Error_string(code, string, resultlen);
}

/* Under MPI_ERRORS_ARE_FATAL the message is written here first: an MPI's own abort path
 * may lose it (Open MPI's help aggregation drops messages when several ranks abort at
 * once) or print a wrong string (MPICH 4.0.2, see above). */
static void say_if_fatal(MPI_Errhandler eh, int code)
{
    if (eh != MPI_ERRORS_ARE_FATAL)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len, rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    agx_error_string(code, msg, &len);
    fprintf(stderr, "[rank %d] %s (MPI_ERRORS_ARE_FATAL: aborting)\n", rank, msg);
    fflush(stderr);
}

int agx_raise_error(MPI_Comm comm, int code)
{
    MPI_Comm c = comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm;
    MPI_Errhandler eh;
    if (MPI_Comm_get_errhandler(c, &eh) == MPI_SUCCESS) {
        say_if_fatal(eh, code);
        MPI_Errhandler_free(&eh);
    }
    MPI_Comm_call_errhandler(c, code);
    return code;
}

int agx_raise_file(MPI_File fh, MPI_Comm comm, int code)
{
    if (code == MPI_SUCCESS || fh == MPI_FILE_NULL)
        return agx_raise(comm, code);
    MPI_Errhandler eh;
    if (MPI_File_get_errhandler(fh, &eh) == MPI_SUCCESS) {
        say_if_fatal(eh, code);
        MPI_Errhandler_free(&eh);
    }
    MPI_File_call_errhandler(fh, code);
    return code;
}
