/* --json: every run of every series, for machines. */
#include <stdio.h>

#include "bench.h"

static FILE *jf;
static int nresults;

static void jstr(const char *s)
{
	fputc('"', jf);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(jf, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(jf, "\\u%04x", *s);
		else
			fputc(*s, jf);
	}
	fputc('"', jf);
}

int nb_json_open(const char *path)
{
	jf = fopen(path, "w");
	if (!jf)
		return -1;
	fprintf(jf, "{\"tool\": \"ninep-bench\", \"results\": [");
	return 0;
}

void nb_json_add(const struct nb_result *r, const struct nb_cfg *cfg)
{
	if (!jf)
		return;
	fprintf(jf, "%s\n {\"workload\": ", nresults++ ? "," : "");
	jstr(nb_wl_name(r->wl));
	fprintf(jf, ", \"placement\": ");
	jstr(r->placement);
	fprintf(jf, ", \"size\": %u, \"msize\": %u, \"depth\": %u, \"conns\": %u, "
		    "\"reqs_per_op\": %u, \"duration\": %g, \"series\": [",
		r->size, r->msize, r->depth, r->conns, r->reqs_per_op, cfg->duration);
	for (unsigned i = 0; i < r->nseries; i++) {
		const struct nb_series *s = &r->s[i];
		fprintf(jf, "%s\n  {\"label\": ", i ? "," : "");
		jstr(s->label);
		fprintf(jf, ", \"raw\": %s, \"latency_ns\": {\"p50\": %u, \"p99\": %u, \"p999\": %u, "
			    "\"samples\": %zu}, \"runs\": [",
			s->is_raw ? "true" : "false", nb_pct(s->all.lat, s->all.nlat, 50),
			nb_pct(s->all.lat, s->all.nlat, 99), nb_pct(s->all.lat, s->all.nlat, 99.9),
			s->all.nlat);
		for (unsigned j = 0; j < s->nruns; j++) {
			const struct nb_run *u = &s->runs[j];
			fprintf(jf, "%s\n   {\"secs\": %.6f, \"ops\": %llu, \"reqs\": %llu, \"rate\": %.1f, "
				    "\"errors\": %llu, \"client_ns\": %llu",
				j ? "," : "", u->secs, (unsigned long long)u->ops,
				(unsigned long long)u->reqs, nb_rate(u), (unsigned long long)u->errors,
				(unsigned long long)u->client_ns);
			if (u->have_server)
				fprintf(jf, ", \"server_ns\": %llu, \"server_ctxsw\": %llu",
					(unsigned long long)u->server_ns, (unsigned long long)u->server_cs);
			if (u->have_allocs)
				fprintf(jf, ", \"server_allocs\": %llu", (unsigned long long)u->allocs);
			fputc('}', jf);
		}
		fprintf(jf, "]}");
	}
	fprintf(jf, "]}");
}

int nb_json_close(void)
{
	if (!jf)
		return 0;
	fprintf(jf, "\n]}\n");
	int e = fclose(jf);
	jf = NULL;
	return e;
}
