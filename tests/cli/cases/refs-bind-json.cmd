# refs over a module set as JSON: bound_module, bound_assembly, bind_tier.
printf 'refs\n' | mdinspect -j -i data/resolve/ver/VerClient12.exe data/resolve/ver/1.0/Ver.dll data/resolve/ver/2.0/Ver.dll data/resolve/ver/1.5k2/Ver.dll
