# exported: rows naming another module's types, forwarders to other assemblies, nested forwarders; a module without any.
mdinspect -c exported data/MultiMain.dll data/fwd/v2/Lib.dll data/sample/Hello.exe
