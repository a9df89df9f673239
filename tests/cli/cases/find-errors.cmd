# find: a Type:: pattern without a member, and with no module open.
mdinspect -c 'open data/Everything.dll; find Everything.Circle::'; mdinspect -c 'find x'
