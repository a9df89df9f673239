# batch: usage errors exit 2 before reading anything
mdinspect batch --json --folded; mdinspect batch extra; mdinspect batch --top 0; mdinspect batch --index x; mdinspect batch --bogus; mdinspect batch -a
