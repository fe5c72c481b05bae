// SPDX-License-Identifier: MIT
/*
 * One daemon per state: an exclusive flock(2) on a directory (the state
 * directory, the pin root), held for the life of the process.  flock works
 * on a directory's fd on any filesystem, bpffs included, and the kernel
 * drops it when the holder dies, even by kill -9, so there is no stale lock
 * to clean up.  The holder of a taken lock is found in /proc/locks by the
 * directory's device and inode, so the refusal can name its pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "xlb_control.h"

/* The pid holding a flock on (dev, ino), or 0 if /proc/locks does not say. */
static pid_t lock_holder(dev_t dev, ino_t ino)
{
	char line[256];
	pid_t pid = 0;
	FILE *f = fopen("/proc/locks", "r");

	if (!f)
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned int maj, min;
		unsigned long long i;
		char kind[16];
		int p;

		/* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" */
		if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%llu", kind, &p, &maj, &min, &i) == 5 &&
		    !strcmp(kind, "FLOCK") && maj == major(dev) && min == minor(dev) && i == ino)
			pid = p;
	}
	fclose(f);
	return pid;
}

int xlb_lock_dir(const char *path, const char *what, int *ret_fd, struct xlb_err *err)
{
	struct stat st;
	pid_t holder;
	int fd;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return xlb_err_set(err, -errno, "cannot open %s %s: %s", what, path, strerror(errno));
	if (!flock(fd, LOCK_EX | LOCK_NB)) {
		*ret_fd = fd;
		return 0;
	}
	if (errno != EWOULDBLOCK) {
		int e = -errno;

		close(fd);
		return xlb_err_set(err, e, "cannot lock %s %s: %s", what, path, strerror(-e));
	}
	holder = fstat(fd, &st) ? 0 : lock_holder(st.st_dev, st.st_ino);
	close(fd);
	if (holder)
		return xlb_err_set(err, -EBUSY,
				   "%s %s is in use by another xlbd (pid %d); one daemon per state",
				   what, path, (int)holder);
	return xlb_err_set(err, -EBUSY, "%s %s is in use by another xlbd; one daemon per state",
			   what, path);
}
