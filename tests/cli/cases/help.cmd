# help lists the commands from the command table; help COMMAND shows usage and long help; works without a FILE.
mdinspect -c 'help; help du; help tables'
