# constants as JSON, in the friendly style.
mdinspect -j -c 'set style friendly; constants' data/Everything.dll
