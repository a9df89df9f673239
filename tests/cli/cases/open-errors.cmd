# A missing file, an unmatched glob and a native PE fail (the others still open); a file open already is noted, not opened twice.
mdinspect -c 'open data/nope.dll data/nope*.dll data/sample/Hello.exe data/corpus/asmresolver/NativeHelloWorldC.x64.exe; open data/sample/Hello.exe; modules'
