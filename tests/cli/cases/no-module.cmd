# Browsing commands without a module open fail (exit 1); in -c without FILE before any open they are a usage error.
mdinspect -c 'open data/sample/Hello.exe; close; tables; types; find x; validate'; mdinspect -c 'info; open data/sample/Hello.exe'
