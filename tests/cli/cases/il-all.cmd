# il -a: every method with IL of every open module (Hello.exe and Everything.dll, whose fixed buffer, generic methods, try/finally and vararg calls show), in the IL style.
mdinspect -c 'set style il; il -a' data/sample/Hello.exe data/Everything.dll
