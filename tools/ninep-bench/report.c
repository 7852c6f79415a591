/* The human-readable report: one block per workload and placement. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Per-run values of one figure for one series. */
static size_t values(const struct nb_series *s, double (*fig)(const struct nb_run *), double *out)
{
	size_t k = 0;
	for (unsigned i = 0; i < s->nruns; i++) {
		double v = fig(&s->runs[i]);
		if (v >= 0 && !s->runs[i].errors)
			out[k++] = v;
	}
	return k;
}

/* Per-run ratios b/a of paired runs (runs alternate, so run i of each
 * series was measured next to run i of the other). */
static size_t ratios(const struct nb_series *a, const struct nb_series *b,
		     double (*fig)(const struct nb_run *), double *out)
{
	size_t k = 0;
	for (unsigned i = 0; i < a->nruns && i < b->nruns; i++) {
		double x = fig(&a->runs[i]), y = fig(&b->runs[i]);
		if (x > 0 && y >= 0 && !a->runs[i].errors && !b->runs[i].errors)
			out[k++] = y / x;
	}
	return k;
}

static void print_mmm(FILE *f, const double *v, size_t n, int prec)
{
	if (!n) {
		fprintf(f, "%-24s", "n/a");
		return;
	}
	char a[32], b[32], c[32], buf[112];
	snprintf(a, sizeof a, "%.*f", prec, nb_median(v, n));
	snprintf(b, sizeof b, "%.*f", prec, nb_min(v, n));
	snprintf(c, sizeof c, "%.*f", prec, nb_max(v, n));
	snprintf(buf, sizeof buf, "%s [%s-%s]", a, b, c);
	fprintf(f, "%-24s", buf);
}

static double bw_of(const struct nb_run *r);
static uint32_t g_iosize;
static double bw_of(const struct nb_run *r)
{
	return nb_rate(r) * g_iosize / 1048576.0;
}

void nb_report_text(FILE *f, struct nb_result *r)
{
	int seq = r->wl == WL_SEQREAD || r->wl == WL_SEQWRITE;
	unsigned n = r->s[0].nruns;
	double *v = calloc(n ? n : 1, sizeof *v);
	if (!v)
		return;
	fprintf(f, "\n== %s", nb_wl_name(r->wl));
	if (r->wl == WL_READ || r->wl == WL_WRITE)
		fprintf(f, " %u B", r->size);
	fprintf(f, ", depth %u, %u connection%s, msize %u, placement %s", r->depth, r->conns,
		r->conns > 1 ? "s" : "", r->msize, r->placement);
	if (r->reqs_per_op)
		fprintf(f, ", %u request%s per op", r->reqs_per_op, r->reqs_per_op > 1 ? "s" : "");
	else if (r->wl == WL_READDIR)
		fprintf(f, ", op = list %u entries", NB_DIRENTS);
	fputc('\n', f);
	if (!strcmp(r->placement, "none"))
		fprintf(f, "   (unpinned: the scheduler decides whether client and server share a CPU;"
			   " rates jump between the two levels)\n");
	fprintf(f, "   %-40s %-24s %-22s %-20s %-9s %-9s %-8s%s\n", "series", "ops/s median [min-max]",
		"x raw", "lat us p50/p99/p99.9", "cli us/op", "srv us/op", "srv cs/op",
		seq ? "  MiB/s" : "");
	for (unsigned i = 0; i < r->nseries; i++) {
		struct nb_series *s = &r->s[i];
		char lab[41];
		snprintf(lab, sizeof lab, "%s", s->label);
		fprintf(f, "   %-40s ", lab);
		print_mmm(f, v, values(s, nb_rate, v), 0);
		fputc(' ', f);
		if (s->raw_index >= 0 && (unsigned)s->raw_index != i) {
			size_t k = ratios(&r->s[s->raw_index], s, nb_rate, v);
			char buf[40];
			if (k)
				snprintf(buf, sizeof buf, "%.2f [%.2f-%.2f]", nb_median(v, k), nb_min(v, k),
					 nb_max(v, k));
			else
				snprintf(buf, sizeof buf, "n/a");
			fprintf(f, "%-22s ", buf);
		} else {
			fprintf(f, "%-22s ", s->is_raw ? "1" : "-");
		}
		char lat[40];
		snprintf(lat, sizeof lat, "%.1f/%.1f/%.1f", nb_pct(s->all.lat, s->all.nlat, 50) / 1e3,
			 nb_pct(s->all.lat, s->all.nlat, 99) / 1e3, nb_pct(s->all.lat, s->all.nlat, 99.9) / 1e3);
		fprintf(f, "%-20s ", lat);
		size_t k = values(s, nb_cli_us, v);
		fprintf(f, "%-9.2f ", k ? nb_median(v, k) : NAN);
		k = values(s, nb_srv_us, v);
		if (k)
			fprintf(f, "%-9.2f ", nb_median(v, k));
		else
			fprintf(f, "%-9s ", "n/a");
		k = values(s, nb_srv_cs, v);
		if (k)
			fprintf(f, "%-8.2f", nb_median(v, k));
		else
			fprintf(f, "%-8s", "n/a");
		if (seq) {
			g_iosize = r->msize - NP_IOHDRSZ;
			k = values(s, bw_of, v);
			fprintf(f, "  %.0f", k ? nb_median(v, k) : NAN);
		}
		fputc('\n', f);
		k = values(s, nb_allocs, v);
		if (k)
			fprintf(f, "   %-40s server heap allocations per op: %.4f [%.4f-%.4f]\n", "",
				nb_median(v, k), nb_min(v, k), nb_max(v, k));
	}
	/* Side by side: the second address against the first. */
	int a = -1, b = -1;
	for (unsigned i = 0; i < r->nseries; i++)
		if (!r->s[i].is_raw) {
			if (a < 0)
				a = (int)i;
			else if (b < 0)
				b = (int)i;
		}
	if (a >= 0 && b >= 0) {
		size_t k = ratios(&r->s[a], &r->s[b], nb_rate, v);
		fprintf(f, "   B/A (%s / %s), per run pair: rate ", r->s[b].label, r->s[a].label);
		print_mmm(f, v, k, 2);
		k = ratios(&r->s[a], &r->s[b], nb_srv_us, v);
		fprintf(f, " server CPU/op ");
		print_mmm(f, v, k, 2);
		fputc('\n', f);
	}
	for (unsigned i = 0; i < r->nseries; i++) {
		size_t k = values(&r->s[i], nb_rate, v);
		fprintf(f, "   per-run ops/s, %s:\n", r->s[i].label);
		nb_histogram(f, v, k, "     ");
	}
	for (unsigned i = 0; i < r->nseries; i++)
		for (unsigned j = 0; j < r->s[i].nruns; j++)
			if (r->s[i].runs[j].errors) {
				fprintf(f, "   WARNING: %s run %u failed (excluded)\n", r->s[i].label, j);
				break;
			}
	free(v);
}
