# Commands read from stdin when it is not a terminal: comments and blank lines skipped, a bad line reported with its number and skipped, exit 1 at the end.
printf 'open data/sample/Hello.exe\n# comment\n\nrefs\nfrob\nuse nope\nstreams\n' | mdinspect
