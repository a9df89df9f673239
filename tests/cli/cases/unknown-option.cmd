# A word starting with - that is no option of the command is a usage error.
mdinspect -c 'types -x' data/sample/Hello.exe; mdinspect -c 'validate -all' data/sample/Hello.exe
