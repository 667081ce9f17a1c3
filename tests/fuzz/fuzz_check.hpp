#pragma once
// The harnesses' one assertion: a property of the code under test that an input broke. libFuzzer
// treats the abort as a crash and writes the input out, so a broken property is reported (and
// kept) like a memory error.
#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                               \
  do {                                                                                      \
    if (!(condition)) {                                                                     \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (false)
