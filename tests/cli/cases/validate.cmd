# validate: modules without errors (counts of what was checked; Everything.dll has warnings for attributes whose enums are in framework assemblies not open), one with the whole set.
mdinspect -c 'open data/Everything.dll data/Sigs.dll; validate; validate -a'
