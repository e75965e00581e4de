/* What the CPython extension (src/extension/) uses of the library beyond
 * its public API (include/symmem/symmem.h): the one internal header the
 * extension includes (tests/python/test_layout.py holds it to that). The
 * names are hidden symmem__ ones, declared by the core's own headers below,
 * and may change in any release; what the extension takes from each: */
#ifndef SYMMEM_CORE_INTERNAL_H
#define SYMMEM_CORE_INTERNAL_H

#include "symmem/symmem.h"

#include "bfloat16.h"      /* the one bfloat16 conversion (element values) */
#include "bootstrap.h"     /* symmem__init_preview: _symmem.launcher() */
#include "checks.h"        /* initialised, the PE hint, an allocation's generation */
#include "cuda_module.h"   /* module_init and friends through the backend */
#include "device_state.h"  /* the device state block and device code's wake */
#include "env.h"           /* the environment table: python -m symmem info */
#include "forked.h"        /* a process forked after init is no PE */
#include "interrupt.h"     /* the interrupt check the extension lends */
#include "launcher_link.h" /* a PE of symmem.run dies with it */
#include "registry.h"      /* allocations' generations: Buffers and owners */
#include "teams.h"         /* a team's view (members) for collectives */
#include "vocab.h"         /* the vocabulary's lookups: dtype kinds, op and comparison words */

#endif
