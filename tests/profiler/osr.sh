#!/bin/sh
# Sample mode on the names workload with its methods held at tier 0
# (DOTNET_TC_CallCounting=0: no call counting, so no tier-1 code), where
# every long loop runs in on-stack-replacement code: every OSR frame must
# show its real caller. The tier-0 frame record under an OSR frame is found
# from the tier-0 code's prolog (unwind.c, mdp_osr_tier0_record); a scan
# for the saved RBP alone picked stale records of earlier OSR calls made by
# the same caller, and a fifth of these samples showed a sibling
# (Gen<Point>::Work under Deep) instead of Round. The log also resolves
# offline like names.sh's.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
DOTNET_TC_CallCounting=0 names_run osr osr 2000
