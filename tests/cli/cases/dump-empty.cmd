# A table the image does not have: a caption, no rows, success; in JSON no lines at all.
mdinspect -c 'dump Event' data/corpus/asmresolver/HelloWorld.exe; mdinspect -j -c 'dump Event' data/corpus/asmresolver/HelloWorld.exe
