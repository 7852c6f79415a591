/* Sample stores and the statistics the reports print. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void nb_lat_add(struct nb_run *r, uint64_t ns)
{
	if (r->nlat == r->caplat) {
		size_t cap = r->caplat ? r->caplat * 2 : 65536;
		uint32_t *n = realloc(r->lat, cap * sizeof *n);
		if (!n)
			return; /* a lost sample, not a wrong one */
		r->lat = n;
		r->caplat = cap;
	}
	r->lat[r->nlat++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

void nb_run_merge(struct nb_run *dst, struct nb_run *src)
{
	dst->ops += src->ops;
	dst->reqs += src->reqs;
	dst->bytes += src->bytes;
	dst->errors += src->errors;
	if (!src->nlat)
		return;
	if (dst->nlat + src->nlat > dst->caplat) {
		size_t cap = dst->nlat + src->nlat;
		uint32_t *n = realloc(dst->lat, cap * sizeof *n);
		if (!n)
			return;
		dst->lat = n;
		dst->caplat = cap;
	}
	memcpy(dst->lat + dst->nlat, src->lat, src->nlat * sizeof *src->lat);
	dst->nlat += src->nlat;
}

void nb_run_free(struct nb_run *r)
{
	free(r->lat);
	r->lat = NULL;
	r->nlat = r->caplat = 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double nb_median(const double *v, size_t n)
{
	if (!n)
		return NAN;
	double *c = malloc(n * sizeof *c);
	if (!c)
		return NAN;
	memcpy(c, v, n * sizeof *c);
	qsort(c, n, sizeof *c, cmp_d);
	double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

double nb_min(const double *v, size_t n)
{
	double m = n ? v[0] : NAN;
	for (size_t i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

double nb_max(const double *v, size_t n)
{
	double m = n ? v[0] : NAN;
	for (size_t i = 1; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

static int cmp_u(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

uint32_t nb_pct(uint32_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp_u);
	size_t i = (size_t)ceil(p / 100.0 * (double)n);
	return v[i ? i - 1 : 0];
}

/* Buckets of a "nice" width (1, 2 or 5 times a power of ten) so that the
 * rates fall into about ten of them, like the AF_UNIX posting's table. */
void nb_histogram(FILE *f, const double *v, size_t n, const char *indent)
{
	if (!n)
		return;
	double lo = nb_min(v, n), hi = nb_max(v, n);
	double span = hi - lo > 0 ? hi - lo : (hi > 0 ? hi * 0.01 : 1);
	double w = pow(10, floor(log10(span / 8)));
	if (span / w > 40)
		w *= 5;
	else if (span / w > 16)
		w *= 2;
	double b0 = floor(lo / w) * w;
	size_t nb = (size_t)floor((hi - b0) / w) + 1;
	for (size_t b = 0; b < nb && b < 64; b++) {
		double a = b0 + (double)b * w;
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (v[i] >= a && (v[i] < a + w || (b == nb - 1 && v[i] <= a + w)))
				k++;
		if (!k)
			continue;
		fprintf(f, "%s%10.0f-%-10.0f %3zu (%3.0f%%) ", indent, a, a + w - (w >= 10 ? 1 : 0), k,
			100.0 * (double)k / (double)n);
		for (size_t i = 0; i < k && i < 50; i++)
			fputc('#', f);
		fputc('\n', f);
	}
}

double nb_rate(const struct nb_run *r)
{
	return r->secs > 0 ? (double)r->ops / r->secs : 0;
}

double nb_bw(const struct nb_run *r)
{
	return r->secs > 0 ? (double)r->bytes / r->secs : 0;
}

double nb_srv_us(const struct nb_run *r)
{
	return r->have_server && r->ops ? (double)r->server_ns / 1e3 / (double)r->ops : -1;
}

double nb_cli_us(const struct nb_run *r)
{
	return r->ops ? (double)r->client_ns / 1e3 / (double)r->ops : -1;
}

double nb_srv_cs(const struct nb_run *r)
{
	return r->have_server && r->ops ? (double)r->server_cs / (double)r->ops : -1;
}

double nb_allocs(const struct nb_run *r)
{
	return r->have_allocs && r->ops ? (double)r->allocs / (double)r->ops : -1;
}
