# Unique prefixes select commands; quoting and empty commands are accepted; -c after the FILE.
mdinspect data/corpus/dnfile/hello-world.exe -c 'ta ; ; du "TypeDef" 2 2; stre;'
