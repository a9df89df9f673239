# validate: clean modules (counts of what was checked), one with the whole set.
mdinspect -c 'open data/Everything.dll data/Sigs.dll; validate; validate -a'
