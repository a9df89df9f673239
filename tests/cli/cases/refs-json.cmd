# refs as JSON: token, name, version, culture, public_key_token, flags, assembly.
mdinspect -j -c refs data/fwd/Client.exe
