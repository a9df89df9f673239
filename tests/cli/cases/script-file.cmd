# -f runs a script file (the session continues across lines).
mdinspect -f tests/cli/inputs/session.mdi
