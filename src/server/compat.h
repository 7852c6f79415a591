/* The 9P2000 / 9P2000.u adapter: serves plain and Unix-extension clients
 * with the backend's 9P2000.L handlers (open/create/stat/wstat and directory
 * reads as stat entries).
 *
 * Composite operations (Tcreate of a directory = mkdir + walk + open, a
 * directory read = readdir + walk + getattr per entry, ...) call the
 * backend's handlers directly, on the thread the request runs on, with
 * requests the adapter builds itself.  The adapter therefore needs
 * synchronous handlers for the steps it composes: a step that answers
 * NP_ASYNC is waited for (its request must stay valid until the backend
 * responds) and then fails the whole operation with EIO. */
#ifndef NP_SERVER_COMPAT_H
#define NP_SERVER_COMPAT_H

#include "srv.h"

/* Fill `ef` (tag preset) as the error reply for the dialect. */
void np_compat_error(np_fcall *ef, enum np_dialect d, int err);

/* prepare() for the messages only 9P2000/.u use (Topen, Tcreate, Tstat,
 * Twstat), a Tread of a directory, and a Tclunk of an ORCLOSE fid, in
 * 9P2000/.u sessions (a 9P2000.L session gets EOPNOTSUPP for them).  Loop
 * thread.  Resolves the fids, snapshots the fid state the handler needs,
 * sets q->op / q->need_ops, and returns the handler (or NULL with *err). */
np_handler np_compat_prepare(struct np_conn *c, struct np_sreq *q, int *err);

/* After a request of a 9P2000/.u session completed (loop thread): keep the
 * paths, ORCLOSE and directory-read positions of the fids up to date. */
void np_compat_post(struct np_conn *c, struct np_sreq *q, int ok);

/* Free q->compat (np_req_release). */
void np_compat_release(struct np_sreq *q);

/* np_respond() of a composite step (any thread). */
void np_compat_sub_respond(struct np_compat_sub *s, int err);

#endif
