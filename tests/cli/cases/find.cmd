# find: types by simple name across modules, members by name (globs, case-insensitive when lower-case), Type::member.
mdinspect -c 'open data/Everything.dll data/Sigs.dll data/sample/Hello.exe; find *Attribute; find get_r*; find Everything.Circle::*Radius*; find Main; find nothing-here'
