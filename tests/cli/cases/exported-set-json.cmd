# exported over a module set as JSON: forwarders resolved through a chain, and a cycle.
printf 'exported\n' | mdinspect -j -i data/resolve/chain/Hop1.dll data/resolve/chain/Hop2.dll data/resolve/chain/Hop3.dll; printf 'exported\n' | mdinspect -j -i data/resolve/cycle/CycA.dll data/resolve/cycle/CycB.dll
