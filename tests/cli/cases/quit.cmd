# quit stops a -c list and a script; the exit status is that of what ran.
mdinspect -c 'open data/sample/Hello.exe; quit; tables'; printf 'open data/sample/Hello.exe\nquit\ntables\n' | mdinspect
