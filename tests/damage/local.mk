# tests/damage: real assemblies damaged with a seed, and every mdinspect
# command and mdinspect batch run on each result (issue 25; see
# tests/damage/README.md). campaign.sh runs for MDT_DAMAGE_SECONDS (60 by
# default); corrupt-cases.sh runs the shell on tests/corrupt's inputs.
check_SCRIPTS += tests/damage/corrupt-cases.sh tests/damage/recipes.sh tests/damage/campaign.sh
TESTS += tests/damage/corrupt-cases.sh tests/damage/recipes.sh tests/damage/campaign.sh
EXTRA_DIST += tests/damage/README.md tests/damage/damage.py tests/damage/common.sh \
	tests/damage/recipes.tsv tests/damage/corrupt-cases.sh tests/damage/recipes.sh \
	tests/damage/campaign.sh
# campaign.sh keeps failing damaged files here.
mostlyclean-local: clean-damage-failures
clean-damage-failures:
	rm -rf tests/damage/failures
