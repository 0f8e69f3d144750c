/*
 * risk-private.h - helpers shared by the files of the risk classifier
 * (risk.c, risk_text.c, risk_defaults.c, fingerprint.c) and their unit
 * tests. Other modules include policy/risk.h.
 */
#ifndef GB_POLICY_RISK_PRIVATE_H
#define GB_POLICY_RISK_PRIVATE_H

#include "common/unittest.h"
#include "policy/risk.h"

#include <stddef.h>

/* Longest host kept from a URL (a DNS name is at most 253 bytes). */
#define RISK_HOST_MAX 256
/* Room for a normalised fact: normalising never grows a text by more than
 * the two framing spaces. */
#define RISK_NORM_MAX (POLICY_RISK_FACT_MAX + 4)

/* risk_defaults.c: the shipped rules (risk.h, policy_risk_defaults_json). */
extern const char policy_risk_defaults_text[];

/*
 * Normalises text for word matching: ASCII letters lowercased, fullwidth
 * ASCII folded to ASCII, invisible characters (zero-width space and
 * joiners, soft hyphen, word joiner, BOM) dropped so that they cannot
 * split a word, and every run of other characters that are not letters or
 * digits (ASCII punctuation, spaces of any width, control characters,
 * invalid UTF-8) turned into one space. Other non-ASCII characters are
 * kept as word characters, unchanged. The result is framed by spaces:
 * "Delete  all-orders!" becomes " delete all orders ". At most the first
 * inlen (or POLICY_RISK_FACT_MAX) bytes of in are read; out holds
 * RISK_NORM_MAX bytes. Returns the length of out. in may be NULL ("" in,
 * " " out).
 */
size_t policy_risk_normalize(const char *in, size_t inlen, char *out, size_t outlen);

/*
 * Copies the host of an absolute URL ("scheme://[user@]host[:port]/...")
 * into host: lowercased, without brackets, port or trailing dot. Returns 1
 * when the URL has a host, 0 otherwise (about:blank, data:, no "//").
 */
int policy_risk_url_host(const char *url, char *host, size_t hostlen);

#endif
