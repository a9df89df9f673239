# open adds files to the set; the first becomes current; modules lists identity, MVID, kind and path.
mdinspect -c 'open data/Everything.dll data/Sigs.dll; modules'
