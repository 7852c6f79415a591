/* The backend half of the server-session fuzz targets: fuzz_server.c drives
 * one np_server per process and one connection per input; each target links
 * one backend (fuzz_server_ramfs.c, fuzz_server_passthrough.c) that says what
 * the server exports and how the export is checked and reset between inputs,
 * so that every input starts from the same state. */
#ifndef NINEP_FUZZ_SERVER_H
#define NINEP_FUZZ_SERVER_H

#include "ninep/server.h"

struct fuzz_backend {
	const char *name;
	/* Once per process, before the server exists: the handler table and
	 * instance to give np_server_new.  0, or -1 (fatal). */
	int (*init)(const struct np_fs_ops **ops, void **fs);
	/* Before each session; opts are the input's three backend bits. */
	void (*begin)(unsigned opts);
	/* After each session, once the server holds no fid of it: verify the
	 * export (abort on a violation) and put it back as it was. */
	void (*end)(void);
	/* At exit, after the server is freed. */
	void (*fini)(void);
};

extern const struct fuzz_backend fuzz_backend;

#endif
