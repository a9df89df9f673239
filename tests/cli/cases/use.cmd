# use selects by #N, by name prefix (any case) or by path; an unknown or ambiguous name fails and lists the candidates.
mdinspect -c 'open data/Everything.dll data/Sigs.dll data/fwd/v1/Lib.dll data/fwd/v2/Lib.dll; use #2; use every; use data/Sigs.dll; use Lib; use nope; use #9'
