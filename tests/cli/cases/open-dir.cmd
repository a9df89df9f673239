# A directory opens its .dll/.exe files in name order (not subdirectories); a glob expands; files that are not .NET are skipped and counted in a directory.
mdinspect -c 'open data/fwd; modules'; mdinspect -c 'open data/fwd/v*/*.dll; modules'; mdinspect -c 'open data/corpus/asmresolver'
