/*
 * peek.c - what a browser message is, read from its first bytes only
 * (relay.h).
 *
 * Design note
 * - Why: the relay passes the browser's replies and events to the client
 *   byte for byte, and needs to look inside only a few of them (its own
 *   replies, the reply to Target.createBrowserContext, the events of
 *   navigations and targets). Parsing every message whole with jansson
 *   (a client's screenshot reply is megabytes of base64, its DOM
 *   snapshots hundreds of kilobytes) was a quarter of the relay's CPU.
 * - What: Chromium writes its messages compact, the reply's "id" or the
 *   event's "method" first: {"id":12,"result":...} and
 *   {"method":"Network.dataReceived","params":...}. relay_peek_browser
 *   reads that first member and nothing else. A message of any other
 *   shape (whitespace, another first key, an id that is not a plain whole
 *   number, a method with an escape) is RELAY_PEEK_OTHER, which the relay
 *   parses whole as before: peeking only ever skips work, it never
 *   decides alone.
 * - Only messages from the browser are peeked at: the client's are parsed
 *   whole and checked (relay.c), since what the filter decides must be
 *   what Chromium reads.
 */
#include "relay/relay.h"

#include <string.h>

/* 1 when data starts with the len bytes of lit. */
static int starts_with(const uint8_t *data, size_t n, const char *lit, size_t len)
{
	return n >= len && !memcmp(data, lit, len);
}

/* See relay.h. */
enum relay_peek relay_peek_browser(const uint8_t *data, size_t len, int64_t *id, char *method,
                                   size_t methodlen)
{
	static const char id_key[] = "{\"id\":";
	static const char method_key[] = "{\"method\":\"";
	size_t i, start, digits;
	int64_t v = 0;

	*id = -1;
	if (methodlen)
		method[0] = '\0';
	if (starts_with(data, len, id_key, sizeof(id_key) - 1)) {
		i = sizeof(id_key) - 1;
		for (digits = 0; i < len && data[i] >= '0' && data[i] <= '9'; i++, digits++) {
			if (digits >= 15)
				return RELAY_PEEK_OTHER; /* past what an id can be */
			v = v * 10 + (data[i] - '0');
		}
		if (!digits || i >= len || (data[i] != ',' && data[i] != '}'))
			return RELAY_PEEK_OTHER;
		*id = v;
		return RELAY_PEEK_REPLY;
	}
	if (starts_with(data, len, method_key, sizeof(method_key) - 1)) {
		start = i = sizeof(method_key) - 1;
		while (i < len && data[i] != '"' && data[i] != '\\' && data[i] >= 0x20 &&
		       data[i] < 0x7f)
			i++;
		if (i == start || i >= len || data[i] != '"' || i + 1 >= len ||
		    (data[i + 1] != ',' && data[i + 1] != '}') || i - start >= methodlen)
			return RELAY_PEEK_OTHER;
		memcpy(method, data + start, i - start);
		method[i - start] = '\0';
		return RELAY_PEEK_EVENT;
	}
	return RELAY_PEEK_OTHER;
}
