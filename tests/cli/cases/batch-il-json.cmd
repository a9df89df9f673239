# batch --il --json: "il" beside "il_offset" in each frame with an IL offset: the instruction's text, null where the offset holds none; frames without an offset have neither.
mdinspect batch --il --json -a data/pdb -a data/Everything.dll -a tests/il/data/BadBodies.dll < tests/cli/inputs/batch-il.txt
