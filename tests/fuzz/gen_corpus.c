/* Writes the seed corpus of a fuzz target into its corpus directory:
 *   gen-fuzz-corpus TARGET DIR          write the seeds into DIR
 *   gen-fuzz-corpus --check TARGET DIR  verify DIR holds exactly these seeds
 * (to regenerate: rm the seeds, then `ninja fuzz-corpus-TARGET`).
 *   codec               every sample message (each type, variant and dialect
 *                       it exists in) and every golden frame, each as one
 *                       selector byte (dialect, msize 65536) and the frame
 *   server-ramfs,       session scripts (gen_seeds_session.c)
 *   server-passthrough
 *   client-reply        replies and their requests (gen_seeds_reply.c) */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcall_samples.h"
#include "gen_corpus.h"
#include "golden_frames.h"
#include "ninep/proto.h"

static int check_mode;
static int problems;

static const char *out_dir;
static size_t count;

void seed_emit(const char *name, const uint8_t *seed, size_t len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", out_dir, name);
	count++;
	if (check_mode) {
		FILE *fp = fopen(path, "rb");
		uint8_t *have = malloc(len + 1);
		size_t n = fp && have ? fread(have, 1, len + 1, fp) : 0;
		if (!fp || n != len || memcmp(have, seed, len) != 0) {
			fprintf(stderr, "%s: missing or out of date\n", path);
			problems++;
		}
		if (fp)
			fclose(fp);
		free(have);
	} else {
		FILE *fp = fopen(path, "wb");
		if (!fp || fwrite(seed, 1, len, fp) != len || fclose(fp) != 0) {
			perror(path);
			exit(1);
		}
	}
}

static void emit(const char *name, enum np_dialect d, const uint8_t *frame, size_t len)
{
	uint8_t *seed = malloc(len + 1);
	if (!seed)
		exit(1);
	seed[0] = (uint8_t)(d | 1 << 2); /* msizes[1] = 65536 in fuzz_codec.c */
	memcpy(seed + 1, frame, len);
	seed_emit(name, seed, len + 1);
	free(seed);
}

static int seeds_codec(void)
{
	static const enum np_dialect ds[] = {NP_9P2000, NP_9P2000U, NP_9P2000L};
	static const char *const dn[] = {"9p2000", "9p2000u", "9p2000L"};
	size_t cap = 1 << 16;
	uint8_t *buf = malloc(cap);
	for (size_t i = 0; i < fcall_ntypes; i++)
		for (size_t k = 0; k < 3; k++) {
			if (!fcall_type_in_dialect(fcall_types[i], ds[k]))
				continue;
			for (int v = 0; v < FCALL_NVARIANTS; v++) {
				np_fcall f;
				char name[128];
				fcall_sample(fcall_types[i], v, &f);
				int n = np_encode(&f, ds[k], buf, cap);
				if (n < 0) {
					fprintf(stderr, "cannot encode %s: %d\n",
						np_type_name(f.type), n);
					return 1;
				}
				snprintf(name, sizeof name, "%s-%s-v%d", dn[k], np_type_name(f.type), v);
				emit(name, ds[k], buf, (size_t)n);
			}
		}
	for (size_t i = 0; i < golden_nframes; i++) {
		char name[128];
		snprintf(name, sizeof name, "golden-%s", golden_frames[i].name);
		emit(name, golden_frames[i].dialect, golden_frames[i].bytes, golden_frames[i].len);
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--check") == 0)
		check_mode = 1;
	else if (argc != 3) {
		fprintf(stderr, "usage: %s [--check] TARGET DIR\n", argv[0]);
		return 2;
	}
	const char *target = argv[argc - 2];
	out_dir = argv[argc - 1];
	if (strcmp(target, "codec") == 0) {
		if (seeds_codec() != 0)
			return 1;
	} else if (strcmp(target, "server-ramfs") == 0) {
		seeds_session("ramfs");
	} else if (strcmp(target, "server-passthrough") == 0) {
		seeds_session("passthrough");
	} else if (strcmp(target, "client-reply") == 0) {
		seeds_client_reply();
	} else {
		fprintf(stderr, "%s: unknown target %s\n", argv[0], target);
		return 2;
	}
	if (check_mode) {
		/* seeds of samples that no longer exist are stale too */
		DIR *dp = opendir(out_dir);
		size_t have = 0;
		struct dirent *de;
		while (dp && (de = readdir(dp)) != NULL)
			if (de->d_name[0] != '.')
				have++;
		if (dp)
			closedir(dp);
		if (have != count) {
			fprintf(stderr, "%s: %zu files, expected %zu\n", out_dir, have, count);
			problems++;
		}
		if (problems)
			fprintf(stderr, "regenerate: rm %s/*; ninja fuzz-corpus-%s\n", out_dir, target);
		else
			printf("%zu seeds up to date\n", count);
		return problems ? 1 : 0;
	}
	printf("wrote %zu seeds to %s\n", count, out_dir);
	return 0;
}
