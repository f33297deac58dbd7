/*
 * The drop-in engine's file calls as POSIX calls (docs/algorithms.md, "MPI-IO drop-in",
 * "The engine's file calls"): where the file lies on a file system whose pread and pwrite
 * through any descriptor see each other's bytes at once (local ones, Lustre, GPFS; not
 * NFS, whose clients cache), the engine reads and writes it through a descriptor of its
 * own instead of a second MPI file handle: no collective MPI_File_open at the first call
 * (0.5-1.5 ms on 8 ranks of this VM), no MPI layer per call. The descriptor must name the
 * very file the library opened: agx_posix_id, taken right after the library's open,
 * gives its device and inode, and agx_posix_open refuses a descriptor of another (as
 * agx_posix_same refuses a second handle of another: a name renamed over). A
 * name the library would read with a file system prefix ("nfs:", "pvfs2:", ...; ROMIO's
 * syntax) other than "ufs:" is left to the second handle. AGX_IO_POSIX=0 turns it off.
 */
#include "twophase.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* statfs's f_type of the file systems taken (linux/magic.h and the vendors' values). */
static const unsigned long coherent[] = {
    0xEF53,     /* ext2, ext3, ext4 */
    0x58465342, /* xfs */
    0x9123683E, /* btrfs */
    0x01021994, /* tmpfs */
    0x794C7630, /* overlayfs */
    0x2FC12FC1, /* zfs */
    0xF2F52010, /* f2fs */
    0x0BD00BD0, /* Lustre */
    0x47504653, /* GPFS */
};

/* The name as a path, or NULL: a file system prefix other than "ufs:". */
static const char *as_path(const char *name)
{
    if (!name)
        return NULL;
    if (!strncmp(name, "ufs:", 4))
        name += 4;
    return strchr(name, ':') ? NULL : name;
}

/* Whether sb is the file id names. */
static int is_file(const struct stat *sb, const agx_posix_file *id)
{
    return (unsigned long long)sb->st_dev == id->dev && (unsigned long long)sb->st_ino == id->ino;
}

int agx_posix_id(const char *name, agx_posix_file *id)
{
    struct stat sb;
    const char *path = as_path(name);
    id->ok = path && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
    if (id->ok)
        id->dev = (unsigned long long)sb.st_dev, id->ino = (unsigned long long)sb.st_ino;
    return id->ok;
}

int agx_posix_same(const char *name, const agx_posix_file *id)
{
    struct stat sb;
    const char *path = as_path(name);
    return !id->ok || (path && stat(path, &sb) == 0 && is_file(&sb, id));
}

int agx_posix_open(const char *name, const agx_posix_file *id, int rdonly, int *readable)
{
    const char *path = as_path(name);
    struct stat sb;
    struct statfs fs;
    const char *e = getenv("AGX_IO_POSIX");
    int fd = -1;
    *readable = 0;
    if (!id->ok || !path || (e && !strcmp(e, "0")))
        return -1;
    if ((fd = open(path, (rdonly ? O_RDONLY : O_RDWR) | O_CLOEXEC)) >= 0)
        *readable = 1;
    else if (!rdonly)
        fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int ok = fstat(fd, &sb) == 0 && is_file(&sb, id) && fstatfs(fd, &fs) == 0;
    int known = 0;
    for (size_t i = 0; ok && i < sizeof coherent / sizeof *coherent; i++)
        known |= (unsigned long)fs.f_type == coherent[i];
    if (ok && known)
        return fd;
    close(fd);
    return -1;
}

long long agx_posix_rw(int fd, int reading, long long off, char *data, long long len, int *err)
{
    long long done = 0;
    *err = 0;
    while (done < len) {
        ssize_t k = reading ? pread(fd, data + done, (size_t)(len - done), (off_t)(off + done))
                            : pwrite(fd, data + done, (size_t)(len - done), (off_t)(off + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            *err = errno;
        if (k <= 0) /* an error, or the end of the file (a read) */
            break;
        done += k;
    }
    return done;
}

long long agx_posix_size(int fd)
{
    struct stat sb;
    return fstat(fd, &sb) == 0 ? (long long)sb.st_size : -1;
}
