# Rows past the end of the tables stream: one error at the first such row, then the dump stops; exit 1.
mdinspect -c 'dump CustomAttribute; dump Assembly' tests/cli/inputs/cut-tables.exe
