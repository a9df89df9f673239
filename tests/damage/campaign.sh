#!/bin/sh
# Structure-aware damage of the real frameworks installed here (.NET's
# shared framework, Mono 4.5), every mdinspect command and mdinspect batch
# on each result, for MDT_DAMAGE_SECONDS (default 60) from seed
# MDT_DAMAGE_SEED (default 1). Skips (77) when no framework is installed.
# A longer campaign: MDT_DAMAGE_SECONDS=3600 tests/damage/campaign.sh, or
# tests/damage/damage.py --help.
. "$(dirname "$0")/common.sh"
exec python3 "$top/tests/damage/damage.py" --seconds "${MDT_DAMAGE_SECONDS:-60}" \
    --seed "${MDT_DAMAGE_SEED:-1}" --keep "$build/tests/damage/failures"
