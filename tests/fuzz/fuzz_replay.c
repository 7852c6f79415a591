/* A main() for fuzz targets built without libFuzzer (gcc, normal test runs):
 * feeds every file named on the command line, or found in a directory named
 * there, to LLVMFuzzerTestOneInput once.  Missing directories are skipped
 * (git does not keep empty ones); finding no input at all is an error. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, fp)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	fclose(fp);
	if (!buf)
		return -1;
	/* an exact-size copy so overreads past the input are caught */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	long total = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) != 0)
				return 1;
			total++;
			continue;
		}
		DIR *dir = opendir(argv[i]);
		if (!dir) {
			perror(argv[i]);
			return 1;
		}
		char **names = NULL;
		size_t nn = 0;
		struct dirent *de;
		while ((de = readdir(dir)) != NULL) {
			if (de->d_name[0] == '.' || strcmp(de->d_name, "README") == 0)
				continue;
			char **nb = realloc(names, (nn + 1) * sizeof *names);
			if (!nb)
				return 1;
			names = nb;
			names[nn++] = strdup(de->d_name);
		}
		closedir(dir);
		if (nn)
			qsort(names, nn, sizeof *names, cmp);
		for (size_t k = 0; k < nn; k++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], names[k]);
			if (run_file(path) != 0)
				return 1;
			total++;
			free(names[k]);
		}
		free(names);
	}
	printf("replayed %ld inputs\n", total);
	return total > 0 ? 0 : 1;
}
