# Cells that fail to decode show <error: ...> in place; the dump goes on; exit 1.
mdinspect -c 'dump TypeDef' tests/cli/inputs/bad-cells.exe; mdinspect -j -c 'dump TypeDef 2 2' tests/cli/inputs/bad-cells.exe
