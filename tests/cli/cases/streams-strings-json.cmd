# streams and strings as JSON Lines.
mdinspect -j -c 'streams; strings' data/sample/Hello.exe
