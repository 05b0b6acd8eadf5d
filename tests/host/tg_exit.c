// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The thread-group leader exits first (pthread_exit), another thread exits
 * the group later with the status given as argv[1]: a reaper must report that
 * status, not the leader's. Built static so it runs inside any test rootfs.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static void *later(void *arg)
{
	usleep(200 * 1000);
	exit(atoi(arg));
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2 || pthread_create(&t, NULL, later, argv[1]))
		return 99;
	pthread_exit(NULL);
}
