# Names follow set style: full, reflection, il, friendly.
mdinspect -c 'set style full; types *Pair*; set style reflection; types *Pair*; set style il; types *Pair*; set style friendly; types *Pair*' data/Everything.dll
