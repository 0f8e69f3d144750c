/*
 * netns.c - security layer 4 (DESIGN.md): a network namespace for a
 * session's browser, with nothing in it but loopback, and the egress
 * proxy's listening socket made inside it.
 *
 * A namespace is made by a short-lived thread that unshares its own
 * network namespace (setns and unshare(CLONE_NEWNET) act on the calling
 * thread only), brings lo up and opens /proc/thread-self/ns/net: that fd
 * keeps the namespace alive after the thread is gone, and whoever holds it
 * can put sockets or processes there (sessions/netns.c). No thread of the
 * service other than those helpers ever leaves the service's namespace.
 *
 * Needs CAP_SYS_ADMIN (root). policy_netns_available() tries once per
 * process and remembers why it could not.
 */
#include "policy/proxy-private.h"

#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef GB_HAVE_NETNS
#define GB_HAVE_NETNS 1
#endif

struct netns_new {
	int fd;
	int err;
	const char *what;
	int link_rc; /* offline_guard_link()'s result */
};

#if GB_HAVE_NETNS
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>

/* Brings the link name up in the calling thread's network namespace.
 * Returns 0 or -1 with errno set. */
static int link_up(const char *name)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = -1;

	if (fd < 0)
		goto out;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		goto out;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		goto out;
	rc = 0;
out:
	if (fd >= 0) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	return rc;
}

/* Adds a veth pair to the calling thread's namespace, both ends in it and
 * up, with no address and no route. Chromium counts a namespace with only
 * loopback as offline (navigator.onLine false, pages that check it say
 * they have no network) although the proxy serves it; an up link makes it
 * online, and this one leads nowhere: a packet sent on one end arrives at
 * the other, in the same namespace. Its IPv6 link-local addresses skip
 * duplicate address detection: while an address is tentative (a second or
 * two) Chromium still counts the link as offline. Returns 0 or a negative
 * libnl error. */
static int offline_guard_link(void)
{
	struct nl_sock *sk;
	struct rtnl_link *link = NULL;
	struct rtnl_link *peer;
	int rc = -NLE_NOMEM;
	int fd = open("/proc/sys/net/ipv6/conf/default/accept_dad", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) { /* this namespace's default, for the links made below */
		if (write(fd, "0\n", 2) != 2)
			GB_LOGD("policy", "cannot turn off IPv6 address detection in a namespace");
		close(fd);
	}
	sk = nl_socket_alloc();
	if (!sk)
		return rc;
	rc = nl_connect(sk, NETLINK_ROUTE);
	if (rc < 0)
		goto out;
	link = rtnl_link_veth_alloc();
	if (!link) {
		rc = -NLE_NOMEM;
		goto out;
	}
	peer = rtnl_link_veth_get_peer(link);
	rtnl_link_set_name(link, "gb0");
	rtnl_link_set_name(peer, "gb1");
	rtnl_link_put(peer);
	rc = rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL);
	if (rc == 0 && (link_up("gb0") < 0 || link_up("gb1") < 0))
		rc = -nl_syserr2nlerr(errno);
out:
	if (link)
		rtnl_link_veth_release(link);
	nl_socket_free(sk);
	return rc;
}
#endif

/* Thread body: a new namespace for this thread, lo up, an fd on it. The
 * thread ends right after, taking its namespace membership with it. */
static void *netns_new_main(void *arg)
{
	struct netns_new *nn = arg;

	nn->fd = -1;
#if GB_HAVE_NETNS
	if (unshare(CLONE_NEWNET) < 0) {
		nn->err = errno;
		nn->what = "create a network namespace";
		goto out;
	}
	if (link_up("lo") < 0) {
		nn->err = errno;
		nn->what = "bring up loopback in the new network namespace";
		goto out;
	}
	nn->link_rc = offline_guard_link();
	nn->fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (nn->fd < 0) {
		nn->err = errno;
		nn->what = "open the new network namespace";
	}
out:
#else
	nn->err = ENOSYS;
	nn->what = "create a network namespace (built with -Dnetns=disabled)";
#endif
	return NULL;
}

int policy_netns_create(int *fd_out, char *err, size_t errlen)
{
	struct netns_new nn = { .fd = -1 };
	pthread_t t;
	int rc = -POLICY_ESYS;

	*fd_out = -1;
	if (pthread_create(&t, NULL, netns_new_main, &nn) != 0) {
		snprintf(err, errlen, "cannot start a thread to create a network namespace");
		goto out;
	}
	pthread_join(t, NULL);
	if (nn.fd < 0) {
		snprintf(err, errlen, "cannot %s: %s%s", nn.what, strerror(nn.err),
		         nn.err == EPERM
		             ? " (run glassbox as root to isolate browsers in their own "
		               "network namespace)"
		             : "");
		goto out;
	}
#if GB_HAVE_NETNS
	static int link_warned;

	if (nn.link_rc < 0 && !__atomic_exchange_n(&link_warned, 1, __ATOMIC_RELAXED))
		GB_LOGW("policy",
		        "browsers in their network namespace have no link besides loopback (%s): "
		        "pages will see navigator.onLine false; egress is unchanged",
		        nl_geterror(nn.link_rc));
#endif
	*fd_out = nn.fd;
	rc = 0;
out:
	return rc;
}

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_ok;
static char probe_why[300];

/* Tries to make one namespace, and says so once if it cannot. */
static void probe_netns(void)
{
	int fd = -1;

	if (policy_netns_create(&fd, probe_why, sizeof(probe_why)) == 0) {
		probe_ok = 1;
		close(fd);
		return;
	}
	GB_LOGW("policy", "egress layer 4 is off: %s; browsers run with egress layers 1-3 only",
	        probe_why);
}

int policy_netns_available(char *why, size_t whylen)
{
	pthread_once(&probe_once, probe_netns);
	if (!probe_ok && why && whylen)
		snprintf(why, whylen, "%s", probe_why);
	return probe_ok;
}

struct netns_listen {
	int netns_fd;
	const char *addr;
	int port;
	int fd;
	int err;
	const char *what;
};

/* Thread body: enters the namespace, makes the socket, ends (the thread's
 * namespace goes with it). */
static void *netns_listen_main(void *arg)
{
	struct netns_listen *nl = arg;
	struct policy_ip ip;
	struct sockaddr_storage ss;
	socklen_t sslen;
	int one = 1;
	int fd = -1;

	nl->fd = -1;
	if (nl->netns_fd > 0 && setns(nl->netns_fd, CLONE_NEWNET) < 0) {
		nl->err = errno;
		nl->what = "enter the network namespace";
		goto out;
	}
	if (policy_ip_parse_literal(nl->addr, &ip) < 0) {
		nl->err = EINVAL;
		nl->what = "parse the listen address";
		goto out;
	}
	policy_ip_to_sockaddr(&ip, nl->port, &ss, &sslen);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		nl->err = errno;
		nl->what = "create a socket";
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sslen) < 0 || listen(fd, 128) < 0) {
		nl->err = errno;
		nl->what = "listen";
		close(fd);
		goto out;
	}
	nl->fd = fd;
out:
	return NULL;
}

int policy_proxy_listen_in_netns(int netns_fd, const char *addr, int port, int *fd_out, char *err,
                                 size_t errlen)
{
	struct netns_listen nl;
	pthread_t t;
	int rc = -POLICY_ESYS;

	*fd_out = -1;
	memset(&nl, 0, sizeof(nl));
	nl.netns_fd = netns_fd;
	nl.addr = addr ? addr : "127.0.0.1";
	nl.port = port;
	if (pthread_create(&t, NULL, netns_listen_main, &nl) != 0) {
		snprintf(err, errlen, "cannot start a thread to enter the network namespace");
		goto out;
	}
	pthread_join(t, NULL);
	if (nl.fd < 0) {
		snprintf(err, errlen, "cannot %s for the egress proxy (%s:%d): %s", nl.what,
		         nl.addr, port, strerror(nl.err));
		goto out;
	}
	*fd_out = nl.fd;
	rc = 0;
out:
	return rc;
}
