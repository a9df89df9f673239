#!/bin/sh
# Replays the damage of real framework files that once broke mdinspect
# (tests/damage/recipes.tsv: file, seed, mutation). Skips (77) when none of
# the recipes' files is installed.
. "$(dirname "$0")/common.sh"
exec python3 "$top/tests/damage/damage.py" --recipes "$top/tests/damage/recipes.tsv"
