# batch --json: plain lines; a frame naming a type or member has "metadata_name" as the shell prints it (arity suffixes kept: Pair`2, a MemberRef's TypeSpec parent, a nested generic, a MethodSpec), an instantiation by descriptors names its types as stored too; none for an AssemblyRef or an unresolved frame
mdinspect batch --json -a data -a data/pdb < tests/cli/inputs/batch-plain.txt
