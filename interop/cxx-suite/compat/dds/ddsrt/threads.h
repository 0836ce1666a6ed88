// Stands in for Cyclone DDS's <dds/ddsrt/threads.h> in the cyclonedds-cxx suite (cyclone_shim.hpp).
#pragma once
#include "../../cyclone_shim.hpp"
