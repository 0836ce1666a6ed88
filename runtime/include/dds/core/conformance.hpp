// The DDS profiles this implementation supports, as the ISO C++ PSM's conformance macros
// (DDS-PSM-Cxx §7.1; DDS 1.4 §2.3): portable code guards a profile's API with
// `#ifdef OMG_DDS_<PROFILE>_SUPPORT`. A macro is defined only where the whole profile works;
// docs/dcps.md says which parts of the others are there.
//
//   OMG_DDS_OWNERSHIP_SUPPORT        OWNERSHIP (exclusive, with strength), per instance
//   OMG_DDS_PERSISTENCE_SUPPORT      DURABILITY TRANSIENT and PERSISTENT, DURABILITY_SERVICE
//                                    (docs/storage.md)
//   OMG_DDS_CONTENT_SUBSCRIPTION_SUPPORT   ContentFilteredTopic, QueryCondition (the PSM
//                                    gives MultiTopic a macro of its own; docs/filters.md)
//   OMG_DDS_OBJECT_MODEL_SUPPORT     PRESENTATION coherent and ordered access at every scope,
//                                    begin/end_access, the ordered get_datareaders
//                                    (docs/dcps.md, "Presentation", "Coherent sets")
//   not defined:
//   OMG_DDS_MULTI_TOPIC_SUPPORT            MultiTopic
//   OMG_DDS_X_TYPES_*                      DDS-XTypes dynamic types
//
// Threading: preprocessor definitions.
#pragma once

#define OMG_DDS_OWNERSHIP_SUPPORT 1
#define OMG_DDS_PERSISTENCE_SUPPORT 1
#define OMG_DDS_CONTENT_SUBSCRIPTION_SUPPORT 1
#define OMG_DDS_OBJECT_MODEL_SUPPORT 1
