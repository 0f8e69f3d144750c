/*
 * unittest.h - UNITTEST marks file-local helpers that unit tests call:
 * `static` in normal builds, external when a test builds the module's
 * sources with -DUNITTEST=.
 */
#ifndef GB_UNITTEST_H
#define GB_UNITTEST_H

#ifndef UNITTEST
#define UNITTEST static
#endif

#endif
