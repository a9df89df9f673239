# --style on the command line, as `set style`; `set` inside -c changes a setting without printing anything; a bad style is a usage error.
mdinspect --style=friendly -c 'types Shell.Names.Act*; set style il; types Shell.Names.Act*; set format json; types Shell.Names.Action' data/Shell.dll; mdinspect --style=nonsense -c types data/Shell.dll
