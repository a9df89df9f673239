# types -a lists the types of every open module with the module; an empty match says none.
mdinspect -c 'open data/sample/Hello.exe data/Sigs.dll; types -a; types -a Nothing*'
