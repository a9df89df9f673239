# open: a directory's images in natural name order; -r (--recursive) adds its subdirectories; -v (--verbose) says why each other file was skipped; a directory with no .NET image at all fails rather than printing nothing.
mdinspect -c 'open -r data/fwd; modules'; mdinspect -c 'open --verbose data/fwd'; mdinspect -c 'open data/src/fwd'; mdinspect -c 'open -v data/src'
