// Stands in for Cyclone DDS's <dds/ddsrt/process.h> in the cyclonedds-cxx suite (cyclone_shim.hpp).
#pragma once
#include "../../cyclone_shim.hpp"
