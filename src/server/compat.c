/* 9P2000 and 9P2000.u on top of 9P2000.L handlers. */
#include <errno.h>

#include "compat.h"

void np_compat_error(np_fcall *ef, enum np_dialect d, int err)
{
	if (d == NP_9P2000L) {
		ef->type = NP_RLERROR;
		ef->rlerror.ecode = (uint32_t)err;
	} else {
		ef->type = NP_RERROR;
		ef->rerror.ename = np_strz(np_errstr(err));
		ef->rerror.ecode = (uint32_t)err;
	}
}

np_handler np_compat_prepare(struct np_conn *c, struct np_sreq *q, int *err)
{
	(void)c;
	(void)q;
	*err = EOPNOTSUPP;
	return NULL;
}

void np_compat_post(struct np_conn *c, struct np_sreq *q, int ok)
{
	(void)c;
	(void)q;
	(void)ok;
}
