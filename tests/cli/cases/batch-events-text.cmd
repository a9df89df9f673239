# throw and wait records (mdprofile --mode exceptions, contention): a throw's thread, slice, type (its first frame, resolved as a type) and frames; a wait's nanoseconds, thread, slice and frames; malformed ones say what is wrong, by line
mdinspect batch -a data -a data/pdb < tests/cli/inputs/batch-events.txt
