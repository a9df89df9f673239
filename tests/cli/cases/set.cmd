# set shows the settings; changes them (unique prefixes); format json switches the output mid-session.
mdinspect -c 'set; set st refl; set style friendly; token 0x06000002; set format json; token 0x06000002; set format text; set'  data/Everything.dll
