# resources in JSON: the listing and a resource set's entries
mdinspect -j -c 'resources; resources Res.Strings.resources' data/resources/Res.dll
