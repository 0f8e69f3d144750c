/*
 * unittest.h - UNITTEST marks file-local helpers that unit tests call:
 * `static` in normal builds, external when a test builds the module's
 * sources with -DUNITTEST=. Private headers declare those helpers under
 * GB_UNITTEST_BUILD, which is set only in such builds.
 */
#ifndef GB_UNITTEST_H
#define GB_UNITTEST_H

#ifdef UNITTEST
#define GB_UNITTEST_BUILD 1
#else
#define UNITTEST static
#endif

#endif
