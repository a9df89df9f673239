# batch --json: a throw's "type" then its "frames", a wait's "nanoseconds"; --speedscope: the process's throws and waits as profiles of their own (unit none, nanoseconds)
mdinspect batch --json -a data -a data/pdb < tests/cli/inputs/batch-events.txt; mdinspect batch --speedscope -a data -a data/pdb < tests/cli/inputs/batch-events.txt
