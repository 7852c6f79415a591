/* ramfs extended attributes: a short list of name/value pairs per node. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "ramfs_int.h"

struct rxattr *rxattr_find(const struct rnode *n, const char *name)
{
	for (struct rxattr *x = n->xattrs; x; x = x->next)
		if (strcmp(x->name, name) == 0)
			return x;
	return NULL;
}

int rxattr_set(struct rnode *n, const char *name, const uint8_t *value, uint32_t len, uint32_t flags)
{
	struct rxattr *x = rxattr_find(n, name);
	if (x && (flags & XATTR_CREATE))
		return EEXIST;
	if (!x && (flags & XATTR_REPLACE))
		return ENODATA;
	uint8_t *v = malloc(len ? len : 1);
	if (!v)
		return ENOMEM;
	memcpy(v, value, len);
	if (!x) {
		size_t nl = strlen(name);
		x = malloc(sizeof(*x) + nl + 1);
		if (!x) {
			free(v);
			return ENOMEM;
		}
		memcpy(x->name, name, nl + 1);
		x->value = NULL;
		x->next = n->xattrs;
		n->xattrs = x;
	}
	free(x->value);
	x->value = v;
	x->len = len;
	return 0;
}

int rxattr_remove(struct rnode *n, const char *name)
{
	for (struct rxattr **pp = &n->xattrs; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->name, name) == 0) {
			struct rxattr *x = *pp;
			*pp = x->next;
			free(x->value);
			free(x);
			return 0;
		}
	}
	return ENODATA;
}

int rxattr_list(const struct rnode *n, uint8_t **out, uint64_t *len)
{
	size_t total = 0;
	for (struct rxattr *x = n->xattrs; x; x = x->next)
		total += strlen(x->name) + 1;
	if (total > RAMFS_XATTR_LIST_MAX)
		return E2BIG;
	uint8_t *b = malloc(total ? total : 1);
	if (!b)
		return ENOMEM;
	size_t pos = 0;
	for (struct rxattr *x = n->xattrs; x; x = x->next) {
		size_t l = strlen(x->name) + 1;
		memcpy(b + pos, x->name, l);
		pos += l;
	}
	*out = b;
	*len = total;
	return 0;
}

void rxattr_free_all(struct rnode *n)
{
	while (n->xattrs) {
		struct rxattr *x = n->xattrs;
		n->xattrs = x->next;
		free(x->value);
		free(x);
	}
}
