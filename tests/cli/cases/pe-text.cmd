# pe: every header field, the data directories, sections with characteristics decoded, the version resource (mcs's), the checksum checked against the file
mdinspect -c pe data/Everything.dll
