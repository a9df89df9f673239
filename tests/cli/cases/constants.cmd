# constants: all 34 Constant rows of every element type (enum members, literal fields, optional parameters; Field and Param parents interleave as the table is sorted by Parent), then the two decimal constants kept in DecimalConstantAttributes (Consts::Dec 12.34, parameter m 1.5).
mdinspect -c constants data/Everything.dll
