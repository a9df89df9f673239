# help with an ambiguous or unknown command name.
mdinspect -c 'help st'; mdinspect -c 'help nope'
