# validate as JSON: one object per problem, then one per module with the counts.
mdinspect -j -c validate tests/cli/inputs/bad-cells.exe
