/*
 * verify-private.h - helpers shared by the files of verify/.
 */
#ifndef GB_VERIFY_PRIVATE_H
#define GB_VERIFY_PRIVATE_H

#include <stddef.h>

/* Length in bytes of the first max_chars UTF-8 characters of s[0..len)
 * (len itself when s has no more than max_chars). */
size_t verify_utf8_prefix_bytes(const char *s, size_t len, size_t max_chars);

#endif
