# --json in a session; set format text switches back.
printf 'open data/sample/Hello.exe\nmodules\nset format text\nmodules\n' | mdinspect --json
