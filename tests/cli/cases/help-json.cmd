# help in JSON: one object per command.
mdinspect -j -c 'help; help info'
