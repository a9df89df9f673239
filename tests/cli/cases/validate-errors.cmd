# validate lists every problem with its place: warnings from open, cells that do not decode, nesting cycles; exit 1.
mdinspect -c validate tests/cli/inputs/bad-cells.exe data/corpus/asmresolver/HelloWorld.MaliciousNestedClassLoop.exe data/corpus/asmresolver/HelloWorld.MaliciousTypeSpecLoop.exe tests/cli/inputs/cut-tables.exe
