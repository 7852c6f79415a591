/* The 9P2000 / 9P2000.u adapter: serves plain and Unix-extension clients
 * with the backend's 9P2000.L handlers (open/create/stat/wstat and directory
 * reads as stat entries). */
#ifndef NP_SERVER_COMPAT_H
#define NP_SERVER_COMPAT_H

#include "srv.h"

/* Fill `ef` (tag preset) as the error reply for the dialect. */
void np_compat_error(np_fcall *ef, enum np_dialect d, int err);
/* prepare() for the messages only 9P2000/.u use (Topen, Tcreate, Tstat,
 * Twstat, and Tread of a directory). */
np_handler np_compat_prepare(struct np_conn *c, struct np_sreq *q, int *err);

/* After a request of a 9P2000/.u session completed: keep the names. */
void np_compat_post(struct np_conn *c, struct np_sreq *q, int ok);

#endif
