# typerefs and memberrefs errors: no module open, an unknown option, an extra argument.
printf 'typerefs\nmemberrefs --all\n' | mdinspect -i; mdinspect -c 'typerefs -x' data/resolve/missing/GhostClient.exe; mdinspect -c 'memberrefs Foo' data/resolve/missing/GhostClient.exe
