/* Socket buffers sized for 9P messages. */
#include <sys/socket.h>

#include "ninep/transport.h"

void np_socket_fit_msize(int fd, uint32_t msize)
{
	/* Unix stream sockets bound what one write may queue by the sender's
	 * SO_SNDBUF (208 KiB by default): an msize-sized reply would otherwise
	 * go out in several partial writes, each costing a wake-up of both
	 * sides.  The limit reserves no memory; buffers are allocated only as
	 * data is queued.  SO_SNDBUFFORCE passes wmem_max when we may. */
	int want = (int)(msize > (1u << 29) ? (1u << 30) : 2 * msize + 4096);
	int cur = 0;
	socklen_t len = sizeof cur;
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &cur, &len) == 0 && cur >= want)
		return;
	want /= 2; /* the kernel doubles what it is given */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof want) != 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
}
