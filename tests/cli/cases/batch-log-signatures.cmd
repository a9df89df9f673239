# batch --signatures: methods with their parameter types, type arguments of the frame substituted (Lines.Box<System.String>::Convert<System.Int32>(System.Func<System.String,System.Int32>)), parameters of a generic method by name
mdinspect batch --signatures -a data -a data/pdb < tests/cli/inputs/batch-log.txt
