# use as JSON.
mdinspect -j -c 'open data/Everything.dll data/Sigs.dll; use #2'
