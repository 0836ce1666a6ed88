// See fragchain.c.
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nn_rdata;

// Copies the first `size` bytes a received sample's fragment chain holds into `out`.
void spindle_gw_copy_fragchain(const struct nn_rdata* fragchain, size_t size, unsigned char* out);

#ifdef __cplusplus
}
#endif
