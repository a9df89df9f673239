# help for a command with options and a keyword clause.
mdinspect -c 'help types; help heap; help set'
