/* --svg: the distribution of per-run rates, one panel per workload and
 * placement, one column per series, every run a dot, the median a bar.
 * Plain SVG written by hand: no plotting dependency. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define W 760
#define PH 230   /* panel height */
#define ML 70    /* left margin (axis labels) */
#define PT 30    /* panel title */
#define PB 40    /* series labels */

static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
	}
}

static double nice_top(double v)
{
	if (v <= 0)
		return 1;
	double p = pow(10, floor(log10(v)));
	for (double m = 1; m <= 10; m += 0.5)
		if (m * p >= v)
			return m * p;
	return 10 * p;
}

static void panel(FILE *f, const struct nb_result *r, int y0)
{
	static const char *const colors[] = {"#888888", "#1f77b4", "#d62728"};
	double top = 0;
	for (unsigned i = 0; i < r->nseries; i++)
		for (unsigned j = 0; j < r->s[i].nruns; j++)
			if (nb_rate(&r->s[i].runs[j]) > top)
				top = nb_rate(&r->s[i].runs[j]);
	top = nice_top(top * 1.05);
	int plot_h = PH - PT - PB, plot_w = W - ML - 20;
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">%s", ML, y0 + 18,
		nb_wl_name(r->wl));
	if (r->wl == WL_READ || r->wl == WL_WRITE)
		fprintf(f, " %u B", r->size);
	fprintf(f, ", depth %u, %u conn, msize %u, placement %s (ops/s per run)</text>\n", r->depth,
		r->conns, r->msize, r->placement);
	int py = y0 + PT;
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#ccc\"/>\n",
		ML, py, plot_w, plot_h);
	for (int t = 0; t <= 4; t++) {
		double v = top * t / 4;
		int y = py + plot_h - (int)(plot_h * t / 4);
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#eee\"/>"
			   "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%.0f</text>\n",
			ML, ML + plot_w, y, y, ML - 4, y + 3, v);
	}
	double colw = (double)plot_w / r->nseries;
	for (unsigned i = 0; i < r->nseries; i++) {
		const struct nb_series *s = &r->s[i];
		double cx = ML + colw * (i + 0.5);
		double *v = calloc(s->nruns ? s->nruns : 1, sizeof *v);
		size_t k = 0;
		for (unsigned j = 0; j < s->nruns; j++) {
			double rate = nb_rate(&s->runs[j]);
			if (s->runs[j].errors || !v)
				continue;
			v[k++] = rate;
			/* Spread dots sideways by run index so equal rates stay visible. */
			double dx = s->nruns > 1 ? (j / (double)(s->nruns - 1) - 0.5) * colw * 0.4 : 0;
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" fill-opacity=\"0.7\"/>\n",
				cx + dx, py + plot_h - plot_h * rate / top, colors[i % 3]);
		}
		if (k) {
			double m = nb_median(v, k);
			double y = py + plot_h - plot_h * m / top;
			fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" "
				   "stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%.0f</text>\n",
				cx - colw * 0.3, cx + colw * 0.3, y, y, cx + colw * 0.31, y + 3, m);
		}
		free(v);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">", cx,
			py + plot_h + 16);
		esc(f, s->label);
		fprintf(f, "</text>\n");
	}
}

int nb_svg_write(const char *path, struct nb_result *const *res, size_t n)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" "
		   "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		W, n * PH + 10);
	for (size_t i = 0; i < n; i++)
		panel(f, res[i], (int)(i * PH));
	fprintf(f, "</svg>\n");
	return fclose(f);
}
