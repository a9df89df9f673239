# -i with -c is a usage error; --history needs a FILE; --no-color and --no-history are accepted outside the shell.
mdinspect -i -c help; mdinspect --history; mdinspect --no-color --no-history --no-pager -c 'open data/sample/Hello.exe; modules'
