/* ramfs POSIX byte-range locks (Tlock/Tgetlock).
 *
 * A lock owner is (client_id, proc_id), as fcntl locks belong to a process
 * on a host.  Setting a lock replaces the owner's locks over the range (which
 * may split one of them in two); unlocking removes the owner's locks over it.
 * Requests never wait: a conflicting lock of another owner answers
 * NP_LOCK_BLOCKED.  Owner names are interned for the life of the fs, so an
 * Rgetlock can point at them after the lock is gone. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ramfs_int.h"

static const char *intern(np_ramfs *fs, np_str s)
{
	for (struct rintern *i = fs->interned; i; i = i->next)
		if (i->len == s.len && memcmp(i->s, s.s, s.len) == 0)
			return i->s;
	struct rintern *i = malloc(sizeof(*i) + s.len + 1u);
	if (!i)
		return NULL;
	memcpy(i->s, s.s, s.len);
	i->s[s.len] = '\0';
	i->len = s.len;
	i->next = fs->interned;
	fs->interned = i;
	return i->s;
}

void ramfs_intern_free(np_ramfs *fs)
{
	while (fs->interned) {
		struct rintern *i = fs->interned;
		fs->interned = i->next;
		free(i);
	}
}

static uint64_t range_end(uint64_t start, uint64_t length)
{
	if (length == 0 || length - 1 > UINT64_MAX - start)
		return UINT64_MAX;
	return start + length - 1;
}

static int same_owner(const struct rlock *l, uint32_t proc_id, np_str client)
{
	return l->proc_id == proc_id && l->client_len == client.len &&
	       memcmp(l->client, client.s, client.len) == 0;
}

static int conflicts(const struct rlock *l, uint8_t type, uint64_t start, uint64_t end)
{
	if (l->end < start || l->start > end)
		return 0;
	return l->type == NP_LOCK_TYPE_WRLCK || type == NP_LOCK_TYPE_WRLCK;
}

int rlock_set(np_ramfs *fs, struct rnode *n, const void *fid, uint8_t type, uint64_t start,
	      uint64_t length, uint32_t proc_id, np_str client)
{
	if (type != NP_LOCK_TYPE_RDLCK && type != NP_LOCK_TYPE_WRLCK && type != NP_LOCK_TYPE_UNLCK)
		return -EINVAL;
	uint64_t end = range_end(start, length);
	if (type != NP_LOCK_TYPE_UNLCK) {
		for (struct rlock *l = n->locks; l; l = l->next)
			if (!same_owner(l, proc_id, client) && conflicts(l, type, start, end))
				return NP_LOCK_BLOCKED;
	}
	const char *name = intern(fs, client);
	/* allocate up front so that a failure leaves the locks untouched: at most
	 * one split plus the new lock */
	struct rlock *spare = malloc(sizeof(*spare));
	struct rlock *nl = type != NP_LOCK_TYPE_UNLCK ? malloc(sizeof(*nl)) : NULL;
	if (!name || !spare || (type != NP_LOCK_TYPE_UNLCK && !nl)) {
		free(spare);
		free(nl);
		return -ENOLCK;
	}
	for (struct rlock **pp = &n->locks; *pp;) {
		struct rlock *l = *pp;
		if (!same_owner(l, proc_id, client) || l->end < start || l->start > end) {
			pp = &l->next;
			continue;
		}
		if (l->start >= start && l->end <= end) {
			*pp = l->next;
			free(l);
			continue;
		}
		if (l->start < start && l->end > end) {
			/* the hole splits l: keep the left part in l, the right
			 * part in the spare */
			*spare = *l;
			spare->start = end + 1;
			l->end = start - 1;
			spare->next = l->next;
			l->next = spare;
			spare = NULL;
			pp = &l->next->next;
			continue;
		}
		if (l->start < start)
			l->end = start - 1;
		else
			l->start = end + 1;
		pp = &l->next;
	}
	free(spare);
	if (nl) {
		nl->start = start;
		nl->end = end;
		nl->type = type;
		nl->proc_id = proc_id;
		nl->client = name;
		nl->client_len = client.len;
		nl->fid = fid;
		nl->next = n->locks;
		n->locks = nl;
	}
	return NP_LOCK_SUCCESS;
}

void rlock_get(const struct rnode *n, uint8_t type, uint64_t start, uint64_t length,
	       uint32_t proc_id, np_str client, struct rlock *conflict)
{
	uint64_t end = range_end(start, length);
	memset(conflict, 0, sizeof(*conflict));
	conflict->type = NP_LOCK_TYPE_UNLCK;
	if (type == NP_LOCK_TYPE_UNLCK)
		return;
	for (const struct rlock *l = n->locks; l; l = l->next) {
		if (!same_owner(l, proc_id, client) && conflicts(l, type, start, end)) {
			*conflict = *l;
			conflict->next = NULL;
			return;
		}
	}
}

void rlock_release_fid(struct rnode *n, const void *fid)
{
	for (struct rlock **pp = &n->locks; *pp;) {
		struct rlock *l = *pp;
		if (l->fid == fid) {
			*pp = l->next;
			free(l);
		} else {
			pp = &l->next;
		}
	}
}

void rlock_free_all(struct rnode *n)
{
	while (n->locks) {
		struct rlock *l = n->locks;
		n->locks = l->next;
		free(l);
	}
}
