// The one piece of the gateway that reads Cyclone DDS's receive buffers: a received sample's
// fragment chain copied out as one byte run. C, because Cyclone's q_radmin.h is a C header.
#include "fragchain.h"

#include <string.h>

#include <dds/ddsi/q_radmin.h>

void spindle_gw_copy_fragchain(const struct nn_rdata* fragchain, size_t size, unsigned char* out) {
  uint32_t off = 0;
  while (fragchain != NULL) {
    if (fragchain->maxp1 > off) {
      // A fragment may overlap what the ones before it gave; copy only what is new.
      const unsigned char* payload =
          NN_RMSG_PAYLOADOFF(fragchain->rmsg, NN_RDATA_PAYLOAD_OFF(fragchain));
      const uint32_t end = fragchain->maxp1 < size ? fragchain->maxp1 : (uint32_t)size;
      if (end > off) memcpy(out + off, payload + (off - fragchain->min), end - off);
      off = fragchain->maxp1;
    }
    fragchain = fragchain->nextfrag;
  }
}
