# close as JSON: one object per closed module.
mdinspect -j -c 'open data/Everything.dll data/Sigs.dll; close -a'
