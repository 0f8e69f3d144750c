/*
 * s3_xml.c - the two S3 responses blob_s3.c reads, with libxml2: an
 * error's code, and a ListObjectsV2 page. The bytes come from the store
 * over the network and are treated as hostile: no network access, no
 * entity expansion, no DTD loading, sizes checked, every key checked by
 * blob_key_is_valid() before a callback sees it.
 */
#include "blob/blob-private.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XML_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

/* The document in data[0..len), or NULL. */
static xmlDocPtr parse(const unsigned char *data, size_t len)
{
	if (!data || len == 0 || len > INT32_MAX)
		return NULL;
	return xmlReadMemory((const char *)data, (int)len, NULL, NULL, XML_OPTIONS);
}

/* The text of child name of n (a new xmlChar*, or NULL). */
static xmlChar *child_text(xmlNodePtr n, const char *name)
{
	for (n = n->children; n; n = n->next)
		if (n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, (const xmlChar *)name))
			return xmlNodeGetContent(n);
	return NULL;
}

/* See blob-private.h. */
void blob_s3_error_code(const unsigned char *data, size_t len, char *code, size_t cap)
{
	xmlDocPtr doc = parse(data, len);
	xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
	xmlChar *text = root ? child_text(root, "Code") : NULL;

	code[0] = '\0';
	if (text)
		snprintf(code, cap, "%.60s", (const char *)text);
	xmlFree(text);
	xmlFreeDoc(doc);
	/* only a word goes into messages */
	if (strspn(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") !=
	    strlen(code))
		code[0] = '\0';
}

/* See blob-private.h. */
int blob_s3_list_page(const char *prefix, const unsigned char *data, size_t len, blob_list_cb cb,
                      void *user, char *next, size_t next_cap)
{
	size_t plen = strlen(prefix);
	xmlDocPtr doc = parse(data, len);
	xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
	xmlChar *key, *size, *trunc, *token;
	xmlNodePtr n;
	int rc = 0;

	next[0] = '\0';
	if (!root || xmlStrcmp(root->name, (const xmlChar *)"ListBucketResult")) {
		rc = -EIO;
		goto out;
	}
	for (n = root->children; n && rc == 0; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || xmlStrcmp(n->name, (const xmlChar *)"Contents"))
			continue;
		key = child_text(n, "Key");
		size = child_text(n, "Size");
		if (key && !strncmp((const char *)key, prefix, plen) &&
		    blob_key_is_valid((const char *)key + plen))
			rc = cb((const char *)key + plen,
			        size ? (size_t)strtoull((const char *)size, NULL, 10) : 0, user);
		xmlFree(key);
		xmlFree(size);
	}
	trunc = child_text(root, "IsTruncated");
	token = child_text(root, "NextContinuationToken");
	/* a token that does not fit is not used: the listing ends there, not elsewhere */
	if (trunc && !xmlStrcmp(trunc, (const xmlChar *)"true") && token &&
	    strlen((const char *)token) < next_cap)
		snprintf(next, next_cap, "%s", (const char *)token);
	xmlFree(trunc);
	xmlFree(token);
out:
	xmlFreeDoc(doc);
	return rc;
}
