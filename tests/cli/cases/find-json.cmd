# find as JSON: module, token, kind, name.
mdinspect -j -c 'open data/Everything.dll data/sample/Hello.exe; find Main; find *::op_*'
