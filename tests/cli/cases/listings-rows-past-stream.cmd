# 0xFFFFFF TypeRef rows declared, 39 in the stream: each listing shows the rows that are there and says once that the rest are missing (one line, not 16 million); exit 1.
mdinspect -c 'typerefs; unresolved; refs; attrs; memberrefs; exported; typespecs' tests/cli/inputs/huge-row-count.exe
