/* For tests and benches only (tests/profiler, bench/profiler): every
 * private header of profiler/core in one include. The core's own files
 * include the headers of their unit and of the units below it
 * (profiler/core/README.md), never this one; tools/check-layers.sh checks.
 * It includes the units' state headers too (naming_state.h, log_state.h),
 * which the units above them do not see. */
#ifndef MDP_CORE_INT_H
#define MDP_CORE_INT_H

#include "core/base.h"
#include "core/channel.h"
#include "core/hash.h"
#include "core/native.h"
#include "core/ring.h"
#include "core/unwind.h"

#include "core/sampler.h"
#include "core/naming.h"
#include "core/naming_state.h"
#include "core/aggregate.h"
#include "core/drain.h"
#include "core/modes.h"
#include "core/log.h"
#include "core/log_state.h"
#include "core/lifetime.h"

#endif
