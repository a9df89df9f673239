# refs lists the AssemblyRefs: name, version, culture, public key token.
mdinspect -c 'refs' data/Everything.dll data/fwd/Client.exe
