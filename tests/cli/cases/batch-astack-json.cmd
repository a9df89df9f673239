# batch --json: astack records carry "bytes", the "type" and the "frames" (leaf first); heap records "bytes", "gc" and "ms"; --type keeps one type's alloc, astack and heap records in --top
mdinspect batch --json -a data -a data/pdb < tests/cli/inputs/batch-astack.txt; mdinspect batch --top 2 --type 'Lines.Box<System.String>[]' -a data -a data/pdb < tests/cli/inputs/batch-astack.txt
