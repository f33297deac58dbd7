/*
 * agx-info: what agx is and will do here. Run it as the application runs:
 *   tools/agxrun -n 8 [--nodes 2] build/bin/agx-info
 *   AGX_TUNING_FILE=rules.json mpirun -n 64 agx-info
 * Prints (rank 0) the version, the MPI library, the registry, the regions of
 * MPI_COMM_WORLD and the rules in force (agx_print_info, src/api/api_info.c).
 */
#include <agx.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: agx-info   (under mpirun, as many ranks and nodes as the application)\n"
               "Prints agx's version, the MPI library, the algorithms, the regions of\n"
               "MPI_COMM_WORLD and the selection rules in force (AGX_<OP>_ALGORITHM,\n"
               "AGX_TUNING_FILE, built-in default).\n");
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = agx_print_info(MPI_COMM_WORLD, stdout);
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len, rank;
        MPI_Error_string(rc, s, &len);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            fprintf(stderr, "agx-info: %s\n", s);
    }
    MPI_Finalize();
    return rc == MPI_SUCCESS ? 0 : 1;
}
