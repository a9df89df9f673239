# dump: constants in hex, strings quoted, coded indexes and lists as tokens.
mdinspect -c 'dump TypeDef' data/corpus/dnfile/hello-world.exe
