# validate decodes every custom attribute and Constant value: a Constant with an empty blob is an error; attributes with an enum argument from a framework assembly that is not open are warnings (the file may be fine).
mdinspect -c validate data/corpus/asmresolver/ConstantZeroValueColumn.exe data/corpus/asmresolver/HelloWorld.WithAttribute.dll
