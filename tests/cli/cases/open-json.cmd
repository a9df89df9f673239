# open and modules as JSON Lines: one object per module.
mdinspect -j -c 'open data/Everything.dll data/Sigs.dll data/raw/Everything.md; modules'
