# Every kind of image opens: PE, raw metadata, bare Webcil, Webcil in WebAssembly, a portable PDB.
mdinspect -c 'open data/sample/Hello.exe data/raw/Everything.md data/webcil/Hello.v1.webcil data/webcil/Hello.wasm data/corpus/asmresolver/HelloWorld.pdb; modules'
