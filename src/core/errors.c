/*
 * Errors the MPI way, raised once. Internal functions build an error code with its
 * message (agx_error) and return it; only the public entry points pass a failing code
 * through the communicator's error handler (agx_raise), so a user's handler runs exactly
 * once per failing call.
 *
 * A code is an agx error code per MPI error class (MPI_Add_error_code) whose string is
 * set to the message of the error being made: MPI_Error_class(code) gives the MPI class
 * back and MPI_Error_string(code) the message.
 */
#include "agx_internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define AGX_MAX_CLASS 128

static int codes[AGX_MAX_CLASS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The last error this thread made, for agx_error_string: MPICH 4.0.2 returns a wrong
 * string for codes added to a predefined class, so MPI_Error_string alone is not enough. */
static _Thread_local struct {
    int code;
    char msg[MPI_MAX_ERROR_STRING];
} last;

static int code_for_class(int cls)
{
    if (cls <= 0 || cls >= AGX_MAX_CLASS)
        return cls;
    if (!codes[cls] && MPI_Add_error_code(cls, &codes[cls]) != MPI_SUCCESS)
        codes[cls] = 0;
    return codes[cls] ? codes[cls] : cls;
}

int agx_error(int cls, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(msg, sizeof msg, "agx: ");
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);

    pthread_mutex_lock(&lock);
    int code = code_for_class(cls);
    if (code != cls)
        MPI_Add_error_string(code, msg);
    pthread_mutex_unlock(&lock);
    last.code = code;
    memcpy(last.msg, msg, sizeof msg);
    return code;
}

int agx_error_string(int code, char *string, int *resultlen)
{
    if (code != MPI_SUCCESS && code == last.code) {
        int n = (int)strlen(last.msg);
        memcpy(string, last.msg, (size_t)n + 1);
        *resultlen = n;
        return MPI_SUCCESS;
    }
    return MPI_Error_string(code, string, resultlen);
}

int agx_raise(MPI_Comm comm, int code)
{
    if (code != MPI_SUCCESS)
        MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
    return code;
}
