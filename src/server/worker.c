/* The worker pool: handlers that may block run here, off the loop threads.
 * One FIFO under a mutex; a worker claims a request by moving it from
 * QUEUED to RUNNING, which a Tflush on the loop thread races by moving it
 * to CANCELLED.  Whichever wins decides whether the handler runs. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "srv.h"

static void *worker_main(void *arg)
{
	np_server *s = arg;
	sigset_t set;
	sigfillset(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	pthread_mutex_lock(&s->wlock);
	for (;;) {
		while (!s->whead && !s->wstop)
			pthread_cond_wait(&s->wcond, &s->wlock);
		struct np_sreq *q = s->whead;
		if (!q)
			break; /* stopping and drained */
		s->whead = q->next;
		if (!s->whead)
			s->wtail = NULL;
		pthread_mutex_unlock(&s->wlock);

		int expect = NP_RS_QUEUED;
		if (atomic_compare_exchange_strong(&q->state, &expect, NP_RS_RUNNING)) {
			int err = q->handler(&q->pub);
			if (err != NP_ASYNC)
				np_respond(&q->pub, err);
		} else {
			/* Cancelled by Tflush while queued: hand it back unrun. */
			np_respond(&q->pub, EINTR);
		}
		pthread_mutex_lock(&s->wlock);
	}
	pthread_mutex_unlock(&s->wlock);
	return NULL;
}

int np_workers_start(np_server *s)
{
	s->workers = calloc((size_t)s->o.workers, sizeof *s->workers);
	if (!s->workers)
		return -ENOMEM;
	for (int i = 0; i < s->o.workers; i++) {
		if (pthread_create(&s->workers[i], NULL, worker_main, s) != 0)
			return -EAGAIN;
		s->nworkers++;
	}
	return 0;
}

void np_workers_stop(np_server *s)
{
	pthread_mutex_lock(&s->wlock);
	s->wstop = 1;
	pthread_cond_broadcast(&s->wcond);
	pthread_mutex_unlock(&s->wlock);
	for (int i = 0; i < s->nworkers; i++)
		pthread_join(s->workers[i], NULL);
	s->nworkers = 0;
	free(s->workers);
	s->workers = NULL;
}

void np_workers_submit(np_server *s, struct np_sreq *q)
{
	atomic_store(&q->state, NP_RS_QUEUED);
	q->next = NULL;
	pthread_mutex_lock(&s->wlock);
	if (s->wtail)
		s->wtail->next = q;
	else
		s->whead = q;
	s->wtail = q;
	pthread_cond_signal(&s->wcond);
	pthread_mutex_unlock(&s->wlock);
}
